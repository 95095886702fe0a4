// Judges the arm lab's results (scripts/armlab.sh check, run by the armlab_boot test first):
// tprof for arm64 ran on QEMU's emulated Neoverse CPUs, whose PMUv3 under -icount shift=1 counts
// exactly two cycles per instruction. Every expectation below comes from that oracle, from the
// workload's source (test/armlab/workloads/lab_loop.c) or from the independent counter
// (pmu_count, perf_event_open without tprof), never from tprof's own earlier output.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "test/support/leaf_stacks.h"
#include "test/support/run_command.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr uint64_t kRounds = 1000;               // checks.sh: lab_loop rounds
constexpr uint64_t kPeriod = 100003;             // checks.sh: the sampling period
constexpr uint64_t kGroupPeriod = 40009;         // checks.sh: the group-read period
constexpr uint64_t kIterationsPerRound = 30000;  // lab_loop.c: heavy 20,000 + light 10,000
// The loops of heavy and light are five instructions an iteration (eor/add, add, mul, cmp, b.ne:
// the annotate check below shows them).
constexpr uint64_t kLoopInstructions = kRounds * kIterationsPerRound * 5;

std::string Slurp(const fs::path& path) { return tprof::testing::ReadWholeFile(path.string()); }

// Where scripts/armlab.sh check left the results: the build's, or $ARMLAB_RESULTS (to judge a
// run made by hand).
fs::path Results() {
  const char* chosen = std::getenv("ARMLAB_RESULTS");
  return fs::path(chosen && *chosen ? chosen : ARMLAB_RESULTS);
}

// One check's outcome: what checks.sh kept in BOOT/NAME.
struct Check {
  fs::path dir;
  int status = -1;
  std::string out, err;

  std::string Describe() const { return dir.string() + ": " + Slurp(dir / "cmd") + err; }
};

Check Ran(const std::string& boot, const std::string& name) {
  Check c;
  c.dir = Results() / boot / name;
  std::string status = Slurp(c.dir / "status");
  c.status = status.empty() ? -1 : std::stoi(status);
  c.out = Slurp(c.dir / "stdout");
  c.err = Slurp(c.dir / "stderr");
  return c;
}

// A check that must have succeeded, with its output as JSON.
json JsonOf(const std::string& boot, const std::string& name) {
  Check c = Ran(boot, name);
  EXPECT_EQ(c.status, 0) << c.Describe();
  // The workload's own line may come first on stdout.
  size_t start = c.out.find_first_of("{[");
  if (c.status != 0 || start == std::string::npos) return json();
  return json::parse(c.out.substr(start), nullptr, false);
}

// pmu_count's lines: "NAME COUNT ENABLED RUNNING".
std::map<std::string, uint64_t> Oracle(const std::string& boot,
                                       const std::string& name = "oracle") {
  Check c = Ran(boot, name);
  EXPECT_EQ(c.status, 0) << c.Describe();
  std::map<std::string, uint64_t> counts;
  std::istringstream lines(c.out);
  std::string line;
  while (std::getline(lines, line)) {
    char event[64];
    unsigned long long count, enabled, running;
    if (std::sscanf(line.c_str(), "%63s %llu %llu %llu", event, &count, &enabled, &running) == 4) {
      EXPECT_EQ(enabled, running) << event << ": the independent count was multiplexed";
      counts[event] = count;
    }
  }
  EXPECT_EQ(counts.size(), 4u) << c.out;
  return counts;
}

const json* RowOf(const json& report, const std::string& sym, const std::string& key = "sym") {
  for (const json& row : report["rows"])
    if (row["keys"].value(key, "") == sym) return &row;
  return nullptr;
}

// The column of metric `name`; from `source` ("group deltas", "sampled periods") where given: a
// group's members are sampled on their own too, so a group recording has both.
size_t MetricIndex(const json& report, const std::string& name, const std::string& source = "") {
  for (size_t i = 0; i < report["metrics"].size(); ++i)
    if (report["metrics"][i]["name"] == name &&
        (source.empty() || report["metrics"][i]["source"] == source))
      return i;
  ADD_FAILURE() << "no metric " << name << " " << source << " in " << report["metrics"].dump();
  return 0;
}

// Group reads: IPC from credited windows is exactly 0.5 overall and in both functions.
void ExpectGroupIpcOfHalf(const json& report) {
  const size_t m = MetricIndex(report, "IPC", "group deltas");
  EXPECT_DOUBLE_EQ(report["metrics"][m]["overall"].get<double>(), 0.5);
  for (const char* function : {"heavy", "light"}) {
    const json* row = RowOf(report, function);
    ASSERT_TRUE(row) << function;
    EXPECT_GT((*row)["groups"][0]["windows_credited"].get<uint64_t>(), 100u) << function;
    EXPECT_DOUBLE_EQ((*row)["metrics"][m]["value"].get<double>(), 0.5) << function;
  }
}

const json* TopdownMetric(const json& topdown, const std::string& name) {
  for (const json& m : topdown["metrics"])
    if (m["metric"] == name) return &m;
  return nullptr;
}

// Folded stacks: stack -> period.
std::map<std::string, uint64_t> Folded(const std::string& text) {
  std::map<std::string, uint64_t> stacks;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    size_t space = line.rfind(' ');
    if (space != std::string::npos)
      stacks[line.substr(0, space)] += std::stoull(line.substr(space));
  }
  return stacks;
}

void Print(const std::string& figure) { std::printf("armlab: %s\n", figure.c_str()); }

const char* kBoots[] = {"n1", "n1-smp2", "n2r0p0", "n2r0p3", "nopmu", "hf"};

TEST(ArmLab, EveryBootRanItsChecks) {
  for (const char* boot : kBoots) {
    SCOPED_TRACE(boot);
    ASSERT_TRUE(fs::exists(Results() / boot / "checks.log"))
        << "no results from the " << boot << " boot (scripts/armlab.sh check)";
    Print(std::string(boot) + ": boot and checks " + Slurp(Results() / boot / "boot-seconds") +
          " s; " + Slurp(Results() / boot / "pmu-dmesg"));
  }
}

TEST(ArmLabN1, TheGuestIsANeoverseN1WithAPmuv3) {
  EXPECT_EQ(std::stoull(Slurp(Results() / "n1/midr"), nullptr, 16), 0x414fd0c1u);  // r4p1
  std::string events = Slurp(Results() / "n1/pmu-events");
  EXPECT_NE(events.find("cpu_cycles"), std::string::npos) << events;
  EXPECT_NE(events.find("inst_retired"), std::string::npos) << events;
  std::string dmesg = Slurp(Results() / "n1/pmu-dmesg");
  // Six general-purpose counters and the cycle counter, as on a real N1.
  EXPECT_NE(dmesg.find("armv8_pmuv3 PMU driver, 7 counters available"), std::string::npos) << dmesg;
}

// The oracle itself: two cycles per instruction exactly, and the instruction count the
// workload's source implies.
TEST(ArmLabN1, TheIndependentCountIsExact) {
  auto counts = Oracle("n1");
  EXPECT_EQ(counts["cycles:u"], 2 * counts["instructions:u"]);
  EXPECT_EQ(counts["cycles:k"], 2 * counts["instructions:k"]);
  EXPECT_GE(counts["instructions:u"], kLoopInstructions);
  EXPECT_LT(counts["instructions:u"], kLoopInstructions + kLoopInstructions / 500)
      << "more than the loops and 0.2% of start-up";
  Print("n1 oracle: " + std::to_string(counts["cycles:u"]) + " user cycles, " +
        std::to_string(counts["instructions:u"]) + " user instructions");
}

TEST(ArmLabN1, DefaultRecordSamplesCyclesOnThePmu) {
  Check record = Ran("n1", "default_record");
  ASSERT_EQ(record.status, 0) << record.Describe();
  EXPECT_EQ(record.err.find("instead"), std::string::npos) << "fell back: " << record.err;
  json report = JsonOf("n1", "default_report");
  ASSERT_FALSE(report.is_null());
  EXPECT_EQ(report["metadata"]["architecture"], "aarch64");
  ASSERT_EQ(report["events"].size(), 1u);
  EXPECT_EQ(report["events"][0]["name"], "cycles");
  auto counts = Oracle("n1");
  const double period = report["events"][0]["period"].get<double>();
  const double samples = report["events"][0]["samples"].get<double>();
  // Frequency mode: the periods add up to what the counter counted, user and kernel; tprof's
  // own sampling interrupts add kernel cycles the counting run did not have.
  const double counted = static_cast<double>(counts["cycles:u"] + counts["cycles:k"]);
  EXPECT_GE(period, static_cast<double>(counts["cycles:u"]));
  EXPECT_LE(period, 1.02 * counted);
  // The emulated clock runs at 1 GHz, so the cycles are also the run time: 4000 samples a
  // second of it, within 10% (the kernel adjusts the period as it goes).
  const double expected = 4000 * period / 1e9;
  EXPECT_NEAR(samples, expected, 0.1 * expected);
  Print("n1 default record: " + std::to_string(static_cast<uint64_t>(samples)) + " samples of " +
        std::to_string(static_cast<uint64_t>(period)) + " cycles");
}

TEST(ArmLabN1, AFixedPeriodGivesCyclesOverPeriodSamples) {
  json report = JsonOf("n1", "period_report");
  ASSERT_FALSE(report.is_null());
  auto counts = Oracle("n1");
  const uint64_t samples = report["events"][0]["samples"];
  // The user instructions of two runs differ by a few hundred (the dynamic loader's work on
  // another environment), far less than one period.
  EXPECT_NEAR(static_cast<double>(samples), static_cast<double>(counts["cycles:u"] / kPeriod), 1);
  EXPECT_EQ(report["events"][0]["period"].get<uint64_t>(), samples * kPeriod);
  // Shares from the source: heavy runs 20,000 and light 10,000 iterations of equal loops.
  const json* heavy = RowOf(report, "heavy");
  const json* light = RowOf(report, "light");
  ASSERT_TRUE(heavy && light) << report["rows"].dump();
  EXPECT_NEAR((*heavy)["events"][0]["self_percent"].get<double>(), 200.0 / 3, 0.2);
  EXPECT_NEAR((*light)["events"][0]["self_percent"].get<double>(), 100.0 / 3, 0.2);
  // Every sample lies in a known module: the first one, in ld.so's start-up, too (the vdso sits
  // in the unmapped tail of ld.so's reported span on arm64).
  for (const json& row : report["rows"]) EXPECT_NE(row["keys"]["dso"], "[unknown]") << row.dump();
}

