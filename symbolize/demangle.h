#pragma once

#include <string>

namespace tprof {

// Demangles an Itanium C++ symbol or a Rust symbol in the legacy scheme (which is Itanium-shaped:
// the hash component is dropped and Rust's $-escapes are decoded). Returns the input unchanged
// when it is not mangled or does not demangle. Rust v0 symbols (_R...) are returned unchanged.
std::string Demangle(const std::string& symbol);

}  // namespace tprof
