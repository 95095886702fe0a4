// tprof report: the functions of a profile by self share.
#include <algorithm>
#include <iostream>
#include <sstream>

#include "cmd/cli_support.h"
#include "cmd/report_export_options.h"
#include "core/analysis/off_cpu_reasons.h"
#include "core/analysis/report_table.h"
#include "core/model/event_selection.h"
#include "core/model/metric_expression.h"
#include "report/text_report.h"
#include "views/flame_graph.h"
#include "views/opened_profile.h"
#include "views/report_table.h"
#include "views/report_timeline.h"
#include "views/sample_selecting_source.h"
#include "views/time_range_read.h"

namespace tprof {
namespace {

constexpr const char* kReportDescription =
    "Show where the samples of a profile fall, by function.\n"
    "  tprof report [-i FILE] [--sort KEYS] [--children] [--percent-limit P] [--limit N]\n"
    "               [--comm C] [--pid P] [--tid T] [--dso D] [--symbol REGEX] [--time S,E]\n"
    "               [--callers FUNC | --callees FUNC] [--json | --csv]\n"
    "  tprof report --folded [--event NAME] [--folded-prefix none|comm|pid|tid]\n"
    "               [--no-marks] [--no-inline]\n"
    "  tprof report --folded --folded-style stackcollapse [--folded-prefix comm|pid|tid]\n"
    "               [--folded-marks kernel|jit|all] [--folded-addrs]   "
    "(stackcollapse-perf.pl)\n"
    "  tprof report --pprof out.pb.gz | --speedscope out.json | --annotate FUNCTION\n"
    "  tprof report --flamegraph OUT.html [--event NAME] [--color MODE]\n"
    "Examples:\n"
    "  tprof report -i prof.tprof                    functions by self share\n"
    "  tprof report -i perf.data --children --limit 20   perf's files too; Total% by stack\n"
    "  tprof report -i prof.tprof --metric 'fpm = page-faults / task-clock * 1000000'\n"
    "  tprof report -i prof.tprof --flamegraph prof.html   the flame graph, with a timeline\n"
    "  tprof report -i prof.tprof --time 10%-20% --json    one stretch of the run, as JSON\n"
    "  perf script | tprof report - --folded --folded-style stackcollapse\n"
    "\n"
    "FILE may be a .tprof profile, a perf.data file or stream ('-' reads standard input),\n"
    "`perf script` output or folded stacks; the format is recognised by content.\n"
    "\n"
    "Rows: --sort KEYS (comm,dso,sym by default; also pid, tid, srcline). sym is the\n"
    "innermost function at the sample's address: a function inlined into another is a row\n"
    "of its own, and the function it was inlined into is its caller (--children,\n"
    "--callers); --no-inline makes sym the out-of-line function holding the address.\n"
    "Per sampled event:\n"
    "Self% (samples whose leaf is in the row) and, with --children, Total% (the row anywhere\n"
    "on the callchain), as shares of the event's total period, and sample counts.\n"
    "Derived metrics (IPC, CPI, branch-miss%, cache-miss%, MPKI; with `record -M`, the CPU\n"
    "table's formulas, the table recognised by the recorded event names and codes) come from\n"
    "[s] sampled periods (events sampled on their own, e.g. -e cycles,instructions -c N: the\n"
    "sum of each event's periods in the row) or [g] group deltas (a leader-sampled group\n"
    "{a,b}:S: counter deltas of the windows between two samples that both fall in the row;\n"
    "other windows are discarded, their share reported, their samples still counted).\n"
    "Each value has a 95% interval (\u00b1), from the spread of the row's credited windows\n"
    "([g]) or its sample counts ([s], Poisson); marked ~ (low confidence) when the interval\n"
    "reaches further than 10% of the value either side or cannot be estimated (\u00b1?).\n"
    "Filters --comm, --pid, --tid, --dso, --symbol hide rows without changing shares (as "
    "perf's\n"
    "--percentage absolute); --time START,END keeps the samples from START to END seconds\n"
    "after the profile start (the recording's start, else the first sample; A%-B% from A to\n"
    "B percent of its length), and shares are of what it keeps; a range that holds no\n"
    "sample exits 2. Folded stacks, flame graphs and exports keep the samples --time,\n"
    "--comm, --pid and --tid keep; --dso and --symbol choose table rows only.\n"
    "Kernel work: a sample taken in the kernel on a user thread's behalf (a page fault, a\n"
    "system call) counts for the user function that entered the kernel (the callchain's user\n"
    "part, or the user pc that `tprof record` samples without -g); the header says how many.\n"
    "--kernel-rows shows kernel functions as rows instead, as perf does. --folded, --pprof\n"
    "and --speedscope keep the stacks as recorded, kernel frames on top.\n"
    "\n"
    "--flamegraph writes one self-contained HTML page (no network needed): click to zoom,\n"
    "search by regular expression, tooltips with counts and shares, icicle layout.\n"
    "--color name (default): a stable colour per function name. ipc / cpi: each frame by\n"
    "its own instructions per cycle (or cycles per instruction) on a fixed 0-4 scale, from\n"
    "independently sampled cycles and instructions (tprof record -e cycles,instructions -c "
    "N);\n"
    "stall: stall cycles (stalled-cycles-backend/frontend, STALL_BACKEND/FRONTEND) against\n"
    "cycles, 0-100 %. metric:NAME: any metric of the table (IPC, MPKI, a CPU table's) or your\n"
    "own --metric, over events sampled on their own, on a 0 to round-top scale. Frames with\n"
    "fewer than --color-min-samples samples of any of the events are grey. offcpu (the\n"
    "default for a profile recorded with --off-cpu and a clock): frames sized by wall time,\n"
    "on-CPU plus off-CPU, and coloured by their off-CPU share, warm on the CPU, blue off it.";

class ReportCommand : public Subcommand {
 public:
  const char* name() const override { return "report"; }
  const char* summary() const override { return "Show the functions of a profile by self share"; }

