// A flame graph's samples over time: the profile cut into buckets of a round length, with per
// thread the weight its samples give each bucket (a lane), per frame of the tree the weight its
// self samples give each bucket (so that a page can redraw the graph for any run of buckets), and
// a metric per bucket with its interval (IPC, or the formula the page is coloured by), from the
// bucket's sampled periods or, for a formula over a read group, the group's windows that ended
// in it.
//
// A bucket's edges are the times `report --time` reads: seconds from the profile's start, the
// double of (edge in ns) / 1e9, a sample in [start, end) as SampleSelector keeps it. So a range
// of buckets given back as "--time +S,+E" holds the same samples to the sample.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/analysis/call_tree.h"
#include "core/analysis/derived_metrics.h"
#include "core/analysis/group_windows_by_time.h"
#include "core/analysis/off_cpu_reasons.h"
#include "core/analysis/timeline.h"

namespace tprof {

struct FlameTimelineOptions {
  // The profile's start (metadata start_timestamp); 0: the first sample's time, as --time.
  uint64_t start_timestamp = 0;
  // The events whose periods size the frames (one, or on-CPU and off-CPU for wall time), and
  // the one drawn as off the CPU in the lanes (none: every weight is on the CPU).
  std::vector<size_t> width_events;
  std::optional<size_t> off_cpu_event;
  // The off-cpu event's parts by reason (OffCpuReasonSplitter: each off-cpu sample again as the
  // event of its reason), which say why in the lanes; without them the off-CPU time is "other".
  std::vector<std::pair<size_t, OffCpuReason>> reason_events;
  size_t max_buckets = 400;  // the length is the smallest 1-2-5 step giving at most this many
  // The metric track: a sampled-periods metric the events give (IntervalMetrics' names, with
  // `user_metrics` among them) by name; none by that name: no track.
  std::string metric;
  std::vector<MetricFormula> user_metrics;
  // The read groups' whole windows (CallTreeBuilder::group_windows), from which a formula over a
  // group whose events were not sampled on their own has a value per bucket; null: none.
  const TimedGroupWindows* group_windows = nullptr;
};

struct FlameTimeline {
  uint64_t bucket_ns = 0;
  uint32_t buckets = 0;
  uint64_t samples = 0;         // of the width events, in the buckets
  uint64_t samples_before = 0;  // before the start (a clock skew): in no bucket
  // The --time range the samples were kept in, in seconds from the start (unset: open): a range
  // of buckets holds the samples of its intersection with it.
  std::optional<double> kept_from_s, kept_until_s;
  struct Lane {
    uint32_t pid = 0, tid = 0;
    std::string name;
    uint64_t total = 0;                                 // its weight in all
    std::vector<std::pair<uint32_t, uint64_t>> on_cpu;  // (bucket, weight), the buckets it has
    // Off the CPU (wall-time pages), per bucket and reason: what its intervals' kernel stacks
    // waited for (ReasonOfKernelFrames).
    struct OffCpu {
      uint32_t bucket = 0;
      uint64_t weight = 0;
      OffCpuReason reason = OffCpuReason::kOther;
      bool operator==(const OffCpu&) const = default;
    };
    std::vector<OffCpu> off_cpu;
  };
  // Grouped by process, the busiest process first and within it the busiest thread.
  std::vector<Lane> lanes;
  // Per frame with self samples in a bucket: its weight and samples there.
  struct Cell {
    const CallNode* node = nullptr;
    uint32_t bucket = 0;
    uint64_t weight = 0, samples = 0;
  };
  std::vector<Cell> cells;
  std::string metric_name, metric_unit;
  std::vector<MetricValue> metric;         // per bucket, when there is a track
  std::vector<std::string> metrics_known;  // the names a track could have shown
};

// `samples` as the tree kept them (CallTreeBuilder::KeepSampleTimes) of `events`,
// `leaf_of_stack` the tree's nodes by stack id, `thread_name` the names of the lanes. Errors:
// the metrics cannot be planned on these events (a user formula naming none of them).
Result<FlameTimeline> BuildFlameTimeline(
    const std::vector<TimedStackSample>& samples, const std::vector<const CallNode*>& leaf_of_stack,
    const std::vector<EventDesc>& events, const FlameTimelineOptions& options,
    const std::function<std::string(uint32_t, uint32_t)>& thread_name);

// The bucket length for a profile `span_ns` long: 1, 2 or 5 times a power of ten nanoseconds,
// at least 1 us, the smallest that gives at most `max_buckets`.
uint64_t FlameTimelineBucketNs(uint64_t span_ns, size_t max_buckets);

}  // namespace tprof
