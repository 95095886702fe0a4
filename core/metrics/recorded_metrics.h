// Which metric table a recording's events came from. `tprof record -M` stores no table name: it
// leads a leader-sampled group with the table's cycles event and reads the events the selected
// formulas name, as raw codes under the table's event names. So the table is recognised by its
// event names and codes, and its formulas whose events were all read become report columns.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/metrics/metric_table.h"
#include "core/model/metric_expression.h"
#include "core/model/profile.h"

namespace tprof {

struct RecordedMetricTable {
  const MetricTable* table = nullptr;
  std::vector<MetricFormula> formulas;  // the table's metrics whose events were all read
  std::string how;                      // one line: how the table was recognised
};

// Empty when no read group matches a table (plain -e recordings, `-M ipc`, whose IPC the
// generic formulas give). Among tables that match equally well, the profile's CPU decides.
std::optional<RecordedMetricTable> MatchRecordedMetricTable(const std::vector<EventDesc>& events,
                                                            const CpuDescription& cpu,
                                                            const std::vector<MetricTable>& tables);

}  // namespace tprof