// cycles and instructions sampled on their own at one period: every function's IPC[s] is the
// ratio of its sample counts, 0.5 up to one sample of either.
TEST(ArmLabN1, SampledIpcIsHalfOverallAndPerFunction) {
  json report = JsonOf("n1", "sampled_ipc_report");
  ASSERT_FALSE(report.is_null());
  const size_t ipc = MetricIndex(report, "IPC");
  EXPECT_EQ(report["metrics"][ipc]["source"], "sampled periods");
  const double instruction_samples = report["events"][1]["samples"].get<double>();
  EXPECT_NEAR(report["metrics"][ipc]["overall"].get<double>(), 0.5, 1 / instruction_samples);
  int judged = 0;
  for (const json& row : report["rows"]) {
    const double c = row["events"][0]["self_samples"].get<double>();
    const double i = row["events"][1]["self_samples"].get<double>();
    if (c < 100 || i < 50) continue;
    const double value = row["metrics"][ipc]["value"].get<double>();
    EXPECT_NEAR(value, 0.5, 0.5 * (1 / c + 1 / i)) << row["keys"].dump();
    Print("n1 IPC[s] of " + row["keys"]["sym"].get<std::string>() + ": " + std::to_string(value));
    ++judged;
  }
  EXPECT_EQ(judged, 2) << "heavy and light";
}

TEST(ArmLabN1, IpcFlameGraphColoursEveryFrameAtHalf) {
  Check flame = Ran("n1", "sampled_ipc_flame");
  ASSERT_EQ(flame.status, 0) << flame.Describe();
  std::string page = Slurp(flame.dir / "ipc.html");
  const std::string marker = "const DATA = ";
  size_t begin = page.find(marker);
  ASSERT_NE(begin, std::string::npos);
  begin += marker.size();
  size_t end = page.find(";\n", begin);
  json data = json::parse(page.substr(begin, end - begin), nullptr, false);
  ASSERT_TRUE(data.is_object());
  const json& value = data["value"];
  const json& cycle_samples = data["columns"][2];
  const json& instruction_samples = data["columns"][3];
  int coloured = 0;
  for (size_t n = 0; n < value.size(); ++n) {
    const double c = cycle_samples[n].get<double>(), i = instruction_samples[n].get<double>();
    if (c < 10 || i < 10) {
      EXPECT_TRUE(value[n].is_null()) << "frame " << n << " rests on too few samples";
      continue;
    }
    ASSERT_FALSE(value[n].is_null()) << "frame " << n;
    EXPECT_NEAR(value[n].get<double>(), 0.5, 0.5 * (1 / c + 1 / i)) << "frame " << n;
    ++coloured;
  }
  EXPECT_GE(coloured, 7) << "all, _start ... main, run_rounds, middle, heavy, light";
}

// Frame-pointer callchains (the workload keeps frame records, leaf functions too).
TEST(ArmLabN1, FramePointerCallchainsReachMain) {
  auto stacks = Folded(Ran("n1", "sampled_ipc_folded").out);
  uint64_t through_middle = 0, total = 0;
  for (const auto& [stack, period] : stacks) {
    total += period;
    if (stack.find("main;run_rounds;middle;heavy") != std::string::npos ||
        stack.find("main;run_rounds;middle;light") != std::string::npos)
      through_middle += period;
  }
  // A sample on the first instruction of light, before it stores its frame record, skips middle.
  EXPECT_GT(static_cast<double>(through_middle), 0.99 * static_cast<double>(total));
}

TEST(ArmLabN1, AnnotateShowsAArch64InstructionsWithTheirShares) {
  Check annotate = Ran("n1", "annotate");
  ASSERT_EQ(annotate.status, 0) << annotate.Describe();
  // heavy's loop as the compiler wrote it: h = (h ^ i) * prime.
  for (const char* instruction : {"eor x", "mul x", "b.ne #0x", "ret"})
    EXPECT_NE(annotate.out.find(instruction), std::string::npos) << instruction;
  // The five loop instructions share the function's 2000 cycles samples about evenly; the
  // rest get none.
  int loop_lines = 0;
  std::istringstream lines(annotate.out);
  std::string line;
  while (std::getline(lines, line)) {
    double share_c, share_i;
    unsigned samples_c, samples_i;
    if (std::sscanf(line.c_str(), " %lf%% %u %lf%% %u", &share_c, &samples_c, &share_i,
                    &samples_i) == 4) {
      EXPECT_NEAR(samples_c, 400, 40) << line;
      ++loop_lines;
    }
  }
  EXPECT_EQ(loop_lines, 5) << annotate.out;
}

// {cycles,instructions}:S: every sample reads both; IPC[g] comes from windows inside one function.
TEST(ArmLabN1, GroupReadsGiveIpcHalfAndSumToTheCountingRun) {
  json report = JsonOf("n1", "group_read_report");
  ASSERT_FALSE(report.is_null());
  ExpectGroupIpcOfHalf(report);
  // The last reads add up to the counting run's totals, less what ran after the last sample
  // (under one period).
  auto counts = Oracle("n1");
  const json& totals = report["groups"][0]["read_totals"];
  const double cycles = totals["cycles:u"].get<double>();
  const double instructions = totals["instructions:u"].get<double>();
  EXPECT_EQ(cycles, 2 * instructions);
  EXPECT_LE(cycles, static_cast<double>(counts["cycles:u"]) + 1000);
  EXPECT_GE(cycles, static_cast<double>(counts["cycles:u"] - kGroupPeriod) - 1000);
  Print("n1 group read: " + std::to_string(static_cast<uint64_t>(cycles)) + " cycles, " +
        std::to_string(static_cast<uint64_t>(instructions)) + " instructions in the last reads");
}

// The group recorded alone, as perf records it (no member sampled on its own): --timeline's IPC
// per interval comes from the group's windows there, and the emulator's IPC is 0.50 throughout.
TEST(ArmLabN1, TimelineIpcOfAGroupAloneComesFromItsWindows) {
  json timeline = JsonOf("n1", "group_only_timeline");
  ASSERT_FALSE(timeline.is_null());
  const size_t ipc = MetricIndex(timeline, "IPC", "group deltas");
  size_t with_value = 0;
  for (const json& interval : timeline["intervals"]) {
    const json& value = interval["metrics"][ipc]["value"];
    if (value.is_null()) continue;
    ++with_value;
    EXPECT_NEAR(value.get<double>(), 0.5, 0.001) << interval.dump().substr(0, 400);
  }
  EXPECT_GE(with_value, 3u);
  Print("n1 group alone: IPC[g] 0.50 in " + std::to_string(with_value) + " intervals");
}

// tprof diff of the group recorded alone (perf's way: instructions only in the cycles leader's
// samples) against the group with its members also sampled: IPC per function from each side's
// windows ([g]), 0.50 on both sides as the emulator counts, and a gate on it judges those values.
TEST(ArmLabN1, DiffOfAGroupAloneComparesIpcFromItsWindows) {
  Check alone = Ran("n1", "group_only"), read = Ran("n1", "group_read");
  ASSERT_EQ(alone.status, 0) << alone.Describe();
  ASSERT_EQ(read.status, 0) << read.Describe();
  const std::string old_file = (alone.dir / "p.tprof").string(),
                    new_file = (read.dir / "p.tprof").string();
  auto r = tprof::testing::RunCommand({TPROF_BINARY, "diff", "--json", "--limit", "0", "--fail-if",
                                       "func(*).ipc < -1%", "--fail-if", "func(*).ipc > +1%",
                                       old_file, new_file});
  EXPECT_EQ(r.exit_code, 0) << r.err << r.out.substr(0, 3000);
  const json j = json::parse(r.out, nullptr, false);
  ASSERT_TRUE(j["metrics"].is_object()) << r.out.substr(0, 2000);
  EXPECT_EQ(j["metrics"]["source"], "group deltas");
  EXPECT_NEAR(j["metrics"]["total"]["ipc"]["old"].get<double>(), 0.5, 0.001);
  EXPECT_NEAR(j["metrics"]["total"]["ipc"]["new"].get<double>(), 0.5, 0.001);
  size_t both = 0;
  for (const json& f : j["metrics"]["functions"]) {
    const json& ipc = f["ipc"];
    if (ipc["old"].is_null() || ipc["new"].is_null()) continue;
    ++both;
    EXPECT_NEAR(ipc["old"].get<double>(), 0.5, 0.001) << f.dump();
    EXPECT_NEAR(ipc["new"].get<double>(), 0.5, 0.001) << f.dump();
  }
  EXPECT_GE(both, 2u);
  Print("n1 diff of the group alone: IPC[g] 0.50 on both sides in " + std::to_string(both) +
        " functions");
}

TEST(ArmLabN1, RecordMIpcAndL1UseTheTableOfTheDetectedCpu) {
  json ipc = JsonOf("n1", "metrics_ipc_report");
  ASSERT_FALSE(ipc.is_null());
  ExpectGroupIpcOfHalf(ipc);
  json l1 = JsonOf("n1", "metrics_l1_report");
  ASSERT_FALSE(l1.is_null());
  EXPECT_NE(l1["metric_table"].get<std::string>().find("neoverse-n1"), std::string::npos)
      << l1["metric_table"];
  // The emulator's stall counters count nothing.
  for (const char* name : {"frontend_stalled_cycles", "backend_stalled_cycles"})
    EXPECT_DOUBLE_EQ(l1["metrics"][MetricIndex(l1, name)]["overall"].get<double>(), 0) << name;
}