  void Setup(CLI::App& app) override {
    app.description(kReportDescription);
    SetupInputOptions(app);
    SetupTableOptions(app);
    // ---- folded stacks, pprof/speedscope exports, annotate (views/report_exports.*) ----
    AddReportExportOptions(app, exports_);
    SetupFlameGraphOptions(app);
  }

  // The input, row limits, symbols, and perf report's habits that are tprof's defaults.
  void SetupInputOptions(CLI::App& app) {
    AddProfileInputOptions(app, input_);
    app.add_option("--percent-limit", options_.percent_limit,
                   "Hide rows below this share (Self%, or Total% with --children) of every event");
    limit_option_ =
        app.add_option("--limit", options_.max_rows, "Show at most N rows")
            ->check(CLI::Validator(
                [](std::string& text) {
                  return text.empty() || text.find_first_not_of("0123456789") != std::string::npos
                             ? std::string("a number of rows, 0 (no limit) or more")
                             : std::string();
                },
                "N"));
    AddSymbolOptions(app, symfs_, binaries_);
    // perf report's habits that are tprof's defaults: accepted, changing nothing.
    app.add_flag("--stdio")->description("Text output (the default; accepted for perf's habit)");
    app.add_flag("--no-children")
        ->description(
            "Self shares only (the default; --children adds totals; accepted for "
            "perf's habit)");
    app.add_flag("-n,--show-nr-samples")
        ->description("Sample counts (always shown; accepted for perf's habit)");
  }

