// Hot streams: the chains of code a profile's samples ran through, aggregated. With branch
// stacks (LBR), a sample's consecutive taken branches give a chain of basic blocks (from one
// branch's target to the next branch's source), most recent first, each with the cycles the
// hardware counted for it; without them, a sample's callchain gives a chain of frames, leaf
// first. Either way an entry is a function and a source file:line, so that two builds of a
// program can be compared entry by entry (core/analysis/stream_matcher.h). This is perf's
// hot-stream comparison (`perf diff --stream`, util/stream.c) with explicit chains rather than
// nodes of a callchain tree.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/base/error.h"
#include "core/model/address_space.h"
#include "core/model/frame_resolver.h"
#include "core/model/profile.h"

namespace tprof {

// One link of a stream: a call frame (line of the pc or of the call) or a basic block (lines of
// its first and last instruction). Inlined code gives one entry per inlined function.
struct StreamEntry {
  std::string function;   // demangled; "[module+0xoffset]" when unknown
  std::string file;       // as recorded in the debug info; empty when unknown
  uint32_t line = 0;      // 0 when unknown
  uint32_t end_line = 0;  // basic blocks: line of the last instruction; 0 for call frames
  // Without a line (no debug information), the code is told apart by where it is: the module
  // file offset (the address when no mapping is known) of the address, or of the block's
  // first and last instruction. 0 when there is a line.
  uint64_t offset = 0;
  uint64_t end_offset = 0;

  bool operator==(const StreamEntry&) const = default;
};

enum class StreamKind : uint8_t { kBranch, kCallchain };
const char* StreamKindName(StreamKind kind);

struct HotStream {
  StreamKind kind = StreamKind::kCallchain;
  std::vector<uint32_t> entries;  // indexes into StreamProfile::entries, most recent first
  uint64_t samples = 0;
  uint64_t period = 0;
  // Branch streams: the cycles the stream's blocks took, summed over the samples whose every
  // block carried a cycle count (cycle_samples of them).
  uint64_t cycles = 0;
  uint64_t cycle_samples = 0;

  bool has_cycles() const { return cycle_samples > 0; }
  double average_cycles() const {
    return cycle_samples ? static_cast<double>(cycles) / static_cast<double>(cycle_samples) : 0;
  }
};

// A basic block seen in branch stacks: [start, end] are the module file offsets (addresses for
// the kernel and unknown mappings) of its first and last instruction.
struct BasicBlock {
  std::string module;
  uint64_t start = 0;
  uint64_t end = 0;
  uint32_t entry = 0;       // index into StreamProfile::entries
  uint64_t executions = 0;  // branch-stack entries that ran this block
  uint64_t cycles = 0;      // summed over the executions that carried a cycle count
  uint64_t cycle_counts = 0;

  double average_cycles() const {
    return cycle_counts ? static_cast<double>(cycles) / static_cast<double>(cycle_counts) : 0;
  }
};

struct StreamProfile {
  std::vector<EventDesc> events;
  int event = -1;  // the event whose samples were aggregated; -1 when there were none
  std::vector<StreamEntry> entries;
  std::vector<HotStream> streams;  // by period, descending
  std::vector<BasicBlock> blocks;  // by cycles (executions when no cycles), descending
  uint64_t samples = 0;            // samples of the event, with or without a stream
  uint64_t period = 0;
  uint64_t branch_samples = 0;  // samples that carried a branch stack
  uint64_t block_cycles = 0;    // cycles over every block
  uint64_t block_executions = 0;
  bool has_cycles = false;  // some branch entry carried a cycle count

  double Share(const HotStream& s) const {
    return period ? static_cast<double>(s.period) / static_cast<double>(period) : 0;
  }
  // A block's share of sampled cycles, or of executions when the branch stacks have no cycles.
  double Share(const BasicBlock& b) const;
};

struct HotStreamOptions {
  enum class Source { kAuto, kBranch, kCallchain };
  // kAuto: branch streams for samples with a branch stack, callchain streams for the rest.
  Source source = Source::kAuto;
  size_t depth = 8;   // entries per stream at most, most recent first
  std::string event;  // event name; empty: the first event with samples
  bool include_kernel = true;
};

// Longest plausible basic block, in bytes: a longer "block" means the stack lost branches
// (an interrupt, a filter) and the range spans code that did not run.
inline constexpr uint64_t kMaxBlockBytes = 64 * 1024;

class HotStreamBuilder : public RecordVisitor {
 public:
  HotStreamBuilder(std::vector<EventDesc> events, FrameResolver& resolver,
                   HotStreamOptions options);