// The cost split where its answer is known: the same loop at 1.3x the rounds, every instruction
// two cycles. All of each function's change is work (+30 % of its cycles), none efficiency, and
// the intervals from three runs a side say so.
TEST(ArmLabN1, CostSplitIsAllWorkWhenOnlyTheIterationsGrow) {
  std::vector<std::string> args = {
      TPROF_BINARY, "diff", "--json", "--split", "cycles:u/instructions:u", "--old"};
  for (int run = 1; run <= 3; ++run) {
    Check c = Ran("n1", "split_old_" + std::to_string(run));
    ASSERT_EQ(c.status, 0) << c.Describe();
    args.push_back((c.dir / "p.tprof").string());
  }
  args.push_back("--new");
  for (int run = 1; run <= 3; ++run) {
    Check c = Ran("n1", "split_new_" + std::to_string(run));
    ASSERT_EQ(c.status, 0) << c.Describe();
    args.push_back((c.dir / "p.tprof").string());
  }
  auto r = tprof::testing::RunCommand(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out, nullptr, false);
  ASSERT_TRUE(j["split"].is_object()) << r.out.substr(0, 2000);
  auto expect_all_work = [](const json& s, const std::string& what) {
    const json &work = s["work"], &efficiency = s["efficiency"];
    Print("n1 split " + what + ": work " + work.dump() + ", efficiency " + efficiency.dump());
    ASSERT_FALSE(work["half_width"].is_null()) << what;
    ASSERT_FALSE(efficiency["half_width"].is_null()) << what;
    EXPECT_NEAR(work["percent"].get<double>(), 30.0, 3.0) << what;
    const double old_cost = s["old_cost"].get<double>();
    EXPECT_LE(std::abs(work["value"].get<double>() - 0.3 * old_cost),
              work["half_width"].get<double>() + 0.01 * old_cost)
        << what;
    // The interval comes from the runs' spread, and the emulator repeats a run exactly (CI saw
    // ±0): widen it by what sampling itself can move efficiency, one period in each of the four
    // counts it reads, weighted as the formula weighs them (C1 - W1 x C0 / W0, C/W = 2, W1/W0 =
    // 1.3): (1 + 1.3 + 2 x 1.3 + 2) periods, under 7.
    const double quantum = 7.0 * static_cast<double>(kPeriod);
    EXPECT_LE(std::abs(efficiency["value"].get<double>()),
              efficiency["half_width"].get<double>() + quantum)
        << what << ": efficiency's interval does not hold 0";
    EXPECT_LT(std::abs(efficiency["percent"].get<double>()), 3.0) << what;
  };
  expect_all_work(j["split"]["total"], "total");
  int functions = 0;
  for (const json& f : j["split"]["functions"])
    if (f["function"] == "heavy" || f["function"] == "light") {
      expect_all_work(f, f["function"]);
      ++functions;
    }
  EXPECT_EQ(functions, 2);
}

// metric_oracle's page faults, designed per function, in the group of a leader that counts the
// kernel too: windows that end in the fault handler count for the function that faulted, found
// through arm64's sampled user pc; with --kernel-rows those faults go to kernel rows instead.
TEST(ArmLabN1, KernelWorkCountsForTheFunctionThatFaulted) {
  Check recorded = Ran("n1", "kernel_credit");
  ASSERT_EQ(recorded.status, 0) << recorded.Describe();
  const json truth = json::parse(Slurp(recorded.dir / "truth.json"), nullptr, false);
  ASSERT_FALSE(truth.is_discarded()) << recorded.Describe();
  json credited = JsonOf("n1", "kernel_credit_report");
  json rows = JsonOf("n1", "kernel_rows_report");
  ASSERT_FALSE(credited.is_null());
  ASSERT_FALSE(rows.is_null());
  auto faults = [](const json& report) {
    std::map<std::string, double> by;  // D:page-faults per oracle function, and "kernel"
    for (const json& row : report["rows"]) {
      const std::string sym = row["keys"]["sym"];
      std::string name = row["keys"]["dso"] == "[kernel.kallsyms]" ? "kernel" : "";
      for (const char* f : {"faults_heavy", "faults_light", "compute"})
        if (sym.find(std::string("::") + f + "(") != std::string::npos) name = f;
      if (!name.empty() && !row["groups"].empty())
        by[name] += row["groups"][0]["deltas"].value("page-faults", 0.0);
    }
    return by;
  };
  auto with = faults(credited), without = faults(rows);
  const json& k = credited["kernel_work"];
  Print("n1 kernel work: " + k.dump());
  EXPECT_GT(k["credited"].get<uint64_t>(), 0u) << "no cycles sample in the fault handler";
  EXPECT_EQ(k["credited"], k["kernel_samples"]);
  for (const char* f : {"faults_heavy", "faults_light"}) {
    const double designed = truth[f]["designed-faults"].get<double>();
    Print(std::string("n1 ") + f + ": designed " + std::to_string(designed) + ", credited " +
          std::to_string(with[f]) + ", --kernel-rows " + std::to_string(without[f]));
    EXPECT_NEAR(with[f], designed, 0.03 * designed) << f;
    EXPECT_LT(without[f], 0.97 * designed) << f;
  }
  EXPECT_EQ(with["compute"], 0);
  EXPECT_EQ(with.count("kernel"), 0u) << "no kernel rows when their work is credited";
  // With kernel rows, the fault handler's rows are there, and the faults of windows that run
  // from a function into them are discarded with those windows: lost to every row.
  EXPECT_EQ(without.count("kernel"), 1u) << "--kernel-rows shows the fault handler's rows";
}

constexpr const char* kOracleFunctions[] = {"faults_heavy", "faults_light", "compute"};

// One metric_oracle function's faults per kilo-instruction: what the design and the workload's
// own instruction count make it, and what tprof's report measured (with the row's share).
struct FaultRate {
  double designed = 0;
  std::optional<double> measured;
  double half_width = 0;  // of the measured value's 95 % interval
  double share = 0;       // percent of the leader's samples

  // Percent off the design, or the measured value itself where the design is zero.
  double Error() const {
    if (!measured) return NAN;
    return designed == 0 ? *measured : 100.0 * (*measured - designed) / designed;
  }
};

// metric_oracle's truth (checks.sh: CHECK/truth.json) against the faults_per_ki column of
// REPORT, per function.
std::map<std::string, FaultRate> FaultRates(const std::string& boot, const std::string& check,
                                            const std::string& report_check) {
  std::map<std::string, FaultRate> rates;
  Check recorded = Ran(boot, check);
  EXPECT_EQ(recorded.status, 0) << recorded.Describe();
  const json truth = json::parse(Slurp(recorded.dir / "truth.json"), nullptr, false);
  EXPECT_FALSE(truth.is_discarded()) << recorded.Describe();
  json report = JsonOf(boot, report_check);
  if (truth.is_discarded() || report.is_null()) return rates;
  const size_t column = MetricIndex(report, "faults_per_ki", "group deltas");
  for (const json& row : report["rows"]) {
    const std::string sym = row["keys"]["sym"];
    for (const char* f : kOracleFunctions)
      if (sym.find(std::string("::") + f + "(") != std::string::npos) {
        const json& metric = row["metrics"][column];
        if (metric["value"].is_number()) {
          rates[f].measured = metric["value"].get<double>();
          if (metric["ci95"].is_array() && metric["ci95"][0].is_number())
            rates[f].half_width =
                (metric["ci95"][1].get<double>() - metric["ci95"][0].get<double>()) / 2;
        }
        rates[f].share = row["events"][0]["self_percent"].get<double>();
      }
  }
  for (const char* f : kOracleFunctions) {
    EXPECT_TRUE(truth[f]["instructions"].is_number()) << "the guest has a PMU: " << truth.dump();
    const double instructions = truth[f]["instructions"].get<double>();
    EXPECT_GT(instructions, 0) << f;
    if (instructions > 0)
      rates[f].designed = truth[f]["designed-faults"].get<double>() / instructions * 1000;
  }
  return rates;
}

// Faults per kilo-instruction per function within 2 % of the design, or within the measured
// value's 95 % interval where windows cover only part of the run (short windows: the interval is
// wider than 2 %); compute's none exactly.
void ExpectFaultRatesOfTheDesign(const std::string& boot, bool within_interval = false) {
  auto rates = FaultRates(boot, "faults_per_ki", "faults_per_ki_report");
  for (const char* f : kOracleFunctions) {
    const FaultRate& r = rates[f];
    ASSERT_TRUE(r.measured) << "no faults_per_ki for " << f;
    Print(boot + " faults per kilo-instruction, " + f + ": designed " + std::to_string(r.designed) +
          ", measured " + std::to_string(*r.measured));
    if (r.designed == 0) {
      EXPECT_EQ(*r.measured, 0) << f;
    } else {
      const double allowed = std::max(0.02 * r.designed, within_interval ? r.half_width : 0.0);
      EXPECT_NEAR(*r.measured, r.designed, allowed) << f;
    }
  }
  EXPECT_GT(*rates["faults_heavy"].measured, 3 * *rates["faults_light"].measured);
}

// Faults per kilo-instruction per function, a user metric over the group's credited windows, is
// exact here: the faults are designed and the workload counts its own instructions (user and
// kernel, as the group does) around every call. Credited to the wrong function, faults_heavy's
// rate (4 faults an iteration) and faults_light's (1) would trade places or blend.
TEST(ArmLabN1, FaultsPerKiloInstructionFollowsTheDesignPerFunction) {
  ExpectFaultRatesOfTheDesign("n1");
}

// --off-cpu on arm64: each waiting function's off-CPU time is at least its designed sleep (the
// guest's clock drives both the sleeps and the timestamps) and at most that plus 10 ms of
// wake-up latency per nap; the switches are sampled beside cycles, a PMU event.
TEST(ArmLabN1, OffCpuTimeFollowsTheDesignedWaits) {
  Check recorded = Ran("n1", "off_cpu");
  ASSERT_EQ(recorded.status, 0) << recorded.Describe();
  EXPECT_NE(recorded.err.find(" off-cpu"), std::string::npos) << recorded.Describe();
  Check folded = Ran("n1", "off_cpu_folded");
  ASSERT_EQ(folded.status, 0) << folded.Describe();
  std::map<std::string, double> ms;
  std::istringstream lines(folded.out);
  std::string line;
  while (std::getline(lines, line)) {
    const size_t space = line.rfind(' ');
    if (space == std::string::npos) continue;
    const std::string stack = ";" + line.substr(0, space) + ";";
    for (const char* f : {"wait_long", "wait_short", "spin"})
      if (stack.find(std::string(";") + f + ";") != std::string::npos) {
        ms[f] += std::stod(line.substr(space + 1)) / 1e6;
        break;
      }
  }
  Print("n1 off-CPU ms: wait_long " + std::to_string(ms["wait_long"]) + " (designed 300), " +
        "wait_short " + std::to_string(ms["wait_short"]) + " (designed 100), spin " +
        std::to_string(ms["spin"]));
  EXPECT_GE(ms["wait_long"], 300.0) << folded.out;
  EXPECT_LE(ms["wait_long"], 400.0) << folded.out;
  EXPECT_GE(ms["wait_short"], 100.0) << folded.out;
  EXPECT_LE(ms["wait_short"], 200.0) << folded.out;
  EXPECT_LT(ms["spin"], 50.0) << folded.out;
}