  // --- flame graph options ---
  void SetupFlameGraphOptions(CLI::App& app) {
    app.add_option("--flamegraph", flamegraph_,
                   "Write an interactive flame graph (self-contained HTML) to this file "
                   "instead of the table");
    app.add_option("--color", color_name_,
                   "Flame graph colours: name (default), ipc, cpi, stall, offcpu (the default "
                   "for a profile recorded with --off-cpu), or metric:NAME (any metric of the "
                   "table's, a --metric of yours, over events sampled on their own)")
        ->check([](const std::string& value) -> std::string {
          if (value.rfind("metric:", 0) == 0 && value.size() > 7) return "";
          for (const char* known : {"name", "ipc", "cpi", "stall", "offcpu"})
            if (value == known) return "";
          return "--color: '" + value + "' is not name, ipc, cpi, stall, offcpu or metric:NAME";
        });
    app.add_option("--color-min-samples", min_samples_,
                   "With --color ipc/cpi/stall/metric:NAME: frames with fewer samples of any of "
                   "its events are grey (default 10)");
    app.add_option("--flame-roots", roots_name_,
                   "Flame graph roots: none (default), process, pid or thread")
        ->transform(CLI::IsMember({"none", "process", "pid", "thread"}, CLI::ignore_case));
    app.add_flag("--icicle", icicle_, "Flame graph: start with the roots at the top");
    app.add_flag("--no-timeline", no_timeline_,
                 "Flame graph: leave out the timeline (lanes per thread over time, ranges to "
                 "redraw the graph for and to compare); it grows with samples x threads");
    app.add_option("--track", track_name_,
                   "Flame graph: the timeline's metric track, any metric of the table's or a "
                   "--metric of yours, from each bucket's sampled periods or a read group's "
                   "windows (default: the --color metric:NAME, else the first --metric, else IPC)");
  }

  // --- report table options (sort, filters, children, callers/callees, json/csv) ---
  void SetupTableOptions(CLI::App& app) {
    app.add_option("--metric", metric_texts_,
                   "A metric of your own per row, 'NAME = EXPRESSION' over the recorded events "
                   "(e.g. 'faults_per_ki = page-faults / instructions * 1000'; + - * / and "
                   "parentheses, subtraction with spaces); repeatable")
        ->expected(1)
        ->allow_extra_args(false)
        ->take_all();
    app.add_option("-s,--sort", sort_,
                   "Row keys, comma-separated: sym, dso, comm, pid, tid, srcline (default "
                   "comm,dso,sym)");
    app.add_flag("--children", children_,
                 "Add Total%: the share of samples with the row anywhere on the callchain, and "
                 "order by it");
    app.add_flag("-v,--verbose", verbose_,
                 "Every note on its own line (each module without a usable file, not a summary), "
                 "and the table's full header: every note and what each column means");
    app.add_flag("--latency", latency_,
                 "The latency view (perf's --latency): each on-CPU sample weighted by 1 / (threads "
                 "of its process running at that moment), so that rows add up to wall time and a "
                 "serial phase outweighs CPU burnt in parallel; needs a profile recorded with "
                 "--off-cpu");
    app.add_flag("--off-cpu-reasons", off_cpu_reasons_,
                 "Split the off-cpu event by why each thread waited, as the kernel's stack tells "
                 "it: one more event per reason (off-cpu:sleep, off-cpu:lock, off-cpu:io-wait, "
                 "off-cpu:disk, off-cpu:child, off-cpu:preempted, off-cpu:other), columns of the "
                 "table and events for --folded, --flamegraph, pprof and speedscope");
    app.add_flag("--kernel-rows", kernel_rows_,
                 "Show kernel functions as rows (perf's view); by default a sample taken in the "
                 "kernel on a user thread's behalf (a fault, a system call) counts for the user "
                 "function that entered the kernel, in the table and the flame graph");
    SetupFilterOptions(app);
    SetupTableViewOptions(app);
  }

