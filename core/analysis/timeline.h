// A profile over time: per interval, what each event counted, its top functions and the derived
// metrics (IPC, --metric formulas) with their intervals, as `perf stat -I` prints counts per
// interval. Read from FunctionProfile::timeline; metrics from the events' sampled periods in the
// interval, or for a formula over a read group whose events were not sampled on their own, the
// group's windows that ended in the interval.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/analysis/derived_metrics.h"
#include "core/analysis/function_profile.h"
#include "core/analysis/group_windows_by_time.h"
#include "core/base/error.h"

namespace tprof {

struct TimelineFunction {
  std::string function, module, command;
  uint64_t period = 0, samples = 0;  // of the ranking event, in the interval
  double percent = 0;                // of the interval's total of that event
};

struct TimelinePoint {
  uint64_t start_ns = 0, end_ns = 0;      // from the profile's start
  std::vector<uint64_t> period, samples;  // per event
  std::vector<TimelineFunction> top;      // by the ranking event's period, largest first
  std::vector<MetricValue> metrics;       // per TimelineView::metric_names
  // Per read group (TimelineView::groups): its whole windows that ended in the interval, whose
  // deltas are what the group counted there (perf stat -I's counts); empty when none ended.
  std::vector<WindowSums> windows;
};

struct TimelineView {
  std::vector<EventDesc> events;
  size_t ranking_event = 0;  // what orders each interval's functions
  uint64_t interval_ns = 0;
  // The formulas the events allow: from the interval's sampled periods, or, for one whose events
  // were not all sampled but are read in a group, from the group's windows that ended in it.
  std::vector<std::string> metric_names;
  std::vector<std::string> metric_units;
  std::vector<MetricSource> metric_sources;
  std::vector<ReadGroup> groups;  // the events' read groups
  std::vector<TimelinePoint> points;
  uint64_t samples_beyond = 0;  // past the last interval kept (FunctionProfile)
};

// The sampled-periods metrics a report table of these events would show (IPC, CPI, --metric
// formulas), planned on the whole profile's totals and evaluated per interval of time.
class IntervalMetrics {
 public:
  // `groups`: the events' read groups (ReadGroupsOf), whose windows give the formulas over a
  // group that its events sampled on their own do not.
  static Result<IntervalMetrics> Plan(const std::vector<EventDesc>& events,
                                      const std::vector<uint64_t>& total_period,
                                      const std::vector<uint64_t>& total_samples,
                                      const std::vector<ReadGroup>& groups,
                                      const std::vector<MetricFormula>& user_metrics);
  const std::vector<std::string>& names() const { return names_; }
  const std::vector<std::string>& units() const { return units_; }
  const std::vector<MetricSource>& sources() const { return sources_; }
  // Per name: the value of an interval's periods and samples (per event). `left_out` (per
  // event, -1 where none; may be empty): a clock that reads itself, the time its samples left
  // out in the interval. `windows` (per group; may be empty): the groups' windows that ended in
  // the interval.
  std::vector<MetricValue> Evaluate(const std::vector<uint64_t>& period,
                                    const std::vector<uint64_t>& samples,
                                    const std::vector<double>& left_out,
                                    const std::vector<WindowSums>& windows = {}) const;

 private:
  explicit IntervalMetrics(DerivedMetrics plan) : plan_(std::move(plan)) {}
  DerivedMetrics plan_;
  std::vector<size_t> columns_;  // of plan_, the sampled-periods ones
  std::vector<std::string> names_, units_;
  std::vector<MetricSource> sources_;
};

// `top`: functions kept per interval (0: all). `user_metrics`: --metric formulas
// (ParseUserMetric), evaluated beside the generic ones (IPC, CPI) the events allow.
Result<TimelineView> BuildTimeline(const FunctionProfile& profile, size_t ranking_event, size_t top,
                                   const std::vector<MetricFormula>& user_metrics);

// An interval for a profile `duration_ns` long that gives about ten of them: 1, 2 or 5 times a
// power of ten milliseconds, at least 1 ms (100 ms when the length is not known).
uint64_t DefaultTimelineIntervalNs(uint64_t duration_ns);

}  // namespace tprof
