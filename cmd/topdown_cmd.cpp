// tprof topdown: top-down metrics from counted events, live or from saved counts.
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cmd/cli_support.h"
#include "core/counter_report.h"
#include "pmu/counting_session.h"
#include "pmu/group_scheduler.h"
#include "pmu/host_info.h"
#include "pmu/metric_table.h"
#include "pmu/perf_event.h"
#include "pmu/topdown_evaluator.h"
#include "pmu/workload.h"
#include "report/topdown_report.h"

namespace tprof {
namespace {

class TopdownCommand : public Subcommand {
 public:
  const char* name() const override { return "topdown"; }
  const char* summary() const override { return "Top-down microarchitecture analysis"; }

  void Setup(CLI::App& app) override {
    app.description(
        "Top-down analysis: where the pipeline's slots go (frontend bound, backend bound,\n"
        "bad speculation, retiring) and the metric groups of the CPU's table.\n"
        "  tprof topdown -M l1 -- ./prog args            (live; needs a hardware PMU)\n"
        "  tprof topdown --cpu neoverse-n2 --input stat.csv -M l1,Cache\n"
        "--input takes perf stat -x, (CSV) or -j (JSON) output or tprof's saved counts; a group "
        "is\n"
        "a run of consecutive rows with the same run time and running percentage, and each metric\n"
        "is evaluated inside the group that counted all its events. 'tprof list cpus' and\n"
        "'tprof list metrics --cpu NAME' show the built-in tables.");
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
    app.add_option("command", command_, "The command to measure (live), after --");
    app.prefix_command();
  }

  int Run() override {
    if (input_.empty()) return RunLive();
    std::vector<MetricTable> spec_tables;
    const MetricTable* table = nullptr;
    if (!spec_.empty()) {
      auto loaded = LoadArmTelemetrySpec(spec_);
      if (!loaded.ok()) return ReportError(name(), loaded.error().message());
      spec_tables.push_back(std::move(loaded).value());
      table = &spec_tables[0];
    } else {
      if (cpu_.empty())
        return Usage("--input needs --cpu NAME (or --spec FILE); see 'tprof list cpus'");
      auto found = FindMetricTable(cpu_, BuiltinMetricTables());
      if (!found.ok()) return Usage(found.error().message());
      table = found.value();
    }
    auto selected = table->Select(selection_);
    if (!selected.ok()) return Usage(selected.error().message());
    std::ifstream in(input_);
    if (!in) return ReportError(name(), "cannot read " + input_);
    std::stringstream text;
    text << in.rdbuf();
    auto counts = ParseCounterReport(text.str());
    if (!counts.ok()) return ReportError(name(), input_ + ": " + counts.error().message());
    auto results = EvaluateMetrics(*table, selected.value(), counts.value());
    if (!results.ok()) return ReportError(name(), results.error().message());
    RenderTopdown(*table, counts->format + " " + input_, results.value(),
                  json_  ? TopdownFormat::kJson
                  : csv_ ? TopdownFormat::kCsv
                         : TopdownFormat::kText,
                  std::cout);
    return kExitOk;
  }

 private:
  int RunLive() {
    if (command_.empty()) return Usage("give a command after --, or --input FILE with --cpu NAME");
    // Top-down needs the core PMU; find out in one try whether this machine has one.
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
        return ReportError(name(),
                           "this machine has no hardware PMU (typical of a virtual machine), so "
                           "nothing can be counted live; evaluate saved counts with --cpu NAME "
                           "--input FILE");
      return ReportError(name(), probe.error().message());
    }
    const MetricTable* table = nullptr;
    auto found = cpu_.empty() ? TableForCpu(DetectCpu(), BuiltinMetricTables())
                              : FindMetricTable(cpu_, BuiltinMetricTables());
    if (!found.ok()) return ReportError(name(), found.error().message());
    table = found.value();
    auto selected = table->Select(selection_);
    if (!selected.ok()) return Usage(selected.error().message());
    uint32_t counters = CountGeneralCounters(*table);
    auto schedule = ScheduleGroups(*table, selected.value(), counters);
    if (!schedule.ok()) return ReportError(name(), schedule.error().message());
    std::vector<std::vector<CountedEvent>> groups;
    for (const ScheduledGroup& g : schedule.value()) {
      std::vector<CountedEvent> events;
      for (const std::string& e : g.events)
        events.push_back({e, PERF_TYPE_RAW, table->FindEvent(e)->code});
      groups.push_back(std::move(events));
    }
    auto workload = Workload::Create(command_);
    if (!workload.ok()) return ReportError(name(), workload.error().message());
    auto session = CountingSession::Open(groups, workload->pid(), -1, /*enable_on_exec=*/true);
    if (!session.ok()) return ReportError(name(), session.error().message());
    Status started = workload->Start();
    if (!started.ok()) return ReportError(name(), started.error().message());
    auto status = workload->Wait();
    if (!status.ok()) return ReportError(name(), status.error().message());
    auto counts = session->Read();
    if (!counts.ok()) return ReportError(name(), counts.error().message());
    if (!output_.empty()) {
      std::ofstream out(output_);
      out << SaveTprofCounts(counts.value());
      if (!out) return ReportError(name(), "cannot write " + output_);
    }
    auto results = EvaluateMetrics(*table, selected.value(), counts.value());
    if (!results.ok()) return ReportError(name(), results.error().message());
    RenderTopdown(*table,
                  "counted live in " + std::to_string(groups.size()) + " groups of at most " +
                      std::to_string(counters) + " general-purpose counters",
                  results.value(), Format(), std::cout);
    return kExitOk;
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

  int Usage(const std::string& message) {
    std::cerr << "tprof topdown: " << message << '\n';
    return kExitUsage;
  }

  std::string selection_ = "l1";
  std::string cpu_;
  std::string input_;
  std::string spec_;
  bool json_ = false;
  bool csv_ = false;
  std::string output_;
  std::vector<std::string> command_;
};

}  // namespace

std::unique_ptr<Subcommand> MakeTopdownCommand() { return std::make_unique<TopdownCommand>(); }

}  // namespace tprof
