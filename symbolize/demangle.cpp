#include "symbolize/demangle.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>
#include <string_view>

namespace tprof {
namespace {

bool IsHex(std::string_view s) {
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return !s.empty();
}

// Legacy Rust symbols are _ZN...17h<16 hex digits>E; the demangled text ends in "::h<hash>".
bool LooksLikeLegacyRust(std::string_view mangled, std::string_view demangled) {
  if (mangled.size() < 24 || mangled.substr(0, 3) != "_ZN" || mangled.back() != 'E') return false;
  if (mangled.substr(mangled.size() - 20, 3) != "17h" ||
      !IsHex(mangled.substr(mangled.size() - 17, 16)))
    return false;
  size_t colon = demangled.rfind("::h");
  return colon != std::string_view::npos && demangled.size() - colon == 19 &&
         IsHex(demangled.substr(colon + 3));
}

// Decodes the escapes of legacy Rust paths ($LT$ -> <, .. -> ::, $u7b$ -> {, ...), as
// rustc-demangle does, after the hash has been removed.
std::string DecodeRustEscapes(std::string_view s) {
  static constexpr std::pair<std::string_view, char> kEscapes[] = {
      {"$SP$", '@'}, {"$BP$", '*'}, {"$RF$", '&'}, {"$LT$", '<'},
      {"$GT$", '>'}, {"$LP$", '('}, {"$RP$", ')'}, {"$C$", ','}};
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    // "_$" opens a path component that starts with an escape: the underscore is not part of it.
    if (s[i] == '_' && i + 1 < s.size() && s[i + 1] == '$' &&
        (out.empty() || out.ends_with("::"))) {
      ++i;
      continue;
    }
    if (s[i] == '$') {
      bool matched = false;
      for (const auto& [escape, c] : kEscapes)
        if (s.substr(i, escape.size()) == escape) {
          out.push_back(c);
          i += escape.size();
          matched = true;
          break;
        }
      if (matched) continue;
      // $uXX$: a Unicode scalar in hex.
      size_t end = s.find('$', i + 1);
      if (end != std::string_view::npos && s[i + 1] == 'u' && IsHex(s.substr(i + 2, end - i - 2))) {
        unsigned long code =
            std::strtoul(std::string(s.substr(i + 2, end - i - 2)).c_str(), nullptr, 16);
        if (code < 0x80) {
          out.push_back(static_cast<char>(code));
          i = end + 1;
          continue;
        }
      }
    } else if (s[i] == '.' && i + 1 < s.size() && s[i + 1] == '.') {
      out += "::";
      i += 2;
      continue;
    }
    out.push_back(s[i++]);
  }
  return out;
}

}  // namespace

std::string Demangle(const std::string& versioned) {
  // A shared library's symbol table names versioned symbols "name@@VERSION" (the default) or
  // "name@VERSION"; the version is not part of the function's name (perf report and pprof show
  // __libc_start_main, not __libc_start_main@@GLIBC_2.34).
  const std::string symbol = versioned.substr(0, versioned.find('@'));
  if (symbol.size() < 2 || symbol[0] != '_' || symbol[1] != 'Z') return symbol;
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> out(
      abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status), &std::free);
  if (status != 0 || !out) return symbol;
  std::string_view demangled(out.get());
  if (LooksLikeLegacyRust(symbol, demangled))
    return DecodeRustEscapes(demangled.substr(0, demangled.size() - 19));
  return std::string(demangled);
}

}  // namespace tprof
