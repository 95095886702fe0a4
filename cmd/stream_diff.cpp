#include "cmd/stream_diff.h"

#include <iostream>

#include "cmd/cli_support.h"
#include "views/opened_profile.h"
#include "views/time_range_read.h"
#include "core/analysis/report_table.h"
#include "core/analysis/source_line_map.h"
#include "core/analysis/stream_matcher.h"
#include "core/base/visible_text.h"
#include "core/source/profile_source.h"
#include "report/stream_report.h"

namespace tprof {

Result<StreamProfile> LoadStreamProfile(const std::string& path, const StreamInputOptions& options,
                                        const std::string& command, bool* complete) {
  auto opened = OpenedProfile::Open(
      path, {options.symfs, options.binaries,
             [&command](const std::string& note) { Note(command, note); }, command});
  if (!opened.ok()) return opened.error();
  ProfileSource& source = (*opened)->source();
  HotStreamBuilder builder(source.events(), (*opened)->resolver(), options.streams);
  auto read = ReadTimeRange(source, builder, "--time", options.time, path);
  if (!read.ok()) return read.error();
  WarnAboutInput(command, path, read->summary.warning);
  if (complete && !read->summary.complete) *complete = false;
  auto profile = builder.Finish();
  if (!profile.ok()) return profile.error().WithContext(path);
  return profile;
}

void AddStreamDiffOptions(CLI::App& app, StreamDiffOptions& options, bool shared) {
  if (shared) {
    app.add_option("old", options.old_path, "The old profile");
    app.add_option("new", options.new_path, "The new profile");
    app.add_option("--symfs", options.input.symfs,
                   "Look for recorded binaries under this directory");
    app.add_option("--binary", options.input.binaries,
                   "A local copy of a recorded binary (matched by build-id, else by name); "
                   "repeatable")
        ->allow_extra_args(false);  // one file per --binary: the profiles stay positional
    app.add_flag("--json", options.json, "Print JSON instead of text");
  }
  app.add_option("--before", options.before_dir,
                 "--stream: the old profile's source tree (lines are mapped to it)");
  app.add_option("--after", options.after_dir, "--stream: the new profile's source tree");
  app.add_option("--changed-func", options.changed_functions,
                 "--stream: a function whose code changed without its source (compiler flags); "
                 "repeatable")
      ->allow_extra_args(false);
  app.add_flag("--blocks", options.blocks,
               "--stream: compare the hottest basic blocks of the branch stacks instead");
  app.add_option("--top", options.top, "--stream: streams (or blocks) of each profile shown")
      ->check(CLI::PositiveNumber);
  app.add_option("--depth", options.input.streams.depth, "--stream: entries per stream at most")
      ->check(CLI::PositiveNumber);
}

int RunStreamDiff(const StreamDiffOptions& options) {
  const std::string command = "diff";
  if (options.old_path.empty() || options.new_path.empty()) {
    return UsageError(command, "--stream needs two profiles: tprof diff --stream OLD NEW");
  }
  if (options.before_dir.empty() != options.after_dir.empty()) {
    return UsageError(command, "--before and --after go together");
  }
  SourceTreeMap trees;
  if (!options.before_dir.empty()) {
    auto opened = SourceTreeMap::Open(options.before_dir, options.after_dir);
    if (!opened.ok()) return ReportError(command, opened.error());
    trees = std::move(opened.value());
  }
  // Read one after the other: thread safety is an experimental build option of elfutils, whose
  // libelf and libdw the symbolizers use, so two symbolizers are not run at once.
  bool complete = true;  // both inputs read whole: else the comparison ends with status 4
  auto old_profile = LoadStreamProfile(options.old_path, options.input, command, &complete);
  if (!old_profile.ok()) return ReportError(command, old_profile.error());
  auto new_profile = LoadStreamProfile(options.new_path, options.input, command, &complete);
  if (!new_profile.ok()) return ReportError(command, new_profile.error());

  StreamMatchOptions match_options;
  match_options.top = options.top;
  match_options.changed_functions.insert(options.changed_functions.begin(),
                                         options.changed_functions.end());
  StreamMatcher matcher(*old_profile, *new_profile, trees, match_options);
  if (options.blocks) {
    if (!old_profile->branch_samples || !new_profile->branch_samples)
      return ReportError(command,
                         std::string("--blocks needs branch stacks (record -b); ") +
                             (old_profile->branch_samples ? options.new_path : options.old_path) +
                             " has none");
    BlockComparison blocks = matcher.CompareBlocks();
    if (options.json) {
      nlohmann::json json = BlockComparisonJson(*old_profile, *new_profile, blocks);
      std::cout << DumpVisibleJson(json, 1) << '\n';
    } else {
      VisibleTextStream out(std::cout);  // names are bytes (core/base/visible_text.h)
      RenderBlockComparison(*old_profile, *new_profile, blocks, out);
    }
    return complete ? kExitOk : kExitIncomplete;
  }
  StreamComparison comparison = matcher.CompareStreams();
  if (options.json) {
    nlohmann::json json = StreamComparisonJson(*old_profile, *new_profile, comparison);
    std::cout << DumpVisibleJson(json, 1) << '\n';
  } else {
    VisibleTextStream out(std::cout);
    RenderStreamComparison(*old_profile, *new_profile, comparison, out);
  }
  return complete ? kExitOk : kExitIncomplete;
}

}  // namespace tprof
