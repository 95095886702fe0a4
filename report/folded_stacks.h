// FlameGraph's folded stacks of a call tree (tprof's own folded style; report/stackcollapse_folded
// writes stackcollapse-perf.pl's).
#pragma once

#include <cstddef>
#include <ostream>
#include <string>

#include "core/analysis/call_tree.h"

namespace tprof {

// FlameGraph's folded format: one line per distinct stack, root first, frames joined by ';',
// then a space and the count. Kernel frames end in "_[k]" and inlined ones in "_[i]" when
// `annotate`, as FlameGraph's colour palettes expect.
struct FoldedOptions {
  size_t event = 0;
  bool annotate = true;
  bool use_period = true;  // counts are periods (as perf script's default); else sample counts
};
std::string RenderFolded(const CallNode& root, const FoldedOptions& options);
// The same, written to `out` as it goes rather than gathered in one string.
void WriteFolded(const CallNode& root, const FoldedOptions& options, std::ostream& out);

}  // namespace tprof
