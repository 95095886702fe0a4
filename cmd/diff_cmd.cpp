// tprof diff: function diffs of two profiles (or two sets of repeated runs) and a regression
// gate for CI. Loading is views/function_profile_loader, the analysis core/analysis/profile_diff
// and core/analysis/regression_gate, the rendering report/diff_report.

#include <algorithm>
#include <iostream>
#include <tuple>

#include "cmd/cli_support.h"
#include "core/analysis/cost_split.h"
#include "core/analysis/profile_diff.h"
#include "core/analysis/regression_gate.h"
#include "core/base/visible_text.h"
#include "core/model/event_selection.h"
#include "report/diff_report.h"
#include "views/diff_flamegraph.h"
#include "views/function_diff.h"
#include "views/function_profile_loader.h"
#include "views/stream_diff.h"

namespace tprof {
namespace {

std::string DiffDescription() {
  return std::string(
             "Compare profiles by function, per event.\n"
             "  tprof diff OLD NEW [--normalize none|total|EVENT] [--fail-if EXPR]... "
             "[--json]\n"
             "  tprof diff --old A1 A2 A3 --new B1 B2 B3    (or: tprof diff A1,A2,A3 "
             "B1,B2,B3)\n"
             "  tprof diff OLD NEW --flamegraph OUT.html [--flame-width old|new] [--event NAME] "
             "[--normalize ...]\n"
             "  tprof diff PROFILE --old-time 0%-50% --new-time 50%-100%    (two ranges of one "
             "run)\n"
             "Examples:\n"
             "  tprof diff old.tprof new.tprof                          what changed, per "
             "function\n"
             "  tprof diff old.tprof new.tprof --fail-if 'func(*) > +5%'   a gate for CI (exit 3)\n"
             "  tprof diff --old a1 a2 a3 --new b1 b2 b3 --flamegraph d.html   only significant\n"
             "                                                          changes coloured\n"
             "  tprof diff --stream old.tprof new.tprof --before src-old --after src-new\n"
             "\n"
             "Each side is one profile or several runs of the same thing (any format "
             "tprof reads:\n.tprof, perf.data, perf script text, folded stacks). "
             "Functions are matched by name and\nmodule file name (--ignore-module: by name "
             "alone); "
             "events by name. A sample counts toward\nthe innermost function at its address: an "
             "inlined function is a function of its own\n(--no-inline: the out-of-line function "
             "holding the address). Columns:\n") +
         kDiffColumnHelp +
         "\nWith several runs per side, values are means over runs and each change "
         "is tested\n(two-sided Mann-Whitney U on the per-run values): it is "
         "significant when p < --alpha and\n|Delta%| >= --min-effect. 4 runs per side "
         "are the fewest that can reach p < 0.05.\n"
         "p-values are per function, not corrected for testing many: among many "
         "unchanged functions\nabout alpha of them look significant by chance "
         "(mostly small ones); gate func(*) in pt.\n"
         "IPC and CPI, old and new, are shown when both sides sampled cycles and "
         "instructions,\nor else read them in a group (perf's {cycles,instructions}:S): then "
         "IPC[g] from the\ngroup's windows per function, with intervals and reasons, as in "
         "tprof report.\n--normalize:\n" +
         kDiffNormalizeHelp + "\n" + kThresholdSyntaxHelp +
         "\n--flamegraph writes a differential flame graph (one self-contained HTML page) of "
         "the call\npaths of OLD and NEW: frames as wide as in NEW (--flame-width old: OLD), "
         "coloured by\nthe change new - old as % of the old total on a fixed scale of \u00b15 "
         "points (blue shrank,\nwhite unchanged, red grew; the same colour is the same change in "
         "any two graphs);\na button switches between total (frame and below) and self delta. "
         "Stacks NEW lacks are\ndrawn hatched with their OLD width (\"gone\"). Tooltips: old, "
         "new, delta, delta % of the\nframe, delta % of the old total. --normalize scales NEW "
         "as for the function diff.\n"
         "\nExit status: 0 no threshold tripped; 3 a threshold tripped; 4 an input is "
         "incomplete\n(cut short, a .partial file, no samples): the diff covers what was read, "
         "and the gate\ndid not judge (--allow-incomplete judges it anyway); 1 unreadable input; "
         "2 usage error.";
}

class DiffCommand : public Subcommand {
 public:
  const char* name() const override { return "diff"; }
  const char* summary() const override {
    return "Compare two profiles by function, with a regression gate for CI";
  }

