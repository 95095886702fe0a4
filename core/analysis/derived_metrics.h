// Per-row hardware metrics of a report table (IPC, CPI, miss rates, MPKI, and the formulas of a
// CPU's metric table), from one of two sources, never mixed within one value:
//  - sampled periods: each event sampled on its own (`-e cycles,instructions -c N`); an event's
//    count in a row is the sum of the periods of its samples there.
//  - group deltas: a leader-sampled group (PERF_SAMPLE_READ); an event's count in a row is the
//    sum of its deltas over the windows credited to the row (both ends in the row).
// A value resting on too few observations is marked low-confidence (see kMinConfidentCount).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/analysis/report_table.h"
#include "core/base/error.h"
#include "core/model/metric_expression.h"

namespace tprof {

// Fewer than this many samples of any event a formula reads (sampled periods), or fewer than
// this many credited windows (group deltas), makes a row's value low-confidence.
inline constexpr uint64_t kMinConfidentCount = 10;

// IPC, CPI, branch-miss and cache-miss rates, and MPKI figures over perf's generic event names.
const std::vector<MetricFormula>& GenericMetricFormulas();

// The name a formula uses for a recorded event: modifiers (":u", ":pp") and a PMU wrapper
// ("cpu_core/cycles/") dropped, perf's aliases folded (cpu-cycles -> cycles,
// branch-instructions -> branches).
std::string FormulaEventName(const std::string& recorded);

enum class MetricSource { kSampledPeriods, kGroupDeltas };
const char* MetricSourceName(MetricSource source);  // "sampled periods", "group deltas"

// One metric column: a formula that the table's events can feed from one source.
struct MetricColumn {
  std::string name;
  std::string unit;
  std::string formula;
  MetricSource source = MetricSource::kSampledPeriods;
  int group = -1;                    // index into ReportTable::groups for group deltas
  std::vector<size_t> events;        // the events the formula reads (sampled periods)
  std::vector<size_t> member_slots;  // their positions in the group (group deltas)
  std::string origin;                // "generic" or the metric table's name
};

struct MetricValue {
  std::optional<double> value;  // empty: n/a (a zero denominator)
  bool low_confidence = false;
};

class DerivedMetrics {
 public:
  // Every formula whose events the table has, from each source that has them all. `extra` are
  // a metric table's formulas (matched to the recording by the caller), tagged with `origin`.
  static Result<DerivedMetrics> Plan(const ReportTable& table,
                                     const std::vector<MetricFormula>& extra,
                                     const std::string& origin);

  const std::vector<MetricColumn>& columns() const { return columns_; }
  MetricValue Evaluate(size_t column, const ReportTable& table, const ReportRow& row) const;
  // The same over every sample (sampled periods) or every credited window (group deltas).
  MetricValue EvaluateTotal(size_t column, const ReportTable& table) const;

 private:
  struct Compiled {
    MetricExpression expression;
    std::vector<std::pair<std::string, double>> constants;
  };
  MetricValue Compute(size_t column, const std::vector<double>& counts, uint64_t confidence) const;

  std::vector<MetricColumn> columns_;
  std::vector<Compiled> compiled_;
};

}  // namespace tprof
