// tprof report --annotate: a function's instructions with the share of each event's period
// sampled at each one, and the source lines interleaved (a file:line header whenever the line
// changes, with the line's text when the file is readable), perf-annotate style.
#pragma once

#include <functional>
#include <ostream>
#include <string>

#include "core/analysis/instruction_profile.h"
#include "core/base/error.h"

namespace tprof {

class DwarfModule;

// Opens the binary that a module name and build-id stand for; null when none is usable.
using ModuleOpener =
    std::function<DwarfModule*(const std::string& module, const std::string& build_id)>;

// Renders every function of `profile`. An error when it holds none (no sample fell in a function
// of that name); a function whose binary cannot be opened is listed by address without
// instructions, with a note saying why.
Status RenderAnnotation(const InstructionProfile& profile, const std::string& query,
                        const ModuleOpener& open_module, std::ostream& out);

}  // namespace tprof
