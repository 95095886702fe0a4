// What the analyses need of a demangled function name's shape.
#pragma once

#include <string>

namespace tprof {

// The name without its parameter list and const qualifier: "ns::f(int) const" -> "ns::f";
// a name without parameters is returned as it is.
std::string WithoutParameters(const std::string& name);

}  // namespace tprof
