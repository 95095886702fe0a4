// Per-function metrics against the truth, on any machine (software events: no PMU needed).
// metric_oracle's three functions cause page faults at designed, different rates (faults_heavy
// about twice faults_light, compute none) and count their own task-clock and page-faults around
// every call. tprof's faults per ms of CPU of each function, `report --metric`, by each way it
// measures, is held against that truth:
//   [g]    a leader-sampled group {task-clock:u,page-faults}:S, credited windows;
//   [s]    the two events sampled on their own with callchains, sampled periods over each
//          function's samples with the kernel's work below it (--children: the clock's samples
//          in the fault handler belong to the function that faulted);
//   burst  --burst 1 ms,50 us (on a kernel without hf_sample_period: the group sampled at the
//          short period, windows filtered the same way);
//   [g] kernel credited: the group with a clock that counts kernel time too, its samples in the
//          fault handler credited to the user function that faulted (report's default).
// The rates differ by design, so a window credited to the wrong function fails the comparison
// (checked below against the other functions' truths).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/format/profile_reader.h"
#include "core/format/profile_writer.h"
#include "test/support/flame_page_data.h"
#include "test/support/host_steal.h"
#include "test/support/metric_oracle_run.h"
#include "test/support/nm_symbols.h"
#include "test/support/run_command.h"
#include "test/support/test_programs.h"

namespace tprof {
namespace {

using namespace oracle;  // NOLINT: the oracle's vocabulary, shared with metric_matrix_test
using testing::RunCommand;

// Up to three recordings of `method` (8 rounds of 500 iterations): one `unfit` gives a reason
// against is printed and made again. The last is returned for the caller to ask `unfit` of once
// more (hold it to the truth, or skip); nullopt when a recording failed.
template <typename Unfit>
std::optional<Run> MeasureUpToThree(const Method& method, const std::string& dir, Unfit unfit) {
  auto run = Measure(method, dir, OracleWorkload{});
  for (int attempt = 1; run && attempt <= 3; ++attempt) {
    const std::string why = unfit(*run);
    if (why.empty()) break;
    std::printf("%s: recording %d not checked: %s\n", method.name.c_str(), attempt, why.c_str());
    if (attempt < 3) run = Measure(method, dir, OracleWorkload{});
  }
  return run;
}

// Why a recording is made again before it is held to the truth: set aside (SetAside), or, by
// sampled periods, missing the truth by their own 95 % interval for a faulting function (see
// EachMethodMatchesTheTruthPerFunction for the recurrence); "" when it is held to it.
std::string UnfitOrMissed(const Method& method, const Run& run) {
  if (std::string why = SetAside(method, run); !why.empty()) return why;
  if (method.source != "sampled periods") return "";
  bool missed = false;
  for (const std::string f : {"faults_heavy", "faults_light"}) {
    const Measured& m = run.measured.at(f);
    const double truth = run.truth.at(f);
    missed |= m.share >= 5 && m.low && m.high && (*m.low > truth || *m.high < truth);
  }
  if (!missed) return "";
  for (const std::string f : {"faults_heavy", "faults_light"}) {
    const Measured& m = run.measured.at(f);
    std::printf(
        "%s: %s truth %.3f/ms, measured %.3f/ms [%.3f, %.3f], mean page-fault period %.1f\n",
        method.name.c_str(), f.c_str(), run.truth.at(f), m.value.value_or(NAN), m.low.value_or(NAN),
        m.high.value_or(NAN), m.fault_period);
  }
  return "it missed the truth by its [s] interval (above)";
}

// Calls of tens of milliseconds: every method within 2 % of the truth for each function with at
// least 5 % of the samples, and exactly zero where the truth is zero.
TEST(MetricOracle, EachMethodMatchesTheTruthPerFunction) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  std::string unchecked;  // the methods the host left no recording to check
  for (const Method& method : Methods()) {
    // Each method is checked on a recording the host left whole (SetAside: for [s], also one the
    // kernel sampled fully). And an [s] 95 % interval may miss in one recording where a method
    // whose numbers are wrong misses in every one. So up to three recordings: one set aside, or
    // missing the truth by [s], is printed and made again, and the last one is held to the truth
    // below. ([s] misses were seen in CI in two runs of five, never here in 70 recordings:
    // faults_light 15-16 % under the truth and faults_heavy 4 % over, with no steal or
    // throttling. The figures fit light's last sampling period of each call, some 75 of its 500
    // faults, being counted in the next call of faults_heavy, as a sampled period is credited
    // where it ends; that needs periods far longer than the 10 seen here, so the mean page-fault
    // period is printed to show whether a recurrence had them.)
    auto run = MeasureUpToThree(method, dir.path(),
                                [&](const auto& r) { return UnfitOrMissed(method, r); });
    ASSERT_TRUE(run.has_value()) << method.name;
    if (!SetAside(method, *run).empty()) {
      unchecked += (unchecked.empty() ? "" : ", ") + method.name;
      continue;
    }
    // The design: rates apart, so that credit given to the wrong function shows.
    ASSERT_GT(run->truth["faults_heavy"], 1.3 * run->truth["faults_light"]);
    ASSERT_GT(run->truth["faults_light"], 0);
    ASSERT_EQ(run->truth["compute"], 0);
    for (const std::string& f : kFunctions) {
      const Measured& m = run->measured[f];
      const double truth = run->truth[f];
      std::printf("%-20s %-13s share %5.1f%%  truth %8.3f/ms  measured %8.3f/ms  error %+6.2f%%\n",
                  method.name.c_str(), f.c_str(), m.share, truth, m.value.value_or(NAN),
                  m.value ? ErrorPercent(*m.value, truth) : NAN);
      if (m.share < 5) continue;
      ASSERT_TRUE(m.value.has_value()) << method.name << " " << f;
      if (truth == 0) {
        EXPECT_EQ(*m.value, 0) << method.name << " " << f;
        continue;
      }
      // The target: [g] and burst within 2 %; [s] rests on far fewer samples (its
      // Poisson interval is some +-7 % here), so it is held to its interval.
      if (method.source == "sampled periods") {
        ASSERT_TRUE(m.low.has_value()) << method.name << " " << f;
        EXPECT_LE(*m.low, truth) << method.name << " " << f;
        EXPECT_GE(*m.high, truth) << method.name << " " << f;
      } else {
        EXPECT_LE(std::abs(ErrorPercent(*m.value, truth)), 2.0) << method.name << " " << f;
      }
      // Against a deliberately wrong attribution: the other functions' truths are far off.
      for (const std::string& other : kFunctions) {
        if (other == f) continue;
        EXPECT_GT(std::abs(ErrorPercent(*m.value, run->truth[other])), 2.0)
            << method.name << ": " << f << " would pass as " << other;
      }
    }
  }
  if (!unchecked.empty())
    GTEST_SKIP() << "not checked, three recordings set aside (above): " << unchecked;
}

// The 95 % intervals cover the truth: over 20 recordings per method, the truth lies inside the
// interval for at least 90 % of the (function, run) pairs with a nonzero truth, 36 of 40, as the
// issue asks. (Intervals of exactly 95 % would miss that in 5 % of runs; the ones shown are
// wider: over six CI runs of each method, Release and ASan, the least was 39 of 40.)
// One method's coverage (a test per method, so that each stays within its time limit under the
// sanitizers). The same figures under the sanitizers: CI's ASan+UBSan build (clang's) always ran
// them, 6-10 s a method.
constexpr int kCoverageRecordings = 20;
constexpr double kCoverageFloor = 0.90;

void CheckCoverage(const Method& method) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  int pairs = 0, covered = 0, recordings = 0, set_aside = 0;
  double worst = 0;
  // Sampled periods are checked on recordings the kernel sampled fully (KernelShortfall); the
  // others are set aside and replaced, up to as many again.
  while (recordings < kCoverageRecordings && set_aside < kCoverageRecordings) {
    auto run = Measure(method, dir.path(), OracleWorkload{2, "500"});
    ASSERT_TRUE(run.has_value()) << method.name;
    if (method.source == "sampled periods" && !KernelShortfall(*run).empty()) {
      std::printf("%s: a recording set aside: %s\n", method.name.c_str(),
                  KernelShortfall(*run).c_str());
      ++set_aside;
      continue;
    }
    ++recordings;
    for (const std::string f : {"faults_heavy", "faults_light"}) {
      const Measured& m = run->measured[f];
      if (!m.value || !m.low || m.share < 5) continue;
      ++pairs;
      const double truth = run->truth[f];
      covered += *m.low <= truth && truth <= *m.high;
      worst = std::max(worst, std::abs(ErrorPercent(*m.value, truth)));
    }
  }
  std::printf("%-20s coverage %d of %d (%.0f%%), worst error %.2f%%, %d recordings set aside\n",
              method.name.c_str(), covered, pairs, 100.0 * covered / std::max(pairs, 1), worst,
              set_aside);
  if (recordings < kCoverageRecordings)
    GTEST_SKIP() << method.name << ": the kernel's samples fell short in " << set_aside
                 << " recordings (above)";
  EXPECT_GE(pairs, 2 * kCoverageRecordings - 4) << method.name;
  EXPECT_GE(covered, kCoverageFloor * pairs) << method.name;
}

