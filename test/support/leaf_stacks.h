// The comparison of two recordings' stacks that the leaf-frame tests make (issue 58): tprof record
// -g, whose frame-pointer chains are mended where a libc leaf without a frame pointer made the
// kernel's walk skip its caller, against --call-graph dwarf, of test/workloads/libc_leaves.c. The
// host's LeafFramesTest (test/integration/leaf_frames_test.cpp) runs tprof report itself; the arm
// lab's (test/armlab/armlab_test.cpp) reads the folded stacks the guest's tprof printed. Both
// give this header the text of `report --folded --no-inline --folded-prefix tid`.
//
// Two recordings cannot be compared sample by sample, so each is read as the set of its distinct
// stacks, each weighted by its period: the agreement of A with B is the share of A's period whose
// stack is one of B's stacks. Both ways must reach 99 %. A stack here is the user frames of the
// workload's main thread from main to the leaf, by function name (--no-inline, physical
// functions: the two recordings symbolize the same addresses alike either way):
// - frames outside main (_start, __libc_start_main, __libc_start_call_main) are dropped: a
//   frame-pointer walk that leaves main reads whatever libc's start code left in its frame
//   pointer; a stack without main (the loader at start, exit) is kept whole;
// - kernel frames are dropped: both modes take them from the same kernel walk, which the issue
//   does not touch, and they vary from run to run (each page fault's allocator path), so two
//   correct recordings differ by chance in their rare kernel stacks, not by unwinding (with
//   them, two dwarf recordings agreed on 96.5 to 97.6 % of the on-CPU period on x86-64);
// - the helper threads (leaf_helper, which pace the pipe and the condition variable) are left
//   out: their stacks are rooted in start_thread, not main.
// Off the CPU only the waits count, not the intervals a thread was preempted (report
// --off-cpu-reasons' off-cpu:preempted, subtracted stack by stack): a preemption lands wherever
// the scheduler puts it, for as long as the machine is busy, so that two correct recordings
// would disagree by their chance preemptions; the designed waits are the same in every run, at
// the same three stacks.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace tprof::leaf_stacks {

// libc_leaves' phases, each a function main calls, by where they spend their time.
inline const std::vector<std::string> kOnCpuPhases = {"big_memset", "big_memcpy", "time_loop"};
inline const std::vector<std::string> kOffCpuPhases = {"nap_sleep", "pipe_read", "futex_wait"};

// The agreement each way that the -g recording must reach, and the share each phase must have of
// its event in every recording compared (about a third by design), so that no comparison passes
// on a recording that missed the phases.
constexpr double kAgreement = 0.99;
constexpr double kPhaseShare = 0.10;

// One event of a recording: the period of each distinct stack of the workload's main thread,
// user frames only, from main to the leaf ("main;nap_sleep;__nanosleep;clock_nanosleep").
struct Stacks {
  std::map<std::string, double> period;
  double total = 0;
};

// `report --folded --folded-prefix tid` lines ("comm-PID/TID;frame;...;frame COUNT") of the main
// thread (PID == TID), by the whole line less the prefix and the count.
inline std::map<std::string, double> MainThreadFolded(const std::string& folded) {
  std::map<std::string, double> lines;
  std::istringstream in(folded);
  for (std::string line; std::getline(in, line);) {
    const size_t space = line.rfind(' '), semicolon = line.find(';');
    if (space == std::string::npos) continue;
    const std::string prefix = line.substr(0, std::min(semicolon, space));
    const size_t dash = prefix.rfind('-'), slash = prefix.rfind('/');
    if (dash == std::string::npos || slash == std::string::npos || slash < dash) {
      ADD_FAILURE() << "a folded line without a comm-PID/TID prefix: " << line;
      continue;
    }
    if (prefix.substr(dash + 1, slash - dash - 1) != prefix.substr(slash + 1)) continue;
    const std::string stack =
        semicolon < space ? line.substr(semicolon + 1, space - semicolon - 1) : std::string();
    lines[stack] += std::stod(line.substr(space + 1));
  }
  return lines;
}

// A folded stack (root first) as compared: its user frames from main on, or all of them when
// main is not among them.
inline std::string FromMain(const std::string& folded_stack) {
  std::vector<std::string> user;
  std::istringstream frames(folded_stack);
  for (std::string frame; std::getline(frames, frame, ';');)
    if (!frame.ends_with("_[k]")) user.push_back(frame);
  auto main = std::find(user.begin(), user.end(), "main");
  if (main == user.end()) main = user.begin();
  std::string stack;
  for (auto f = main; f != user.end(); ++f) stack += (stack.empty() ? "" : ";") + *f;
  return stack.empty() ? "(no user frames)" : stack;
}

// Main-thread folded stacks (MainThreadFolded) as compared: from main, without kernel frames.
inline Stacks ToStacks(const std::map<std::string, double>& folded) {
  Stacks stacks;
  for (const auto& [stack, period] : folded) {
    if (period <= 0) continue;
    stacks.period[FromMain(stack)] += period;
    stacks.total += period;
  }
  return stacks;
}

