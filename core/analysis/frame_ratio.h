// Per-frame ratios of two events, for colouring a call tree by what its frames do rather than by
// name: IPC (instructions / cycles), CPI (cycles / instructions) and the stall share (stall
// cycles / unhalted cycles, Gregg's "CPI flame graph"). Each frame's ratio comes from the periods
// of the samples through it, so both events must be sampled on their own (e.g.
// `perf record -e cycles,instructions -c N`): the ratio of two independent sample streams is an
// estimate whose error shrinks with the number of samples, hence the reliability rule below.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/analysis/call_tree.h"
#include "core/base/error.h"
#include "core/model/profile.h"

namespace tprof {

enum class FrameRatioKind { kIpc, kCpi, kStall };

// Which two events of a profile a ratio divides: numerator / denominator.
struct RatioEvents {
  FrameRatioKind kind = FrameRatioKind::kIpc;
  size_t numerator = 0;
  size_t denominator = 0;
};

// Finds the events a ratio needs, by perf's generic names (cycles, instructions,
// stalled-cycles-backend/-frontend), their hardware type/config, or vendor names (Intel
// CPU_CLK_UNHALTED / INST_RETIRED, Arm CPU_CYCLES / INST_RETIRED / STALL_BACKEND /
// STALL_FRONTEND). Stall: the backend stall event when present, else the frontend one. The error
// names the events the profile has.
Result<RatioEvents> FindRatioEvents(const std::vector<EventDesc>& events, FrameRatioKind kind);

struct FrameRatio {
  uint64_t numerator = 0;    // period of the numerator event's samples through the frame
  uint64_t denominator = 0;  // the same for the denominator event
  uint64_t numerator_samples = 0;
  uint64_t denominator_samples = 0;
  double value = 0;       // numerator / denominator (0 when the denominator is 0)
  bool reliable = false;  // at least `min_samples` samples of each event
  // The 95 % interval value ± half_width, the two sample streams as Poisson counts (relative
  // variance 1/numerator_samples + 1/denominator_samples); none without samples of both.
  std::optional<double> half_width;
  // Why the ratio may be off beyond its interval: samples the kernel lost, which may all have
  // been one event's (LostSamplesBias, as for a table's row).
  std::string bias;
};

// The ratio of every node of the tree (the root included). A frame resting on fewer than
// `min_samples` samples of either event is marked unreliable: its ratio is mostly noise. `lost`:
// samples the kernel lost while recording (CallTreeBuilder::lost()); `events`, the profile's,
// name them in the bias.
std::unordered_map<const CallNode*, FrameRatio> ComputeFrameRatios(
    const CallNode& root, const RatioEvents& ratio, const std::vector<EventDesc>& events,
    uint64_t min_samples, uint64_t lost = 0);

// Samples (not periods) of `event` through every node: the sum of self_samples over its subtree.
std::unordered_map<const CallNode*, uint64_t> TotalSamples(const CallNode& root, size_t event);

}  // namespace tprof