TEST(MetricOracle, IntervalsCoverTheTruthGroup) { CheckCoverage(Methods()[0]); }
TEST(MetricOracle, IntervalsCoverTheTruthSampled) { CheckCoverage(Methods()[1]); }
TEST(MetricOracle, IntervalsCoverTheTruthBurst) { CheckCoverage(Methods()[2]); }

// A window that ends in the kernel's fault handler counts for the function that faulted; with
// --kernel-rows the handler is a row of its own and the functions lose those faults, which the
// truth catches (the deliberately wrong attribution, run every time). The truth is what the
// workload's own counter counted around each function's calls; the windows a row discarded
// (spanning two rows, a throttle: more of them on a loaded host) hold faults no row is credited
// with, up to the row's share of discarded windows (seen beside a parallel build: faults_light
// credited 3,878 of 4,000, 3.05 % short, against a 3 % bound that left the discards out).
TEST(MetricOracle, KernelWorkCountsForTheUserFunctionThatFaulted) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string profile = dir.path() + "/k.tprof", truth_path = dir.path() + "/truth.json";
  auto recorded = RunCommand({kTprof, "record", "-q", "-e", "{task-clock,page-faults}:S", "-o",
                              profile, "--", kOracle, "8", "500", truth_path});
  ASSERT_EQ(recorded.exit_code, 0) << recorded.err;
  const nlohmann::json truth = nlohmann::json::parse(testing::ReadWholeFile(truth_path));
  std::map<std::string, std::pair<double, double>> windows;  // credited, discarded
  auto faults_of = [&](const std::vector<std::string>& extra, nlohmann::json* whole) {
    std::vector<std::string> args = {kTprof,   "report",      "-i",     profile,
                                     "--json", "--no-inline", "--sort", "dso,sym"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto report = RunCommand(args);
    EXPECT_EQ(report.exit_code, 0) << report.err;
    *whole = nlohmann::json::parse(report.out);
    std::map<std::string, double> faults;  // D:page-faults per function, and the kernel's rows
    for (const auto& row : (*whole)["rows"]) {
      const std::string sym = row["keys"]["sym"];
      std::string name = row["keys"]["dso"] == "[kernel.kallsyms]" ? "kernel" : "";
      for (const std::string& f : kFunctions)
        if (sym.find("::" + f + "(") != std::string::npos) name = f;
      if (name.empty() || row["groups"].empty()) continue;
      const auto& group = row["groups"][0];
      faults[name] += group["deltas"].value("page-faults", 0.0);
      windows[name].first += group.value("windows_credited", 0.0);
      windows[name].second += group.value("windows_discarded", 0.0);
    }
    return faults;
  };
  nlohmann::json credited_json, rows_json;
  auto credited = faults_of({}, &credited_json);
  const auto credited_windows = windows;
  auto rows = faults_of({"--kernel-rows"}, &rows_json);
  const auto& k = credited_json["kernel_work"];
  std::printf("kernel work: %s\n", k.dump().c_str());
  ASSERT_EQ(k["shown_as"], "user function");
  EXPECT_GT(k["kernel_samples"].get<int>(), 0) << "the clock never sampled the fault handler";
  EXPECT_EQ(k["credited"], k["kernel_samples"]) << "every sample is a user thread's";
  EXPECT_EQ(rows_json["kernel_work"]["shown_as"], "kernel functions");
  for (const std::string f : {"faults_heavy", "faults_light"}) {
    const double counted = truth[f]["page-faults"].get<double>();
    const auto [kept, discarded] = credited_windows.at(f);
    const double discarded_share = kept + discarded > 0 ? discarded / (kept + discarded) : 0;
    std::printf(
        "%-13s counted %6.0f  credited %6.0f (%.1f %% of its windows discarded)  --kernel-rows "
        "%6.0f\n",
        f.c_str(), counted, credited[f], 100 * discarded_share, rows[f]);
    EXPECT_LE(credited[f], 1.03 * counted) << f;
    EXPECT_GE(credited[f], (0.97 - discarded_share) * counted) << f;
    EXPECT_LT(rows[f], 0.97 * counted) << f << ": the kernel rows' faults were not missed";
  }
  EXPECT_EQ(credited["compute"], 0);
  EXPECT_EQ(credited.count("kernel"), 0u) << "no kernel rows when their work is credited";
  // With kernel rows, the fault handler's rows are there, and the faults of windows that run
  // from a function into them are discarded with those windows: lost to every row.
  EXPECT_EQ(rows.count("kernel"), 1u) << "--kernel-rows shows the fault handler's rows";
}

