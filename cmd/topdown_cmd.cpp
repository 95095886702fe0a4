// tprof topdown: top-down metrics from counted events, live or from saved counts.
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "cmd/cli_support.h"
#include "core/format/saved_counts.h"
#include "core/metrics/group_scheduler.h"
#include "core/metrics/metric_table.h"
#include "core/metrics/topdown_evaluator.h"
#include "core/model/counter_report.h"
#include "core/source/counter_report_source.h"
#include "pmu/counting_run.h"
#include "pmu/counting_session.h"
#include "pmu/host_info.h"
#include "pmu/perf_event.h"
#include "pmu/proc_scanner.h"
#include "report/topdown_report.h"

namespace tprof {
namespace {

class TopdownCommand : public Subcommand {
 public:
  const char* name() const override { return "topdown"; }
  const char* summary() const override { return "Top-down microarchitecture analysis"; }

  void Setup(CLI::App& app) override {
    app_ = &app;
    app.description(
        "Top-down analysis: where the pipeline's slots go (frontend bound, backend bound,\n"
        "bad speculation, retiring) and the metric groups of the CPU's table.\n"
        "  tprof topdown -M l1 -- ./prog args            (live; needs a hardware PMU)\n"
        "  tprof topdown -p PID[,PID...] | -a [-- ./prog]  [--duration S] [-I MS [--summary]]\n"
        "  tprof topdown --cpu neoverse-n2 --input stat.csv -M l1,Cache\n"
        "--input takes perf stat -x, (CSV) or -j (JSON) output or tprof's saved counts; a group "
        "is\n"
        "a run of consecutive rows with the same run time and running percentage, and each metric\n"
        "is evaluated inside the group that counted all its events. Where no one group did (the\n"
        "scheduler split them), each event comes from the group that counted it longest, as perf\n"
        "does: such a value is marked * (text; cross_group in CSV and JSON) and may be less "
        "exact,\n"
        "since its counts cover different time slices. A metric with an event counted nowhere is\n"
        "n/a and names it. 'tprof list cpus' and 'tprof list metrics --cpu NAME' show the tables.\n"
        "Live: -p counts every thread of running processes (threads they start later too) and\n"
        "-a every CPU (with a command: while it runs), until the processes or the command exit,\n"
        "--duration passes or Ctrl-C (which prints what was counted and exits 0). Counts are\n"
        "summed over threads or CPUs and scaled by time_enabled / time_running. -I MS prints\n"
        "the metrics of each interval, evaluated on that interval's deltas, each row stamped\n"
        "with the seconds since the start (text: first column; --csv: a 'time' column; --json:\n"
        "one JSON object per interval and line, JSON Lines, {\"interval\": seconds, \"cpu\",\n"
        "\"input\", \"metrics\": [...]}); the last interval is the partial one at the end. As\n"
        "perf stat -I, no whole-run summary unless --summary (JSON: a last line with\n"
        "\"summary\": true).");
    app.add_option("-M,--metrics", selection_,
                   "Levels (l1) or metric groups, comma-separated (default l1)");
    app.add_option("--cpu", cpu_,
                   "CPU name (neoverse-n2, neoverse-n2-r0p3, ...) or Arm MIDR (0x410fd490)");
    app.add_option("--input", input_, "Evaluate saved counts instead of counting live");
    app.add_option("--spec", spec_,
                   "An Arm telemetry specification (JSON) to take the metrics from");
    auto* json = app.add_flag("--json", json_, "JSON output");
    app.add_flag("--csv", csv_, "CSV output")->excludes(json);
    app.add_option("-o,--output", output_, "Live: also save the counts (read back with --input)");
    auto* pids = app.add_option("-p,--pid", pids_,
                                "Live: count running processes, PID[,PID...] (every thread; "
                                "until they exit, Ctrl-C or --duration)");
    auto* all = app.add_flag("-a,--all-cpus", system_wide_,
                             "Live: count every CPU (system-wide; needs root or "
                             "kernel.perf_event_paranoid <= 0)");
    pids->excludes(all);
    app.add_option("--duration", duration_,
                   "Live: stop after SECONDS (a launched command gets SIGTERM)");
    app.add_option("-I,--interval-print", interval_,
                   "Live: print the metrics of every MS milliseconds (>= 10), from that "
                   "interval's counts; the last line covers the partial interval at the end");
    app.add_flag("--summary", summary_,
                 "With -I: also print the metrics over the whole run at the end (as perf stat "
                 "-I --summary; without it, only the intervals)");
    app.add_option("command", command_, "The command to measure (live), after --");
    app.prefix_command();
  }

