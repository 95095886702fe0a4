// An interactive flame graph as one self-contained HTML file: the aggregated call tree as
// compact JSON (a string table for names, one column per field, nodes in preorder) inside a page
// whose inline script draws it on a <canvas>, so that graphs of 100,000 frames stay responsive.
// The page zooms on click, searches names by regular expression (showing the matched share),
// shows counts and shares in tooltips and switches between flame and icicle layouts.
//
// What colours a frame is an input: by default a stable colour per function name (the same name
// gets the same colour in every graph); otherwise a value per frame placed on a fixed scale
// whose stops and marks the caller gives (IPC, CPI, stall share, or a difference between two
// profiles), with a legend. The renderer reads no files and knows nothing about events.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/analysis/call_tree.h"
#include "core/analysis/diff_flame_tree.h"
#include "core/analysis/flame_timeline.h"
#include "core/analysis/frame_metric.h"
#include "core/analysis/frame_ratio.h"
#include "report/event_units.h"

namespace tprof {

// A fixed colour scale: a frame's value is clamped to [min, max] and coloured by linear
// interpolation between the stops, so equal values get equal colours in any two graphs.
struct FlameColorScale {
  std::string title;  // "IPC (instructions / cycles)"
  double min = 0;
  double max = 1;
  std::vector<std::pair<double, std::string>> stops;  // value, "#rrggbb"; ascending values
  std::vector<std::pair<double, std::string>> marks;  // value, label drawn on the legend
  std::string no_value_rule;  // why a frame is grey, e.g. "grey: fewer than 10 samples of ..."
  // One legend step (a tick on the legend): a frame whose 95 % interval reaches further than
  // this is marked uncertain. 0: no steps.
  double step = 0;
};

// What the caller knows about one frame beyond its width.
struct FlameFrameDetail {
  std::optional<double> color_value;      // placed on the scale; none: grey
  std::optional<double> alt_color_value;  // the same scale, when the page offers a second colouring
  std::optional<double> half_width;       // color_value's 95 % interval, for tooltips
  std::vector<double> columns;            // one per FlameGraphInput::detail_columns, for tooltips
  bool marked = false;                    // drawn hatched and outlined; FlameGraphInput::mark_label
  // Why the value may be off beyond its interval (a bias found in the recording: samples lost);
  // such a frame is marked too, and its tooltip shows the reason.
  std::string reason;
};

struct FlameGraphInput {
  const CallNode* root = nullptr;
  size_t event = 0;        // which event's total sizes the frames
  std::string event_name;  // shown in the title and tooltips
  // The frames' values are nanoseconds (shown as ns..s) or counts of `value_name` ("cycles").
  EventUnit unit = EventUnit::kCount;
  std::string value_name;  // empty: event_name
  std::string title = "Flame graph";
  std::string subtitle;  // e.g. the command line and host
  // Colour by value when set; by name otherwise.
  std::optional<FlameColorScale> scale;
  std::vector<std::string> detail_columns;  // names of FlameFrameDetail::columns
  bool detail_columns_in_unit = false;      // the columns are values in `unit`, as the widths
  std::string ratio_label;  // tooltip label of color_value (e.g. "IPC"); empty: not shown
  std::unordered_map<const CallNode*, FlameFrameDetail> details;
  bool icicle = false;  // initial layout: root at the top
  // A second colouring the page can switch to (alt_color_value), e.g. self vs total delta: the
  // names of the two on the switch. Empty: no switch.
  std::string color_mode_label, alt_color_mode_label;
  std::string mark_label;    // what a marked frame is, in its tooltip and the legend
  bool show_samples = true;  // false when the tree has no sample counts (self_samples all 0)
  // A differential page (ColorFramesByDelta): which side gives the widths and both sides' grand
  // totals, for tooltips that tell the drawn width apart from each side's values.
  struct DiffTotals {
    bool widths_new = true;
    double old_total = 0, new_total = 0;
  };
  std::optional<DiffTotals> diff;
  // The samples over time (null: no timeline): lanes per thread, a range to redraw the graph
  // for, two ranges to compare in place, coloured on `range_delta_scale` as tprof diff colours.
  const FlameTimeline* timeline = nullptr;
  std::optional<FlameColorScale> range_delta_scale;
};

// The JSON the page draws (exposed for tests): {"names": [...], "name": [...], "depth": [...],
// "total": [...], "self": [...], "samples": [...], ...}, nodes in preorder, children by name.
// Nodes with no period of the chosen event are left out.
std::string FlameGraphJson(const FlameGraphInput& input);

// Writes the whole page.
void RenderFlameGraphHtml(const FlameGraphInput& input, std::ostream& out);

// The fixed scales of the ratio colourings, the same in every graph: IPC and CPI from 0 to 4
// (1 marked), the stall share from 0 to 100 %. Low IPC (high CPI, many stalls) is red, high IPC
// blue. `min_samples` is stated in the legend as the rule for grey frames.
FlameColorScale RatioColorScale(FrameRatioKind kind, const std::string& numerator_event,
                                const std::string& denominator_event, uint64_t min_samples);

// Colours `input`'s frames by their ratios: the scale, a tooltip line with the ratio and its
// interval, and columns with both events' periods and sample counts. Unreliable frames get no
// value (grey); frames whose interval is wider than one legend step are marked uncertain.
void ColorFramesByRatio(FlameGraphInput& input,
                        const std::unordered_map<const CallNode*, FrameRatio>& ratios,
                        FrameRatioKind kind, const std::string& numerator_event,
                        const std::string& denominator_event, uint64_t min_samples);

// Colours `input`'s frames by a metric (--color metric:NAME) on a scale from 0 to a round
// value at or above the largest reliable frame's (1, 2 or 5 times a power of ten), ten legend
// steps; viridis colours, which read in order without implying good or bad (a metric may be
// better high or low). Unreliable frames are grey; frames whose interval is wider than one step
// are marked uncertain. `event_names` name the column's events, for the tooltip's columns.
void ColorFramesByMetric(FlameGraphInput& input,
                         const std::unordered_map<const CallNode*, FrameMetric>& metrics,
                         const MetricColumn& column, const std::vector<std::string>& event_names,
                         uint64_t min_samples);

// Colours a wall-time graph (frames sized by on-CPU plus off-CPU time, AppendSumOfEvents) by
// each frame's off-CPU share on a fixed 0-100 % scale, warm on the CPU and blue off it, with
// both times in the tooltips. `on_cpu` and `off_cpu` index the tree's events.
void ColorFramesByOffCpuShare(FlameGraphInput& input, size_t on_cpu, size_t off_cpu);

// The fixed symmetric scale of differential flame graphs: -points..+points of the old total.
FlameColorScale DeltaColorScale(double points);

// Colours a differential flame graph (core/analysis/diff_flame_tree.h): frames by total delta in
// points of the old total, or by self delta at the switch of a button, on a fixed symmetric scale
// of +-`points` (blue shrank, white unchanged, red grew); tooltip columns with old, new, delta,
// delta % of the frame and of the old total, for total and self; frames the width side lacks
// marked. `input.root` must be `tree.root`.
void ColorFramesByDelta(FlameGraphInput& input, const DiffFlameTree& tree, double points);

// The same over repeated runs: a frame gets its delta's colour only where its change is
// significant (`changes`, AssessFrameChanges); the others are drawn neutral (white, delta 0) and
// the legend and tooltips say so, with each frame's p-value. `rule` states the test in words.
void ColorFramesBySignificantDelta(FlameGraphInput& input, const DiffFlameTree& tree, double points,
                                   const std::unordered_map<const CallNode*, FrameChange>& changes,
                                   const std::string& rule);

}  // namespace tprof
