#include "core/analysis/flame_timeline.h"

#include <algorithm>
#include <functional>
#include <map>

#include "absl/container/flat_hash_map.h"

namespace tprof {

uint64_t FlameTimelineBucketNs(uint64_t span_ns, size_t max_buckets) {
  max_buckets = std::max<size_t>(max_buckets, 1);
  for (uint64_t power = 1000;; power *= 10)
    for (uint64_t f : {1, 2, 5})
      if (f * power * max_buckets >= span_ns || power > (uint64_t{1} << 60) / 10) return f * power;
}

namespace {

// Seconds from the start as --time compares them (SampleSelector::InTimeRange).
double SecondsOf(uint64_t time, uint64_t start) {
  return time >= start ? static_cast<double>(time - start) / 1e9
                       : -static_cast<double>(start - time) / 1e9;
}

double EdgeSeconds(uint64_t bucket, uint64_t bucket_ns) {
  return static_cast<double>(bucket * bucket_ns) / 1e9;
}

}  // namespace

Result<FlameTimeline> BuildFlameTimeline(
    const std::vector<TimedStackSample>& samples, const std::vector<const CallNode*>& leaf_of_stack,
    const std::vector<EventDesc>& event_descs, const FlameTimelineOptions& options,
    const std::function<std::string(uint32_t, uint32_t)>& thread_name) {
  const size_t events = event_descs.size();
  FlameTimeline t;
  if (samples.empty()) return t;
  const uint64_t start = options.start_timestamp ? options.start_timestamp : samples.front().time;
  uint64_t last = start;
  for (const TimedStackSample& s : samples) last = std::max(last, s.time);
  t.bucket_ns = FlameTimelineBucketNs(last - start + 1, options.max_buckets);
  t.buckets = static_cast<uint32_t>((last - start) / t.bucket_ns + 1);
  // The bucket --time would put a sample in: integer division first, then the doubles' edges
  // settle a sample that rounding puts on the other side of one.
  const auto bucket_of = [&](uint64_t time) -> std::optional<uint32_t> {
    const double seconds = SecondsOf(time, start);
    if (time < start || seconds < 0) return std::nullopt;
    uint64_t b = (time - start) / t.bucket_ns;
    while (b > 0 && seconds < EdgeSeconds(b, t.bucket_ns)) --b;
    while (seconds >= EdgeSeconds(b + 1, t.bucket_ns)) ++b;
    if (b >= t.buckets) t.buckets = static_cast<uint32_t>(b + 1);
    return static_cast<uint32_t>(b);
  };
  std::vector<bool> width(events, false);
  for (size_t e : options.width_events)
    if (e < events) width[e] = true;

  std::vector<std::optional<OffCpuReason>> reason_of_event(events);
  for (const auto& [e, reason] : options.reason_events)
    if (e < events) reason_of_event[e] = reason;
  const bool by_reason = !options.reason_events.empty();
  struct LaneSums {
    uint32_t pid = 0;
    std::map<uint32_t, uint64_t> on;
    std::map<std::pair<uint32_t, OffCpuReason>, uint64_t> off;
    uint64_t total = 0;
  };
  absl::flat_hash_map<uint32_t, LaneSums> lanes;  // by tid
  // An off-CPU sample ends its interval (it is taken when the thread runs again, its period the
  // time it was away): the lane draws the interval over the buckets it spans, where the frames'
  // cells, as --time, count it whole at its time stamp.
  const auto spread_off = [&](LaneSums& lane, const TimedStackSample& s, OffCpuReason reason) {
    const uint64_t end = s.time - start;
    const uint64_t from = s.period < end ? end - s.period : 0;
    for (uint64_t at = from; at < end;) {
      const uint64_t bucket = at / t.bucket_ns;
      const uint64_t until = std::min(end, (bucket + 1) * t.bucket_ns);
      lane.off[{static_cast<uint32_t>(bucket), reason}] += until - at;
      at = until;
    }
  };
  // Per frame and bucket, in the order first sampled (so that the page's data is the same from
  // run to run).
  absl::flat_hash_map<std::pair<const CallNode*, uint32_t>, size_t> cell_of;
  std::vector<std::vector<uint64_t>> period, count;                       // per bucket, per event
  std::vector<uint64_t> total_period(events, 0), total_count(events, 0);  // the whole profile's
  for (const TimedStackSample& s : samples) {
    if (s.event < events) {
      total_period[s.event] += s.period;
      ++total_count[s.event];
    }
    const auto b = bucket_of(s.time);
    if (!b) {
      if (s.event < events && width[s.event]) ++t.samples_before;
      continue;
    }
    if (period.size() <= *b) {
      period.resize(*b + 1, std::vector<uint64_t>(events, 0));
      count.resize(*b + 1, std::vector<uint64_t>(events, 0));
    }
    if (s.event < events) {
      period[*b][s.event] += s.period;
      ++count[*b][s.event];
    }
    if (s.event < events && reason_of_event[s.event]) {  // the off-CPU time's reason
      LaneSums& lane = lanes[s.tid];
      lane.pid = s.pid;
      spread_off(lane, s, *reason_of_event[s.event]);
      continue;
    }
    if (s.event >= events || !width[s.event]) continue;
    ++t.samples;
    LaneSums& lane = lanes[s.tid];
    lane.pid = s.pid;
    lane.total += s.period;
    if (options.off_cpu_event && s.event == *options.off_cpu_event) {
      if (!by_reason) spread_off(lane, s, OffCpuReason::kOther);
    } else {
      lane.on[*b] += s.period;
    }
    if (s.stack >= leaf_of_stack.size() || !leaf_of_stack[s.stack]) continue;
    const CallNode* node = leaf_of_stack[s.stack];
    auto [it, added] = cell_of.try_emplace(std::pair{node, *b}, t.cells.size());
    if (added) t.cells.push_back({node, *b, 0, 0});
    t.cells[it->second].weight += s.period;
    ++t.cells[it->second].samples;
  }
  std::stable_sort(t.cells.begin(), t.cells.end(),
                   [](const auto& a, const auto& b) { return a.bucket < b.bucket; });

  absl::flat_hash_map<uint32_t, uint64_t> process_total;
  for (auto& [tid, lane] : lanes) process_total[lane.pid] += lane.total;
  for (auto& [tid, sums] : lanes) {
    FlameTimeline::Lane lane;
    lane.pid = sums.pid;
    lane.tid = tid;
    lane.name = thread_name(sums.pid, tid);
    lane.total = sums.total;
    lane.on_cpu.assign(sums.on.begin(), sums.on.end());
    for (const auto& [key, weight] : sums.off)
      lane.off_cpu.push_back({key.first, weight, key.second});
    t.lanes.push_back(std::move(lane));
  }
  std::sort(t.lanes.begin(), t.lanes.end(), [&](const auto& a, const auto& b) {
    const uint64_t pa = process_total[a.pid], pb = process_total[b.pid];
    if (pa != pb) return pa > pb;
    if (a.pid != b.pid) return a.pid < b.pid;
    if (a.total != b.total) return a.total > b.total;
    return a.tid < b.tid;
  });

  // The track: planned on the whole profile's totals (which events were sampled), evaluated per
  // bucket.
  const TimedGroupWindows no_windows;
  const TimedGroupWindows& group_windows =
      options.group_windows ? *options.group_windows : no_windows;
  auto metrics = IntervalMetrics::Plan(event_descs, total_period, total_count, group_windows.groups,
                                       options.user_metrics);
  if (!metrics.ok()) return metrics.error();
  const auto& names = metrics->names();
  t.metrics_known = names;
  const auto metric = std::find(names.begin(), names.end(), options.metric);
  if (metric != names.end()) {
    const size_t m = static_cast<size_t>(metric - names.begin());
    t.metric_name = names[m];
    t.metric_unit = metrics->units()[m];
    period.resize(t.buckets, std::vector<uint64_t>(events, 0));
    count.resize(t.buckets, std::vector<uint64_t>(events, 0));
    std::vector<std::vector<WindowSums>> windows;
    if (metrics->sources()[m] == MetricSource::kGroupDeltas) {
      windows.assign(t.buckets, std::vector<WindowSums>(group_windows.groups.size()));
      for (const TimedGroupWindows::Window& w : group_windows.windows) {
        const auto b = bucket_of(w.time);
        if (!b || *b >= t.buckets) continue;
        windows[*b][w.group].Add(group_windows.deltas.data() + w.first,
                                 group_windows.groups[w.group].members.size());
      }
    }
    for (uint32_t b = 0; b < t.buckets; ++b)
      t.metric.push_back(metrics->Evaluate(
          period[b], count[b], {}, windows.empty() ? std::vector<WindowSums>{} : windows[b])[m]);
  }
  return t;
}

}  // namespace tprof
