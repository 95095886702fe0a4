// The matrix of designed workloads: per-function faults per ms of CPU by each way tprof measures
// ([g] windows of a sampled group, [s] the events sampled on their own at 4 kHz and, every
// fault, with the clock at 20 kHz, burst sampling's fallback), held to the truth the workload
// counted, over cells that vary what real code varies: where in a call the events happen (entry,
// spread, exit), call length (10 us to 50 ms against a 250 us sampling period), the order of calls
// (in turn, shuffled, a round as long as the sampling period) and nesting (a caller whose own work
// is small against its callees').
//
// For each cell and method, 20 recordings; per (function, run) a value is confident when shown
// with neither a bias reason (!) nor the low-confidence mark (~). Printed per cell and method (the
// table of docs/metric-matrix.md; bench/metric_matrix.sh gathers the lines): the pairs, the share
// flagged, the coverage of the truth by confident values' 95 % intervals and their median error.
// Asserted, as docs/trust.md promises a reader:
//   - no confident value whose truth lies outside three times its interval, and at most one a
//     cell and method outside twice (the host's noise);
//   - compute, which never faults, never has a confident non-zero rate;
//   - among confident values, the truth inside the 95 % interval in at least 90 % of the pairs
//     of a cell and method, as the issue asks (intervals of exactly 95 % would miss that in one
//     cell of some twenty; the ones shown are wider than that: over six CI runs, no cell and method
//     held to it covered less than 97 %; but see docs/metric-matrix.md for `[g]` beside another
//     recorded workload, which fails it);
//   - calls of at least 20 windows: some method gives every function a confident value within
//     5 % of the truth (its median over the runs), events at entry and exit included; a value
//     flagged `clock missed ticks` counts by the value the clock's reads give, which its reason
//     states (the sampled value of a host that holds the CPU reads high, and says so).
// Cells and methods known to give confident wrong values are listed by KnownGap, printed, not
// asserted. Release builds only: the sanitizers slow tprof, not the workload, and change no
// number.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "test/support/metric_oracle_run.h"

