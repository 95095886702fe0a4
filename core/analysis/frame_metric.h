// Any named metric per call-tree frame (`report --flamegraph --color metric:NAME`): a generic
// formula (IPC, MPKI, ...), a CPU table's or the user's own (`--metric`), evaluated like the
// table's sampled-periods column over the samples through each frame, with its 95 % interval.
// Only sampled periods: a frame of a flame graph has no windows of its own (a group read's
// windows are credited to rows, not to every frame of a stack).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/analysis/call_tree.h"
#include "core/analysis/derived_metrics.h"
#include "core/base/error.h"
#include "core/model/profile.h"

namespace tprof {

struct FrameMetric {
  std::vector<uint64_t> periods;  // per event of the metric's column: period through the frame
  std::vector<uint64_t> samples;  // and samples
  MetricValue value;
  bool reliable = false;  // at least min_samples samples of each event
};

class FrameMetricEvaluator {
 public:
  // The metric `name` among the generic formulas, `table_formulas` and `user` ones, over events
  // sampled on their own in the tree. The error says why it cannot be drawn: no such metric
  // (naming those there are), or its events are read in a group rather than sampled.
  // `clock_left_out` (CallTreeBuilder::clock_left_out, or null): what a clock sampled in one mode
  // that reads itself left out of its samples, which bounds how far a frame's value may be off.
  static Result<FrameMetricEvaluator> Plan(const CallNode& root,
                                           const std::vector<EventDesc>& events,
                                           const std::string& name,
                                           const std::vector<MetricFormula>& table_formulas,
                                           const std::vector<MetricFormula>& user,
                                           const ClockLeftOutTime* clock_left_out = nullptr);

  const MetricColumn& column() const { return metrics_.columns()[column_]; }
  // `lost`: samples the kernel lost while recording (CallTreeBuilder::lost()), which may move a
  // frame's value beyond its interval: the value's bias then says so.
  // `rhythm` (CallTreeBuilder::ClockRhythmOfFrames, or null): where a timer clock's samples fell
  // in step with a loop, a frame whose value that may move beyond its interval says so.
  std::unordered_map<const CallNode*, FrameMetric> Compute(
      const CallNode& root, uint64_t min_samples, uint64_t lost = 0,
      const FrameClockRhythm* rhythm = nullptr) const;

 private:
  FrameMetricEvaluator(DerivedMetrics metrics, size_t column, std::vector<EventDesc> events)
      : metrics_(std::move(metrics)), column_(column), events_(std::move(events)) {}
  DerivedMetrics metrics_;
  size_t column_ = 0;
  std::vector<EventDesc> events_;
};

}  // namespace tprof
