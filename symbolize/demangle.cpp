#include "symbolize/demangle.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace tprof {

std::string Demangle(const std::string& symbol) {
  if (symbol.size() < 2 || symbol[0] != '_' || symbol[1] != 'Z') return symbol;
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> out(
      abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status), &std::free);
  return status == 0 && out ? std::string(out.get()) : symbol;
}

}  // namespace tprof
