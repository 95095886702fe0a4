// tprof topdown: top-down metrics from counted events, live or from saved counts.
#include <cstdlib>
#include <iostream>
#include <optional>

#include "cmd/cli_support.h"
#include "core/metrics/metric_table.h"
#include "pmu/host_info.h"
#include "pmu/pmu_probe.h"
#include "pmu/proc_scanner.h"
#include "views/topdown.h"

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
        "Examples:\n"
        "  tprof topdown -M l1 -- ./prog                  level 1 of this CPU's table, live\n"
        "  tprof topdown -a --duration 10 -I 1000         every CPU for 10 s, a line a second\n"
        "  tprof topdown -p 1234 -M l1,Cache -o c.txt     a process; the counts saved too\n"
        "  tprof topdown --cpu neoverse-n2 --input stat.csv --csv   perf stat -x, counts\n"
        "\n"
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
    AddMachineFormatOptions(app, json_, &csv_, "");
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
    Status written =
        WriteSavedTopdown({table, selected.value(), selection_, input_, Format()}, std::cout);
    if (!written.ok()) return ReportError(name(), written.error());
    return kExitOk;
  }

 private:
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

  int RunLive() {
    // The command line first: its errors are usage errors on any machine.
    LiveTopdownRequest request;
    if (int status = CheckLiveRequest(&request.run.interval_ns, &request.run.pids);
        status != kExitOk)
      return status;
    // Top-down needs the core PMU: found out in one try whether this machine has one.
    if (Status pmu = ProbeCorePmu(); !pmu.ok()) return ReportError(name(), pmu.error());
    auto found = ChooseTable();
    if (!found.ok()) return ReportError(name(), found.error());
    request.table = found.value();
    auto selected = request.table->Select(selection_);
    if (!selected.ok()) return Usage(selected.error().message());
    request.selected = std::move(selected).value();
    request.run.command = command_;
    request.run.system_wide = system_wide_;
    request.run.duration_seconds = duration_;
    request.pids = pids_;
    request.output = output_;
    request.summary = summary_;
    request.format = Format();
    Status written = WriteLiveTopdown(request, std::cout, CommandMessages(name()));
    return written.ok() ? kExitOk : ReportError(name(), written.error());
  }

  TopdownFormat Format() const {
    return json_ ? TopdownFormat::kJson : csv_ ? TopdownFormat::kCsv : TopdownFormat::kText;
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