// The metric-coloured flame graph on the [s] recording: each oracle function's frame carries
// its faults per ms within one legend step of the truth (and the grey rule where it has too few
// samples of page-faults: compute takes none). Its rates rest on sampled periods, so, as for
// EachMethodMatchesTheTruthPerFunction, a recording the kernel sampled short is made again (a CI
// host that stole 2.2 s of a 1 s run left the clock's samples at 0.52 of the counted clock and
// every frame's rate high: 90 faults/ms against 54), three tries, then a skip with the figures.
TEST(MetricOracle, FlameGraphColoursEachFrameByTheUsersMetric) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  const Method& sampled = Methods()[1];
  ASSERT_EQ(sampled.source, "sampled periods");
  // Made again as the per-function test makes its [s] recordings: the frames' colours are the
  // same sampled periods, and a recording that misses the truth by their own interval (the
  // recurrence that test describes) is one where every method of colouring would too. Seen
  // twice, in the local suite beside the memory-limit tests and in a clean-clone CI run under
  // ASan: faults_heavy 97.6 and 94.7 faults/ms against truths of 109.1 and 107.8, with
  // faults_light over (43.0 and 41.5 against 32.6 and 37.0), a legend step of 10.
  auto run = MeasureUpToThree(sampled, dir.path(),
                              [&](const auto& r) { return UnfitOrMissed(sampled, r); });
  ASSERT_TRUE(run.has_value());
  if (!KernelShortfall(*run).empty()) GTEST_SKIP() << "three recordings set aside (above)";
  // Measure's recording, and its truth: the designed faults per ms of counted task-clock.
  const std::string profile = dir.path() + "/p.tprof", page = dir.path() + "/f.html";
  constexpr int kMinSamples = 10;  // below it a frame is grey (the page's rule)
  auto drawn = RunCommand({kTprof, "report", "-i", profile, "--flamegraph", page, "--no-inline",
                           "--metric", kMetric, "--color", "metric:faults_per_ms",
                           "--color-min-samples", std::to_string(kMinSamples)});
  ASSERT_EQ(drawn.exit_code, 0) << drawn.err;
  const nlohmann::json data = FlamePageData(page);
  ASSERT_TRUE(data.is_object());
  const double step = data["scale"]["step"].get<double>();
  EXPECT_NE(data["scale"]["title"].get<std::string>().find("faults_per_ms"), std::string::npos);
  const auto& columns = data["columnNames"];
  const size_t fault_samples = FlamePageColumn(data, "page-faults samples"),
               clock_samples = FlamePageColumn(data, "task-clock samples");
  ASSERT_LT(fault_samples, columns.size()) << columns.dump();
  ASSERT_LT(clock_samples, columns.size()) << columns.dump();
  std::map<std::string, int> coloured;
  for (size_t n = 0; n < data["name"].size(); ++n) {
    const std::string name = data["names"][data["name"][n].get<size_t>()];
    for (const std::string& f : kFunctions) {
      if (name.find("::" + f + "(") == std::string::npos) continue;
      const double expected = run->truth[f];
      if (data["value"][n].is_null()) {
        // Grey by the page's rule: compute, which never faults, and a frame of one of the
        // others with too few samples. A frame-pointer walk from a sample in a function's
        // prologue or epilogue skips its caller, so a faulting function also shows, now and
        // then, right under __libc_start_call_main (in a CI run, and here in 2 of 108 runs beside a
        // CPU hog: one clock sample, no fault samples).
        const double fewest = std::min(data["columns"][fault_samples][n].get<double>(),
                                       data["columns"][clock_samples][n].get<double>());
        EXPECT_TRUE(f == "compute" || fewest < kMinSamples)
            << "frame " << n << " of " << f << " is grey with " << fewest << " samples";
        continue;
      }
      const double value = data["value"][n].get<double>();
      std::printf("%-13s frame value %8.3f  truth %8.3f  step %g\n", f.c_str(), value, expected,
                  step);
      EXPECT_NEAR(value, expected, step) << f;
      // The other faulting function's colour would be more than a step away.
      const std::string other = f == "faults_heavy" ? "faults_light" : "faults_heavy";
      if (f != "compute") {
        EXPECT_GT(std::abs(value - run->truth[other]), step) << f << " would pass as " << other;
      }
      ++coloured[f];
    }
  }
  EXPECT_GE(coloured["faults_heavy"], 1);
  EXPECT_GE(coloured["faults_light"], 1);
  // A metric the frames cannot have: a usage error that names those there are.
  auto unknown = RunCommand(
      {kTprof, "report", "-i", profile, "--flamegraph", page, "--color", "metric:nonesuch"});
  EXPECT_EQ(unknown.exit_code, 2) << unknown.err;
  EXPECT_NE(unknown.err.find("nonesuch"), std::string::npos) << unknown.err;
}