  // --comm, --pid, --tid, --dso, --symbol, --time: which samples and rows count.
  void SetupFilterOptions(CLI::App& app) {
    app.add_option("--comm", comms_, "Only rows of these commands (comma-separated)")
        ->delimiter(',')
        ->allow_extra_args(false);
    app.add_option("--pid", pids_, "Only rows of these processes (comma-separated)")
        ->delimiter(',')
        ->allow_extra_args(false);
    app.add_option("--tid", tids_, "Only rows of these threads (comma-separated)")
        ->delimiter(',')
        ->allow_extra_args(false);
    app.add_option("--dso", dsos_,
                   "Only rows of these modules: path or file name (comma-separated)")
        ->delimiter(',')
        ->allow_extra_args(false);
    app.add_option("--symbol", filter_.symbol_pattern,
                   "Only functions whose name matches this regular expression (ECMAScript, "
                   "searched)");
    AddTimeRangeOption(app, time_);
  }

  // The table's other forms: --timeline, --callers/--callees, --json, --csv.
  void SetupTableViewOptions(CLI::App& app) {
    app.add_flag("--timeline", timeline_,
                 "Show the profile over time: per interval (--interval), each event's samples, "
                 "the metrics (IPC, --metric) with their 95 % intervals and the top functions "
                 "(--limit, default 5), as perf stat -I prints counts; --json and --csv format "
                 "it");
    app.add_option("--interval", interval_ms_,
                   "--timeline: the interval in milliseconds (default: about a tenth of the "
                   "profile, 1, 2 or 5 times a power of ten)")
        ->check(CLI::Range(0.001, 1e9));
    app.add_option("--callers", callers_,
                   "Show the callers of FUNC with their shares, from callchains (FUNC: full, "
                   "parameterless or unqualified name)");
    app.add_option("--callees", callees_,
                   "Show the functions FUNC calls with their shares (with --callers, the same "
                   "FUNC)");
    AddMachineFormatOptions(app, json_, &csv_, "docs/report-schema.md");
  }

  int Usage(const std::string& message) { return UsageError(name(), message); }

  // `metadata`: the profile's, whose length resolves a --time range in percents.
  Result<SampleFilter> BuildFilter(const Metadata& metadata) {
    SampleFilter filter = filter_;
    filter.comms.insert(comms_.begin(), comms_.end());
    filter.pids.insert(pids_.begin(), pids_.end());
    filter.tids.insert(tids_.begin(), tids_.end());
    filter.dsos = dsos_;
    if (!time_.empty()) {
      auto range = TimeRangeOption(time_, metadata.duration_ns);
      if (!range.ok()) return range.error();
      filter.time_start = range->first;
      filter.time_end = range->second;
      time_seconds_ = DescribeSeconds(filter.time_start, filter.time_end);
    }
    built_filter_ = filter;
    return filter;
  }

  // A --time range that kept no sample: an answer over nothing would read as "nothing ran".
  int EmptyTimeRange(uint64_t duration_ns) {
    std::string message = "--time " + time_ + " (" + time_seconds_ + ") holds no sample";
    if (duration_ns != 0) {
      char length[64];
      std::snprintf(length, sizeof length, "; the profile is %.3f s long",
                    static_cast<double>(duration_ns) / 1e9);
      message += length;
    }
    return Usage(message);
  }

  std::string FilterSummary() const { return DescribeFilter(built_filter_, time_); }

  TableFormat Format() const {
    return json_ ? TableFormat::kJson : csv_ ? TableFormat::kCsv : TableFormat::kText;
  }

  // The table, or --callers/--callees.
  int RunTable(OpenedProfile& opened) {
    ProfileSource& source = opened.source();
    auto sort = ParseSortKeys(sort_);
    if (!sort.ok()) return Usage(sort.error().message());
    auto filter = BuildFilter(source.metadata());
    if (!filter.ok()) return Usage(filter.error().message());
    if (!callers_.empty() && !callees_.empty() && callers_ != callees_)
      return Usage("--callers and --callees name one function");
    auto selector = SampleSelector::Create(*filter, source.metadata().start_timestamp);
    if (!selector.ok()) return Usage(selector.error().message());
    ReportTableRequest request;
    if (callers_.empty() && callees_.empty()) {
      auto user_metrics = UserMetrics(source.events());
      if (!user_metrics.ok()) return Usage(user_metrics.error().message());
      request.user_metrics = std::move(user_metrics).value();
    }
    request.input = input_;
    request.sort = *sort;
    request.filter = *filter;
    request.filter_summary = FilterSummary();
    request.inline_mode = InlineModeOf();
    request.format = Format();
    request.callers = callers_;
    request.callees = callees_;
    request.children = children_;
    request.kernel_rows = kernel_rows_;
    request.latency = latency_;
    request.full_header = verbose_;
    request.percent_limit = options_.percent_limit;
    request.max_rows = options_.max_rows;
    return Finish(WriteReportTable(request, opened, std::cout, CommandMessages(name())),
                  source.metadata().duration_ns);
  }

