#include "views/diff_flamegraph.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <tuple>

#include "core/analysis/call_tree.h"
#include "core/model/event_selection.h"
#include "report/flamegraph_html.h"
#include "views/opened_profile.h"
#include "views/time_range_read.h"

namespace tprof {
namespace {

// One side's call tree. The profile, its symbols and the builder's caches are let go once the
// tree is built, so that only one side's symbols are in memory at a time.
struct SideTree {
  std::vector<EventDesc> events;
  CallNode root;
};

// `time_option` and `time_range`: the side's --old-time or --new-time, and its range.
Result<SideTree> LoadSide(std::unique_ptr<OpenedProfile> opened, const std::string& path,
                          const DiffFlameGraphOptions& options, const std::string& time_option,
                          const std::string& time_range, const ViewMessages& messages,
                          bool* complete) {
  if (options.credit_kernel_to_user) opened->CreditKernelWorkToUser();
  ProfileSource& source = opened->source();
  if (source.events().empty()) return Error(path + ": the profile has no events");
  CallTreeOptions tree_options;
  tree_options.ignore_module = options.ignore_module;
  CallTreeBuilder builder(source.events(), opened->resolver(), tree_options);
  auto read = ReadTimeRange(source, builder, time_option, time_range, path);
  if (!read.ok()) return read.error();
  messages.InputWarning(path, read->summary.warning);
  if (!read->summary.complete) *complete = false;
  return SideTree{builder.events(), builder.TakeRoot()};
}

// Pairing events across profiles and runs takes equal names only: "cycles" and "cycles:u"
// count different things. (The name the user gives is looked up more leniently: SelectEvent.)
std::optional<size_t> FindEqualName(const std::vector<EventDesc>& events, const std::string& name) {
  for (size_t i = 0; i < events.size(); ++i)
    if (events[i].name == name) return i;
  return std::nullopt;
}

// A side's runs, each reduced to the events the graph needs (the sized event, and the
// --normalize event when there is one), with their mean.
struct Side {
  std::vector<std::string> paths;
  const char* time_option;                             // --old-time or --new-time
  std::string time_range;                              // its range; empty: whole profiles
  std::vector<std::unique_ptr<OpenedProfile>> opened;  // each let go once read
  std::vector<EventDesc> events;                       // the first run's
  std::vector<CallNode> runs;
};

}  // namespace

Result<ViewOutcome> WriteDiffFlameGraph(const DiffFlameGraphOptions& asked,
                                        const ViewMessages& messages) {
  // Kernel work as the table counts it: credited on every input or on none, so every input is
  // opened before any is read.
  DiffFlameGraphOptions options = asked;
  std::vector<std::unique_ptr<OpenedProfile>> old_opened, new_opened;
  for (auto [paths, opened] :
       {std::pair{&options.old_paths, &old_opened}, std::pair{&options.new_paths, &new_opened}})
    for (const std::string& path : *paths) {
      auto profile =
          OpenedProfile::Open(path, {options.symfs, options.binaries, nullptr, messages});
      if (!profile.ok()) return profile.error();
      options.credit_kernel_to_user &= (*profile)->records_user_context();
      opened->push_back(std::move(profile).value());
    }
  bool complete = true;  // every run read whole
  Side old_side{options.old_paths, "--old-time", options.old_time, std::move(old_opened), {}, {}},
      new_side{options.new_paths, "--new-time", options.new_time, std::move(new_opened), {}, {}};
  // The first run of each side decides the events; later runs are loaded one at a time below.
  std::vector<SideTree> firsts;
  for (Side* side : {&old_side, &new_side}) {
    auto first = LoadSide(std::move(side->opened.front()), side->paths.front(), options,
                          side->time_option, side->time_range, messages, &complete);
    if (!first.ok()) return first.error();
    side->events = first->events;
    firsts.push_back(std::move(first).value());
  }
  const std::vector<EventDesc>& old_events = old_side.events;
  const std::vector<EventDesc>& new_events = new_side.events;
  const std::string both_lists =
      " (old: " + EventNameList(old_events) + "; new: " + EventNameList(new_events) + ")";

  // The event that sizes and colours the frames: named, else the first both sides have, else
  // the lone events of two one-event profiles (e.g. folded stacks' "samples" vs cpu-clock).
  std::optional<size_t> old_event, new_event;
  std::string event_name;
  if (!options.event.empty()) {
    for (auto [events, path, index] :
         {std::tuple{&old_events, &options.old_paths.front(), &old_event},
          std::tuple{&new_events, &options.new_paths.front(), &new_event}}) {
      auto selected = SelectEvent(*events, options.event);
      if (!selected.ok()) return selected.error().WithContext(*path);
      *index = *selected;
    }
    event_name = options.event;
  } else {
    for (size_t i = 0; i < old_events.size() && !new_event; ++i)
      if ((new_event = FindEqualName(new_events, old_events[i].name))) old_event = i;
    if (old_event) {
      event_name = old_events[*old_event].name;
    } else if (old_events.size() == 1 && new_events.size() == 1) {
      old_event = new_event = 0;
      event_name = old_events[0].name + " vs " + new_events[0].name;
    } else {
      return Error("no event common to both profiles" + both_lists);
    }
  }
  std::vector<std::string> old_names{old_events[*old_event].name},
      new_names{new_events[*new_event].name};
  if (options.normalize == Normalization::kEvent) {
    // A name the user gave: looked up as --event is (SelectEvent), on each side.
    for (auto [events, path, names] :
         {std::tuple{&old_events, &options.old_paths.front(), &old_names},
          std::tuple{&new_events, &options.new_paths.front(), &new_names}}) {
      auto selected = SelectEvent(*events, options.normalize_event);
      if (!selected.ok())
        return Error::BadRequest("--normalize: " + selected.error().message()).WithContext(*path);
      names->push_back((*events)[*selected].name);
    }
  }
  // Every run reduced to those events, found by name in each run (runs of one side may list
  // their events in another order); a run without them is an error naming it.
  for (auto [side, names, first] : {std::tuple{&old_side, &old_names, &firsts[0]},
                                    std::tuple{&new_side, &new_names, &firsts[1]}}) {
    for (size_t r = 0; r < side->paths.size(); ++r) {
      std::optional<SideTree> loaded;
      if (r == 0) {
        loaded = std::move(*first);
      } else {
        auto run = LoadSide(std::move(side->opened[r]), side->paths[r], options, side->time_option,
                            side->time_range, messages, &complete);
        if (!run.ok()) return run.error();
        loaded = std::move(run).value();
      }
      std::vector<size_t> select;
      for (const std::string& name : *names) {
        auto index = FindEqualName(loaded->events, name);
        // Two lone differently named events pair by position, as above.
        if (!index && loaded->events.size() == 1 && names->size() == 1) index = 0;
        if (!index)
          return Error::BadRequest("no event '" + name +
                                   "' (it has: " + EventNameList(loaded->events) + ")")
              .WithContext(side->paths[r]);
        select.push_back(*index);
      }
      side->runs.push_back(SelectCallTreeEvents(loaded->root, select));
    }
  }
  const size_t selected = old_names.size();

  std::vector<const CallNode*> old_roots, new_roots;
  for (const CallNode& run : old_side.runs) old_roots.push_back(&run);
  for (const CallNode& run : new_side.runs) new_roots.push_back(&run);
  const DiffCallNode merged =
      MergeCallTrees(MeanCallTree(old_roots), MeanCallTree(new_roots), selected);
  auto scale = DiffFlameNewScale(merged, options.normalize, 0, 1);
  if (!scale.ok()) return scale.error();
  DiffFlameOptions flame_options;
  flame_options.event = 0;
  flame_options.width = options.width;
  flame_options.new_scale = *scale;
  auto tree = BuildDiffFlameTree(merged, flame_options);
  if (!tree.ok()) return Error(options.old_paths.front() + ": " + tree.error().message());
  if (tree->root->total[0] == 0) return Error("no samples of " + event_name + " on the width side");

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
  auto side_label = [](const std::vector<std::string>& paths, const std::string& range) {
    return (paths.size() == 1 ? paths.front()
                              : paths.front() + " and " + std::to_string(paths.size() - 1) +
                                    " more (" + std::to_string(paths.size()) + " runs, means)") +
           (range.empty() ? "" : " at " + range);
  };
  input.subtitle = "old " + side_label(options.old_paths, options.old_time) + " | new " +
                   side_label(options.new_paths, options.new_time) + " | widths from " +
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
  const size_t old_runs = old_roots.size(), new_runs = new_roots.size();
  if (old_runs >= 2 && new_runs >= 2) {
    // Each run's values on the scale the widths are on: per-run normalization like the mean's.
    auto factors = [&](const std::vector<const CallNode*>& roots) {
      std::vector<double> out;
      const size_t by = options.normalize == Normalization::kEvent ? 1 : 0;
      double reference = 0;
      for (const CallNode* r : old_roots) reference += static_cast<double>(r->total[by]);
      reference /= static_cast<double>(old_runs);
      for (const CallNode* r : roots)
        out.push_back(options.normalize == Normalization::kNone || r->total[by] == 0
                          ? 1.0
                          : reference / static_cast<double>(r->total[by]));
      return out;
    };
    const SideRuns old_side_runs{old_roots, factors(old_roots)};
    const SideRuns new_side_runs{new_roots, factors(new_roots)};
    auto changes = AssessFrameChanges(*tree, old_side_runs, new_side_runs, 0, options.alpha,
                                      options.min_effect_percent);
    char rule[160];
    std::snprintf(rule, sizeof rule,
                  "Mann-Whitney U over %zu old and %zu new runs: p < %g and |change| >= %g%% of "
                  "the old mean",
                  old_runs, new_runs, options.alpha, options.min_effect_percent);
    ColorFramesBySignificantDelta(input, *tree, kDiffFlameScalePoints, changes, rule);
    input.subtitle += std::string(" | ") + rule;
  } else {
    ColorFramesByDelta(input, *tree, kDiffFlameScalePoints);
    if (old_runs > 1 || new_runs > 1)
      input.subtitle += " | significance not assessed (two runs or more on both sides needed)";
  }

  std::ofstream out(options.out_path, std::ios::binary | std::ios::trunc);
  if (!out) return Error(options.out_path + ": cannot write: " + std::strerror(errno));
  RenderFlameGraphHtml(input, out);
  out.close();
  if (!out) return Error(options.out_path + ": write failed");
  messages.Wrote("differential flame graph of " + event_name + " written to " + options.out_path);
  return ViewOutcome{complete};
}

}  // namespace tprof
