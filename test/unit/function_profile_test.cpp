#include "core/analysis/function_profile.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "core/analysis/timeline.h"
#include "test/support/mapping_named_resolver.h"

namespace tprof {
namespace {

EventDesc Clock() {
  EventDesc e;
  e.name = "cpu-clock";
  return e;
}

Sample At(uint32_t tid, uint64_t ip) {
  Sample s;
  s.pid = 7;
  s.tid = tid;
  s.ip = ip;
  s.period = 10;
  return s;
}

MmapRecord Map(const std::string& file) {
  MmapRecord m;
  m.pid = m.tid = 7;
  m.start = 0x1000;
  m.length = 0x1000;
  m.executable = true;
  m.filename = file;
  return m;
}

CommRecord Name(uint32_t tid, const std::string& comm) {
  CommRecord c;
  c.pid = 7;
  c.tid = tid;
  c.comm = comm;
  return c;
}

// "command function" -> samples
std::map<std::string, uint64_t> Rows(const FunctionProfile& profile) {
  std::map<std::string, uint64_t> rows;
  for (const FunctionRow& row : profile.rows)
    rows[row.command + " " + row.function] += row.self_samples[0];
  return rows;
}

// A sample's row is remembered per thread and pc: what decides it (the code mapped there, the
// thread's name) changing must give the next sample at that pc its new row.
TEST(FunctionProfileBuilder, APcCountsForWhatIsMappedThereAndTheThreadsNameWhenSampled) {
  testing::MappingNamedResolver resolver;
  FunctionProfileBuilder builder({Clock()}, resolver);
  builder.OnComm(Name(7, "one"));
  builder.OnMmap(Map("a.so"));
  builder.OnSample(At(7, 0x1010));
  builder.OnSample(At(7, 0x1010));
  builder.OnMmap(Map("b.so"));  // replaces a.so at the same addresses
  for (int i = 0; i < 3; ++i) builder.OnSample(At(7, 0x1010));
  builder.OnComm(Name(7, "two"));
  for (int i = 0; i < 4; ++i) builder.OnSample(At(7, 0x1010));
  builder.OnComm(Name(8, "other"));  // a thread of its own name, same pc
  for (int i = 0; i < 5; ++i) builder.OnSample(At(8, 0x1010));
  const FunctionProfile profile = builder.Finish();
  EXPECT_EQ(Rows(profile),
            (std::map<std::string, uint64_t>{
                {"one in_a.so", 2}, {"one in_b.so", 3}, {"two in_b.so", 4}, {"other in_b.so", 5}}));
  EXPECT_EQ(profile.total_samples[0], 14u);
  EXPECT_EQ(profile.total_period[0], 140u);
}

// A timeline's intervals count from the start the profile gives: a sample before it in the
// first, every interval to the last sample kept (an empty one too), each interval's rows pointing
// at the rows as sorted (the busiest first), and a sample whose time lies past the last interval
// a timeline keeps counted apart, not as billions of intervals.
TEST(FunctionProfileBuilder, TimelineIntervalsCountFromTheStartAndPointAtTheSortedRows) {
  testing::MappingNamedResolver resolver;
  FunctionProfileBuilder builder({Clock()}, resolver);
  builder.KeepTimeline(/*start_timestamp=*/1000, /*interval_ns=*/100);
  builder.OnComm(Name(7, "one"));
  builder.OnMmap(Map("a.so"));
  auto at = [](uint64_t time, uint32_t tid) {
    Sample s = At(tid, 0x1010);
    s.time = time;
    return s;
  };
  builder.OnSample(at(990, 7));   // before the start: the first interval
  builder.OnSample(at(1050, 7));  // interval 0
  builder.OnComm(Name(8, "two"));
  for (int i = 0; i < 3; ++i) builder.OnSample(at(1310 + i, 8));  // interval 3; 1 and 2 empty
  builder.OnSample(at(1000 + 100 * kMaxTimelineIntervals, 8));    // past the last kept
  const FunctionProfile profile = builder.Finish();
  ASSERT_EQ(profile.rows.size(), 2u);
  EXPECT_EQ(profile.rows[0].command, "two");  // 4 samples against 2: first
  EXPECT_EQ(profile.samples_beyond_timeline, 1u);
  ASSERT_EQ(profile.timeline.size(), 4u);
  EXPECT_EQ(profile.timeline[0].start_ns, 0u);
  EXPECT_EQ(profile.timeline[3].end_ns, 400u);
  EXPECT_EQ(profile.timeline[0].total_samples[0], 2u);
  EXPECT_EQ(profile.timeline[0].total_period[0], 20u);
  EXPECT_EQ(profile.timeline[1].total_samples[0], 0u);
  EXPECT_TRUE(profile.timeline[2].rows.empty());
  ASSERT_EQ(profile.timeline[0].rows.size(), 1u);
  EXPECT_EQ(profile.rows[profile.timeline[0].rows[0].row].command, "one");
  ASSERT_EQ(profile.timeline[3].rows.size(), 1u);
  EXPECT_EQ(profile.rows[profile.timeline[3].rows[0].row].command, "two");
  EXPECT_EQ(profile.timeline[3].rows[0].samples[0], 3u);
}

// About ten intervals a profile, in 1-2-5 steps of milliseconds, never under 1 ms.
TEST(Timeline, DefaultIntervalIsATenthOfTheProfileInOneTwoFiveSteps) {
  EXPECT_EQ(DefaultTimelineIntervalNs(0), 100'000'000u);  // length unknown
  EXPECT_EQ(DefaultTimelineIntervalNs(1'375'000'000), 100'000'000u);
  EXPECT_EQ(DefaultTimelineIntervalNs(2'500'000'000), 200'000'000u);
  EXPECT_EQ(DefaultTimelineIntervalNs(60'000'000'000), 5'000'000'000u);
  EXPECT_EQ(DefaultTimelineIntervalNs(25'000'000), 2'000'000u);
  EXPECT_EQ(DefaultTimelineIntervalNs(5'000'000), 1'000'000u);
}

}  // namespace
}  // namespace tprof
