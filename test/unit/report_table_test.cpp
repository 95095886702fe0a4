// The report table's pieces on constructed samples: sort keys, time ranges, event-name folding,
// metrics from sampled periods and from group deltas, the low-confidence rule, and recognising
// a `record -M l1` recording's metric table. Expected values are worked out here by hand.
#include "core/analysis/report_table.h"

#include <gtest/gtest.h>
#include <linux/perf_event.h>

#include <cmath>
#include <map>
#include <random>
#include <sstream>
#include <tuple>

#include "core/analysis/call_relations.h"
#include "core/analysis/derived_metrics.h"
#include "core/analysis/significance.h"
#include "core/format/record_codec.h"
#include "core/metrics/recorded_metrics.h"
#include "core/model/kernel_entry_credit.h"
#include "core/source/profile_source.h"
#include "report/report_table_view.h"
#include "report/text_report.h"
#include "test/support/mapping_named_resolver.h"

namespace tprof {
namespace {

// Addresses 0x1000.. are f, 0x2000.. are g, 0x3000.. are main; all in "prog".
class ProgResolver : public FrameResolver {
 public:
  ResolvedFrame Resolve(const Mapping*, uint64_t address) override {
    ResolvedFrame r;
    r.module = "/bin/prog";
    r.function = address < 0x2000 ? "f(int)" : address < 0x3000 ? "ns::g()" : "main";
    r.frames.push_back(
        {r.function, "", "prog.cc", static_cast<uint32_t>(address & 0xff), 0, false});
    r.resolved = true;
    return r;
  }
};

Sample At(uint32_t event, uint64_t ip, uint64_t period, uint64_t time = 0) {
  Sample s;
  s.event = event;
  s.ip = ip;
  s.period = period;
  s.pid = s.tid = 7;
  s.time = time;
  return s;
}

// `file` mapped at 0x1000 (one page) in process 7, At's.
MmapRecord PageAt0x1000(const std::string& file) {
  MmapRecord map;
  map.pid = 7;
  map.start = 0x1000;
  map.length = 0x1000;
  map.filename = file;
  return map;
}

// `table` has `expected`'s rows, in its order, with its counts.
void ExpectSameRows(const ReportTable& table, const ReportTable& expected) {
  ASSERT_EQ(table.rows.size(), expected.rows.size());
  for (size_t r = 0; r < expected.rows.size(); ++r) {
    EXPECT_EQ(table.rows[r].keys, expected.rows[r].keys) << r;
    EXPECT_EQ(table.rows[r].self_period, expected.rows[r].self_period) << r;
    EXPECT_EQ(table.rows[r].self_samples, expected.rows[r].self_samples) << r;
    EXPECT_EQ(table.rows[r].total_period, expected.rows[r].total_period) << r;
    EXPECT_EQ(table.rows[r].total_samples, expected.rows[r].total_samples) << r;
  }
  EXPECT_EQ(table.total_period, expected.total_period);
}

EventDesc Sampled(const std::string& name) {
  EventDesc e;
  e.name = name;
  return e;
}

// A group member counts as sampled (its own columns) unless it only travels in its leader's
// samples: one with samples of its own in a group read without :S is sampled too.
TEST(ReportTableTest, AGroupMemberWithSamplesOfItsOwnIsSampled) {
  ReportTable table;
  EventDesc leader, member;
  leader.name = "cycles";
  leader.sample_type = PERF_SAMPLE_READ;
  leader.group_leader = 0;
  leader.group_members = {0, 1};
  member.name = "instructions";
  member.group_leader = 0;
  table.events = {leader, member};
  table.total_samples = {10, 0};
  EXPECT_TRUE(table.IsSampled(0));
  EXPECT_FALSE(table.IsSampled(1));
  table.total_samples = {10, 4};
  EXPECT_TRUE(table.IsSampled(1));
  table.events[0].sample_type = 0;  // not read in the leader's samples
  table.total_samples = {10, 0};
  EXPECT_TRUE(table.IsSampled(1));
}

TEST(ReportTableTest, SortKeysParseAndRejectUnknownNames) {
  auto keys = ParseSortKeys("comm,dso,sym");
  ASSERT_TRUE(keys.ok());
  EXPECT_EQ(keys.value(), (std::vector<SortKey>{SortKey::kComm, SortKey::kDso, SortKey::kSymbol}));
  auto bad = ParseSortKeys("sym,cpu");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message().find("'cpu'"), std::string::npos);
  EXPECT_FALSE(ParseSortKeys("").ok());
}

TEST(ReportTableTest, TimeRangesAreSecondsWithOpenEndsOrPercents) {
  auto r = ParseTimeRange("1.5,");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->start, 1.5);
  EXPECT_FALSE(r->end.has_value());
  EXPECT_FALSE(r->percent);
  EXPECT_FALSE(ParseTimeRange("3,2").ok());
  EXPECT_FALSE(ParseTimeRange("3,3").ok());
  EXPECT_FALSE(ParseTimeRange("3").ok());
  EXPECT_FALSE(ParseTimeRange("x,2").ok());
  EXPECT_FALSE(ParseTimeRange("-1,2").ok());
  // "+S,+E" is S,E: seconds from the start, as perf writes a relative time.
  auto plus = ParseTimeRange("+1.5,+2.0");
  ASSERT_TRUE(plus.ok());
  EXPECT_EQ(plus->start, 1.5);
  EXPECT_EQ(plus->end, 2.0);
  // Percents of the profile's length: both ends, each with its '%'.
  auto percent = ParseTimeRange("10%-20%");
  ASSERT_TRUE(percent.ok());
  EXPECT_TRUE(percent->percent);
  EXPECT_EQ(percent->start, 10);
  EXPECT_EQ(percent->end, 20);
  for (const char* bad : {"10%-", "-20%", "10-20%", "10%-20", "20%-10%", "0%-101%", "a%-b%"})
    EXPECT_FALSE(ParseTimeRange(bad).ok()) << bad;
  // Resolved against a 4 s profile: 10 %-20 % is 0.4 s to 0.8 s.
  auto seconds = ResolveTimeRange(*percent, 4000000000);
  ASSERT_TRUE(seconds.ok());
  EXPECT_DOUBLE_EQ(*seconds->first, 0.4);
  EXPECT_DOUBLE_EQ(*seconds->second, 0.8);
  // 100 % reaches the end itself (a perf.data file's last sample lies at its length).
  auto to_end = ParseTimeRange("50%-100%");
  ASSERT_TRUE(to_end.ok());
  auto to_end_seconds = ResolveTimeRange(*to_end, 4000000000);
  ASSERT_TRUE(to_end_seconds.ok());
  EXPECT_DOUBLE_EQ(*to_end_seconds->first, 2.0);
  EXPECT_FALSE(to_end_seconds->second.has_value());
  // Percents need the length; seconds do not.
  EXPECT_FALSE(ResolveTimeRange(*percent, 0).ok());
  EXPECT_TRUE(ResolveTimeRange(*plus, 0).ok());
  // A range that starts after the end holds no sample, and says so.
  auto five_to_six = ParseTimeRange("5,6");
  ASSERT_TRUE(five_to_six.ok());
  auto late = ResolveTimeRange(*five_to_six, 4000000000);
  ASSERT_FALSE(late.ok());
  EXPECT_NE(late.error().message().find("after the profile's end (4.000 s)"), std::string::npos)
      << late.error().message();
}

TEST(ReportTableTest, EventNamesFoldAsFormulasNameThem) {
  EXPECT_EQ(FormulaEventName("cpu-cycles:u"), "cycles");
  EXPECT_EQ(FormulaEventName("cpu_core/instructions/"), "instructions");
  EXPECT_EQ(FormulaEventName("branch-instructions:pp"), "branches");
  EXPECT_EQ(FormulaEventName("INST_RETIRED:ANY_P"), "INST_RETIRED:ANY_P");
  // perf's sampling terms after an event (perf record -e 'page-faults/period=1/') are not part
  // of its name; a PMU's encoding names no event and stays whole.
  EXPECT_EQ(FormulaEventName("page-faults/period=1/"), "page-faults");
  EXPECT_EQ(FormulaEventName("cycles/period=100000,call-graph=fp/u"), "cycles");
  EXPECT_EQ(FormulaEventName("cpu/event=0x3c,umask=0x0/"), "cpu/event=0x3c,umask=0x0/");
  EXPECT_EQ(FormulaEventName("software/config=2,period=1/"), "software/config=2,period=1/");
}

