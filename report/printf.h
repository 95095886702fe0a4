// printf-style formatting into a std::string of whatever length the result takes (C++ names can
// run to kilobytes, so no fixed buffer).
#pragma once

#include <cstdio>
#include <string>

namespace tprof {

template <typename... Args>
std::string Printf(const char* format, Args... args) {
  const int size = std::snprintf(nullptr, 0, format, args...);
  if (size <= 0) return {};
  std::string out(static_cast<size_t>(size), '\0');
  std::snprintf(out.data(), out.size() + 1, format, args...);
  return out;
}

}  // namespace tprof
