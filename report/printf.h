// Numbers and printf-style formatting into a std::string of whatever length the result takes
// (C++ names can run to kilobytes, so no fixed buffer).
#pragma once

#include <charconv>
#include <cstdint>
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

// Appends the decimal digits of `value`. Renderers write one per line or node, so it allocates
// nothing of its own (std::to_string would, each time).
inline void AppendUint(std::string& out, uint64_t value) {
  char buffer[24];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, value).ptr;
  out.append(buffer, end);
}

}  // namespace tprof
