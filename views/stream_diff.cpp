#include "views/stream_diff.h"

#include "core/analysis/report_table.h"
#include "core/analysis/source_line_map.h"
#include "core/analysis/stream_matcher.h"
#include "core/base/visible_text.h"
#include "core/source/profile_source.h"
#include "report/stream_report.h"
#include "views/opened_profile.h"
#include "views/time_range_read.h"

namespace tprof {

Result<StreamProfile> LoadStreamProfile(const std::string& path, const StreamInputOptions& options,
                                        const ViewMessages& messages, bool* complete) {
  auto opened =
      OpenedProfile::Open(path, {options.symfs, options.binaries, messages.note, messages});
  if (!opened.ok()) return opened.error();
  ProfileSource& source = (*opened)->source();
  HotStreamBuilder builder(source.events(), (*opened)->resolver(), options.streams);
  auto read = ReadTimeRange(source, builder, "--time", options.time, path);
  if (!read.ok()) return read.error();
  messages.InputWarning(path, read->summary.warning);
  if (complete && !read->summary.complete) *complete = false;
  auto profile = builder.Finish();
  if (!profile.ok()) return profile.error().WithContext(path);
  return profile;
}

Result<ViewOutcome> WriteStreamDiff(const StreamDiffOptions& options, std::ostream& out,
                                    const ViewMessages& messages) {
  SourceTreeMap trees;
  if (!options.before_dir.empty()) {
    auto opened = SourceTreeMap::Open(options.before_dir, options.after_dir);
    if (!opened.ok()) return opened.error();
    trees = std::move(opened.value());
  }
  // Read one after the other: thread safety is an experimental build option of elfutils, whose
  // libelf and libdw the symbolizers use, so two symbolizers are not run at once.
  bool complete = true;  // both inputs read whole: else the comparison ends with status 4
  auto old_profile = LoadStreamProfile(options.old_path, options.input, messages, &complete);
  if (!old_profile.ok()) return old_profile.error();
  auto new_profile = LoadStreamProfile(options.new_path, options.input, messages, &complete);
  if (!new_profile.ok()) return new_profile.error();

  StreamMatchOptions match_options;
  match_options.top = options.top;
  match_options.changed_functions.insert(options.changed_functions.begin(),
                                         options.changed_functions.end());
  StreamMatcher matcher(*old_profile, *new_profile, trees, match_options);
  if (options.blocks) {
    if (!old_profile->branch_samples || !new_profile->branch_samples)
      return Error(std::string("--blocks needs branch stacks (record -b); ") +
                   (old_profile->branch_samples ? options.new_path : options.old_path) +
                   " has none");
    BlockComparison blocks = matcher.CompareBlocks();
    if (options.json) {
      nlohmann::json json = BlockComparisonJson(*old_profile, *new_profile, blocks);
      out << DumpVisibleJson(json, 1) << '\n';
    } else {
      VisibleTextStream visible(out);  // names are bytes (core/base/visible_text.h)
      RenderBlockComparison(*old_profile, *new_profile, blocks, visible);
    }
    return ViewOutcome{complete};
  }
  StreamComparison comparison = matcher.CompareStreams();
  if (options.json) {
    nlohmann::json json = StreamComparisonJson(*old_profile, *new_profile, comparison);
    out << DumpVisibleJson(json, 1) << '\n';
  } else {
    VisibleTextStream visible(out);
    RenderStreamComparison(*old_profile, *new_profile, comparison, visible);
  }
  return ViewOutcome{complete};
}

}  // namespace tprof
