// The recording engine on this machine, with software events: groups read in every sample,
// signals, crashes, kills, full disks, attaching to processes, system-wide recording.
#include <dirent.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <iostream>
#include <map>
#include <set>
#include <thread>

#include "core/analysis/function_profile.h"
#include "core/analysis/window_attribution.h"
#include "core/format/profile_reader.h"
#include "symbolize/symbolizer.h"
#include "test/support/record_generator.h"
#include "test/support/run_command.h"
#include "test/support/test_programs.h"

namespace tprof {
namespace {

using testing::CollectingVisitor;
using testing::RunCommand;
using testing::RunningCommand;
using testing::RunOptions;

const std::string kCrasher = CRASHER_BINARY;

void Sleep(double seconds) { std::this_thread::sleep_for(std::chrono::duration<double>(seconds)); }

std::vector<Sample> SamplesOf(const std::string& path, ReadSummary* summary = nullptr) {
  auto reader = ProfileReader::OpenFile(path);
  EXPECT_TRUE(reader.ok()) << (reader.ok() ? "" : reader.error().message());
  if (!reader.ok()) return {};
  CollectingVisitor visitor;
  auto result = reader->ReadRecords(visitor);
  EXPECT_TRUE(result.ok());
  if (summary && result.ok()) *summary = result.value();
  std::vector<Sample> samples;
  for (const auto& r : visitor.records)
    if (const Sample* s = std::get_if<Sample>(&r)) samples.push_back(*s);
  return samples;
}

// Self share per function name (without parameters), in percent of the first event's period.
std::map<std::string, double> FunctionShares(const std::string& path) {
  auto reader = ProfileReader::OpenFile(path);
  if (!reader.ok()) return {};
  ElfSymbolizer symbolizer;
  // By out-of-line function: the demo's noinline functions, whose loops are inlined lambdas.
  FunctionProfileBuilder builder(reader->events(), symbolizer, InlineMode::kPhysical);
  if (!reader->ReadRecords(builder).ok()) return {};
  FunctionProfile profile = builder.Finish();
  std::map<std::string, double> shares;
  for (const FunctionRow& row : profile.rows)
    shares[row.function.substr(0, row.function.rfind('('))] +=
        100.0 * static_cast<double>(row.self_period[0]) /
        static_cast<double>(profile.total_period[0]);
  return shares;
}

// perf stat as the independent counting run: "value,,event,..." lines of -x, output.
std::map<std::string, uint64_t> PerfStatCounts(const std::vector<std::string>& command,
                                               const RunOptions& options = {}) {
  std::vector<std::string> argv = {
      "/usr/bin/perf", "stat", "-x,", "-e", "page-faults,context-switches", "--"};
  argv.insert(argv.end(), command.begin(), command.end());
  auto r = RunCommand(argv, options);
  std::map<std::string, uint64_t> counts;
  std::stringstream lines(r.err);
  std::string line;
  while (std::getline(lines, line)) {
    std::vector<std::string> fields;
    std::stringstream in(line);
    std::string f;
    while (std::getline(in, f, ',')) fields.push_back(f);
    if (fields.size() > 2) counts[fields[2]] = std::strtoull(fields[0].c_str(), nullptr, 10);
  }
  return counts;
}

// A leader-sampled group: every cpu-clock sample carries the running totals of page-faults and
// context-switches for its thread. The per-sample deltas summed per counter must equal what a
// separate counting run (perf stat) finds. The workload faults in 5000 fresh pages and sleeps 300
// times, then spins, so the last sample follows every fault and switch; runs differ by a few
// faults of the loader, hence 2% for page faults. Both runs are held to one CPU: a thread that
// migrates leaves its old CPU's counter with the counts since its last sample there, which no
// later sample reports (perf's per-CPU inherited counters lose them too), and a sleeping
// workload migrates a varying number of times (an ASan run summed 4,990 faults of 5,109).
TEST(RecordEngineTest, GroupReadMemberSumsMatchACountingRun) {
  std::string path = TempPath("engine", "group.tprof");
  std::vector<std::string> workload = {kFaultSwitch, "5000", "300"};
  std::vector<std::string> argv = {kTprof,
                                   "record",
                                   "-e",
                                   "{cpu-clock,page-faults,context-switches}:S",
                                   "-F",
                                   "2000",
                                   "--no-member-samples",
                                   "-o",
                                   path,
                                   "--"};
  argv.insert(argv.end(), workload.begin(), workload.end());
  cpu_set_t allowed;
  ASSERT_EQ(::sched_getaffinity(0, sizeof allowed, &allowed), 0);
  int cpu = 0;
  while (!CPU_ISSET(cpu, &allowed)) ++cpu;
  const RunOptions one_cpu{.cpu = cpu};
  auto r = RunCommand(argv, one_cpu);
  ASSERT_EQ(r.exit_code, 0) << r.err;

  auto reader = ProfileReader::OpenFile(path);
  ASSERT_TRUE(reader.ok());
  ASSERT_EQ(reader->events().size(), 3u);
  EXPECT_EQ(reader->events()[0].group_members, (std::vector<uint32_t>{0, 1, 2}));
  EXPECT_EQ(reader->events()[1].group_leader, 0);

  std::vector<Sample> samples = SamplesOf(path);
  ASSERT_GT(samples.size(), 200u);
  // Events are opened per CPU, and each (thread, CPU) pair has its own inherited counter, so
  // running totals continue per (tid, cpu): a thread that migrates continues another series.
  std::map<std::pair<uint32_t, uint32_t>, std::vector<uint64_t>> previous;
  std::vector<uint64_t> sums(3, 0);
  for (const Sample& s : samples) {
    ASSERT_EQ(s.event, 0u);
    ASSERT_EQ(s.counter_values.size(), 3u);
    EXPECT_GE(s.time_enabled, s.time_running);
    auto& before = previous[{s.tid, s.cpu}];
    if (before.empty()) before.assign(3, 0);
    for (size_t i = 0; i < 3; ++i) {
      ASSERT_GE(s.counter_values[i], before[i]) << "running totals never decrease";
      sums[i] += s.counter_values[i] - before[i];
      before[i] = s.counter_values[i];
    }
  }
  auto counts = PerfStatCounts(workload, one_cpu);
  ASSERT_TRUE(counts.count("page-faults") && counts.count("context-switches"));
  EXPECT_GE(sums[1], 5000u);  // the workload's designed first touches
  EXPECT_NEAR(static_cast<double>(sums[1]), static_cast<double>(counts["page-faults"]),
              0.02 * static_cast<double>(counts["page-faults"]));
  // Context switches are the 300 voluntary ones plus preemptions, whose number depends on what
  // else the machine runs (the suite runs tests in parallel): both runs must have the 300, and
  // agree within half.
  EXPECT_GE(sums[2], 300u);
  EXPECT_GE(counts["context-switches"], 300u);
  EXPECT_NEAR(static_cast<double>(sums[2]), static_cast<double>(counts["context-switches"]),
              0.5 * static_cast<double>(counts["context-switches"]));
  std::remove(path.c_str());
}

// Ctrl-C in a terminal sends SIGINT to the foreground process group: tprof and the workload.
TEST(RecordEngineTest, CtrlCStopsTheWorkloadAndCompletesTheProfile) {
  std::string path = TempPath("engine", "ctrlc.tprof");
  RunningCommand run({kTprof, "record", "-e", "cpu-clock", "-o", path, "--", kDemo, "5"},
                     RunOptions{.new_process_group = true});
  Sleep(1.5);
  ::kill(-run.pid(), SIGINT);
  auto r = run.Wait();
  EXPECT_EQ(r.exit_code, 128 + SIGINT) << r.err;  // the workload's status
  EXPECT_NE(r.err.find("interrupted"), std::string::npos) << r.err;
  ReadSummary summary;
  std::vector<Sample> samples = SamplesOf(path, &summary);
  EXPECT_TRUE(summary.complete);
  EXPECT_GT(samples.size(), 1000u);
  EXPECT_NE(::access((path + ".partial").c_str(), F_OK), 0);
  std::remove(path.c_str());
}

TEST(RecordEngineTest, ACrashingWorkloadStillGivesACompleteProfile) {
  std::string path = TempPath("engine", "crash.tprof");
  auto r = RunCommand({kTprof, "record", "-e", "cpu-clock", "-o", path, "--", kCrasher});
  EXPECT_EQ(r.exit_code, 128 + SIGSEGV) << r.err;
  ReadSummary summary;
  std::vector<Sample> samples = SamplesOf(path, &summary);
  EXPECT_TRUE(summary.complete);
  EXPECT_GT(FunctionShares(path)["spin_then_crash"], 80.0);
  std::remove(path.c_str());
}

TEST(RecordEngineTest, SigkillLeavesAPartialFileThatReportReads) {
  std::string path = TempPath("engine", "killed.tprof");
  RunningCommand run({kTprof, "record", "-e", "cpu-clock", "-g", "-o", path, "--", kDemo, "3"},
                     RunOptions{.new_process_group = true});
  Sleep(3.0);
  ::kill(-run.pid(), SIGKILL);  // tprof and its workload
  run.Wait();
  EXPECT_NE(::access(path.c_str(), F_OK), 0) << "a killed recording must not look complete";
  // -g records its stack copies to PATH.stacks first (walked into PATH, which mends the chains,
  // when the workload ends), so that is the file left partial, with the kernel's chains as they
  // were recorded.
  const std::string partial = path + ".stacks.partial";
  EXPECT_NE(::access((path + ".stacks").c_str(), F_OK), 0);
  ASSERT_EQ(::access(partial.c_str(), F_OK), 0);
  auto report = RunCommand({kTprof, "report", "-v", "-i", partial});
  EXPECT_EQ(report.exit_code, 4) << "an incomplete input: " << report.err;
  EXPECT_NE(report.out.find("# event:"), std::string::npos) << "its samples are shown";
  EXPECT_NE(report.err.find("incomplete"), std::string::npos) << report.err;
  // Chunks are flushed every second, so most of the 3 s are there.
  std::vector<Sample> samples = SamplesOf(partial);
  EXPECT_GT(samples.size(), 2000u);
  std::remove(partial.c_str());
}

TEST(RecordEngineTest, AWriteErrorIsReportedAndTheFileIsNotPassedOffAsComplete) {
  std::string path = TempPath("engine", "full.tprof");
  auto r = RunCommand({kTprof, "record", "-e", "cpu-clock", "-g", "-o", path, "--", kDemo, "0.5"},
                      RunOptions{.file_size_limit = 16 * 1024});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("File too large"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("incomplete"), std::string::npos) << r.err;
  EXPECT_NE(::access(path.c_str(), F_OK), 0);
  std::remove((path + ".partial").c_str());
}

// A disk that fills up: a 256 KiB tmpfs (mounted for the test; root only). The recording stops
// with one line naming the error, and what was written stays FILE.partial, which report reads
// up to where it ends (status 4: an input read in part).
TEST(RecordEngineTest, AFullDiskStopsTheRecordingAndLeavesAReadablePartialFile) {
  char dir_template[] = "/tmp/tprof-full-XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  if (::mount("tprof-full", dir.c_str(), "tmpfs", 0, "size=256k") != 0) {
    ::rmdir(dir.c_str());
    GTEST_SKIP() << "cannot mount a tmpfs here (" << std::strerror(errno) << ")";
  }
  const std::string path = dir + "/full.tprof";
  auto r = RunCommand(
      {kTprof, "record", "-e", "cpu-clock", "-g", "-F", "20000", "-o", path, "--", kDemo, "2"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("No space left on device"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("incomplete"), std::string::npos) << r.err;
  EXPECT_NE(::access(path.c_str(), F_OK), 0) << "a full disk's recording passed off as complete";
  // The file the line names (with -g, the stack copies' FILE.stacks.partial: the pass that
  // mends the chains runs after the workload).
  const std::string named = "the profile is incomplete (";
  const size_t at = r.err.find(named);
  ASSERT_NE(at, std::string::npos) << r.err;
  const std::string partial =
      r.err.substr(at + named.size(), r.err.find(')', at) - at - named.size());
  EXPECT_EQ(partial.rfind(path, 0), 0u) << partial;
  EXPECT_EQ(partial.substr(partial.size() - 8), ".partial") << partial;
  ASSERT_EQ(::access(partial.c_str(), F_OK), 0) << r.err;
  auto report = RunCommand({kTprof, "report", "-i", partial, "--sort", "sym"});
  EXPECT_EQ(report.exit_code, 4) << report.err;
  EXPECT_NE(report.out.find("Function"), std::string::npos) << report.out.substr(0, 2000);
  EXPECT_NE(report.err.find("incomplete"), std::string::npos) << report.err;
  ::umount(dir.c_str());
  ::rmdir(dir.c_str());
}

// The tasks of a running process, from /proc/PID/task; waits (up to 10 s) until there are
// `at_least` of them.
std::vector<pid_t> WaitForThreads(pid_t pid, size_t at_least) {
  std::vector<pid_t> tids;
  for (int attempt = 0; attempt < 1000; ++attempt) {
    tids.clear();
    if (DIR* d = opendir(("/proc/" + std::to_string(pid) + "/task").c_str())) {
      while (dirent* e = readdir(d))
        if (pid_t tid = static_cast<pid_t>(std::atoi(e->d_name)); tid > 0) tids.push_back(tid);
      closedir(d);
    }
    if (tids.size() >= at_least) break;
    Sleep(0.01);
  }
  return tids;
}

TEST(RecordEngineTest, AttachesToARunningProcess) {
  RunningCommand target({kDemo, "1.5"});
  // The demo forks its child process before it starts its worker thread. Attached to earlier,
  // tprof follows the child as perf record -p does (inherited events), and the child's samples
  // carry its own pid: under load the demo's set-up outlasted a fixed 0.3 s wait and the test
  // found samples of another pid. With both threads there, the child is already running and
  // not followed.
  ASSERT_EQ(WaitForThreads(target.pid(), 2).size(), 2u);
  std::string path = TempPath("engine", "attach.tprof");
  auto r = RunCommand({kTprof, "record", "-e", "cpu-clock", "-p", std::to_string(target.pid()),
                       "--duration", "1", "-o", path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("--duration reached"), std::string::npos) << r.err;
  std::vector<Sample> samples = SamplesOf(path);
  // 4000 Hz for 1 s of two busy threads is up to 8000 samples; on a loaded machine the threads
  // get a fraction of a CPU, so only the order of magnitude is asserted.
  ASSERT_GT(samples.size(), 200u);
  std::set<uint32_t> tids;
  for (const Sample& s : samples) {
    EXPECT_EQ(s.pid, static_cast<uint32_t>(target.pid()));  // the child started before -p
    tids.insert(s.tid);
  }
  EXPECT_EQ(tids.size(), 2u);  // main and worker threads, found through /proc
  // Names resolve through the mappings read from /proc/PID/maps.
  auto shares = FunctionShares(path);
  EXPECT_GT(shares["(anonymous namespace)::inline_mix_loop"], 30.0);
  target.Wait();
  std::remove(path.c_str());
}

TEST(RecordEngineTest, AttachesToOneThread) {
  RunningCommand target({kDemo, "1"});
  // The worker thread: the task of the demo that is not its main thread.
  pid_t worker = 0;
  for (pid_t tid : WaitForThreads(target.pid(), 2))
    if (tid != target.pid()) worker = tid;
  ASSERT_NE(worker, 0);
  std::string path = TempPath("engine", "tid.tprof");
  auto r = RunCommand({kTprof, "record", "-e", "cpu-clock", "-t", std::to_string(worker),
                       "--duration", "0.5", "-o", path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<Sample> samples = SamplesOf(path);
  ASSERT_GT(samples.size(), 100u);  // up to 2000 on an idle machine (4000 Hz for 0.5 s)
  for (const Sample& s : samples) ASSERT_EQ(s.tid, static_cast<uint32_t>(worker));
  EXPECT_GT(FunctionShares(path)["(anonymous namespace)::inline_mix_loop"], 90.0);
  target.Wait();
  std::remove(path.c_str());
}

TEST(RecordEngineTest, SystemWideSeesOtherProcesses) {
  RunningCommand busy({kDemo, "1"});
  std::string path = TempPath("engine", "all.tprof");
  auto r = RunCommand({kTprof, "record", "-a", "--duration", "0.5", "-o", path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("sampling 'cpu-clock' instead"), std::string::npos) << r.err;
  std::set<uint32_t> pids;
  for (const Sample& s : SamplesOf(path)) pids.insert(s.pid);
  EXPECT_TRUE(pids.count(static_cast<uint32_t>(busy.pid())));
  busy.Wait();
  std::remove(path.c_str());
}

// -a -- ./prog: every CPU while the command runs (as perf record -a -- cmd), ending with it and
// exiting with its status.
TEST(RecordEngineTest, SystemWideWhileACommandRuns) {
  std::string path = TempPath("engine", "all_cmd.tprof");
  auto start = std::chrono::steady_clock::now();
  auto r = RunCommand({kTprof, "record", "-a", "-e", "cpu-clock", "-o", path, "--", "/bin/sh", "-c",
                       "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; exit 3"});
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_LT(seconds, 30.0);
  std::set<uint32_t> cpus;
  std::vector<Sample> samples = SamplesOf(path);
  ASSERT_GT(samples.size(), 10u) << r.err;
  for (const Sample& s : samples) cpus.insert(s.cpu);
  // The shell's samples are there, and so is the rest of the machine (tprof itself at least).
  std::map<uint32_t, size_t> per_pid;
  for (const Sample& s : samples) ++per_pid[s.pid];
  EXPECT_GE(per_pid.size(), 2u);
  auto by_comm = RunCommand({kTprof, "report", "-i", path, "--sort", "comm"});
  ASSERT_EQ(by_comm.exit_code, 0) << by_comm.err;
  EXPECT_NE(by_comm.out.find(" sh\n"), std::string::npos) << by_comm.out;
  EXPECT_EQ(cpus.size(), static_cast<size_t>(sysconf(_SC_NPROCESSORS_ONLN)))
      << "an event on every CPU";
  std::remove(path.c_str());
}

TEST(RecordEngineTest, DurationEndsALaunchedCommand) {
  std::string path = TempPath("engine", "duration.tprof");
  auto start = std::chrono::steady_clock::now();
  auto r = RunCommand({kTprof, "record", "-e", "cpu-clock", "--duration", "0.5", "-o", path, "--",
                       "/bin/sleep", "30"});
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.exit_code, 128 + SIGTERM) << r.err;
  EXPECT_LT(seconds, 10.0);
  std::remove(path.c_str());
}

TEST(RecordEngineTest, BranchStacksAreRefusedWithTheReason) {
  auto r = RunCommand({kTprof, "record", "-e", "cpu-clock", "-b", "-o",
                       TempPath("engine", "b.tprof"), "--", "/bin/true"});
  if (r.exit_code == 0) GTEST_SKIP() << "this machine records branch stacks";
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("branch stack"), std::string::npos) << r.err;
}

TEST(RecordEngineTest, BadOptionValuesAreUsageErrors) {
  for (std::vector<std::string> args : {std::vector<std::string>{"-m", "3"},
                                        {"--call-graph", "dwarff"},
                                        {"-j", "anyy"},
                                        {"-p", "12x"},
                                        {"-e", "{cpu-clock,page-faults"}}) {
    std::vector<std::string> argv = {kTprof, "record"};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.push_back("--");
    argv.push_back("/bin/true");
    auto r = RunCommand(argv);
    EXPECT_EQ(r.exit_code, 2) << args[0] << " " << args[1] << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
}

}  // namespace
}  // namespace tprof

namespace tprof {
namespace {

// Resolves each sample's function and feeds the window filter, as the per-function report does.
class AttributingVisitor : public RecordVisitor {
 public:
  explicit AttributingVisitor(size_t members) : attributor(members) {}
  void OnMmap(const MmapRecord& r) override { space.OnMmap(r); }
  void OnComm(const CommRecord& r) override { space.OnComm(r); }
  void OnTask(const TaskRecord& r) override { space.OnTask(r); }
  void OnSample(const Sample& s) override {
    std::string f = symbolizer.Resolve(space.Find(s.pid, s.ip), s.ip).function;
    attributor.Add(s, f.substr(0, f.find('(')));
  }
  AddressSpace space;
  ElfSymbolizer symbolizer;
  WindowAttributor attributor;
};

// fault_switch faults its pages in touch_pages and sleeps in sleep_and_spin: windows that start
// and end in one function must credit the faults to the first and the switches to the second.
// The leader samples user mode only (cpu-clock:u): the faults and switches themselves run in the
// kernel, where kernel-mode samples would credit them to [kernel]. The members count everything.
// Runs the test process, and what it starts, on one CPU until the end of the scope. Counters are
// opened per thread and CPU, so a window between two samples of one instance spans whatever the
// thread did on other CPUs meanwhile; how often it migrates depends on the machine's load. On one
// CPU, the windows are what the attribution logic makes of them, whatever the load.
class OneCpu {
 public:
  OneCpu() {
    saved_ok_ = sched_getaffinity(0, sizeof saved_, &saved_) == 0;
    if (!saved_ok_) return;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
      if (CPU_ISSET(cpu, &saved_)) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        sched_setaffinity(0, sizeof one, &one);
        break;
      }
  }
  ~OneCpu() {
    if (saved_ok_) sched_setaffinity(0, sizeof saved_, &saved_);
  }

 private:
  cpu_set_t saved_;
  bool saved_ok_ = false;
};

TEST(PerFunctionMetricsTest, GroupReadDeltasLandInTheFunctionsThatCausedThem) {
  std::string path = TempPath("engine", "perfunction.tprof");
  testing::CommandResult r;
  {
    OneCpu pinned;
    r = RunCommand({kTprof, "record", "-e", "{cpu-clock:u,page-faults,context-switches}:S", "-F",
                    "4000", "-o", path, "--", kFaultSwitch, "20000", "300"});
  }
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto reader = ProfileReader::OpenFile(path);
  ASSERT_TRUE(reader.ok());
  AttributingVisitor visitor(3);
  ASSERT_TRUE(reader->ReadRecords(visitor).ok());
  const auto& functions = visitor.attributor.functions();
  ASSERT_TRUE(functions.count("touch_pages"));
  ASSERT_TRUE(functions.count("sleep_and_spin"));
  double faults = 0, switches = 0;
  for (const auto& [name, f] : functions) {
    faults += f.deltas[1];
    switches += f.deltas[2];
  }
  EXPECT_GT(functions.at("touch_pages").deltas[1], 0.9 * faults);
  // Preemptions, which the machine's load decides, land wherever the workload runs; the 300
  // sleeps are sleep_and_spin's, and only windows that straddle a function change lose some.
  EXPECT_GT(functions.at("sleep_and_spin").deltas[2], 0.8 * 300);
  for (const auto& [name, f] : functions)
    EXPECT_LE(f.deltas[2], functions.at("sleep_and_spin").deltas[2]) << name;
  // Most of the 20000 faults fall in credited windows; the rest straddle function changes.
  EXPECT_GT(functions.at("touch_pages").deltas[1], 15000);
  EXPECT_LE(functions.at("touch_pages").deltas[1], 20100);
  EXPECT_GT(visitor.attributor.windows_discarded(), 0u);
  EXPECT_LT(visitor.attributor.discarded_percent(), 20.0);
  std::cout << "touch_pages credited " << functions.at("touch_pages").deltas[1] << " of " << faults
            << " credited faults; sleep_and_spin " << functions.at("sleep_and_spin").deltas[2]
            << " of " << switches << " switches; discarded windows "
            << visitor.attributor.discarded_percent() << "%\n";
  std::remove(path.c_str());
}

TEST(PerFunctionMetricsTest, BurstSamplingReportsTheModeThatRan) {
  std::string path = TempPath("engine", "burst.tprof");
  auto r = RunCommand({kTprof, "record", "-e", "{cpu-clock,page-faults}:S", "--burst",
                       "10000000,200000", "-o", path, "--", kFaultSwitch, "100", "10"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto reader = ProfileReader::OpenFile(path);
  ASSERT_TRUE(reader.ok());
  if (r.err.find("kernel mode") != std::string::npos) {
    EXPECT_EQ(reader->events()[0].hf_sample_period, 200000u);
  } else {
    EXPECT_NE(r.err.find("fallback mode: sampling every 200000 events"), std::string::npos)
        << r.err;
    EXPECT_EQ(reader->events()[0].hf_sample_period, 0u);
    EXPECT_EQ(reader->events()[0].period_or_frequency, 200000u);
    EXPECT_FALSE(reader->events()[0].use_frequency);
  }
  std::remove(path.c_str());
}

TEST(PerFunctionMetricsTest, MetricsNeedTheirEventsExplicitly) {
  auto r = RunCommand({kTprof, "record", "-M", "l1", "--cpu", "neoverse-n2", "-o",
                       TempPath("engine", "m.tprof"), "--", "/bin/true"});
  if (r.exit_code == 0) GTEST_SKIP() << "this machine counts Neoverse events";
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("cannot open event 'CPU_CYCLES'"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("instead"), std::string::npos) << "no fallback for -M";
  auto bad = RunCommand(
      {kTprof, "record", "-M", "l1", "--cpu", "neoverse-n2", "--burst", "5,10", "--", "/bin/true"});
  EXPECT_EQ(bad.exit_code, 2);
}

}  // namespace
}  // namespace tprof

namespace tprof {
namespace {

// A one-page ring buffer at a high rate loses samples: the summary says how many, and the
// profile's lost records carry the same count.
TEST(RecordEngineTest, LostSamplesAreCountedAndRecorded) {
  std::string path = TempPath("engine", "lost.tprof");
  auto r = RunCommand({kTprof, "record", "-e", "cpu-clock", "-F", "20000", "-g", "-m", "1", "-o",
                       path, "--", kDemo, "0.3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto reader = ProfileReader::OpenFile(path);
  ASSERT_TRUE(reader.ok());
  CollectingVisitor visitor;
  ASSERT_TRUE(reader->ReadRecords(visitor).ok());
  uint64_t lost = 0;
  for (const auto& record : visitor.records)
    if (const LostRecord* l = std::get_if<LostRecord>(&record)) lost += l->lost;
  if (lost == 0) GTEST_SKIP() << "the reader kept up even with one page";
  EXPECT_NE(r.err.find(std::to_string(lost) + " lost ("), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("raise -m"), std::string::npos) << r.err;
  std::remove(path.c_str());
}

}  // namespace
}  // namespace tprof
