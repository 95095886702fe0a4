// tprof record -g where the samples land in libc (issue 58). Debian's libc is built without frame
// pointers: a frame-pointer walk that starts in a libc function (nanosleep, read, a futex wait,
// memset, memcpy, clock_gettime and the vDSO under it) reads the frame of the function that
// called into libc as if it were libc's own, and so skips that caller (main;clock_nanosleep
// where the program is in main;nap_sleep;__nanosleep;clock_nanosleep), or, where libc uses rbp
// as a register of its own, loses the stack altogether. `--call-graph dwarf` walks the same
// stacks with the binaries' CFI. The workload (libc_leaves.c) spends its time in such leaves,
// each phase a function of its own called from main; it is recorded with -g and with
// --call-graph dwarf, on the CPU and off it, and the two recordings' stacks must agree.
//
// The comparison (test/support/leaf_stacks.h, which the arm lab's test shares): each recording is
// read as the set of its distinct stacks of the main thread, user frames from main to the leaf,
// each weighted by its period, and the share of either's period whose stack the other has must
// reach 99 % both ways. Off the CPU only the waits count, not the intervals a thread was
// preempted (report --off-cpu-reasons' off-cpu:preempted, subtracted stack by stack): a third of
// the off-CPU time beside a build on a 2-core VM, wherever the scheduler put it; the designed
// waits are the same 30 in every run, at the same three stacks.
//
// The on-CPU phases run for a fixed amount of their own CPU time, so a loaded machine gives as
// many samples, only later. The measure's own noise (two dwarf recordings, TwoDwarfRecordings-
// Agree): 99.7 to 99.9 % on the CPU (what differs is a few samples each in the dynamic loader at
// start, 0.03 % apiece) and 99.98 to 100 % off it, on a 2-core VM beside a build.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "test/support/leaf_stacks.h"
#include "test/support/run_command.h"
#include "test/support/test_programs.h"

