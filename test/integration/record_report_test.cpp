// End to end on this machine: tprof record on the demo workload, then the profile read back.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "core/analysis/function_profile.h"
#include "core/format/profile_reader.h"
#include "symbolize/symbolizer.h"
#include "test/support/record_generator.h"
#include "test/support/run_command.h"
#include "test/support/test_programs.h"

namespace tprof {
namespace {

using testing::RunCommand;

struct ThreadSeen : RecordVisitor {
  std::set<uint32_t> pids, tids;
  void OnSample(const Sample& s) override {
    pids.insert(s.pid);
    tids.insert(s.tid);
  }
};

class DemoRecording : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    path_ = new std::string(TempPath("it", "demo.tprof"));
    result_ = new testing::CommandResult(
        RunCommand({kTprof, "record", "-g", "-F", "2000", "-o", *path_, "--", kDemo, "0.5"}));
  }
  static void TearDownTestSuite() {
    std::remove(path_->c_str());
    delete path_;
    delete result_;
  }
  static std::string* path_;
  static testing::CommandResult* result_;
};
std::string* DemoRecording::path_;
testing::CommandResult* DemoRecording::result_;

TEST_F(DemoRecording, RecordSucceedsAndSaysWhatItWrote) {
  ASSERT_EQ(result_->exit_code, 0) << result_->err;
  EXPECT_NE(result_->out.find("demo done"), std::string::npos);
  EXPECT_NE(result_->err.find("samples"), std::string::npos) << result_->err;
  EXPECT_EQ(::access((*path_ + ".partial").c_str(), F_OK), -1);
}

// The demo spends a fixed amount of each thread's CPU time in each hot function (see
// test/workloads/demo.cpp): 1/6 each for compute_kernel, pointer_chase, branchy_loop and
// child_spin, 2/6 for inline_mix_loop. At 2 kHz over ~3 s of CPU there are ~6000 samples, so the
// sampling error of a 1/6 share is about 0.5 points; start-up, page faults and the clock reads
// in the loops take a few percent more. Three points of tolerance covers both.
TEST_F(DemoRecording, HotFunctionsGetTheirDesignedShares) {
  ASSERT_EQ(result_->exit_code, 0) << result_->err;
  auto reader = ProfileReader::OpenFile(*path_);
  ASSERT_TRUE(reader.ok()) << reader.error().message();
  ElfSymbolizer symbolizer;
  // The designed shares are the noinline functions', whose loops are inlined lambdas.
  FunctionProfileBuilder builder(reader->events(), symbolizer, InlineMode::kPhysical);
  auto summary = reader->ReadRecords(builder);
  ASSERT_TRUE(summary.ok());
  EXPECT_TRUE(summary->complete);
  FunctionProfile profile = builder.Finish();
  ASSERT_EQ(profile.events.size(), 1u);
  ASSERT_GT(profile.total_samples[0], 3000u);
  // Shares of the five functions' own total: setting up the demo (64 MiB zeroed and faulted in)
  // takes 5-15% of the samples depending on the machine's page faults, which is not the split
  // the demo designs; the five together still hold nearly everything.
  const char* designed[] = {"compute_kernel", "pointer_chase", "branchy_loop", "child_spin",
                            "inline_mix_loop"};
  std::map<std::string, double> period;
  double designed_total = 0;
  for (const FunctionRow& row : profile.rows) {
    std::string name = row.function.substr(0, row.function.rfind('('));
    period[name] += static_cast<double>(row.self_period[0]);
    for (const char* d : designed)
      if (name == std::string("(anonymous namespace)::") + d)
        designed_total += static_cast<double>(row.self_period[0]);
  }
  EXPECT_GT(designed_total, 0.8 * static_cast<double>(profile.total_period[0]));
  std::map<std::string, double> share;
  for (const auto& [name, p] : period) share[name] = 100.0 * p / designed_total;
  const double sixth = 100.0 / 6;
  EXPECT_NEAR(share["(anonymous namespace)::compute_kernel"], sixth, 3.0);
  EXPECT_NEAR(share["(anonymous namespace)::pointer_chase"], sixth, 3.0);
  EXPECT_NEAR(share["(anonymous namespace)::branchy_loop"], sixth, 3.0);
  EXPECT_NEAR(share["(anonymous namespace)::child_spin"], sixth, 3.0);
  EXPECT_NEAR(share["(anonymous namespace)::inline_mix_loop"], 2 * sixth, 3.0);
}

