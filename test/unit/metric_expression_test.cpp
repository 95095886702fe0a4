// Formula evaluation, checked on counts worked out by hand from the formulas' definitions.
#include "core/model/metric_expression.h"

#include <gtest/gtest.h>

#include <map>

namespace tprof {
namespace {

std::optional<double> Eval(const std::string& formula,
                           const std::map<std::string, double>& counts) {
  auto e = MetricExpression::Parse(formula);
  EXPECT_TRUE(e.ok()) << (e.ok() ? "" : e.error().message());
  if (!e.ok()) return std::nullopt;
  return e->Evaluate([&](const std::string& name) -> std::optional<double> {
    auto it = counts.find(name);
    return it == counts.end() ? std::nullopt : std::optional<double>(it->second);
  });
}

TEST(MetricExpressionTest, PrecedenceAndAssociativity) {
  EXPECT_DOUBLE_EQ(*Eval("1 + 2 * 3", {}), 7);
  EXPECT_DOUBLE_EQ(*Eval("(1 + 2) * 3", {}), 9);
  EXPECT_DOUBLE_EQ(*Eval("8 / 4 / 2", {}), 1);  // left to right
  EXPECT_DOUBLE_EQ(*Eval("10 - 4 - 3", {}), 3);
  EXPECT_DOUBLE_EQ(*Eval("-2 * -3", {}), 6);
  EXPECT_DOUBLE_EQ(*Eval("max(1, 5, 3) - min(4, 2) + abs(-1.5)", {}), 4.5);
  EXPECT_DOUBLE_EQ(*Eval("1e3 * 2", {}), 2000);
}

// Neoverse N2 level 1 with the r0p0-r0p2 erratum correction (topdown.md): 5 slots per cycle.
// With CPU_CYCLES = 1000, STALL_SLOT_FRONTEND = 1500, STALL_SLOT_BACKEND = 2000,
// STALL_SLOT = 3000, OP_RETIRED = 1800, OP_SPEC = 2000:
//   frontend = (1500 - 1000) / 5000 = 0.1; backend = 2000 / 5000 = 0.4;
//   retiring = 0.9 * (1 - 2000 / 5000) = 0.54; bad_speculation = 0.1 * 0.6 = 0.06.
TEST(MetricExpressionTest, NeoverseN2LevelOne) {
  std::map<std::string, double> c = {{"CPU_CYCLES", 1000},         {"STALL_SLOT_FRONTEND", 1500},
                                     {"STALL_SLOT_BACKEND", 2000}, {"STALL_SLOT", 3000},
                                     {"OP_RETIRED", 1800},         {"OP_SPEC", 2000}};
  EXPECT_DOUBLE_EQ(*Eval("(STALL_SLOT_FRONTEND - CPU_CYCLES) / (5 * CPU_CYCLES)", c), 0.1);
  EXPECT_DOUBLE_EQ(*Eval("STALL_SLOT_BACKEND / (5 * CPU_CYCLES)", c), 0.4);
  EXPECT_NEAR(
      *Eval("(OP_RETIRED / OP_SPEC) * (1 - (STALL_SLOT - CPU_CYCLES) / (5 * CPU_CYCLES))", c), 0.54,
      1e-12);
  EXPECT_NEAR(
      *Eval("(1 - OP_RETIRED / OP_SPEC) * (1 - (STALL_SLOT - CPU_CYCLES) / (5 * CPU_CYCLES))", c),
      0.06, 1e-12);
}

TEST(MetricExpressionTest, ZeroDenominatorsAndMissingEventsAreNotAvailable) {
  EXPECT_FALSE(Eval("A / B", {{"A", 1}, {"B", 0}}).has_value());
  EXPECT_FALSE(Eval("A / B", {{"A", 1}}).has_value());
  EXPECT_FALSE(Eval("max(A, 1)", {}).has_value());
  EXPECT_DOUBLE_EQ(*Eval("0 / B", {{"B", 4}}), 0);
}

TEST(MetricExpressionTest, NamesWithDotsHashesAndEscapedDashes) {
  auto e = MetricExpression::Parse(
      "de_no_dispatch_per_slot.no_ops_from_frontend / (#slots * ls_not_halted_cyc) + "
      "topdown\\-fe\\-bound");
  ASSERT_TRUE(e.ok()) << e.error().message();
  EXPECT_EQ(e->variables(),
            (std::vector<std::string>{"de_no_dispatch_per_slot.no_ops_from_frontend", "#slots",
                                      "ls_not_halted_cyc", "topdown-fe-bound"}));
}

TEST(MetricExpressionTest, SyntaxErrorsSayWhere) {
  for (const char* bad : {"(A + B", "A +", "A B", "foo(1, 2)", "abs(1, 2)", "", "A * / B"}) {
    auto e = MetricExpression::Parse(bad);
    EXPECT_FALSE(e.ok()) << bad;
    if (!e.ok()) {
      EXPECT_NE(e.error().message().find("formula"), std::string::npos);
    }
  }
  std::string deep(1000, '(');
  EXPECT_FALSE(MetricExpression::Parse(deep + "1").ok());
}

}  // namespace
}  // namespace tprof
