// The flame graph page's timeline model: buckets of a round length whose edges are --time's, the
// lanes per thread grouped by process, and the frames' self weight per bucket adding up to the
// tree's self. (The page against report --time and diff of ranges: test/browser/timeline.test.mjs.)
#include "core/analysis/flame_timeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

namespace tprof {
namespace {

TEST(FlameTimeline, BucketsAreOneTwoOrFiveTimesAPowerOfTenAtLeastAMicrosecond) {
  EXPECT_EQ(FlameTimelineBucketNs(1'100'000'000, 400), 5'000'000u);  // 2.75 ms a bucket needed
  EXPECT_EQ(FlameTimelineBucketNs(800'000'000, 400), 2'000'000u);
  EXPECT_EQ(FlameTimelineBucketNs(400'000'001, 400), 2'000'000u);
  EXPECT_EQ(FlameTimelineBucketNs(1000, 400), 1000u);
  EXPECT_EQ(FlameTimelineBucketNs(0, 400), 1000u);
}

TEST(FlameTimeline, LanesCellsAndTheMetricTrack) {
  // Two leaves; stack 0 ends at a, stack 1 at b.
  CallNode root;
  CallNode* a = root.Child("a", "m", FrameKind::kUser, 2);
  CallNode* b = root.Child("b", "m", FrameKind::kUser, 2);
  const std::vector<const CallNode*> leaf_of_stack = {a, b};
  const uint64_t start = 1'000'000'000;
  // Event 0 sizes the frames; event 1 (counted beside it) only feeds the track.
  std::vector<TimedStackSample> samples = {
      {start - 5, 7, 1, 1, 0, 0},           // before the start: in no bucket
      {start, 10, 1, 1, 0, 0},              // bucket 0
      {start + 999'999, 10, 1, 2, 1, 0},    // bucket 0, the last ns of it
      {start + 1'000'000, 10, 1, 1, 0, 0},  // bucket 1
      {start + 1'000'000, 3, 1, 1, 0, 1},   // the other event, bucket 1
      {start + 5'500'000, 40, 2, 3, 1, 0},  // another process, busier: its lane first
  };
  FlameTimelineOptions options;
  options.start_timestamp = start;
  options.width_events = {0};
  options.max_buckets = 10;  // 5.5 ms: 1 ms buckets
  std::vector<EventDesc> events(2);
  events[0].name = "task-clock";
  events[1].name = "page-faults";
  auto fpm_formula = ParseUserMetric("fpm = page-faults / task-clock * 1000000", events);
  ASSERT_TRUE(fpm_formula.ok()) << fpm_formula.error().message();
  options.user_metrics = {*fpm_formula};
  options.metric = "fpm";
  auto built =
      BuildFlameTimeline(samples, leaf_of_stack, events, options, [](uint32_t pid, uint32_t tid) {
        return "t" + std::to_string(pid) + "." + std::to_string(tid);
      });
  ASSERT_TRUE(built.ok()) << built.error().message();
  const FlameTimeline& t = *built;
  EXPECT_EQ(t.bucket_ns, 1'000'000u);
  EXPECT_EQ(t.buckets, 6u);
  EXPECT_EQ(t.samples, 4u);
  EXPECT_EQ(t.samples_before, 1u);
  ASSERT_EQ(t.lanes.size(), 3u);
  EXPECT_EQ(t.lanes[0].name, "t2.3");
  EXPECT_EQ(t.lanes[1].name, "t1.1");  // then pid 1's busiest thread
  EXPECT_EQ(t.lanes[1].on_cpu, (std::vector<std::pair<uint32_t, uint64_t>>{{0, 10}, {1, 10}}));
  EXPECT_EQ(t.lanes[2].name, "t1.2");
  std::map<std::pair<const CallNode*, uint32_t>, uint64_t> cells;
  for (const auto& c : t.cells) cells[{c.node, c.bucket}] += c.weight;
  EXPECT_EQ(cells, (std::map<std::pair<const CallNode*, uint32_t>, uint64_t>{
                       {{a, 0}, 10}, {{b, 0}, 10}, {{a, 1}, 10}, {{b, 5}, 40}}));
  // Faults per ms of the clock per bucket: bucket 1 has 3 faults in 10 ns of clock.
  EXPECT_EQ(t.metric_name, "fpm");
  ASSERT_EQ(t.metric.size(), 6u);
  ASSERT_TRUE(t.metric[1].value);
  EXPECT_DOUBLE_EQ(*t.metric[1].value, 3.0 / 10 * 1e6);
  ASSERT_TRUE(t.metric[0].value);
  EXPECT_EQ(*t.metric[0].value, 0);
}

// A wall-time page: on-CPU and off-CPU weights in a lane apart, each off-CPU bucket with its
// reason, from the off-cpu event's parts (each off-cpu sample again as its reason's event).
TEST(FlameTimeline, OffCpuWeightsCarryTheirReason) {
  CallNode root;
  CallNode* work = root.Child("work", "m", FrameKind::kUser, 4);
  CallNode* nap = root.Child("nap", "m", FrameKind::kUser, 4);
  const std::vector<const CallNode*> leaf_of_stack = {work, nap};
  // Events: 0 task-clock, 1 off-cpu, 2 off-cpu:preempted, 3 off-cpu:sleep.
  const std::vector<TimedStackSample> samples = {
      {100, 5, 1, 1, 0, 0},                             // on the CPU in work, bucket 0
      {100, 50, 1, 1, 1, 1},  {100, 50, 1, 1, 1, 3},    // asleep until the start
      {1100, 20, 1, 1, 0, 1}, {1100, 20, 1, 1, 0, 2},   // preempted in work, bucket 1
      {1100, 30, 1, 1, 1, 1}, {1100, 30, 1, 1, 1, 3}};  // asleep again, bucket 1
  FlameTimelineOptions options;
  options.start_timestamp = 100;
  options.width_events = {0, 1};
  options.off_cpu_event = 1;
  options.reason_events = {{2, OffCpuReason::kPreempted}, {3, OffCpuReason::kSleep}};
  options.max_buckets = 2;
  std::vector<EventDesc> events(4);
  events[0].name = "task-clock";
  events[1].name = "off-cpu";
  events[2].name = "off-cpu:preempted";
  events[3].name = "off-cpu:sleep";
  const auto name = [](uint32_t, uint32_t) { return std::string("w"); };
  auto built = BuildFlameTimeline(samples, leaf_of_stack, events, options, name);
  ASSERT_TRUE(built.ok()) << built.error().message();
  const FlameTimeline& t = *built;
  ASSERT_EQ(t.bucket_ns, 1000u);
  ASSERT_EQ(t.lanes.size(), 1u);
  EXPECT_EQ(t.lanes[0].on_cpu, (std::vector<std::pair<uint32_t, uint64_t>>{{0, 5}}));
  using Off = FlameTimeline::Lane::OffCpu;
  // Each interval over the buckets it spans, ending at its sample: the first nap from -50 ns
  // (before the start: not drawn) to 0; the preemption 980-1000 ns; the second nap 970-1000.
  EXPECT_EQ(t.lanes[0].off_cpu,
            (std::vector<Off>{{0, 20, OffCpuReason::kPreempted}, {0, 30, OffCpuReason::kSleep}}));
  EXPECT_EQ(t.lanes[0].total, 105u);  // the parts are not counted twice
  // A nap of a bucket and a half ending in bucket 2: split at the buckets' edges.
  const std::vector<TimedStackSample> long_nap = {
      {100, 5, 1, 1, 0, 0}, {2600, 1500, 1, 1, 1, 1}, {2600, 1500, 1, 1, 1, 3}};
  options.max_buckets = 3;
  auto spread_built = BuildFlameTimeline(long_nap, leaf_of_stack, events, options, name);
  ASSERT_TRUE(spread_built.ok()) << spread_built.error().message();
  const FlameTimeline& spread = *spread_built;
  ASSERT_EQ(spread.bucket_ns, 1000u);
  EXPECT_EQ(spread.lanes[0].off_cpu,
            (std::vector<Off>{{1, 1000, OffCpuReason::kSleep}, {2, 500, OffCpuReason::kSleep}}));
  EXPECT_EQ(t.samples, 4u);
  // The frames' cells hold the off-CPU time once, as the page's widths do.
  uint64_t cells = 0;
  for (const auto& c : t.cells) cells += c.weight;
  EXPECT_EQ(cells, 105u);
}

}  // namespace
}  // namespace tprof