  // A view's end, said in the words of report's options.
  int Finish(const Result<ViewOutcome>& outcome, uint64_t duration_ns) {
    if (outcome.ok() && outcome->time_range_empty) return EmptyTimeRange(duration_ns);
    if (outcome.ok() && outcome->nothing_kept) {
      Note(name(), "no samples passed the filters (" + FilterSummary() + ")");
      return kExitUsage;
    }
    return ExitStatusOf(name(), outcome);
  }

  // The --metric definitions over `events`; an error names the first that does not parse.
  Result<std::vector<MetricFormula>> UserMetrics(const std::vector<EventDesc>& events) const {
    std::vector<MetricFormula> user_metrics;
    for (const std::string& text : metric_texts_) {
      auto parsed = ParseUserMetric(text, events);
      if (!parsed.ok()) return parsed.error();
      user_metrics.push_back(std::move(parsed).value());
    }
    return user_metrics;
  }

  InlineMode InlineModeOf() const {
    return exports_.no_inline ? InlineMode::kPhysical : InlineMode::kInnermost;
  }

  // --- end of report table options ---

  // What one run writes: each view writes alone (a flame graph page; the exports, which go
  // together in one pass, except --folded and --annotate; the table or --callers/--callees, which
  // --json and --csv format), so asking for two is a usage error, never a silently dropped output.
  enum class ReportView { kTable, kFlameGraph, kExports, kTimeline };

  Result<ReportView> ChosenView() const {
    std::vector<std::string> asked;
    if (!flamegraph_.empty()) asked.push_back("--flamegraph");
    if (exports_.folded) asked.push_back("--folded");
    if (!exports_.annotate.empty()) asked.push_back("--annotate");
    if (!exports_.pprof_path.empty()) asked.push_back("--pprof");
    if (!exports_.speedscope_path.empty()) asked.push_back("--speedscope");
    if (timeline_) asked.push_back("--timeline");
    if (!callers_.empty()) asked.push_back("--callers");
    if (!callees_.empty()) asked.push_back("--callees");
    if (json_) asked.push_back("--json");
    if (csv_) asked.push_back("--csv");
    auto has = [&](const char* option) {
      return std::find(asked.begin(), asked.end(), option) != asked.end();
    };
    auto conflict = [&](const std::string& a, const std::string& b) {
      return Error::BadRequest(a + " and " + b + " are two outputs: run one, then the other");
    };
    if (!flamegraph_.empty()) {
      if (asked.size() > 1) return conflict("--flamegraph", asked[1]);
      return ReportView::kFlameGraph;
    }
    if (exports_.folded && !exports_.annotate.empty()) return conflict("--folded", "--annotate");
    if (exports_.requested()) {
      for (const char* view : {"--timeline", "--callers", "--callees", "--json", "--csv"})
        if (has(view)) return conflict(asked.front(), view);
      return ReportView::kExports;
    }
    if (timeline_) {
      for (const char* view : {"--callers", "--callees"})
        if (has(view)) return conflict("--timeline", view);
      if (children_)
        return Error::BadRequest(
            "--children is the table's; --timeline shows each interval's functions by self");
      return ReportView::kTimeline;
    }
    if (interval_ms_ > 0) return Error::BadRequest("--interval is --timeline's");
    return ReportView::kTable;
  }

