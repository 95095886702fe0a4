// The -e syntax. Expected encodings come from the kernel's headers (generic and software
// events), the sysfs files of this machine's PMUs, and Intel's published event table (for the
// libpfm4 name: INST_RETIRED.ANY_P is event 0xC0, umask 0x00 on Skylake).
#include "pmu/event_spec.h"

#include <gtest/gtest.h>
#include <linux/perf_event.h>
#include <perfmon/pfmlib.h>

#include <cstdlib>
#include <fstream>

namespace tprof {
namespace {

TEST(EventSpecTest, GenericNames) {
  auto e = ParseEventSpec("instructions");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->type, uint32_t{PERF_TYPE_HARDWARE});
  EXPECT_EQ(e->config, uint64_t{PERF_COUNT_HW_INSTRUCTIONS});
  auto s = ParseEventSpec("context-switches");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->type, uint32_t{PERF_TYPE_SOFTWARE});
  EXPECT_EQ(s->config, uint64_t{PERF_COUNT_SW_CONTEXT_SWITCHES});
}

TEST(EventSpecTest, Modifiers) {
  auto u = ParseEventSpec("cycles:u");
  ASSERT_TRUE(u.ok());
  EXPECT_FALSE(u->exclude_user);
  EXPECT_TRUE(u->exclude_kernel);
  EXPECT_TRUE(u->exclude_hv);
  auto kppp = ParseEventSpec("cycles:kppp");
  ASSERT_TRUE(kppp.ok());
  EXPECT_TRUE(kppp->exclude_user);
  EXPECT_FALSE(kppp->exclude_kernel);
  EXPECT_EQ(kppp->precise_ip, 3u);
  EXPECT_FALSE(ParseEventSpec("cycles:pppp").ok());
  auto bad = ParseEventSpec("cycles:x");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message().find("unknown modifier 'x'"), std::string::npos);
  auto s = ParseEventSpec("cycles:S");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message().find("group"), std::string::npos);
}

TEST(EventSpecTest, RawCodes) {
  auto e = ParseEventSpec("r01c0:u");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->type, uint32_t{PERF_TYPE_RAW});
  EXPECT_EQ(e->config, 0x1c0u);
  EXPECT_TRUE(e->exclude_kernel);
}

std::string SysfsType(const std::string& pmu) {
  std::ifstream in("/sys/bus/event_source/devices/" + pmu + "/type");
  std::string type;
  in >> type;
  return type;
}

TEST(EventSpecTest, PmuTerms) {
  auto e = ParseEventSpec("software/config=3,name=my-switches/");
  ASSERT_TRUE(e.ok()) << e.error().message();
  EXPECT_EQ(std::to_string(e->type), SysfsType("software"));
  EXPECT_EQ(e->config, 3u);
  EXPECT_EQ(e->name, "my-switches");
  auto period = ParseEventSpec("software/config=0,period=12345/k");
  ASSERT_TRUE(period.ok());
  EXPECT_EQ(period->period, 12345u);
  EXPECT_TRUE(period->exclude_user);
  EXPECT_FALSE(ParseEventSpec("nopmu/config=1/").ok());
  EXPECT_FALSE(ParseEventSpec("software/config=zz/").ok());
  EXPECT_FALSE(ParseEventSpec("software/config=1").ok());
}

// The msr PMU has a format file ("event" -> "config:0-63") and a named event ("tsc" ->
// "event=0x00") on x86 machines, VMs included.
TEST(EventSpecTest, PmuFormatTermsAndAliases) {
  if (SysfsType("msr").empty()) GTEST_SKIP() << "no msr PMU here";
  auto alias = ParseEventSpec("msr/tsc/");
  ASSERT_TRUE(alias.ok()) << alias.error().message();
  EXPECT_EQ(std::to_string(alias->type), SysfsType("msr"));
  EXPECT_EQ(alias->config, 0u);
  auto term = ParseEventSpec("msr/event=0x5/");
  ASSERT_TRUE(term.ok()) << term.error().message();
  EXPECT_EQ(term->config, 5u);
  auto unknown = ParseEventSpec("msr/bogus=1/");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message().find("bogus"), std::string::npos);
}

TEST(EventSpecTest, VendorNamesThroughLibpfm) {
#if defined(__x86_64__)
  // Force the Skylake tables so the expectation does not depend on this machine's CPU.
  pfm_terminate();
  setenv("LIBPFM_FORCE_PMU", "skl", 1);
  auto e = ParseEventSpec("INST_RETIRED:ANY_P:u");
  unsetenv("LIBPFM_FORCE_PMU");
  pfm_terminate();
  ASSERT_TRUE(e.ok()) << e.error().message();
  EXPECT_EQ(e->type, uint32_t{PERF_TYPE_RAW});
  EXPECT_EQ(e->config & 0xffff, 0x00c0u);  // umask 0x00, event 0xc0
  EXPECT_TRUE(e->exclude_kernel);
  EXPECT_FALSE(e->exclude_user);
#else
  GTEST_SKIP() << "the expectation is for x86 tables";
#endif
}

TEST(EventSpecTest, UnknownNamesSuggest) {
  auto e = ParseEventSpec("instructons");
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message().find("did you mean 'instructions'"), std::string::npos);
}

