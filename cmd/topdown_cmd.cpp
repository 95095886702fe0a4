// tprof topdown: top-down metrics from counted events, live or from saved counts.
#include <linux/perf_event.h>

#include <fstream>
#include <iostream>
#include <sstream>

#include "cmd/cli_support.h"
#include "core/counter_report.h"
#include "pmu/metric_table.h"
#include "pmu/perf_event.h"
#include "pmu/topdown_evaluator.h"
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
    return ReportError(name(),
                       "live counting is not implemented yet in this build; count with "
                       "perf stat -x, and evaluate with --cpu NAME --input FILE");
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
  std::vector<std::string> command_;
};

}  // namespace

std::unique_ptr<Subcommand> MakeTopdownCommand() { return std::make_unique<TopdownCommand>(); }

}  // namespace tprof
