// Live counting on running processes (-p), on every CPU (-a) and in intervals (-I), with software
// events (they count on a machine without a hardware PMU), and the command line of
// `tprof topdown` live mode.
#include <gtest/gtest.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/metrics/metric_table.h"
#include "core/metrics/topdown_evaluator.h"
#include "pmu/counting_run.h"
#include "pmu/counting_session.h"
#include "pmu/counting_watch.h"
#include "pmu/host_info.h"
#include "pmu/interval_reader.h"
#include "report/topdown_report.h"
#include "test/support/run_command.h"
#include "test/support/test_programs.h"

namespace tprof {
namespace {

using testing::RunCommand;
const std::string kAttachTarget = ATTACH_TARGET_BINARY;

// attach_target started with pipes on its stdin and stdout, waited on until it says "ready".
class AttachTarget {
 public:
  AttachTarget(int threads, long pages) {
    int in[2], out[2];
    EXPECT_EQ(pipe(in), 0);
    EXPECT_EQ(pipe(out), 0);
    pid_ = fork();
    if (pid_ == 0) {
      dup2(in[0], 0);
      dup2(out[1], 1);
      close(in[1]);
      close(out[0]);
      std::string t = std::to_string(threads), p = std::to_string(pages);
      execl(kAttachTarget.c_str(), kAttachTarget.c_str(), t.c_str(), p.c_str(), nullptr);
      _exit(126);
    }
    close(in[0]);
    close(out[1]);
    go_fd_ = in[1];
    char ready[6] = {};
    EXPECT_EQ(read(out[0], ready, 6), 6);
    EXPECT_EQ(std::string(ready, 6), "ready\n");
    close(out[0]);
  }
  ~AttachTarget() {
    if (go_fd_ >= 0) close(go_fd_);
    if (pid_ > 0) Wait();
  }
  pid_t pid() const { return pid_; }
  void Go() {
    EXPECT_EQ(write(go_fd_, "g", 1), 1);
    close(go_fd_);
    go_fd_ = -1;
  }
  int Wait() {
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return status;
  }

