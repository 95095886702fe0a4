#include "cmd/diff_flamegraph.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

#include "cmd/cli_support.h"
#include "cmd/opened_profile.h"
#include "core/analysis/call_tree.h"
#include "report/flamegraph_html.h"

namespace tprof {
namespace {

constexpr const char* kCommand = "diff";

// One side's call tree. The profile, its symbols and the builder's caches are let go once the
// tree is built, so that only one side's symbols are in memory at a time.
struct SideTree {
  std::vector<EventDesc> events;
  CallNode root;
};

Result<SideTree> LoadSide(const std::string& path, const DiffFlameGraphOptions& options) {
  auto opened = OpenedProfile::Open(path, {options.symfs, options.binaries, nullptr, "diff"});
  if (!opened.ok()) return opened.error();
  ProfileSource& source = (*opened)->source();
  if (source.events().empty()) return Error(path + ": the profile has no events");
  CallTreeOptions tree_options;
  tree_options.ignore_module = options.ignore_module;
  CallTreeBuilder builder(source.events(), (*opened)->resolver(), tree_options);
  auto summary = source.ReadRecords(builder);
  if (!summary.ok()) return Error(path + ": " + summary.error().message());
  if (!summary->warning.empty())
    std::cerr << "tprof diff: warning: " << path << ": " << summary->warning << '\n';
  return SideTree{builder.events(), builder.TakeRoot()};
}

std::optional<size_t> FindEvent(const std::vector<EventDesc>& events, const std::string& name) {
  for (size_t i = 0; i < events.size(); ++i)
    if (events[i].name == name) return i;
  return std::nullopt;
}

std::string EventList(const std::vector<EventDesc>& events) {
  std::string out;
  for (const EventDesc& e : events) out += (out.empty() ? "" : ", ") + e.name;
  return out;
}

}  // namespace

int RunDiffFlameGraph(const DiffFlameGraphOptions& options) {
  auto old_side = LoadSide(options.old_path, options);
  if (!old_side.ok()) return ReportError(kCommand, old_side.error());
  auto new_side = LoadSide(options.new_path, options);
  if (!new_side.ok()) return ReportError(kCommand, new_side.error());
  const std::vector<EventDesc>& old_events = old_side->events;
  const std::vector<EventDesc>& new_events = new_side->events;
  const std::string both_lists =
      " (old: " + EventList(old_events) + "; new: " + EventList(new_events) + ")";

  // The event that sizes and colours the frames: named, else the first both sides have, else
  // the lone events of two one-event profiles (e.g. folded stacks' "samples" vs cpu-clock).
  std::optional<size_t> old_event, new_event;
  std::string event_name;
  if (!options.event.empty()) {
    old_event = FindEvent(old_events, options.event);
    new_event = FindEvent(new_events, options.event);
    if (!old_event || !new_event)
      return ReportError(kCommand, Error::BadRequest("no event '" + options.event +
                                                     "' in both profiles" + both_lists));
    event_name = options.event;
  } else {
    for (size_t i = 0; i < old_events.size() && !new_event; ++i)
      if ((new_event = FindEvent(new_events, old_events[i].name))) old_event = i;
    if (old_event) {
      event_name = old_events[*old_event].name;
    } else if (old_events.size() == 1 && new_events.size() == 1) {
      old_event = new_event = 0;
      event_name = old_events[0].name + " vs " + new_events[0].name;
    } else {
      return ReportError(kCommand, "no event common to both profiles" + both_lists);
    }
  }
  std::vector<size_t> old_select{*old_event}, new_select{*new_event};
  if (options.normalize == Normalization::kEvent) {
    auto o = FindEvent(old_events, options.normalize_event);
    auto n = FindEvent(new_events, options.normalize_event);
    if (!o || !n) {
      std::cerr << "tprof diff: --normalize: no event '" << options.normalize_event
                << "' in both profiles" << both_lists << " (see 'tprof diff --help')\n";
      return kExitUsage;
    }
    old_select.push_back(*o);
    new_select.push_back(*n);
  }

  // Each tree is let go as soon as the next step has what it needs from it: two 1M-sample
  // profiles make trees of hundreds of thousands of nodes.
  const DiffCallNode merged = [&] {
    const CallNode old_tree = SelectCallTreeEvents(old_side->root, old_select);
    old_side->root = CallNode();
    const CallNode new_tree = SelectCallTreeEvents(new_side->root, new_select);
    new_side->root = CallNode();
    return MergeCallTrees(old_tree, new_tree, old_select.size());
  }();
  auto scale = DiffFlameNewScale(merged, options.normalize, 0, 1);
  if (!scale.ok()) return ReportError(kCommand, scale.error());
  DiffFlameOptions flame_options;
  flame_options.event = 0;
  flame_options.width = options.width;
  flame_options.new_scale = *scale;
  auto tree = BuildDiffFlameTree(merged, flame_options);
  if (!tree.ok()) return ReportError(kCommand, options.old_path + ": " + tree.error().message());
  if (tree->root->total[0] == 0)
    return ReportError(kCommand, "no samples of " + event_name + " on the width side");

  FlameGraphInput input;
  input.root = tree->root.get();
  input.event = 0;
  const bool width_new = options.width == FlameWidthSide::kNew;
  input.event_name = event_name + ", widths " + (width_new ? "new" : "old");
  // Nanoseconds only when both sides' events count them (cpu-clock vs task-clock, say).
  const bool both_ns = UnitOfEvent(old_events[*old_event].name) == EventUnit::kNanoseconds &&
                       UnitOfEvent(new_events[*new_event].name) == EventUnit::kNanoseconds;
  input.unit = both_ns ? EventUnit::kNanoseconds : EventUnit::kCount;
  input.value_name = event_name;
  input.title = "tprof differential flame graph";
  input.icicle = options.icicle;
  input.subtitle = "old " + options.old_path + " | new " + options.new_path + " | widths from " +
                   (width_new ? "new" : "old") + " | colour: delta as % of the old total";
  switch (options.normalize) {
    case Normalization::kNone:
      input.subtitle += " | not normalized";
      break;
    case Normalization::kTotal:
      input.subtitle +=
          " | normalized: new scaled to the old total, which hides uniform changes (a uniform "
          "slowdown shows as no change)";
      break;
    case Normalization::kEvent:
      input.subtitle += " | normalized by " + options.normalize_event +
                        ": new scaled so that its " + options.normalize_event +
                        " total equals the old";
      break;
  }
  ColorFramesByDelta(input, *tree, kDiffFlameScalePoints);

  std::ofstream out(options.out_path, std::ios::binary | std::ios::trunc);
  if (!out)
    return ReportError(kCommand, options.out_path + ": cannot write: " + std::strerror(errno));
  RenderFlameGraphHtml(input, out);
  out.close();
  if (!out) return ReportError(kCommand, options.out_path + ": write failed");
  std::cerr << "tprof diff: differential flame graph of " << event_name << " written to "
            << options.out_path << '\n';
  return kExitOk;
}

}  // namespace tprof
