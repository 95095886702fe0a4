// Reads folded stacks, the input of flamegraph.pl: one line per distinct stack, frames root
// first separated by ';', then a count — or two counts (before, after) for differential input,
// as difffolded.pl writes. Frame annotations are understood: "_[k]" kernel, "_[j]" JIT, "_[i]"
// inlined, "_[w]" waker, and "module`function".
#pragma once

#include <string_view>

#include "core/base/error.h"
#include "core/perfdata/text_profile.h"

namespace tprof {

// True when the first lines of the text are all folded-stack lines.
bool LooksLikeFolded(std::string_view head);

// One sample per line with the count as its period (per column: two columns give two events,
// "before" and "after"). Blank and '#' lines are skipped; any other malformed line is an error
// naming it.
Result<TextProfile> ParseFolded(std::string_view text);

}  // namespace tprof
