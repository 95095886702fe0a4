// `tprof report --flamegraph OUT.html`: the interactive flame graph page of a profile, its frames
// sized by an event (or by wall time, on-CPU plus off-CPU, for an --off-cpu recording) and
// coloured by name, a ratio of two events, a metric or the off-CPU share, with a timeline of the
// samples under it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/analysis/call_tree.h"
#include "core/base/error.h"
#include "core/model/frame_resolver.h"
#include "core/model/metric_expression.h"
#include "core/source/profile_source.h"
#include "views/sample_selecting_source.h"
#include "views/view_messages.h"

namespace tprof {

struct FlameGraphRequest {
  std::string input;     // the profile's name, in messages and the page's subtitle
  std::string out_path;  // the page
  std::string event;     // --event: what sizes the frames; empty: the colouring's or the first
  // name, ipc, cpi, stall, offcpu or metric:NAME; empty: offcpu for a profile recorded with
  // --off-cpu (unless an event is named), else name.
  std::string color;
  std::string track;  // the timeline's metric track; empty: the metric colour's, --metric's, IPC
  std::vector<MetricFormula> user_metrics;  // --metric, parsed over the profile's events
  uint64_t min_samples = 10;                // frames with fewer are grey under a ratio or metric
  CallTreeOptions::Roots roots = CallTreeOptions::Roots::kNone;
  bool timeline = true;
  bool icicle = false;
  bool kernel_rows = false;  // the subtitle says kernel functions are frames
};

// Reads `source` (`selected` when it is the filtered input, else null) into the call tree and
// writes the page. A --time range that kept no sample writes nothing (time_range_empty).
Result<ViewOutcome> WriteFlameGraph(const FlameGraphRequest& request, ProfileSource& source,
                                    FrameResolver& resolver, const SampleSelectingSource* selected,
                                    const ViewMessages& messages);

}  // namespace tprof
