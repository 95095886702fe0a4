// Top-down evaluation on counts built from the formulas' definitions (shared/reference/topdown.md),
// worked out by hand in the comments, never taken from tprof's output.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/metrics/metric_table.h"
#include "core/metrics/topdown_evaluator.h"
#include "core/model/counter_report.h"
#include "core/source/counter_report_source.h"

namespace tprof {
namespace {

const std::string kReference = TPROF_REFERENCE_DIR;
const std::string kSource = TPROF_SOURCE_DIR;

// One group per map, as perf stat -x, prints it: value,unit,event,run_time,percent.
std::string Csv(const std::vector<std::pair<std::map<std::string, double>, double>>& groups) {
  std::string out;
  uint64_t run_time = 1000000;
  for (const auto& [counts, percent] : groups) {
    for (const auto& [event, value] : counts)
      out += std::to_string(value) + ",," + event + "," + std::to_string(run_time) + "," +
             std::to_string(percent) + ",,\n";
    run_time += 1000;  // distinct run times keep the groups apart
  }
  return out;
}

// Every metric's result, by name.
std::map<std::string, MetricResult> EvaluateResults(const std::string& cpu, const std::string& csv,
                                                    const std::string& selection = "l1") {
  auto table = FindMetricTable(cpu, BuiltinMetricTables());
  EXPECT_TRUE(table.ok()) << (table.ok() ? "" : table.error().message());
  auto counts = ParseCounterReport(csv);
  EXPECT_TRUE(counts.ok()) << (counts.ok() ? "" : counts.error().message());
  auto metrics = table.value()->Select(selection);
  EXPECT_TRUE(metrics.ok());
  auto results = EvaluateMetrics(*table.value(), metrics.value(), counts.value());
  EXPECT_TRUE(results.ok());
  std::map<std::string, MetricResult> out;
  for (const MetricResult& r : results.value()) out[r.metric->name] = r;
  return out;
}

std::map<std::string, std::optional<double>> Evaluate(const std::string& cpu,
                                                      const std::string& csv,
                                                      const std::string& selection = "l1") {
  std::map<std::string, std::optional<double>> out;
  for (const auto& [name, r] : EvaluateResults(cpu, csv, selection)) out[name] = r.value;
  return out;
}

// The three groups perf 6.2 schedules for Arm level 1.
std::string ArmLevelOneCounts(double cycles, double fe, double be, double stall, double retired,
                              double spec) {
  return Csv(
      {{{{"CPU_CYCLES", cycles}, {"STALL_SLOT", stall}, {"OP_SPEC", spec}, {"OP_RETIRED", retired}},
        100},
       {{{"CPU_CYCLES", cycles}, {"STALL_SLOT_FRONTEND", fe}}, 100},
       {{{"CPU_CYCLES", cycles}, {"STALL_SLOT_BACKEND", be}}, 100}});
}

// N2 r0p0-r0p2, 5 slots, erratum: cycles 1000, FE 1500, BE 2000, STALL_SLOT 3000, OP 1800/2000:
// frontend (1500-1000)/5000 = 10%; backend 2000/5000 = 40%; used = 1 - (3000-1000)/5000 = 0.6;
// retiring 0.9 * 0.6 = 54%; bad speculation 0.1 * 0.6 = 6%.
TEST(TopdownTest, NeoverseN2WithTheErratumCorrection) {
  auto m = Evaluate("neoverse-n2", ArmLevelOneCounts(1000, 1500, 2000, 3000, 1800, 2000));
  EXPECT_NEAR(*m["frontend_bound"], 10, 1e-9);
  EXPECT_NEAR(*m["backend_bound"], 40, 1e-9);
  EXPECT_NEAR(*m["retiring"], 54, 1e-9);
  EXPECT_NEAR(*m["bad_speculation"], 6, 1e-9);
}

// r0p3, no correction, same counts: frontend 1500/5000 = 30%; used = 1 - 3000/5000 = 0.4;
// retiring 0.9 * 0.4 = 36%; bad speculation 0.1 * 0.4 = 4%.
TEST(TopdownTest, NeoverseN2R0p3WithoutTheCorrection) {
  auto m = Evaluate("neoverse-n2-r0p3", ArmLevelOneCounts(1000, 1500, 2000, 3000, 1800, 2000));
  EXPECT_NEAR(*m["frontend_bound"], 30, 1e-9);
  EXPECT_NEAR(*m["backend_bound"], 40, 1e-9);
  EXPECT_NEAR(*m["retiring"], 36, 1e-9);
  EXPECT_NEAR(*m["bad_speculation"], 4, 1e-9);
}

// V1 and V2, 8 slots: cycles 1000, FE 2000 -> 25%, BE 4000 -> 50%, STALL_SLOT 6000 -> used 0.25,
// OP 900/1000: retiring 22.5%, bad speculation 2.5%.
TEST(TopdownTest, NeoverseV1AndV2UseEightSlots) {
  for (const char* cpu : {"neoverse-v1", "neoverse-v2"}) {
    auto m = Evaluate(cpu, ArmLevelOneCounts(1000, 2000, 4000, 6000, 900, 1000));
    EXPECT_NEAR(*m["frontend_bound"], 25, 1e-9) << cpu;
    EXPECT_NEAR(*m["backend_bound"], 50, 1e-9) << cpu;
    EXPECT_NEAR(*m["retiring"], 22.5, 1e-9) << cpu;
    EXPECT_NEAR(*m["bad_speculation"], 2.5, 1e-9) << cpu;
  }
}

// N1 has no slot events: stage 1 is cycle accounting, 300/1000 and 450/1000.
TEST(TopdownTest, NeoverseN1CycleAccounting) {
  auto m = Evaluate(
      "neoverse-n1",
      Csv({{{{"CPU_CYCLES", 1000}, {"STALL_FRONTEND", 300}, {"STALL_BACKEND", 450}}, 100}}));
  EXPECT_NEAR(*m["frontend_stalled_cycles"], 30, 1e-9);
  EXPECT_NEAR(*m["backend_stalled_cycles"], 45, 1e-9);
}

// perf 6.2's N2 groups: L1D_TLB_REFILL 50 of L1D_TLB 1000 = 5%; DTLB_WALK 20 per 10000
// instructions = 2 MPKI; BR_MIS_PRED_RETIRED 30 of BR_RETIRED 600 = 5%; LD_SPEC 250 of INST_SPEC
// 1000 = 25%; OP 800/1000: wasted 20%.
TEST(TopdownTest, NeoverseN2MetricGroups) {
  std::string csv = Csv({{{{"L1D_TLB_REFILL", 50},
                           {"L1D_TLB", 1000},
                           {"DTLB_WALK", 20},
                           {"INST_RETIRED", 10000},
                           {"BR_MIS_PRED_RETIRED", 30},
                           {"BR_RETIRED", 600},
                           {"LD_SPEC", 250},
                           {"INST_SPEC", 1000},
                           {"OP_RETIRED", 800},
                           {"OP_SPEC", 1000}},
                          100}});
  auto m = Evaluate("neoverse-n2", csv, "TLB,Branch,InstructionMix,PEutilization");
  EXPECT_NEAR(*m["l1d_tlb_miss_rate"], 5, 1e-9);
  EXPECT_NEAR(*m["dtlb_mpki"], 2, 1e-9);
  EXPECT_NEAR(*m["branch_miss_pred_rate"], 5, 1e-9);
  EXPECT_NEAR(*m["load_spec_rate"], 25, 1e-9);
  EXPECT_NEAR(*m["wasted_rate"], 20, 1e-9);
  EXPECT_FALSE(m["l1i_tlb_miss_rate"].has_value());  // L1I_TLB was not counted
}

// Each metric uses the cycles of its own group: the backend group counted 999 cycles while
// multiplexed at 25%, so backend = 2000 / (5 * 999).
TEST(TopdownTest, EachMetricUsesItsOwnGroupAndReportsItsRunningShare) {
  std::string csv = Csv(
      {{{{"CPU_CYCLES", 1000}, {"STALL_SLOT", 3000}, {"OP_SPEC", 2000}, {"OP_RETIRED", 1800}}, 50},
       {{{"CPU_CYCLES", 1000}, {"STALL_SLOT_FRONTEND", 1500}}, 100},
       {{{"CPU_CYCLES", 999}, {"STALL_SLOT_BACKEND", 2000}}, 25}});
  auto table = FindMetricTable("neoverse-n2", BuiltinMetricTables()).value();
  auto results =
      EvaluateMetrics(*table, table->Select("l1").value(), ParseCounterReport(csv).value());
  ASSERT_TRUE(results.ok());
  for (const MetricResult& r : results.value()) {
    if (r.metric->name == "backend_bound") {
      EXPECT_NEAR(*r.value, 100.0 * 2000 / (5 * 999), 1e-9);
      EXPECT_DOUBLE_EQ(r.running_percent, 25);
    }
    if (r.metric->name == "retiring") {
      EXPECT_DOUBLE_EQ(r.running_percent, 50);
    }
  }
}

TEST(TopdownTest, AGroupThatNeverRanAndZeroDenominatorsAreNotAvailable) {
  std::string csv =
      "1000,,CPU_CYCLES,5000,100.00,,\n1500,,STALL_SLOT_FRONTEND,5000,100.00,,\n"
      "<not counted>,,CPU_CYCLES,0,0.00,,\n<not counted>,,STALL_SLOT_BACKEND,0,0.00,,\n"
      "0,,CPU_CYCLES,7000,100.00,,\n5,,STALL_SLOT,7000,100.00,,\n0,,OP_SPEC,7000,100.00,,\n"
      "0,,OP_RETIRED,7000,100.00,,\n";
  auto m = Evaluate("neoverse-n2", csv);
  EXPECT_NEAR(*m["frontend_bound"], 10, 1e-9);
  EXPECT_FALSE(m["backend_bound"].has_value());
  EXPECT_FALSE(m["retiring"].has_value());
  EXPECT_FALSE(m["bad_speculation"].has_value());
}

TEST(TopdownTest, PerfJsonAndCsvGiveTheSameValues) {
  std::string csv = ArmLevelOneCounts(1000, 1500, 2000, 3000, 1800, 2000);
  std::string json;
  std::stringstream lines(csv);
  std::string line;
  while (std::getline(lines, line)) {
    std::vector<std::string> f;
    std::stringstream in(line);
    std::string x;
    while (std::getline(in, x, ',')) f.push_back(x);
    json += nlohmann::json{{"counter-value", f[0]},
                           {"unit", ""},
                           {"event", f[2]},
                           {"event-runtime", std::stoull(f[3])},
                           {"pcnt-running", std::stod(f[4])}}
                .dump() +
            "\n";
  }
  EXPECT_EQ(ParseCounterReport(json)->format, "perf stat JSON");
  EXPECT_EQ(Evaluate("neoverse-n2", json), Evaluate("neoverse-n2", csv));
}

TEST(TopdownTest, PmuAndRawEventNamesMapToTheTable) {
  auto table = FindMetricTable("neoverse-n2", BuiltinMetricTables()).value();
  EXPECT_EQ(CanonicalEventName(*table, "armv8_pmuv3_0/cpu_cycles/"), "CPU_CYCLES");
  EXPECT_EQ(CanonicalEventName(*table, "r3D"), "STALL_SLOT_BACKEND");
  EXPECT_EQ(CanonicalEventName(*table, "armv8_pmuv3_0/event=0x3e/"), "STALL_SLOT_FRONTEND");
  EXPECT_EQ(CanonicalEventName(*table, "stall_slot:u"), "STALL_SLOT");
}

TEST(TopdownTest, MidrSelectsTheRevision) {
  auto& tables = BuiltinMetricTables();
  EXPECT_EQ(FindMetricTable("0x410fd490", tables).value()->name, "neoverse-n2");       // r0p0
  EXPECT_EQ(FindMetricTable("0x410fd492", tables).value()->name, "neoverse-n2");       // r0p2
  EXPECT_EQ(FindMetricTable("0x410fd493", tables).value()->name, "neoverse-n2-r0p3");  // r0p3
  EXPECT_EQ(FindMetricTable("0x410fd0c1", tables).value()->name, "neoverse-n1");
  EXPECT_EQ(FindMetricTable("0x411fd401", tables).value()->name, "neoverse-v1");
  EXPECT_EQ(FindMetricTable("0x410fd4f0", tables).value()->name, "neoverse-v2");
  EXPECT_EQ(FindMetricTable("n2", tables).value()->name, "neoverse-n2");
  EXPECT_FALSE(FindMetricTable("0x410fd999", tables).ok());
  EXPECT_FALSE(FindMetricTable("pentium", tables).ok());
}

// Arm's specifications list the event codes; the built-in tables must agree with every one
// they share.
TEST(TopdownTest, BuiltinArmEventCodesMatchArmsSpecifications) {
  for (const char* file :
       {"neoverse-n1.json", "neoverse-n2.json", "neoverse-v1.json", "neoverse-v2.json"}) {
    std::ifstream in(kReference + "/arm-telemetry/" + file);
    ASSERT_TRUE(in) << file;
    auto spec = nlohmann::json::parse(in);
    auto table = FindMetricTable("neoverse-n2", BuiltinMetricTables()).value();
    int checked = 0;
    for (const MetricEvent& e : table->events) {
      if (!spec["events"].contains(e.name)) continue;
      EXPECT_EQ(e.code, std::stoull(spec["events"][e.name]["code"].get<std::string>(), nullptr, 16))
          << file << " " << e.name;
      ++checked;
    }
    EXPECT_GT(checked, 30) << file;
  }
}

// --spec: Arm's newer N2 formulas move mispredict slots to bad speculation. With BR_MIS_PRED 10
// and the counts above: frontend = 100 * ((1500-1000)/5000 - 10/1000) = 9%; backend =
// 100 * (2000/5000 - 30/1000) = 37%; bad speculation = 6% + 100 * 40/1000 = 10%.
TEST(TopdownTest, ArmTelemetrySpecificationFormulas) {
  auto table = LoadArmTelemetrySpec(kReference + "/arm-telemetry/neoverse-n2.json");
  ASSERT_TRUE(table.ok()) << table.error().message();
  EXPECT_EQ(table->slots, 5u);
  std::string csv = Csv({{{{"CPU_CYCLES", 1000},
                           {"STALL_SLOT", 3000},
                           {"OP_SPEC", 2000},
                           {"OP_RETIRED", 1800},
                           {"STALL_SLOT_FRONTEND", 1500},
                           {"STALL_SLOT_BACKEND", 2000},
                           {"BR_MIS_PRED", 10}},
                          100}});
  auto metrics = table->Select("l1");
  ASSERT_TRUE(metrics.ok()) << metrics.error().message();
  auto results = EvaluateMetrics(table.value(), metrics.value(), ParseCounterReport(csv).value());
  ASSERT_TRUE(results.ok());
  std::map<std::string, double> m;
  for (const MetricResult& r : results.value()) m[r.metric->name] = r.value.value_or(-1);
  EXPECT_NEAR(m["frontend_bound"], 9, 1e-9);
  EXPECT_NEAR(m["backend_bound"], 37, 1e-9);
  EXPECT_NEAR(m["retiring"], 54, 1e-9);
  EXPECT_NEAR(m["bad_speculation"], 10, 1e-9);
}

// The built-in tables are the files in core/metrics/tables, each named by its file: a file added
// there but not listed in core/CMakeLists.txt (or listed and missing) fails here.
TEST(MetricTableFiles, EveryFileInTheTablesFolderIsBuiltIn) {
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kSource + "/core/metrics/tables")) {
    ++files;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    auto table = ParseMetricTable(text.str(), entry.path().string());
    ASSERT_TRUE(table.ok()) << table.error().message();
    EXPECT_EQ(table->name, entry.path().stem().string());
    auto built_in = FindMetricTable(table->name, BuiltinMetricTables());
    ASSERT_TRUE(built_in.ok()) << entry.path() << ": not built in";
    EXPECT_EQ(built_in.value()->metrics.size(), table->metrics.size()) << table->name;
    EXPECT_EQ(built_in.value()->events.size(), table->events.size()) << table->name;
  }
  EXPECT_EQ(files, BuiltinMetricTables().size());
}

