// GNU build-ids as perf records them and build-id directories name them.
#pragma once

#include <string>
#include <string_view>

namespace tprof {

// Lowercase hex of raw build-id bytes, as build-id directories name files.
std::string BuildIdHex(std::string_view bytes);
// perf pads build-ids to 20 bytes without recording their size, so a shorter id read from a
// file matches a recorded one that it prefixes when the rest is zero.
bool SameBuildId(std::string_view a, std::string_view b);

}  // namespace tprof
