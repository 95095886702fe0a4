// A user who is not root: `tprof record` with its defaults, then `tprof report`, run as nobody
// at each kernel.perf_event_paranoid level from -1 to 3 (the test, as root, sets each and puts
// the machine's back). What each level gives is printed; asserted: -1 to 1 sample the kernel
// too; at 2 (the kernel's default) the clock falls back to user space only, says so in one line,
// and the report reads it; 3 (Debian's "no unprivileged use at all", 2 on an upstream kernel)
// either records as 2 does or fails in one line that says why. An event asked for with :k is
// never turned into :u; --off-cpu, which needs the kernel's context switches, says so.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "test/support/metric_oracle_run.h"
#include "test/support/run_command.h"
#include "test/support/test_programs.h"

namespace tprof {
namespace unprivileged {
namespace {

using testing::RunCommand;

const char* kParanoid = "/proc/sys/kernel/perf_event_paranoid";

std::string ReadParanoid() {
  std::ifstream in(kParanoid);
  std::string level;
  in >> level;
  return level;
}

bool WriteParanoid(const std::string& level) {
  std::ofstream out(kParanoid);
  out << level << '\n';
  out.flush();
  return static_cast<bool>(out) && ReadParanoid() == level;
}

// Runs `args` as nobody (setpriv: uid and gid 65534, no supplementary groups).
testing::CommandResult AsNobody(const std::vector<std::string>& args) {
  std::vector<std::string> command = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534",
                                      "--clear-groups", "--"};
  command.insert(command.end(), args.begin(), args.end());
  return RunCommand(command);
}

class Unprivileged : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root: it sets the sysctl and becomes nobody";
    if (::access("/usr/bin/setpriv", X_OK) != 0) GTEST_SKIP() << "no setpriv (util-linux)";
    original_ = ReadParanoid();
    ASSERT_FALSE(original_.empty());
    // nobody cannot reach a build tree under a private directory: tprof is copied to a scratch
    // directory everyone may use, and the workload is the shell.
    std::string pattern =
        (std::filesystem::temp_directory_path() / "tprof-unprivileged-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    ASSERT_EQ(::chmod(dir_.c_str(), 0777), 0);
    tprof_ = dir_ + "/tprof";
    std::filesystem::copy_file(kTprof, tprof_);
    ASSERT_EQ(::chmod(tprof_.c_str(), 0755), 0);
  }
  void TearDown() override {
    if (!original_.empty()) WriteParanoid(original_);
    std::error_code ignored;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ignored);
  }

  // Some 0.2 s of the shell counting.
  std::vector<std::string> Record(const std::string& profile,
                                  const std::vector<std::string>& options = {}) const {
    std::vector<std::string> args = {tprof_, "record", "-o", profile};
    args.insert(args.end(), options.begin(), options.end());
    for (const char* a :
         {"--", "/bin/sh", "-c", "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done"})
      args.push_back(a);
    return args;
  }

  // nobody runs the step-over workload from the scratch directory, like tprof; empty on failure.
  std::string CopyStepOverWorkload() const {
    const std::string workload = dir_ + "/step_over";
    std::error_code error;
    std::filesystem::copy_file(STEP_OVER_BINARY, workload, error);
    if (error || ::chmod(workload.c_str(), 0755) != 0) return "";
    return workload;
  }

  std::string original_, dir_, tprof_;
};

