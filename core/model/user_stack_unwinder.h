// The seam for `--call-graph dwarf` recordings: the importer hands each sample's user registers
// and stack copy to an unwinder (symbolize/ provides one that reads DWARF CFI), which gives the
// sample's user frames and says where and why its walk ended. Samples it cannot walk to the
// outermost frame are counted by that reason (UnwindStatistics), so that a profile whose stacks
// stop at the leaf says so instead of passing for a flat one.
//
// The same seam mends frame-pointer chains (`record -g`, which copies a little of the user stack
// beside the kernel's chain): a leaf without a frame pointer (Debian's libc and libstdc++) makes
// the kernel's walk skip its caller, so the copy is walked with CFI until it meets the chain, and
// the frames the chain skipped are put in (MendFramePointerChain).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
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
  // With a frame-pointer chain beside the copy (record -g): its second frame, the return address
  // the kernel read from the frame record the sampled frame pointer points to; 0: none.
  uint64_t frame_record_return = 0;
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
  // True when every function along `chain` (the user part of the sample's frame-pointer chain,
  // from its pc) but the outermost had set up its frame pointer as the kernel's walk takes it,
  // its return address in the frame record the frame pointer points to: then the chain skipped
  // no caller, and mending it needs no walk of the copy. False when unknown.
  virtual bool ChainKeepsFramePointers(const UserStackSample& /*sample*/,
                                       std::span<const uint64_t> /*chain*/) {
    return false;
  }
};

// The module most walks that ended for one reason named: the one a summary line names. The
// counts live only while walking; a trailer keeps the name.
struct ModuleNamed {
  std::string module;
  std::map<std::string, uint64_t> samples;  // by module, while walking

  void Add(const std::string& named) {
    if (named.empty()) return;
    const uint64_t n = ++samples[named];
    if (module.empty() || (named != module && n > samples[module])) module = named;
  }
};

// How the frame-pointer chains that came with a stack copy were checked against a CFI walk of it.
struct ChainRepairStatistics {
  uint64_t samples = 0;       // user chains with a stack copy beside them
  uint64_t repaired = 0;      // the walk met the chain past frames the chain lacked or misread
  uint64_t frames_added = 0;  // frames put in by those repairs, less frames taken out
  uint64_t replaced = 0;      // the walk reached the outermost frame without meeting the chain
  // The walk stopped without meeting the chain, which is kept as recorded: by why it stopped.
  std::array<uint64_t, kUnwindEndCount> kept_by_end{};
  // For each reason, the module most of those walks stopped in.
  std::array<ModuleNamed, kUnwindEndCount> kept_module_by_end;

  uint64_t kept() const {
    uint64_t sum = 0;
    for (uint64_t n : kept_by_end) sum += n;
    return sum;
  }
  uint64_t unchanged() const { return samples - repaired - replaced - kept(); }
};

// Counts of the samples that carried stack copies, by how far they were walked.
struct UnwindStatistics {
  struct Stopped {
    uint64_t samples = 0;    // walks that ended for this reason
    uint64_t leaf_only = 0;  // ... of which found no caller at all
    ModuleNamed named;       // the module most of them stopped in
  };
  uint64_t samples = 0;      // samples with user registers and a stack copy
  uint64_t complete = 0;     // walked to the outermost frame (or the frame limit)
  uint64_t user_frames = 0;  // frames of those samples, user pcs included
  std::array<Stopped, kUnwindEndCount> stopped;
  // Samples whose copy was walked only to mend their frame-pointer chain (not counted above).
  ChainRepairStatistics chain_repair;

  void Add(const UnwindOutcome& outcome, size_t frames);
  uint64_t incomplete() const { return samples - complete; }
  bool empty() const { return samples == 0 && chain_repair.samples == 0; }
};

// The statistics in words: a first line with the counts, then one line per reason a walk ended
// early (with the module concerned and what to do). Empty when no sample carried a copy.
std::vector<std::string> DescribeUnwinding(const UnwindStatistics& stats);

// Where a CFI walk of the stack copy meets a frame-pointer chain of the same sample (both leaf
// first, both starting at the sampled pc): the walk's frame `walked_at` (>= 1) is the chain's
// frame `chain_at` (>= 1), and the two agree on every frame both hold from there on. The mended
// chain is walked[0, walked_at) + chain[chain_at, end).
struct ChainMeeting {
  size_t walked_at = 0;
  size_t chain_at = 0;
};
// The meeting with the fewest walked frames before it (a recursion's repeated return address
// meets where the rest agrees, not at its first repeat); nullopt when they never meet.
std::optional<ChainMeeting> FindChainMeeting(std::span<const uint64_t> walked,
                                             std::span<const uint64_t> chain);

// Mends the user part of `chain` (leaf first, from the sampled pc) with `walked`, the frames a
// CFI walk of the stack copy found, which ended as `outcome`. Counts the result into `stats`.
void MendFramePointerChain(std::span<const uint64_t> walked, const UnwindOutcome& outcome,
                           std::vector<uint64_t>* chain, ChainRepairStatistics* stats);

// Gives `sample` the user frames of its stack copy: its callchain keeps the kernel part as
// recorded, then PERF_CONTEXT_USER and the unwinder's frames (the sampled ip alone when the
// unwinder gives none and the ip is a user address). Counts the outcome into `stats`.
// A sample that also carries the user part of a frame-pointer chain keeps that chain, mended
// where the walk shows frames it skipped (MendFramePointerChain).
void UnwindUserStack(const UserStackSample& input, UserStackUnwinder& unwinder, Sample* sample,
                     UnwindStatistics* stats);

// While recording -g: drops the stack copy and registers of a sample whose frame-pointer chain
// needs no mending (UserStackUnwinder::ChainKeepsFramePointers, which the pass after the workload
// would ask of the same mappings), so that most of -g's copies are neither encoded, written nor
// read back: they were most of what -g cost the recorder per sample at 20 kHz. The pass counts
// trimmed() among the chains it checked (UnwindProfile). Fed every mapping, comm and task record
// in time order.
class StackCopyTrimmer {
 public:
  explicit StackCopyTrimmer(UserStackUnwinder& unwinder) : unwinder_(unwinder) {}
  void OnMmap(const MmapRecord& record) { unwinder_.OnMmap(record); }
  void OnComm(const CommRecord& record) { unwinder_.OnComm(record); }
  void OnTask(const TaskRecord& record) { unwinder_.OnTask(record); }
  // Clears `sample`'s stack copy and registers when its chain keeps frame pointers all along.
  void Trim(Sample* sample);
  uint64_t trimmed() const { return trimmed_; }

 private:
  UserStackUnwinder& unwinder_;
  uint64_t trimmed_ = 0;
};

}  // namespace tprof
