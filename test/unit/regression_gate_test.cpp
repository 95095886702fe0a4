// The gate's syntax and its verdicts on diffs of constructed folded stacks (numbers by hand).
#include "core/analysis/regression_gate.h"

#include <gtest/gtest.h>

#include "core/source/profile_source.h"
#include "test/support/folded_totals.h"

namespace tprof {
namespace {

TEST(ThresholdSyntax, ParsesEachSubjectAndUnit) {
  auto t = ParseThreshold("total.cpu-clock > +5%");
  ASSERT_TRUE(t.ok()) << t.error().message();
  EXPECT_EQ(t->subject, Threshold::Subject::kTotal);
  EXPECT_EQ(t->event, "cpu-clock");
  EXPECT_EQ(t->op, Threshold::Op::kGreater);
  EXPECT_DOUBLE_EQ(t->value, 5);
  EXPECT_EQ(t->unit, Threshold::Unit::kPercent);

  auto f = ParseThreshold("func(std::vector<int>::push_back(int const&)).cycles:u>=10.5pt");
  ASSERT_TRUE(f.ok()) << f.error().message();
  EXPECT_EQ(f->subject, Threshold::Subject::kFunction);
  EXPECT_EQ(f->pattern, "std::vector<int>::push_back(int const&)");
  EXPECT_EQ(f->event, "cycles:u");
  EXPECT_EQ(f->op, Threshold::Op::kGreaterEqual);
  EXPECT_DOUBLE_EQ(f->value, 10.5);
  EXPECT_EQ(f->unit, Threshold::Unit::kPoints);

  auto s = ParseThreshold("  share(parse_*) < -2pt ");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->subject, Threshold::Subject::kShare);
  EXPECT_EQ(s->event, "");
  EXPECT_EQ(s->op, Threshold::Op::kLess);
  EXPECT_DOUBLE_EQ(s->value, -2);