TEST_F(Unprivileged, DefaultsRecordAndReportAtEveryParanoidLevel) {
  const std::string fallback_note = "sampling user space only (task-clock:u)";
  for (const std::string level : {"-1", "0", "1", "2", "3"}) {
    ASSERT_TRUE(WriteParanoid(level)) << "cannot set " << kParanoid << " to " << level;
    const std::string profile = dir_ + "/p" + level + ".tprof";
    auto recorded = AsNobody(Record(profile));
    const bool fell_back = recorded.err.find(fallback_note) != std::string::npos;
    std::string summary = "paranoid " + level + ": record exit " +
                          std::to_string(recorded.exit_code) +
                          (fell_back ? ", user space only" : "");
    if (recorded.exit_code == 0) {
      auto report = AsNobody({tprof_, "report", "-i", profile, "-v"});
      EXPECT_EQ(report.exit_code, 0) << level << ": " << report.err;
      EXPECT_NE(report.out.find("# event: task-clock"), std::string::npos) << report.out;
      EXPECT_NE(report.out.find("sh"), std::string::npos) << report.out;
      if (fell_back) {
        EXPECT_NE(report.out.find("# event: task-clock:u"), std::string::npos) << report.out;
      }
      summary += ", report exit " + std::to_string(report.exit_code);
    } else {
      summary += ": " + recorded.err.substr(0, recorded.err.find('\n'));
    }
    std::printf("%s\n", summary.c_str());
    if (level == "-1" || level == "0" || level == "1") {
      EXPECT_EQ(recorded.exit_code, 0) << level << ": " << recorded.err;
      EXPECT_FALSE(fell_back) << level << ": " << recorded.err;
    } else if (level == "2") {
      EXPECT_EQ(recorded.exit_code, 0) << recorded.err;
      EXPECT_TRUE(fell_back) << recorded.err;
      // The note is one line and says what is not seen.
      const size_t note = recorded.err.find(fallback_note);
      const std::string line =
          recorded.err.substr(recorded.err.rfind('\n', note) + 1,
                              recorded.err.find('\n', note) - recorded.err.rfind('\n', note) - 1);
      EXPECT_NE(line.find("kernel.perf_event_paranoid is 2"), std::string::npos) << line;
      EXPECT_NE(line.find("kernel work is not seen"), std::string::npos) << line;
    } else {
      // Debian's 3 refuses every unprivileged event: a clear error; upstream's 3 is a 2.
      if (recorded.exit_code != 0) {
        EXPECT_NE(recorded.err.find("permission denied"), std::string::npos) << recorded.err;
        EXPECT_NE(recorded.err.find("perf_event_paranoid is 3"), std::string::npos) << recorded.err;
      } else {
        EXPECT_TRUE(fell_back) << recorded.err;
      }
    }
  }
}

// Off-CPU time rests on the kernel's context switches: at 2 it cannot be recorded, and the one
// line says what is missing and what still works.
TEST_F(Unprivileged, OffCpuSaysWhatItCannotSee) {
  ASSERT_TRUE(WriteParanoid("2"));
  auto recorded = AsNobody(Record(dir_ + "/o.tprof", {"--off-cpu"}));
  EXPECT_NE(recorded.exit_code, 0) << recorded.err;
  EXPECT_NE(recorded.err.find("--off-cpu: where a thread leaves the CPU"), std::string::npos)
      << recorded.err;
  EXPECT_NE(recorded.err.find("kernel.perf_event_paranoid is 2"), std::string::npos)
      << recorded.err;
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/o.tprof"));
}

TEST_F(Unprivileged, AKernelEventAskedForIsNotTurnedIntoAUserOne) {
  ASSERT_TRUE(WriteParanoid("2"));
  auto recorded = AsNobody(Record(dir_ + "/k.tprof", {"-e", "task-clock:k"}));
  EXPECT_NE(recorded.exit_code, 0) << recorded.err;
  EXPECT_NE(recorded.err.find("permission denied"), std::string::npos) << recorded.err;
  EXPECT_EQ(recorded.err.find("user space only"), std::string::npos) << recorded.err;
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/k.tprof"));
}