// A burst leader in the kernel's mode takes no part in a sampled-periods value: its long and short
// periods alternate in pairs that are not independent samples. With instructions sampled on its
// own beside it (record's second method), IPC comes from the group's windows only.
TEST(ReportTableTest, ABurstLeaderGivesNoSampledPeriodsValue) {
  ProgResolver resolver;
  EventDesc burst = Sampled("cycles");
  burst.hf_sample_period = 10000;
  auto builder = ReportTableBuilder::Create({burst, Sampled("instructions")}, resolver,
                                            {SortKey::kSymbol}, {}, 0);
  ASSERT_TRUE(builder.ok());
  for (int i = 0; i < 20; ++i) (*builder)->OnSample(At(0, 0x1000 + i, i % 2 ? 10000 : 100000));
  for (int i = 0; i < 30; ++i) (*builder)->OnSample(At(1, 0x1000 + i, 1000));
  ReportTable table = (*builder)->Finish();
  auto metrics = DerivedMetrics::Plan(table, {}, "");
  ASSERT_TRUE(metrics.ok());
  for (const MetricColumn& c : metrics->columns())
    EXPECT_NE(c.source, MetricSource::kSampledPeriods) << c.name;
  // The same leader without the burst field gives one.
  auto plain = ReportTableBuilder::Create({Sampled("cycles"), Sampled("instructions")}, resolver,
                                          {SortKey::kSymbol}, {}, 0);
  ASSERT_TRUE(plain.ok());
  for (int i = 0; i < 20; ++i) (*plain)->OnSample(At(0, 0x1000 + i, 1000));
  for (int i = 0; i < 30; ++i) (*plain)->OnSample(At(1, 0x1000 + i, 1000));
  ReportTable plain_table = (*plain)->Finish();
  auto plain_metrics = DerivedMetrics::Plan(plain_table, {}, "");
  ASSERT_TRUE(plain_metrics.ok());
  bool sampled = false;
  for (const MetricColumn& c : plain_metrics->columns())
    sampled |= c.source == MetricSource::kSampledPeriods;
  EXPECT_TRUE(sampled);
}

// cycles and instructions sampled on their own: f gets 20 cycles samples of period 1000 and
// 30 instructions samples of period 1000 (IPC 1.5); g gets 5 and 1 (low confidence). A count of
// n samples reaches its exact 97.5 % Poisson bound U(n) (Garwood's, checked against published
// values in PoissonUpper975's test), so each count's relative standard error is
// (U(n) - n) / (1.96 n) rather than 1 / sqrt(n).
TEST(ReportTableTest, SampledPeriodsGiveIpcPerFunction) {
  ProgResolver resolver;
  auto builder = ReportTableBuilder::Create({Sampled("cycles"), Sampled("instructions")}, resolver,
                                            {SortKey::kSymbol}, {}, 0);
  ASSERT_TRUE(builder.ok());
  for (int i = 0; i < 20; ++i) (*builder)->OnSample(At(0, 0x1000 + i, 1000));
  for (int i = 0; i < 30; ++i) (*builder)->OnSample(At(1, 0x1000 + i, 1000));
  for (int i = 0; i < 5; ++i) (*builder)->OnSample(At(0, 0x2000, 1000));
  (*builder)->OnSample(At(1, 0x2000, 1000));
  ReportTable table = (*builder)->Finish();
  ASSERT_EQ(table.rows.size(), 2u);
  EXPECT_EQ(table.rows[0].keys[0], "f(int)");
  EXPECT_EQ(table.total_period[0], 25000u);
  auto metrics = DerivedMetrics::Plan(table, {}, "");
  ASSERT_TRUE(metrics.ok());
  size_t ipc = metrics->columns().size();
  for (size_t c = 0; c < metrics->columns().size(); ++c)
    if (metrics->columns()[c].name == "IPC") ipc = c;
  ASSERT_LT(ipc, metrics->columns().size());
  EXPECT_EQ(metrics->columns()[ipc].source, MetricSource::kSampledPeriods);
  MetricValue f = metrics->Evaluate(ipc, table, table.rows[0]);
  EXPECT_DOUBLE_EQ(*f.value, 1.5);
  // Poisson counts of 20 and 30 samples: the interval is 1.5 +- 1.5 * sqrt(r(20)^2 + r(30)^2)
  // with r(n) = (U(n) - n) / n, about +-1.04 (1/sqrt(n) would give +-0.85), wider than 10 %:
  // low confidence.
  auto r = [](double n) { return (PoissonUpper975(static_cast<uint64_t>(n)) - n) / n; };
  ASSERT_TRUE(f.half_width.has_value());
  EXPECT_NEAR(*f.half_width, 1.5 * std::hypot(r(20), r(30)), 1e-6);
  EXPECT_GT(*f.half_width, 1.959964 * 1.5 * std::sqrt(1.0 / 20 + 1.0 / 30));
  EXPECT_TRUE(f.low_confidence);
  MetricValue g = metrics->Evaluate(ipc, table, table.rows[1]);
  EXPECT_DOUBLE_EQ(*g.value, 0.2);
  EXPECT_NEAR(*g.half_width, 0.2 * std::hypot(r(5), r(1)), 1e-6);
  EXPECT_TRUE(g.low_confidence);
  MetricValue all = metrics->EvaluateTotal(ipc, table);
  EXPECT_DOUBLE_EQ(*all.value, 31.0 / 25.0);
  EXPECT_NEAR(*all.half_width, 31.0 / 25 * std::hypot(r(25), r(31)), 1e-6);
  // No branch events: no branch-miss column.
  for (const MetricColumn& c : metrics->columns()) EXPECT_NE(c.name, "branch-miss%");
}

TEST(ReportTableTest, ChildrenCountEachRowOncePerSampleAndFiltersKeepAbsoluteTotals) {
  ProgResolver resolver;
  SampleFilter filter;
  filter.symbol_pattern = "^(f|main)";
  auto builder =
      ReportTableBuilder::Create({Sampled("cpu-clock")}, resolver, {SortKey::kSymbol}, filter, 0);
  ASSERT_TRUE(builder.ok());
  Sample s = At(0, 0x1010, 10);
  s.callchain = {kContextUser, 0x1010, 0x1021, 0x3001};  // f called from f (recursion), from main
  (*builder)->OnSample(s);
  (*builder)->OnSample(At(0, 0x2000, 30));  // g: filtered out, but counts in the total
  ReportTable table = (*builder)->Finish();
  EXPECT_EQ(table.total_period[0], 40u);
  ASSERT_EQ(table.rows.size(), 2u);
  EXPECT_EQ(table.rows[0].keys[0], "f(int)");
  EXPECT_EQ(table.rows[0].total_period[0], 10u);  // once, despite the recursion
  EXPECT_EQ(table.rows[1].keys[0], "main");
  EXPECT_EQ(table.rows[1].self_period[0], 0u);
  EXPECT_EQ(table.rows[1].total_period[0], 10u);
  EXPECT_TRUE(table.has_callchains);
}

// Samples are tallied per distinct stack and each stack is resolved once (see StackTally); the
// table must still be what resolving every sample gives. Here: stacks repeated, stacks that
// share their callers but not their leaf, a leaf that is also among its callers, and a kernel
// leaf under a context marker.
TEST(ReportTableTest, RepeatedAndSharedStacksCountAsResolvedOneByOne) {
  ProgResolver resolver;
  auto builder = ReportTableBuilder::Create({Sampled("cpu-clock")}, resolver, {SortKey::kSymbol},
                                            SampleFilter{}, 0);
  ASSERT_TRUE(builder.ok());
  auto sample = [](uint64_t leaf, std::vector<uint64_t> callers, uint64_t period) {
    Sample s = At(0, leaf, period);
    s.callchain = {kContextUser, leaf};
    s.callchain.insert(s.callchain.end(), callers.begin(), callers.end());
    return s;
  };
  for (int i = 0; i < 3; ++i) (*builder)->OnSample(sample(0x1010, {0x2021, 0x3001}, 10));
  (*builder)->OnSample(sample(0x1020, {0x2021, 0x3001}, 5));  // same callers, other pc of f
  (*builder)->OnSample(sample(0x2030, {0x2021, 0x3001}, 7));  // g, also a caller: once
  (*builder)->OnSample(sample(0x3010, {0x2021, 0x3001}, 1));  // main, also a caller: once
  ReportTable table = (*builder)->Finish();
  std::map<std::string, std::pair<uint64_t, uint64_t>> by_name;  // self, total
  for (const ReportRow& r : table.rows) by_name[r.keys[0]] = {r.self_period[0], r.total_period[0]};
  EXPECT_EQ(table.total_period[0], 43u);
  EXPECT_EQ(by_name["f(int)"], std::make_pair(uint64_t{35}, uint64_t{35}));
  EXPECT_EQ(by_name["ns::g()"], std::make_pair(uint64_t{7}, uint64_t{43}));
  EXPECT_EQ(by_name["main"], std::make_pair(uint64_t{1}, uint64_t{43}));
}

