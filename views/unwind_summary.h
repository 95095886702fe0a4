// The DWARF unwinding statistics of an input, told once on standard error by every command that
// reads perf.data with stack copies (report, import, diff, stream), as perf --stats tells lost
// samples: a profile whose user stacks stop early must say so.
#pragma once

#include <ostream>
#include <string>

#include "core/model/user_stack_unwinder.h"

namespace tprof {

// "tprof CMD: INPUT: unwinding: LINE" for each line of DescribeUnwinding; nothing when no sample
// carried a stack copy.
void PrintUnwinding(const std::string& command, const std::string& input,
                    const UnwindStatistics& stats, std::ostream& out);

}  // namespace tprof
