#include "views/unwind_summary.h"

namespace tprof {

void PrintUnwinding(const std::string& command, const std::string& input,
                    const UnwindStatistics& stats, std::ostream& out) {
  for (const std::string& line : DescribeUnwinding(stats))
    out << "tprof " << command << ": " << input << ": unwinding: " << line << '\n';
}

}  // namespace tprof