  auto raw = ParseThreshold("func(x) <= 1e6");
  ASSERT_TRUE(raw.ok());
  EXPECT_EQ(raw->unit, Threshold::Unit::kRaw);
  EXPECT_DOUBLE_EQ(raw->value, 1e6);
  EXPECT_TRUE(ParseThreshold("total.ipc < -5%").ok());
}

TEST(ThresholdSyntax, ErrorsSayWhatIsWrong) {
  for (const char* bad : {"total > five", "bogus > 5%", "func() > 5%", "total.cycles 5%",
                          "total > 5pt", "share(x) > 5%", "totalcycles > 5%", "share(x).ipc > 1"}) {
    auto t = ParseThreshold(bad);
    ASSERT_FALSE(t.ok()) << bad;
    EXPECT_NE(t.error().message().find(bad), std::string::npos) << t.error().message();
  }
  EXPECT_NE(ParseThreshold("share(x) > 5%").error().message().find("points"), std::string::npos);
  // Each names the real mistake, not a symptom further on.
  const std::pair<const char*, const char*> named[] = {
      {"func(foo > 5%", "'func(foo' is missing its ')'"},
      {"total >> 5%", "unknown operator '>>'"},
      {"total > > 5%", "unknown operator '>>'"},
      {"total => 5%", "unknown operator '=>'"},
      {"total != 5%", "unknown operator '!='"},
      {"total > 5x", "unknown unit 'x' after 5"},
      {"share(x) > 5ms", "time unit"},
      {"total.ipc > 5ms", "time unit"}};
  for (const auto& [bad, says] : named) {
    auto t = ParseThreshold(bad);
    ASSERT_FALSE(t.ok()) << bad;
    EXPECT_NE(t.error().message().find(says), std::string::npos) << t.error().message();
  }
  // Operators inside a function's name stay the function's.
  auto templ = ParseThreshold("func(operator<<) > 5%");
  ASSERT_TRUE(templ.ok()) << templ.error().message();
  EXPECT_EQ(templ->pattern, "operator<<");
}

TEST(ThresholdSyntax, TimeUnitsAreNanosecondsOfTheClocks) {
  const std::pair<const char*, double> cases[] = {{"func(x).task-clock > +5ms", 5e6},
                                                  {"total > 2s", 2e9},
                                                  {"total > 750us", 7.5e5},
                                                  {"func(x) < -40ns", -40}};
  for (const auto& [text, ns] : cases) {
    auto t = ParseThreshold(text);
    ASSERT_TRUE(t.ok()) << t.error().message();
    EXPECT_EQ(t->unit, Threshold::Unit::kRaw) << text;
    EXPECT_DOUBLE_EQ(t->value, ns) << text;
  }
}

GateVerdict Gate(const ProfileDiff& diff, std::vector<std::string> texts) {
  std::vector<Threshold> thresholds;
  for (const std::string& text : texts) thresholds.push_back(ParseThreshold(text).value());
  auto verdict = EvaluateGate(diff, thresholds);
  EXPECT_TRUE(verdict.ok()) << verdict.error().message();
  return verdict.value();
}

TEST(RegressionGate, TotalsAndFunctionsTripAtTheirThresholds) {
  // alpha +20% (300 -> 360), total +60/650 = +9.23%.
  auto diff =
      DiffProfiles({TotalsOf(kFourFunctionsOld)},
                   {TotalsOf("main;alpha 360\nmain;beta 200\nmain;gamma 100\nmain 50\n")}, {});
  ASSERT_TRUE(diff.ok());
  auto v = Gate(*diff, {"total > +5%", "total.samples > +10%", "func(alpha) > +19.9%",
                        "func(alpha) > +20.1%", "func(*) > +9pt", "func(*) > 60", "func(*) >= 60",
                        "share(alpha) > +4pt", "share(beta) < -1pt"});
  std::vector<bool> tripped;
  for (const GateCheck& c : v.checks) tripped.push_back(c.tripped);
  // share(alpha): 360/710 - 300/650 = 4.55 points; share(beta): 200/710 - 200/650 = -2.60.
  EXPECT_EQ(tripped, (std::vector<bool>{true, false, true, false, true, false, true, true, true}));
  EXPECT_TRUE(v.tripped());
  EXPECT_NEAR(v.checks[0].crossed[0].observed, 100.0 * 60 / 650, 1e-9);
  EXPECT_NE(v.checks[0].explanation.find("TRIPPED"), std::string::npos);
  EXPECT_NE(v.checks[0].explanation.find("+9.23%"), std::string::npos) << v.checks[0].explanation;
  EXPECT_NEAR(v.checks[7].crossed[0].observed, 100.0 * 360 / 710 - 100.0 * 300 / 650, 1e-9);
  EXPECT_NE(v.checks[1].explanation.find("ok"), std::string::npos);
  EXPECT_FALSE(Gate(*diff, {"total < -1%", "func(beta) > +0%"}).tripped());
}

TEST(RegressionGate, NewAndGoneFunctionsAndUnmatchedPatterns) {
  auto diff =
      DiffProfiles({TotalsOf(kFourFunctionsOld)},
                   {TotalsOf("main;alpha 300\nmain;beta 200\nmain;fresh 5\nmain 50\n")}, {});
  ASSERT_TRUE(diff.ok());
  auto v = Gate(*diff, {"func(fresh) > +1000%", "func(fresh) > +1pt", "func(gamma) < -99%",
                        "func(nothing*) > +1%"});
  EXPECT_TRUE(v.checks[0].tripped);   // new: +infinity %
  EXPECT_FALSE(v.checks[1].tripped);  // but only 5/650 = 0.77 points
  EXPECT_TRUE(v.checks[2].tripped);   // gone: -100 %
  EXPECT_FALSE(v.checks[3].tripped);
  EXPECT_EQ(v.checks[3].matched, 0u);
  EXPECT_NE(v.checks[3].explanation.find("matched no function"), std::string::npos);
}

TEST(RegressionGate, PatternsMatchWithOrWithoutTheParameterList) {
  auto diff =
      DiffProfiles({TotalsOf("main;work(int) 100\n")}, {TotalsOf("main;work(int) 200\n")}, {});
  ASSERT_TRUE(diff.ok());
  auto v = Gate(*diff, {"func(work) > +50%", "func(work(int)) > +50%", "func(wor?) > +50%"});
  for (const GateCheck& c : v.checks) EXPECT_TRUE(c.tripped) << c.threshold.text;
}

TEST(RegressionGate, UnknownEventsAndMissingMetricsAreErrors) {
  auto diff = DiffProfiles({TotalsOf(kFourFunctionsOld)}, {TotalsOf(kFourFunctionsOld)}, {});
  ASSERT_TRUE(diff.ok());
  auto bad = EvaluateGate(*diff, {ParseThreshold("total.cycles > +5%").value()});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message().find("samples"), std::string::npos);  // says what there is
  EXPECT_FALSE(EvaluateGate(*diff, {ParseThreshold("total.ipc < -5%").value()}).ok());
}