// Linux 6.1 has no hf_sample_period: --burst falls back to sampling every SHORT events, which
// the kernel throttles here; windows across a throttle must not be credited (the lab found
// IPC 0.95 and 0.62 where every instruction takes two cycles).
TEST(ArmLabN1, BurstFallsBackOnThisKernelAndThrottlingDoesNotSkewWindows) {
  Check burst = Ran("n1", "burst");
  ASSERT_EQ(burst.status, 0) << burst.Describe();
  EXPECT_NE(burst.err.find("fallback mode"), std::string::npos) << burst.err;
  json report = JsonOf("n1", "burst_report");
  ASSERT_FALSE(report.is_null());
  ExpectGroupIpcOfHalf(report);
  Print("n1 burst fallback: " + burst.err.substr(burst.err.rfind("[ tprof record")));
}

// DWARF unwinding of a binary without frame pointers: complete stacks to _start.
TEST(ArmLabN1, DwarfCallchainsAreCompleteWithoutFramePointers) {
  Check record = Ran("n1", "dwarf");
  ASSERT_EQ(record.status, 0) << record.Describe();
  auto stacks = Folded(Ran("n1", "dwarf_folded").out);
  uint64_t complete = 0, total = 0;
  for (const auto& [stack, period] : stacks) {
    total += period;
    if (stack.rfind("_start;__libc_start_main;", 0) == 0 &&
        (stack.ends_with("main;run_rounds;middle;heavy") ||
         stack.ends_with("main;run_rounds;middle;light")))
      complete += period;
  }
  EXPECT_GT(static_cast<double>(complete), 0.99 * static_cast<double>(total));
  // The kernel's frame-pointer walk alone (fp,0) of the same binary loses middle, run_rounds and
  // main.
  ASSERT_EQ(Ran("n1", "fp_nofp").status, 0) << Ran("n1", "fp_nofp").Describe();
  auto broken = Folded(Ran("n1", "fp_nofp_folded").out);
  uint64_t fp_complete = 0, fp_total = 0;
  for (const auto& [stack, period] : broken) {
    fp_total += period;
    if (stack.find("run_rounds;middle") != std::string::npos) fp_complete += period;
  }
  ASSERT_GT(fp_total, 0u);
  EXPECT_LT(static_cast<double>(fp_complete), 0.1 * static_cast<double>(fp_total));
  // --children: main's total is every user sample after the start-up.
  json children = JsonOf("n1", "dwarf_children");
  ASSERT_FALSE(children.is_null());
  const json* main_row = RowOf(children, "main");
  ASSERT_TRUE(main_row);
  EXPECT_GT((*main_row)["events"][0]["total_percent"].get<double>(), 99.0);
  EXPECT_DOUBLE_EQ((*main_row)["events"][0]["self_percent"].get<double>(), 0);
}

// The folded stacks a check of libc_leaves printed (checks.sh's `leaves`), which must have run.
std::string LeavesFolded(const std::string& name) {
  Check c = Ran("n1", name);
  EXPECT_EQ(c.status, 0) << c.Describe();
  return c.out;
}

// The off-CPU intervals in which the scheduler preempted a thread, as folded stacks: none where
// report --off-cpu-reasons found none (it then says the profile has no such event, and names the
// reasons it has).
std::string LeavesPreempted(const std::string& name) {
  Check c = Ran("n1", name);
  if (c.status == 0) return c.out;
  EXPECT_NE(c.err.find("no event 'off-cpu:preempted'"), std::string::npos) << c.Describe();
  return "";
}

// The "unwinding:" lines tprof record printed for the recording `name`.
std::string UnwindingLines(const std::string& name) {
  std::istringstream lines(Ran("n1", name).err);
  std::string found;
  for (std::string line; std::getline(lines, line);)
    if (line.find(": unwinding: ") != std::string::npos)
      found += "  " + line.substr(line.find(": unwinding: ") + 2) + "\n";
  return found;
}

// -g through the leaves of Debian's arm64 libc (issue 58), the host's LeafFramesTest in the lab:
// libc_leaves' phases sleep, read a pipe, wait on a futex, memset, memcpy and read the clock. On
// arm64 a leaf that makes no frame record keeps its return address in x30, which the kernel's
// frame-pointer walk never reads, so that the chain skips the function that called the leaf.
// Debian's arm64 libc makes frame records in its C functions (the system call wrappers, `stp
// x29, x30` then `mov x29, sp`), so here the leaves are those the program computes in: memset
// and memcpy (assembly), the vDSO's __kernel_clock_gettime and the PLT stubs. The last two have
// no CFI at all (the arm64 vDSO's linker script discards .eh_frame, and ld writes none for
// arm64's PLT), so a CFI walk cannot leave them by CFI: both -g's walk and --call-graph dwarf
// take the return address from x30 there, as libdw's and libunwind's arm64 fallbacks do, and go
// on in the caller. -g's stacks of the main thread (main to the leaf) must be --call-graph
// dwarf's for 99 % of the period both ways, for cycles and for the off-CPU waits (less the
// intervals a thread was preempted: on this one CPU, mostly by tprof's own recorder), as on the
// host (test/support/leaf_stacks.h), and the stacks whose leaf has no CFI must reach main.
namespace {

// The share of `stacks`' period whose leaf is one of `leaves`, and of it the share whose stack
// does not start at main (cut short where the walk could not leave the leaf).
std::pair<double, double> LeafShares(const tprof::leaf_stacks::Stacks& stacks,
                                     const std::vector<std::string>& leaves) {
  double in_leaves = 0, cut = 0;
  for (const auto& [stack, period] : stacks.period) {
    const std::string leaf = stack.substr(stack.rfind(';') + 1);
    if (std::find(leaves.begin(), leaves.end(), leaf) == leaves.end()) continue;
    in_leaves += period;
    if (!stack.starts_with("main;")) cut += period;
  }
  return {stacks.total > 0 ? in_leaves / stacks.total : 0, in_leaves > 0 ? cut / in_leaves : 0};
}

}  // namespace

TEST(ArmLabN1, FramePointerStacksThroughLibcLeavesMatchDwarf) {
  namespace leaves = tprof::leaf_stacks;
  for (const char* name : {"leaves_fp", "leaves_dwarf"}) {
    Check c = Ran("n1", name);
    ASSERT_EQ(c.status, 0) << c.Describe();
  }
  std::printf("armlab: n1 libc_leaves -g:\n%s", UnwindingLines("leaves_fp").c_str());
  std::printf("armlab: n1 libc_leaves --call-graph dwarf:\n%s",
              UnwindingLines("leaves_dwarf").c_str());
  const leaves::Stacks fp = leaves::OnCpuStacksOf(LeavesFolded("leaves_fp_cycles"));
  const leaves::Stacks dwarf = leaves::OnCpuStacksOf(LeavesFolded("leaves_dwarf_cycles"));
  // The leaves without CFI: the vDSO's clock and the PLT stubs (named by the symbol before them).
  const std::vector<std::string> no_cfi = {"__kernel_clock_gettime", "_init"};
  for (const auto& [name, stacks] : {std::pair{"-g", &fp}, std::pair{"dwarf", &dwarf}}) {
    const auto [share, cut] = LeafShares(*stacks, no_cfi);
    std::printf("armlab: n1 %s: %s of the cycles in leaves without CFI, %s of them not from main\n",
                name, leaves::Percent(share).c_str(), leaves::Percent(cut).c_str());
    EXPECT_GT(share, 0.05) << name << ": the workload no longer puts x30 to the test";
    EXPECT_LT(cut, 0.01) << name << ": stacks in leaves without CFI stop there\n"
                         << leaves::Largest(*stacks);
  }
  leaves::ExpectAgreement(fp, "-g", dwarf, "dwarf", leaves::kOnCpuPhases, "n1 cycles");
  leaves::ExpectAgreement(leaves::WaitStacksOf(LeavesFolded("leaves_fp_off_cpu"),
                                               LeavesPreempted("leaves_fp_preempted")),
                          "-g",
                          leaves::WaitStacksOf(LeavesFolded("leaves_dwarf_off_cpu"),
                                               LeavesPreempted("leaves_dwarf_preempted")),
                          "dwarf", leaves::kOffCpuPhases, "n1 off-CPU waits");
}

// The workload puts the frame-pointer walk to the test on arm64 too: on the CPU, the kernel's
// chains alone (--call-graph fp,0) miss the phases that called memset, memcpy and the vDSO. Where
// they do not, the test above proves nothing. Off the CPU they are whole here (the system call
// wrappers make frame records: see above), so the off-CPU waits are printed, not held to miss.
TEST(ArmLabN1, PlainFramePointerChainsThroughLibcLeavesMissTheCallers) {
  namespace leaves = tprof::leaf_stacks;
  for (const char* name : {"leaves_plain", "leaves_dwarf"}) {
    Check c = Ran("n1", name);
    ASSERT_EQ(c.status, 0) << c.Describe();
  }
  struct Event {
    std::string what;
    leaves::Stacks plain, dwarf;
    const std::vector<std::string>& phases;
    bool must_miss;
  };
  const Event events[] = {
      {"n1 cycles", leaves::OnCpuStacksOf(LeavesFolded("leaves_plain_cycles")),
       leaves::OnCpuStacksOf(LeavesFolded("leaves_dwarf_cycles")), leaves::kOnCpuPhases, true},
      {"n1 off-CPU waits",
       leaves::WaitStacksOf(LeavesFolded("leaves_plain_off_cpu"),
                            LeavesPreempted("leaves_plain_preempted")),
       leaves::WaitStacksOf(LeavesFolded("leaves_dwarf_off_cpu"),
                            LeavesPreempted("leaves_dwarf_preempted")),
       leaves::kOffCpuPhases, false}};
  for (const Event& e : events) {
    const double agreement = leaves::Agreement(e.dwarf, e.plain);
    std::printf("armlab: %s: %s of dwarf's period in stacks fp,0 has\n", e.what.c_str(),
                leaves::Percent(agreement).c_str());
    if (e.must_miss) {
      EXPECT_LT(agreement, 0.9) << e.what << ": the plain frame-pointer chains agree with dwarf's; "
                                << "do memset and memcpy make frame records here?\n"
                                << leaves::Disagreement(e.dwarf, "dwarf", e.plain, "fp,0");
    }
    for (const std::string& phase : e.phases) {
      std::printf("armlab: %s: main;%s: %s of fp,0, %s of dwarf\n", e.what.c_str(), phase.c_str(),
                  leaves::Percent(leaves::PhaseShare(e.plain, phase)).c_str(),
                  leaves::Percent(leaves::PhaseShare(e.dwarf, phase)).c_str());
      EXPECT_GE(leaves::PhaseShare(e.dwarf, phase), leaves::kPhaseShare)
          << e.what << ": main;" << phase;
    }
  }
}

