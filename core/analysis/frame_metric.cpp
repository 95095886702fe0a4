#include "core/analysis/frame_metric.h"

#include "core/analysis/frame_ratio.h"

namespace tprof {

Result<FrameMetricEvaluator> FrameMetricEvaluator::Plan(
    const CallNode& root, const std::vector<EventDesc>& events, const std::string& name,
    const std::vector<MetricFormula>& table_formulas, const std::vector<MetricFormula>& user,
    const ClockLeftOutTime* clock_left_out) {
  // A table without rows whose totals are the tree's: what DerivedMetrics plans columns from.
  ReportTable totals;
  totals.events = events;
  totals.total_period.assign(root.total.begin(), root.total.end());
  for (size_t e = 0; e < events.size(); ++e) {
    totals.total_samples.push_back(TotalSamples(root, e)[&root]);
    // A clock that reads itself is a group of one whose reads total its periods and the time
    // its samples left out.
    if (clock_left_out && clock_left_out->reads_itself(e) && e < totals.total_period.size()) {
      ReadGroup clock;
      clock.leader = static_cast<uint32_t>(e);
      clock.members = {static_cast<uint32_t>(e)};
      clock.read_totals = {totals.total_period[e] +
                           static_cast<uint64_t>(clock_left_out->totals()[e])};
      totals.groups.push_back(std::move(clock));
    }
  }
  auto metrics = DerivedMetrics::Plan(totals, table_formulas, "table", user);
  if (!metrics.ok()) return metrics.error();
  std::string known;
  for (size_t c = 0; c < metrics->columns().size(); ++c) {
    const MetricColumn& column = metrics->columns()[c];
    if (column.name == name && column.source == MetricSource::kSampledPeriods)
      return FrameMetricEvaluator(std::move(metrics).value(), c, events);
    if (column.source == MetricSource::kSampledPeriods)
      known += (known.empty() ? "" : ", ") + column.name;
  }
  // Group members are not in the tree's totals (they ride on the leader's samples), so a
  // metric over them plans no column; say so rather than "no such metric".
  for (const MetricFormula& f : user)
    if (f.name == name)
      return Error::BadRequest(
          "--color metric:" + name +
          ": its events are not all sampled on their own (a flame graph's frames have no group "
          "windows; record them as -e a,b, not {a,b}:S)");
  return Error::BadRequest("--color metric:" + name + ": no such metric from sampled events" +
                           (known.empty() ? " (there are none; define one with --metric)"
                                          : " (there are: " + known + ")"));
}

std::unordered_map<const CallNode*, FrameMetric> FrameMetricEvaluator::Compute(
    const CallNode& root, uint64_t min_samples, uint64_t lost,
    const FrameClockRhythm* rhythm) const {
  const MetricColumn& c = column();
  std::vector<std::unordered_map<const CallNode*, uint64_t>> samples;
  for (size_t e : c.events) samples.push_back(TotalSamples(root, e));
  // The root's samples per event, for the share lost samples may have been.
  std::vector<uint64_t> total_samples(events_.size(), 0);
  for (size_t i = 0; i < c.events.size(); ++i)
    if (auto it = samples[i].find(&root); it != samples[i].end())
      total_samples[c.events[i]] = it->second;
  std::unordered_map<const CallNode*, FrameMetric> out;
  out.reserve(samples.empty() ? 0 : samples[0].size());
  for (const auto& [node, ignored] :
       samples.empty() ? decltype(samples)::value_type{} : samples[0]) {
    FrameMetric m;
    m.reliable = true;
    for (size_t i = 0; i < c.events.size(); ++i) {
      const size_t e = c.events[i];
      m.periods.push_back(node->total.size() > e ? node->total[e] : 0);
      auto it = samples[i].find(node);
      m.samples.push_back(it == samples[i].end() ? 0 : it->second);
      m.reliable &= m.samples.back() >= min_samples;
    }
    m.value = metrics_.EvaluateSampled(column_, m.periods, m.samples);
    m.value.bias = LostSamplesBias(c.events, lost, total_samples, events_, m.value);
    if (!m.value.bias)
      m.value.bias = metrics_.ClockLeftOutBias(
          column_, std::vector<double>(m.periods.begin(), m.periods.end()), m.value, nullptr,
          /*inclusive=*/true);
    if (!m.value.bias && rhythm && !rhythm->findings.empty()) {
      std::vector<DerivedMetrics::ClockRhythmSlot> slots;
      for (size_t e : c.events) slots.push_back({rhythm->FindingOf(e), rhythm->CountOf(node, e)});
      const std::vector<double> counts(m.periods.begin(), m.periods.end());
      m.value.bias =
          metrics_.ClockRhythmBias(column_, counts, m.value, slots, events_, /*inclusive=*/true);
    }
    m.reliable &= m.value.value.has_value();
    out.emplace(node, std::move(m));
  }
  return out;
}

}  // namespace tprof