// The seed's hard case: functions of 25-80 us in turn. Prints each method's error per function
// (docs/trust.md's table; no method measures calls this short well on a kernel without
// hf_sample_period). Asserted: windows longer than the calls credit compute, which never faults,
// with faults it never made (both ends of a window in two of its calls, the others run between).
TEST(MetricOracle, ShortCallsPerMethod) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  int group_methods_measured = 0;
  for (const Method& method : Methods()) {
    auto run = Measure(method, dir.path(), OracleWorkload{2000, "1"});
    ASSERT_TRUE(run.has_value()) << method.name;
    for (const std::string& f : kFunctions) {
      const Measured& m = run->measured[f];
      const double truth = run->truth[f];
      std::printf(
          "short calls %-20s %-13s share %5.1f%%  truth %8.3f/ms  measured %8.3f/ms  "
          "error %+7.2f%%  interval [%.3f, %.3f]\n",
          method.name.c_str(), f.c_str(), m.share, truth, m.value.value_or(NAN),
          m.value ? ErrorPercent(*m.value, truth) : NAN, m.low.value_or(NAN), m.high.value_or(NAN));
    }
    if (method.name.rfind("[g]", 0) == 0) {
      // On a loaded machine a method's compute row can have too few samples for any value
      // (seen once for the kernel-credited one, at a 7 % share): where there is a value it is
      // not zero, and at least one group method has one.
      const std::optional<double>& compute = run->measured["compute"].value;
      if (compute) {
        EXPECT_GT(*compute, 0) << method.name << ": windows spanning calls";
        ++group_methods_measured;
      }
    }
  }
  EXPECT_GT(group_methods_measured, 0) << "no group method gave compute a value";
}

// The window method's two biases, fed to it by design, must be named on the values they move:
// faults at each call's entry or exit (edges), and calls far shorter than the window in step with
// it (spans, aliasing). Every value whose truth lies outside twice its interval carries a
// reason (the rule; a 95 % interval misses by less one time in twenty, which the matrix
// counts as coverage: seen once, faults_heavy 168.80 [167.95, 169.66] against 167.91, on a run
// beside a parallel build), and compute (which never faults) is never shown with a confident
// non-zero rate without one. The even spread, calls of some 7 windows, is the control: no
// reason. On the build before the detectors every value came out unflagged, far outside.
void ExpectMissesCarryAReason(const std::string& cell, const Run& run) {
  for (const std::string& f : kFunctions) {
    const Measured& m = run.measured.at(f);
    const double truth = run.truth.at(f);
    std::printf("%s %s\n", cell.c_str(), Shown(f, m, truth).c_str());
    if (!m.value || !m.low || !m.high) continue;
    const double half_width = (*m.high - *m.low) / 2;
    if (std::abs(truth - *m.value) > 2 * half_width) {
      EXPECT_FALSE(m.bias.empty()) << cell << ": " << Shown(f, m, truth);
    }
    if (f == "compute" && *m.value != 0 && !m.low_confidence) {
      EXPECT_FALSE(m.bias.empty()) << cell << ": " << Shown(f, m, truth);
    }
  }
}

TEST(MetricOracle, EventsAtCallEdgesAreNamed) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  const Method& group = Methods()[0];
  for (const std::string placement : {"entry", "exit"}) {
    auto run = Measure(group, dir.path(), OracleWorkload{100, "50", placement});
    ASSERT_TRUE(run.has_value()) << placement;
    if (std::string why = HostSteal(*run); !why.empty()) GTEST_SKIP() << why;
    ExpectMissesCarryAReason("faults at " + placement, *run);
    // By design the edges hold most of a faulting function's faults: both are named.
    for (const std::string f : {"faults_heavy", "faults_light"})
      EXPECT_NE(run->measured.at(f).bias.find("call edges"), std::string::npos)
          << placement << ": " << Shown(f, run->measured.at(f), run->truth.at(f));
  }
  auto control = Measure(group, dir.path(), OracleWorkload{100, "50", "spread"});
  ASSERT_TRUE(control.has_value());
  if (std::string why = HostSteal(*control); !why.empty()) GTEST_SKIP() << why;
  ExpectMissesCarryAReason("faults spread", *control);
  // The window method's own detectors stay quiet on faults spread through the calls. (The
  // recording also samples every fault on its own, and the clock's samples may fall in step
  // with the 100 us calls: then the methods disagree, said on both values, which is the truth.)
  for (const std::string& f : kFunctions) {
    const std::string& bias = control->measured.at(f).bias;
    EXPECT_TRUE(bias.empty() || bias.rfind("methods disagree", 0) == 0)
        << Shown(f, control->measured.at(f), control->truth.at(f));
  }
}

