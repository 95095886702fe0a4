#include "views/flame_graph.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>

#include "core/analysis/flame_timeline.h"
#include "core/analysis/frame_metric.h"
#include "core/analysis/frame_ratio.h"
#include "core/analysis/off_cpu_reasons.h"
#include "core/metrics/recorded_metrics.h"
#include "core/model/event_selection.h"
#include "report/flamegraph_html.h"
#include "views/diff_flamegraph.h"

namespace tprof {
namespace {

enum class FlameColor { kName, kIpc, kCpi, kStall };

// The page's timeline of the tree's samples, from `start` (0: the first sample): `event` sizes
// the frames (the wall-time sum when `by_wall`); the metric track shows `metric_name` where
// the events give it (empty: the first --metric formula, else IPC).
Result<FlameTimeline> PageTimeline(const CallTreeBuilder& tree,
                                   const std::vector<const CallNode*>& leaf_of_stack,
                                   const std::vector<EventDesc>& events, uint64_t start,
                                   size_t event, bool by_wall,
                                   const std::optional<WallTimeEvents>& wall,
                                   const std::string& metric_name,
                                   const std::vector<MetricFormula>& user_metrics) {
  FlameTimelineOptions options;
  options.start_timestamp = start;
  if (by_wall) {
    options.width_events = {wall->on_cpu, wall->off_cpu};
    options.off_cpu_event = wall->off_cpu;
    for (size_t r = 0; r < kOffCpuReasons; ++r) {
      const auto reason = static_cast<OffCpuReason>(r);
      const std::string part = events[wall->off_cpu].name + ":" + OffCpuReasonSlug(reason);
      for (size_t e = 0; e < events.size(); ++e)
        if (events[e].name == part) options.reason_events.emplace_back(e, reason);
    }
  } else {
    options.width_events = {event};
  }
  options.user_metrics = user_metrics;
  options.metric = !metric_name.empty()           ? metric_name
                   : options.user_metrics.empty() ? std::string("IPC")
                                                  : options.user_metrics.front().name;
  options.group_windows = &tree.group_windows();
  return BuildFlameTimeline(tree.sample_times(), leaf_of_stack, events, options,
                            [&](uint32_t pid, uint32_t tid) { return tree.ThreadName(pid, tid); });
}

}  // namespace

Result<ViewOutcome> WriteFlameGraph(const FlameGraphRequest& request, ProfileSource& source,
                                    FrameResolver& resolver, const SampleSelectingSource* selected,
                                    const ViewMessages& messages) {
  const std::vector<EventDesc>& events = source.events();
  if (events.empty()) return Error(request.input + ": the profile has no events");
  const std::map<std::string, FlameColor> colors = {{"name", FlameColor::kName},
                                                    {"ipc", FlameColor::kIpc},
                                                    {"cpi", FlameColor::kCpi},
                                                    {"stall", FlameColor::kStall}};
  // A profile recorded with --off-cpu is drawn as wall time unless asked for another event
  // or colouring: its clock alone would leave out every wait.
  const std::optional<WallTimeEvents> wall = FindWallTimeEvents(events);
  const std::string color_name = !request.color.empty()          ? request.color
                                 : wall && request.event.empty() ? "offcpu"
                                                                 : "name";
  const bool by_wall = color_name == "offcpu";
  if (by_wall && !wall)
    return Error::BadRequest(request.input +
                             ": --color offcpu needs a profile recorded with --off-cpu beside a "
                             "clock (task-clock or cpu-clock); it has " +
                             EventNameList(events));
  if (by_wall && !request.event.empty())  // the caller says so first, as a usage error
    return Error::BadRequest(
        "--color offcpu sizes the frames by wall time; --event does not apply");
  const bool by_metric = color_name.rfind("metric:", 0) == 0;
  const FlameColor color = by_metric || by_wall ? FlameColor::kName : colors.at(color_name);
  std::optional<RatioEvents> ratio;
  if (color != FlameColor::kName) {
    const FrameRatioKind kind = color == FlameColor::kIpc   ? FrameRatioKind::kIpc
                                : color == FlameColor::kCpi ? FrameRatioKind::kCpi
                                                            : FrameRatioKind::kStall;
    auto found = FindRatioEvents(events, kind);
    if (!found.ok()) return found.error().WithContext(request.input);
    ratio = *found;
  }
  size_t event = 0;
  if (ratio) event = ratio->kind == FrameRatioKind::kCpi ? ratio->numerator : ratio->denominator;
  if (!request.event.empty()) {
    auto selected_event = SelectEvent(events, request.event);
    if (!selected_event.ok()) return selected_event.error().WithContext(request.input);
    event = *selected_event;
  }

  CallTreeOptions tree_options;
  tree_options.roots = request.roots;
  CallTreeBuilder tree(events, resolver, tree_options);
  if (request.timeline) tree.KeepSampleTimes();
  auto summary = source.ReadRecords(tree);
  if (!summary.ok()) return summary.error().WithContext(request.input);
  messages.InputWarning(request.input, summary->warning);
  // The tree stays in the builder, which takes it apart fastest (in the order it made it),
  // unless wall time adds an event to it.
  // Before the tree may leave the builder: the frames are its nodes.
  const FrameClockRhythm rhythm = by_metric ? tree.ClockRhythmOfFrames() : FrameClockRhythm{};
  CallNode taken;
  const CallNode* tree_root = &tree.root();
  std::vector<const CallNode*> leaf_of_stack(tree.leaf_of_stack().begin(),
                                             tree.leaf_of_stack().end());
  if (by_wall) {
    taken = tree.TakeRoot();
    event = AppendSumOfEvents(taken, wall->on_cpu, wall->off_cpu);
    // The root moved (its children did not).
    for (const CallNode*& leaf : leaf_of_stack)
      if (leaf == tree_root) leaf = &taken;
    tree_root = &taken;
  }
  const CallNode& root = *tree_root;
  if (root.total[event] == 0) {
    if (selected && (selected->filter().time_start || selected->filter().time_end) &&
        selected->samples_in_time() == 0)
      return ViewOutcome{summary->complete, /*time_range_empty=*/true};
    return Error(request.input + ": no samples of " +
                 (by_wall ? "on-CPU or off-CPU time" : events[event].name));
  }

  FlameGraphInput input;
  input.root = &root;
  input.event = event;
  input.event_name =
      by_wall ? "wall time (" + events[wall->on_cpu].name + " + off-cpu)" : events[event].name;
  input.unit = by_wall ? EventUnit::kNanoseconds : UnitOfEvent(events[event].name);
  input.title = "tprof flame graph";
  input.icicle = request.icicle;
  const Metadata& meta = source.metadata();
  std::string command;
  for (const std::string& word : meta.command_line) command += (command.empty() ? "" : " ") + word;
  input.subtitle = request.input;
  if (!command.empty()) input.subtitle += " | " + command;
  if (!meta.hostname.empty()) input.subtitle += " | " + meta.hostname;
  if (!meta.cpu.model_name.empty()) input.subtitle += ", " + meta.cpu.model_name;
  if (request.kernel_rows)
    input.subtitle += " | kernel functions as frames (--kernel-rows)";
  else if (summary->kernel_credit && summary->kernel_credit->credited())
    input.subtitle += " | kernel work in the user function that entered the kernel";
  if (by_metric) {
    auto recorded = MatchRecordedMetricTable(events, meta.cpu, BuiltinMetricTables());
    auto plan =
        FrameMetricEvaluator::Plan(root, events, color_name.substr(7),
                                   recorded ? recorded->formulas : std::vector<MetricFormula>{},
                                   request.user_metrics, &tree.clock_left_out());
    if (!plan.ok()) return plan.error().WithContext(request.input);
    std::vector<std::string> names;
    for (size_t e : plan->column().events) names.push_back(events[e].name);
    ColorFramesByMetric(input, plan->Compute(root, request.min_samples, tree.lost(), &rhythm),
                        plan->column(), names, request.min_samples);
  }
  if (ratio) {
    const std::string& num = events[ratio->numerator].name;
    const std::string& den = events[ratio->denominator].name;
    const uint64_t num_total = root.total[ratio->numerator];
    const uint64_t den_total = root.total[ratio->denominator];
    if (num_total == 0 || den_total == 0)
      return Error(request.input + ": no samples of " + (num_total ? den : num) +
                   "; --color needs both events sampled on their own (a group read on its "
                   "leader's samples, {a,b}:S, gives only the leader's)");
    ColorFramesByRatio(input,
                       ComputeFrameRatios(root, *ratio, events, request.min_samples, tree.lost()),
                       ratio->kind, num, den, request.min_samples);
  }

  if (by_wall) ColorFramesByOffCpuShare(input, wall->on_cpu, wall->off_cpu);

  FlameTimeline timeline;
  if (request.timeline) {
    // The buckets count from where --time counts, so that a range the page names is the
    // range report --time reads: with a filter, from the start its read found.
    const uint64_t start = selected ? selected->start_timestamp() : meta.start_timestamp;
    auto built = PageTimeline(tree, leaf_of_stack, events, start, event, by_wall, wall,
                              !request.track.empty() ? request.track
                              : by_metric            ? color_name.substr(7)
                                                     : std::string(),
                              request.user_metrics);
    if (!built.ok()) return built.error().WithContext(request.input);
    if (!request.track.empty() && built->metric_name.empty()) {
      std::string known;
      for (const std::string& m : built->metrics_known) known += (known.empty() ? "" : ", ") + m;
      return Error(request.input + ": --track " + request.track +
                   ": no such metric over these events (they give: " +
                   (known.empty() ? std::string("none") : known) + "; --metric adds one)");
    }
    timeline = std::move(built).value();
    if (selected) {
      timeline.kept_from_s = selected->filter().time_start;
      timeline.kept_until_s = selected->filter().time_end;
    }
    // Samples without time stamps (folded stacks, perf script without its time field) all
    // fall in one bucket: there is no timeline to draw.
    if (timeline.buckets > 1) {
      input.timeline = &timeline;
      input.range_delta_scale = DeltaColorScale(kDiffFlameScalePoints);
    }
  }

  std::ofstream out(request.out_path, std::ios::binary | std::ios::trunc);
  if (!out) return Error(request.out_path + ": cannot write: " + std::strerror(errno));
  RenderFlameGraphHtml(input, out);
  out.close();
  if (!out) return Error(request.out_path + ": write failed");
  messages.Wrote("flame graph of " + input.event_name + " written to " + request.out_path);
  return ViewOutcome{summary->complete};
}

}  // namespace tprof
