#include "core/analysis/timeline.h"

#include <algorithm>
#include <cmath>

#include "core/analysis/report_table.h"

namespace tprof {

uint64_t DefaultTimelineIntervalNs(uint64_t duration_ns) {
  if (duration_ns == 0) return 100'000'000;
  const double tenth_ms = static_cast<double>(duration_ns) / 10 / 1e6;
  double step = 1;
  while (step * 10 <= tenth_ms) step *= 10;
  for (const double factor : {5.0, 2.0})
    if (step * factor <= tenth_ms) {
      step *= factor;
      break;
    }
  return static_cast<uint64_t>(step * 1e6);
}

Result<TimelineView> BuildTimeline(const FunctionProfile& profile, size_t ranking_event, size_t top,
                                   const std::vector<MetricFormula>& user_metrics) {
  TimelineView view;
  view.events = profile.events;
  view.ranking_event = ranking_event;
  view.interval_ns = profile.timeline_interval_ns;
  view.samples_beyond = profile.samples_beyond_timeline;
  // The metrics a table of these events would show from sampled periods: planned on the whole
  // profile's totals (which events were sampled), evaluated per interval.
  ReportTable totals;
  totals.events = profile.events;
  totals.total_period = profile.total_period;
  totals.total_samples = profile.total_samples;
  auto plan = DerivedMetrics::Plan(totals, {}, "", user_metrics);
  if (!plan.ok()) return plan.error();
  std::vector<size_t> columns;
  for (size_t c = 0; c < plan->columns().size(); ++c)
    if (plan->columns()[c].source == MetricSource::kSampledPeriods) {
      columns.push_back(c);
      view.metric_names.push_back(plan->columns()[c].name);
      view.metric_units.push_back(plan->columns()[c].unit);
    }
  for (const TimelineInterval& interval : profile.timeline) {
    TimelinePoint point;
    point.start_ns = interval.start_ns;
    point.end_ns = interval.end_ns;
    point.period = interval.total_period;
    point.samples = interval.total_samples;
    const uint64_t total = ranking_event < point.period.size() ? point.period[ranking_event] : 0;
    for (const TimelineInterval::Row& row : interval.rows) {
      if (ranking_event >= row.period.size() || row.samples[ranking_event] == 0) continue;
      const FunctionRow& function = profile.rows[row.row];
      TimelineFunction f;
      f.function = function.function;
      f.module = function.module;
      f.command = function.command;
      f.period = row.period[ranking_event];
      f.samples = row.samples[ranking_event];
      f.percent = total ? 100.0 * static_cast<double>(f.period) / static_cast<double>(total) : 0;
      point.top.push_back(std::move(f));
    }
    std::stable_sort(
        point.top.begin(), point.top.end(),
        [](const TimelineFunction& a, const TimelineFunction& b) { return a.period > b.period; });
    if (top && point.top.size() > top) point.top.resize(top);
    for (size_t c : columns) {
      std::vector<uint64_t> periods, samples;
      for (size_t e : plan->columns()[c].events) {
        periods.push_back(point.period[e]);
        samples.push_back(point.samples[e]);
      }
      MetricValue value = plan->EvaluateSampled(c, periods, samples);
      // A clock that reads itself says what this interval's samples left out.
      std::optional<double> left_out;
      for (size_t e : plan->columns()[c].events)
        if (e < interval.left_out.size() && interval.left_out[e] >= 0)
          left_out = interval.left_out[e];
      value.bias = plan->OneModeClockBias(c, std::vector<double>(periods.begin(), periods.end()),
                                          value, nullptr, /*inclusive=*/true, left_out);
      point.metrics.push_back(std::move(value));
    }
    view.points.push_back(std::move(point));
  }
  return view;
}

}  // namespace tprof