  int Run() override {
    if (int status = CheckArgumentsBeforeCommand(*app_, command_); status != kExitOk) return status;
    if (input_.empty()) return RunLive();
    if (!command_.empty() || !pids_.empty() || system_wide_ || !interval_.empty() || duration_ > 0)
      return Usage("--input evaluates saved counts: a command, -p, -a, -I and --duration are live");
    if (spec_.empty() && cpu_.empty())
      return Usage("--input needs --cpu NAME (or --spec FILE); see 'tprof list cpus'");
    auto chosen = ChooseTable();
    if (!chosen.ok())  // an unreadable spec is a runtime error, an unknown CPU a usage error
      return spec_.empty() ? Usage(chosen.error().message()) : ReportError(name(), chosen.error());
    const MetricTable* table = chosen.value();
    auto selected = table->Select(selection_);
    if (!selected.ok()) return Usage(selected.error().message());
    std::ifstream in(input_);
    if (!in) return ReportError(name(), "cannot read " + input_ + ": " + std::strerror(errno));
    std::stringstream text;
    text << in.rdbuf();
    auto counts = ParseCounterReport(text.str());
    if (!counts.ok()) return ReportError(name(), counts.error().WithContext(input_));
    auto results = EvaluateMetrics(*table, selected.value(), counts.value());
    if (!results.ok()) return ReportError(name(), results.error());
    // Counts of another CPU: a table of n/a would read as "nothing to see". Say so, and which
    // tables the counts do fit.
    if (std::none_of(results->begin(), results->end(),
                     [](const MetricResult& r) { return r.value.has_value(); }))
      return ReportError(name(), input_ + ": none of the " + table->name +
                                     " table's metrics can be evaluated from these counts (its "
                                     "events were not counted); " +
                                     TablesThatFit(counts.value()));
    RenderTopdown(*table, counts->format + " " + input_, results.value(),
                  json_  ? TopdownFormat::kJson
                  : csv_ ? TopdownFormat::kCsv
                         : TopdownFormat::kText,
                  std::cout);
    return kExitOk;
  }