// What a user who is not root records is led by task-clock:u, whose samples leave out the
// kernel's time while its count keeps it. The window method's step-over bias must still be named
// (MetricOracle.WindowsSteppingOverShortCallsAreNamed as root): seen before the methods were held
// against each other behind such a clock, step_over_work read 1.877 ±0.135 faults/ms with no
// reason, against a truth of 0, and 0.000 sampled on its own beside it.
TEST_F(Unprivileged, WindowsSteppingOverShortCallsAreNamedForAUserWhoIsNotRoot) {
  ASSERT_TRUE(WriteParanoid("2"));
  const std::string workload = CopyStepOverWorkload();
  ASSERT_FALSE(workload.empty());
  const std::string profile = dir_ + "/step.tprof";
  auto recorded = oracle::RecordStepOver(AsNobody, tprof_, workload, profile, {});
  ASSERT_TRUE(recorded.has_value());
  const std::string f = "step_over_work";
  const oracle::Measured& g = recorded->grouped;
  std::printf("[g] as nobody: %s\n", oracle::Shown(f, g, recorded->truth).c_str());
  ASSERT_TRUE(recorded->has_sampled) << "the faults were not also sampled on their own";
  std::printf("[s] as nobody: %s\n", oracle::Shown(f, recorded->sampled, recorded->truth).c_str());
  ASSERT_TRUE(g.value && g.low && g.high) << oracle::Shown(f, g, recorded->truth);
  const bool holds = *g.low <= recorded->truth && recorded->truth <= *g.high;
  EXPECT_TRUE(holds || !g.bias.empty() || g.low_confidence)
      << "a confident wrong value: " << oracle::Shown(f, g, recorded->truth);
}

// A clock sampled in user space only beside another event reads itself (a group of one), and what
// its samples left out shows the same in --json (groups[].clock_left_out) and in the -v header.
// By the workload's design its touching phase is kernel time the clock's user-only samples cannot
// see (first touches of fresh pages, and the mmap and munmap around them): at least half that
// phase's time must be in what the reads say was left out, and no more than the reads counted.
TEST_F(Unprivileged, AUserOnlyClocksLeftOutTimeIsTheSameInJsonAndText) {
  ASSERT_TRUE(WriteParanoid("2"));
  const std::string workload = CopyStepOverWorkload();
  ASSERT_FALSE(workload.empty());
  const std::string profile = dir_ + "/clock.tprof";
  auto recorded = AsNobody({tprof_, "record", "-q", "-e", "task-clock,page-faults", "-o", profile,
                            "--", workload, "1", "100"});
  ASSERT_EQ(recorded.exit_code, 0) << recorded.err;
  long work_faults = -1, touch_faults = -1;
  double work_ns = 0, touch_ns = 0;
  ASSERT_EQ(
      std::sscanf(recorded.out.c_str(), "work_faults %ld work_ns %lf touch_faults %ld touch_ns %lf",
                  &work_faults, &work_ns, &touch_faults, &touch_ns),
      4)
      << recorded.out;
  auto json = AsNobody({tprof_, "report", "-i", profile, "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json j = nlohmann::json::parse(json.out);
  ASSERT_EQ(j["groups"].size(), 1u) << json.out.substr(0, 2000);
  const nlohmann::json& group = j["groups"][0];
  ASSERT_EQ(group["members"], nlohmann::json::array({"task-clock:u"}));
  const nlohmann::json& left_out = group["clock_left_out"];
  ASSERT_TRUE(left_out.is_object()) << group.dump();
  EXPECT_EQ(left_out["cause"], "other mode");
  EXPECT_TRUE(left_out["beyond_lateness"].get<bool>());
  const double ns = left_out["ns"].get<double>();
  EXPECT_GE(ns, 0.5 * touch_ns) << group.dump() << " touch_ns " << touch_ns;
  EXPECT_LE(ns, group["read_totals"]["task-clock:u"].get<double>()) << group.dump();
  auto text = AsNobody({tprof_, "report", "-i", profile, "-v"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  char said[64];
  std::snprintf(said, sizeof said, "task-clock:u: its samples leave out %.4g ms", ns / 1e6);
  EXPECT_NE(text.out.find(said), std::string::npos) << said << "\n" << text.out.substr(0, 1500);
}

}  // namespace
}  // namespace unprivileged
}  // namespace tprof
