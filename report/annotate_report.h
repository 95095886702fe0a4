// tprof report --annotate: a function's instructions with the share of each event's period
// sampled at each one, and the source lines interleaved (a file:line header whenever the line
// changes, with the line's text when the file is readable), perf-annotate style. Formats what
// core/analysis/annotation placed; reads nothing.
#pragma once

#include <ostream>
#include <vector>

#include "core/analysis/annotation.h"
#include "core/analysis/instruction_profile.h"

namespace tprof {

// Renders each function's annotation; one without instructions is listed by sampled address,
// with a note saying why.
void RenderAnnotation(const InstructionProfile& profile,
                      const std::vector<FunctionAnnotation>& annotations, std::ostream& out);

}  // namespace tprof