 private:
  pid_t pid_ = -1;
  int go_fd_ = -1;
};

const CountedEvent kPageFaults{"page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS};
const CountedEvent kTaskClock{"task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK};
const CountedEvent kCpuClock{"cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK};

// -p: the counters are opened on each of the process's three threads, and inherited by the
// thread it starts after the attach; the page faults they sum are the workload's.
TEST(LiveCountingTest, AttachesToEveryThreadOfARunningProcess) {
  constexpr int kThreads = 3;
  constexpr long kPages = 500;
  AttachTarget target(kThreads, kPages);
  auto instances = ThreadsOfProcesses({target.pid(), target.pid()});  // the same one twice
  ASSERT_TRUE(instances.ok()) << instances.error().message();
  EXPECT_EQ(instances->size(), static_cast<size_t>(kThreads));
  auto session = CountingSession::Open({{kPageFaults}, {kTaskClock}}, instances.value());
  ASSERT_TRUE(session.ok()) << session.error().message();
  EXPECT_EQ(session->instance_count(), static_cast<size_t>(kThreads));
  ASSERT_TRUE(session->Enable().ok());
  target.Go();
  CountingWatchOptions watch;
  watch.processes = {target.pid()};
  watch.duration_seconds = 10;  // a safety net: the workload takes milliseconds
  auto stop = WatchCounting(watch, [](uint64_t) { return Status::Ok(); });
  ASSERT_TRUE(stop.ok()) << stop.error().message();
  EXPECT_EQ(stop->end, CountingEnd::kTargetExited);
  auto report = session->Read();
  ASSERT_TRUE(report.ok()) << report.error().message();
  EXPECT_TRUE(WIFEXITED(target.Wait()));
  // Four threads (three attached, one inherited) each fault in 500 pages: 2000 faults. Beyond
  // them the threads only fault on the late thread's stack and the exit path (about 10 here);
  // 100 allows for that and still rules out missing a thread (-500) or counting another process.
  const double faults = report->groups[0].counters[0].value.value_or(-1);
  EXPECT_GE(faults, (kThreads + 1) * kPages);
  EXPECT_LT(faults, (kThreads + 1) * kPages + 100);
  // The threads did run: some CPU time, less than the whole wait.
  const double task_ns = report->groups[1].counters[0].value.value_or(-1);
  EXPECT_GT(task_ns, 0);
  EXPECT_LT(task_ns, static_cast<double>(stop->elapsed_ns) * 2 + 1e8);
}

TEST(LiveCountingTest, AttachingToAMissingProcessSaysWhich) {
  auto instances = ThreadsOfProcesses({999999999});
  ASSERT_FALSE(instances.ok());
  EXPECT_NE(instances.error().message().find("no process with pid 999999999"), std::string::npos);
}

// -a: one CPU-wide counter per CPU, summed. A CPU-wide clock counts the CPU's time whether it is
// busy or idle, so over a wait of W seconds the sum is W times the online CPUs, which the test
// measures with its own clock. Intervals: the deltas add up exactly to a read at the end, there
// is one per interval (plus the partial last one), and each is its own wall time times the CPUs.
TEST(LiveCountingTest, SystemWideIntervalsAddUpToTheTotal) {
  const size_t cpus = OnlineCpus().size();
  auto session = CountingSession::Open({{kCpuClock}, {kTaskClock}}, EveryCpu());
  ASSERT_TRUE(session.ok()) << session.error().message();
  EXPECT_EQ(session->instance_count(), cpus);
  IntervalReader reader(*session);
  std::vector<RawCounts> deltas;
  std::vector<uint64_t> stamps = {0};
  ASSERT_TRUE(session->Enable().ok());
  const uint64_t start = MonotonicNowNs();
  CountingWatchOptions watch;
  watch.duration_seconds = 0.55;
  watch.interval_ns = 100'000'000;
  auto stop = WatchCounting(watch, [&](uint64_t elapsed) -> Status {
    auto delta = reader.Next();
    if (!delta.ok()) return delta.error();
    deltas.push_back(delta.value());
    stamps.push_back(elapsed);
    return Status::Ok();
  });
  ASSERT_TRUE(stop.ok()) << stop.error().message();
  EXPECT_EQ(stop->end, CountingEnd::kDuration);
  ASSERT_TRUE(session->Disable().ok());
  const double wall = static_cast<double>(MonotonicNowNs() - start);
  auto last = reader.Next();
  ASSERT_TRUE(last.ok());
  deltas.push_back(last.value());
  stamps.push_back(stop->elapsed_ns);
  // 0.55 s in 100 ms steps: 5 ticks, then the partial last interval.
  EXPECT_GE(deltas.size(), 5u);
  EXPECT_LE(deltas.size(), 7u);
  auto total = session->ReadRaw();
  ASSERT_TRUE(total.ok());
  for (size_t g = 0; g < 2; ++g) {
    uint64_t value = 0, enabled = 0, running = 0;
    for (const RawCounts& d : deltas) {
      value += d.groups[g][0].value;
      enabled += d.groups[g][0].time_enabled;
      running += d.groups[g][0].time_running;
    }
    EXPECT_EQ(value, total->groups[g][0].value) << g;
    EXPECT_EQ(enabled, total->groups[g][0].time_enabled) << g;
    EXPECT_EQ(running, total->groups[g][0].time_running) << g;
    // The clocks ran on every CPU for the whole wait (enabled before `start`, disabled after).
    const double sum = static_cast<double>(total->groups[g][0].value);
    EXPECT_GT(sum, 0.9 * wall * static_cast<double>(cpus)) << g;
    EXPECT_LT(sum, 1.1 * (wall + 5e6) * static_cast<double>(cpus)) << g;
  }
  // Each whole interval's cpu-clock delta is its own length times the CPUs (the reads lag the
  // timer by a scheduling delay on a loaded machine, so within 20 % and 5 ms).
  for (size_t i = 1; i + 1 < deltas.size(); ++i) {
    const double length = static_cast<double>(stamps[i + 1] - stamps[i]);
    const double clock = static_cast<double>(deltas[i].groups[0][0].value);
    EXPECT_NEAR(clock, length * static_cast<double>(cpus),
                0.2 * length * static_cast<double>(cpus) + 5e6)
        << "interval " << i;
  }
}

// The EACCES of a CPU-wide counter for an unprivileged user carries the paranoid explanation.
TEST(LiveCountingTest, SystemWideWithoutPermissionExplainsParanoid) {
  int paranoid = 2;
  std::ifstream("/proc/sys/kernel/perf_event_paranoid") >> paranoid;
  if (geteuid() != 0 || paranoid <= 0)
    GTEST_SKIP() << "needs root (to become nobody) and kernel.perf_event_paranoid > 0";
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  pid_t child = fork();
  if (child == 0) {
    close(pipe_fds[0]);
    if (setgid(65534) != 0 || setuid(65534) != 0) _exit(3);
    auto session = CountingSession::Open({{kCpuClock}}, EveryCpu());
    std::string message = session.ok() ? "opened" : session.error().message();
    (void)!write(pipe_fds[1], message.data(), message.size());
    _exit(0);
  }
  close(pipe_fds[1]);
  std::string message;
  char buf[512];
  for (ssize_t n; (n = read(pipe_fds[0], buf, sizeof buf)) > 0;)
    message.append(buf, static_cast<size_t>(n));
  close(pipe_fds[0]);
  int status;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_NE(message.find("permission denied"), std::string::npos) << message;
  EXPECT_NE(message.find("perf_event_paranoid is " + std::to_string(paranoid)), std::string::npos)
      << message;
}

// A launched command counted in 50 ms intervals: one interval per 50 ms of the run plus the
// partial last one, and the intervals' page faults add up to the total, which is the workload's.
TEST(LiveCountingTest, IntervalsOfALaunchedCommand) {
  CountingRunOptions options;
  options.command = {FAULT_SWITCH_BINARY, "2000", "50"};
  options.interval_ns = 50'000'000;
  double faults = 0;
  std::vector<double> stamps;
  auto run = RunCounting({{kPageFaults, kTaskClock}}, options,
                         [&](double seconds, const CounterReport& counts) -> Status {
                           faults += counts.groups[0].counters[0].value.value_or(0);
                           stamps.push_back(seconds);
                           return Status::Ok();
                         });
  ASSERT_TRUE(run.ok()) << run.error().message();
  EXPECT_EQ(run->end, CountingEnd::kTargetExited);
  EXPECT_TRUE(WIFEXITED(run->wait_status) && WEXITSTATUS(run->wait_status) == 0);
  EXPECT_EQ(run->intervals, stamps.size());
  const double elapsed = static_cast<double>(run->elapsed_ns) * 1e-9;
  const double expected_intervals = std::floor(elapsed / 0.05) + 1;
  EXPECT_NEAR(static_cast<double>(stamps.size()), expected_intervals, 1.0) << elapsed;
  EXPECT_TRUE(std::is_sorted(stamps.begin(), stamps.end()));
  EXPECT_DOUBLE_EQ(stamps.back(), elapsed);
  // No multiplexing with software events: the scaled deltas are the raw ones and add up exactly.
  const double total = run->total.groups[0].counters[0].value.value_or(-1);
  EXPECT_EQ(faults, total);
  // As CountingSessionTest: 2000 touched pages plus the loader's faults.
  EXPECT_GE(total, 2000);
  EXPECT_LT(total, 2300);
}

// -a with a command: every CPU, for as long as the command runs (about 0.3 s of sleep).
TEST(LiveCountingTest, SystemWideWhileACommandRuns) {
  CountingRunOptions options;
  options.system_wide = true;
  options.command = {"/bin/sleep", "0.3"};
  const uint64_t start = MonotonicNowNs();
  auto run = RunCounting({{kCpuClock}}, options,
                         [](double, const CounterReport&) { return Status::Ok(); });
  const double wall = static_cast<double>(MonotonicNowNs() - start);
  ASSERT_TRUE(run.ok()) << run.error().message();
  EXPECT_EQ(run->end, CountingEnd::kTargetExited);
  const double cpus = static_cast<double>(OnlineCpus().size());
  EXPECT_EQ(run->target, std::to_string(OnlineCpus().size()) + " CPUs while the command ran");
  // The clocks ran from before the command started until after it ended: at least its 0.3 s on
  // every CPU, at most this test's wall time on every CPU.
  const double clock = run->total.groups[0].counters[0].value.value_or(-1);
  EXPECT_GE(clock, 0.3e9 * cpus);
  EXPECT_LE(clock, wall * cpus);
}

// An attached process that does nothing is counted until --duration, then left running.
TEST(LiveCountingTest, AttachedCountingEndsAtTheDurationAndLeavesTheTarget) {
  AttachTarget target(2, 1);
  CountingRunOptions options;
  options.pids = {target.pid()};
  options.duration_seconds = 0.2;
  auto run = RunCounting({{kTaskClock}}, options,
                         [](double, const CounterReport&) { return Status::Ok(); });
  ASSERT_TRUE(run.ok()) << run.error().message();
  EXPECT_EQ(run->end, CountingEnd::kDuration);
  EXPECT_EQ(run->target, "2 threads of pid " + std::to_string(target.pid()));
  EXPECT_GE(run->elapsed_ns, 200'000'000u);
  EXPECT_LT(run->elapsed_ns, 2'000'000'000u);
  EXPECT_EQ(kill(target.pid(), 0), 0);  // still there
  target.Go();
}

// Ctrl-C (SIGINT to tprof) stops counting with the counts so far and leaves the target alone.
TEST(LiveCountingTest, InterruptStopsCountingWithTheCountsSoFar) {
  pid_t spinner = fork();
  if (spinner == 0) {
    volatile uint64_t x = 0;
    while (true) x = x + 1;
  }
  // The sender blocks SIGINT itself, so that the signal waits for the counting thread's watch.
  std::thread sender([] {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    kill(getpid(), SIGINT);
  });
  CountingRunOptions options;
  options.pids = {spinner};
  options.duration_seconds = 10;  // a safety net
  auto run = RunCounting({{kTaskClock}}, options,
                         [](double, const CounterReport&) { return Status::Ok(); });
  sender.join();
  const bool alive = kill(spinner, 0) == 0;
  kill(spinner, SIGKILL);
  waitpid(spinner, nullptr, 0);
  ASSERT_TRUE(run.ok()) << run.error().message();
  EXPECT_EQ(run->end, CountingEnd::kInterrupted);
  EXPECT_TRUE(alive);
  EXPECT_LT(run->elapsed_ns, 5'000'000'000u);
  // The spinner ran for some of the 200 ms (the machine is shared), never more than all of it.
  ASSERT_EQ(run->total.groups.size(), 1u);
  const double task_ns = run->total.groups[0].counters[0].value.value_or(-1);
  EXPECT_GT(task_ns, 1e6);
  EXPECT_LT(task_ns, static_cast<double>(run->elapsed_ns) + 1e7);
}

// Per-interval metrics: the evaluator on each interval's deltas, rendered perf stat -I style.
// A table over software events stands in for a PMU's: faults per millisecond of task-clock.
TEST(LiveCountingTest, IntervalMetricsFromDeltasInEveryFormat) {
  MetricTable table;
  table.name = "software";
  table.title = "software events";
  table.source = "test";
  table.events = {{"PAGE_FAULTS", 0}, {"TASK_CLOCK", 0}};
  table.metrics = {{"faults_per_ms", "PAGE_FAULTS / TASK_CLOCK * 1000000", "per ms", {"l1"}}};
  auto selected = table.Select("l1");
  ASSERT_TRUE(selected.ok()) << selected.error().message();
  // Two intervals' deltas, made by hand: 300 faults in 3 ms, then 100 faults in 1 ms at 50 %.
  CounterReport first{"tprof counts",
                      {{{{"PAGE_FAULTS", 300.0}, {"TASK_CLOCK", 3e6}}, 3000000, 100}}};
  CounterReport second{"tprof counts",
                       {{{{"PAGE_FAULTS", 100.0}, {"TASK_CLOCK", 1e6}}, 500000, 50}}};
  auto a = EvaluateMetrics(table, selected.value(), first);
  auto b = EvaluateMetrics(table, selected.value(), second);
  ASSERT_TRUE(a.ok() && b.ok());
  for (TopdownFormat format : {TopdownFormat::kText, TopdownFormat::kCsv, TopdownFormat::kJson}) {
    std::ostringstream out;
    TopdownIntervalWriter writer(table, "counted live", format, out);
    writer.Interval(0.1, a.value());
    writer.Interval(0.2, b.value());
    writer.Summary(a.value());
    const std::string text = out.str();
    if (format == TopdownFormat::kText) {
      EXPECT_NE(text.find("0.100000000 faults_per_ms"), std::string::npos) << text;
      EXPECT_NE(text.find("0.200000000 faults_per_ms"), std::string::npos) << text;
      EXPECT_NE(text.find("100.00 per ms"), std::string::npos) << text;
      EXPECT_NE(text.find("50.00%"), std::string::npos) << text;
      EXPECT_NE(text.find("whole run"), std::string::npos) << text;
    } else if (format == TopdownFormat::kCsv) {
      EXPECT_EQ(text.rfind("time,metric,value,unit,running_percent,events,cross_group\n", 0), 0u)
          << text;
      EXPECT_NE(text.find("0.100000000,faults_per_ms,100.00,per ms,100,"), std::string::npos);
      EXPECT_NE(text.find("0.200000000,faults_per_ms,100.00,per ms,50,"), std::string::npos);
      EXPECT_NE(text.find("\n,faults_per_ms,100.00"), std::string::npos) << text;
    } else {
      std::istringstream lines(text);
      std::string line;
      std::vector<nlohmann::json> objects;
      while (std::getline(lines, line)) objects.push_back(nlohmann::json::parse(line));
      ASSERT_EQ(objects.size(), 3u) << text;
      EXPECT_DOUBLE_EQ(objects[0]["interval"].get<double>(), 0.1);
      EXPECT_EQ(objects[0]["input"], "counted live");
      EXPECT_DOUBLE_EQ(objects[1]["metrics"][0]["value"].get<double>(), 100.0);
      EXPECT_DOUBLE_EQ(objects[1]["metrics"][0]["running_percent"].get<double>(), 50.0);
      EXPECT_TRUE(objects[2]["interval"].is_null());
      EXPECT_TRUE(objects[2]["summary"].get<bool>());
    }
  }
}

// On this VM (no PMU) every live mode stops at the same one line; elsewhere they would count.
TEST(LiveCountingCliTest, EveryLiveModeWithoutAPmuSaysSoInOneLine) {
  auto probe = RunCommand({kTprof, "topdown", "--", "/bin/true"});
  if (probe.exit_code == 0) GTEST_SKIP() << "this machine has a PMU";
  AttachTarget target(1, 1);
  const std::string pid = std::to_string(target.pid());
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{kTprof, "topdown", "-p", pid, "--duration", "0.1"},
        std::vector<std::string>{kTprof, "topdown", "-a", "--duration", "0.1"},
        std::vector<std::string>{kTprof, "topdown", "-I", "100", "--", "/bin/true"},
        std::vector<std::string>{kTprof, "topdown", "-a", "-I", "100", "--json"}}) {
    auto r = RunCommand(args);
    EXPECT_EQ(r.exit_code, probe.exit_code) << args[2];
    EXPECT_EQ(r.exit_code, 1) << args[2];
    EXPECT_EQ(r.err, probe.err) << args[2];
    EXPECT_NE(r.err.find("no hardware PMU"), std::string::npos) << r.err;
    EXPECT_EQ(Lines(r.err), 1) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  target.Go();
}

TEST(LiveCountingCliTest, BadIntervalsAndTargetsAreUsageErrors) {
  for (const char* interval : {"0", "-5", "abc", "5", "100ms"}) {
    auto r = RunCommand({kTprof, "topdown", "-I", interval, "--", "/bin/true"});
    EXPECT_EQ(r.exit_code, 2) << interval << ": " << r.err;
    EXPECT_EQ(Lines(r.err), 1) << r.err;
  }
  auto both = RunCommand({kTprof, "topdown", "-p", "1", "--", "/bin/true"});
  EXPECT_EQ(both.exit_code, 2) << both.err;
  auto exclusive = RunCommand({kTprof, "topdown", "-p", "1", "-a"});
  EXPECT_EQ(exclusive.exit_code, 2) << exclusive.err;
  auto bad_pid = RunCommand({kTprof, "topdown", "-p", "12x"});
  EXPECT_EQ(bad_pid.exit_code, 2) << bad_pid.err;
  auto summary = RunCommand({kTprof, "topdown", "--summary", "-a"});
  EXPECT_EQ(summary.exit_code, 2) << summary.err;
}

TEST(LiveCountingCliTest, AMissingPidIsAOneLineError) {
  auto r = RunCommand({kTprof, "topdown", "-p", "999999999"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "tprof topdown: no process with pid 999999999\n");
}

}  // namespace
}  // namespace tprof