 private:
  // The built-in tables that evaluate at least one selected metric from `counts`, those that
  // evaluate most first: what --cpu could have named.
  std::string TablesThatFit(const CounterReport& counts) const {
    std::vector<std::pair<size_t, std::string>> fits;
    for (const MetricTable& t : BuiltinMetricTables()) {
      auto selected = t.Select(selection_);
      if (!selected.ok()) continue;
      auto results = EvaluateMetrics(t, selected.value(), counts);
      if (!results.ok()) continue;
      const size_t evaluated = static_cast<size_t>(
          std::count_if(results->begin(), results->end(),
                        [](const MetricResult& r) { return r.value.has_value(); }));
      if (evaluated) fits.emplace_back(evaluated, t.name);
    }
    if (fits.empty()) return "no built-in table fits them ('tprof list cpus')";
    std::stable_sort(fits.begin(), fits.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    std::string names;
    for (const auto& [evaluated, table_name] : fits)
      names += (names.empty() ? "" : ", ") + table_name;
    return "tables that fit them: " + names + " (--cpu NAME)";
  }

  // The metrics: from --spec, else the table named by --cpu, else the detected CPU's (the arm
  // lab found --spec ignored when counting live).
  Result<const MetricTable*> ChooseTable() {
    if (!spec_.empty()) {
      auto loaded = LoadArmTelemetrySpec(spec_);
      if (!loaded.ok()) return loaded.error();
      spec_table_ = std::move(loaded).value();
      return &*spec_table_;
    }
    return cpu_.empty() ? TableForCpu(DetectCpu(), BuiltinMetricTables())
                        : FindMetricTable(cpu_, BuiltinMetricTables());
  }

  // -I, --summary, --duration, -p and the command, checked; the interval and the pids read.
  int CheckLiveRequest(uint64_t* interval_ns, std::vector<pid_t>* pids) {
    if (command_.empty() && pids_.empty() && !system_wide_)
      return Usage("give a command after --, -p PID or -a (or --input FILE with --cpu NAME)");
    if (!command_.empty() && !pids_.empty()) return Usage("give either a command or -p, not both");
    if (!interval_.empty()) {
      char* end = nullptr;
      double ms = std::strtod(interval_.c_str(), &end);
      if (end == interval_.c_str() || *end != '\0' || !(ms >= 10) || ms > 1e9)
        return Usage("-I needs a number of milliseconds, at least 10 (got '" + interval_ + "')");
      *interval_ns = static_cast<uint64_t>(ms * 1e6);
    }
    if (summary_ && *interval_ns == 0) return Usage("--summary goes with -I");
    if (!(duration_ >= 0)) return Usage("--duration must be positive");
    if (!pids_.empty()) {
      auto parsed = ParseIdList(pids_, "pid");
      if (!parsed.ok()) return Usage(parsed.error().message());
      *pids = parsed.value();
      for (pid_t pid : *pids) {
        auto threads = ListThreads(pid);
        if (!threads.ok()) return ReportError(name(), threads.error());
      }
    }
    return kExitOk;
  }

  // Top-down needs the core PMU; find out in one try whether this machine has one.
  static Status ProbeCorePmu() {
    perf_event_attr attr{};
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_HARDWARE;
    attr.config = PERF_COUNT_HW_CPU_CYCLES;
    attr.disabled = 1;
    attr.exclude_kernel = 1;
    int error_number = 0;
    auto probe = OpenPerfEvent(attr, 0, -1, -1, "cycles", &error_number);
    if (!probe.ok()) {
      if (error_number == ENOENT || error_number == ENODEV || error_number == EOPNOTSUPP)
        return Error(
            "this machine has no hardware PMU (typical of a virtual machine), so "
            "nothing can be counted live; evaluate saved counts with --cpu NAME --input FILE");
      return probe.error();
    }
    return Status::Ok();
  }

  // Each scheduled group's events, with their raw codes from the table.
  static std::vector<std::vector<CountedEvent>> CountedGroups(
      const MetricTable& table, const std::vector<ScheduledGroup>& schedule) {
    std::vector<std::vector<CountedEvent>> groups;
    for (const ScheduledGroup& g : schedule) {
      std::vector<CountedEvent> events;
      for (const std::string& e : g.events)
        events.push_back({e, PERF_TYPE_RAW, table.FindEvent(e)->code});
      groups.push_back(std::move(events));
    }

    return groups;
  }

  int RunLive() {
    // The command line first: its errors are usage errors on any machine.
    uint64_t interval_ns = 0;
    std::vector<pid_t> pids;
    if (int status = CheckLiveRequest(&interval_ns, &pids); status != kExitOk) return status;
    if (Status pmu = ProbeCorePmu(); !pmu.ok()) return ReportError(name(), pmu.error());
    auto found = ChooseTable();
    if (!found.ok()) return ReportError(name(), found.error());
    const MetricTable* table = found.value();
    auto selected = table->Select(selection_);
    if (!selected.ok()) return Usage(selected.error().message());
    uint32_t counters = CountGeneralCounters(*table);
    auto schedule = ScheduleGroups(*table, selected.value(), counters);
    if (!schedule.ok()) return ReportError(name(), schedule.error());
    const std::vector<std::vector<CountedEvent>> groups = CountedGroups(*table, *schedule);
    CountingRunOptions run;
    run.command = command_;
    run.pids = pids;
    run.system_wide = system_wide_;
    run.duration_seconds = duration_;
    run.interval_ns = interval_ns;
    const std::string groups_note = " in " + std::to_string(groups.size()) + " groups of at most " +
                                    std::to_string(counters) + " general-purpose counters";
    // With -I every interval is evaluated on its own deltas as it ends.
    std::optional<TopdownIntervalWriter> writer;
    auto print_interval = [&](double seconds, const CounterReport& delta) -> Status {
      auto results = EvaluateMetrics(*table, selected.value(), delta);
      if (!results.ok()) return results.error();
      writer->Interval(seconds, results.value());
      return Status::Ok();
    };
    if (interval_ns) {
      const std::string target = system_wide_   ? "every CPU"
                                 : pids.empty() ? "the command"
                                                : "every thread of pid " + pids_;
      writer.emplace(*table, "counted live on " + target + groups_note, Format(), std::cout);
    }
    auto counted = RunCounting(groups, run, print_interval);
    if (!counted.ok()) return ReportError(name(), counted.error());
    for (const std::string& note : counted->notes) Note(name(), note);
    const std::string description = "counted live on " + counted->target +
                                    (counted->user_space_only ? " (user space only)" : "") +
                                    groups_note + EndNote(counted->end, counted->elapsed_ns);
    if (!output_.empty()) {
      std::ofstream out(output_);
      out << SaveTprofCounts(counted->total);
      if (!out) return ReportError(name(), "cannot write " + output_);
    }
    if (interval_ns && !summary_) return kExitOk;  // as perf stat -I: the intervals only
    auto results = EvaluateMetrics(*table, selected.value(), counted->total);
    if (!results.ok()) return ReportError(name(), results.error());
    if (writer)
      writer->Summary(results.value());
    else
      RenderTopdown(*table, description, results.value(), Format(), std::cout);
    return kExitOk;
  }

  static std::string EndNote(CountingEnd end, uint64_t elapsed_ns) {
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%.2f s", static_cast<double>(elapsed_ns) * 1e-9);
    switch (end) {
      case CountingEnd::kTargetExited:
        return std::string(", ") + seconds;
      case CountingEnd::kDuration:
        return std::string(", ") + seconds + " (--duration)";
      case CountingEnd::kInterrupted:
        return std::string(", ") + seconds + " (interrupted)";
    }
    return "";
  }

  TopdownFormat Format() const {
    return json_ ? TopdownFormat::kJson : csv_ ? TopdownFormat::kCsv : TopdownFormat::kText;
  }

  // Learns how many general-purpose counters the PMU has by trying, as perf and Arm's tool do:
  // a group bigger than the PMU opens but never runs.
  static uint32_t CountGeneralCounters(const MetricTable& table) {
    const MetricEvent* general = nullptr;
    for (const MetricEvent& e : table.events)
      if (std::find(table.fixed_events.begin(), table.fixed_events.end(), e.name) ==
          table.fixed_events.end()) {
        general = &e;
        break;
      }
    if (!general) return 0;
    uint32_t fits = 0;
    for (uint32_t k = 1; k <= 12; ++k) {
      std::vector<PerfEventFd> fds;
      bool opened = true;
      for (uint32_t i = 0; i < k && opened; ++i) {
        perf_event_attr attr{};
        attr.size = sizeof attr;
        attr.type = PERF_TYPE_RAW;
        attr.config = general->code;
        attr.disabled = i == 0;
        attr.exclude_kernel = 1;
        attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
        auto fd = OpenPerfEvent(attr, 0, -1, fds.empty() ? -1 : fds[0].get(), general->name);
        opened = fd.ok();
        if (opened) fds.push_back(std::move(fd).value());
      }
      if (!opened) break;
      ioctl(fds[0].get(), PERF_EVENT_IOC_ENABLE, 0);
      volatile uint64_t spin = 0;
      for (int i = 0; i < 1000000; ++i) spin = spin + static_cast<uint64_t>(i);
      ioctl(fds[0].get(), PERF_EVENT_IOC_DISABLE, 0);
      uint64_t values[3] = {};
      if (read(fds[0].get(), values, sizeof values) != sizeof values || values[2] == 0) break;
      fits = k;
    }
    return fits;
  }

  int Usage(const std::string& message) { return UsageError(name(), message); }

  std::string selection_ = "l1";
  std::string cpu_;
  std::string input_;
  std::string spec_;
  std::optional<MetricTable> spec_table_;  // loaded from spec_
  bool json_ = false;
  bool csv_ = false;
  std::string output_;
  std::vector<std::string> command_;
  const CLI::App* app_ = nullptr;
  std::string pids_;
  bool system_wide_ = false;
  double duration_ = 0;
  std::string interval_;
  bool summary_ = false;
};

}  // namespace

std::unique_ptr<Subcommand> MakeTopdownCommand() { return std::make_unique<TopdownCommand>(); }

}  // namespace tprof