// perf script text: one cycles and one instructions sample per function.
std::string CyclesAndInstructions(int alpha_cycles, int alpha_instructions) {
  std::string s;
  int t = 0;
  auto sample = [&](const char* event, int period, const char* function) {
    s += "prog  100  1." + std::to_string(100 + ++t) + ":  " + std::to_string(period) + " " +
         event + ": \n\t  401000 " + function + "+0x4 (/bin/prog)\n\n";
  };
  sample("cycles", alpha_cycles, "alpha");
  sample("instructions", alpha_instructions, "alpha");
  sample("cycles", 1000, "beta");
  sample("instructions", 1000, "beta");
  return s;
}

TEST(RegressionGate, IpcAndCpiThresholds) {
  // alpha: IPC 2.0 -> 1.5 (-25%), CPI 0.5 -> 0.667 (+33%); total IPC 3000/2000 = 1.5 ->
  // 4000/3000 = 1.333 (-11.1%).
  auto diff = DiffProfiles({TotalsOf(CyclesAndInstructions(1000, 2000))},
                           {TotalsOf(CyclesAndInstructions(2000, 3000))}, {});
  ASSERT_TRUE(diff.ok()) << diff.error().message();
  ASSERT_TRUE(diff->metrics.has_value());
  auto v =
      Gate(*diff, {"total.ipc < -10%", "total.ipc < -12%", "func(alpha).ipc < -24%",
                   "func(beta).ipc < -1%", "func(alpha).cpi > +0.16", "func(alpha).cpi > +0.17"});
  std::vector<bool> tripped;
  for (const GateCheck& c : v.checks) tripped.push_back(c.tripped);
  EXPECT_EQ(tripped, (std::vector<bool>{true, false, true, false, true, false}));
  EXPECT_NEAR(v.checks[0].crossed[0].observed, 100.0 * (4000.0 / 3000 - 1.5) / 1.5, 1e-9);
  // Events by name too.
  EXPECT_TRUE(Gate(*diff, {"total.cycles > +49%"}).tripped());         // 2000 -> 3000: +50%
  EXPECT_FALSE(Gate(*diff, {"total.instructions > +34%"}).tripped());  // 3000 -> 4000: +33.3%
}

// Samples lost on the new side (100 beside 900 kept of each event: each ratio may be 10 % off)
// widen what the ratios may be; a term that may cross within that fails closed, with the reason,
// and one that cannot still passes. By hand: total IPC 1.5 -> 1.333 (-11.1 %), the new side's
// anywhere in 1.2 .. 1.467 (-20 % .. -2.2 %); alpha 2.0 -> 1.5 (-25 %), 1.35 .. 1.65 (-32.5 % ..
// -17.5 %).
TEST(RegressionGate, IpcTermsThatLostSamplesMayCrossFailClosed) {
  FunctionTotals old_side = TotalsOf(CyclesAndInstructions(1000, 2000));
  FunctionTotals new_side = TotalsOf(CyclesAndInstructions(2000, 3000));
  new_side.samples.assign(new_side.events.size(), 900);
  new_side.lost = 100;
  auto diff = DiffProfiles({old_side}, {new_side}, {});
  ASSERT_TRUE(diff.ok()) << diff.error().message();
  ASSERT_TRUE(diff->metrics.has_value());
  EXPECT_DOUBLE_EQ(diff->metrics->new_lost_reach, 0.1);
  EXPECT_DOUBLE_EQ(diff->metrics->old_lost_reach, 0.0);
  EXPECT_NE(diff->metrics->lost_reason.find("samples lost"), std::string::npos);
  auto v = Gate(*diff, {"total.ipc < -12%", "total.ipc < -21%", "func(alpha).ipc < -30%",
                        "func(alpha).ipc < -33%", "total.ipc < -10%"});
  std::vector<bool> tripped;
  for (const GateCheck& c : v.checks) tripped.push_back(c.tripped);
  EXPECT_EQ(tripped, (std::vector<bool>{true, false, true, false, true}));
  ASSERT_FALSE(v.checks[0].crossed.empty());
  EXPECT_NE(v.checks[0].crossed[0].bias.find("samples lost"), std::string::npos);
  EXPECT_NE(v.checks[0].explanation.find("failed closed"), std::string::npos)
      << v.checks[0].explanation;
  // Crossed as measured: no bias needed to say so.
  ASSERT_FALSE(v.checks[4].crossed.empty());
  EXPECT_EQ(v.checks[4].crossed[0].bias, "");
  // Nothing lost: the same terms judge the values as measured.
  auto clean = DiffProfiles({TotalsOf(CyclesAndInstructions(1000, 2000))},
                            {TotalsOf(CyclesAndInstructions(2000, 3000))}, {});
  ASSERT_TRUE(clean.ok());
  EXPECT_FALSE(Gate(*clean, {"total.ipc < -12%"}).tripped());
  EXPECT_FALSE(Gate(*clean, {"func(alpha).ipc < -30%"}).tripped());
}