// The new-CPU recipe (docs/architecture.md) followed once: a table that is a data file only, in
// the built-in tables' shape, found by its MIDR (revisions r0p0-r0p1) and evaluated.
// Counts: cycles 2000, frontend stalls 500, backend stalls 300, instructions 3000:
// frontend 500/2000 = 25%, backend 300/2000 = 15%, IPC 3000/2000 = 1.5.
TEST(MetricTableFiles, ANewCpuIsADataFileEvaluatedAgainstHandWorkedValues) {
  auto table = LoadArmTelemetrySpec(kSource + "/test/data/metric_tables/example-core.json");
  ASSERT_TRUE(table.ok()) << table.error().message();
  std::vector<MetricTable> tables = BuiltinMetricTables();
  tables.push_back(table.value());
  auto found = FindMetricTable("0x410ffff1", tables);  // implementer 0x41, part 0xfff, r0p1
  ASSERT_TRUE(found.ok()) << found.error().message();
  EXPECT_EQ(found.value()->name, "example-core");
  EXPECT_FALSE(FindMetricTable("0x411ffff0", tables).ok());  // r1p0: not this table's
  const std::string csv = Csv({{{{"CPU_CYCLES", 2000},
                                 {"STALL_FRONTEND", 500},
                                 {"STALL_BACKEND", 300},
                                 {"INST_RETIRED", 3000}},
                                100}});
  auto counts = ParseCounterReport(csv);
  ASSERT_TRUE(counts.ok());
  std::map<std::string, double> m;
  for (const char* selection : {"l1", "General"}) {
    auto metrics = found.value()->Select(selection);
    ASSERT_TRUE(metrics.ok()) << metrics.error().message();
    auto results = EvaluateMetrics(*found.value(), metrics.value(), counts.value());
    ASSERT_TRUE(results.ok()) << results.error().message();
    for (const MetricResult& r : results.value()) m[r.metric->name] = r.value.value_or(-1);
  }
  EXPECT_NEAR(m["frontend_stalled_cycles"], 25, 1e-9);
  EXPECT_NEAR(m["backend_stalled_cycles"], 15, 1e-9);
  EXPECT_NEAR(m["ipc"], 1.5, 1e-9);
}

