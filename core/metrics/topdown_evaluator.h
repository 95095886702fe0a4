// Evaluates a metric table's formulas over counted groups. Each metric is evaluated inside the
// group that measured all its events (never with counts pooled across groups), and reports that
// group's running percentage.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/metrics/metric_table.h"
#include "core/model/counter_report.h"

namespace tprof {

struct MetricResult {
  const Metric* metric = nullptr;
  std::optional<double> value;  // empty: n/a
  std::vector<std::string> events;
  double running_percent = 0;  // of the group that counted the events (across groups: the least)
  // No one group counted every event: each came from the group that counted it longest, as perf
  // evaluates such a metric. The counts then cover different time slices, so the value is less
  // exact than one from a single group.
  bool cross_group = false;
  std::string note;  // why a value is n/a
};

Result<std::vector<MetricResult>> EvaluateMetrics(const MetricTable& table,
                                                  const std::vector<const Metric*>& metrics,
                                                  const CounterReport& counts);

// The table's name for a counter as a tool printed it: "armv8_pmuv3_0/cpu_cycles/" and
// "cpu_cycles:u" become CPU_CYCLES, raw "r11" becomes the event with code 0x11.
std::string CanonicalEventName(const MetricTable& table, const std::string& printed);

}  // namespace tprof
