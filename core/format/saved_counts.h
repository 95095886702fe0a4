// tprof's own saved counts (`tprof topdown -o FILE`, read back with --input): a JSON object
//   {"tprof_counts": 1,
//    "groups": [{"run_time", "running_percent", "counters": [{"event", "value"}]}]}.
#pragma once

#include <string>
#include <string_view>

#include "core/base/error.h"
#include "core/model/counter_report.h"

namespace tprof {

Result<CounterReport> ParseTprofCounts(std::string_view text);
// Writes what ParseTprofCounts reads.
std::string SaveTprofCounts(const CounterReport& report);

}  // namespace tprof