  void OnSample(const Sample& sample) override;
  void OnMmap(const MmapRecord& r) override;
  void OnComm(const CommRecord& r) override { space_.OnComm(r); }
  void OnTask(const TaskRecord& r) override { space_.OnTask(r); }

  // An error when options.event names no event of the profile.
  Result<StreamProfile> Finish();

 private:
  struct StreamKeyHash {
    size_t operator()(const std::vector<uint32_t>& key) const;
  };
  // Caches by process and address rather than by mapping, so a hit costs no mapping lookup;
  // a new mapping (OnMmap) empties them.
  struct BlockKey {
    uint32_t pid;
    uint64_t start, end;
    bool operator==(const BlockKey&) const = default;
  };
  struct BlockKeyHash {
    size_t operator()(const BlockKey& k) const {
      uint64_t h = (k.start * 0x9e3779b97f4a7c15ULL) ^ (k.end * 0xc2b2ae3d27d4eb4fULL) ^ k.pid;
      return static_cast<size_t>(h ^ (h >> 31));
    }
  };
  struct AddressKey {
    uint32_t pid;
    uint64_t address;
    bool operator==(const AddressKey&) const = default;
  };
  struct AddressKeyHash {
    size_t operator()(const AddressKey& k) const {
      uint64_t h = (k.address * 0x9e3779b97f4a7c15ULL) ^ k.pid;
      return static_cast<size_t>(h ^ (h >> 31));
    }
  };
  struct BlockInfo {
    bool plausible = false;  // false: not a block (the other fields are unset)
    uint32_t entry = 0;      // the block's entry
    size_t block = 0;        // index into the event's blocks
  };
  // Everything aggregated for one event.
  struct EventStreams {
    std::unordered_map<std::vector<uint32_t>, size_t, StreamKeyHash> index;  // kind + entries
    std::vector<HotStream> streams;
    std::map<std::tuple<std::string, uint64_t, uint64_t>, size_t> block_index;
    std::vector<BasicBlock> blocks;
    uint64_t samples = 0, period = 0, branch_samples = 0;
  };

  // What a raw stack (pid, event, addresses) resolves to; memoised, since real profiles repeat
  // their stacks, so that a repeated stack costs one lookup instead of one per frame or block.
  struct Resolved {
    int32_t stream = -1;          // index into the event's streams; -1: none
    uint32_t stream_blocks = 0;   // branch stacks: blocks 0..stream_blocks-1 form the stream
    std::vector<int32_t> blocks;  // branch stacks: per entry i, its block's index or -1
  };
  struct RawKeyHash {
    size_t operator()(const std::vector<uint64_t>& key) const;
  };
  static constexpr size_t kMemoLimit = 1 << 18;  // distinct stacks remembered at once

  Resolved ResolveBranches(const Sample& sample, size_t used, EventStreams& out);
  Resolved ResolveCallchain(const Sample& sample, EventStreams& out);
  void Apply(const Resolved& resolved, const Sample& sample, EventStreams& out);
  // The index of the stream of key_ in `out`, added (with no samples yet) when new.
  int32_t StreamIndex(StreamKind kind, EventStreams& out);
  const std::vector<uint32_t>& EntriesAt(uint32_t pid, uint64_t address);
  // The block's entry and its index in `out.blocks`, or null for an implausible range.
  const BlockInfo* BlockAt(uint32_t pid, uint64_t start, uint64_t end, EventStreams& out);
  uint32_t InternEntry(StreamEntry entry);

  std::vector<EventDesc> events_;
  FrameResolver& resolver_;
  HotStreamOptions options_;
  AddressSpace space_;
  std::vector<StreamEntry> entries_;
  std::unordered_map<std::string, uint32_t> entry_index_;
  std::unordered_map<AddressKey, std::vector<uint32_t>, AddressKeyHash> address_cache_;
  // Per event (blocks of different events are aggregated apart).
  std::vector<std::unordered_map<BlockKey, BlockInfo, BlockKeyHash>> block_cache_;
  std::vector<EventStreams> per_event_;
  std::unordered_map<std::vector<uint64_t>, Resolved, RawKeyHash> memo_;
  std::vector<uint64_t> raw_;  // reused per sample
  std::vector<uint32_t> key_;  // reused per sample
  bool has_cycles_ = false;
};

}  // namespace tprof
