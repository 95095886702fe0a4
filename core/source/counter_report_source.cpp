#include "core/source/counter_report_source.h"

#include "core/format/saved_counts.h"
#include "core/perfdata/perf_stat_parser.h"

namespace tprof {

Result<CounterReport> ParseCounterReport(std::string_view text) {
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return Error("the counts file is empty");
  if (text[first] == '{') {
    // One object spanning the file is tprof's; one object per line is perf stat -j.
    if (text.find("\"tprof_counts\"") != std::string_view::npos) return ParseTprofCounts(text);
    return ParsePerfStatJson(text);
  }
  return ParsePerfStatCsv(text);
}

}  // namespace tprof