// The same raw stack means other code once a mapping is replaced (dlopen after dlclose, exec),
// and samples of another thread name go to their own rows: neither may reuse a resolved stack.
TEST(ReportTableTest, ARemappedAddressOrRenamedThreadIsResolvedAgain) {
  testing::MappingNamedResolver resolver;
  auto builder = ReportTableBuilder::Create({Sampled("cpu-clock")}, resolver,
                                            {SortKey::kComm, SortKey::kSymbol}, SampleFilter{}, 0);
  ASSERT_TRUE(builder.ok());
  (*builder)->OnMmap(PageAt0x1000("a.so"));
  CommRecord comm;
  comm.pid = comm.tid = 7;
  comm.comm = "one";
  (*builder)->OnComm(comm);
  (*builder)->OnSample(At(0, 0x1010, 1));
  (*builder)->OnMmap(PageAt0x1000("b.so"));
  (*builder)->OnSample(At(0, 0x1010, 2));
  comm.comm = "two";
  (*builder)->OnComm(comm);
  (*builder)->OnSample(At(0, 0x1010, 4));
  ReportTable table = (*builder)->Finish();
  std::map<std::string, uint64_t> self;
  for (const ReportRow& r : table.rows) self[r.keys[0] + " " + r.keys[1]] = r.self_period[0];
  EXPECT_EQ(self, (std::map<std::string, uint64_t>{
                      {"one in_a.so", 1}, {"one in_b.so", 2}, {"two in_b.so", 4}}));
}

// Code without a file (JIT code) is named per process, while the frame cache is keyed by mapping
// and address: a forked child shares its parent's mappings, so the first sample to reach such an
// address names it for both. The stack-row thread looks the leaves of a run of samples up ahead
// of their callers; it must leave those addresses to be asked in the samples' order.
TEST(ReportTableTest, CodeWithoutAFileIsNamedByTheFirstSampleToReachIt) {
  testing::PidNamingResolver resolver;
  auto builder = ReportTableBuilder::Create({Sampled("cpu-clock")}, resolver, {SortKey::kSymbol},
                                            SampleFilter{}, 0);
  ASSERT_TRUE(builder.ok());
  MmapRecord jit = PageAt0x1000("//anon");
  jit.pid = 10;
  MmapRecord prog = jit;
  prog.start = 0x5000;
  prog.filename = "prog";
  (*builder)->OnMmap(jit);
  (*builder)->OnMmap(prog);
  TaskRecord fork;
  fork.pid = fork.tid = 20;
  fork.ppid = fork.ptid = 10;
  (*builder)->OnTask(fork);
  // One run of two samples: the parent's, called from the JIT code (return address 0x1020,
  // looked up at 0x101f), then the child's, whose leaf is that same address.
  Sample parent = At(0, 0x5010, 1);
  parent.pid = parent.tid = 10;
  parent.callchain = {0x5010, 0x1020};
  Sample child = At(0, 0x101f, 4);
  child.pid = child.tid = 20;
  child.callchain = {0x101f};
  (*builder)->OnSample(parent);
  (*builder)->OnSample(child);
  ReportTable table = (*builder)->Finish();
  std::map<std::string, uint64_t> self;
  for (const ReportRow& r : table.rows) self[r.keys[0]] += r.self_period[0];
  EXPECT_EQ(self["in_prog"], 1u);
  EXPECT_EQ(self["jit_of_10"], 4u) << "named by the parent, whose sample reached it first";
  EXPECT_EQ(self["jit_of_20"], 0u);
}

// Threads whose sort values differ take turns on the same frames (threads of one process share
// its mappings, so its frames: a caller on every stack, a leaf on several): each sample counts
// toward its own thread's rows, whichever thread's row the frame was last keyed for.
TEST(ReportTableTest, ThreadsTakingTurnsOnOneFrameKeepTheirOwnRows) {
  ProgResolver resolver;
  auto builder = ReportTableBuilder::Create({Sampled("cpu-clock")}, resolver,
                                            {SortKey::kTid, SortKey::kSymbol}, SampleFilter{}, 0);
  ASSERT_TRUE(builder.ok());
  MmapRecord map;
  map.pid = 7;
  map.start = 0x1000;
  map.length = 0x3000;
  map.filename = "prog";
  (*builder)->OnMmap(map);
  // tid, leaf (f or ns::g), period; main is every stack's caller.
  const std::vector<std::tuple<uint32_t, uint64_t, uint64_t>> turns = {
      {7, 0x1010, 1},  {8, 0x1010, 2},  {7, 0x2010, 4},  {9, 0x1010, 8},
      {8, 0x2010, 16}, {7, 0x1010, 32}, {9, 0x2010, 64}, {8, 0x1010, 128}};
  for (const auto& [tid, leaf, period] : turns) {
    Sample s = At(0, leaf, period);
    s.tid = tid;
    s.callchain = {kContextUser, leaf, 0x3010};
    (*builder)->OnSample(s);
  }
  ReportTable table = (*builder)->Finish();
  std::map<std::string, std::pair<uint64_t, uint64_t>> rows;  // self, total
  for (const ReportRow& r : table.rows)
    rows[r.keys[0] + " " + r.keys[1]] = {r.self_period[0], r.total_period[0]};
  EXPECT_EQ(rows, (std::map<std::string, std::pair<uint64_t, uint64_t>>{{"7 f(int)", {33, 33}},
                                                                        {"7 ns::g()", {4, 4}},
                                                                        {"7 main", {0, 37}},
                                                                        {"8 f(int)", {130, 130}},
                                                                        {"8 ns::g()", {16, 16}},
                                                                        {"8 main", {0, 146}},
                                                                        {"9 f(int)", {8, 8}},
                                                                        {"9 ns::g()", {64, 64}},
                                                                        {"9 main", {0, 72}}}));
}

// A hint given across a remapping (as a batch's replay gives them: its next sample, whatever
// record lies between) must not carry the old mapping's stack over to the hinted sample: the
// tally keeps the keys of hinted samples, and a mapping or thread record makes it forget them.
TEST(ReportTableTest, AHintAcrossARemappingIsNotUsedAfterIt) {
  testing::MappingNamedResolver resolver;
  auto builder = ReportTableBuilder::Create({Sampled("cpu-clock")}, resolver, {SortKey::kSymbol},
                                            SampleFilter{}, 0);
  ASSERT_TRUE(builder.ok());
  (*builder)->OnMmap(PageAt0x1000("a.so"));
  (*builder)->OnSample(At(0, 0x1010, 1, 1));  // the thread is known: hints are taken
  const Sample before = At(0, 0x1010, 2, 2), after = At(0, 0x1010, 4, 3);
  (*builder)->OnSampleAhead(after);
  (*builder)->OnSample(before);
  (*builder)->OnMmap(PageAt0x1000("b.so"));
  (*builder)->OnSample(after);
  ReportTable table = (*builder)->Finish();
  std::map<std::string, uint64_t> self;
  for (const ReportRow& r : table.rows) self[r.keys[0]] = r.self_period[0];
  EXPECT_EQ(self, (std::map<std::string, uint64_t>{{"in_a.so", 3}, {"in_b.so", 4}}));
}

// A hint of the next sample (RecordVisitor::OnSampleAhead) only starts fetching memory: a table
// given hints, right, wrong (a sample that never comes, a thread not seen yet) and repeated,
// has the same rows as one given none.
TEST(ReportTableTest, HintsOfTheNextSampleChangeNothing) {
  ProgResolver resolver;
  std::vector<Sample> samples;
  for (uint32_t i = 0; i < 200; ++i) {
    Sample s = At(0, 0x1000 + (i * 7) % 0x2000, 1 + i % 5);
    s.pid = s.tid = 7 + i % 3;
    s.callchain = {kContextUser, s.ip, 0x2800 + (i * 13) % 0x200, 0x3000 + i % 4};
    samples.push_back(s);
  }
  auto build = [&](bool hints) {
    auto builder = ReportTableBuilder::Create({Sampled("cpu-clock")}, resolver,
                                              {SortKey::kPid, SortKey::kSymbol}, SampleFilter{}, 0);
    EXPECT_TRUE(builder.ok());
    EXPECT_TRUE((*builder)->takes_sample_hints());
    for (uint32_t pid : {7, 8, 9}) {
      MmapRecord map;
      map.pid = pid;
      map.start = 0x1000;
      map.length = 0x1000;
      map.filename = "a.so";
      (*builder)->OnMmap(map);
    }
    for (size_t i = 0; i < samples.size(); ++i) {
      if (hints) {
        Sample never = samples[i];
        never.pid = never.tid = 99;  // a thread the table has not seen
        (*builder)->OnSampleAhead(never);
        never = samples[(i * 31) % samples.size()];
        never.callchain.push_back(0x1234);
        (*builder)->OnSampleAhead(never);
        if (i + 1 < samples.size()) (*builder)->OnSampleAhead(samples[i + 1]);
        (*builder)->OnSampleAhead(samples[i]);
      }
      (*builder)->OnSample(samples[i]);
    }
    return (*builder)->Finish();
  };
  const ReportTable plain = build(false), hinted = build(true);
  ASSERT_GT(plain.rows.size(), 3u);
  ExpectSameRows(hinted, plain);
}

