// Reads a counts file of any kind tprof knows (perf stat CSV or JSON, tprof's saved counts),
// told apart by content: what `tprof topdown --input FILE` evaluates.
#pragma once

#include <string_view>

#include "core/base/error.h"
#include "core/model/counter_report.h"

namespace tprof {

Result<CounterReport> ParseCounterReport(std::string_view text);

}  // namespace tprof