TEST(RegressionGate, WithRepeatedRunsOnlySignificantChangesTrip) {
  std::vector<FunctionTotals> old_runs, new_runs;
  // alpha: +20% in every run; beta: +8% on average, but the runs overlap (noise).
  int alpha_old[] = {100, 102, 98, 101, 99}, alpha_new[] = {120, 122, 118, 121, 119};
  int beta_old[] = {50, 40, 60, 45, 55}, beta_new[] = {58, 41, 62, 44, 65};
  for (int i = 0; i < 5; ++i) {
    old_runs.push_back(TotalsOf("main;alpha " + std::to_string(alpha_old[i]) + "\nmain;beta " +
                                std::to_string(beta_old[i]) + "\n"));
    new_runs.push_back(TotalsOf("main;alpha " + std::to_string(alpha_new[i]) + "\nmain;beta " +
                                std::to_string(beta_new[i]) + "\n"));
  }
  auto diff = DiffProfiles(old_runs, new_runs, {});
  ASSERT_TRUE(diff.ok());
  auto v = Gate(*diff, {"func(alpha) > +10%", "func(beta) > +5%"});
  EXPECT_TRUE(v.checks[0].tripped);
  ASSERT_TRUE(v.checks[0].crossed[0].p_value.has_value());
  EXPECT_FALSE(v.checks[1].tripped);
  EXPECT_EQ(v.checks[1].not_significant, 1u);
  EXPECT_NE(v.checks[1].explanation.find("not significant"), std::string::npos);
}

// perf script text: one task-clock sample per function, periods in ns.
std::string Clock(int alpha_ns, int beta_ns) {
  std::string s;
  int t = 0;
  for (auto [ns, function] : {std::pair{alpha_ns, "alpha"}, std::pair{beta_ns, "beta"}})
    s += "prog  100  1." + std::to_string(100 + ++t) + ":  " + std::to_string(ns) +
         " task-clock: \n\t  401000 " + function + "+0x4 (/bin/prog)\n\n";
  return s;
}

TEST(RegressionGate, ClockThresholdsTakeATimeUnitAndPrintIt) {
  // alpha 2.5 ms -> 4 ms (+1.5 ms), beta 1 ms both sides.
  auto diff =
      DiffProfiles({TotalsOf(Clock(2500000, 1000000))}, {TotalsOf(Clock(4000000, 1000000))}, {});
  ASSERT_TRUE(diff.ok()) << diff.error().message();
  auto v = Gate(*diff, {"func(alpha) > +1.4ms", "func(alpha) > +1.6ms", "total > 1499us"});
  EXPECT_TRUE(v.checks[0].tripped);
  EXPECT_FALSE(v.checks[1].tripped);
  EXPECT_TRUE(v.checks[2].tripped);
  EXPECT_NE(v.checks[0].explanation.find("+1.50ms (old 2.500ms, new 4.000ms"), std::string::npos)
      << v.checks[0].explanation;
  // A bare number on a clock reads as ns to the code and as anything to a reader: refused.
  auto bare = EvaluateGate(*diff, {ParseThreshold("func(alpha) > 5").value()});
  ASSERT_FALSE(bare.ok());
  EXPECT_NE(bare.error().message().find("counts time"), std::string::npos)
      << bare.error().message();
  // And a time unit on counted events.
  auto counted = DiffProfiles({TotalsOf(kFourFunctionsOld)}, {TotalsOf(kFourFunctionsOld)}, {});
  ASSERT_TRUE(counted.ok());
  auto wrong = EvaluateGate(*counted, {ParseThreshold("total > 5ms").value()});
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.error().message().find("counts events"), std::string::npos)
      << wrong.error().message();
}

}  // namespace
}  // namespace tprof