// C++ names run to kilobytes (templates of templates); the text tables print them whole.
TEST(ReportTableTest, TextTablesPrintLongNamesWhole) {
  const std::string name = "ns::f<" + std::string(3000, 'T') + ">()";
  class LongName : public FrameResolver {
   public:
    explicit LongName(std::string name) : name_(std::move(name)) {}
    ResolvedFrame Resolve(const Mapping*, uint64_t) override {
      ResolvedFrame r;
      r.module = "prog";
      r.function = name_;
      return r;
    }
    std::string name_;
  } resolver(name);
  auto builder = ReportTableBuilder::Create({Sampled("cpu-clock")}, resolver, {SortKey::kSymbol},
                                            SampleFilter{}, 0);
  ASSERT_TRUE(builder.ok());
  (*builder)->OnSample(At(0, 0x1000, 1));
  ReportTable table = (*builder)->Finish();
  Metadata metadata;
  auto metrics = DerivedMetrics::Plan(table, {}, "");
  ASSERT_TRUE(metrics.ok());
  ReportTableView view;
  view.metadata = &metadata;
  view.table = &table;
  view.metrics = &metrics.value();
  std::ostringstream report;
  RenderReportTable(view, report);
  EXPECT_NE(report.str().find(name + "\n"), std::string::npos);

  FunctionProfile profile;
  profile.events = {Sampled("cpu-clock")};
  profile.total_period = {1};
  profile.total_samples = {1};
  profile.rows.push_back({name, "prog", "prog", {1}, {1}});
  std::ostringstream functions;
  RenderFunctionTable(metadata, profile, {}, functions);
  EXPECT_NE(functions.str().find(name + "\n"), std::string::npos);
}