  int Run() override {
    auto view = ChosenView();
    if (!view.ok()) return Usage(view.error().message());
    if (auto misuse = FoldedStyleMisuse(exports_)) return Usage(*misuse);
    ProfileOpenOptions open_options{symfs_, binaries_, nullptr, CommandMessages(name())};
    open_options.verbose = verbose_;
    open_options.latency = latency_;
    open_options.off_cpu_reasons = off_cpu_reasons_;
    open_options.off_cpu_reasons_when_present = !flamegraph_.empty() && !no_timeline_;
    // Stack exports (folded stacks, pprof, speedscope) hand the stacks on as recorded, kernel
    // frames on top, as the tools that read them expect, even beside --annotate; the user
    // function's total holds them. Annotate alone credits like the table, so that its lines add
    // up to the function's row.
    const bool stack_export =
        exports_.folded || !exports_.pprof_path.empty() || !exports_.speedscope_path.empty();
    open_options.credit_kernel_to_user = !kernel_rows_ && !stack_export;
    auto opened_or = OpenedProfile::Open(input_, open_options);
    if (!opened_or.ok()) return ReportError(name(), opened_or.error());
    OpenedProfile& opened = **opened_or;
    // A misspelt --event is the same usage error whatever the output (pprof and speedscope carry
    // every event, and the table shows every one, but a name that is not there is a mistake).
    if (!exports_.event.empty()) {
      auto selected = SelectEvent(opened.source().events(), exports_.event);
      if (!selected.ok()) return ReportError(name(), selected.error().WithContext(input_));
    }
    if (*view == ReportView::kTimeline) return RunTimeline(opened);
    if (*view != ReportView::kTable) return RunStackView(*view, opened);
    return RunTable(opened);
  }

 private:
  // A flame graph, folded stacks, pprof/speedscope exports or annotate: they replace the table
  // and take the samples the time range and thread filters keep.
  int RunStackView(ReportView view, OpenedProfile& opened) {
    auto filter = BuildFilter(opened.source().metadata());
    if (!filter.ok()) return Usage(filter.error().message());
    auto selected = SelectSamplesForView(opened.source(), *filter,
                                         flamegraph_.empty() ? "this output" : "--flamegraph");
    if (!selected.ok()) return Usage(selected.error().message());
    ProfileSource& source = *selected ? **selected : opened.source();
    int status;
    if (view == ReportView::kFlameGraph) {
      status = RunFlameGraph(source, opened.resolver(), selected->get());
    } else {
      ModuleOpener open_module = [&opened](const std::string& module, const std::string& build_id) {
        return opened.OpenModule(module, build_id);
      };
      status =
          ExitStatusOf(name(), WriteReportExports(exports_, input_, source, opened.resolver(),
                                                  open_module, std::cout, CommandMessages(name())));
    }
    // (A --time range open at both ends keeps every sample: nothing is selected then.)
    if ((status == kExitOk || status == kExitIncomplete) && *selected && !time_.empty() &&
        (*selected)->samples_in_time() == 0)
      return EmptyTimeRange(opened.source().metadata().duration_ns);
    if (status == kExitOk && *selected && (*selected)->samples_kept() == 0)
      Note(name(), "no samples passed the filters (" + FilterSummary() + ")");
    return status;
  }