namespace tprof {
namespace {

using namespace oracle;  // NOLINT: the oracle's vocabulary

constexpr int kRecordings = 20;
constexpr double kRecordingNs = 0.25e9;  // each recording's designed length

struct Cell {
  std::string name;        // for the test's name and the table
  std::string iterations;  // per call: 0.4 ~ 10 us, 4 ~ 100 us, 40 ~ 1 ms, 200 ~ 5 ms, 2000 ~ 50 ms
  std::string placement;
  std::string schedule;
  bool aliased = false;  // sampled once a round
};

std::vector<Cell> Cells() {
  std::vector<Cell> cells;
  const std::pair<const char*, const char*> lengths[] = {
      {"10us", "0.4"}, {"100us", "4"}, {"1ms", "40"}, {"5ms", "200"}, {"50ms", "2000"}};
  for (const char* placement : {"spread", "entry", "exit"})
    for (const auto& [length, iterations] : lengths)
      cells.push_back({std::string(placement) + "_" + length, iterations, placement, "turns"});
  cells.push_back({"random_spread_100us", "4", "spread", "random"});
  cells.push_back({"random_spread_5ms", "200", "spread", "random"});
  cells.push_back({"nested_spread_1ms", "40", "spread", "nested"});
  cells.push_back({"nested_entry_1ms", "40", "entry", "nested"});
  cells.push_back({"aliased_spread_30us", "1", "spread", "turns", true});
  return cells;
}

// The workload's own counts of one round, without tprof: its length, to choose the rounds.
double RoundNs(const Cell& cell, const std::string& dir) {
  const std::string truth_path = dir + "/calibrate.json";
  auto ran = testing::RunCommand(
      {kOracle, "20", cell.iterations, truth_path, cell.placement, cell.schedule});
  EXPECT_EQ(ran.exit_code, 0) << ran.err;
  if (ran.exit_code != 0) return 0;
  const nlohmann::json truth = nlohmann::json::parse(testing::ReadWholeFile(truth_path));
  const char* whole = cell.schedule == "nested" ? "caller (inclusive)" : nullptr;
  double ns = 0;
  if (whole)
    ns = truth[whole]["task-clock"].get<double>();
  else
    for (const std::string& f : kFunctions) ns += truth[f]["task-clock"].get<double>();
  return ns / 20;
}

// What a cell's recordings came to for one method.
struct Tally {
  int pairs = 0, biased = 0, wide = 0, no_value = 0, confident = 0, set_aside = 0;
  int covered = 0, wide_covered = 0;  // confident and ~ values whose interval holds the truth
  int far = 0;                        // confident values twice their interval from the truth
  int read_time_values = 0;    // flagged `clock missed ticks`, judged by the value their reads give
  std::vector<double> errors;  // |error| % of confident values with a nonzero truth
  std::map<std::string, std::vector<double>> confident_errors;  // per function, signed %
  std::map<std::string, int> unconfident;                       // per function
  std::map<std::string, int> reasons;  // flagged values per reason's first words ("time at
                                       // call edges", "clock in one mode", ...)
};

// Page-faults sampled at every fault (a software event's config 2, period 1): the count is
// exact wherever in a call the faults fall.
const char* kEachFaultEvent = "software/config=2,period=1,name=page-faults/";
const char* kEveryFault = "[s] every fault, clock 20 kHz";

// [g], [s] and burst as the oracle's other tests record them, and [s] with every fault sampled
// and the clock at 20 kHz (a ring buffer of 8 MiB a CPU: some 150,000 samples a second with
// stacks overflow the default 512 KiB): the method that measures events at a call's entry or exit,
// where the windows cannot, and the one rare events allow.
std::vector<Method> MatrixMethods() {
  std::vector<Method> methods(Methods().begin(), Methods().begin() + 3);
  methods.push_back(EveryFaultMethod(kEveryFault, "task-clock", {"--children"}));
  return methods;
}

// The sampling period of `method`'s clock, in ns: 250 us at 4 kHz, 50 us at 20 kHz; 0 for burst,
// whose windows are its short period inside a long one.
double ClockPeriodNs(const Method& method) {
  if (method.name == kEveryFault) return 50e3;
  if (method.name.rfind("burst", 0) == 0) return 0;
  return 250e3;
}

// Whether a loop of rounds of `round_ns` falls in step with the windows of `method`'s group. A
// window that is one round long, or a whole number of rounds (up to six), begins and ends at the
// same point of the loop: in the same function, with the others' calls inside. Seen on a VM
// whose round of 86 us calls came to 258 us, within 3 % of the 250 us period ([g]: faults_light
// +65 % in 59 of 60 values, flagged, one not). A shuffled order has no round.
// The clock's samples on their own ([s]) fall in step with such a loop too (a round of 8.7
// periods of the 20 kHz clock, with every fault sampled: faults_heavy -3 % and compute +5 % of
// the clock, coverage 72-87 %; at 17 kHz, 7.4 periods, -0.3 % and +0.9 %), and tprof says so
// itself (`clock in step`, ClockRhythm): those cells are held to the promise, not listed here.
bool InStep(const Cell& cell, const Method& method, double round_ns) {
  const double period_ns = ClockPeriodNs(method);
  if (method.source != "group deltas" || period_ns <= 0 || round_ns <= 0 ||
      cell.schedule == "random")
    return false;
  const auto near_whole = [](double x, double within) {
    return std::abs(x - std::round(x)) <= within;
  };
  const double rounds_a_period = period_ns / round_ns;
  return std::abs(rounds_a_period - 1) <= 0.2 ||
         (rounds_a_period <= 6.2 && rounds_a_period >= 1 && near_whole(rounds_a_period, 0.2));
}

// What no method here measures, said plainly rather than asserted: "" where the cell and method
// are held to the promise. The events sampled on their own, [s], take the clock's samples at a
// fixed period (the kernel's timer for task-clock has no jitter), which falls in step with a loop
// of calls of 10-100 us (the round stretches to the sampling's own cost, which keeps it there),
// and the shares came out 2-25 % off with confident intervals. tprof names two ways it happens
// from the recording (ClockRhythm): the sampled row repeating at a lag of a few samples (`clock
// in step`, calls of 80 us), and calls shorter than the clock's period (`clock steps over calls`:
// the other events' samples show a row entered more often than the clock sampled it, calls of
// 10-30 us). A test of the phase alone had left 1-5 values a cell of 10 us calls confident and
// 12-18 % off; the row's entries against its samples flag all of them, so every [s] cell is held
// to the promise.
// The windows of a group sampled once a round are in step with the loop too: each window is a
// whole round, begun and ended in the same function, and nothing in the windows of one method
// tells it from a long call (window_bias.h); the members sampled on their own beside the group
// are what flag it ("windows span calls", "methods disagree"), not a method alone. So too at
// calls of 10 us, where burst's 50 us windows span about one round of three 15 us calls, and a
// 250 us window some six rounds. Burst's were a known gap while record sampled no member under
// --burst or -c (on 10 us calls 40 of 40 values confident and wrong, faults_light 97.6 +-6.8
// against 76.9); since it does, the two window methods' 480 values on the four cells were all
// flagged, in two runs. [g] at 4 kHz (-F) had its members sampled before; its 10 us gap was a
// lock seen in 1 of 20 runs before that, and is held to the promise now too.
// Any other cell whose round this machine happens to run in step with a group's windows (InStep)
// is the aliased cell's case by accident, and is said so too: which cells those are depends on
// the machine's speed, so the test measures it rather than naming cells.
std::string KnownGap(const Cell& cell, const Method& method, double round_ns) {
  if (InStep(cell, method, round_ns)) {
    char why[160];
    std::snprintf(why, sizeof why,
                  "on this machine a round (%.0f us) is in step with the clock's %.0f us period",
                  round_ns / 1e3, ClockPeriodNs(method) / 1e3);
    return why;
  }
  return "";
}

// Every function's truth and value in one recording, for a failure's message: whether one
// function alone is off, or the whole recording.
std::string Describe(const Run& run) {
  std::string text;
  for (const auto& [f, m] : run.measured) {
    char line[240];
    std::snprintf(line, sizeof line, "\n    %s: truth %.2f, measured %.2f [%.2f, %.2f]%s%s%s",
                  f.c_str(), run.truth.at(f), m.value.value_or(NAN), m.low.value_or(NAN),
                  m.high.value_or(NAN), m.low_confidence ? " ~" : "", m.bias.empty() ? "" : " ! ",
                  m.bias.c_str());
    text += line;
  }
  char whole[260];
  std::snprintf(whole, sizeof whole,
                "\n    the recording: %llu samples lost, %llu kernel samples without a user stack, "
                "task-clock sampled %.1f ms of %.1f ms the workload counted around its calls",
                static_cast<unsigned long long>(run.lost),
                static_cast<unsigned long long>(run.without_user_context),
                run.clock_sampled_ns / 1e6, run.clock_counted_ns / 1e6);
  text += whole;
  if (!run.record_err.empty()) text += "\n    record said: " + run.record_err;
  return text;
}

// A recording whose value lay far from the truth is rare and is not reproduced at will (the host's
// load makes it): its profile and the workload's truth (per function: calls, faults, clock) are
// copied where they outlive the test, for whoever reads the failure. Returns the directory.
std::string KeepRecording(const std::string& dir, const std::string& cell,
                          const std::string& method, int run) {
  std::string name = cell + "_" + method + "_run" + std::to_string(run);
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.') c = '-';
  const std::filesystem::path kept =
      std::filesystem::temp_directory_path() / "tprof-matrix-kept" / name;
  std::error_code error;
  std::filesystem::create_directories(kept, error);
  for (const char* file : {"p.tprof", "truth.json"})
    std::filesystem::copy_file(std::filesystem::path(dir) / file, kept / file,
                               std::filesystem::copy_options::overwrite_existing, error);
  return error ? "(not kept: " + error.message() + ")" : kept.string();
}

void PrintTo(const Cell& cell, std::ostream* out) { *out << cell.name; }

class MetricMatrix : public ::testing::TestWithParam<Cell> {};

TEST_P(MetricMatrix, ConfidentValuesCoverTheTruthAndBiasedOnesSaySo) {
  if (kUnderAddressSanitizer)
    GTEST_SKIP() << "measured by the Release build (the numbers are the same)";
  const Cell& cell = GetParam();
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  const double round_ns = RoundNs(cell, dir.path());
  ASSERT_GT(round_ns, 0);
  OracleWorkload workload;
  workload.iterations = cell.iterations;
  workload.placement = cell.placement;
  workload.schedule = cell.schedule;
  workload.rounds = std::max(2L, std::lround(kRecordingNs / round_ns));
  const std::string period = std::to_string(std::lround(round_ns));
  bool some_method_within_5 = false;
  std::string unjudged;  // methods the host left too few recordings to judge
  std::string within_5_report;
  // Per function that faults: how many confident values the methods gave it, together; a cell
  // where some function has none from any method is listed as such (the issue's "every cell
  // where no method gives a confident value").
  std::map<std::string, int> confident_anywhere;
  for (const Method& base : MatrixMethods()) {
    Method method = base;
    if (cell.aliased) {
      // The clock sampled once a round (page-faults at the default rate, for [s]), the burst
      // every ten rounds.
      if (method.name == kEveryFault)
        method.record_args = {
            "-g", "-e",
            "software/config=1,period=" + period + ",name=task-clock/," + kEachFaultEvent};
      else if (method.source == "sampled periods")
        method.record_args = {
            "-g", "-e", "software/config=1,period=" + period + ",name=task-clock/,page-faults"};
      else if (method.name.rfind("burst", 0) == 0)
        method.record_args = {"-e", "{task-clock:u,page-faults}:S", "--burst",
                              std::to_string(10 * std::lround(round_ns)) + ",50000"};
      else
        method.record_args = {"-e", "{task-clock:u,page-faults}:S", "-c", period};
    }
    Tally tally;
    std::string far_report;
    std::string gap;
    double recorded_round_ns = 0;
    for (int r = 0; r < kRecordings; ++r) {
      auto run = Measure(method, dir.path(), workload);
      ASSERT_TRUE(run.has_value()) << method.name;
      // The round as this method's recording runs it (sampling stretches it: to 450 us from 258
      // with every fault sampled), from the first recording's truth.
      if (r == 0) {
        recorded_round_ns = run->clock_counted_ns / workload.rounds;
        gap = KnownGap(cell, method, recorded_round_ns);
      }
      if (!SetAside(method, *run).empty()) {
        ++tally.set_aside;
        continue;
      }
      for (const auto& [f, m] : run->measured) {
        const double truth = run->truth.at(f);
        ++tally.pairs;
        if (!m.value || !m.low || !m.high) {
          ++tally.no_value;
          ++tally.unconfident[f];
          continue;
        }
        if (!m.bias.empty()) {
          ++tally.biased;
          ++tally.reasons[m.bias.substr(0, m.bias.find(':'))];
          // A clock whose timer missed ticks (a host holding the CPU: seen in a CI run's
          // every-fault recordings of entry_5ms, faults_heavy 52.1 against 48.8, 1.07x the time
          // its samples stand for) says so with the value the time its reads counted gives, the
          // one a reader is handed: that value, not the sampled one, is what the 5 % rule judges.
          const auto counted =
              m.bias.starts_with("clock missed ticks") ? CountedValue(m.bias) : std::nullopt;
          if (counted && truth > 0) {
            const double low = ErrorPercent(counted->first, truth),
                         high = ErrorPercent(counted->second, truth);
            tally.confident_errors[f].push_back(std::abs(low) > std::abs(high) ? low : high);
            ++tally.read_time_values;
          } else {
            ++tally.unconfident[f];
          }
          continue;
        }
        const bool covered = truth >= *m.low && truth <= *m.high;
        if (m.low_confidence) {
          // Marked ~ (its interval wider than 10 % of it): shown as uncertain. Its coverage is
          // printed, not asserted: at 4 kHz page-faults sampled on their own alias with a loop
          // of 5 faults a round (every 25th fault lands at the same point of it).
          ++tally.wide;
          tally.wide_covered += covered;
          // A zero where the truth is zero is exact, however wide its upper bound.
          if (truth == 0 && *m.value == 0)
            tally.confident_errors[f].push_back(0);
          else
            ++tally.unconfident[f];
          continue;
        }
        // Shown without a reason: its interval is what the reader is told to trust.
        tally.covered += covered;
        const double half = std::max(*m.value - *m.low, *m.high - *m.value);
        std::string kept;
        if (std::abs(truth - *m.value) > 2 * half) {
          ++tally.far;
          kept = KeepRecording(dir.path(), cell.name, method.name, r);
          far_report += "\n  run " + std::to_string(r) + ": " + f + " truth " +
                        std::to_string(truth) + ", measured " + std::to_string(*m.value) + " [" +
                        std::to_string(*m.low) + ", " + std::to_string(*m.high) + "], steal " +
                        std::to_string(run->oracle_steal_ns / 1e6) + " ms (all CPUs " +
                        std::to_string(run->steal_ns / 1e6) + " ms), " + std::to_string(run->lost) +
                        " samples lost; its recording and truth kept in " + kept;
        }
        // A known gap's values are printed, not held to the promise (KnownGap).
        if (gap.empty()) {
          EXPECT_LE(std::abs(truth - *m.value), 3 * half)
              << cell.name << " " << method.name << " run " << r << ": a value shown without a "
              << "reason three times its interval from the truth: " << f << " truth " << truth
              << ", measured " << *m.value << " [" << *m.low << ", " << *m.high << "], steal "
              << run->oracle_steal_ns / 1e6 << " ms (all CPUs " << run->steal_ns / 1e6
              << " ms) beside " << run->clock_counted_ns / 1e6
              << " ms counted; the recording (kept in " << kept << "):" << Describe(*run);
        }
        ++tally.confident;
        if (f == "compute" && gap.empty()) {
          EXPECT_EQ(*m.value, 0) << cell.name << " " << method.name << " run " << r
                                 << ": compute never faults, shown " << *m.value
                                 << " without a reason";
        }
        const double error = ErrorPercent(*m.value, truth);
        if (truth > 0 && gap.empty()) ++confident_anywhere[f];  // a known gap's are wrong
        if (truth > 0) tally.errors.push_back(std::abs(error));
        tally.confident_errors[f].push_back(error);
      }
    }
    std::sort(tally.errors.begin(), tally.errors.end());
    const double median_error = tally.errors.empty() ? NAN : tally.errors[tally.errors.size() / 2];
    const double coverage = tally.confident ? 100.0 * tally.covered / tally.confident : NAN;
    const auto percent = [&](int n) { return tally.pairs ? 100.0 * n / tally.pairs : NAN; };
    std::printf(
        "matrix| %-20s | %-29s | %3d pairs | biased %5.1f %% | ~ %5.1f %% (covering %3d) | no "
        "value %5.1f %% | confident %5.1f %% | coverage %5.1f %% | median error %6.2f %% | %d "
        "set aside\n",
        cell.name.c_str(), base.name.c_str(), tally.pairs, percent(tally.biased),
        percent(tally.wide), tally.wide_covered, percent(tally.no_value), percent(tally.confident),
        coverage, median_error, tally.set_aside);
    if (!tally.reasons.empty()) {
      std::string reasons;
      for (const auto& [reason, n] : tally.reasons)
        reasons += (reasons.empty() ? "" : "; ") + reason + " " + std::to_string(n);
      std::printf("matrix-reasons| %s | %s | %s\n", cell.name.c_str(), base.name.c_str(),
                  reasons.c_str());
    }
    if (tally.read_time_values)
      std::printf(
          "matrix-note| %s | %s | %d values flagged `clock missed ticks` judged by the value "
          "the clock's reads give\n",
          cell.name.c_str(), base.name.c_str(), tally.read_time_values);
    if (!gap.empty()) {
      // Printed, not asserted: what docs/trust.md lists as a gap.
      std::printf(
          "matrix| %s | %s | known gap: %s; %d of %d confident values twice their "
          "interval from the truth\n",
          cell.name.c_str(), base.name.c_str(), gap.c_str(), tally.far, tally.confident);
      continue;
    }
    // Twice the interval: a 95 % interval's truth lies that far out once in some 10,000 values;
    // one such value a cell and method (of 40-60) is allowed for what the host does beside the
    // recording (a steal too short for /proc/stat's 10 ms ticks: seen once in 2,400 values,
    // 2.0 % against an interval of 0.7 %), a second is not. Three times, never (above).
    EXPECT_LE(tally.far, 1) << cell.name << " " << method.name << ": " << tally.far
                            << " confident values twice their interval from the truth"
                            << far_report;
    if (tally.confident >= 10) {
      EXPECT_GE(coverage, 90.0) << cell.name << " " << method.name << ": " << tally.covered
                                << " of " << tally.confident
                                << " values shown without a reason cover the truth";
    }
    // Every faulting function (and the caller) confident in most runs, its median error within
    // 5 %: this method measures the cell.
    bool within = tally.set_aside < kRecordings / 2;
    std::string why;
    if (!within) {
      unjudged += (unjudged.empty() ? "" : ", ") + base.name;
      why = " " + std::to_string(tally.set_aside) + " recordings set aside;";
    }
    for (const auto& [f, unconfident] : tally.unconfident)
      if (unconfident > kRecordings / 4) {
        within = false;
        why += " " + f + " flagged in " + std::to_string(unconfident) + " runs;";
      }
    for (auto& [f, errors] : tally.confident_errors) {
      std::sort(errors.begin(), errors.end());
      const double median = errors[errors.size() / 2];
      if (std::abs(median) > 5) {
        within = false;
        char text[80];
        std::snprintf(text, sizeof text, " %s median error %+.1f %%;", f.c_str(), median);
        why += text;
      }
    }
    some_method_within_5 |= within;
    char round_text[64];
    std::snprintf(round_text, sizeof round_text, " (a round of %.0f us recorded)",
                  recorded_round_ns / 1e3);
    within_5_report += "\n  " + base.name + round_text + (within ? ": within 5 %" : ":" + why);
  }
  // 20 windows a call at 4 kHz: 5 ms.
  const double call_ns = round_ns / 3;
  // Judged when some method measures it or every method was judged: a host that stole from most
  // of one method's recordings cannot show that no method measures the cell (a CI run beside a
  // parallel build set aside 16 of 20 of the one that measures faults at entry).
  if (call_ns >= 20 * 250e3 && !cell.aliased) {
    if (some_method_within_5 || unjudged.empty()) {
      EXPECT_TRUE(some_method_within_5)
          << cell.name << ": no method measures it" << within_5_report;
    } else {
      std::printf(
          "matrix| %s: not judged whether some method measures it: the host stole from "
          "most recordings of %s\n",
          cell.name.c_str(), unjudged.c_str());
    }
  }
  std::printf("matrix| %s: calls of %.0f us;%s\n", cell.name.c_str(), call_ns / 1e3,
              within_5_report.c_str());
  std::string unmeasured;
  for (const std::string& f : {std::string("faults_heavy"), std::string("faults_light")})
    if (confident_anywhere[f] == 0) unmeasured += (unmeasured.empty() ? "" : ", ") + f;
  if (!unmeasured.empty())
    std::printf("matrix| %s | no method gives a confident value to: %s\n", cell.name.c_str(),
                unmeasured.c_str());
}

INSTANTIATE_TEST_SUITE_P(Cells, MetricMatrix, ::testing::ValuesIn(Cells()),
                         [](const ::testing::TestParamInfo<Cell>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace tprof
