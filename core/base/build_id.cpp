#include "core/base/build_id.h"

#include <algorithm>

namespace tprof {

std::string BuildIdHex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    hex.push_back(kDigits[c >> 4]);
    hex.push_back(kDigits[c & 15]);
  }
  return hex;
}

bool SameBuildId(std::string_view a, std::string_view b) {
  size_t n = std::min(a.size(), b.size());
  if (n == 0 || a.substr(0, n) != b.substr(0, n)) return false;
  std::string_view rest = a.size() > b.size() ? a.substr(n) : b.substr(n);
  return rest.find_first_not_of('\0') == std::string_view::npos;
}

}  // namespace tprof
