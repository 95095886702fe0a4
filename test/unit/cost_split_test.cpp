// The cost split of tprof diff (core/analysis/cost_split.h) on hand-built profiles: every part
// worked out here by hand, and the gate's work/efficiency terms.
#include "core/analysis/cost_split.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/analysis/regression_gate.h"

namespace tprof {
namespace {

// One run: per function {cycles, instructions}; the totals are their sums.
FunctionTotals OneRun(const std::map<std::string, std::pair<double, double>>& functions) {
  FunctionTotals t;
  t.events = {"cycles", "instructions"};
  t.totals = {0, 0};
  for (const auto& [name, counts] : functions) {
    t.self[{"app", name}] = {counts.first, counts.second};
    t.totals[0] += counts.first;
    t.totals[1] += counts.second;
  }
  return t;
}

const CostSplit* Find(const CostSplitDiff& split, const std::string& name) {
  for (const CostSplit& s : split.functions)
    if (s.key.function == name) return &s;
  return nullptr;
}

// parse: 1000 cycles for 500 instructions (CPI 2) -> 1560 for 600: 100 more instructions at
// CPI 2 are 200 cycles of work; 600 instructions at CPI 2.6 instead of 2 are 360 cycles of
// efficiency; 200 + 360 = 560 = 1560 - 1000. render: the same instructions, CPI 1 -> 1.5: all
// efficiency. loop: 25% more iterations at the same CPI: all work.
TEST(CostSplit, PartsWorkedOutByHandAddUpToTheChange) {
  auto old_run = OneRun({{"parse", {1000, 500}}, {"render", {400, 400}}, {"loop", {800, 1600}}});
  auto new_run = OneRun({{"parse", {1560, 600}}, {"render", {600, 400}}, {"loop", {1000, 2000}}});
  auto split = SplitCost({old_run}, {new_run}, "", "");
  ASSERT_TRUE(split.has_value());
  EXPECT_EQ(split->cost_event, "cycles");
  EXPECT_EQ(split->work_event, "instructions");
  const CostSplit* parse = Find(*split, "parse");
  ASSERT_NE(parse, nullptr);
  EXPECT_NEAR(parse->work.value, 200, 1e-9);
  EXPECT_NEAR(parse->efficiency.value, 360, 1e-9);
  EXPECT_NEAR(*parse->work.percent, 20, 1e-9);
  EXPECT_NEAR(*parse->efficiency.percent, 36, 1e-9);
  EXPECT_FALSE(parse->work.half_width.has_value());  // one run a side: no interval
  const CostSplit* render = Find(*split, "render");
  EXPECT_NEAR(render->work.value, 0, 1e-9);
  EXPECT_NEAR(render->efficiency.value, 200, 1e-9);
  const CostSplit* loop = Find(*split, "loop");
  EXPECT_NEAR(loop->work.value, 200, 1e-9);
  EXPECT_NEAR(loop->efficiency.value, 0, 1e-9);
  // Rows by |cost change|: parse (560), render (200) and loop (200) by name.
  EXPECT_EQ(split->functions[0].key.function, "parse");
  // The total: 2200 -> 3160 cycles, 2500 -> 3000 instructions: work 500 * 2200/2500 = 440,
  // efficiency 3160 - 3000 * 0.88 = 520.
  EXPECT_NEAR(split->total.work.value, 440, 1e-9);
  EXPECT_NEAR(split->total.efficiency.value, 520, 1e-9);
  for (const CostSplit* s : {parse, render, loop, static_cast<const CostSplit*>(&split->total)})
    EXPECT_NEAR(s->work.value + s->efficiency.value, s->new_cost - s->old_cost, 1e-9);
}

// Two runs a side: the parts of the means, with intervals by the delta method worked out with
// the analytic gradient: work = (W1 - W0) C0 / W0 has d/dC0 = (W1 - W0) / W0,
// d/dW0 = -W1 C0 / W0^2, d/dW1 = C0 / W0; efficiency = C1 - W1 C0 / W0 has d/dC0 = -W1 / W0,
// d/dW0 = W1 C0 / W0^2, d/dC1 = 1, d/dW1 = -C0 / W0. Each side's mean has covariance
// (sample covariance of its runs) / 2; t with 1 degree of freedom is 12.706.
TEST(CostSplit, RepeatedRunsGiveIntervalsByTheDeltaMethod) {
  auto split = SplitCost({OneRun({{"f", {1000, 500}}}), OneRun({{"f", {1100, 500}}})},
                         {OneRun({{"f", {1500, 600}}}), OneRun({{"f", {1540, 640}}})}, "", "");
  ASSERT_TRUE(split.has_value());
  const CostSplit* f = Find(*split, "f");
  ASSERT_NE(f, nullptr);
  const double C0 = 1050, W0 = 500, C1 = 1520, W1 = 620;
  EXPECT_NEAR(f->work.value, (W1 - W0) * C0 / W0, 1e-9);
  EXPECT_NEAR(f->efficiency.value, C1 - W1 * C0 / W0, 1e-9);
  // Old runs: C 1000, 1100 (variance 5000), W 500, 500: var(C0) = 2500, the rest 0.
  // New runs: C 1500, 1540 (variance 800), W 600, 640 (variance 800), covariance 800:
  // var(C1) = var(W1) = cov = 400.
  const double var_c0 = 2500, var_c1 = 400, var_w1 = 400, cov_c1w1 = 400;
  const double work_var = std::pow((W1 - W0) / W0, 2) * var_c0 + std::pow(C0 / W0, 2) * var_w1;
  const double g_c0 = -W1 / W0, g_c1 = 1, g_w1 = -C0 / W0;
  const double efficiency_var = g_c0 * g_c0 * var_c0 + g_c1 * g_c1 * var_c1 + g_w1 * g_w1 * var_w1 +
                                2 * g_c1 * g_w1 * cov_c1w1;
  ASSERT_TRUE(f->work.half_width.has_value());
  EXPECT_NEAR(*f->work.half_width, 12.706 * std::sqrt(work_var), 1e-3);
  EXPECT_NEAR(*f->efficiency.half_width, 12.706 * std::sqrt(efficiency_var), 1e-3);
}

TEST(CostSplit, AnyPairOfEventsAndMissingEvents) {
  FunctionTotals old_run, new_run;
  old_run.events = new_run.events = {"task-clock", "page-faults"};
  old_run.self[{"app", "touch"}] = {2000, 100};
  new_run.self[{"app", "touch"}] = {3000, 120};
  old_run.totals = {2000, 100};
  new_run.totals = {3000, 120};
  auto split = SplitCost({old_run}, {new_run}, "task-clock", "page-faults");
  ASSERT_TRUE(split.has_value());
  // 20 more faults at 20 ns each: 400 of work; 120 faults at 25 ns instead of 20: 600.
  EXPECT_NEAR(split->functions[0].work.value, 400, 1e-9);
  EXPECT_NEAR(split->functions[0].efficiency.value, 600, 1e-9);
  EXPECT_FALSE(SplitCost({old_run}, {new_run}, "", "").has_value());  // no cycles here
  EXPECT_FALSE(ParseSplitEvents("cycles").ok());
  EXPECT_EQ(ParseSplitEvents("cycles").error().kind(), ErrorKind::kBadRequest);
  EXPECT_EQ(ParseSplitEvents("a/b")->second, "b");
}

TEST(CostSplit, TheGateJudgesWorkAndEfficiency) {
  auto diff = DiffProfiles({OneRun({{"parse", {1000, 500}}, {"loop", {800, 1600}}})},
                           {OneRun({{"parse", {1560, 600}}, {"loop", {1000, 2000}}})}, {});
  ASSERT_TRUE(diff.ok()) << diff.error().message();
  ASSERT_TRUE(diff->split.has_value());
  auto judge = [&](const std::string& text) {
    auto t = ParseThreshold(text);
    EXPECT_TRUE(t.ok()) << text;
    auto verdict = EvaluateGate(*diff, {*t});
    EXPECT_TRUE(verdict.ok()) << text;
    return verdict->tripped();
  };
  EXPECT_TRUE(judge("func(parse).efficiency > +30%"));  // 36 %
  EXPECT_FALSE(judge("func(parse).efficiency > +40%"));
  EXPECT_FALSE(judge("func(loop).efficiency > +1%"));  // 0: more iterations only
  EXPECT_TRUE(judge("func(loop).work > +20%"));        // 25 %
  // The total: 1800 -> 2560 cycles, 2100 -> 2600 instructions: work 500 * 1800/2100 = 428.6
  // cycles (raw, no unit).
  EXPECT_TRUE(judge("total.work > 400"));
  EXPECT_FALSE(judge("total.work > 450"));
  EXPECT_FALSE(ParseThreshold("share(parse).work > +2pt").ok());
  EXPECT_FALSE(ParseThreshold("func(parse).work > +2pt").ok());
}

}  // namespace
}  // namespace tprof