TEST_F(DemoRecording, BothThreadsAndTheChildProcessAreSampled) {
  ASSERT_EQ(result_->exit_code, 0) << result_->err;
  auto reader = ProfileReader::OpenFile(*path_);
  ASSERT_TRUE(reader.ok());
  ThreadSeen seen;
  ASSERT_TRUE(reader->ReadRecords(seen).ok());
  EXPECT_EQ(seen.pids.size(), 2u);  // the demo and its child
  EXPECT_GE(seen.tids.size(), 3u);  // main thread, worker thread, child
}

TEST_F(DemoRecording, ReportListsTheHotFunctionsFirst) {
  ASSERT_EQ(result_->exit_code, 0) << result_->err;
  auto report = RunCommand({kTprof, "report", "-i", *path_, "--limit", "5", "--no-inline"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  for (const char* name :
       {"compute_kernel", "pointer_chase", "branchy_loop", "child_spin", "inline_mix_loop"})
    EXPECT_NE(report.out.find(name), std::string::npos) << name << " missing from\n" << report.out;
  EXPECT_LT(report.out.find("inline_mix_loop"), report.out.find("compute_kernel"));
}

TEST_F(DemoRecording, MetadataDescribesTheRecording) {
  auto reader = ProfileReader::OpenFile(*path_);
  ASSERT_TRUE(reader.ok());
  const Metadata& m = reader->metadata();
  EXPECT_EQ(m.command_line, (std::vector<std::string>{kDemo, "0.5"}));
  EXPECT_FALSE(m.hostname.empty());
  EXPECT_FALSE(m.kernel_release.empty());
  EXPECT_FALSE(m.architecture.empty());
  EXPECT_GT(m.duration_ns, 500000000u);
  EXPECT_GT(m.start_time_unix_ns, 1600000000ull * 1000000000ull);
  ASSERT_EQ(reader->events().size(), 1u);
  EXPECT_TRUE(reader->events()[0].sample_type != 0);
}

TEST(RecordTest, ExistingOutputIsKeptAsOld) {
  std::string path = TempPath("it", "old.tprof");
  ASSERT_EQ(
      RunCommand({kTprof, "record", "-e", "cpu-clock", "-o", path, "--", "/bin/true"}).exit_code,
      0);
  ASSERT_EQ(
      RunCommand({kTprof, "record", "-e", "cpu-clock", "-o", path, "--", "/bin/true"}).exit_code,
      0);
  EXPECT_EQ(::access(path.c_str(), F_OK), 0);
  EXPECT_EQ(::access((path + ".old").c_str(), F_OK), 0);
  std::remove(path.c_str());
  std::remove((path + ".old").c_str());
}

// An output that is not a regular file is never replaced (renamed over, or kept as NAME.old): a
// character device (made like /dev/null) and a FIFO are written through once the profile is
// complete, a link's target is written and the link stays, a directory is refused. Before, the
// device became NAME.old and a regular file took its place; record and import alike.
TEST(RecordTest, OutputsThatAreNotRegularFilesAreWrittenThroughNeverReplaced) {
  const std::string dir = TempPath("it", "outputs");
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(std::filesystem::create_directories(dir));
  const std::string device = dir + "/null", fifo = dir + "/fifo", link = dir + "/link",
                    real = dir + "/real.tprof";
  ASSERT_EQ(::mknod(device.c_str(), S_IFCHR | 0666, makedev(1, 3)), 0) << "mknod (needs root)";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  ASSERT_EQ(::symlink("real.tprof", link.c_str()), 0);
  auto is_device = [&] {
    struct stat st {};
    return ::lstat(device.c_str(), &st) == 0 && S_ISCHR(st.st_mode);
  };
  auto record = [&](const std::string& out) {
    return RunCommand({kTprof, "record", "-q", "-e", "task-clock", "-o", out, "--", "/bin/true"});
  };
  for (int i = 0; i < 2; ++i) EXPECT_EQ(record(device).exit_code, 0);
  EXPECT_TRUE(is_device());
  EXPECT_NE(::access((device + ".old").c_str(), F_OK), 0);
  EXPECT_NE(::access((device + ".partial").c_str(), F_OK), 0);
  // The FIFO: a reader takes the whole profile, which reads back as one.
  auto drained = RunCommand({"/bin/sh", "-c",
                             "cat " + fifo + " > " + dir + "/drained & " + kTprof +
                                 " record -q -e task-clock -o " + fifo + " -- /bin/true; wait"});
  EXPECT_EQ(drained.exit_code, 0) << drained.err;
  EXPECT_EQ(RunCommand({kTprof, "report", "-i", dir + "/drained"}).exit_code, 0);
  struct stat st {};
  EXPECT_TRUE(::lstat(fifo.c_str(), &st) == 0 && S_ISFIFO(st.st_mode));
  // The link: its target written (twice: the target keeps its .old), the link a link.
  for (int i = 0; i < 2; ++i) EXPECT_EQ(record(link).exit_code, 0);
  EXPECT_TRUE(::lstat(link.c_str(), &st) == 0 && S_ISLNK(st.st_mode));
  EXPECT_EQ(::access(real.c_str(), F_OK), 0);
  EXPECT_EQ(::access((real + ".old").c_str(), F_OK), 0);
  EXPECT_NE(::access((link + ".old").c_str(), F_OK), 0);
  // A directory is refused with one line.
  auto refused = record(dir);
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("is a directory"), std::string::npos) << refused.err;
  // import writes through the device too.
  EXPECT_EQ(RunCommand({kTprof, "import", "-i", real, "-o", device}).exit_code, 0);
  EXPECT_TRUE(is_device());
  EXPECT_NE(::access((device + ".old").c_str(), F_OK), 0);
  std::filesystem::remove_all(dir);
}

TEST(RecordTest, CyclesFallsBackToTaskClockWithOneLine) {
  for (std::vector<std::string> events :
       {std::vector<std::string>{}, {"-e", "cycles"}, {"-e", "cycles:u"}}) {
    std::string path = TempPath("it", "fallback.tprof");
    std::vector<std::string> argv = {kTprof, "record", "-o", path};
    argv.insert(argv.end(), events.begin(), events.end());
    argv.insert(argv.end(), {"--", "/bin/true"});
    auto r = RunCommand(argv);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto reader = ProfileReader::OpenFile(path);
    ASSERT_TRUE(reader.ok());
    if (reader->events()[0].name.rfind("cycles", 0) == 0) GTEST_SKIP() << "this machine has a PMU";
    std::string expected = events.empty() || events[1] == "cycles" ? "task-clock" : "task-clock:u";
    EXPECT_EQ(reader->events()[0].name, expected);
    EXPECT_EQ(reader->events()[0].exclude_kernel, expected == "task-clock:u");
    EXPECT_NE(r.err.find("sampling '" + expected + "' instead"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("cannot open event 'cycles"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 2) << r.err;  // fallback + summary
    std::remove(path.c_str());
  }
}

TEST(RecordTest, MappingsCarryBuildIds) {
  std::string path = TempPath("it", "buildid.tprof");
  ASSERT_EQ(
      RunCommand({kTprof, "record", "-e", "cpu-clock", "-o", path, "--", kDemo, "0.05"}).exit_code,
      0);
  auto reader = ProfileReader::OpenFile(path);
  ASSERT_TRUE(reader.ok());
  testing::CollectingVisitor visitor;
  ASSERT_TRUE(reader->ReadRecords(visitor).ok());
  // The binary's build-id, found independently: the 20-byte descriptor after the "GNU\0" name
  // of its .note.gnu.build-id (the first GNU note of a gcc-linked executable on Debian 12).
  std::string binary = testing::ReadWholeFile(kDemo);
  size_t note = binary.find(std::string("\x04\0\0\0\x14\0\0\0\x03\0\0\0GNU\0", 16));
  ASSERT_NE(note, std::string::npos);
  std::string expected = binary.substr(note + 16, 20);  // after namesz, descsz, type, "GNU"
  bool found = false;
  for (const auto& r : visitor.records)
    if (const MmapRecord* m = std::get_if<MmapRecord>(&r); m && m->filename == kDemo) {
      EXPECT_EQ(m->build_id, expected);
      found = true;
    }
  EXPECT_TRUE(found);
  std::remove(path.c_str());
}

TEST(RecordTest, ExplicitHardwareEventFailsWithTheReason) {
  auto r = RunCommand({kTprof, "record", "-e", "instructions", "-o", TempPath("it", "hw.tprof"),
                       "--", "/bin/true"});
  if (r.exit_code == 0) GTEST_SKIP() << "this machine has a PMU";
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("'instructions'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("ENOENT"), std::string::npos) << r.err;
}

TEST(RecordTest, WorkloadExitStatusIsPassedOn) {
  std::string path = TempPath("it", "status.tprof");
  auto r = RunCommand(
      {kTprof, "record", "-e", "cpu-clock", "-o", path, "--", "/bin/sh", "-c", "exit 7"});
  EXPECT_EQ(r.exit_code, 7) << r.err;
  auto reader = ProfileReader::OpenFile(path);
  EXPECT_TRUE(reader.ok());  // the profile is still complete
  std::remove(path.c_str());
}

// The program never ran, so there is no profile: no file, not even a .partial one.
TEST(RecordTest, MissingProgramIsAOneLineError) {
  const std::string path = TempPath("it", "missing.tprof");
  auto r =
      RunCommand({kTprof, "record", "-e", "cpu-clock", "-o", path, "--", "/nonexistent/program"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("cannot run '/nonexistent/program'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("nothing was recorded"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(::access(path.c_str(), F_OK), 0);
  EXPECT_NE(::access((path + ".partial").c_str(), F_OK), 0);
  std::remove((path + ".partial").c_str());
}

}  // namespace
}  // namespace tprof

namespace tprof {
namespace {

// Self-contained profiles: the symbols embedded at the end of recording name every sampled
// address, so the report is the same after the binary is gone.
TEST(RecordTest, ReportIsIdenticalAfterTheBinaryIsMoved) {
  std::string binary = TempPath("it", "demo_copy");
  std::string moved = binary + ".moved";
  ASSERT_EQ(RunCommand({"/bin/cp", kDemo, binary}).exit_code, 0);
  std::string path = TempPath("it", "moved.tprof");
  auto r = RunCommand({kTprof, "record", "-g", "-e", "cpu-clock", "-o", path, "--", binary, "0.2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto before = RunCommand({kTprof, "report", "-i", path, "--no-inline"});
  ASSERT_EQ(before.exit_code, 0) << before.err;
  ASSERT_EQ(std::rename(binary.c_str(), moved.c_str()), 0);
  auto after = RunCommand({kTprof, "report", "-i", path, "--no-inline"});
  ASSERT_EQ(after.exit_code, 0) << after.err;
  EXPECT_EQ(before.out, after.out);
  // compute_kernel's loop is a lambda inlined into it: --no-inline makes it compute_kernel's row.
  EXPECT_NE(after.out.find("compute_kernel"), std::string::npos);
  std::remove(moved.c_str());
  std::remove(path.c_str());
}

}  // namespace
}  // namespace tprof

namespace tprof {
namespace {

// A .tprof damaged in the middle (a bad sector, a stray write: one byte flipped at 60 %): the
// report shows the samples of every chunk before the damage, one line names the chunk and what
// was lost, and the exit status is 4. It was an error that lost every sample.
TEST(DamagedProfile, IsReadUpToTheDamagedChunkWithStatusFour) {
  const std::string dir = ::testing::TempDir() + "/tprof_damaged_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string whole = dir + "/whole.tprof", damaged = dir + "/damaged.tprof";
  auto recorded =
      testing::RunCommand({kTprof, "record", "-q", "-e", "task-clock", "-o", whole, "--", kDemo});
  ASSERT_EQ(recorded.exit_code, 0) << recorded.err;
  std::string bytes = testing::ReadWholeFile(whole);
  bytes[bytes.size() * 6 / 10] ^= 0x55;
  {
    std::ofstream out(damaged, std::ios::binary);
    out << bytes;
  }
  auto full = testing::RunCommand({kTprof, "report", "-i", whole, "--json"});
  ASSERT_EQ(full.exit_code, 0) << full.err;
  auto report = testing::RunCommand({kTprof, "report", "-i", damaged, "--json"});
  EXPECT_EQ(report.exit_code, 4) << report.err;
  EXPECT_NE(report.err.find("checksum mismatch (the file is damaged from here)"), std::string::npos)
      << report.err;
  EXPECT_NE(report.err.find("complete chunks ("), std::string::npos) << report.err;
  const double all = nlohmann::json::parse(full.out)["events"][0]["samples"].get<double>();
  const double read = nlohmann::json::parse(report.out)["events"][0]["samples"].get<double>();
  // Chunks are written as the samples come: most of those before 60 % of the file are there.
  EXPECT_GT(read, 0.3 * all) << read << " of " << all;
  EXPECT_LT(read, all);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tprof
