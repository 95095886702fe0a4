#pragma once

#include <string>

namespace tprof {

// Demangles an Itanium C++ symbol; returns the input unchanged when it is not mangled.
std::string Demangle(const std::string& symbol);

}  // namespace tprof