// A table that groups an event it does not define, or is not JSON, is refused with its origin.
TEST(MetricTableFiles, ATableThatDoesNotHoldTogetherIsRefused) {
  const std::string bad = R"({"product_configuration": {"product_name": "X"}, "events": {},
      "metrics": {}, "groups": {"metrics": {}},
      "tprof": {"name": "x", "source": "s", "event_groups": [["CPU_CYCLES"]]}})";
  auto table = ParseMetricTable(bad, "x.json");
  ASSERT_FALSE(table.ok());
  EXPECT_NE(table.error().message().find("x.json: event group names unknown event CPU_CYCLES"),
            std::string::npos)
      << table.error().message();
  EXPECT_FALSE(ParseMetricTable("{", "y.json").ok());
  auto not_hex = ParseMetricTable(
      R"({"product_configuration": {"product_name": "X"}, "events": {"A": {"code": "zz"}},
      "metrics": {}, "groups": {"metrics": {}}, "tprof": {"name": "x", "source": "s",
      "event_groups": []}})",
      "z.json");
  ASSERT_FALSE(not_hex.ok());
  EXPECT_NE(not_hex.error().message().find("z.json"), std::string::npos);
  // Each mistake in an otherwise good table, with what is said about it.
  const std::string good = R"({"product_configuration": {"product_name": "X", "implementer": "0x41",
      "part_num": "0xfff", "num_slots": 4},
      "events": {"CPU_CYCLES": {"code": "0x11"}, "STALL": {"code": "0x3c"}},
      "metrics": {"stalled": {"formula": "100 * STALL / CPU_CYCLES", "units": "%"}},
      "groups": {"metrics": {"l1": {"metrics": ["stalled"]}}},
      "tprof": {"name": "x", "source": "s", "revisions": ["0x00", "0x01"],
                "event_groups": [["CPU_CYCLES", "STALL"]]}})";
  ASSERT_TRUE(ParseMetricTable(good, "good.json").ok());
  for (auto [from, to, said] : {
           std::tuple{"\"stalled\"]", "\"stalled\", \"stalld\"]", "does not define: stalld"},
           {"100 * STALL / CPU_CYCLES", "100 * STALLS / CPU_CYCLES", "names unknown event STALLS"},
           {"\"revisions\"", "\"revision\"", "unknown key tprof.revision"},
           {"[\"0x00\", \"0x01\"]", "[\"0x02\", \"0x01\"]", "revisions runs backwards"},
           {"[\"0x00\", \"0x01\"]", "[\"0x00\"]", "is not [first, last]"},
           {"\"0x3c\"", "\"-1\"", "not a hex number"},
           {"\"0xfff\"", "\"0x1000\"", "out of range"},
           {"\"num_slots\": 4", "\"num_slots\": -4", "num_slots"},
       }) {
    std::string bad_table = good;
    const size_t at = bad_table.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    bad_table.replace(at, std::string(from).size(), to);
    auto refused = ParseMetricTable(bad_table, "bad.json");
    ASSERT_FALSE(refused.ok()) << to;
    EXPECT_NE(refused.error().message().find(said), std::string::npos)
        << to << ": " << refused.error().message();
  }
}

