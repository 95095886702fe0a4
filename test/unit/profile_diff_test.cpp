// The diff model on constructed inputs (folded stacks and perf script text written here), so
// that every expected number is worked out by hand from the input in the test.
#include "core/analysis/profile_diff.h"

#include <gtest/gtest.h>
#include <linux/perf_event.h>

#include <cmath>
#include <map>

#include "core/source/profile_source.h"
#include "test/support/folded_totals.h"

namespace tprof {
namespace {

std::map<std::string, const FunctionDiff*> ByName(const EventDiff& e) {
  std::map<std::string, const FunctionDiff*> m;
  for (const FunctionDiff& f : e.functions) m[f.key.function] = &f;
  return m;
}

// New: alpha 20% slower (360), gamma gone, a new function delta 40: total 650 + 60 - 100 + 40.
const char* kNew = "main;alpha 360\nmain;beta 200\nmain;delta 40\nmain 50\n";

TEST(ProfileDiff, EveryColumnMeansWhatItSays) {
  auto diff = DiffProfiles({TotalsOf(kFourFunctionsOld)}, {TotalsOf(kNew)}, {});
  ASSERT_TRUE(diff.ok()) << diff.error().message();
  ASSERT_EQ(diff->events.size(), 1u);
  const EventDiff& e = diff->events[0];
  EXPECT_EQ(e.name, "samples");
  EXPECT_DOUBLE_EQ(e.old_total, 650);
  EXPECT_DOUBLE_EQ(e.new_total, 650);
  EXPECT_DOUBLE_EQ(*e.delta_pct, 0);
  auto f = ByName(e);
  ASSERT_EQ(f.size(), 5u);
  EXPECT_DOUBLE_EQ(f["alpha"]->old_value, 300);
  EXPECT_DOUBLE_EQ(f["alpha"]->new_value, 360);
  EXPECT_DOUBLE_EQ(f["alpha"]->delta, 60);
  EXPECT_DOUBLE_EQ(*f["alpha"]->delta_pct, 20.0);            // 60 / 300
  EXPECT_DOUBLE_EQ(f["alpha"]->delta_pt, 100.0 * 60 / 650);  // points of the old total
  EXPECT_DOUBLE_EQ(f["alpha"]->old_share, 100.0 * 300 / 650);
  EXPECT_DOUBLE_EQ(f["alpha"]->new_share, 100.0 * 360 / 650);
  EXPECT_EQ(f["alpha"]->status, FunctionStatus::kBoth);
  // Gone: shown with new = 0, not dropped.
  EXPECT_EQ(f["gamma"]->status, FunctionStatus::kGone);
  EXPECT_DOUBLE_EQ(f["gamma"]->new_value, 0);
  EXPECT_DOUBLE_EQ(*f["gamma"]->delta_pct, -100.0);
  // New: no percentage of an old value that does not exist.
  EXPECT_EQ(f["delta"]->status, FunctionStatus::kNew);
  EXPECT_FALSE(f["delta"]->delta_pct.has_value());
  EXPECT_DOUBLE_EQ(f["delta"]->delta_pt, 100.0 * 40 / 650);
  EXPECT_DOUBLE_EQ(f["beta"]->delta, 0);
  // Sorted by |delta|: gamma 100, alpha 60, delta 40, then the unchanged by name.
  std::vector<std::string> order;
  for (const FunctionDiff& d : e.functions) order.push_back(d.key.function);
  EXPECT_EQ(order, (std::vector<std::string>{"gamma", "alpha", "delta", "beta", "main"}));
  // The points add up to the total's change.
  double points = 0;
  for (const FunctionDiff& d : e.functions) points += d.delta_pt;
  EXPECT_NEAR(points, *e.delta_pct, 1e-9);
  EXPECT_EQ(diff->runs_needed, 4u);
  EXPECT_FALSE(diff->metrics.has_value());
}

// Everything twice as slow: raw sums show it; scaling to the total hides it.
TEST(ProfileDiff, UniformSlowdownShowsRawAndHidesNormalized) {
  const char* doubled = "main;alpha 600\nmain;beta 400\nmain;gamma 200\nmain 100\n";
  auto raw = DiffProfiles({TotalsOf(kFourFunctionsOld)}, {TotalsOf(doubled)}, {});
  ASSERT_TRUE(raw.ok());
  EXPECT_DOUBLE_EQ(*raw->events[0].delta_pct, 100.0);
  for (const FunctionDiff& f : raw->events[0].functions)
    EXPECT_DOUBLE_EQ(*f.delta_pct, 100.0) << f.key.function;
  ProfileDiffOptions total;
  total.normalize = Normalization::kTotal;
  auto scaled = DiffProfiles({TotalsOf(kFourFunctionsOld)}, {TotalsOf(doubled)}, total);
  ASSERT_TRUE(scaled.ok());
  EXPECT_DOUBLE_EQ(scaled->events[0].new_total, 650);
  EXPECT_DOUBLE_EQ(*scaled->events[0].delta_pct, 0.0);
  for (const FunctionDiff& f : scaled->events[0].functions) {
    EXPECT_DOUBLE_EQ(f.delta, 0.0) << f.key.function;
    EXPECT_DOUBLE_EQ(f.new_share, f.old_share);
  }
  // A real shift in the mix survives normalization: alpha +60 of 710 new total.
  auto shift = DiffProfiles({TotalsOf(kFourFunctionsOld)},
                            {TotalsOf("main;alpha 360\nmain;beta 200\n"
                                      "main;gamma 100\nmain 50\n")},
                            total);
  ASSERT_TRUE(shift.ok());
  auto f = ByName(shift->events[0]);
  EXPECT_NEAR(f["alpha"]->new_value, 360.0 * 650 / 710, 1e-9);
  EXPECT_NEAR(f["beta"]->new_value, 200.0 * 650 / 710, 1e-9);
}

// perf script text with two events: cycles and instructions, each sampled on its own.
std::string Script(const std::map<std::string, std::pair<int, int>>& cycles_instructions) {
  std::string s;
  double t = 1.0;
  for (const auto& [function, counts] : cycles_instructions) {
    for (auto [event, period] :
         {std::pair{"cycles", counts.first}, std::pair{"instructions", counts.second}}) {
      t += 0.001;
      s += "prog  100  " + std::to_string(t) + ":  " + std::to_string(period) + " " + event +
           ": \n\t  401000 " + function + "+0x4 (/bin/prog)\n\n";
    }
  }
  return s;
}

// perf script text: per function, `cycles` samples of cycles and `instructions` samples of
// instructions, each of period 1000.
std::string ScriptWithSamples(const std::map<std::string, std::pair<int, int>>& samples) {
  std::string s;
  double t = 1.0;
  for (const auto& [function, counts] : samples)
    for (auto [event, n] :
         {std::pair{"cycles", counts.first}, std::pair{"instructions", counts.second}})
      for (int i = 0; i < n; ++i) {
        t += 0.001;
        s += "prog  100  " + std::to_string(t) + ":  1000 " + std::string(event) +
             ": \n\t  401000 " + function + "+0x4 (/bin/prog)\n\n";
      }
  return s;
}

// Sampled IPC and CPI carry the report's [s] interval: each count Poisson in its samples, from
// the exact (Garwood) 97.5 % bounds, U(1) = 5.572 and U(10) = 18.390, worked out by hand.
TEST(ProfileDiff, SampledIpcHasPoissonIntervalsExactAtFewSamples) {
  // alpha: 10 cycles samples, 1 instructions sample; beta: 10 and 10; gamma: 10 and none;
  // delta: none and 10.
  const std::string old_text = ScriptWithSamples(
      {{"alpha", {10, 1}}, {"beta", {10, 10}}, {"gamma", {10, 0}}, {"delta", {0, 10}}});
  auto diff = DiffProfiles({TotalsOf(old_text)}, {TotalsOf(old_text), TotalsOf(old_text)}, {});
  ASSERT_TRUE(diff.ok()) << diff.error().message();
  ASSERT_TRUE(diff->metrics.has_value());
  std::map<std::string, const FunctionRatios*> by_name;
  for (const FunctionRatios& f : diff->metrics->functions) by_name[f.key.function] = &f;
  ASSERT_EQ(by_name.size(), 4u);
  const double reach1 = 5.572 - 1, reach10 = (18.390 - 10) / 10;
  // alpha: IPC 1000 / 10000 = 0.1, its relative half width sqrt(reach1^2 + reach10^2).
  const RatioPair& alpha = by_name["alpha"]->ipc;
  EXPECT_DOUBLE_EQ(*alpha.old_value, 0.1);
  ASSERT_TRUE(alpha.old_half_width.has_value());
  EXPECT_NEAR(*alpha.old_half_width, 0.1 * std::hypot(reach1, reach10), 2e-4);
  EXPECT_TRUE(alpha.old_low_confidence);
  // beta: IPC 1, both counts from 10 samples.
  const RatioPair& beta = by_name["beta"]->ipc;
  EXPECT_NEAR(*beta.old_half_width, std::hypot(reach10, reach10), 2e-4);
  EXPECT_TRUE(beta.old_low_confidence);
  // The new side pools two runs: 20 samples a count, U(20) = 30.888.
  const double reach20 = (30.888 - 20) / 20;
  EXPECT_NEAR(*beta.new_half_width, std::hypot(reach20, reach20), 2e-4);
  // gamma: no instructions sample, IPC 0 with the bound of none at the mean period (1000):
  // 3.689 * 1000 instructions over 10000 cycles. Its CPI has no value (no instruction).
  const RatioPair& gamma = by_name["gamma"]->ipc;
  EXPECT_DOUBLE_EQ(*gamma.old_value, 0.0);
  ASSERT_TRUE(gamma.old_half_width.has_value());
  EXPECT_NEAR(*gamma.old_half_width, 3.689 * 1000 / 10000, 2e-4);
  EXPECT_TRUE(gamma.old_low_confidence);
  EXPECT_FALSE(by_name["gamma"]->cpi.old_value.has_value());
  EXPECT_FALSE(by_name["gamma"]->cpi.old_half_width.has_value());
  // delta, listed though the cycles event never saw it: CPI 0 with the bound of no cycles
  // sample at the mean period, 3.689 * 1000 cycles over 10000 instructions; IPC n/a.
  const RatioPair& delta = by_name["delta"]->cpi;
  EXPECT_DOUBLE_EQ(*delta.old_value, 0.0);
  ASSERT_TRUE(delta.old_half_width.has_value());
  EXPECT_NEAR(*delta.old_half_width, 3.689 * 1000 / 10000, 2e-4);
  EXPECT_FALSE(by_name["delta"]->ipc.old_value.has_value());
  // The total: 30 cycles and 21 instructions samples, U(21) = 32.101, U(30) = 42.827 (the code's
  // cube-root form is within 0.002 of them).
  const double reach21 = (32.101 - 21) / 21, reach30 = (42.827 - 30) / 30;
  EXPECT_NEAR(*diff->metrics->total_ipc.old_half_width,
              21000.0 / 30000 * std::hypot(reach21, reach30), 1e-3);
}

// Which group members the diff compares by their own samples and which it lists as read only:
// a member of a group read in its leader's samples (perf's {cycles,instructions}:S) has no
// samples and is read only; one that also took samples of its own (a group read without :S),
// or that was also sampled on its own beside the group (record's default), is compared.
TEST(ProfileDiff, OnlyGroupMembersWithoutSamplesOfTheirOwnAreReadOnly) {
  auto profile = [](uint64_t member_samples, bool member_also_alone) {
    FunctionProfile p;
    EventDesc cycles, instructions;
    cycles.name = "cycles";
    instructions.name = "instructions";
    cycles.sample_type = PERF_SAMPLE_READ;
    cycles.group_leader = 0;
    cycles.group_members = {0, 1};
    instructions.group_leader = 0;
    p.events = {cycles, instructions};
    p.total_period = {4000, member_samples * 1000};
    p.total_samples = {4, member_samples};
    if (member_also_alone) {
      p.events.push_back(instructions);
      p.events.back().group_leader = -1;
      p.total_period.push_back(3000);
      p.total_samples.push_back(3);
    }
    FunctionRow row;
    row.function = "alpha";
    row.module = "/bin/prog";
    row.self_period = p.total_period;
    row.self_samples = p.total_samples;
    p.rows = {row};
    return p;
  };
  const FunctionTotals leader_only = SumByFunction(profile(0, false));
  EXPECT_EQ(leader_only.events, std::vector<std::string>{"cycles"});
  ASSERT_EQ(leader_only.read_only_events.size(), 1u);
  EXPECT_EQ(leader_only.read_only_events[0], "instructions (read in the samples of cycles)");
  const FunctionTotals own_samples = SumByFunction(profile(5, false));
  EXPECT_EQ(own_samples.events, (std::vector<std::string>{"cycles", "instructions"}));
  EXPECT_TRUE(own_samples.read_only_events.empty());
  EXPECT_DOUBLE_EQ(own_samples.self.at({"prog", "alpha"})[1], 5000);
  EXPECT_DOUBLE_EQ(own_samples.self_samples.at({"prog", "alpha"})[1], 5);
  const FunctionTotals beside = SumByFunction(profile(0, true));
  EXPECT_EQ(beside.events, (std::vector<std::string>{"cycles", "instructions"}));
  EXPECT_TRUE(beside.read_only_events.empty());
  EXPECT_DOUBLE_EQ(beside.self.at({"prog", "alpha"})[1], 3000);
}

TEST(ProfileDiff, IpcAndCpiWhenCyclesAndInstructionsArePresent) {
  auto old_side = TotalsOf(Script({{"alpha", {1000, 2000}}, {"beta", {3000, 3000}}}));
  auto new_side = TotalsOf(Script({{"alpha", {4000, 6000}}, {"beta", {3000, 3000}}}));
  auto diff = DiffProfiles({old_side}, {new_side}, {});
  ASSERT_TRUE(diff.ok()) << diff.error().message();
  ASSERT_EQ(diff->events.size(), 2u);
  ASSERT_TRUE(diff->metrics.has_value());
  const DerivedMetricsDiff& m = *diff->metrics;
  EXPECT_EQ(m.cycles_event, "cycles");
  // Totals: old 5000 instructions / 4000 cycles, new 9000 / 7000.
  EXPECT_DOUBLE_EQ(*m.total_ipc.old_value, 5000.0 / 4000);
  EXPECT_DOUBLE_EQ(*m.total_ipc.new_value, 9000.0 / 7000);
  EXPECT_DOUBLE_EQ(*m.total_cpi.new_value, 7000.0 / 9000);
  for (const FunctionRatios& f : m.functions) {
    if (f.key.function == "alpha") {
      EXPECT_EQ(f.key.module, "prog");
      EXPECT_DOUBLE_EQ(*f.ipc.old_value, 2.0);
      EXPECT_DOUBLE_EQ(*f.ipc.new_value, 1.5);
    } else {
      EXPECT_DOUBLE_EQ(*f.ipc.old_value, 1.0);
      EXPECT_DOUBLE_EQ(*f.ipc.new_value, 1.0);
    }
  }
  // Normalizing by instructions: cycles per unit of work. New alpha+beta cycles 7000 over
  // 9000 instructions, scaled to the old 5000 instructions.
  ProfileDiffOptions per_instruction;
  per_instruction.normalize = Normalization::kEvent;
  per_instruction.normalize_event = "instructions";
  auto scaled = DiffProfiles({old_side}, {new_side}, per_instruction);
  ASSERT_TRUE(scaled.ok());
  EXPECT_NEAR(scaled->events[0].new_total, 7000.0 * 5000 / 9000, 1e-9);
  EXPECT_NEAR(scaled->events[1].new_total, 5000.0, 1e-9);
  per_instruction.normalize_event = "branches";
  auto bad = DiffProfiles({old_side}, {new_side}, per_instruction);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message().find("branches"), std::string::npos);
}

std::vector<FunctionTotals> Runs(const std::vector<std::pair<int, int>>& alpha_beta) {
  std::vector<FunctionTotals> runs;
  for (auto [a, b] : alpha_beta)
    runs.push_back(
        TotalsOf("main;alpha " + std::to_string(a) + "\nmain;beta " + std::to_string(b) + "\n"));
  return runs;
}

TEST(ProfileDiff, RepeatedRunsSeparateARealChangeFromNoise) {
  // alpha: +20% with every new run above every old one; beta: the same noise on both sides.
  auto old_runs = Runs({{100, 50}, {102, 52}, {98, 48}, {101, 51}, {99, 49}});
  auto new_runs = Runs({{120, 49}, {122, 51}, {118, 50}, {121, 52}, {119, 48}});
  auto diff = DiffProfiles(old_runs, new_runs, {});
  ASSERT_TRUE(diff.ok());
  auto f = ByName(diff->events[0]);
  EXPECT_DOUBLE_EQ(f["alpha"]->old_value, 100);  // means over runs
  EXPECT_DOUBLE_EQ(f["alpha"]->new_value, 120);
  ASSERT_TRUE(f["alpha"]->runs.test.has_value());
  EXPECT_NEAR(f["alpha"]->runs.test->p_value, 2.0 / 252, 1e-12);  // complete separation, 5 v 5
  EXPECT_EQ(f["alpha"]->runs.significance, Significance::kSignificant);
  EXPECT_EQ(f["beta"]->runs.significance, Significance::kNotSignificant);
  // CV of {100, 102, 98, 101, 99}: sample variance 10/4, mean 100.
  EXPECT_NEAR(f["alpha"]->runs.old_cv, std::sqrt(10.0 / 4) / 100, 1e-12);
  // A consistent but small change (2%) is below the minimum effect: not significant.
  auto small =
      DiffProfiles(old_runs, Runs({{102, 50}, {104, 52}, {103, 48}, {105, 51}, {106, 49}}), {});
  ASSERT_TRUE(small.ok());
  const FunctionDiff* a = ByName(small->events[0])["alpha"];
  EXPECT_LT(a->runs.test->p_value, 0.05);
  EXPECT_LT(*a->delta_pct, 5.0);
  EXPECT_EQ(a->runs.significance, Significance::kNotSignificant);
  // One run per side: not assessed.
  auto single = DiffProfiles({old_runs[0]}, {new_runs[0]}, {});
  EXPECT_EQ(single->events[0].functions[0].runs.significance, Significance::kNotAssessed);
  // A function missing from some runs counts 0 there.
  auto gaps = DiffProfiles(old_runs, {TotalsOf("main;alpha 5\n"), TotalsOf("main;beta 50\n")}, {});
  ASSERT_TRUE(gaps.ok());
  EXPECT_DOUBLE_EQ(ByName(gaps->events[0])["alpha"]->new_value, 2.5);
}

TEST(ProfileDiff, FunctionsMatchByNameAndModuleFileNameOrByNameAlone) {
  auto script = [](const std::string& module, int period) {
    return "app  7  1.5:  " + std::to_string(period) + " cpu-clock: \n\t  401000 hot+0x4 (" +
           module + ")\n\n";
  };
  // The same binary in another directory: the same function.
  auto moved = DiffProfiles({TotalsOf(script("/old/build/app", 100))},
                            {TotalsOf(script("/new/build/app", 150))}, {});
  ASSERT_TRUE(moved.ok());
  ASSERT_EQ(moved->events[0].functions.size(), 1u);
  EXPECT_EQ(moved->events[0].functions[0].key.module, "app");
  // A renamed binary: two functions, one gone and one new, unless matched by name alone.
  auto renamed = DiffProfiles({TotalsOf(script("/bin/app-1.0", 100))},
                              {TotalsOf(script("/bin/app-1.1", 150))}, {});
  ASSERT_TRUE(renamed.ok());
  EXPECT_EQ(renamed->events[0].functions.size(), 2u);
  auto by_name = [&](const std::string& text) {
    auto source = ProfileSource::OpenBytes(text);
    FunctionProfileBuilder builder((*source)->events(), *(*source)->embedded_frames());
    EXPECT_TRUE((*source)->ReadRecords(builder).ok());
    return SumByFunction(builder.Finish(), /*match_module=*/false);
  };
  auto matched = DiffProfiles({by_name(script("/bin/app-1.0", 100))},
                              {by_name(script("/bin/app-1.1", 150))}, {});
  ASSERT_TRUE(matched.ok());
  ASSERT_EQ(matched->events[0].functions.size(), 1u);
  EXPECT_DOUBLE_EQ(*matched->events[0].functions[0].delta_pct, 50.0);
}

TEST(ProfileDiff, LoneEventsOfDifferentNamesArePairedWithANote) {
  FunctionTotals a = TotalsOf(kFourFunctionsOld);
  FunctionTotals b = TotalsOf(kNew);
  b.events[0] = "cpu-clock";
  auto diff = DiffProfiles({a}, {b}, {});
  ASSERT_TRUE(diff.ok());
  EXPECT_EQ(diff->events[0].name, "samples vs cpu-clock");
  EXPECT_NE(diff->note.find("samples"), std::string::npos);
  EXPECT_FALSE(DiffProfiles({}, {b}, {}).ok());
  // Nothing to pair: the error lists both sides' events.
  FunctionTotals two = TotalsOf("main;x 1 2\n");  // differential folded: "before", "after"
  auto none = DiffProfiles({two}, {b}, {});
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message().find("old: before, after; new: cpu-clock"), std::string::npos)
      << none.error().message();
}

