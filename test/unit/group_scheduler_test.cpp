// Group scheduling with the number of general-purpose counters as a parameter (this VM has none
// to learn it from).
#include "core/metrics/group_scheduler.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/model/metric_expression.h"

namespace tprof {
namespace {

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// Every metric must be placed in a group that holds all its events, and no group may use more
// general-purpose counters than there are.
void CheckSchedule(const MetricTable& table, const std::vector<const Metric*>& metrics,
                   const std::vector<ScheduledGroup>& groups, uint32_t counters) {
  for (const ScheduledGroup& g : groups) {
    size_t general = 0;
    for (const std::string& e : g.events) general += !Contains(table.fixed_events, e);
    EXPECT_LE(general, counters);
  }
  for (const Metric* m : metrics) {
    const ScheduledGroup* home = nullptr;
    for (const ScheduledGroup& g : groups)
      if (std::find(g.metrics.begin(), g.metrics.end(), m) != g.metrics.end()) home = &g;
    ASSERT_NE(home, nullptr) << m->name;
    auto expression = MetricExpression::Parse(m->formula);  // kept alive for the loop
    ASSERT_TRUE(expression.ok());
    for (const std::string& v : expression->variables())
      EXPECT_TRUE(Contains(home->events, v)) << m->name << " lacks " << v;
  }
}

TEST(GroupSchedulerTest, FitsTheCountersItIsGiven) {
  const MetricTable* n2 = FindMetricTable("neoverse-n2", BuiltinMetricTables()).value();
  auto metrics = n2->Select("l1,TLB,Cache,Branch,PEutilization").value();
  size_t previous = SIZE_MAX;
  for (uint32_t counters : {3u, 4u, 6u, 8u}) {
    auto groups = ScheduleGroups(*n2, metrics, counters);
    ASSERT_TRUE(groups.ok()) << groups.error().message();
    CheckSchedule(*n2, metrics, groups.value(), counters);
    EXPECT_LE(groups->size(), previous);  // more counters never need more groups
    previous = groups->size();
  }
  // Level 1 on N2 needs STALL_SLOT, OP_SPEC, OP_RETIRED beside the fixed cycle counter.
  auto l1 = n2->Select("l1").value();
  auto six = ScheduleGroups(*n2, l1, 6);
  ASSERT_TRUE(six.ok());
  EXPECT_EQ(six->size(), 1u);  // 5 general events fit in 6 counters
  auto three = ScheduleGroups(*n2, l1, 3);
  ASSERT_TRUE(three.ok());
  EXPECT_GE(three->size(), 2u);
  CheckSchedule(*n2, l1, three.value(), 3);
}

TEST(GroupSchedulerTest, AMetricThatCannotFitIsAnError) {
  const MetricTable* n2 = FindMetricTable("neoverse-n2", BuiltinMetricTables()).value();
  auto retiring = n2->Select("retiring").value();
  auto groups = ScheduleGroups(*n2, retiring, 2);  // STALL_SLOT, OP_SPEC, OP_RETIRED
  ASSERT_FALSE(groups.ok());
  EXPECT_NE(groups.error().message().find("needs 3 general-purpose counters"), std::string::npos)
      << groups.error().message();
}

TEST(GroupSchedulerTest, IntelSlotsLeadsTheTopdownGroup) {
  const MetricTable* icl = FindMetricTable("icelake", BuiltinMetricTables()).value();
  auto metrics = icl->Select("l1").value();
  auto groups = ScheduleGroups(*icl, metrics, 4);
  ASSERT_TRUE(groups.ok());
  ASSERT_EQ(groups->size(), 1u);  // topdown-* ride on fixed counters
  EXPECT_EQ(groups->at(0).events.front(), "slots");
  CheckSchedule(*icl, metrics, groups.value(), 4);
}

TEST(GroupSchedulerTest, CpuDetectionPicksTables) {
  CpuDescription zen4;
  zen4.vendor = "AuthenticAMD";
  zen4.family = 0x19;
  zen4.model = 0x11;
  EXPECT_EQ(TableForCpu(zen4, BuiltinMetricTables()).value()->name, "zen4");
  CpuDescription zen3 = zen4;
  zen3.model = 0x21;  // Ryzen 5000 (Vermeer)
  EXPECT_EQ(TableForCpu(zen3, BuiltinMetricTables()).value()->name, "zen3");
  CpuDescription icl;
  icl.vendor = "GenuineIntel";
  icl.family = 6;
  icl.model = 106;
  EXPECT_EQ(TableForCpu(icl, BuiltinMetricTables()).value()->name, "icelake");
  CpuDescription n2;
  n2.midr = 0x410fd493;
  EXPECT_EQ(TableForCpu(n2, BuiltinMetricTables()).value()->name, "neoverse-n2-r0p3");
  CpuDescription unknown;
  unknown.vendor = "GenuineIntel";
  unknown.family = 6;
  unknown.model = 1;
  EXPECT_FALSE(TableForCpu(unknown, BuiltinMetricTables()).ok());
}

}  // namespace
}  // namespace tprof