// Calls of 25-80 us against a 200 us clock period: the round of three calls is near the period
// (or a fraction of it), so the windows that stay in a function hold whole rounds. The events
// are also sampled on their own, and the window method's values that disagree with theirs say so.
TEST(MetricOracle, WindowsSpanningCallsAreNamed) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  const Method both{"[g] and [s], -c 200000",
                    {"-e", "{task-clock,page-faults}:S,page-faults", "-c", "200000"},
                    "group deltas",
                    {}};
  auto run = Measure(both, dir.path(), OracleWorkload{2000, "1"});
  ASSERT_TRUE(run.has_value());
  if (std::string why = HostSteal(*run); !why.empty()) GTEST_SKIP() << why;
  ExpectMissesCarryAReason("short calls, both methods", *run);
}

// A function that never faults, between whose 2 ms calls runs a 10 us call that faults 4 times:
// the group's 250 us windows that start and end in it step over those calls without a sample in
// them, and credit their faults to it; most of its windows lie inside one call, so their ends do
// not show it (alone, [g] read 1.87 +-0.12 faults/ms against a truth of 0, unflagged). `record
// {..}:S` samples the faults on their own too by default, and the two methods' disagreement
// names the value. Fails if the default recording shows the function's rate confidently wrong.
TEST(MetricOracle, WindowsSteppingOverShortCallsAreNamed) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string profile = dir.path() + "/step.tprof";
  auto record = [&](const std::vector<std::string>& extra) {
    return RecordStepOver([](const std::vector<std::string>& args) { return RunCommand(args); },
                          kTprof, STEP_OVER_BINARY, profile, extra);
  };
  const std::string f = "step_over_work";
  auto both = record({});
  ASSERT_TRUE(both.has_value());
  const Measured& g = both->grouped;
  ASSERT_TRUE(g.value && g.low && g.high) << Shown(f, g, both->truth);
  const bool holds = *g.low <= both->truth && both->truth <= *g.high;
  std::printf("[g] with the faults sampled too: %s\n", Shown(f, g, both->truth).c_str());
  EXPECT_TRUE(holds || !g.bias.empty() || g.low_confidence)
      << "a confident wrong value: " << Shown(f, g, both->truth);
  // The faults sampled on their own are in the same recording.
  ASSERT_TRUE(both->has_sampled) << "no faults_per_ms from the faults sampled on their own";
  std::printf("[s] in the same recording: %s\n", Shown(f, both->sampled, both->truth).c_str());
  // What the window method alone shows, printed (its own detectors see only the stepped-over
  // calls that a sample happened to land in).
  auto alone = record({"--no-member-samples"});
  ASSERT_TRUE(alone.has_value());
  std::printf("[g] alone (--no-member-samples): %s\n",
              Shown(f, alone->grouped, alone->truth).c_str());
}

// The touching call of the step-over workload (its 4 faults at once, 5-9 us a call, between
// 100 us calls of work) beside a 17-23 kHz clock, each event sampled on its own: the clock's
// share of so short a call depends on where in the loop its fixed period lands, and came out
// 10-90 % high in 8 of 19 recordings at 20 kHz, 7 of them shown as measured (1219 +-119 faults/ms
// against its own 745), 4 of 4 at 17 kHz (one unflagged) and 1 of 4 at 23 kHz (unflagged).
// Every fault lands in the call, so the faults cannot show it entered; the clock's own samples
// do, none of them following one in the call. Fails if its rate is shown confident and outside
// its interval, or shown without a reason at all (its calls are shorter than the period by
// design), or if the work that never faults reads a confident non-zero rate.
TEST(MetricOracle, AShortCallThatFaultsBetweenLongOnesIsNamed) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string profile = dir.path() + "/touch.tprof";
  // The rates it was seen at: 20 kHz (a loop of some 2.2 periods), 17 kHz (2 periods) and 23 kHz,
  // three recordings each.
  int recordings = 0, outside = 0, flagged = 0;
  for (const char* rate : {"20000", "17000", "23000"}) {
    for (int run = 0; run < 3; ++run) {
      SCOPED_TRACE(std::string("-F ") + rate + ", recording " + std::to_string(run));
      auto recorded =
          RunCommand({kTprof, "record", "-q", "-F", rate, "-m", "8", "-e", "task-clock,page-faults",
                      "-o", profile, "--", STEP_OVER_BINARY, "1", "100"});
      ASSERT_EQ(recorded.exit_code, 0) << recorded.err;
      long work_faults = -1, touch_faults = -1;
      double work_ns = 0, touch_ns = 0, touch_own_ns = 0;
      ASSERT_EQ(
          std::sscanf(recorded.out.c_str(),
                      "work_faults %ld work_ns %lf touch_faults %ld touch_ns %lf touch_own_ns %lf",
                      &work_faults, &work_ns, &touch_faults, &touch_ns, &touch_own_ns),
          5)
          << recorded.out;
      ASSERT_GT(touch_own_ns, 0) << recorded.out;
      const double truth = static_cast<double>(touch_faults) / touch_own_ns * 1e6;
      auto report = RunCommand(
          {kTprof, "report", "-i", profile, "--json", "--sort", "sym", "--metric", kMetric});
      ASSERT_EQ(report.exit_code, 0) << report.err;
      const nlohmann::json j = nlohmann::json::parse(report.out);
      const int column = FaultsPerMsColumn(j, "sampled periods");
      ASSERT_GE(column, 0) << j["metrics"].dump();
      std::map<std::string, Measured> measured;
      for (const auto& row : j["rows"]) {
        const std::string sym = row["keys"]["sym"].get<std::string>();
        if (sym == "step_over_touch" || sym == "step_over_work")
          measured[sym] = ValueOf(row["metrics"][column]);
      }
      ASSERT_EQ(measured.size(), 2u) << report.out.substr(0, 2000);
      const Measured& touch = measured["step_over_touch"];
      std::printf("-F %s: %s\n", rate, Shown("step_over_touch", touch, truth).c_str());
      ASSERT_TRUE(touch.value && touch.low && touch.high) << Shown("step_over_touch", touch, truth);
      const bool holds = *touch.low <= truth && truth <= *touch.high;
      ++recordings;
      outside += !holds;
      flagged += !touch.bias.empty();
      EXPECT_TRUE(holds || !touch.bias.empty() || touch.low_confidence)
          << "a confident wrong value: " << Shown("step_over_touch", touch, truth);
      EXPECT_FALSE(touch.bias.empty()) << Shown("step_over_touch", touch, truth);
      const Measured& work = measured["step_over_work"];
      EXPECT_TRUE(!work.value || *work.value == 0 || !work.bias.empty() || work.low_confidence)
          << Shown("step_over_work", work, static_cast<double>(work_faults) / work_ns * 1e6);
    }
  }
  std::printf("step_over_touch: %d recordings, %d outside their interval, %d flagged\n", recordings,
              outside, flagged);
}