TEST(ProfileDiff, CallPathsOfBothSidesMergeKeepingVanishedStacks) {
  auto tree = [](const std::string& text) {
    auto source = ProfileSource::OpenBytes(text);
    auto builder = std::make_unique<CallTreeBuilder>(
        (*source)->events(), *(*source)->embedded_frames(), CallTreeOptions{});
    EXPECT_TRUE((*source)->ReadRecords(*builder).ok());
    // The resolver lives in the source: keep both alive together.
    return std::make_pair(std::move(source).value(), std::move(builder));
  };
  auto [old_source, old_tree] = tree("main;a;b 10\nmain;c 5\n");
  auto [new_source, new_tree] = tree("main;a;b 20\nmain;d 7\n");
  DiffCallNode root = MergeCallTrees(old_tree->root(), new_tree->root(), 1);
  ASSERT_EQ(root.children.size(), 1u);
  const DiffCallNode& main = *root.children[0];
  EXPECT_EQ(main.name, "main");
  EXPECT_EQ(main.old_total[0], 15u);
  EXPECT_EQ(main.new_total[0], 27u);
  std::map<std::string, const DiffCallNode*> kids;
  for (const auto& k : main.children) kids[k->name] = k.get();
  ASSERT_EQ(kids.size(), 3u);
  EXPECT_EQ(kids["a"]->old_total[0], 10u);
  EXPECT_EQ(kids["a"]->new_total[0], 20u);
  EXPECT_EQ(kids["a"]->children[0]->new_self[0], 20u);
  EXPECT_EQ(kids["c"]->old_self[0], 5u);  // vanished: kept with new = 0
  EXPECT_EQ(kids["c"]->new_self[0], 0u);
  EXPECT_EQ(kids["d"]->old_self[0], 0u);
  EXPECT_EQ(kids["d"]->new_self[0], 7u);
}