TEST(EventListTest, GroupsAndLeaderSampling) {
  auto list = ParseEventList("cycles,{cpu-clock,page-faults,software/config=3/}:S,r00c0:k");
  ASSERT_TRUE(list.ok()) << list.error().message();
  ASSERT_EQ(list->size(), 3u);
  EXPECT_FALSE((*list)[0].is_group());
  EXPECT_TRUE((*list)[1].is_group());
  EXPECT_TRUE((*list)[1].leader_sampling);
  ASSERT_EQ((*list)[1].events.size(), 3u);
  EXPECT_EQ((*list)[1].events[2].config, 3u);
  EXPECT_EQ((*list)[2].events[0].config, 0xc0u);
  auto u = ParseEventList("{cycles,instructions}:u");
  ASSERT_TRUE(u.ok());
  EXPECT_TRUE((*u)[0].events[1].exclude_kernel);  // group modifiers apply to every member
  EXPECT_FALSE((*u)[0].leader_sampling);
}

TEST(EventListTest, Errors) {
  EXPECT_FALSE(ParseEventList("{cycles,instructions").ok());
  EXPECT_FALSE(ParseEventList("cycles,").ok());
  EXPECT_FALSE(ParseEventList("").ok());
  EXPECT_FALSE(ParseEventList("{cycles}:Z").ok());
  EXPECT_FALSE(ParseEventList("{cycles}x").ok());
}

}  // namespace
}  // namespace tprof

namespace tprof {
namespace {

std::vector<std::string> NamesAndPeriods(const MemberSampling& plan) {
  std::vector<std::string> out;
  for (const EventGroup& g : plan.added)
    out.push_back(g.events.at(0).name + "@" + std::to_string(g.events.at(0).period));
  return out;
}

TEST(MemberSampling, MembersAtFsRateWhateverThePeriod) {
  auto groups = ParseEventList("{task-clock,page-faults,context-switches}:S");
  ASSERT_TRUE(groups.ok());
  MemberSampling plan = PlanMemberSampling(*groups);
  EXPECT_EQ(NamesAndPeriods(plan),
            (std::vector<std::string>{"page-faults@0", "context-switches@0"}));
  EXPECT_TRUE(plan.notes.empty());
  for (const EventGroup& lone : plan.added) EXPECT_TRUE(lone.second_method);
  auto hardware = ParseEventList("{cycles,instructions}:S");
  ASSERT_TRUE(hardware.ok());
  EXPECT_EQ(NamesAndPeriods(PlanMemberSampling(*hardware)),
            (std::vector<std::string>{"instructions@0"}));
  // A period term on a member is the group's business (the member is read, not sampled): the
  // lone copy keeps -F's rate.
  auto with_term = ParseEventList("{task-clock,software/config=2,period=7,name=pf/}:S");
  ASSERT_TRUE(with_term.ok());
  EXPECT_EQ(NamesAndPeriods(PlanMemberSampling(*with_term)), (std::vector<std::string>{"pf@0"}));
}

TEST(MemberSampling, NothingTwiceNothingForGroupsThatReadOnlyAndNoteWhatIsLeftOut) {
  // Already sampled on its own; a group without :S samples every member itself.
  auto given = ParseEventList("{task-clock,page-faults}:S,page-faults,{cpu-clock,minor-faults}");
  ASSERT_TRUE(given.ok());
  MemberSampling plan = PlanMemberSampling(*given);
  EXPECT_TRUE(plan.added.empty());
  EXPECT_TRUE(plan.notes.empty());
  // A clock sampled in one mode (what a user who is not root records): its members are sampled
  // too, since report holds the group's values against them, allowing for the time the clock's
  // samples leave out.
  auto user_clock = ParseEventList("{task-clock:u,page-faults:u}:S");
  ASSERT_TRUE(user_clock.ok());
  MemberSampling user_only = PlanMemberSampling(*user_clock);
  EXPECT_EQ(NamesAndPeriods(user_only), (std::vector<std::string>{"page-faults:u@0"}));
  EXPECT_TRUE(user_only.notes.empty());
  // Five hardware events, three more to sample: past the counter budget (4), each left out is
  // named, and what fits is kept.
  auto many = ParseEventList("{cycles,instructions,branches,branch-misses,cache-misses}:S");
  ASSERT_TRUE(many.ok());
  MemberSampling budget = PlanMemberSampling(*many);
  EXPECT_TRUE(budget.added.empty());
  ASSERT_EQ(budget.notes.size(), 1u);
  for (const char* name : {"instructions", "branches", "branch-misses", "cache-misses"})
    EXPECT_NE(budget.notes[0].find(name), std::string::npos) << budget.notes[0];
  auto three = ParseEventList("{cycles,instructions,branches}:S");
  ASSERT_TRUE(three.ok());
  MemberSampling fits = PlanMemberSampling(*three);
  EXPECT_EQ(NamesAndPeriods(fits), (std::vector<std::string>{"instructions@0"}));
  ASSERT_EQ(fits.notes.size(), 1u);
  EXPECT_NE(fits.notes[0].find("branches"), std::string::npos) << fits.notes[0];
}

}  // namespace
}  // namespace tprof