// A clock sampled in user space only (what a user who is not root records; here as root, with
// :u) beside every fault sampled, on calls of about 1 ms in a shuffled order: the kernel's
// handling of a faulting function's faults, much of its time, is left out of the clock's
// samples, and its faults per ms read high (seen before record had the clock read itself:
// faults_heavy 165.8 +-10.4 against a truth of 88.7, shown with no reason). faults_heavy (some
// 40 % of its time in the kernel) now says so, with the value the time the clock's reads counted
// gives: that value (a range where the windows across its call edges left time out too, some of
// which may be its own) holds the truth within its own noise, which is the sampled value's,
// relatively. faults_light (8 %) says so where that time moves its value beyond its interval,
// and otherwise its interval holds the truth. The function that never faults reads 0 and says
// nothing. Faults spread through the calls, at their entry and at their exit.
TEST(MetricOracle, AUserOnlyClockSaysWhatItsSamplesLeaveOut) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  const Method user_clock = EveryFaultMethod("[s] every fault, user-only clock", "task-clock:u");
  bool lost = false;
  for (const std::string placement : {"spread", "entry", "exit"}) {
    auto run = Measure(user_clock, dir.path(), OracleWorkload{60, "40", placement, "random"});
    ASSERT_TRUE(run.has_value()) << placement;
    if (std::string why = HostSteal(*run); !why.empty()) GTEST_SKIP() << why;
    for (const std::string f : {"faults_heavy", "faults_light"}) {
      const Measured& m = run->measured.at(f);
      const double truth = run->truth.at(f);
      std::printf("%s %s\n", placement.c_str(), Shown(f, m, truth).c_str());
      ASSERT_TRUE(m.value && m.low && m.high) << placement << ": " << Shown(f, m, truth);
      if (m.bias.starts_with("samples lost")) {
        // The kernel's ring buffer overflowed (the sanitizers slow the recorder): the value says
        // so, which comes first; the clock's left-out time cannot be judged here.
        lost = true;
        continue;
      }
      if (f == "faults_light" && m.bias.empty()) {
        EXPECT_TRUE(*m.low <= truth && truth <= *m.high)
            << placement << ": unflagged, outside its interval: " << Shown(f, m, truth);
        continue;
      }
      EXPECT_NE(m.bias.find("clock in one mode"), std::string::npos)
          << placement << ": " << Shown(f, m, truth);
      const auto counted = CountedValue(m.bias);
      ASSERT_TRUE(counted.has_value()) << placement << ": " << Shown(f, m, truth);
      const double noise = (*m.high - *m.low) / 2 / *m.value;
      const double low = std::min(counted->first, counted->second),
                   high = std::max(counted->first, counted->second);
      EXPECT_GE(truth, low * (1 - noise)) << placement << ": " << Shown(f, m, truth);
      EXPECT_LE(truth, high * (1 + noise)) << placement << ": " << Shown(f, m, truth);
    }
    const Measured& compute = run->measured.at("compute");
    EXPECT_EQ(compute.value.value_or(-1), 0) << Shown("compute", compute, 0);
    EXPECT_TRUE(compute.bias.empty() || compute.bias.starts_with("samples lost"))
        << Shown("compute", compute, 0);
  }
  if (lost) GTEST_SKIP() << "the kernel lost samples in some recordings: not judged there";
}

// Copies a profile record by record, leaving out the clock samples `drop` picks: what a timer
// that missed those ticks would have recorded (its count, read in the next sample, kept them).
class MissedTicksCopy : public RecordVisitor {
 public:
  MissedTicksCopy(ProfileWriter* writer, std::function<bool(const Sample&)> drop)
      : writer_(writer), drop_(std::move(drop)) {}
  void OnSample(const Sample& s) override {
    if (drop_(s))
      ++dropped;
    else
      Keep(writer_->Write(s));
  }
  void OnMmap(const MmapRecord& r) override { Keep(writer_->Write(r)); }
  void OnComm(const CommRecord& r) override { Keep(writer_->Write(r)); }
  void OnTask(const TaskRecord& r) override { Keep(writer_->Write(r)); }
  void OnLost(const LostRecord& r) override { Keep(writer_->Write(r)); }
  void OnThrottle(const ThrottleRecord& r) override { Keep(writer_->Write(r)); }

  size_t dropped = 0;
  bool ok = true;

 private:
  void Keep(const Status& status) { ok &= status.ok(); }
  ProfileWriter* writer_;
  std::function<bool(const Sample&)> drop_;
};

// The user function a sample was taken in: its pc, or for a sample in the kernel the user pc that
// entered it (after the callchain's user context marker); 0 when there is none.
uint64_t UserPc(const Sample& s) {
  constexpr uint64_t kUserContext = static_cast<uint64_t>(-512);  // PERF_CONTEXT_USER
  if (s.ip < (uint64_t{1} << 63)) return s.ip;
  for (size_t i = 0; i + 1 < s.callchain.size(); ++i)
    if (s.callchain[i] == kUserContext) return s.callchain[i + 1];
  return 0;
}

