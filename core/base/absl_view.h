// Text as absl hashes it fastest. Debian's absl is built with a string_view of its own
// (ABSL_OPTION_USE_STD_STRING_VIEW 0) and hashes a std::string_view by std::hash
// (std::_Hash_bytes): about twice the instructions of its own hash, some 600 a frame name of
// tens to hundreds of bytes. Keys hashed per distinct address or per tree node are therefore
// absl::string_view, made from the std::string_view the rest of tprof passes.
#pragma once

#include <string_view>

#include "absl/strings/string_view.h"

namespace tprof {

inline absl::string_view AbslView(std::string_view s) { return {s.data(), s.size()}; }

}  // namespace tprof
