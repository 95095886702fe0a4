#include "core/model/off_cpu_tracker.h"

#include <gtest/gtest.h>

namespace tprof {
namespace {

Sample SwitchOut(uint32_t tid, uint64_t time, uint64_t ip) {
  Sample s;
  s.tid = tid;
  s.pid = tid;
  s.time = time;
  s.event = 3;  // the context-switches event
  s.period = 1;
  s.ip = ip;
  s.callchain = {ip, 0x401000};
  return s;
}

TEST(OffCpuTracker, AnIntervalRunsFromTheSwitchOutToTheSwitchIn) {
  OffCpuTracker tracker(/*switch_event=*/3, /*off_cpu_event=*/4);
  tracker.SawSample(SwitchOut(10, 1000, 0xffff0001));
  tracker.SawSample(SwitchOut(11, 1500, 0xffff0002));
  auto first = tracker.SwitchedIn(11, 4000);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->event, 4u);
  EXPECT_EQ(first->period, 2500u);
  EXPECT_EQ(first->time, 4000u);  // written where it ends, in the stream's order
  EXPECT_EQ(first->callchain, (std::vector<uint64_t>{0xffff0002, 0x401000}));
  auto second = tracker.SwitchedIn(10, 9000);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->period, 8000u);
  EXPECT_EQ(tracker.intervals(), 2u);
  // A switch-in without its switch-out (recording began while the thread was off the CPU)
  // has no start: no interval.
  EXPECT_FALSE(tracker.SwitchedIn(10, 9500).has_value());
  EXPECT_FALSE(tracker.SwitchedIn(12, 9500).has_value());
}

TEST(OffCpuTracker, AThreadsLastSwitchOutAfterItsExitIsNotAWait) {
  OffCpuTracker tracker(3, 4);
  tracker.SawSample(SwitchOut(10, 1000, 1));
  TaskRecord exit;
  exit.is_exit = true;
  exit.pid = exit.tid = 10;
  exit.time = 1500;
  tracker.SawTask(exit);  // exit while off the CPU cannot happen, but leaves nothing open
  tracker.SawSample(SwitchOut(10, 2000, 1));  // the final switch-out, after the exit record
  tracker.SawTime(5000);
  EXPECT_TRUE(tracker.Finish().empty());
  EXPECT_EQ(tracker.intervals(), 0u);
}

TEST(OffCpuTracker, ThreadsStillWaitingAtTheEndCountUntilTheEnd) {
  OffCpuTracker tracker(3, 4);
  tracker.SawSample(SwitchOut(10, 1000, 1));
  tracker.SawSample(SwitchOut(11, 3000, 1));
  Sample other = SwitchOut(12, 5000, 1);
  other.event = 0;  // another event's sample: only the time
  tracker.SawSample(other);
  auto open = tracker.Finish();
  ASSERT_EQ(open.size(), 2u);
  uint64_t total = 0;
  for (const Sample& s : open) total += s.period;
  EXPECT_EQ(total, 4000u + 2000u);
  EXPECT_EQ(tracker.intervals(), 2u);
}

}  // namespace
}  // namespace tprof