TEST(ReportTableTest, TimeFilterIsRelativeToTheStart) {
  ProgResolver resolver;
  SampleFilter filter;
  filter.time_start = 1.0;
  filter.time_end = 2.0;
  auto builder = ReportTableBuilder::Create({Sampled("cpu-clock")}, resolver, {SortKey::kSymbol},
                                            filter, 5'000'000'000);
  ASSERT_TRUE(builder.ok());
  for (uint64_t t : {5'500'000'000ull, 6'000'000'000ull, 6'999'999'999ull, 7'000'000'000ull})
    (*builder)->OnSample(At(0, 0x1000, 1, t));
  ReportTable table = (*builder)->Finish();
  EXPECT_EQ(table.total_samples[0], 2u);  // [1 s, 2 s)
  EXPECT_EQ(table.samples_outside_time, 2u);
}

TEST(ReportTableTest, CallersAndCalleesComeFromTheChain) {
  ProgResolver resolver;
  auto builder = CallRelationsBuilder::Create({Sampled("cpu-clock")}, resolver, "g", {}, 0);
  ASSERT_TRUE(builder.ok());
  Sample a = At(0, 0x1000, 3);
  a.callchain = {0x1000, 0x2001, 0x3001};  // f <- g <- main
  Sample b = At(0, 0x2000, 1);
  b.callchain = {0x2000, 0x3001};  // g <- main
  (*builder)->OnSample(a);
  (*builder)->OnSample(b);
  CallRelations r = (*builder)->Finish();
  EXPECT_EQ(r.matched, (std::vector<std::string>{"ns::g()"}));
  EXPECT_EQ(r.through_period[0], 4u);
  EXPECT_EQ(r.self_period[0], 1u);
  ASSERT_EQ(r.callers.size(), 1u);
  EXPECT_EQ(r.callers[0].function, "main");
  EXPECT_EQ(r.callers[0].period[0], 4u);
  ASSERT_EQ(r.callees.size(), 1u);
  EXPECT_EQ(r.callees[0].function, "f(int)");
  EXPECT_EQ(r.callees[0].period[0], 3u);
  EXPECT_TRUE(
      FunctionNameMatches("(anonymous namespace)::compute_kernel(double)", "compute_kernel"));
  EXPECT_FALSE(FunctionNameMatches("compute_kernel_2(double)", "compute_kernel"));
}

// 0x4000..: helper inlined into outer; 0x5000..: outer's own code; 0x6000..: main.
class InlineResolver : public FrameResolver {
 public:
  ResolvedFrame Resolve(const Mapping*, uint64_t address) override {
    ResolvedFrame r;
    r.module = "/bin/prog";
    r.resolved = true;
    r.function = address < 0x6000 ? "outer" : "main";
    if (address < 0x5000) r.frames.push_back({"helper", "", "h.h", 3, 0, true});
    r.frames.push_back({r.function, "", "prog.c", 9, 0, false});
    return r;
  }
};

// A stack main -> outer -> (outer's inlined helper) -> outer -> helper: outer is on it both as
// the function helper was inlined into and physically, and helper twice. Each counts once.
TEST(ReportTableTest, InlinedFunctionsAreRowsAndCountOncePerStackInTotals) {
  InlineResolver resolver;
  Sample recursive = At(0, 0x4010, 10);
  recursive.callchain = {0x4010, 0x5021, 0x4031, 0x6001};
  Sample plain = At(0, 0x5000, 5);
  plain.callchain = {0x5000, 0x6001};
  for (InlineMode mode : {InlineMode::kInnermost, InlineMode::kPhysical}) {
    auto builder = ReportTableBuilder::Create({Sampled("cpu-clock")}, resolver, {SortKey::kSymbol},
                                              {}, 0, mode);
    ASSERT_TRUE(builder.ok());
    (*builder)->OnSample(recursive);
    (*builder)->OnSample(plain);
    ReportTable table = (*builder)->Finish();
    EXPECT_EQ(table.inline_mode, mode);
    std::map<std::string, std::pair<uint64_t, uint64_t>> rows;  // self, total
    for (const ReportRow& row : table.rows)
      rows[row.keys[0]] = {row.self_period[0], row.total_period[0]};
    if (mode == InlineMode::kInnermost) {
      EXPECT_EQ(rows["helper"], std::make_pair(uint64_t{10}, uint64_t{10}));
      EXPECT_EQ(rows["outer"], std::make_pair(uint64_t{5}, uint64_t{15}));
    } else {
      EXPECT_EQ(rows.count("helper"), 0u);
      EXPECT_EQ(rows["outer"], std::make_pair(uint64_t{15}, uint64_t{15}));
    }
    EXPECT_EQ(rows["main"], std::make_pair(uint64_t{0}, uint64_t{15}));
  }
  auto relations = CallRelationsBuilder::Create({Sampled("cpu-clock")}, resolver, "helper", {}, 0);
  ASSERT_TRUE(relations.ok());
  (*relations)->OnSample(recursive);
  (*relations)->OnSample(plain);
  CallRelations r = (*relations)->Finish();
  EXPECT_EQ(r.through_period[0], 10u);
  EXPECT_EQ(r.self_period[0], 10u);
  ASSERT_EQ(r.callers.size(), 1u);
  EXPECT_EQ(r.callers[0].function, "outer");
  EXPECT_EQ(r.callers[0].period[0], 10u);  // once, though helper has outer as caller twice
  ASSERT_EQ(r.callees.size(), 1u);  // the outer helper calls outer (whose code holds the leaf)
  EXPECT_EQ(r.callees[0].function, "outer");
}

// Per-row metrics follow the rows: an inlined function's IPC is its own samples'.
TEST(ReportTableTest, InlinedFunctionsHaveTheirOwnSampledPeriodMetrics) {
  InlineResolver resolver;
  auto builder = ReportTableBuilder::Create({Sampled("cycles"), Sampled("instructions")}, resolver,
                                            {SortKey::kSymbol}, {}, 0);
  ASSERT_TRUE(builder.ok());
  for (int i = 0; i < 20; ++i) (*builder)->OnSample(At(0, 0x4000 + i, 1000));  // helper
  for (int i = 0; i < 10; ++i) (*builder)->OnSample(At(1, 0x4000 + i, 1000));
  for (int i = 0; i < 10; ++i) (*builder)->OnSample(At(0, 0x5000 + i, 1000));  // outer's own
  for (int i = 0; i < 30; ++i) (*builder)->OnSample(At(1, 0x5000 + i, 1000));
  ReportTable table = (*builder)->Finish();
  auto metrics = DerivedMetrics::Plan(table, {}, "");
  ASSERT_TRUE(metrics.ok());
  size_t ipc = metrics->columns().size();
  for (size_t c = 0; c < metrics->columns().size(); ++c)
    if (metrics->columns()[c].name == "IPC") ipc = c;
  ASSERT_LT(ipc, metrics->columns().size());
  std::map<std::string, double> by_row;
  for (const ReportRow& row : table.rows)
    by_row[row.keys[0]] = metrics->Evaluate(ipc, table, row).value.value_or(-1);
  EXPECT_DOUBLE_EQ(by_row["helper"], 0.5);
  EXPECT_DOUBLE_EQ(by_row["outer"], 3.0);
}

// The stack rows are resolved on a thread of the builder's own unless read groups need them as
// each sample comes; readers decode on the visiting thread for such a builder (has_own_threads),
// and RecordTee and forwarding visitors say so for what they feed.
TEST(ReportTableTest, SaysWhetherItResolvesOnAThreadOfItsOwn) {
  ProgResolver resolver;
  auto plain =
      ReportTableBuilder::Create({Sampled("cpu-clock")}, resolver, {SortKey::kSymbol}, {}, 0);
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE((*plain)->has_own_threads());
  std::vector<EventDesc> group = {Sampled("cycles"), Sampled("instructions")};
  group[0].group_members = {0, 1};
  group[1].group_leader = 0;
  group[0].sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_READ;
  group[0].read_format = PERF_FORMAT_GROUP;
  auto grouped = ReportTableBuilder::Create(group, resolver, {SortKey::kSymbol}, {}, 0);
  ASSERT_TRUE(grouped.ok());
  EXPECT_FALSE((*grouped)->has_own_threads());

  RecordVisitor nothing;
  EXPECT_FALSE(RecordTee(nothing, nothing).has_own_threads());
  EXPECT_TRUE(RecordTee(nothing, **plain).has_own_threads());
  EXPECT_TRUE(ForwardingVisitor(**plain).has_own_threads());
  EXPECT_FALSE(ForwardingVisitor(nothing).has_own_threads());
  (*plain)->Finish();
  (*grouped)->Finish();
}

// A `record -M l1 --cpu neoverse-n2*` recording: CPU_CYCLES leads a group reading the level-1
// events as raw codes. Two windows in f, one in g, one straddling f -> g.
class MetricTableRecording : public ::testing::Test {
 protected:
  void SetUp() override {
    const MetricTable* table = FindMetricTable("neoverse-n2", BuiltinMetricTables()).value();
    const std::vector<std::string> names = {
        "CPU_CYCLES", "STALL_SLOT",          "OP_SPEC",
        "OP_RETIRED", "STALL_SLOT_FRONTEND", "STALL_SLOT_BACKEND"};
    for (size_t i = 0; i < names.size(); ++i) {
      EventDesc e;
      e.name = names[i];
      e.type = PERF_TYPE_RAW;
      e.config = table->FindEvent(names[i])->code;
      e.group_leader = 0;
      events.push_back(e);
      events[0].group_members.push_back(static_cast<uint32_t>(i));
    }
    events[0].sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_READ;
    events[0].read_format = PERF_FORMAT_GROUP;
  }
  ReportTable Build(const std::vector<std::pair<uint64_t, std::vector<uint64_t>>>& samples) {
    ProgResolver resolver;
    auto builder = ReportTableBuilder::Create(events, resolver, {SortKey::kSymbol}, {}, 0);
    for (const auto& [ip, values] : samples) {
      Sample s = At(0, ip, 1000);
      s.counter_values = values;
      (*builder)->OnSample(s);
    }
    return (*builder)->Finish();
  }
  std::vector<EventDesc> events;
};

TEST_F(MetricTableRecording, TheCpuPicksTheTableAndItsFormulasUseCreditedDeltas) {
  // Cumulative counts: cycles, stall_slot, op_spec, op_retired, stall_fe, stall_be.
  ReportTable table = Build({{0x1000, {0, 0, 0, 0, 0, 0}},
                             {0x1001, {1000, 2000, 3000, 2400, 1500, 500}},
                             {0x1002, {3000, 6000, 9000, 7200, 4500, 1500}},
                             {0x2000, {4000, 9000, 9500, 7300, 7000, 1600}},  // discarded
                             {0x2001, {5000, 12000, 10000, 7400, 9500, 1700}}});
  ASSERT_EQ(table.groups.size(), 1u);
  EXPECT_EQ(table.groups[0].windows_credited, 3u);
  EXPECT_EQ(table.groups[0].windows_discarded, 1u);
  CpuDescription r0p3;
  r0p3.vendor = "ARM";
  r0p3.midr = 0x410fd493;
  auto match = MatchRecordedMetricTable(events, r0p3, BuiltinMetricTables());
  ASSERT_TRUE(match.has_value());
  EXPECT_EQ(match->table->name, "neoverse-n2-r0p3");
  EXPECT_NE(match->how.find("event names"), std::string::npos);
  auto metrics = DerivedMetrics::Plan(table, match->formulas, match->table->name);
  ASSERT_TRUE(metrics.ok());
  auto value = [&](const std::string& name, size_t row) {
    for (size_t c = 0; c < metrics->columns().size(); ++c)
      if (metrics->columns()[c].name == name) {
        EXPECT_EQ(metrics->columns()[c].source, MetricSource::kGroupDeltas);
        return metrics->Evaluate(c, table, table.rows[row]);
      }
    ADD_FAILURE() << name;
    return MetricValue{};
  };
  ASSERT_EQ(table.rows[0].keys[0], "f(int)");
  // f's credited deltas: cycles 3000, stall_slot 6000, op_spec 9000, op_retired 7200,
  // stall_fe 4500, stall_be 1500; N2 has 5 slots per cycle.
  EXPECT_DOUBLE_EQ(*value("frontend_bound", 0).value, 100.0 * 4500 / (5 * 3000));
  EXPECT_DOUBLE_EQ(*value("backend_bound", 0).value, 100.0 * 1500 / (5 * 3000));
  EXPECT_DOUBLE_EQ(*value("retiring", 0).value, 100.0 * (7200.0 / 9000) * (1 - 6000.0 / 15000));
  // f's two windows are in proportion (the second is twice the first), so every ratio is the
  // same in both: no spread, a zero-width interval.
  EXPECT_NEAR(*value("retiring", 0).half_width, 0, 1e-6 * *value("retiring", 0).value);
  EXPECT_FALSE(value("retiring", 0).low_confidence);
  // g has one credited window: no spread can be estimated.
  EXPECT_FALSE(value("frontend_bound", 1).half_width.has_value());
  EXPECT_TRUE(value("frontend_bound", 1).low_confidence);
  // g: one credited window of 1000 cycles, 2500 frontend stall slots.
  EXPECT_DOUBLE_EQ(*value("frontend_bound", 1).value, 100.0 * 2500 / (5 * 1000));

  // On N2 r0p1 the erratum-corrected table applies: STALL_SLOT_FRONTEND - CPU_CYCLES.
  CpuDescription r0p1 = r0p3;
  r0p1.midr = 0x410fd491;
  auto early = MatchRecordedMetricTable(events, r0p1, BuiltinMetricTables());
  ASSERT_TRUE(early.has_value());
  EXPECT_EQ(early->table->name, "neoverse-n2");
  auto corrected = DerivedMetrics::Plan(table, early->formulas, early->table->name);
  ASSERT_TRUE(corrected.ok());
  for (size_t c = 0; c < corrected->columns().size(); ++c)
    if (corrected->columns()[c].name == "frontend_bound") {
      EXPECT_DOUBLE_EQ(*corrected->Evaluate(c, table, table.rows[0]).value,
                       100.0 * (4500 - 3000) / (5 * 3000));
    }
}

// {cycles,instructions}:S read in every sample; four windows in f of 100k cycles and 150k,
// 140k, 160k, 150k instructions, then one window straddling f -> g.
TEST(MetricIntervalTest, GroupIpcIsTheRatioEstimatorWithStudentsT) {
  std::vector<EventDesc> events = {Sampled("cycles"), Sampled("instructions")};
  for (uint32_t i = 0; i < 2; ++i) {
    events[i].group_leader = 0;
    events[0].group_members.push_back(i);
  }
  events[0].sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_READ;
  events[0].read_format = PERF_FORMAT_GROUP;
  ProgResolver resolver;
  auto builder = ReportTableBuilder::Create(events, resolver, {SortKey::kSymbol}, {}, 0);
  ASSERT_TRUE(builder.ok());
  const std::vector<std::pair<uint64_t, std::vector<uint64_t>>> samples = {
      {0x1000, {0, 0}},           {0x1001, {100000, 150000}}, {0x1002, {200000, 290000}},
      {0x1003, {300000, 450000}}, {0x1004, {400000, 600000}}, {0x2000, {500000, 700000}}};
  for (const auto& [ip, values] : samples) {
    Sample s = At(0, ip, 100);
    s.counter_values = values;
    (*builder)->OnSample(s);
  }
  ReportTable table = (*builder)->Finish();
  auto metrics = DerivedMetrics::Plan(table, {}, "");
  ASSERT_TRUE(metrics.ok());
  size_t ipc = metrics->columns().size();
  for (size_t c = 0; c < metrics->columns().size(); ++c)
    if (metrics->columns()[c].name == "IPC" &&
        metrics->columns()[c].source == MetricSource::kGroupDeltas)
      ipc = c;
  ASSERT_LT(ipc, metrics->columns().size());
  ASSERT_EQ(table.rows[0].keys[0], "f(int)");
  MetricValue f = metrics->Evaluate(ipc, table, table.rows[0]);
  EXPECT_DOUBLE_EQ(*f.value, 1.5);
  // By hand: residuals instructions - 1.5 * cycles are 0, -10k, 10k, 0, their sample variance
  // 2e8 / 3; Var(IPC) = n * s^2 / (sum of cycles)^2 = 4 * 6.67e7 / 400000^2 = 0.0016667; t(3)
  // is 3.182: 1.5 +- 0.1299, 8.7 % of the value: confident. (The cycles' floor as a Poisson
  // count, the same in every window, adds 0.2 %.)
  ASSERT_TRUE(f.half_width.has_value());
  EXPECT_NEAR(*f.half_width, 3.182 * std::sqrt(4 * (2e8 / 3) / (400000.0 * 400000.0)), 0.0005);
  EXPECT_FALSE(f.low_confidence);
  // g's only sample closes a window that started in f: discarded, nothing credited.
  MetricValue g = metrics->Evaluate(ipc, table, table.rows[1]);
  EXPECT_FALSE(g.value.has_value());
  EXPECT_TRUE(g.low_confidence);
  // The same windows as one spread-out series: t(1) = 12.706 for two windows of IPC 1 and 2.
  MetricValue two = ValueWithInterval(
      [](const std::vector<double>& c) -> std::optional<double> { return c[1] / c[0]; }, {200, 300},
      // windows (100, 100) and (100, 200): sums 200, 300; per-window covariance of
      // (cycles, instructions) is [[0, 0], [0, 5000]]; times n = 2.
      {0, 0, 0, 10000}, StudentT975(1));
  EXPECT_DOUBLE_EQ(*two.value, 1.5);
  EXPECT_NEAR(*two.half_width, 12.706 * std::sqrt(10000.0) / 200, 1e-9);
  EXPECT_TRUE(two.low_confidence);
}

// A bias bounded but not estimated (the call edges' WindowBounds) widens the interval by what it
// can move the value: instructions per cycle at 300 / 200, instructions off by up to 10, the value
// by up to 10 / 200 on top of the noise.
TEST(MetricIntervalTest, ABoundedBiasWidensTheIntervalByWhatItCanMoveTheValue) {
  const auto ipc = [](const std::vector<double>& c) -> std::optional<double> {
    return c[1] / c[0];
  };
  const MetricValue noise = ValueWithInterval(ipc, {200, 300}, {0, 0, 0, 10000}, StudentT975(1));
  const MetricValue bounded =
      ValueWithInterval(ipc, {200, 300}, {0, 0, 0, 10000}, StudentT975(1), {0, 10});
  EXPECT_DOUBLE_EQ(*bounded.value, *noise.value);
  EXPECT_NEAR(*bounded.half_width - *noise.half_width, 10.0 / 200, 1e-6);
  // A bound on the cycles moves it by 300 / 200^2 per cycle.
  const MetricValue cycles =
      ValueWithInterval(ipc, {200, 300}, {0, 0, 0, 10000}, StudentT975(1), {4, 0});
  EXPECT_NEAR(*cycles.half_width - *noise.half_width, 4 * 300.0 / (200.0 * 200.0), 1e-6);
}

// {task-clock,page-faults}:S where f never faults in its windows: its fault rate is 0, and its
// interval reaches the exact Poisson bound of no fault seen (3.689 faults over f's 9 ms), not
// zero width: a rate from a handful of events is not a confident one (issue 57).
TEST(MetricIntervalTest, AGroupMemberThatCountedNothingHasAnIntervalToItsPoissonBound) {
  std::vector<EventDesc> events = {Sampled("task-clock"), Sampled("page-faults")};
  for (uint32_t i = 0; i < 2; ++i) {
    events[i].group_leader = 0;
    events[0].group_members.push_back(i);
  }
  events[0].sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_READ;
  events[0].read_format = PERF_FORMAT_GROUP;
  ProgResolver resolver;
  auto builder = ReportTableBuilder::Create(events, resolver, {SortKey::kSymbol}, {}, 0);
  ASSERT_TRUE(builder.ok());
  for (uint64_t i = 0; i < 10; ++i) {  // 9 windows of 1 ms in f, no fault
    Sample s = At(0, 0x1000 + i, 1000000);
    s.counter_values = {i * 1000000, 0};
    (*builder)->OnSample(s);
  }
  ReportTable table = (*builder)->Finish();
  auto rate = ParseUserMetric("faults_per_ms = page-faults / task-clock * 1000000", events);
  ASSERT_TRUE(rate.ok()) << rate.error().message();
  auto metrics = DerivedMetrics::Plan(table, {}, "", {*rate});
  ASSERT_TRUE(metrics.ok());
  size_t column = metrics->columns().size();
  for (size_t c = 0; c < metrics->columns().size(); ++c)
    if (metrics->columns()[c].name == "faults_per_ms" &&
        metrics->columns()[c].source == MetricSource::kGroupDeltas)
      column = c;
  ASSERT_LT(column, metrics->columns().size());
  ASSERT_EQ(table.rows[0].keys[0], "f(int)");
  MetricValue f = metrics->Evaluate(column, table, table.rows[0]);
  ASSERT_TRUE(f.value.has_value());
  EXPECT_EQ(*f.value, 0.0);
  ASSERT_TRUE(f.half_width.has_value());
  // t(8) * (3.689 / 1.96) faults over 9 ms: 0.48 faults per ms, beyond the exact bound's 0.41.
  EXPECT_NEAR(*f.half_width, StudentT975(8) * (PoissonUpper975(0) / kNormal975) / 9, 1e-6);
  EXPECT_GE(*f.half_width, 3.689 / 9);
  EXPECT_TRUE(f.low_confidence);
}

// Counters are per thread per CPU: a thread sampled on CPU 0 in f, then on CPU 1 in g, then on
// CPU 0 in f again. CPU 0's instance counted whatever ran there between its two samples, g's
// stretch included, so the window is discarded; only windows without a migration are credited.
TEST(MetricIntervalTest, AWindowAcrossAMigrationIsDiscarded) {
  std::vector<EventDesc> events = {Sampled("cycles"), Sampled("instructions")};
  for (uint32_t i = 0; i < 2; ++i) {
    events[i].group_leader = 0;
    events[0].group_members.push_back(i);
  }
  events[0].sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_READ | PERF_SAMPLE_CPU;
  events[0].read_format = PERF_FORMAT_GROUP;
  ProgResolver resolver;
  auto builder = ReportTableBuilder::Create(events, resolver, {SortKey::kSymbol}, {}, 0);
  ASSERT_TRUE(builder.ok());
  struct At3 {
    uint64_t ip;
    uint32_t cpu;
    std::vector<uint64_t> values;
  };
  const std::vector<At3> samples = {{0x1000, 0, {0, 0}},     {0x1001, 0, {100, 100}},
                                    {0x2000, 1, {0, 0}},     {0x2001, 1, {100, 300}},
                                    {0x1002, 0, {300, 900}},  // back on CPU 0: migrated
                                    {0x1003, 0, {400, 1000}}};
  for (const At3& a : samples) {
    Sample s = At(0, a.ip, 100);
    s.cpu = a.cpu;
    s.counter_values = a.values;
    (*builder)->OnSample(s);
  }
  ReportTable table = (*builder)->Finish();
  ASSERT_EQ(table.rows[0].keys[0], "f(int)");
  // f: the first window (100, 100) and the last (100, 100); the one across the migration
  // (200, 800) is discarded. g: its window on CPU 1 (100, 300).
  EXPECT_EQ(table.rows[0].groups[0].windows_credited, 2u);
  EXPECT_EQ(table.rows[0].groups[0].deltas, (std::vector<double>{200, 200}));
  EXPECT_EQ(table.rows[0].groups[0].windows_discarded, 1u);
  EXPECT_EQ(table.rows[1].groups[0].windows_credited, 1u);
  EXPECT_EQ(table.rows[1].groups[0].deltas, (std::vector<double>{100, 300}));
  EXPECT_EQ(table.groups[0].windows_discarded, 1u);
}

TEST(MetricIntervalTest, StudentsQuantilesAndTheNormalLimit) {
  EXPECT_DOUBLE_EQ(StudentT975(1), 12.706);
  EXPECT_DOUBLE_EQ(StudentT975(10), 2.228);
  EXPECT_NEAR(StudentT975(11), 2.201, 0.002);  // tables: 2.201
  EXPECT_NEAR(StudentT975(50), 2.009, 0.002);  // tables: 2.009
  EXPECT_NEAR(StudentT975(1000000), 1.960, 0.001);
  EXPECT_TRUE(std::isinf(StudentT975(0)));
}

TEST(RecordedMetricTableTest, PlainEventsMatchNoTable) {
  EXPECT_FALSE(MatchRecordedMetricTable({Sampled("cycles"), Sampled("instructions")}, {},
                                        BuiltinMetricTables())
                   .has_value());
}

}  // namespace
}  // namespace tprof