// A timer clock in both modes misses ticks when its interrupt comes late or not at all (a busy
// host holding the virtual CPU): seen in one CI run's recording of nested 1 ms calls, where
// faults_light read 16 % high and the caller 5.6 %, unflagged. Here the misses are made: a real
// recording of 1 ms calls with every fault sampled, copied without 2 of every 20 of faults_heavy's
// clock samples (stretches of two ticks; its reads, which the clock takes beside other events,
// keep the time). The copy's faults_heavy reads some 11 % high, beyond its interval, and must say
// `clock missed ticks` with the value that time gives, which holds the truth within the sampled
// value's own noise; faults_light and compute, whose samples were all kept, must not.
TEST(MetricOracle, AClockThatMissedTicksSaysSoWhereTheyFell) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  const Method every_fault = EveryFaultMethod("[s] every fault, clock 20 kHz", "task-clock");
  const OracleWorkload workload{80, "40", "spread", "turns"};
  auto run = Measure(every_fault, dir.path(), workload);
  ASSERT_TRUE(run.has_value());
  if (std::string why = KernelShortfall(*run); !why.empty()) GTEST_SKIP() << why;
  // (A loss is named first, before any clock's reason: the sanitizers slow the recorder.)
  if (run->lost) GTEST_SKIP() << "the kernel lost " << run->lost << " samples: not judged";
  const std::string profile = dir.path() + "/p.tprof", copy = dir.path() + "/missed.tprof";

  testing::NmSymbols symbols(kOracle);
  ASSERT_TRUE(symbols.error.empty()) << symbols.error;
  auto reader = ProfileReader::OpenFile(profile);
  ASSERT_TRUE(reader.ok()) << reader.error().message();
  ASSERT_EQ(reader->events()[0].name, "task-clock");
  // The oracle's text mapping, to name a pc by file offset.
  struct Oracle : RecordVisitor {
    void OnMmap(const MmapRecord& m) override {
      if (m.filename.ends_with("/tprof_metric_oracle") && m.executable) maps.push_back(m);
    }
    bool reads_callers() const override { return false; }
    std::vector<MmapRecord> maps;
  } oracle;
  ASSERT_TRUE(reader->ReadRecords(oracle).ok());
  ASSERT_FALSE(oracle.maps.empty());
  const auto function_of = [&](uint64_t pc) -> std::string {
    for (const MmapRecord& m : oracle.maps)
      if (pc >= m.start && pc < m.start + m.length)
        return symbols.AtFileOffset(pc - m.start + m.page_offset);
    return "";
  };
  size_t heavy_ticks = 0;
  const auto drop = [&](const Sample& s) {
    if (s.event != 0 || function_of(UserPc(s)).find("faults_heavy") == std::string::npos)
      return false;
    return ++heavy_ticks % 20 >= 18;
  };
  auto writer = ProfileWriter::CreateFile(copy, reader->metadata(), reader->events());
  ASSERT_TRUE(writer.ok()) << writer.error().message();
  MissedTicksCopy copier(writer->get(), drop);
  ASSERT_TRUE(reader->ReadRecords(copier).ok());
  ASSERT_TRUE(copier.ok);
  ASSERT_TRUE((*writer)->Finish({}).ok());
  ASSERT_GT(heavy_ticks, 1000u) << "too few of faults_heavy's clock samples found by name";
  EXPECT_NEAR(static_cast<double>(copier.dropped), heavy_ticks / 10.0, 2);

  oracle::Run missed = *run;
  missed.measured.clear();
  ASSERT_TRUE(ReadMeasured(every_fault, copy, FunctionsOf(workload), &missed));
  const Measured& before = run->measured.at("faults_heavy");
  const Measured& heavy = missed.measured.at("faults_heavy");
  const double truth = run->truth.at("faults_heavy");
  std::printf("recorded: %s\nwithout 1 in 10 of its ticks: %s\n",
              Shown("faults_heavy", before, truth).c_str(),
              Shown("faults_heavy", heavy, truth).c_str());
  ASSERT_TRUE(before.value && heavy.value && heavy.low && heavy.high);
  EXPECT_NEAR(*heavy.value / *before.value, 20.0 / 18, 0.02);
  EXPECT_TRUE(truth < *heavy.low) << "the copy was meant to read beyond its interval";
  EXPECT_TRUE(heavy.bias.starts_with("clock missed ticks")) << Shown("faults_heavy", heavy, truth);
  const auto counted = CountedValue(heavy.bias);
  ASSERT_TRUE(counted.has_value()) << heavy.bias;
  const double noise = (*heavy.high - *heavy.low) / 2 / *heavy.value;
  EXPECT_GE(truth, std::min(counted->first, counted->second) * (1 - noise)) << heavy.bias;
  EXPECT_LE(truth, std::max(counted->first, counted->second) * (1 + noise)) << heavy.bias;
  for (const std::string f : {"faults_light", "compute"}) {
    const Measured& m = missed.measured.at(f);
    EXPECT_EQ(m.bias.find("clock missed ticks"), std::string::npos)
        << Shown(f, m, run->truth.at(f));
  }
}