// A renamed program: judged on its module, not on the whole table, whose shared rows (libc, the
// kernel) grow on a busy machine. Four functions of "prog" reappear in "prog2" beside twenty rows
// both sides share: a rename. One of five reappearing is not.
TEST(ModuleRenameTest, JudgedOnTheModuleNotOnTheSharedRows) {
  auto row = [](const char* module, std::string function, FunctionStatus status) {
    FunctionDiff f;
    f.key = {module, std::move(function)};
    f.status = status;
    return f;
  };
  EventDiff event;
  for (const char* f : {"main", "heavy", "light", "idle"}) {
    event.functions.push_back(row("prog", f, FunctionStatus::kGone));
    event.functions.push_back(row("prog2", f, FunctionStatus::kNew));
  }
  for (int i = 0; i < 20; ++i)
    event.functions.push_back(row("libc.so.6", "f" + std::to_string(i), FunctionStatus::kBoth));
  auto rename = DetectModuleRename(event);
  ASSERT_TRUE(rename);
  EXPECT_EQ(rename->old_module, "prog");
  EXPECT_EQ(rename->new_module, "prog2");
  EXPECT_EQ(rename->paired, 4u);

  EventDiff other;
  for (const char* f : {"main", "a", "b", "c", "d"})
    other.functions.push_back(row("one", f, FunctionStatus::kGone));
  for (const char* f : {"main", "x", "y"})
    other.functions.push_back(row("two", f, FunctionStatus::kNew));
  EXPECT_FALSE(DetectModuleRename(other));
}

}  // namespace
}  // namespace tprof