TEST(TopdownTest, MalformedInputIsAnError) {
  EXPECT_FALSE(ParseCounterReport("").ok());
  EXPECT_FALSE(ParseCounterReport("just,three,fields\n").ok());
  EXPECT_FALSE(ParseCounterReport("{\"counter-value\": \n").ok());
}

}  // namespace
}  // namespace tprof

namespace tprof {
namespace {

// Ice Lake: the topdown fractions sum to 1000 slots; fe 200, bad 100, retiring 500, be 200, and
// 50 of 1000 slots dropped: frontend = 20% - 5% = 15%, backend 20%, retiring 50%,
// bad speculation = 1 - (0.15 + 0.2 + 0.5) = 15%.
TEST(TopdownTest, IntelPerfMetrics) {
  for (const char* cpu : {"icelake", "sapphirerapids"}) {
    auto m = Evaluate(cpu, Csv({{{{"slots", 1000},
                                  {"topdown-fe-bound", 200},
                                  {"topdown-bad-spec", 100},
                                  {"topdown-retiring", 500},
                                  {"topdown-be-bound", 200},
                                  {"INT_MISC.UOP_DROPPING", 50}},
                                 100}}));
    EXPECT_NEAR(*m["frontend_bound"], 15, 1e-9) << cpu;
    EXPECT_NEAR(*m["backend_bound"], 20, 1e-9) << cpu;
    EXPECT_NEAR(*m["retiring"], 50, 1e-9) << cpu;
    EXPECT_NEAR(*m["bad_speculation"], 15, 1e-9) << cpu;
  }
  auto table = FindMetricTable("icelake", BuiltinMetricTables()).value();
  EXPECT_EQ(table->event_groups[0][0], "slots");  // slots leads the topdown group
}

// perf stat puts the PERF_METRICS group ({slots, topdown-*}) apart from INT_MISC.UOP_DROPPING,
// which cannot join it, and still prints frontend_bound and bad_speculation. With slots 1000, fe
// 200, bad 100, retiring 500, be 200 in one group and 50 dropped uops, counted at 80%, in another:
// frontend = 20% - 50/1000 = 15%, backend 20%, retiring 50%, bad = 100 - 85 = 15%, as perf
// prints them (one decimal). The two cross groups and run at the lesser share, 80%.
TEST(TopdownTest, MetricsWhoseEventsWereSplitAcrossGroupsAreEvaluatedAndMarked) {
  std::string csv = Csv({{{{"slots", 1000},
                           {"topdown-fe-bound", 200},
                           {"topdown-bad-spec", 100},
                           {"topdown-retiring", 500},
                           {"topdown-be-bound", 200}},
                          100},
                         {{{"INT_MISC.UOP_DROPPING", 50}}, 80}});
  auto m = EvaluateResults("sapphirerapids", csv);
  const std::map<std::string, double> perf_printed = {{"frontend_bound", 15.0},
                                                      {"backend_bound", 20.0},
                                                      {"retiring", 50.0},
                                                      {"bad_speculation", 15.0}};
  for (const auto& [name, printed] : perf_printed) {
    ASSERT_TRUE(m[name].value.has_value()) << name << ": " << m[name].note;
    EXPECT_NEAR(*m[name].value, printed, 0.05) << name;
  }
  EXPECT_TRUE(m["frontend_bound"].cross_group);
  EXPECT_TRUE(m["bad_speculation"].cross_group);
  EXPECT_DOUBLE_EQ(m["frontend_bound"].running_percent, 80);
  // Those whose events one group counted stay that group's, unmarked.
  EXPECT_FALSE(m["backend_bound"].cross_group);
  EXPECT_FALSE(m["retiring"].cross_group);
  EXPECT_DOUBLE_EQ(m["retiring"].running_percent, 100);
}

// Zen 4 level 2 with the cmask event in a group of its own (perf schedules it apart from the
// level-1 group): 1000 cycles = 6000 slots, 600 frontend slots, 50 cycles with no op from the
// front end -> latency 6 * 50 / 6000 = 5%, bandwidth 10% - 5% = 5%. An event that no group
// counted leaves its metrics n/a, named.
TEST(TopdownTest, EventsFromTheGroupThatCountedThemLongestAndMissingOnesNamed) {
  std::string csv = Csv({{{{"ls_not_halted_cyc", 1000},
                           {"de_no_dispatch_per_slot.no_ops_from_frontend", 600},
                           {"de_no_dispatch_per_slot.backend_stalls", 1800},
                           {"de_src_op_disp.all", 4000},
                           {"ex_ret_ops", 3000}},
                          100},
                         // The same event counted twice: the longer-running count is taken.
                         {{{"de_no_dispatch_per_slot.no_ops_from_frontend.cmask", 70}}, 30},
                         {{{"de_no_dispatch_per_slot.no_ops_from_frontend.cmask", 50}}, 60}});
  auto m = EvaluateResults("zen4", csv, "l1,l2");
  ASSERT_TRUE(m["frontend_bound_latency"].value.has_value()) << m["frontend_bound_latency"].note;
  EXPECT_NEAR(*m["frontend_bound_latency"].value, 5, 1e-9);
  EXPECT_NEAR(*m["frontend_bound_bandwidth"].value, 5, 1e-9);
  EXPECT_TRUE(m["frontend_bound_latency"].cross_group);
  EXPECT_DOUBLE_EQ(m["frontend_bound_latency"].running_percent, 60);
  EXPECT_FALSE(m["frontend_bound"].cross_group);
  // smt_contention's event was not counted anywhere.
  EXPECT_FALSE(m["smt_contention"].value.has_value());
  EXPECT_NE(m["smt_contention"].note.find("de_no_dispatch_per_slot.smt_contention"),
            std::string::npos)
      << m["smt_contention"].note;
}

// Skylake: 1000 unhalted cycles = 4000 slots. IDQ not delivered 800 -> 20%; retire slots 2000 ->
// 50%; issued 2200, recovery 25 cycles -> bad = (2200 - 2000 + 100) / 4000 = 7.5%;
// backend = 1 - 0.2 - (2200 + 100) / 4000 = 22.5%.
TEST(TopdownTest, IntelSkylake) {
  auto m = Evaluate("skylake", Csv({{{{"CPU_CLK_UNHALTED.THREAD", 1000},
                                      {"IDQ_UOPS_NOT_DELIVERED.CORE", 800},
                                      {"UOPS_RETIRED.RETIRE_SLOTS", 2000},
                                      {"UOPS_ISSUED.ANY", 2200},
                                      {"INT_MISC.RECOVERY_CYCLES", 25}},
                                     100}}));
  EXPECT_NEAR(*m["frontend_bound"], 20, 1e-9);
  EXPECT_NEAR(*m["retiring"], 50, 1e-9);
  EXPECT_NEAR(*m["bad_speculation"], 7.5, 1e-9);
  EXPECT_NEAR(*m["backend_bound"], 22.5, 1e-9);
}

// Zen 4, 6 slots: 1000 cycles = 6000 slots. fe 600 -> 10%, be 1800 -> 30%, dispatched 4000 and
// retired 3000 ops -> bad 1000/6000, retiring 50%. Level 2: 50 cycles with no op from the front
// end -> latency 6 * 50 / 6000 = 5%, bandwidth 5%; 100 of 400 not-complete are loads -> memory
// 7.5%, cpu 22.5%; 30 mispredicts and 10 restarts split bad speculation 3:1; 600 microcode ops
// -> 10%, fastpath 40%.
TEST(TopdownTest, AmdZen4LevelsOneAndTwo) {
  std::string csv = Csv({{{{"ls_not_halted_cyc", 1000},
                           {"de_no_dispatch_per_slot.no_ops_from_frontend", 600},
                           {"de_no_dispatch_per_slot.backend_stalls", 1800},
                           {"de_no_dispatch_per_slot.smt_contention", 0},
                           {"de_src_op_disp.all", 4000},
                           {"ex_ret_ops", 3000},
                           {"de_no_dispatch_per_slot.no_ops_from_frontend.cmask", 50},
                           {"ex_no_retire.not_complete", 400},
                           {"ex_no_retire.load_not_complete", 100},
                           {"ex_ret_brn_misp", 30},
                           {"resyncs_or_nc_redirects", 10},
                           {"ex_ret_ucode_ops", 600}},
                          100}});
  auto m = Evaluate("zen4", csv, "l1,l2");
  const double bad = 100.0 * 1000 / 6000;
  EXPECT_NEAR(*m["frontend_bound"], 10, 1e-9);
  EXPECT_NEAR(*m["backend_bound"], 30, 1e-9);
  EXPECT_NEAR(*m["bad_speculation"], bad, 1e-9);
  EXPECT_NEAR(*m["retiring"], 50, 1e-9);
  EXPECT_NEAR(*m["smt_contention"], 0, 1e-9);
  EXPECT_NEAR(*m["frontend_bound_latency"], 5, 1e-9);
  EXPECT_NEAR(*m["frontend_bound_bandwidth"], 5, 1e-9);
  EXPECT_NEAR(*m["backend_bound_memory"], 7.5, 1e-9);
  EXPECT_NEAR(*m["backend_bound_cpu"], 22.5, 1e-9);
  EXPECT_NEAR(*m["bad_speculation_mispredicts"], bad * 0.75, 1e-9);
  EXPECT_NEAR(*m["bad_speculation_pipeline_restarts"], bad * 0.25, 1e-9);
  EXPECT_NEAR(*m["retiring_microcode"], 10, 1e-9);
  EXPECT_NEAR(*m["retiring_fastpath"], 40, 1e-9);
  // Zen 5 has 8 slots: the same counts over 8000 slots.
  auto z5 = Evaluate("zen5", csv);
  EXPECT_NEAR(*z5["frontend_bound"], 7.5, 1e-9);
  EXPECT_NEAR(*z5["retiring"], 37.5, 1e-9);
}

// Zen 3 counts no dispatch slots: -M l1 says why instead of computing a level from other events,
// and the metrics it does have follow perf's amdzen3 definitions (ratios of the raw counts).
TEST(TopdownTest, AmdZen3HasNoLevelsButItsOwnMetrics) {
  auto table = FindMetricTable("zen3", BuiltinMetricTables()).value();
  auto l1 = table->Select("l1");
  ASSERT_FALSE(l1.ok());
  EXPECT_NE(l1.error().message().find("no dispatch-slot events"), std::string::npos);
  EXPECT_NE(l1.error().message().find("Branch"), std::string::npos);
  std::string csv = Csv({{{{"ls_not_halted_cyc", 2000},
                           {"ex_ret_instr", 3000},
                           {"ex_ret_brn", 500},
                           {"ex_ret_brn_misp", 15}},
                          100},
                         {{{"ic_tag_hit_miss.instruction_cache_miss", 40},
                           {"ic_tag_hit_miss.all_instruction_cache_accesses", 800},
                           {"op_cache_hit_miss.op_cache_miss", 90},
                           {"op_cache_hit_miss.all_op_cache_accesses", 900}},
                          100}});
  auto m = Evaluate("zen3", csv, "IPC,Branch,Cache");
  EXPECT_NEAR(*m["ipc"], 1.5, 1e-12);
  EXPECT_NEAR(*m["branch_misprediction_ratio"], 3.0, 1e-12);
  EXPECT_NEAR(*m["branch_mpki"], 5.0, 1e-12);
  EXPECT_NEAR(*m["ic_fetch_miss_ratio"], 5.0, 1e-12);
  EXPECT_NEAR(*m["op_cache_fetch_miss_ratio"], 10.0, 1e-12);
  // perf's amdzen3 event list: ic_tag_hit_miss is event 0x18e (umask 0x18 for misses).
  EXPECT_EQ(table->FindEvent("ic_tag_hit_miss.instruction_cache_miss")->code, 0x10000188eull);
}

// AMD puts the high nibble of a 12-bit event number in config bits 32-35 (topdown.md).
TEST(TopdownTest, AmdExtendedEventEncoding) {
  auto table = FindMetricTable("zen4", BuiltinMetricTables()).value();
  EXPECT_EQ(table->FindEvent("de_no_dispatch_per_slot.no_ops_from_frontend")->code, 0x1000001a0ull);
  EXPECT_EQ(table->FindEvent("de_no_dispatch_per_slot.backend_stalls")->code, 0x100001ea0ull);
  EXPECT_EQ(table->FindEvent("de_src_op_disp.all")->code, 0x7aaull);
  EXPECT_EQ(table->FindEvent("ex_ret_ucode_ops")->code, 0x1000000c1ull);
}

}  // namespace
}  // namespace tprof

