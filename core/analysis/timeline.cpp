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

Result<IntervalMetrics> IntervalMetrics::Plan(const std::vector<EventDesc>& events,
                                              const std::vector<uint64_t>& total_period,
                                              const std::vector<uint64_t>& total_samples,
                                              const std::vector<ReadGroup>& groups,
                                              const std::vector<MetricFormula>& user_metrics) {
  // Planned on the whole profile's totals (which events were sampled), evaluated per interval.
  ReportTable totals;
  totals.events = events;
  totals.total_period = total_period;
  totals.total_samples = total_samples;
  totals.groups = groups;
  auto plan = DerivedMetrics::Plan(totals, {}, "", user_metrics);
  if (!plan.ok()) return plan.error();
  IntervalMetrics metrics(std::move(plan).value());
  const auto& columns = metrics.plan_.columns();
  const auto keep = [&](size_t c) {
    metrics.columns_.push_back(c);
    metrics.names_.push_back(columns[c].name);
    metrics.units_.push_back(columns[c].unit);
    metrics.sources_.push_back(columns[c].source);
  };
  for (size_t c = 0; c < columns.size(); ++c)
    if (columns[c].source == MetricSource::kSampledPeriods) keep(c);
  // A formula whose events were not all sampled on their own but are read in a group (perf's
  // {cycles,instructions}:S): its value from the group's windows in the interval.
  for (size_t c = 0; c < columns.size(); ++c)
    if (columns[c].source == MetricSource::kGroupDeltas &&
        std::find(metrics.names_.begin(), metrics.names_.end(), columns[c].name) ==
            metrics.names_.end())
      keep(c);
  return metrics;
}

std::vector<MetricValue> IntervalMetrics::Evaluate(const std::vector<uint64_t>& period,
                                                   const std::vector<uint64_t>& samples,
                                                   const std::vector<double>& left_out,
                                                   const std::vector<WindowSums>& windows) const {
  std::vector<MetricValue> values;
  for (size_t c : columns_) {
    if (plan_.columns()[c].source == MetricSource::kGroupDeltas) {
      const size_t g = static_cast<size_t>(plan_.columns()[c].group);
      values.push_back(
          g < windows.size()
              ? plan_.EvaluateWindows(c, windows[g].deltas, windows[g].products, windows[g].windows)
              : MetricValue{});
      continue;
    }
    std::vector<uint64_t> periods, counts;
    for (size_t e : plan_.columns()[c].events) {
      periods.push_back(period[e]);
      counts.push_back(samples[e]);
    }
    MetricValue value = plan_.EvaluateSampled(c, periods, counts);
    // A clock that reads itself says what this interval's samples left out.
    std::optional<double> left_out_here;
    for (size_t e : plan_.columns()[c].events)
      if (e < left_out.size() && left_out[e] >= 0) left_out_here = left_out[e];
    value.bias = plan_.ClockLeftOutBias(c, std::vector<double>(periods.begin(), periods.end()),
                                        value, nullptr, /*inclusive=*/true, left_out_here);
    values.push_back(std::move(value));
  }
  return values;
}

Result<TimelineView> BuildTimeline(const FunctionProfile& profile, size_t ranking_event, size_t top,
                                   const std::vector<MetricFormula>& user_metrics) {
  TimelineView view;
  view.events = profile.events;
  view.ranking_event = ranking_event;
  view.interval_ns = profile.timeline_interval_ns;
  view.samples_beyond = profile.samples_beyond_timeline;
  auto metrics = IntervalMetrics::Plan(profile.events, profile.total_period, profile.total_samples,
                                       profile.read_groups, user_metrics);
  if (!metrics.ok()) return metrics.error();
  view.metric_names = metrics->names();
  view.metric_units = metrics->units();
  view.metric_sources = metrics->sources();
  view.groups = profile.read_groups;
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
    point.metrics =
        metrics->Evaluate(point.period, point.samples, interval.left_out, interval.windows);
    point.windows = interval.windows;
    view.points.push_back(std::move(point));
  }
  return view;
}

}  // namespace tprof