// The vdso has no file: its symbols come from the kernel's image (arm64 names its clock
// __kernel_clock_gettime), and it sits in the unmapped tail of ld.so's reported span.
TEST(ArmLabN1, VdsoSamplesAreNamed) {
  json report = JsonOf("n1", "vdso_report");
  ASSERT_FALSE(report.is_null());
  double vdso = 0;
  for (const json& row : report["rows"])
    if (row["keys"]["dso"] == "[vdso]") {
      EXPECT_EQ(row["keys"]["sym"].get<std::string>().find("[vdso+"), std::string::npos)
          << "an unnamed vdso address: " << row.dump();
      vdso += row["events"][0]["self_percent"].get<double>();
    }
  // Reading the clock is nearly all the workload does.
  EXPECT_GT(vdso, 50.0) << report["rows"].dump();
  EXPECT_TRUE(RowOf(report, "__kernel_clock_gettime")) << report["rows"].dump();
}

TEST(ArmLabN1, TopdownChoosesTheN1TableByMidrAndFollowsTheCounts) {
  for (const char* check : {"topdown", "topdown_pid", "topdown_system"}) {
    SCOPED_TRACE(check);
    json topdown = JsonOf("n1", check);
    ASSERT_FALSE(topdown.is_null());
    EXPECT_EQ(topdown["cpu"], "neoverse-n1");
    // The emulator's stall events count zero: zero stalled cycles, never n/a.
    for (const char* name : {"frontend_stalled_cycles", "backend_stalled_cycles"}) {
      const json* m = TopdownMetric(topdown, name);
      ASSERT_TRUE(m) << name;
      EXPECT_EQ((*m)["value"], 0.0) << name;
      EXPECT_EQ((*m)["running_percent"], 100.0) << name;
    }
  }
  json general = JsonOf("n1", "topdown_general");
  ASSERT_FALSE(general.is_null());
  const json* ipc = TopdownMetric(general, "ipc");
  ASSERT_TRUE(ipc) << general.dump();
  EXPECT_DOUBLE_EQ((*ipc)["value"].get<double>(), 0.5);
}

// A user who is not root, at perf_event_paranoid 2: the kernel refuses to count its kernel mode,
// so topdown counts user space only, and says so in one line and in the input's description.
TEST(ArmLabN1, TopdownAsAUserWhoIsNotRootCountsUserSpaceOnly) {
  Check unprivileged = Ran("n1", "topdown_unprivileged");
  ASSERT_EQ(unprivileged.status, 0) << unprivileged.Describe();
  EXPECT_NE(unprivileged.err.find("counting user space only"), std::string::npos)
      << unprivileged.Describe();
  EXPECT_NE(unprivileged.err.find("perf_event_paranoid is 2"), std::string::npos)
      << unprivileged.Describe();
  json topdown = JsonOf("n1", "topdown_unprivileged");
  ASSERT_FALSE(topdown.is_null());
  EXPECT_EQ(topdown["cpu"], "neoverse-n1");
  EXPECT_NE(topdown["input"].get<std::string>().find("user space only"), std::string::npos)
      << topdown["input"];
  // N1's stage 1 (cycle accounting): the emulator's stall events count zero, read as 0, never
  // n/a, with every counter running the whole time.
  for (const char* name : {"frontend_stalled_cycles", "backend_stalled_cycles"}) {
    const json* m = TopdownMetric(topdown, name);
    ASSERT_TRUE(m) << name;
    EXPECT_EQ((*m)["value"], 0.0) << name;
    EXPECT_EQ((*m)["running_percent"], 100.0) << name;
  }
}

TEST(ArmLabN1, TopdownIntervalsEachFollowTheCounts) {
  Check intervals = Ran("n1", "topdown_interval");
  ASSERT_EQ(intervals.status, 0) << intervals.Describe();
  std::istringstream lines(intervals.out);
  std::string line;
  int n = 0;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] != '{') continue;
    json interval = json::parse(line);
    EXPECT_EQ(interval["cpu"], "neoverse-n1");
    // Each interval from its own deltas: stall counts zero, cycles counted, so 0%, not n/a.
    const json* stalled = TopdownMetric(interval, "backend_stalled_cycles");
    ASSERT_TRUE(stalled) << line;
    EXPECT_EQ((*stalled)["value"], 0.0) << line;
    ++n;
  }
  // 0.3 s of emulated time (300M cycles at 1 GHz) in 100 ms intervals, the last one partial.
  EXPECT_GE(n, 3);
  EXPECT_LE(n, 5);
}

// More events than the six counters: the kernel multiplexes the groups, tprof scales and says so.
TEST(ArmLabN1, TopdownMultiplexesWhenTheEventsOutnumberTheCounters) {
  json topdown = JsonOf("n1", "topdown_multiplexed");
  ASSERT_FALSE(topdown.is_null());
  const std::string input = topdown["input"];
  int groups = 0;
  std::sscanf(input.c_str() + input.find(" in ") + 4, "%d", &groups);
  EXPECT_GE(groups, 2) << input;
  double lowest = 100;
  for (const json& m : topdown["metrics"])
    if (!m["value"].is_null()) lowest = std::min(lowest, m["running_percent"].get<double>());
  EXPECT_LT(lowest, 100.0) << "no group was multiplexed: " << input;
  Print("n1 multiplexed topdown: " + input + "; lowest running share " + std::to_string(lowest) +
        "%");
  // A ratio inside one multiplexed group is still exact.
  const json* ipc = TopdownMetric(topdown, "ipc");
  ASSERT_TRUE(ipc);
  EXPECT_NEAR((*ipc)["value"].get<double>(), 0.5, 1e-6);
}

TEST(ArmLabN1, RecordAllCpusWhileACommandRuns) {
  json report = JsonOf("n1", "record_system_report");
  ASSERT_FALSE(report.is_null());
  const json* heavy = RowOf(report, "heavy");
  ASSERT_TRUE(heavy) << report["rows"].dump();
  EXPECT_EQ((*heavy)["keys"]["comm"], "lab_loop_fp");
  // Most of the system's cycles are the workload's (the guest has nothing else to do).
  EXPECT_GT((*heavy)["events"][0]["self_percent"].get<double>(), 50.0);
}

// perf stat's CSV lines (-x,): "COUNT,UNIT,EVENT,...".
std::map<std::string, double> PerfStatCounts(const std::string& text) {
  std::map<std::string, double> counts;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::vector<std::string> fields;
    std::istringstream cells(line);
    std::string cell;
    while (std::getline(cells, cell, ',')) fields.push_back(cell);
    if (fields.size() >= 3 && !fields[0].empty() && std::isdigit(fields[0][0]))
      counts[fields[2]] = std::stod(fields[0]);
  }
  return counts;
}

// Linux perf inside the guest counts the same workload: it agrees with the independent counter
// and with tprof's counting and group reads.
TEST(ArmLabN1, PerfInTheGuestCountsWhatTprofCounts) {
  Check stat = Ran("n1", "perf_stat");
  ASSERT_EQ(stat.status, 0) << stat.Describe();
  auto perf = PerfStatCounts(stat.err);
  auto oracle = Oracle("n1");
  EXPECT_EQ(perf["cycles:u"], 2 * perf["instructions:u"]);
  // Two runs of the same binary retire the same user instructions but for the dynamic loader's
  // work on a slightly different environment.
  EXPECT_NEAR(perf["instructions:u"], static_cast<double>(oracle["instructions:u"]), 1000);
  // tprof topdown counts user and kernel, as perf's plain events do; the kernel's part (0.7% of
  // the total) varies from run to run.
  std::ifstream saved(Results() / "n1/topdown_general/counts.txt");
  json counts = json::parse(saved, nullptr, false);
  ASSERT_TRUE(counts.is_object());
  double tprof_instructions = 0, tprof_cycles = 0;
  for (const json& group : counts["groups"])
    for (const json& counter : group["counters"]) {
      if (counter["event"] == "INST_RETIRED") tprof_instructions = counter["value"];
      if (counter["event"] == "CPU_CYCLES") tprof_cycles = counter["value"];
    }
  EXPECT_EQ(tprof_cycles, 2 * tprof_instructions);
  EXPECT_NEAR(tprof_instructions, perf["instructions"], 0.01 * perf["instructions"]);
  // tprof's group reads of cycles:u end within one period of perf's count.
  json group = JsonOf("n1", "group_read_report");
  ASSERT_FALSE(group.is_null());
  const double read = group["groups"][0]["read_totals"]["cycles:u"];
  EXPECT_LE(read, perf["cycles:u"] + 1000);
  EXPECT_GE(read, perf["cycles:u"] - static_cast<double>(kGroupPeriod) - 1000);
  Print("n1 perf stat: " + std::to_string(static_cast<uint64_t>(perf["instructions:u"])) +
        " user instructions (pmu_count " + std::to_string(oracle["instructions:u"]) +
        "), tprof topdown INST_RETIRED " +
        std::to_string(static_cast<uint64_t>(tprof_instructions)) + " against perf's " +
        std::to_string(static_cast<uint64_t>(perf["instructions"])));
}