namespace tprof {
namespace {

// Text inputs carry made-up addresses; callers on the chain are resolved at address - 1 and
// must still be named.
TEST(ReportTableTest, FoldedStacksGiveChildrenTotals) {
  auto source = ProfileSource::OpenBytes("main;foo;bar 10\nmain;foo 5\nmain;baz 3\n");
  ASSERT_TRUE(source.ok()) << source.error().message();
  auto builder = ReportTableBuilder::Create((*source)->events(), *(*source)->embedded_frames(),
                                            {SortKey::kSymbol}, {}, 0);
  ASSERT_TRUE(builder.ok());
  ASSERT_TRUE((*source)->ReadRecords(**builder).ok());
  ReportTable table = (*builder)->Finish();
  std::map<std::string, std::pair<uint64_t, uint64_t>> by_name;  // self, total
  for (const ReportRow& row : table.rows)
    by_name[row.keys[0]] = {row.self_period[0], row.total_period[0]};
  EXPECT_EQ(by_name["main"], std::make_pair(uint64_t{0}, uint64_t{18}));
  EXPECT_EQ(by_name["foo"], std::make_pair(uint64_t{5}, uint64_t{15}));
  EXPECT_EQ(by_name["bar"], std::make_pair(uint64_t{10}, uint64_t{10}));
  EXPECT_EQ(by_name.count("[unknown]"), 0u);
}

// The short-stack census is taken once per distinct stack, on the stack-row thread, and counted
// by the tally's samples of each: the counts must be the samples', not the stacks'. Worked out
// by hand: the kept thread has 30 + 6 samples (two events) of one stack cut short in prog (its
// outer address is in no mapping), 10 samples of 10 distinct complete stacks and 5 kernel-only
// ones (no user stack); another thread's 20 short samples are filtered out (--tid 7).
TEST(ReportTableTest, ShortStacksAreCountedPerSampleOfTheKeptThreads) {
  ProgResolver resolver;
  SampleFilter filter;
  filter.tids = {7};
  auto builder = ReportTableBuilder::Create({Sampled("cpu-clock"), Sampled("page-faults")},
                                            resolver, {SortKey::kSymbol}, filter, 0);
  ASSERT_TRUE(builder.ok());
  MmapRecord prog = PageAt0x1000("/opt/prog");
  prog.length = 0x3000;
  (*builder)->OnMmap(prog);
  prog.pid = 8;
  (*builder)->OnMmap(prog);
  auto with_chain = [](Sample s, std::vector<uint64_t> chain) {
    s.callchain = std::move(chain);
    return s;
  };
  const std::vector<uint64_t> cut = {kContextUser, 0x1010, 0x7f0000001234};
  for (int i = 0; i < 30; ++i) (*builder)->OnSample(with_chain(At(0, 0x1010, 1), cut));
  for (int i = 0; i < 6; ++i) (*builder)->OnSample(with_chain(At(1, 0x1010, 1), cut));
  for (uint64_t i = 0; i < 10; ++i)
    (*builder)->OnSample(
        with_chain(At(0, 0x1020 + i, 1), {kContextUser, 0x1020 + i, 0x2010, 0x3010}));
  for (int i = 0; i < 5; ++i)
    (*builder)->OnSample(
        with_chain(At(0, 0xffffffff81000000, 1), {kContextKernel, 0xffffffff81000000}));
  Sample other = with_chain(At(0, 0x1010, 1), cut);
  other.pid = other.tid = 8;
  for (int i = 0; i < 20; ++i) (*builder)->OnSample(other);
  ReportTable table = (*builder)->Finish();
  EXPECT_EQ(table.short_stacks.user_stacks, 46u);
  EXPECT_EQ(table.short_stacks.short_stacks, 36u);
  EXPECT_EQ(table.short_stacks.by_module, (std::map<std::string, uint64_t>{{"prog", 36}}));
  EXPECT_TRUE(table.short_stacks.system_modules.empty());
}

// A table read from encoded chunks, which leave most callchains deferred to it, is the table of
// the same chunks decoded whole (behind a filter, which takes no deferred chains): the rows,
// their self and total counts, and the short-stack census, with kernel samples credited to the
// user code that entered the kernel on the way, as a report reads them.
TEST(ReportTableTest, DeferredCallchainsGiveTheTableOfWholeOnes) {
  ProgResolver resolver;
  std::vector<EventDesc> events = {Sampled("cpu-clock"), Sampled("page-faults")};
  std::mt19937_64 random(3);
  std::vector<std::vector<uint64_t>>
      chains;  // f, g and main at random depths, some from the kernel
  for (int c = 0; c < 60; ++c) {
    std::vector<uint64_t> chain;
    if (c % 3 == 0) chain = {kContextKernel, 0xffffffff81000000ull + random() % 64};
    chain.push_back(kContextUser);
    for (int u = 0; u < 1 + c % 12; ++u) chain.push_back(0x1000 + random() % 0x3000);
    if (c % 5 == 0) chain.push_back(0x7f0000001000);  // unmapped: a short stack
    chains.push_back(chain);
  }
  // Chains that differ only in their outermost caller, f for main: a tally that told chains apart
  // by less than their whole would merge them.
  for (int c = 0; c < 20; ++c) {
    std::vector<uint64_t> chain = chains[c];
    chain.push_back(0x3100);
    chains.push_back(chain);
    chain.back() = 0x1100;
    chains.push_back(chain);
  }
  std::vector<std::string> chunks;
  std::vector<uint64_t> records;
  for (int c = 0; c < 3; ++c) {
    RecordEncoder encoder;
    for (uint32_t pid : {7, 8}) {
      MmapRecord prog = PageAt0x1000("/opt/prog");
      prog.pid = pid;
      prog.length = 0x3000;
      encoder.Encode(prog);
    }
    for (int i = 0; i < 3000; ++i) {
      Sample s = At(random() % 2, 0, 1 + random() % 9, c * 10000 + i);
      s.pid = s.tid = 7 + random() % 2;
      s.callchain = chains[random() % chains.size()];
      s.ip = s.callchain[1] == kContextUser ? s.callchain[2] : s.callchain[1];
      encoder.Encode(s);
    }
    chunks.push_back(encoder.bytes());
    records.push_back(3002);
  }
  struct CountingDeferred : ForwardingVisitor {
    using ForwardingVisitor::ForwardingVisitor;
    bool takes_deferred_callchains() const override { return next().takes_deferred_callchains(); }
    void OnSample(const Sample& s) override {
      deferred += s.deferred_callchain ? 1 : 0;
      next().OnSample(s);
    }
    size_t deferred = 0;
  };
  auto read = [&](bool whole, size_t* deferred) {
    auto builder =
        ReportTableBuilder::Create(events, resolver, {SortKey::kSymbol}, SampleFilter{}, 0);
    EXPECT_TRUE(builder.ok());
    EXPECT_TRUE((*builder)->takes_deferred_callchains());
    CountingDeferred counting(**builder);
    KernelEntryCredit credit(events, "x86_64", counting);
    ForwardingVisitor filter(static_cast<RecordVisitor&>(credit));
    RecordVisitor& first = whole ? static_cast<RecordVisitor&>(filter) : credit;
    RecordDecoder decoder;
    for (size_t c = 0; c < chunks.size(); ++c)
      EXPECT_TRUE(decoder.DecodeChunk(std::string_view(chunks[c]), records[c], first).ok());
    *deferred = counting.deferred;
    return (*builder)->Finish();
  };
  size_t deferred_whole = 0, deferred = 0;
  const ReportTable whole = read(true, &deferred_whole), table = read(false, &deferred);
  EXPECT_EQ(deferred_whole, 0u);
  EXPECT_GT(deferred, 9000u * 6 / 10);  // all but kernel leaves and one-frame user chains
  ASSERT_GE(whole.rows.size(), 3u);
  ExpectSameRows(table, whole);
  EXPECT_EQ(table.has_callchains, whole.has_callchains);
  EXPECT_EQ(table.short_stacks.user_stacks, whole.short_stacks.user_stacks);
  EXPECT_EQ(table.short_stacks.short_stacks, whole.short_stacks.short_stacks);
  EXPECT_GT(whole.short_stacks.short_stacks, 0u);
  EXPECT_EQ(table.short_stacks.by_module, whole.short_stacks.by_module);
}

namespace one_mode_clock {

// One function's row from a group {clock, page-faults}:S read in windows, with page-faults also
// sampled on its own: the clock's samples (1 ms each) add up to `sampled_ns`, and each delivered
// one ends a window, which together read `window_ns` of the clock (more than `sampled_ns` where
// the clock's samples in the kernel were dropped) and `window_faults`; the faults sampled on
// their own (one sample each) add up to `sampled_faults`.
struct Recorded {
  bool clock_user_only = true;
  double window_ns = 0, window_faults = 0;
  uint64_t sampled_ns = 0, sampled_faults = 0;
};

// `clock_name`: "" for task-clock (with :u when user-only).
ReportTable TableOf(const Recorded& r, const std::string& clock_name = "") {
  ReportTable table;
  EventDesc clock;
  clock.name = !clock_name.empty() ? clock_name : r.clock_user_only ? "task-clock:u" : "task-clock";
  clock.type = PERF_TYPE_SOFTWARE;
  clock.config = PERF_COUNT_SW_TASK_CLOCK;
  clock.sample_type = PERF_SAMPLE_READ;
  clock.group_leader = 0;
  clock.group_members = {0, 1};
  clock.exclude_kernel = r.clock_user_only;
  EventDesc member;
  member.name = "page-faults";
  member.type = PERF_TYPE_SOFTWARE;
  member.config = PERF_COUNT_SW_PAGE_FAULTS;
  member.group_leader = 0;
  EventDesc alone = member;
  alone.group_leader = -1;
  table.events = {clock, member, alone};
  const uint64_t clock_samples = r.sampled_ns / 1000000;
  // Other functions fault too (5,000 samples of one fault each), as the workloads' do.
  table.total_period = {r.sampled_ns, 0, r.sampled_faults + 5000};
  table.total_samples = {clock_samples, 0, r.sampled_faults + 5000};
  ReadGroup group;
  group.leader = 0;
  group.members = {0, 1};
  group.windows_credited = clock_samples;
  table.groups = {group};
  ReportRow row;
  row.keys = {"f"};
  row.self_period = {r.sampled_ns, 0, r.sampled_faults};
  row.self_samples = {clock_samples, 0, r.sampled_faults};
  row.total_period = row.self_period;
  row.total_samples = row.self_samples;
  // A window per clock sample, alike but for a little spread: the group's interval is a few per
  // cent wide.
  GroupCredit credit;
  credit.windows_credited = clock_samples;
  credit.deltas = {r.window_ns, r.window_faults};
  const double w = static_cast<double>(clock_samples);
  const double ns = r.window_ns / w, faults = r.window_faults / w;
  const double spread = 1.1;  // E[x^2] = spread * E[x]^2
  credit.products = {w * ns * ns * spread, w * ns * faults * spread, w * ns * faults * spread,
                     w * faults * faults * spread};
  row.groups = {credit};
  table.rows = {row};
  return table;
}

struct Both {
  MetricValue windows, samples;
};

Both FaultsPerMs(const ReportTable& table) {
  auto metric = ParseUserMetric("faults_per_ms = page-faults / task-clock * 1000000", table.events);
  EXPECT_TRUE(metric.ok());
  auto plan = DerivedMetrics::Plan(table, {}, "", {*metric});
  EXPECT_TRUE(plan.ok());
  Both both;
  for (size_t c = 0; c < plan->columns().size(); ++c) {
    const MetricValue v = plan->Evaluate(c, table, table.rows[0]);
    (plan->columns()[c].source == MetricSource::kGroupDeltas ? both.windows : both.samples) = v;
  }
  return both;
}

}  // namespace one_mode_clock

// A user who is not root samples task-clock:u, whose samples leave out the kernel's time while
// its count (which the group's windows read) keeps it. Numbers like those seen on a fault-heavy
// function (149.5 faults/ms sampled, 92.2 from the windows, truth 92.2): a function in the kernel
// for 40 % of its time reads 92 from the windows and 153 from the samples, which leave that time
// out: the sampled value is the one off, and says so; the group's is not marked.
TEST(ReportTableTest, AClockSampledInUserSpaceOnlyExplainsASampledRateThatReadsHigh) {
  one_mode_clock::Recorded r{
      .window_ns = 1e9, .window_faults = 92000, .sampled_ns = 600000000, .sampled_faults = 92000};
  auto both = one_mode_clock::FaultsPerMs(one_mode_clock::TableOf(r));
  ASSERT_TRUE(both.windows.value && both.samples.value);
  EXPECT_NEAR(*both.windows.value, 92, 0.1);
  EXPECT_NEAR(*both.samples.value, 153.3, 0.1);
  EXPECT_FALSE(both.windows.bias) << both.windows.bias->reason;
  ASSERT_TRUE(both.samples.bias);
  EXPECT_EQ(both.samples.bias->kind, WindowBiasKind::kClockInOneMode);
  EXPECT_NE(both.samples.bias->reason.find("task-clock:u"), std::string::npos);
  EXPECT_NE(both.samples.bias->reason.find("reads high"), std::string::npos)
      << both.samples.bias->reason;
  // A clock named at length (a PMU's own spelling) is named whole, and the reason still ends
  // with the direction.
  const std::string long_name = "a_pmu_with_a_long_name_as_some_have/task-clock/u";
  both = one_mode_clock::FaultsPerMs(one_mode_clock::TableOf(r, long_name));
  ASSERT_TRUE(both.samples.bias);
  EXPECT_NE(both.samples.bias->reason.find(long_name + "'s samples"), std::string::npos)
      << both.samples.bias->reason;
  EXPECT_NE(both.samples.bias->reason.find("reads high"), std::string::npos)
      << both.samples.bias->reason;
  // The same numbers with the clock sampled in both modes: nothing explains the gap, and both
  // values say the methods disagree.
  r.clock_user_only = false;
  both = one_mode_clock::FaultsPerMs(one_mode_clock::TableOf(r));
  ASSERT_TRUE(both.windows.bias && both.samples.bias);
  EXPECT_EQ(both.windows.bias->kind, WindowBiasKind::kMethodsDisagree);
  EXPECT_EQ(both.samples.bias->kind, WindowBiasKind::kMethodsDisagree);
}

// The lie a user who was not root saw: a function whose long calls step over another's short
// faulting calls read 1.88 faults/ms from the windows, against a truth of 0; sampled on their
// own the faults fell nowhere in it. Time the clock's samples leave out can only lower a sampled
// rate per time, never raise it from 0 to 1.88: both values are marked, the reason says so.
TEST(ReportTableTest, AClockSampledInUserSpaceOnlyDoesNotExcuseAWindowValueAboveTheSampledOne) {
  const one_mode_clock::Recorded r{
      .window_ns = 1e9, .window_faults = 1877, .sampled_ns = 1000000000, .sampled_faults = 0};
  auto both = one_mode_clock::FaultsPerMs(one_mode_clock::TableOf(r));
  ASSERT_TRUE(both.windows.value && both.samples.value);
  EXPECT_NEAR(*both.windows.value, 1.877, 0.001);
  EXPECT_EQ(*both.samples.value, 0);
  ASSERT_TRUE(both.windows.bias);
  EXPECT_EQ(both.windows.bias->kind, WindowBiasKind::kMethodsDisagree);
  EXPECT_NE(both.windows.bias->reason.find("beyond what the time task-clock:u's samples leave "
                                           "out can explain"),
            std::string::npos)
      << both.windows.bias->reason;
  ASSERT_TRUE(both.samples.bias);
  EXPECT_EQ(both.samples.bias->kind, WindowBiasKind::kMethodsDisagree);
}

// Calls of 10 us under a clock sampled in user space only, as a user who is not root recorded
// metric_oracle's spread design: the windows, far longer than a call, read 98.7 ±1.3 faults/ms for
// the fault-heavy function (truth 195), the samples 318. The windows counted 1.11 times the time
// the clock's samples stand for, which brings the sampled value to 286, not to 98.7: both values
// say the methods disagree. (Allowing the left-out time any share had excused the window value.)
TEST(ReportTableTest, AClockSampledInUserSpaceOnlyExcusesNoMoreThanTheTimeItsWindowsCounted) {
  const one_mode_clock::Recorded r{
      .window_ns = 1e9, .window_faults = 98670, .sampled_ns = 900000000, .sampled_faults = 286200};
  auto both = one_mode_clock::FaultsPerMs(one_mode_clock::TableOf(r));
  ASSERT_TRUE(both.windows.value && both.samples.value);
  EXPECT_NEAR(*both.windows.value, 98.67, 0.01);
  EXPECT_NEAR(*both.samples.value, 318, 0.1);
  ASSERT_TRUE(both.windows.bias) << "a window value 3x off shown as measured";
  EXPECT_EQ(both.windows.bias->kind, WindowBiasKind::kMethodsDisagree);
  ASSERT_TRUE(both.samples.bias);
  EXPECT_EQ(both.samples.bias->kind, WindowBiasKind::kMethodsDisagree);
}

}  // namespace
}  // namespace tprof