  void Setup(CLI::App& app) override {
    app.description(DiffDescription());
    SetupSideOptions(app);
    SetupGateOptions(app);
    SetupMatchingOptions(app);
    SetupViewOptions(app);
  }

  // OLD NEW or --old/--new runs, and each side's time range.
  void SetupSideOptions(CLI::App& app) {
    app.add_option("profiles", positional_, "OLD NEW (each may be a comma-separated list of runs)")
        ->expected(0, 2);
    SetUsageLine(
        app,
        "tprof diff [OPTIONS] OLD NEW   or   tprof diff [OPTIONS] --old A1 A2.. --new B1 B2..");
    app.add_option("--old-time", old_time_,
                   "Read the old side's samples within this range only, in --time's forms "
                   "(START,END seconds from the profile start, +START,+END, or A%-B%); with one "
                   "PROFILE, both sides are it and both ranges are needed; a range without a "
                   "sample exits 2");
    app.add_option("--new-time", new_time_, "The new side's range, as --old-time");
    app.add_option("--old", old_files_, "Profiles of the old side (repeated runs)");
    app.add_option("--new", new_files_, "Profiles of the new side (repeated runs)");
  }

  // How changes are measured and judged: --split, --normalize, --fail-if and the significance.
  void SetupGateOptions(CLI::App& app) {
    app.add_option("--split", split_,
                   "COST/WORK: split each function's cost change into work and efficiency "
                   "(default cycles/instructions when both sides sampled them)");
    app.add_option("--normalize", normalize_, "none (default), total, or an EVENT name")
        ->default_str("none");
    app.add_option("--fail-if", thresholds_, "A regression threshold (see above); repeatable")
        ->expected(1)
        ->allow_extra_args(false)  // --fail-if EXPR OLD NEW: OLD and NEW are not thresholds
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    AddMachineFormatOptions(app, json_, nullptr,
                            "the diff and the gate's verdict, docs/diff-schema.md");
    app.add_flag("--allow-incomplete", allow_incomplete_,
                 "Let --fail-if judge profiles that are incomplete (cut short, .partial, no "
                 "samples); without it such an input fails the gate with exit status 4");
    app.add_option("--limit", report_options_.max_rows,
                   "Show the N functions that changed most per event (default 30; 0: every one)");
    app.add_option("--alpha", diff_options_.alpha, "Significance level (default 0.05)")
        ->check(CLI::Range(1e-9, 0.5));
    app.add_option("--min-effect", diff_options_.min_effect_percent,
                   "Smallest |Delta%| called significant (default 5)")
        ->check(CLI::Range(0.0, 1e9));
  }

  // How functions are found and paired across the sides.
  void SetupMatchingOptions(CLI::App& app) {
    AddSymbolOptions(app, load_options_.symfs, load_options_.binaries);
    app.add_flag("--no-inline", no_inline_,
                 "Compare out-of-line functions: inlined code counts toward the function it was "
                 "inlined into (default: an inlined function is a function of its own)");
    app.add_flag("--ignore-module", ignore_module_,
                 "Match functions by name alone (e.g. when the binary was renamed)");
    app.add_flag("--kernel-rows", kernel_rows_,
                 "Show kernel functions as rows rather than crediting kernel work to the user "
                 "function that entered the kernel (done only when every input records a "
                 "callchain or the user pc)");
  }

