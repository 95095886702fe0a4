// Reads what `perf stat` prints for machines: CSV (-x,) and JSON lines (-j). Rows are kept in
// the groups that measured them (see CounterReport).
#pragma once

#include <string_view>

#include "core/base/error.h"
#include "core/model/counter_report.h"

namespace tprof {

Result<CounterReport> ParsePerfStatCsv(std::string_view text);
Result<CounterReport> ParsePerfStatJson(std::string_view text);

}  // namespace tprof