// The folded text of an on-CPU event, as compared, less the stacks through the off-CPU phases.
// Their CPU time is the kernel's work around each wait (a wake-up, a thread started), a few
// samples that land by the machine's load: beside the ASan suite, one dwarf recording had 0.79 %
// of its clock in main;nap_sleep;__nanosleep;clock_nanosleep and the -g one none, with no stack
// of its own there either. The off-CPU comparison checks those stacks; a -g stack that skipped a
// phase's frame (main;__nanosleep;clock_nanosleep) is not through the phase and still counts.
inline Stacks OnCpuStacksOf(const std::string& folded) {
  std::map<std::string, double> on_cpu = MainThreadFolded(folded);
  std::erase_if(on_cpu, [](const auto& line) {
    const std::string stack = FromMain(line.first);
    return std::any_of(kOffCpuPhases.begin(), kOffCpuPhases.end(), [&](const std::string& phase) {
      return stack == "main;" + phase || stack.starts_with("main;" + phase + ";");
    });
  });
  return ToStacks(on_cpu);
}

// The off-CPU waits: the folded text of the off-cpu event less that of off-cpu:preempted (empty
// where the recording has no preempted interval), stack by stack.
inline Stacks WaitStacksOf(const std::string& off_cpu_folded, const std::string& preempted_folded) {
  std::map<std::string, double> waits = MainThreadFolded(off_cpu_folded);
  for (const auto& [stack, period] : MainThreadFolded(preempted_folded)) waits[stack] -= period;
  return ToStacks(waits);
}

// The share of a's period whose stack is among b's.
inline double Agreement(const Stacks& a, const Stacks& b) {
  double agreed = 0;
  for (const auto& [stack, period] : a.period)
    if (b.period.count(stack)) agreed += period;
  return a.total > 0 ? agreed / a.total : 0;
}

// The share of the period in stacks through `phase`, the function main called.
inline double PhaseShare(const Stacks& s, const std::string& phase) {
  double in = 0;
  for (const auto& [stack, period] : s.period)
    if (stack == "main;" + phase || stack.starts_with("main;" + phase + ";")) in += period;
  return s.total > 0 ? in / s.total : 0;
}

inline std::string Percent(double share) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f%%", 100 * share);
  return text;
}

// The ten largest of s's stacks (those `other` lacks, when given), with their shares of s's period.
inline std::string Largest(const Stacks& s, const Stacks* other = nullptr) {
  std::vector<std::pair<double, std::string>> rows;
  for (const auto& [stack, period] : s.period)
    if (!other || !other->period.count(stack)) rows.emplace_back(period, stack);
  std::sort(rows.rbegin(), rows.rend());
  std::string text;
  for (size_t i = 0; i < rows.size() && i < 10; ++i)
    text += "    " + Percent(rows[i].first / s.total) + "  " + rows[i].second.substr(0, 300) + "\n";
  return text;
}

// a's stacks that b lacks, the largest first, then b's largest stacks, for a failure message.
inline std::string Disagreement(const Stacks& a, const std::string& a_name, const Stacks& b,
                                const std::string& b_name) {
  return "  " + a_name + "'s stacks that " + b_name + " lacks, by their share of " + a_name +
         "'s period:\n" + Largest(a, &b) + "  " + b_name + "'s largest stacks:\n" + Largest(b);
}

// Both ways at least kAgreement, and every phase of `phases` with at least kPhaseShare of each.
inline void ExpectAgreement(const Stacks& a, const std::string& a_name, const Stacks& b,
                            const std::string& b_name, const std::vector<std::string>& phases,
                            const std::string& what) {
  ASSERT_GT(a.total, 0) << what << ": " << a_name << " has no samples of the main thread";
  ASSERT_GT(b.total, 0) << what << ": " << b_name << " has no samples of the main thread";
  const double a_in_b = Agreement(a, b), b_in_a = Agreement(b, a);
  std::printf("%s: %s of %s's period in stacks %s has, %s of %s's in stacks %s has\n", what.c_str(),
              Percent(a_in_b).c_str(), a_name.c_str(), b_name.c_str(), Percent(b_in_a).c_str(),
              b_name.c_str(), a_name.c_str());
  EXPECT_GE(a_in_b, kAgreement) << what << ": only " << Percent(a_in_b) << " of " << a_name
                                << "'s period is in stacks " << b_name << " has\n"
                                << Disagreement(a, a_name, b, b_name);
  EXPECT_GE(b_in_a, kAgreement) << what << ": only " << Percent(b_in_a) << " of " << b_name
                                << "'s period is in stacks " << a_name << " has\n"
                                << Disagreement(b, b_name, a, a_name);
  for (const std::string& phase : phases) {
    const double in_a = PhaseShare(a, phase), in_b = PhaseShare(b, phase);
    std::printf("%s: main;%s: %s of %s, %s of %s\n", what.c_str(), phase.c_str(),
                Percent(in_a).c_str(), a_name.c_str(), Percent(in_b).c_str(), b_name.c_str());
    EXPECT_GE(in_a, kPhaseShare) << what << ": main;" << phase << " has " << Percent(in_a) << " of "
                                 << a_name << "'s period\n"
                                 << Disagreement(a, a_name, b, b_name);
    EXPECT_GE(in_b, kPhaseShare) << what << ": main;" << phase << " has " << Percent(in_b) << " of "
                                 << b_name << "'s period\n"
                                 << Disagreement(b, b_name, a, a_name);
  }
}

}  // namespace tprof::leaf_stacks