  // The other views: --stream, --flamegraph.
  void SetupViewOptions(CLI::App& app) {
    app.add_flag("--stream", stream_,
                 "Compare hot streams (branch or call chains) entry by entry, with source-line "
                 "mapping: tprof diff --stream OLD NEW [--before DIR --after DIR] "
                 "[--changed-func NAME]... [--blocks]");
    AddStreamDiffOptions(app);
    app.add_option("--flamegraph", flamegraph_,
                   "Write a differential flame graph (self-contained HTML) to this file");
    app.add_option("--flame-width", flame_width_,
                   "--flamegraph: which profile sizes the frames, new (default) or old")
        ->check(CLI::IsMember({"old", "new"}))
        ->default_str("new");
    app.add_option("--event", flame_event_,
                   "Show this event alone; with --flamegraph, the event that sizes and colours "
                   "the frames (default: every event; the flame graph's is the first event both "
                   "profiles have)");
    app.add_flag("--icicle", icicle_, "--flamegraph: start with the roots at the top");
  }

  int Run() override {
    std::vector<std::string> old_files, new_files;
    for (const std::string& f : old_files_)
      for (const std::string& p : SplitProfileList(f)) old_files.push_back(p);
    for (const std::string& f : new_files_)
      for (const std::string& p : SplitProfileList(f)) new_files.push_back(p);
    if (positional_.size() == 2) {
      if (!old_files.empty() || !new_files.empty())
        return Usage("give OLD NEW or --old/--new, not both");
      old_files = SplitProfileList(positional_[0]);
      new_files = SplitProfileList(positional_[1]);
    } else if (positional_.size() == 1 && (!old_time_.empty() || !new_time_.empty())) {
      // Two ranges of one run: each side is the profile, read within its range.
      if (!old_files.empty() || !new_files.empty())
        return Usage("give one PROFILE or --old/--new, not both");
      if (old_time_.empty() || new_time_.empty())
        return Usage("one PROFILE compares two of its ranges: give --old-time and --new-time");
      old_files = new_files = SplitProfileList(positional_[0]);
    } else if (!positional_.empty()) {
      return Usage("expected OLD NEW, got one profile (or PROFILE --old-time A --new-time B)");
    }
    if (old_files.empty() || new_files.empty()) return Usage("expected OLD NEW (or --old/--new)");
    if (stream_ && (!old_time_.empty() || !new_time_.empty()))
      return Usage("--old-time and --new-time compare functions or flame graphs, not --stream");
    if (stream_) return RunStreamDiff(old_files, new_files);
    if (!flamegraph_.empty()) return RunFlameGraph(old_files, new_files);
    return RunFunctionDiff(old_files, new_files);
  }

 private:
  // Stream diffs compare one profile per side; the inputs and symbol options are shared with
  // the function diff.
  int RunStreamDiff(const std::vector<std::string>& old_files,
                    const std::vector<std::string>& new_files) {
    if (old_files.size() != 1 || new_files.size() != 1)
      return Usage("--stream compares one OLD and one NEW profile");
    if (old_files[0].empty() || new_files[0].empty())
      return Usage("--stream needs two profiles: tprof diff --stream OLD NEW");
    stream_options_.old_path = old_files[0];
    stream_options_.new_path = new_files[0];
    stream_options_.input.symfs = load_options_.symfs;
    stream_options_.input.binaries = load_options_.binaries;
    stream_options_.json = json_;
    if (stream_options_.before_dir.empty() != stream_options_.after_dir.empty())
      return Usage("--before and --after go together");
    return ExitStatusOf(name(),
                        WriteStreamDiff(stream_options_, std::cout, CommandMessages(name())));
  }

