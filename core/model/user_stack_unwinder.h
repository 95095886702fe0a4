// The seam for `--call-graph dwarf` recordings: the importer hands each sample's user registers
// and stack copy to an unwinder (symbolize/ provides one that reads DWARF CFI), which gives the
// sample's user frames and says where and why its walk ended. Samples it cannot walk to the
// outermost frame are counted by that reason (UnwindStatistics), so that a profile whose stacks
// stop at the leaf says so instead of passing for a flat one.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/profile.h"

namespace tprof {

struct UserStackSample {
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t ip = 0;         // the sampled ip (a kernel address when the sample hit the kernel)
  uint64_t regs_abi = 0;   // PERF_SAMPLE_REGS_ABI_32 / _64
  uint64_t regs_mask = 0;  // the event's sample_regs_user: which registers `regs` holds, in order
  std::span<const uint64_t> regs;
  std::string_view stack;  // the copy of the user stack from the stack pointer up
};

// Where a walk ended. Everything but the first two leaves the stack without its outer frames.
enum class UnwindEnd : uint8_t {
  kOutermostFrame,     // complete: the CFI marks the frame as the first (_start, a thread start)
  kFrameLimit,         // stopped at the unwinder's frame limit (recursion)
  kNoRegisters,        // the copy lacks the pc or the stack pointer, or the register set is unknown
  kUnknownAddress,     // a pc in no recorded mapping (JIT code, or a wrong return address)
  kNoBinary,           // the binary of a frame was not found here
  kBuildIdMismatch,    // it was found, but it is another build than the one recorded
  kNoCfi,              // the binary has no call frame information for the pc
  kStackCopyTooShort,  // the next return address lies beyond the copied stack bytes
  kUnwinderError,      // the CFI could not be evaluated
};
inline constexpr size_t kUnwindEndCount = 9;

// What the user of the statistics is told about each reason.
const char* UnwindEndName(UnwindEnd end);

struct UnwindOutcome {
  UnwindEnd end = UnwindEnd::kOutermostFrame;
  std::string module;  // the recorded file the walk stopped in, when the reason concerns one
};

class UserStackUnwinder {
 public:
  virtual ~UserStackUnwinder() = default;
  // The recorded machine's architecture as `uname -m` names it ("x86_64", "aarch64"), before any
  // sample; empty when the recording does not say (then: this machine's).
  virtual void OnArchitecture(const std::string& /*machine*/) {}
  // Told about every mapping, in time order, before the samples that need it.
  virtual void OnMmap(const MmapRecord& record) = 0;
  virtual void OnComm(const CommRecord&) {}
  virtual void OnTask(const TaskRecord&) {}
  // Appends the user frames of one sample, leaf first: the user pc (from the copied registers),
  // then the return addresses found. Appends nothing when not even the pc is known.
  virtual UnwindOutcome Unwind(const UserStackSample& sample, std::vector<uint64_t>* frames) = 0;
};

// Counts of the samples that carried stack copies, by how far they were walked.
struct UnwindStatistics {
  struct Stopped {
    uint64_t samples = 0;    // walks that ended for this reason
    uint64_t leaf_only = 0;  // ... of which found no caller at all
    std::string module;      // the first module named for it
  };
  uint64_t samples = 0;      // samples with user registers and a stack copy
  uint64_t complete = 0;     // walked to the outermost frame (or the frame limit)
  uint64_t user_frames = 0;  // frames of those samples, user pcs included
  std::array<Stopped, kUnwindEndCount> stopped;

  void Add(const UnwindOutcome& outcome, size_t frames);
  uint64_t incomplete() const { return samples - complete; }
};

// The statistics in words: a first line with the counts, then one line per reason a walk ended
// early (with the module concerned and what to do). Empty when no sample carried a copy.
std::vector<std::string> DescribeUnwinding(const UnwindStatistics& stats);

// Gives `sample` the user frames of its stack copy: its callchain keeps the kernel part as
// recorded, then PERF_CONTEXT_USER and the unwinder's frames (the sampled ip alone when the
// unwinder gives none and the ip is a user address). Counts the outcome into `stats`.
void UnwindUserStack(const UserStackSample& input, UserStackUnwinder& unwinder, Sample* sample,
                     UnwindStatistics* stats);

}  // namespace tprof
