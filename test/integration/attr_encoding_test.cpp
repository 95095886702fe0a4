// Branch stacks, hardware groups and precise events cannot be opened on this VM, so their
// encoding is checked against real recordings: for each perf.data file in shared/testdata, the
// attributes tprof would open for the same command line must agree with those perf opened, as
// `perf evlist -v` prints them. Compared: type, config, sampling period or frequency, precise
// level, privilege exclusions, branch_sample_type, the group read format, and the sample_type
// bits that carry what the command asked for (CALLCHAIN, BRANCH_STACK, READ, REGS_USER,
// STACK_USER). Bookkeeping bits (ID vs IDENTIFIER, CPU, PERIOD) vary between perf versions and
// are tprof's own choice.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <map>
#include <sstream>

#include "pmu/perf_event.h"
#include "test/support/run_command.h"
#include "test/support/test_programs.h"

namespace tprof {
namespace {

using Attr = std::map<std::string, std::string>;

// Parses `perf evlist -v` lines: "name: key: value, key: value, ...".
std::vector<Attr> PerfEvlist(const std::string& file) {
  auto r = testing::RunCommand({"/usr/bin/perf", "evlist", "-v", "-i", file});
  std::vector<Attr> attrs;
  std::stringstream lines(r.out);
  std::string line;
  while (std::getline(lines, line)) {
    size_t colon = line.find(": ");
    if (colon == std::string::npos) continue;
    Attr attr;
    attr["name"] = line.substr(0, colon);
    std::string rest = line.substr(colon + 2);
    const std::string braces = "{ sample_period, sample_freq }";
    if (size_t b = rest.find(braces); b != std::string::npos)
      rest.replace(b, braces.size(), "period_or_freq");
    std::stringstream fields(rest);
    std::string field;
    while (std::getline(fields, field, ',')) {
      while (!field.empty() && field[0] == ' ') field.erase(0, 1);
      size_t sep = field.find(": ");
      if (sep != std::string::npos) attr[field.substr(0, sep)] = field.substr(sep + 2);
    }
    attrs.push_back(attr);
  }
  return attrs;
}

uint64_t Number(const Attr& attr, const std::string& key) {
  auto it = attr.find(key);
  return it == attr.end() ? 0 : std::strtoull(it->second.c_str(), nullptr, 0);
}

bool HasFlag(const Attr& attr, const std::string& key, const std::string& flag) {
  auto it = attr.find(key);
  if (it == attr.end()) return false;
  std::stringstream in(it->second);
  std::string word;
  while (std::getline(in, word, '|'))
    if (word == flag) return true;
  return false;
}

struct Case {
  std::string file;
  std::string events;
  SamplingOptions options;
};

SamplingOptions Frequency(uint64_t hz, CallGraphMode mode = CallGraphMode::kNone,
                          uint64_t branches = 0) {
  SamplingOptions o;
  o.frequency = hz;
  o.call_graph = mode;
  o.branch_sample_type = branches;
  return o;
}
SamplingOptions Period(uint64_t period) {
  SamplingOptions o;
  o.use_frequency = false;
  o.period = period;
  return o;
}

class AttrEncodingTest : public ::testing::TestWithParam<Case> {};

TEST_P(AttrEncodingTest, MatchesWhatPerfOpened) {
  const Case& c = GetParam();
  std::vector<Attr> perf = PerfEvlist(kTestdata + "/perf/" + c.file);
  ASSERT_FALSE(perf.empty()) << "perf evlist read nothing from " << c.file;
  auto groups = ParseEventList(c.events);
  ASSERT_TRUE(groups.ok()) << groups.error().message();
  std::vector<PlannedEvent> planned = PlanEvents(groups.value(), c.options);
  ASSERT_EQ(planned.size(), perf.size());
  for (size_t i = 0; i < planned.size(); ++i) {
    SCOPED_TRACE(c.file + " event " + perf[i]["name"]);
    const perf_event_attr& a = planned[i].attr;
    EXPECT_EQ(a.type, Number(perf[i], "type"));
    EXPECT_EQ(a.config, Number(perf[i], "config"));
    EXPECT_EQ(a.sample_period, Number(perf[i], "period_or_freq"));  // union with sample_freq
    EXPECT_EQ(a.freq, Number(perf[i], "freq"));
    EXPECT_EQ(a.precise_ip, Number(perf[i], "precise_ip"));
    EXPECT_EQ(a.exclude_kernel, Number(perf[i], "exclude_kernel"));
    EXPECT_EQ(a.exclude_user, Number(perf[i], "exclude_user"));
    EXPECT_EQ(a.exclude_hv, Number(perf[i], "exclude_hv"));
    for (auto [bit, name] :
         {std::pair{PERF_SAMPLE_CALLCHAIN, "CALLCHAIN"},
          std::pair{PERF_SAMPLE_BRANCH_STACK, "BRANCH_STACK"}, std::pair{PERF_SAMPLE_READ, "READ"},
          std::pair{PERF_SAMPLE_REGS_USER, "REGS_USER"},
          std::pair{PERF_SAMPLE_STACK_USER, "STACK_USER"}}) {
      // tprof's one deliberate difference: without a call graph, an event that samples the
      // kernel also copies the user pc, to credit kernel work to the user function
      // (docs/kernel-work.md).
      if (bit == PERF_SAMPLE_REGS_USER && c.options.call_graph == CallGraphMode::kNone &&
          !a.exclude_kernel) {
        EXPECT_FALSE(HasFlag(perf[i], "sample_type", name));
        EXPECT_TRUE(a.sample_type & bit);
        EXPECT_EQ(a.sample_regs_user, UserPcRegisterMask());
        continue;
      }
      // The second: -g also copies the user registers and the stack's top, to mend the chains
      // where a leaf has no frame pointer (docs/call-stacks.md); --call-graph fp,0 is perf's -g.
      if ((bit == PERF_SAMPLE_REGS_USER || bit == PERF_SAMPLE_STACK_USER) &&
          c.options.call_graph == CallGraphMode::kFramePointer && !a.exclude_user) {
        EXPECT_FALSE(HasFlag(perf[i], "sample_type", name));
        EXPECT_TRUE(a.sample_type & bit) << name;
        EXPECT_EQ(a.sample_stack_user, kDefaultFramePointerStackSize);
        SamplingOptions plain = c.options;
        plain.fp_stack_size = 0;
        const perf_event_attr p = PlanEvents(groups.value(), plain)[i].attr;
        EXPECT_FALSE(p.sample_type & bit) << name;
        continue;
      }
      EXPECT_EQ((a.sample_type & bit) != 0, HasFlag(perf[i], "sample_type", name)) << name;
    }
    EXPECT_EQ((a.read_format & PERF_FORMAT_GROUP) != 0, HasFlag(perf[i], "read_format", "GROUP"));
    EXPECT_EQ(a.branch_sample_type & PERF_SAMPLE_BRANCH_ANY ? "ANY" : "",
              perf[i].count("branch_sample_type") ? perf[i]["branch_sample_type"] : "");
  }
}

INSTANTIATE_TEST_SUITE_P(
    Testdata, AttrEncodingTest,
    ::testing::Values(
        Case{"quipper-perf.data.throttle-3.8", "cycles,instructions", Period(10000)},
        Case{"quipper-perf.data.busy.1-3.4",
             "cycles,instructions,cache-references,cache-misses,branches,branch-misses",
             Frequency(1000)},
        Case{"quipper-perf.data.callgraph-3.8", "cycles",
             Frequency(4000, CallGraphMode::kFramePointer)},
        Case{"quipper-perf.data.callgraph_and_branch-3.8", "cycles",
             Frequency(4000, CallGraphMode::kFramePointer, PERF_SAMPLE_BRANCH_ANY)},
        Case{"quipper-perf.data.branch-4.14", "cycles:ppp",
             Frequency(4000, CallGraphMode::kNone, PERF_SAMPLE_BRANCH_ANY)},
        Case{"quipper-perf.data.forkexit-3.8", "cycles", Frequency(4000)},
        Case{"quipper-perf.data.lost_samples-4.4",
             "{cycles:pp,instructions:pp,branch-instructions:pp}", Period(20003)},
        Case{"quipper-perf.data.piped.header_feautres_group_desc-6.8", "{cycles:u,instructions:u}",
             Frequency(4000)},
        Case{"autofdo/propeller_sample_1.perfdata1", "cycles:u",
             Frequency(4000, CallGraphMode::kNone, PERF_SAMPLE_BRANCH_ANY)}),
    [](const ::testing::TestParamInfo<Case>& info) {
      std::string name = info.param.file.substr(info.param.file.rfind('/') + 1);
      for (char& ch : name)
        if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
      return name;
    });

// The branch filter syntax of -j, bit for bit against the kernel's definitions.
TEST(BranchFilterTest, ParsesPerfNames) {
  EXPECT_EQ(ParseBranchFilter("any").value(), uint64_t{PERF_SAMPLE_BRANCH_ANY});
  EXPECT_EQ(ParseBranchFilter("any_call,u").value(),
            uint64_t{PERF_SAMPLE_BRANCH_ANY_CALL | PERF_SAMPLE_BRANCH_USER});
  EXPECT_EQ(ParseBranchFilter("u").value(),
            uint64_t{PERF_SAMPLE_BRANCH_ANY | PERF_SAMPLE_BRANCH_USER});
  auto bad = ParseBranchFilter("ind_cal");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message().find("did you mean 'ind_call'"), std::string::npos);
}

// --call-graph MODE[,SIZE] as perf takes it: SIZE a multiple of 8 up to 65528, 0 (no stack copy)
// for fp alone; and --burst LONG,SHORT[,JITTER_BITS].
TEST(SamplingSpecTest, CallGraphAndBurstParseAsPerfTakesThem) {
  SamplingOptions s;
  ASSERT_TRUE(ParseCallGraph("dwarf,16384", s).ok());
  EXPECT_EQ(s.call_graph, CallGraphMode::kDwarf);
  EXPECT_EQ(s.dwarf_stack_size, 16384u);
  ASSERT_TRUE(ParseCallGraph("fp,0", s).ok());
  EXPECT_EQ(s.call_graph, CallGraphMode::kFramePointer);
  EXPECT_EQ(s.fp_stack_size, 0u);
  ASSERT_TRUE(ParseCallGraph("lbr", s).ok());
  EXPECT_EQ(s.call_graph, CallGraphMode::kLbr);
  for (const char* bad : {"dwarf,0", "dwarf,12", "dwarf,65536", "fp,", "dwarf,8x", "frame"})
    EXPECT_FALSE(ParseCallGraph(bad, s).ok()) << bad;
  EXPECT_NE(ParseCallGraph("frame", s).error().message().find("known: fp, dwarf, lbr"),
            std::string::npos);

  ASSERT_TRUE(ParseBurst("1000000,50000,4", s).ok());
  EXPECT_EQ(s.burst_long, 1000000u);
  EXPECT_EQ(s.burst_short, 50000u);
  EXPECT_EQ(s.burst_jitter_bits, 4u);
  for (const char* bad : {"1000", "100,100", "100,0", "100,10,16", "5000000000,4294967296"})
    EXPECT_FALSE(ParseBurst(bad, s).ok()) << bad;
}

// Leader sampling asks the kernel for every member's count in every sample.
TEST(PlanEventsTest, LeaderSampledGroupReadsAllMembers) {
  auto groups = ParseEventList("{cycles,instructions}:S");
  ASSERT_TRUE(groups.ok());
  auto planned = PlanEvents(groups.value(), Frequency(97, CallGraphMode::kDwarf));
  ASSERT_EQ(planned.size(), 2u);
  const perf_event_attr& leader = planned[0].attr;
  const perf_event_attr& member = planned[1].attr;
  EXPECT_TRUE(leader.sample_type & PERF_SAMPLE_READ);
  EXPECT_EQ(leader.read_format & (PERF_FORMAT_GROUP | PERF_FORMAT_ID |
                                  PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING),
            uint64_t{PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED |
                     PERF_FORMAT_TOTAL_TIME_RUNNING});
  EXPECT_EQ(leader.sample_freq, 97u);
  EXPECT_EQ(member.sample_period, 0u);  // members do not sample on their own
  EXPECT_FALSE(member.freq);
  EXPECT_TRUE(leader.sample_type & PERF_SAMPLE_REGS_USER);
  EXPECT_TRUE(leader.sample_type & PERF_SAMPLE_STACK_USER);
  EXPECT_EQ(leader.sample_stack_user, 8192u);
  EXPECT_EQ(planned[0].desc.group_members, (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(planned[1].desc.group_leader, 0);
}

}  // namespace
}  // namespace tprof

namespace tprof {
namespace {

// The burst fields as the proposed ABI lays them out: size 144, hf_sample_period at offset 136,
// hf_sample_rand in the low 4 bits at offset 140, everything before as the plain attribute.
TEST(BurstEncodingTest, ProposedKernelAbiLayout) {
  perf_event_attr base{};
  base.size = sizeof base;
  base.type = PERF_TYPE_RAW;
  base.config = 0x11;
  base.sample_period = 1000000;
  BurstAttr burst = EncodeBurstAttr(base, 500, 0x1b);
  uint32_t size, period, random;
  std::memcpy(&size, burst.bytes + offsetof(perf_event_attr, size), 4);
  std::memcpy(&period, burst.bytes + 136, 4);
  std::memcpy(&random, burst.bytes + 140, 4);
  EXPECT_EQ(size, 144u);
  EXPECT_EQ(period, 500u);
  EXPECT_EQ(random, 0xbu);  // 4 bits only
  perf_event_attr round_trip;
  std::memcpy(&round_trip, burst.bytes, sizeof round_trip);
  EXPECT_EQ(round_trip.config, 0x11u);
  EXPECT_EQ(round_trip.sample_period, 1000000u);
  for (size_t i = sizeof(perf_event_attr); i < 136; ++i) EXPECT_EQ(burst.bytes[i], 0) << i;
}

TEST(BurstEncodingTest, PlanPutsTheWindowOnSamplingLeadersOnly) {
  SamplingOptions options;
  options.burst_long = 1000000;
  options.burst_short = 400;
  auto planned = PlanEvents(ParseEventList("{cpu-clock,page-faults}:S").value(), options);
  ASSERT_EQ(planned.size(), 2u);
  EXPECT_EQ(planned[0].hf_sample_period, 400u);
  EXPECT_EQ(planned[0].attr.sample_period, 1000000u);
  EXPECT_FALSE(planned[0].attr.freq);
  EXPECT_EQ(planned[1].hf_sample_period, 0u);
}

// A member sampled on its own beside a burst group (the second method report checks the group's
// windows against) keeps -F's rate and takes no window: a software event refuses the burst
// fields, and the fallback's short period would sample it every 50,000 faults.
TEST(BurstEncodingTest, AMemberSampledOnItsOwnKeepsItsOwnRate) {
  std::vector<EventGroup> groups = ParseEventList("{cpu-clock,page-faults}:S").value();
  for (EventGroup& lone : PlanMemberSampling(groups).added) groups.push_back(lone);
  ASSERT_EQ(groups.size(), 2u);
  SamplingOptions kernel;
  kernel.burst_long = 1000000;
  kernel.burst_short = 50000;
  auto planned = PlanEvents(groups, kernel);
  ASSERT_EQ(planned.size(), 3u);
  EXPECT_EQ(planned[0].hf_sample_period, 50000u);
  EXPECT_EQ(planned[2].desc.name, "page-faults");
  EXPECT_EQ(planned[2].hf_sample_period, 0u);
  EXPECT_TRUE(planned[2].attr.freq);
  EXPECT_EQ(planned[2].attr.sample_freq, 4000u);
  // The kernel without hf_sample_period: every sampled event at the short period, but this one.
  SamplingOptions fallback;
  fallback.use_frequency = false;
  fallback.period = 50000;
  planned = PlanEvents(groups, fallback);
  ASSERT_EQ(planned.size(), 3u);
  EXPECT_EQ(planned[0].attr.sample_period, 50000u);
  EXPECT_FALSE(planned[0].attr.freq);
  EXPECT_TRUE(planned[2].attr.freq);
  EXPECT_EQ(planned[2].attr.sample_freq, 4000u);
}

}  // namespace
}  // namespace tprof