namespace tprof {
namespace {

// Every table event under every spelling perf prints for it (perf-list(1) and perf-stat(1)):
// modifiers ("NAME:u"), the PMU's own name ("cpu/NAME/" or "armv8_pmuv3_0/NAME/"), the raw code
// ("rHEX"), and the PMU's terms ("cpu/event=0x..,umask=0x..,cmask=0x../", Arm's
// "armv8_pmuv3_0/event=0x../"), in -x, CSV and -j JSON. Each must give the metrics the table's
// own names give: an event present under another spelling is never "not counted".
std::string TermsOf(const MetricTable& table, uint64_t code) {
  char buf[128];
  if (table.x86_vendor.empty()) {
    std::snprintf(buf, sizeof buf, "armv8_pmuv3_0/event=0x%llx/",
                  static_cast<unsigned long long>(code));
    return buf;
  }
  uint64_t event = code & 0xff;
  if (table.x86_vendor == "AuthenticAMD") event |= ((code >> 32) & 0xf) << 8;
  std::snprintf(buf, sizeof buf, "cpu/event=0x%llx,umask=0x%llx,cmask=0x%llx/",
                static_cast<unsigned long long>(event),
                static_cast<unsigned long long>((code >> 8) & 0xff),
                static_cast<unsigned long long>((code >> 24) & 0xff));
  return buf;
}

std::string PmuOf(const MetricTable& table) {
  return table.x86_vendor.empty() ? "armv8_pmuv3_0" : "cpu";
}

TEST(TopdownTest, EveryTableEventIsRecognisedUnderEverySpellingPerfPrints) {
  for (const MetricTable& table : BuiltinMetricTables()) {
    std::vector<const Metric*> all;
    for (const Metric& m : table.metrics) all.push_back(&m);
    auto evaluate = [&](const std::function<std::string(const MetricEvent&)>& spell, bool json) {
      std::string text;
      double value = 1000;
      for (const MetricEvent& e : table.events) {
        value += 37;
        if (json) {
          nlohmann::json row = {{"counter-value", std::to_string(value)},
                                {"unit", ""},
                                {"event", spell(e)},
                                {"event-runtime", 1000000},
                                {"pcnt-running", 100.0}};
          text += row.dump() + "\n";
        } else {
          text += std::to_string(value) + ",," + spell(e) + ",1000000,100.00,,\n";
        }
      }
      auto counts = ParseCounterReport(text);
      EXPECT_TRUE(counts.ok()) << table.name << ": " << text;
      std::map<std::string, std::optional<double>> out;
      if (!counts.ok()) return out;
      auto results = EvaluateMetrics(table, all, counts.value());
      EXPECT_TRUE(results.ok()) << table.name;
      if (results.ok())
        for (const MetricResult& r : results.value()) out[r.metric->name] = r.value;
      return out;
    };
    const auto plain = evaluate([](const MetricEvent& e) { return e.name; }, false);
    size_t available = 0;
    for (const auto& [metric, value] : plain) available += value.has_value();
    EXPECT_EQ(available, plain.size()) << table.name << ": every metric from the table's names";
    const std::vector<std::pair<std::string, std::function<std::string(const MetricEvent&)>>>
        spellings = {
            {"NAME:u", [](const MetricEvent& e) { return e.name + ":u"; }},
            {"lower-case NAME:ku",
             [](const MetricEvent& e) {
               std::string lower;
               for (char c : e.name) lower += static_cast<char>(std::tolower(c));
               return lower + ":ku";
             }},
            {"pmu/NAME/", [&](const MetricEvent& e) { return PmuOf(table) + "/" + e.name + "/"; }},
            {"pmu/NAME/u",
             [&](const MetricEvent& e) { return PmuOf(table) + "/" + e.name + "/u"; }},
            {"rHEX",
             [](const MetricEvent& e) {
               char buf[32];
               std::snprintf(buf, sizeof buf, "r%llx", static_cast<unsigned long long>(e.code));
               return std::string(buf);
             }},
            {"pmu/terms/", [&](const MetricEvent& e) { return TermsOf(table, e.code); }},
        };
    for (bool json : {false, true})
      for (const auto& [form, spell] : spellings)
        EXPECT_EQ(evaluate(spell, json), plain)
            << table.name << ", events spelled " << form << (json ? " (perf stat -j)" : " (-x,)");
  }
}

// The two spellings that left metrics n/a on real perf stat outputs: Sapphire Rapids level 1 with
// TOPDOWN.SLOTS:u for slots (frontend_bound and bad_speculation n/a, "not counted: slots"), and
// Zen 4 level 2 with the cmask variant as perf prints it, commas and all.
TEST(TopdownTest, VendorNamesAndPmuTermsFromRealPerfStatOutputs) {
  auto spr = EvaluateResults("sapphirerapids",
                             "1000,,TOPDOWN.SLOTS:u,1000000,100.00,,\n"
                             "200,,topdown-fe-bound:u,1000000,100.00,,\n"
                             "100,,topdown-bad-spec:u,1000000,100.00,,\n"
                             "500,,topdown-retiring:u,1000000,100.00,,\n"
                             "200,,topdown-be-bound:u,1000000,100.00,,\n"
                             "50,,INT_MISC.UOP_DROPPING:u,1000000,100.00,,\n");
  // As IntelPerfMetrics works out: 20% - 50/1000 = 15%, 20%, 50%, 100 - 85 = 15%.
  ASSERT_TRUE(spr["frontend_bound"].value.has_value());
  EXPECT_NEAR(*spr["frontend_bound"].value, 15, 1e-9);
  ASSERT_TRUE(spr["bad_speculation"].value.has_value());
  EXPECT_NEAR(*spr["bad_speculation"].value, 15, 1e-9);

  const std::string zen4 =
      "1000,,ls_not_halted_cyc,1000000,100.00,,\n"
      "600,,de_no_dispatch_per_slot.no_ops_from_frontend,1000000,100.00,,\n"
      "50,,cpu/de_no_dispatch_per_slot.no_ops_from_frontend,cmask=0x6/,1000000,100.00,,\n";
  auto m = Evaluate("zen4", zen4, "l2");
  // latency = 6 * 50 / 6000 = 5%; bandwidth = 600 / 6000 - 5% = 5% (AmdZen4LevelsOneAndTwo).
  ASSERT_TRUE(m["frontend_bound_latency"].has_value());
  EXPECT_NEAR(*m["frontend_bound_latency"], 5, 1e-9);
  ASSERT_TRUE(m["frontend_bound_bandwidth"].has_value());
  EXPECT_NEAR(*m["frontend_bound_bandwidth"], 5, 1e-9);
  auto table = FindMetricTable("zen4", BuiltinMetricTables()).value();
  EXPECT_EQ(
      CanonicalEventName(*table, "cpu/de_no_dispatch_per_slot.no_ops_from_frontend,cmask=0x6/"),
      "de_no_dispatch_per_slot.no_ops_from_frontend.cmask");
  EXPECT_EQ(CanonicalEventName(*table, "cycles:u"), "ls_not_halted_cyc");
  auto n1 = FindMetricTable("neoverse-n1", BuiltinMetricTables()).value();
  EXPECT_EQ(CanonicalEventName(*n1, "instructions"), "INST_RETIRED");
  EXPECT_EQ(CanonicalEventName(*n1, "cpu-cycles:u"), "CPU_CYCLES");
}

}  // namespace
}  // namespace tprof