  // --timeline: the samples the time and thread filters keep, counted per interval.
  int RunTimeline(OpenedProfile& opened) {
    ProfileSource& source = opened.source();
    if (source.events().empty()) return ReportError(name(), input_ + ": the profile has no events");
    auto filter = BuildFilter(source.metadata());
    if (!filter.ok()) return Usage(filter.error().message());
    if (auto misuse = RowFilterMisuse(*filter, "--timeline")) return Usage(*misuse);
    auto selector = SampleSelector::Create(*filter, source.metadata().start_timestamp);
    if (!selector.ok()) return Usage(selector.error().message());
    auto user_metrics = UserMetrics(source.events());
    if (!user_metrics.ok()) return Usage(user_metrics.error().message());
    ReportTimelineRequest request;
    request.input = input_;
    request.filter = *filter;
    request.inline_mode = InlineModeOf();
    request.user_metrics = std::move(user_metrics).value();
    request.format = Format();
    if (!exports_.event.empty())
      request.ranking_event = SelectEvent(source.events(), exports_.event).value();
    request.interval_ns = interval_ms_ > 0 ? static_cast<uint64_t>(interval_ms_ * 1e6) : 0;
    // Five functions an interval unless --limit says otherwise (0: every one).
    request.top = limit_option_ && limit_option_->count() ? options_.max_rows : 5;
    return Finish(WriteReportTimeline(request, opened, std::cout, CommandMessages(name())),
                  source.metadata().duration_ns);
  }

  // `selected`: the filtered input `source` reads through, null when nothing is filtered.
  int RunFlameGraph(ProfileSource& source, FrameResolver& resolver,
                    const SampleSelectingSource* selected) {
    if (color_name_ == "offcpu" && !exports_.event.empty() && FindWallTimeEvents(source.events()))
      return Usage("--color offcpu sizes the frames by wall time; --event does not apply");
    auto user_metrics = UserMetrics(source.events());
    if (!user_metrics.ok()) return Usage(user_metrics.error().message());
    FlameGraphRequest request;
    request.input = input_;
    request.out_path = flamegraph_;
    request.event = exports_.event;
    request.color = color_name_;
    request.track = track_name_;
    request.user_metrics = std::move(user_metrics).value();
    request.min_samples = min_samples_;
    request.roots = roots_name_ == "process"  ? CallTreeOptions::Roots::kProcess
                    : roots_name_ == "pid"    ? CallTreeOptions::Roots::kPid
                    : roots_name_ == "thread" ? CallTreeOptions::Roots::kThread
                                              : CallTreeOptions::Roots::kNone;
    request.timeline = !no_timeline_;
    request.icicle = icicle_;
    request.kernel_rows = kernel_rows_;
    return Finish(WriteFlameGraph(request, source, resolver, selected, CommandMessages(name())),
                  source.metadata().duration_ns);
  }

  std::string input_ = "profile.tprof";
  std::string symfs_;
  std::vector<std::string> binaries_;
  TextReportOptions options_;
  // report table options
  std::string sort_ = "comm,dso,sym";
  std::vector<std::string> metric_texts_;  // --metric 'NAME = EXPRESSION'...
  bool children_ = false;
  bool kernel_rows_ = false;
  bool latency_ = false;
  bool off_cpu_reasons_ = false;
  bool verbose_ = false;
  std::vector<std::string> comms_;
  std::vector<uint32_t> pids_;
  std::vector<uint32_t> tids_;
  std::vector<std::string> dsos_;
  std::string time_;
  std::string time_seconds_;  // time_ resolved, for messages
  SampleFilter filter_;
  SampleFilter built_filter_;  // the last BuildFilter's, for messages
  std::string callers_;
  std::string callees_;
  bool timeline_ = false;
  CLI::Option* limit_option_ = nullptr;  // whether --limit was given
  double interval_ms_ = 0;               // --timeline's; 0: DefaultTimelineIntervalNs
  bool json_ = false;
  bool csv_ = false;
  ReportExportRequest exports_;  // folded stacks, exports, annotate
  std::string flamegraph_;
  std::string color_name_;  // empty: offcpu for an off-CPU recording, else name
  std::string track_name_;  // empty: PageTimeline's default
  uint64_t min_samples_ = 10;
  std::string roots_name_ = "none";
  bool no_timeline_ = false;
  bool icicle_ = false;
};

}  // namespace

std::unique_ptr<Subcommand> MakeReportCommand() { return std::make_unique<ReportCommand>(); }

}  // namespace tprof
