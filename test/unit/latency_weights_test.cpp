// The latency view's arithmetic on hand-built records: which threads run when, and the weights.
#include "core/analysis/latency_weights.h"

#include <gtest/gtest.h>
#include <linux/perf_event.h>

#include "core/model/event_unit.h"

namespace tprof {
namespace {

Sample At(uint32_t event, uint32_t tid, uint64_t time, uint64_t period) {
  Sample s;
  s.event = event;
  s.pid = 1;
  s.tid = tid;
  s.time = time;
  s.period = period;
  return s;
}

class Collect : public RecordVisitor {
 public:
  void OnSample(const Sample& s) override { periods.push_back(s.period); }
  std::vector<uint64_t> periods;
};

// Threads 1 and 2 of process 1 run from 0 to 100; thread 2 is off the CPU from 20 to 60 (an
// interval written at its end, 60, with period 40). Thread 3 forks at 80 and exits at 90.
TEST(LatencyWeights, RunningThreadsFollowLivesAndOffCpuIntervals) {
  RunningThreads running(/*off_cpu_event=*/1);
  for (uint64_t t : {0, 100}) {
    running.OnSample(At(0, 1, t, 10));
    running.OnSample(At(0, 2, t, 10));
  }
  running.OnSample(At(1, 2, 60, 40));
  TaskRecord fork{80, false, 1, 1, 3, 1}, exit{90, true, 1, 1, 3, 1};
  running.OnTask(fork);
  running.OnTask(exit);
  running.Finish();
  EXPECT_EQ(running.RunningAt(1, 10), 2u);
  EXPECT_EQ(running.RunningAt(1, 40), 1u);  // thread 2 waits
  EXPECT_EQ(running.RunningAt(1, 70), 2u);
  EXPECT_EQ(running.RunningAt(1, 85), 3u);  // thread 3 lives
  EXPECT_EQ(running.RunningAt(1, 95), 2u);
  EXPECT_EQ(running.RunningAt(1, 100), 2u);  // a thread's last moment still counts
  EXPECT_EQ(running.RunningAt(7, 50), 1u);   // a process not seen: the sample's own thread

  // The weights: the clock's samples divided by the threads running; the off-cpu event, its
  // reasons' parts (report --off-cpu-reasons) and a count of occurrences (context switches) as
  // they are.
  std::vector<EventDesc> events(4);
  events[0].name = "task-clock";
  events[0].type = PERF_TYPE_SOFTWARE;
  events[1].name = std::string(kOffCpuEventName);
  events[1].type = PERF_TYPE_SOFTWARE;
  events[1].config = kOffCpuEventConfig;
  events[2].name = "context-switches";
  events[2].type = PERF_TYPE_SOFTWARE;
  events[3] = events[1];
  events[3].name = std::string(kOffCpuEventName) + ":lock";
  events[3].config = kOffCpuReasonEventConfig + 1;
  Collect out;
  LatencyWeighting weighting(running, events, /*off_cpu_event=*/1, out);
  weighting.OnSample(At(0, 1, 10, 1000));  // two running: 500
  weighting.OnSample(At(0, 1, 40, 1000));  // one: 1000
  weighting.OnSample(At(0, 1, 85, 999));   // three: 333
  weighting.OnSample(At(1, 2, 60, 40));
  weighting.OnSample(At(2, 2, 10, 1));
  weighting.OnSample(At(3, 2, 60, 40));
  EXPECT_EQ(out.periods, (std::vector<uint64_t>{500, 1000, 333, 40, 1, 40}));
}

}  // namespace
}  // namespace tprof