// -smp 2: the emulator's instruction count is machine-wide, so counts are not exact per CPU,
// but the ratio stays two cycles per instruction.
TEST(ArmLabSmp2, ThreadsAndAllCpus) {
  json threads = JsonOf("n1-smp2", "threads_report");
  ASSERT_FALSE(threads.is_null());
  // Per thread, heavy has about twice light's samples (the source's 20,000 and 10,000
  // iterations); the machine-wide count inflates each function by what the other CPU ran
  // meanwhile, which is neither the same for both threads nor for both functions: 1.97-2.10
  // seen, then 2.00 and 2.28 in one CI boot whose one thread got 1.7x the other's samples for the
  // same work. Exact per-function ratios are the one-CPU boot's to check; here, +-20 %.
  std::map<std::string, std::pair<double, double>> per_thread;  // tid -> heavy, light
  for (const json& row : threads["rows"]) {
    const double samples = row["events"][0]["self_samples"].get<double>();
    if (row["keys"]["sym"] == "heavy") per_thread[row["keys"]["tid"]].first += samples;
    if (row["keys"]["sym"] == "light") per_thread[row["keys"]["tid"]].second += samples;
  }
  ASSERT_EQ(per_thread.size(), 2u) << "both threads sampled";
  for (const auto& [tid, samples] : per_thread) {
    EXPECT_GT(samples.second, 500) << tid;
    EXPECT_NEAR(samples.first / samples.second, 2.0, 0.4) << tid;
  }
  json group = JsonOf("n1-smp2", "group_read_report");
  ASSERT_FALSE(group.is_null());
  EXPECT_DOUBLE_EQ(
      group["metrics"][MetricIndex(group, "IPC", "group deltas")]["overall"].get<double>(), 0.5);
  json system = JsonOf("n1-smp2", "system_wide_report");
  ASSERT_FALSE(system.is_null());
  ASSERT_TRUE(RowOf(system, "heavy"));
  json topdown = JsonOf("n1-smp2", "topdown_system");
  ASSERT_FALSE(topdown.is_null());
  EXPECT_NE(topdown["input"].get<std::string>().find("2 CPUs"), std::string::npos)
      << topdown["input"];
}

// N2 r0p0-r0p2 count one extra stall slot per cycle (the erratum); r0p3 does not. The emulator's
// stall slots count zero, so the correction shows as -CPU_CYCLES / (5 CPU_CYCLES) = -20%.
TEST(ArmLabN2, TheErratumCorrectionIsAppliedToR0p0Only) {
  json r0p0 = JsonOf("n2r0p0", "topdown");
  json r0p3 = JsonOf("n2r0p3", "topdown");
  ASSERT_FALSE(r0p0.is_null());
  ASSERT_FALSE(r0p3.is_null());
  EXPECT_EQ(std::stoull(Slurp(Results() / "n2r0p0/midr"), nullptr, 16), 0x410fd490u);
  EXPECT_EQ(std::stoull(Slurp(Results() / "n2r0p3/midr"), nullptr, 16), 0x410fd493u);
  EXPECT_EQ(r0p0["cpu"], "neoverse-n2");
  EXPECT_EQ(r0p3["cpu"], "neoverse-n2-r0p3");
  const json* corrected = TopdownMetric(r0p0, "frontend_bound");
  const json* plain = TopdownMetric(r0p3, "frontend_bound");
  ASSERT_TRUE(corrected && plain);
  EXPECT_NEAR((*corrected)["value"].get<double>(), -20.0, 1e-9);
  EXPECT_NEAR((*plain)["value"].get<double>(), 0.0, 1e-9);
  json recorded = JsonOf("n2r0p0", "metrics_l1_report");
  ASSERT_FALSE(recorded.is_null());
  EXPECT_NE(recorded["metric_table"].get<std::string>().find("neoverse-n2 "), std::string::npos)
      << recorded["metric_table"];
}

TEST(ArmLabNoPmu, FallsBackInOneLineAndTopdownSaysWhy) {
  EXPECT_EQ(std::stoull(Slurp(Results() / "nopmu/midr"), nullptr, 16), 0x414fd0c1u);
  Check record = Ran("nopmu", "default_record");
  ASSERT_EQ(record.status, 0) << record.Describe();
  // The fallback is said in one line: what could not be opened, why, and what is sampled.
  std::istringstream lines(record.err);
  bool one_line = false;
  for (std::string line; std::getline(lines, line);)
    one_line |= line.starts_with("tprof record: cannot open event 'cycles'") &&
                line.find("sampling 'task-clock' instead") != std::string::npos;
  EXPECT_TRUE(one_line) << record.err;
  json report = JsonOf("nopmu", "default_report");
  ASSERT_FALSE(report.is_null());
  EXPECT_EQ(report["events"][0]["name"], "task-clock");
  EXPECT_TRUE(RowOf(report, "heavy"));
  Check explicit_cycles = Ran("nopmu", "explicit_cycles");
  EXPECT_EQ(explicit_cycles.status, 1);
  EXPECT_NE(explicit_cycles.err.find("no hardware PMU"), std::string::npos) << explicit_cycles.err;
  EXPECT_EQ(std::count(explicit_cycles.err.begin(), explicit_cycles.err.end(), '\n'), 1)
      << explicit_cycles.err;
  Check topdown = Ran("nopmu", "topdown");
  EXPECT_EQ(topdown.status, 1);
  EXPECT_NE(topdown.err.find("no hardware PMU"), std::string::npos) << topdown.err;
  EXPECT_EQ(std::count(topdown.err.begin(), topdown.err.end(), '\n'), 1) << topdown.err;
}

// The hf boot: N1 on the lab's own kernel, Linux 6.12 with the hf_sample_period patch
// (test/armlab/kernel). hf_periods samples its own loop with the series' attribute directly (no
// tprof code) and prints each sample's period and group counts.
struct HfSample {
  uint64_t period, cycles, instructions;
};

std::vector<HfSample> HfSamples(const Check& c, uint64_t* throttled) {
  std::vector<HfSample> samples;
  std::istringstream lines(c.out);
  std::string line;
  while (std::getline(lines, line)) {
    unsigned long long period, cycles, instructions, count;
    if (std::sscanf(line.c_str(), "sample %llu %llu %llu", &period, &cycles, &instructions) == 3)
      samples.push_back({period, cycles, instructions});
    else if (std::sscanf(line.c_str(), "throttled %llu", &count) == 1)
      *throttled = count;
  }
  return samples;
}

// Long 100,000, short 10,000: the first period is a whole long one, then the short window and
// the rest of the long period (90,000) alternate. Under -icount the counts between two samples
// are the period asked for, give or take what the counter runs on while the overflow interrupt
// is taken (the kernel carries that overshoot into the next period).
TEST(ArmLabHf, TheKernelAlternatesTheLongAndTheShortPeriod) {
  Check c = Ran("hf", "hf_periods");
  ASSERT_EQ(c.status, 0) << c.Describe() << c.out;
  uint64_t throttled = 99;
  std::vector<HfSample> samples = HfSamples(c, &throttled);
  EXPECT_EQ(throttled, 0u);
  ASSERT_GT(samples.size(), 100u) << c.out.substr(0, 500);
  EXPECT_EQ(samples[0].period, 100000u);
  uint64_t worst = 0;
  for (size_t i = 1; i < samples.size(); ++i) {
    const uint64_t asked = i % 2 ? 10000 : 90000;
    ASSERT_EQ(samples[i].period, asked) << "sample " << i;
    const uint64_t counted = samples[i].cycles - samples[i - 1].cycles;
    const uint64_t off = counted > asked ? counted - asked : asked - counted;
    worst = std::max(worst, off);
    // Two cycles per instruction, in the short windows too.
    EXPECT_EQ(counted, 2 * (samples[i].instructions - samples[i - 1].instructions)) << i;
  }
  Print("hf periods: " + std::to_string(samples.size()) +
        " samples alternating 10,000 and 90,000; counted cycles at most " + std::to_string(worst) +
        " off the period asked");
  EXPECT_LE(worst, 200u);
}

// Jitter of 8 bits moves the long part by [-128, 128); the short window stays exact.
TEST(ArmLabHf, JitterMovesTheLongPartWithinItsBound) {
  Check c = Ran("hf", "hf_jitter");
  ASSERT_EQ(c.status, 0) << c.Describe() << c.out;
  uint64_t throttled = 99;
  std::vector<HfSample> samples = HfSamples(c, &throttled);
  ASSERT_GT(samples.size(), 100u) << c.out.substr(0, 500);
  std::map<uint64_t, int> long_periods;
  for (size_t i = 1; i < samples.size(); ++i) {
    if (i % 2) {
      EXPECT_EQ(samples[i].period, 10000u) << "sample " << i;
    } else {
      EXPECT_GE(samples[i].period, 90000u - 128) << "sample " << i;
      EXPECT_LT(samples[i].period, 90000u + 128) << "sample " << i;
      ++long_periods[samples[i].period];
    }
  }
  Print("hf jitter: " + std::to_string(long_periods.size()) + " distinct long periods in " +
        std::to_string(samples.size() / 2) + ", from " +
        std::to_string(long_periods.begin()->first) + " to " +
        std::to_string(long_periods.rbegin()->first));
  // 1,600 draws of 256 values leave none out but by a chance of 256 x (255/256)^1600, 0.05 %.
  EXPECT_GT(long_periods.size(), 250u) << "the long part hardly varies";
}

// What the patch refuses, by the series' rules: EINVAL for a short period not shorter than the
// long one, jitter without a short period, reserved bits and frequency mode; EOPNOTSUPP on a PMU
// that would ignore it (a software event).
TEST(ArmLabHf, TheKernelRefusesWhatTheSeriesRefuses) {
  Check c = Ran("hf", "hf_refusals");
  ASSERT_EQ(c.status, 0) << c.Describe();
  for (const char* line : {"refusal hf_equal_to_period 22", "refusal rand_without_hf 22",
                           "refusal reserved_bits 22", "refusal hf_with_frequency 22",
                           "refusal hf_on_a_software_event 95", "accepted hf_on_cycles 0"})
    EXPECT_NE(c.out.find(std::string(line) + "\n"), std::string::npos) << line << "\n" << c.out;
}