// The same clock recorded by perf, which does not read it: the faulting functions' values say
// the time left out was not measured, rather than nothing.
TEST(MetricOracle, AUserOnlyClockPerfDidNotReadSaysSo) {
  if (::access(kPerf.c_str(), X_OK) != 0) GTEST_SKIP() << "no perf";
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string data = dir.path() + "/perf.data", truth = dir.path() + "/truth.json";
  auto recorded = RunCommand({kPerf, "record", "-q", "-F", "20000", "-e", "task-clock:u", "-e",
                              "page-faults/period=1/", "-o", data, "--", kOracle, "40", "40", truth,
                              "spread", "random"});
  ASSERT_EQ(recorded.exit_code, 0) << recorded.err;
  auto report = RunCommand({kTprof, "report", "-i", data, "--json", "--no-inline", "--sort", "sym",
                            "--metric", kMetric});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  const nlohmann::json j = nlohmann::json::parse(report.out);
  const int column = FaultsPerMsColumn(j, "sampled periods");
  ASSERT_GE(column, 0) << j["metrics"].dump();
  std::map<std::string, Measured> measured;
  for (const auto& row : j["rows"])
    for (const std::string& f : kFunctions)
      if (row["keys"]["sym"].get<std::string>().find("::" + f + "(") != std::string::npos)
        measured[f] = ValueOf(row["metrics"][column]);
  ASSERT_EQ(measured.size(), 3u) << report.out.substr(0, 2000);
  // (Where perf's ring buffer overflowed, that reason comes first.)
  for (const std::string f : {"faults_heavy", "faults_light"}) {
    if (measured[f].bias.starts_with("samples lost")) continue;
    EXPECT_NE(measured[f].bias.find("did not read"), std::string::npos) << Shown(f, measured[f], 0);
  }
  EXPECT_TRUE(measured["compute"].bias.empty() ||
              measured["compute"].bias.starts_with("samples lost"))
      << Shown("compute", measured["compute"], 0);
}

// A ring buffer of one page beside every fault sampled, a 20 kHz clock and 2 KiB stack copies
// (a sample fills half the page): the kernel loses about a third of the samples (without the
// copies CI's machine lost 190, too few to move any value), which may all have been one event's. A
// frame whose value that loss could move beyond its interval is marked, with the reason in its
// tooltip; one it could not move is not. The rule is checked frame by frame from the page's own
// counts and the recorder's count of lost samples.
TEST(MetricOracle, LostSamplesMarkTheFramesTheyMayMove) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string profile = dir.path() + "/lost.tprof", page = dir.path() + "/lost.html";
  auto recorded = RunCommand({kTprof, "record", "-m", "1", "-F", "20000", "--call-graph", "fp,2048",
                              "-e", "task-clock,software/config=2,period=1,name=page-faults/", "-o",
                              profile, "--", STEP_OVER_BINARY, "1", "100"});
  ASSERT_EQ(recorded.exit_code, 0) << recorded.err;
  unsigned long long lost = 0;
  const size_t at = recorded.err.find(" lost (");
  ASSERT_NE(at, std::string::npos) << recorded.err;
  size_t from = recorded.err.rfind(' ', at - 1);
  lost = std::strtoull(recorded.err.c_str() + from + 1, nullptr, 10);
  ASSERT_GT(lost, 0u) << "the kernel lost no samples into a one-page buffer: " << recorded.err;
  auto drawn = RunCommand({kTprof, "report", "-i", profile, "--flamegraph", page, "--metric",
                           kMetric, "--color", "metric:faults_per_ms"});
  ASSERT_EQ(drawn.exit_code, 0) << drawn.err;
  const nlohmann::json data = FlamePageData(page);
  ASSERT_TRUE(data.is_object());
  ASSERT_TRUE(data.contains("reasons")) << "no frame says samples were lost (" << lost << ")";
  const auto& columns = data["columnNames"];
  const size_t fault_samples = FlamePageColumn(data, "page-faults samples"),
               clock_samples = FlamePageColumn(data, "task-clock samples");
  ASSERT_LT(fault_samples, columns.size()) << columns.dump();
  // The root's samples per event: the share lost samples may have been of each.
  const double faults_kept = data["columns"][fault_samples][0].get<double>(),
               clock_kept = data["columns"][clock_samples][0].get<double>();
  const double worst = std::max(static_cast<double>(lost) / (faults_kept + lost),
                                static_cast<double>(lost) / (clock_kept + lost));
  size_t frames = 0, flagged = 0;
  for (size_t i = 0; i < data["value"].size(); ++i) {
    if (data["value"][i].is_null() || data["halfWidth"][i].is_null()) continue;
    const double value = data["value"][i].get<double>(), hw = data["halfWidth"][i].get<double>();
    if (value <= 0) continue;
    ++frames;
    const bool expected = worst * value > hw;
    const std::string key = std::to_string(i);
    const bool has_reason = data["reasonOf"].contains(key);
    const std::string reason =
        has_reason ? data["reasons"][data["reasonOf"][key].get<size_t>()].get<std::string>() : "";
    const bool lost_reason =
        reason.starts_with("samples lost: the kernel lost " + std::to_string(lost) + " samples");
    EXPECT_EQ(lost_reason, expected) << "frame " << i << ": " << value << " +-" << hw
                                     << ", lost share " << worst << ": " << reason;
    if (has_reason) {
      EXPECT_EQ(data["marked"].get<std::string>()[i], '1') << "frame " << i;
    }
    if (has_reason && !lost_reason) {
      // Beside a recorder this busy the clock's timer misses ticks of its own (CI run AC: some
      // 5 % of its time), which frames may name; the lost samples' time is not among them (it
      // was: 607 ms, most of what 20,231 lost samples at 20 kHz stood for).
      ASSERT_TRUE(reason.starts_with("clock missed ticks")) << reason;
      const size_t ms = reason.find(" ms over the run");
      ASSERT_NE(ms, std::string::npos) << reason;
      const double missed_ms = std::strtod(reason.c_str() + reason.rfind(' ', ms - 1) + 1, nullptr);
      EXPECT_LT(missed_ms, 0.2 * static_cast<double>(lost) * 0.05) << reason;
    }
    flagged += lost_reason;
  }
  std::printf(
      "%llu samples lost (up to %.1f %% of an event's); %zu of %zu frames with a value "
      "marked for it\n",
      lost, 100 * worst, flagged, frames);
  EXPECT_GT(flagged, 0u);
}

}  // namespace
}  // namespace tprof
