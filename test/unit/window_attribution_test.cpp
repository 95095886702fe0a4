// The start-and-end-in-the-same-function filter on constructed sample sequences.
#include "core/analysis/window_attribution.h"

#include <gtest/gtest.h>

namespace tprof {
namespace {

Sample At(uint32_t tid, uint32_t cpu, std::vector<uint64_t> values) {
  Sample s;
  s.tid = tid;
  s.cpu = cpu;
  s.counter_values = std::move(values);
  return s;
}

TEST(WindowAttributionTest, CreditsOnlyWindowsThatStartAndEndInTheFunction) {
  WindowAttributor a(2);             // cycles, instructions
  a.Add(At(1, 0, {100, 50}), "f");   // first sample of the series: no window yet
  a.Add(At(1, 0, {200, 250}), "f");  // f -> f: credit 100 cycles, 200 instructions
  a.Add(At(1, 0, {300, 260}), "g");  // f -> g: discarded
  a.Add(At(1, 0, {500, 360}), "g");  // g -> g: credit 200, 100
  a.Add(At(1, 0, {600, 700}), "f");  // g -> f: discarded
  const auto& f = a.functions().at("f");
  const auto& g = a.functions().at("g");
  EXPECT_EQ(f.deltas, (std::vector<double>{100, 200}));
  EXPECT_EQ(g.deltas, (std::vector<double>{200, 100}));
  EXPECT_EQ(f.samples, 3u);  // every sample counts toward the share
  EXPECT_EQ(g.samples, 2u);
  EXPECT_EQ(f.windows_credited, 1u);
  EXPECT_EQ(f.windows_discarded, 1u);
  EXPECT_EQ(a.windows_credited(), 2u);
  EXPECT_EQ(a.windows_discarded(), 2u);
  EXPECT_DOUBLE_EQ(a.discarded_percent(), 50.0);
  // IPC of f from its credited window: 200 / 100.
  EXPECT_DOUBLE_EQ(f.deltas[1] / f.deltas[0], 2.0);
}

// Burst sampling on a kernel with hf_sample_period: the periods alternate long (900 here) and
// short (100), and only the short windows are windows. The long period from f back to f ran g
// in between (its instructions say so: IPC 3 against f's 1), so crediting it would be wrong.
TEST(WindowAttributionTest, WithAShortWindowOnlyTheShortPeriodsAreWindows) {
  WindowAttributor a(2, 100);
  auto at = [](uint64_t period, std::vector<uint64_t> values) {
    Sample s = At(1, 0, std::move(values));
    s.period = period;
    return s;
  };
  a.Add(at(1000, {1000, 1000}), "f");  // the first whole period: no window yet
  a.Add(at(100, {1100, 1100}), "f");   // short, f -> f: credit 100, 100
  a.Add(at(900, {2000, 3800}), "f");   // long: not a window, though it starts and ends in f
  a.Add(at(100, {2100, 3900}), "g");   // short, f -> g: discarded
  a.Add(at(900, {3000, 4800}), "g");   // long
  a.Add(at(100, {3100, 5100}), "g");   // short, g -> g: credit 100, 300
  EXPECT_EQ(a.functions().at("f").deltas, (std::vector<double>{100, 100}));
  EXPECT_EQ(a.functions().at("g").deltas, (std::vector<double>{100, 300}));
  EXPECT_EQ(a.windows_credited(), 2u);
  EXPECT_EQ(a.windows_discarded(), 1u);
  EXPECT_EQ(a.long_periods(), 2u);
  EXPECT_EQ(a.functions().at("f").samples, 3u);  // every sample still counts toward the share
}

// A window is two consecutive samples of a thread on one counter instance (thread and CPU):
// when the thread was sampled on another CPU in between, the instance's delta spans the thread's
// absence, during which it counted whatever the thread ran on its CPU before and after, so the
// window is discarded.
TEST(WindowAttributionTest, SeriesArePerThreadAndCpuAndAMigrationEndsOne) {
  WindowAttributor a(1);
  a.Add(At(1, 0, {100}), "f");
  a.Add(At(2, 0, {5}), "f");    // another thread: its own series
  a.Add(At(1, 1, {7}), "f");    // thread 1 on another CPU: its own counter instance
  a.Add(At(1, 0, {160}), "f");  // thread 1 back on CPU 0, sampled on CPU 1 since: discarded
  a.Add(At(2, 0, {25}), "f");   // thread 2, still on CPU 0: +20
  a.Add(At(1, 1, {10}), "f");   // thread 1 on CPU 1 again, sampled on CPU 0 since: discarded
  a.Add(At(1, 1, {13}), "f");   // and again on CPU 1: +3
  EXPECT_EQ(a.functions().at("f").deltas, std::vector<double>{23});
  EXPECT_EQ(a.windows_credited(), 2u);
  EXPECT_EQ(a.windows_discarded(), 2u);
  // Each instance's last read, summed: 160 + 25 + 13.
  EXPECT_EQ(a.read_totals(), std::vector<uint64_t>{198});
}

TEST(WindowAttributionTest, ABackwardsCounterOrMissingValuesAreNotCredited) {
  WindowAttributor a(2);
  a.Add(At(1, 0, {100, 100}), "f");
  a.Add(At(1, 0, {50, 200}), "f");  // went backwards: a new counter instance, not a window
  a.Add(At(1, 0, {80}), "f");       // wrong member count: counted as a sample only
  EXPECT_EQ(a.functions().at("f").deltas, (std::vector<double>{0, 0}));
  EXPECT_EQ(a.functions().at("f").samples, 3u);
  EXPECT_EQ(a.windows_discarded(), 1u);
}

// Kernels before 6.16 stop only a throttled leader; its members go on counting, so the window
// across a throttle has member deltas from a longer stretch than the leader's (the arm lab's
// burst fallback read IPC 0.95 where every instruction takes exactly two cycles).
TEST(WindowAttributionTest, AWindowAcrossAThrottleIsDiscardedInEverySeries) {
  WindowAttributor a(2);
  a.Add(At(1, 0, {1000, 500}), "f");
  a.Add(At(2, 1, {1000, 500}), "f");
  a.Add(At(1, 0, {2000, 1000}), "f");  // credited: 1000 cycles, 500 instructions
  a.Interrupt();                       // throttled: the leader stops, instructions go on
  a.Add(At(1, 0, {3000, 4000}), "f");  // spans the throttle: discarded
  a.Add(At(2, 1, {2000, 1000}), "f");  // the other instance's window too (the record names
                                       // no instance)
  a.Add(At(1, 0, {4000, 4500}), "f");  // after it: credited again
  EXPECT_EQ(a.functions().at("f").deltas, (std::vector<double>{2000, 1000}));
  EXPECT_EQ(a.windows_credited(), 2u);
  EXPECT_EQ(a.windows_discarded(), 2u);
}

}  // namespace
}  // namespace tprof