  void AddStreamDiffOptions(CLI::App& app) {
    StreamDiffOptions& options = stream_options_;
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

  int RunFlameGraph(const std::vector<std::string>& old_files,
                    const std::vector<std::string>& new_files) {
    if (!thresholds_.empty() || json_) return Usage("--flamegraph takes no --fail-if or --json");
    ParseNormalize();
    DiffFlameGraphOptions options;
    options.old_paths = old_files;
    options.new_paths = new_files;
    options.alpha = diff_options_.alpha;
    options.min_effect_percent = diff_options_.min_effect_percent;
    options.out_path = flamegraph_;
    options.event = flame_event_;
    options.width = flame_width_ == "old" ? FlameWidthSide::kOld : FlameWidthSide::kNew;
    options.normalize = diff_options_.normalize;
    options.normalize_event = diff_options_.normalize_event;
    options.symfs = load_options_.symfs;
    options.binaries = load_options_.binaries;
    options.icicle = icicle_;
    options.ignore_module = ignore_module_;
    options.old_time = old_time_;
    options.new_time = new_time_;
    options.credit_kernel_to_user = !kernel_rows_;
    return ExitStatusOf(name(), WriteDiffFlameGraph(options, CommandMessages(name())));
  }

  void ParseNormalize() {
    if (normalize_ == "none") {
      diff_options_.normalize = Normalization::kNone;
    } else if (normalize_ == "total") {
      diff_options_.normalize = Normalization::kTotal;
    } else {
      diff_options_.normalize = Normalization::kEvent;
      diff_options_.normalize_event = normalize_;
    }
  }

  int RunFunctionDiff(const std::vector<std::string>& old_files,
                      const std::vector<std::string>& new_files) {
    ParseNormalize();
    if (!split_.empty()) {
      auto events = ParseSplitEvents(split_);
      if (!events.ok()) return Usage(events.error().message());
      diff_options_.split_cost = events->first;
      diff_options_.split_work = events->second;
    }
    std::vector<Threshold> thresholds;
    for (const std::string& text : thresholds_) {
      auto t = ParseThreshold(text);
      if (!t.ok()) return Usage("--fail-if " + t.error().message());
      thresholds.push_back(std::move(t).value());
    }

    FunctionDiffRequest request;
    request.old_files = old_files;
    request.new_files = new_files;
    request.old_time = old_time_;
    request.new_time = new_time_;
    request.load = load_options_;
    request.load.inline_mode = no_inline_ ? InlineMode::kPhysical : InlineMode::kInnermost;
    request.diff = diff_options_;
    request.thresholds = std::move(thresholds);
    request.allow_incomplete = allow_incomplete_;
    request.ignore_module = ignore_module_;
    request.kernel_rows = kernel_rows_;
    request.json = json_;
    request.event = flame_event_;
    request.report = report_options_;
    auto outcome = WriteFunctionDiff(request, std::cout, CommandMessages(name()));
    if (!outcome.ok()) return ReportError(name(), outcome.error());
    if (!outcome->usage_error.empty()) return Usage(outcome->usage_error);
    if (outcome->gate_withheld) {
      std::cerr << "tprof diff: the gate did not judge: " << outcome->incomplete
                << "; --allow-incomplete judges it anyway\n";
      return kExitIncomplete;
    }
    for (const std::string& regression : outcome->regressions)
      std::cerr << "tprof diff: regression: " << regression << '\n';
    if (!outcome->regressions.empty()) return kExitRegression;
    // Without a gate, a diff over an input read in part ends as report does over one: the
    // numbers are printed, and the status says they are not the whole input's.
    if (thresholds_.empty() && !outcome->incomplete.empty()) {
      std::cerr << "tprof diff: " << outcome->incomplete
                << "; the diff covers what could be read\n";
      return kExitIncomplete;
    }
    return kExitOk;
  }

  int Usage(const std::string& message) { return UsageError(name(), message); }

  std::vector<std::string> positional_, old_files_, new_files_, thresholds_;
  std::string old_time_, new_time_;  // --old-time, --new-time
  std::string normalize_ = "none";
  std::string flamegraph_;
  std::string flame_width_ = "new";
  std::string flame_event_;
  std::string split_;  // --split COST/WORK
  bool icicle_ = false;
  bool json_ = false;
  bool allow_incomplete_ = false;
  bool stream_ = false;
  bool ignore_module_ = false;
  bool kernel_rows_ = false;
  bool no_inline_ = false;
  ProfileDiffOptions diff_options_;
  DiffReportOptions report_options_;
  ProfileLoadOptions load_options_;
  StreamDiffOptions stream_options_;
};

}  // namespace

std::unique_ptr<Subcommand> MakeDiffCommand() { return std::make_unique<DiffCommand>(); }

}  // namespace tprof
