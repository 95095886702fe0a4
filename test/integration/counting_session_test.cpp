// Counting and scaling with times read from the kernel. Software events never multiplex, but a
// per-task counter bound to one CPU is enabled whenever the task runs and running only while it
// runs on that CPU: the kernel's own time_enabled / time_running then differ, as under
// multiplexing.
#include "pmu/counting_session.h"

#include <gtest/gtest.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <map>

#include "pmu/workload.h"
#include "test/support/test_programs.h"

namespace tprof {
namespace {

TEST(ScaleCountTest, Arithmetic) {
  EXPECT_EQ(ScaleCount(100, 1000, 1000), 100.0);
  EXPECT_EQ(ScaleCount(100, 1000, 250), 400.0);
  EXPECT_FALSE(ScaleCount(0, 1000, 0).has_value());
}

// task-clock counts the nanoseconds the task runs, so scaled to the whole enabled time it must
// come out as about the enabled time itself, whichever share the CPU-0 counter saw.
TEST(CountingSessionTest, ScalesByTheKernelsEnabledAndRunningTimes) {
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs two CPUs";
  pid_t child = fork();
  if (child == 0) {
    // Spin, moving between CPU 0 and CPU 1, for about 0.4 s of CPU time.
    volatile uint64_t x = 0;
    for (int round = 0; round < 8; ++round) {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(round % 2, &set);
      sched_setaffinity(0, sizeof set, &set);
      timespec start, now;
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
      do {
        for (int i = 0; i < 10000; ++i) x = x + static_cast<uint64_t>(i);
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
      } while ((now.tv_sec - start.tv_sec) * 1000000000L + (now.tv_nsec - start.tv_nsec) <
               50000000L);
    }
    _exit(0);
  }
  auto session = CountingSession::Open(
      {{{"task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK}}}, child, /*cpu=*/0, false);
  ASSERT_TRUE(session.ok()) << session.error().message();
  ASSERT_TRUE(session->Enable().ok());
  int status;
  // The counter must be read while the task exists: poll until it is a zombie, then read.
  siginfo_t info{};
  waitid(P_PID, static_cast<id_t>(child), &info, WEXITED | WNOWAIT);
  auto report = session->Read();
  waitpid(child, &status, 0);
  ASSERT_TRUE(report.ok()) << report.error().message();
  const CounterGroup& g = report->groups.at(0);
  EXPECT_GT(g.running_percent, 10.0);
  EXPECT_LT(g.running_percent, 90.0);  // it ran on CPU 1 too
  ASSERT_TRUE(g.counters[0].value.has_value());
  // The scaled count is the run time of the whole task: about 0.4 s (from 0.35 to 0.6 s to allow
  // for the time before the counter was enabled and scheduling noise).
  EXPECT_GT(*g.counters[0].value, 0.35e9);
  EXPECT_LT(*g.counters[0].value, 0.6e9);
}

TEST(CountingSessionTest, CountsALaunchedWorkloadFromExec) {
  auto workload = Workload::Create({kFaultSwitch, "2000", "50"});
  ASSERT_TRUE(workload.ok());
  auto session = CountingSession::Open(
      {{{"task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK},
        {"page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS}},
       {{"context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES}}},
      workload->pid(), -1, /*enable_on_exec=*/true);
  ASSERT_TRUE(session.ok()) << session.error().message();
  ASSERT_TRUE(workload->Start().ok());
  ASSERT_TRUE(workload->Wait().ok());
  auto report = session->Read();
  ASSERT_TRUE(report.ok());
  ASSERT_EQ(report->groups.size(), 2u);
  EXPECT_DOUBLE_EQ(report->groups[0].running_percent, 100.0);
  // 2000 touched pages and 50 sleeps (test/workloads/fault_switch.cpp), plus the loader's faults.
  double faults = report->groups[0].counters[1].value.value_or(0);
  EXPECT_GE(faults, 2000);
  EXPECT_LT(faults, 2300);
  double switches = report->groups[1].counters[0].value.value_or(0);
  // The 50 sleeps switch out voluntarily; on a busy machine the scheduler adds preemptions, so
  // the upper bound only rules out counting something else entirely.
  EXPECT_GE(switches, 50);
  EXPECT_LT(switches, 400);
}

}  // namespace
}  // namespace tprof