// tprof --burst on the kernel that has hf_sample_period: it says it took the kernel's path, its
// windows are the short periods only (one per long period), and each function's IPC from them is
// the oracle's 0.5. On n1's stock 6.1 the same command falls back (the test above).
void ExpectBurstOnTheKernelPath(const std::string& check) {
  Check burst = Ran("hf", check);
  ASSERT_EQ(burst.status, 0) << burst.Describe();
  EXPECT_NE(burst.err.find("burst sampling: kernel mode (hf_sample_period)"), std::string::npos)
      << burst.err;
  EXPECT_EQ(burst.err.find("fallback"), std::string::npos) << burst.err;
  json report = JsonOf("hf", check + "_report");
  ASSERT_FALSE(report.is_null());
  ExpectGroupIpcOfHalf(report);
  const json& group = report["groups"][0];
  EXPECT_EQ(group["short_window"], 10000);
  const uint64_t windows =
      group["windows_credited"].get<uint64_t>() + group["windows_discarded"].get<uint64_t>();
  const uint64_t long_periods = group["long_periods"].get<uint64_t>();
  // Every sample after a series' first ends either a window or a long period (a series is a
  // thread on a CPU: tprof's forked child before its exec is one more), and the two alternate,
  // give or take a few: CI run AA (2026-12-05) had 5 more windows than long periods of 2,758, in
  // one series, with no throttle and no sample lost, where the same boot's jittered run had
  // none (the kernel's own alternation is hf_periods' check, without tprof). The fallback this
  // tells apart takes ten windows a long period.
  const uint64_t apart = windows > long_periods ? windows - long_periods : long_periods - windows;
  EXPECT_LE(apart, std::max<uint64_t>(3, long_periods / 200)) << group.dump();
  // Two samples every 110,000 cycles (a long period of 100,000, then a short one of 10,000), less
  // the cycles each overflow's interrupt comes late by, which QEMU delivers at a block's end, later
  // on a loaded host (pairs of 116,800 cycles seen in CI beside a build, 5 % fewer samples): the
  // fallback would take one every 10,000, five times as many.
  auto counts = Oracle("hf");
  const double samples = report["events"][0]["samples"].get<double>();
  const double expected = 2.0 * static_cast<double>(counts["cycles:u"]) / 110000;
  Print("hf " + check + ": " + group.dump() + ", " + std::to_string(samples) +
        " samples, expected about " + std::to_string(expected));
  EXPECT_GT(samples, 0.8 * expected);
  EXPECT_LT(samples, 1.2 * expected);
}

TEST(ArmLabHf, BurstTakesTheKernelPathAndCreditsTheShortWindowsOnly) {
  ExpectBurstOnTheKernelPath("burst");
  Check text = Ran("hf", "burst_text");
  ASSERT_EQ(text.status, 0) << text.Describe();
  EXPECT_NE(text.out.find("windows: the short periods of 10000 events only"), std::string::npos)
      << text.out.substr(0, 1500);
}

TEST(ArmLabHf, BurstWithJitterTakesTheKernelPathToo) { ExpectBurstOnTheKernelPath("burst_jitter"); }

// The designed page-fault rates of metric_oracle's long calls, from short windows on the real
// path (20,003 cycles after each 40,009): a sample of the run rather than all of it, so within the
// interval the windows give (about ±4 % for faults_heavy's ~700 faults in them).
TEST(ArmLabHf, FaultsPerKiloInstructionFollowsTheDesignInShortWindows) {
  ExpectFaultRatesOfTheDesign("hf", true);
}

// The seed's hard case, calls of ~160,000 cycles in turn, measured four ways (checks.sh): the long
// period alone (1,000,003 cycles: its windows span calls), the group sampled every 20,003 cycles
// (the fallback's sampling, on this kernel and, as the fallback itself, on n1's 6.1) and the
// kernel's alternating period (a 20,003-cycle window after each 100,003). Prints docs/armlab.md's
// table. The real path's short windows lie inside one call: compute, which never faults, gets
// none, and faults_heavy's rate stays above faults_light's. Neither short-window method meets the
// design here: a fault made right at a call's entry is mostly in a window that starts in the
// function before, which is discarded. On the same kernel, the real path, with two fifths of the
// samples, is no further off for faults_heavy than sampling every window, beyond their intervals.
TEST(ArmLabHf, ShortCallsPerMethod) {
  Check burst = Ran("hf", "short_burst");
  EXPECT_NE(burst.err.find("kernel mode (hf_sample_period)"), std::string::npos) << burst.err;
  Check fallback = Ran("n1", "short_fallback");
  EXPECT_NE(fallback.err.find("fallback mode"), std::string::npos) << fallback.err;
  auto long_period = FaultRates("hf", "short_long", "short_long_report");
  auto every = FaultRates("hf", "short_every", "short_every_report");
  auto fallen_back = FaultRates("n1", "short_fallback", "short_fallback_report");
  auto alternating = FaultRates("hf", "short_burst", "short_burst_report");
  for (const auto& [method, rates] :
       {std::pair{"long period", &long_period}, std::pair{"every window", &every},
        std::pair{"fallback on 6.1", &fallen_back}, std::pair{"alternating", &alternating}}) {
    std::string line = std::string("hf short calls, ") + method + ":";
    for (const char* f : kOracleFunctions) {
      const FaultRate& r = (*rates)[f];
      char cell[200];
      std::snprintf(cell, sizeof cell,
                    " %s %s %+.1f (designed %.4f, measured %.4f ±%.4f, share %.1f%%);", f,
                    r.designed == 0 ? "value" : "error %", r.Error(), r.designed,
                    r.measured.value_or(NAN), r.half_width, r.share);
      line += cell;
    }
    Print(line);
  }
  ASSERT_TRUE(alternating["compute"].measured);
  EXPECT_EQ(*alternating["compute"].measured, 0) << "a short window spanned calls";
  // faults_heavy: a few hundred faults in the real path's windows, an interval of about ±12 %.
  const FaultRate &real = alternating["faults_heavy"], &each = every["faults_heavy"];
  ASSERT_TRUE(real.measured);
  ASSERT_TRUE(each.measured);
  // The intervals are 95 % ones; their difference is judged at 99.9 % (z 3.29 against 1.96): at
  // 95 % a CI run in forty would fail on chance alone (one did, 58.01 against 57.98).
  const double allowance =
      100 * (3.29 / 1.96) * std::hypot(real.half_width, each.half_width) / real.designed;
  EXPECT_LE(std::abs(real.Error()), std::abs(each.Error()) + allowance)
      << "faults_heavy: the real path is further off than sampling every window";
  // faults_light makes about one fault per call, at its entry, so every short-window method
  // misses nearly all of them (the windows that hold them start in the function before and are
  // discarded): the real path's windows hold fewer than ten. Whether it catches 2 % or 5 % of them
  // depends on where its windows fall against the calls, not on how it credits them, so the two
  // methods are not ranked here; both must show the miss, as docs/trust.md's table says.
  for (const auto& [method, rates] :
       {std::pair{"every window", &every}, std::pair{"alternating", &alternating}}) {
    const FaultRate& light = (*rates)["faults_light"];
    ASSERT_TRUE(light.measured) << method;
    EXPECT_LT(light.Error(), -80) << method << ": faults_light's entry faults were credited";
  }
  EXPECT_GT(*alternating["faults_heavy"].measured, *alternating["faults_light"].measured);
}

// A clock sampled in user space only beside every page fault (checks.sh: user_clock), per
// function of metric_oracle: faults per ms of the CPU time the workload counted around its calls
// (user and kernel), against report's faults_per_ms and the reason it gives.
struct UserClockRate {
  double truth = 0;
  std::optional<double> value;
  double half_width = 0;
  std::string reason;
};

std::map<std::string, UserClockRate> UserClockRates(const std::string& boot) {
  std::map<std::string, UserClockRate> rates;
  Check recorded = Ran(boot, "user_clock");
  EXPECT_EQ(recorded.status, 0) << recorded.Describe();
  const json truth = json::parse(Slurp(recorded.dir / "truth.json"), nullptr, false);
  EXPECT_FALSE(truth.is_discarded()) << recorded.Describe();
  json report = JsonOf(boot, "user_clock_report");
  if (truth.is_discarded() || report.is_null()) return rates;
  const size_t column = MetricIndex(report, "faults_per_ms");
  for (const char* f : kOracleFunctions)
    rates[f].truth =
        truth[f]["designed-faults"].get<double>() / truth[f]["task-clock"].get<double>() * 1e6;
  for (const json& row : report["rows"]) {
    const std::string sym = row["keys"]["sym"];
    for (const char* f : kOracleFunctions)
      if (sym.find(std::string("::") + f + "(") != std::string::npos) {
        const json& metric = row["metrics"][column];
        if (metric["value"].is_number()) rates[f].value = metric["value"].get<double>();
        if (metric["ci95"].is_array() && metric["ci95"][0].is_number())
          rates[f].half_width =
              (metric["ci95"][1].get<double>() - metric["ci95"][0].get<double>()) / 2;
        if (metric["bias"].is_object()) rates[f].reason = metric["bias"]["reason"];
      }
  }
  for (const char* f : kOracleFunctions) {
    const UserClockRate& r = rates[f];
    Print(boot + " user-only clock, " + f + ": truth " + std::to_string(r.truth) + ", measured " +
          std::to_string(r.value.value_or(NAN)) + " +-" + std::to_string(r.half_width) +
          (r.reason.empty() ? "" : ", " + r.reason));
  }
  return rates;
}

// Linux 6.1 cannot read a clock in inherited events: record says what it gives up (the time the
// clock's samples leave out), and report says, on each faulting function, that the time was not
// read, rather than printing its rate as measured. compute never faults: 0, nothing to say.
TEST(ArmLabN1, AUserOnlyClockThisKernelCannotReadSaysSo) {
  Check recorded = Ran("n1", "user_clock");
  EXPECT_NE(recorded.err.find("cannot read a clock in inherited events"), std::string::npos)
      << recorded.err;
  auto rates = UserClockRates("n1");
  for (const char* f : {"faults_heavy", "faults_light"})
    EXPECT_NE(rates[f].reason.find("did not read"), std::string::npos) << f;
  EXPECT_EQ(rates["compute"].value.value_or(-1), 0);
  EXPECT_EQ(rates["compute"].reason, "");
}

