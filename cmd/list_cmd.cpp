// tprof list: what tprof knows: CPUs with metric tables, their metrics, generic events.
#include <iostream>

#include "cmd/cli_support.h"
#include "core/metrics/metric_table.h"
#include "pmu/event_spec.h"

namespace tprof {
namespace {

class ListCommand : public Subcommand {
 public:
  const char* name() const override { return "list"; }
  const char* summary() const override { return "List CPUs with metric tables, metrics, events"; }

  void Setup(CLI::App& app) override {
    app.description(
        "List what tprof knows: the CPUs it has metric tables for, a table's metrics, and the\n"
        "generic event names.\n"
        "  tprof list cpus | metrics --cpu NAME | events\n"
        "Examples:\n"
        "  tprof list cpus                          the CPUs with a metric table\n"
        "  tprof list metrics --cpu neoverse-n2     a table's metrics, groups and formulas\n"
        "  tprof list metrics --cpu 0x410fd490      the same, by the CPU's MIDR\n"
        "  tprof list events                        generic event names");
    app.add_option("what", what_, "cpus, metrics or events")
        ->check(CLI::IsMember({"cpus", "metrics", "events"}));
    app.add_option("--cpu", cpu_, "CPU name or Arm MIDR, for 'metrics'");
  }

  int Run() override {
    if (what_.empty()) {
      return UsageError(name(), "say what to list: cpus, metrics --cpu NAME, or events");
    }
    if (what_ == "cpus") {
      for (const MetricTable& t : BuiltinMetricTables())
        std::cout << t.name << "\t" << t.title << "\t(" << t.source << ")\n";
      return kExitOk;
    }
    if (what_ == "events") {
      for (const std::string& e : KnownEventNames()) std::cout << e << '\n';
      return kExitOk;
    }
    if (cpu_.empty()) {
      return UsageError(name(), "'metrics' needs --cpu NAME; 'tprof list cpus' lists them");
    }
    auto table = FindMetricTable(cpu_, BuiltinMetricTables());
    if (!table.ok()) return UsageError(name(), table.error().message());
    for (const Metric& m : table.value()->metrics) {
      std::string groups;
      for (const std::string& g : m.groups) groups += (groups.empty() ? "" : ",") + g;
      std::cout << m.name << "\t[" << groups << "]\t" << m.unit << "\t" << m.formula << '\n';
    }
    return kExitOk;
  }

 private:
  std::string what_;
  std::string cpu_;
};

}  // namespace

std::unique_ptr<Subcommand> MakeListCommand() { return std::make_unique<ListCommand>(); }

}  // namespace tprof