namespace tprof {
namespace {

using testing::RunCommand;
const std::string kWorkload = LIBC_LEAVES_BINARY;
const std::string kSignalWorkload = SIGNAL_LEAF_BINARY;

using leaf_stacks::Agreement;
using leaf_stacks::Disagreement;
using leaf_stacks::ExpectAgreement;
using leaf_stacks::kAgreement;
using leaf_stacks::kOffCpuPhases;
using leaf_stacks::kOnCpuPhases;
using leaf_stacks::kPhaseShare;
using leaf_stacks::Largest;
using leaf_stacks::Percent;
using leaf_stacks::PhaseShare;
using leaf_stacks::Stacks;

// The folded stacks of a recording's event (its first, unless `options` choose another).
std::string Folded(const std::string& profile, const std::vector<std::string>& options) {
  std::vector<std::string> argv = {kTprof,        "report",          "-i", profile, "--folded",
                                   "--no-inline", "--folded-prefix", "tid"};
  argv.insert(argv.end(), options.begin(), options.end());
  auto r = RunCommand(argv);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.out;
}

// The recording's first event: the on-CPU clock (cycles, or task-clock where the machine has no
// PMU to count cycles).
Stacks OnCpuStacks(const std::string& profile) {
  return leaf_stacks::OnCpuStacksOf(Folded(profile, {}));
}

// The off-CPU time of a recording made with --off-cpu, less the intervals it was preempted.
Stacks WaitStacks(const std::string& profile) {
  return leaf_stacks::WaitStacksOf(
      Folded(profile, {"--event", "off-cpu"}),
      Folded(profile, {"--off-cpu-reasons", "--event", "off-cpu:preempted"}));
}

class LeafFramesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = TempPath("leaf_frames", ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // A recording of the workload with `options` (the call-graph mode, --off-cpu) and the default
  // event.
  std::string Record(const std::string& name, std::vector<std::string> options,
                     const std::string& workload = kWorkload) {
    const std::string profile = dir_ + "/" + name + ".tprof";
    std::vector<std::string> argv = {kTprof, "record", "-q"};
    argv.insert(argv.end(), options.begin(), options.end());
    argv.insert(argv.end(), {"-o", profile, "--", workload});
    auto r = RunCommand(argv);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return profile;
  }

  std::string dir_;
};

TEST_F(LeafFramesTest, OnCpuFramePointerStacksMatchDwarf) {
  const Stacks fp = OnCpuStacks(Record("fp", {"-g"}));
  const Stacks dwarf = OnCpuStacks(Record("dwarf", {"--call-graph", "dwarf"}));
  ExpectAgreement(fp, "-g", dwarf, "dwarf", kOnCpuPhases, "on-CPU");
}

TEST_F(LeafFramesTest, OffCpuFramePointerStacksMatchDwarf) {
  const Stacks fp = WaitStacks(Record("fp", {"--off-cpu", "-g"}));
  const Stacks dwarf = WaitStacks(Record("dwarf", {"--off-cpu", "--call-graph", "dwarf"}));
  ExpectAgreement(fp, "-g", dwarf, "dwarf", kOffCpuPhases, "off-CPU waits");
}

// The measure's own noise: two recordings unwound alike agree, on the CPU and off it, beyond what
// the tests above ask of -g.
TEST_F(LeafFramesTest, TwoDwarfRecordingsAgree) {
  const std::string first = Record("dwarf1", {"--off-cpu", "--call-graph", "dwarf"});
  const std::string second = Record("dwarf2", {"--off-cpu", "--call-graph", "dwarf"});
  ExpectAgreement(OnCpuStacks(first), "dwarf", OnCpuStacks(second), "dwarf again", kOnCpuPhases,
                  "on-CPU, dwarf twice");
  ExpectAgreement(WaitStacks(first), "dwarf", WaitStacks(second), "dwarf again", kOffCpuPhases,
                  "off-CPU waits, dwarf twice");
}

// The workload does put the frame-pointer walk to the test: the kernel's plain frame-pointer
// chain (--call-graph fp,0: no repair) misses the phases' frames, on the CPU and off it. Where it
// does not (a libc built with frame pointers), the tests above prove nothing.
TEST_F(LeafFramesTest, PlainFramePointerChainsMissTheCallers) {
  const std::string plain = Record("plain", {"--off-cpu", "--call-graph", "fp,0"});
  const std::string dwarf = Record("dwarf", {"--off-cpu", "--call-graph", "dwarf"});
  const std::vector<std::tuple<std::string, Stacks, Stacks, std::vector<std::string>>> events = {
      {"on-CPU", OnCpuStacks(plain), OnCpuStacks(dwarf), kOnCpuPhases},
      {"off-CPU waits", WaitStacks(plain), WaitStacks(dwarf), kOffCpuPhases}};
  for (const auto& [what, fp, reference, phases] : events) {
    const double agreement = Agreement(reference, fp);
    std::printf("%s: %s of dwarf's period in stacks fp,0 has\n", what.c_str(),
                Percent(agreement).c_str());
    EXPECT_LT(agreement, 0.9) << what << ": the plain frame-pointer chains agree with dwarf's; "
                              << "is this libc built with frame pointers?\n"
                              << Disagreement(reference, "dwarf", fp, "fp,0");
    for (const std::string& phase : phases) {
      std::printf("%s: main;%s: %s of fp,0, %s of dwarf\n", what.c_str(), phase.c_str(),
                  Percent(PhaseShare(fp, phase)).c_str(),
                  Percent(PhaseShare(reference, phase)).c_str());
      EXPECT_GE(PhaseShare(reference, phase), kPhaseShare) << what << ": main;" << phase;
    }
  }
}

// A sample in a frameless leaf (memset) under a signal handler (signal_leaf.c): the handler's
// frame lies above the kernel's signal frame, which is larger than -g's 1 KiB copy on x86-64 with
// AVX, so the walk cannot reach the frame the chain holds. Such a stack must come out whole
// (main;spin;...;__restore_rt;on_prof;in_handler;memset) or be among the chains the recording says
// it kept as recorded: never a stack without in_handler counted as mended or right. A copy large
// enough (fp,4096) gives them whole. On this VM -g keeps all ~900 as recorded and says so; fp,4096
// gives all whole.
TEST_F(LeafFramesTest, ASignalHandlersLeafIsWholeOrCountedAsKept) {
  constexpr double kPeriodNs = 250000;  // -c: every sample's period
  for (const std::string copy : {"fp,1024", "fp,4096"}) {
    const std::string profile =
        Record("signal-" + copy, {"-e", "task-clock", "-c", "250000", "--call-graph", copy},
               kSignalWorkload);
    const Stacks stacks = OnCpuStacks(profile);
    double in_memset = 0, whole = 0;
    for (const auto& [stack, period] : stacks.period) {
      if (stack.substr(stack.rfind(';') + 1).find("memset") == std::string::npos) continue;
      in_memset += period;
      // The signal's return into glibc's trampoline is named (a return address to a function's
      // first instruction, looked up at address - 1, lies before its symbol).
      if (stack.starts_with("main;spin;") &&
          stack.find(";__restore_rt;on_prof;in_handler;") != std::string::npos)
        whole += period;
    }
    auto report = RunCommand({kTprof, "report", "-i", profile, "--json"});
    ASSERT_EQ(report.exit_code, 0) << report.err;
    const nlohmann::json repair =
        nlohmann::json::parse(report.out).at("unwinding").at("frame_pointer_repair");
    double kept = 0;
    for (const auto& cause : repair.at("kept")) kept += cause.at("samples").get<double>();
    const double cut = (in_memset - whole) / kPeriodNs;
    std::printf(
        "signal handler, %s: %.0f of %.0f memset samples not whole; "
        "%.0f of %.0f chains kept as recorded\n",
        copy.c_str(), cut, in_memset / kPeriodNs, kept, repair.at("samples").get<double>());
    // Enough of the handler's memset sampled to hold the rule to: a count, not a share of the
    // run (beside a parallel build its share fell to 4.5 %, 109 samples, under a 5 % bound).
    EXPECT_GE(in_memset / kPeriodNs, 30) << copy << ": the handler's memset was not sampled";
    // Up to 1 % of the memset time may be outside the handler (the loader's, at start).
    EXPECT_LE(cut, kept + 0.01 * in_memset / kPeriodNs)
        << copy << ": memset stacks cut short that the recording does not count\n"
        << Largest(stacks);
    if (copy == "fp,4096") {
      EXPECT_GE(whole, kAgreement * in_memset)
          << "a 4 KiB copy should reach past the signal frame\n"
          << Largest(stacks);
    }
  }
}

}  // namespace
}  // namespace tprof