// Linux 6.12 reads it: faults_heavy, a fifth of whose time here is the kernel's, says its rate
// reads high, with the value the time the clock's reads counted gives (a range where its call
// edges left time out too), and that value holds the truth within its own noise (the sampled
// value's, relatively). A value whose own interval is wide enough to hold the truth is not
// flagged (faults_light's few faults, an interval of some ±17 %, mostly; faults_heavy's once in
// a CI run, 24.1 ±3.7 against 20.9, neither flagged): then the interval must hold the truth, and
// a value that reads high beyond its interval without its reason fails here.
TEST(ArmLabHf, AUserOnlyClockReadsItselfAndSaysWhatItsSamplesLeaveOut) {
  Check recorded = Ran("hf", "user_clock");
  EXPECT_EQ(recorded.err.find("cannot read a clock"), std::string::npos) << recorded.err;
  auto rates = UserClockRates("hf");
  for (const char* f : {"faults_heavy", "faults_light"}) {
    const UserClockRate& r = rates[f];
    ASSERT_TRUE(r.value) << f;
    if (r.reason.empty()) {
      EXPECT_NEAR(*r.value, r.truth, r.half_width) << f << ": unflagged, outside its interval";
      continue;
    }
    EXPECT_NE(r.reason.find("clock in one mode"), std::string::npos) << f << ": " << r.reason;
    const size_t at = r.reason.find("this value is ");
    ASSERT_NE(at, std::string::npos) << f << ": " << r.reason;
    double a = 0, b = 0;
    const int read = std::sscanf(r.reason.c_str() + at, "this value is %lf to %lf", &a, &b);
    ASSERT_GE(read, 1) << r.reason;
    if (read == 1) b = a;
    const double noise = r.half_width / *r.value;
    EXPECT_GE(r.truth, std::min(a, b) * (1 - noise)) << f << ": " << r.reason;
    EXPECT_LE(r.truth, std::max(a, b) * (1 + noise)) << f << ": " << r.reason;
  }
  EXPECT_EQ(rates["compute"].value.value_or(-1), 0);
  EXPECT_EQ(rates["compute"].reason, "");
}

// The matrix's lab cells (checks.sh: matrix_cell): faults per kilo-instruction of metric_oracle
// by the kernel's burst windows, 20 recordings a cell, the faults spread through calls, at their
// entry or at their exit, on calls of tens of ms and of some eight windows. The truth is exact (the
// designed faults over the instructions the workload counted around its calls). Held, per cell,
// to what the host's matrix promises (metric_matrix_test.cpp): among values shown with neither a
// reason nor `~`, the truth inside the 95 % interval in at least 90 %, none outside twice the
// interval, and compute, which never faults, never confidently non-zero. Prints the figures for
// docs/metric-matrix.md.
TEST(ArmLabHf, MetricMatrixCells) {
  for (const char* placement : {"spread", "entry", "exit"})
    for (const char* length : {"long", "short"}) {
      const std::string cell = std::string("matrix_burst_") + placement + "_" + length;
      SCOPED_TRACE(cell);
      Check ran = Ran("hf", cell);
      ASSERT_EQ(ran.status, 0) << ran.Describe();
      EXPECT_EQ(ran.out, "") << "recordings or reports failed";
      int pairs = 0, biased = 0, wide = 0, wide_covered = 0, confident = 0, covered = 0, far = 0;
      std::vector<double> errors;
      std::string far_report;
      for (int r = 1; r <= 20; ++r) {
        const json truth =
            json::parse(Slurp(ran.dir / ("truth_" + std::to_string(r) + ".json")), nullptr, false);
        const json report =
            json::parse(Slurp(ran.dir / ("report_" + std::to_string(r) + ".json")), nullptr, false);
        ASSERT_FALSE(truth.is_discarded() || report.is_discarded()) << "recording " << r;
        const size_t column = MetricIndex(report, "faults_per_ki", "group deltas");
        for (const char* f : kOracleFunctions) {
          const double instructions = truth[f]["instructions"].get<double>();
          ASSERT_GT(instructions, 0) << f;
          const double designed = truth[f]["designed-faults"].get<double>() / instructions * 1000;
          const json* row = nullptr;
          for (const json& candidate : report["rows"])
            if (candidate["keys"]["sym"].get<std::string>().find(std::string("::") + f + "(") !=
                std::string::npos)
              row = &candidate;
          ++pairs;
          EXPECT_TRUE(row) << f << " has no row in report " << r << " (its top six)";
          if (!row) continue;
          const json& m = (*row)["metrics"][column];
          if (m.contains("bias") && !m["bias"].is_null()) {
            ++biased;
            continue;
          }
          if (!m["value"].is_number() || !m["ci95"].is_array() || !m["ci95"][0].is_number()) {
            ++wide;
            continue;
          }
          if (m["low_confidence"].get<bool>()) {
            ++wide;
            wide_covered += m["ci95"][0] <= designed && designed <= m["ci95"][1];
            continue;
          }
          const double value = m["value"], low = m["ci95"][0], high = m["ci95"][1];
          ++confident;
          covered += low <= designed && designed <= high;
          const double half = std::max(value - low, high - value);
          if (std::abs(value - designed) > 2 * half) {
            ++far;
            far_report += "\n  recording " + std::to_string(r) + ": " + f + " designed " +
                          std::to_string(designed) + ", shown " + std::to_string(value) + " [" +
                          std::to_string(low) + ", " + std::to_string(high) + "]";
          }
          if (designed == 0) {
            EXPECT_EQ(value, 0) << f << " recording " << r << ": never faults, shown confident";
          } else {
            errors.push_back(100 * std::abs(value - designed) / designed);
          }
        }
      }
      std::sort(errors.begin(), errors.end());
      const double coverage = confident ? 100.0 * covered / confident : NAN;
      char line[300];
      std::snprintf(
          line, sizeof line,
          "labmatrix| %s | hf burst 40009/20003 cycles | %d pairs | biased %.1f %% | ~ "
          "%.1f %% (covering %d) | confident %.1f %% | coverage %.1f %% | median error %.2f %%",
          cell.c_str(), pairs, 100.0 * biased / pairs, 100.0 * wide / pairs, wide_covered,
          100.0 * confident / pairs, coverage, errors.empty() ? NAN : errors[errors.size() / 2]);
      Print(line);
      EXPECT_EQ(far, 0) << "values shown without a reason twice their interval from the truth"
                        << far_report;
      if (confident >= 10) {
        EXPECT_GE(coverage, 90.0);
      }
    }
}

// The profiles come back to the host: an x86-64 tprof reads arm64 recordings, symbols embedded.
TEST(ArmLabHost, TheHostReadsTheArm64ProfileAsTheGuestDid) {
  const fs::path profile = Results() / "n1/period_record/p.tprof";
  ASSERT_TRUE(fs::exists(profile));
  auto report = tprof::testing::RunCommand({TPROF_BINARY, "report", "-i", profile, "--json"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  json host = json::parse(report.out);
  json guest = JsonOf("n1", "period_report");
  EXPECT_EQ(host["rows"], guest["rows"]);
  EXPECT_EQ(host["events"], guest["events"]);
}

// perf's own arm64 recording, imported on the host: the same function shares as perf's report
// in the guest and as tprof's recording of the same workload.
TEST(ArmLabHost, TheHostImportsPerfsArm64Recording) {
  const fs::path dir = Results() / "n1/perf_record";
  ASSERT_EQ(Ran("n1", "perf_record").status, 0) << Ran("n1", "perf_record").Describe();
  auto report = tprof::testing::RunCommand(
      {TPROF_BINARY, "report", "-i", dir / "perf.data", "--binary", dir / "lab_loop_fp", "--json"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  json host = json::parse(report.out);
  json tprof = JsonOf("n1", "period_report");
  // perf report --stdio lines: "    66.62%  lab_loop_fp  [.] heavy".
  std::map<std::string, double> perf_shares;
  std::istringstream lines(Ran("n1", "perf_report").out);
  std::string line;
  while (std::getline(lines, line)) {
    double share;
    char sym[256];
    if (std::sscanf(line.c_str(), " %lf%% [.] %255s", &share, sym) == 2) perf_shares[sym] = share;
  }
  for (const char* function : {"heavy", "light"}) {
    const json* imported = RowOf(host, function);
    const json* recorded = RowOf(tprof, function);
    ASSERT_TRUE(imported && recorded) << function << ": " << host["rows"].dump();
    const double share = (*imported)["events"][0]["self_percent"];
    EXPECT_NEAR(share, perf_shares[function], 0.005) << function << " against perf report";
    EXPECT_NEAR(share, (*recorded)["events"][0]["self_percent"].get<double>(), 0.2)
        << function << " against tprof's recording";
  }
  Print("host import of perf's arm64 perf.data: heavy " + std::to_string(perf_shares["heavy"]) +
        "%, light " + std::to_string(perf_shares["light"]) + "% in perf report");
}

// perf's own --call-graph dwarf recording of the binary without frame pointers, unwound on the
// x86-64 host from the arm64 registers and stack copies perf saved (the register layout comes
// from the file's recorded architecture, not the host's): every stack reaches main.
TEST(ArmLabHost, TheHostUnwindsPerfsArm64DwarfRecording) {
  const fs::path dir = Results() / "n1/perf_dwarf";
  ASSERT_EQ(Ran("n1", "perf_dwarf").status, 0) << Ran("n1", "perf_dwarf").Describe();
  auto report =
      tprof::testing::RunCommand({TPROF_BINARY, "report", "-i", dir / "perf.data", "--binary",
                                  dir / "lab_loop_nofp", "--folded", "--no-marks"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  uint64_t complete = 0, total = 0;
  for (const auto& [stack, period] : Folded(report.out)) {
    total += period;
    if (stack.find("main;run_rounds;middle;heavy") != std::string::npos ||
        stack.find("main;run_rounds;middle;light") != std::string::npos)
      complete += period;
  }
  ASSERT_GT(total, 0u) << report.err;
  EXPECT_GT(static_cast<double>(complete), 0.95 * static_cast<double>(total)) << report.out;
  // The unwinding statistics are printed: how many stacks were complete.
  EXPECT_NE(report.err.find("unwinding"), std::string::npos) << report.err;
  Print("host unwinding of perf's arm64 --call-graph dwarf recording: " +
        std::to_string(100.0 * static_cast<double>(complete) / static_cast<double>(total)) +
        "% of the period reaches main; " + report.err.substr(0, report.err.find('\n')));
}

}  // namespace
