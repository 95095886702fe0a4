// A read group's windows summed per time slot (GroupWindowsByTime): each whole window goes to the
// slot its closing sample is given, with its members' deltas and their products; windows across a
// migration, a throttle, a count that went backwards or, under burst sampling, a long period are
// not whole. Counts worked by hand.
#include "core/analysis/group_windows_by_time.h"

#include <gtest/gtest.h>
#include <linux/perf_event.h>

#include <vector>

namespace tprof {
namespace {

// Event 0 leads a group of cycles and instructions (events 0 and 1); event 2 is sampled alone.
std::vector<EventDesc> GroupEvents(uint64_t short_window = 0) {
  EventDesc cycles, instructions, faults;
  cycles.name = "cycles";
  cycles.sample_type = PERF_SAMPLE_READ;
  cycles.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID;
  cycles.group_leader = 0;
  cycles.group_members = {0, 1};
  cycles.hf_sample_period = short_window;
  instructions.name = "instructions";
  instructions.group_leader = 0;
  faults.name = "page-faults";
  return {cycles, instructions, faults};
}

Sample Read(uint32_t tid, uint32_t cpu, uint64_t cycles, uint64_t instructions,
            uint64_t period = 1000) {
  Sample s;
  s.tid = tid;
  s.cpu = cpu;
  s.event = 0;
  s.period = period;
  s.counter_values = {cycles, instructions};
  return s;
}

TEST(ReadGroupsOf, LeadersWithGroupReadsInEventOrder) {
  const std::vector<ReadGroup> groups = ReadGroupsOf(GroupEvents());
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].leader, 0u);
  EXPECT_EQ(groups[0].members, (std::vector<uint32_t>{0, 1}));
  std::vector<EventDesc> unread = GroupEvents();
  unread[0].read_format = 0;  // its samples carry no group's counts
  EXPECT_TRUE(ReadGroupsOf(unread).empty());
}

TEST(GroupWindowsByTime, EachWholeWindowGoesToTheSlotOfItsClosingSample) {
  GroupWindowsByTime windows(GroupEvents());
  ASSERT_TRUE(windows.any());
  windows.Add(Read(1, 0, 1000, 500), 0);   // the thread's first read: no window
  windows.Add(Read(1, 0, 2000, 1500), 0);  // 1000 cycles, 1000 instructions
  windows.Add(Read(1, 0, 4000, 2000), 2);  // 2000, 500: in slot 2
  windows.Add(Read(2, 0, 100, 100), 2);    // another thread's first
  windows.Add(Read(2, 0, 1100, 600), 2);   // 1000, 500
  Sample fault;
  fault.event = 2;
  fault.period = 1;
  windows.Add(fault, 1);  // not the group's
  ASSERT_EQ(windows.slots().size(), 3u);
  const WindowSums& first = windows.slots()[0][0];
  EXPECT_EQ(first.windows, 1u);
  EXPECT_EQ(first.deltas, (std::vector<double>{1000, 1000}));
  EXPECT_EQ(first.products, (std::vector<double>{1e6, 1e6, 1e6, 1e6}));
  EXPECT_TRUE(windows.slots()[1].empty());
  const WindowSums& third = windows.slots()[2][0];
  EXPECT_EQ(third.windows, 2u);
  EXPECT_EQ(third.deltas, (std::vector<double>{3000, 1000}));
  EXPECT_EQ(third.products,
            (std::vector<double>{2000.0 * 2000 + 1000.0 * 1000, 2000.0 * 500 + 1000.0 * 500,
                                 2000.0 * 500 + 1000.0 * 500, 500.0 * 500 + 500.0 * 500}));
}

TEST(GroupWindowsByTime, WindowsThatAreNotWholeAreLeftOut) {
  GroupWindowsByTime windows(GroupEvents());
  windows.Add(Read(1, 0, 1000, 1000), 0);
  windows.Add(Read(1, 1, 2000, 2000), 0);  // migrated: the counts are another instance's
  windows.Add(Read(1, 1, 3000, 3000), 0);  // whole: 1000, 1000
  windows.Interrupt();                     // a throttle
  windows.Add(Read(1, 1, 4000, 4000), 0);
  windows.Add(Read(1, 1, 3500, 5000), 0);  // cycles went backwards
  windows.Add(Read(1, 1, 4500, 6000), 0);  // whole: 1000, 1000
  ASSERT_EQ(windows.slots().size(), 1u);
  EXPECT_EQ(windows.slots()[0][0].windows, 2u);
  EXPECT_EQ(windows.slots()[0][0].deltas, (std::vector<double>{2000, 2000}));
}

TEST(GroupWindowsByTime, BurstSamplingCountsTheShortPeriodsOnly) {
  GroupWindowsByTime windows(GroupEvents(/*short_window=*/100));
  windows.Add(Read(1, 0, 0, 0, 100), 0);
  windows.Add(Read(1, 0, 100, 80, 100), 0);     // a short window: whole
  windows.Add(Read(1, 0, 5100, 900, 5000), 0);  // the long period between: not a window
  windows.Add(Read(1, 0, 5200, 1000, 100), 0);  // short again
  EXPECT_EQ(windows.slots()[0][0].windows, 2u);
  EXPECT_EQ(windows.slots()[0][0].deltas, (std::vector<double>{200, 180}));
}

}  // namespace
}  // namespace tprof
