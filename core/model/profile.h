// The profile model: explicit record types that every source (live recording, importers) produces
// and every analysis consumes. Nothing here knows about files, the kernel or rendering.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tprof {

// Values at or above this in a callchain are perf context markers (PERF_CONTEXT_KERNEL, ...),
// kept in place so that the kernel/user split of a chain is not lost.
inline constexpr uint64_t kCallchainContextMax = static_cast<uint64_t>(-4095);
inline constexpr uint64_t kContextKernel = static_cast<uint64_t>(-128);
inline constexpr uint64_t kContextUser = static_cast<uint64_t>(-512);
inline bool IsContextMarker(uint64_t address) { return address >= kCallchainContextMax; }

struct CpuDescription {
  std::string vendor;  // "GenuineIntel", "AuthenticAMD", "ARM", ...
  uint32_t family = 0;
  uint32_t model = 0;
  uint32_t stepping = 0;
  uint64_t midr = 0;       // Arm MIDR_EL1, 0 elsewhere
  std::string model_name;  // human-readable, as /proc/cpuinfo says
};

struct Metadata {
  std::string tprof_version;
  std::vector<std::string> command_line;
  std::string hostname;
  std::string kernel_release;
  std::string architecture;
  uint32_t cpu_count = 0;
  CpuDescription cpu;
  std::string clock = "monotonic";      // clock of record timestamps (CLOCK_MONOTONIC)
  uint64_t start_time_unix_ns = 0;      // wall-clock start
  uint64_t start_timestamp = 0;         // the same instant on the record clock
  uint64_t duration_ns = 0;             // 0 until the recording ends (set from the trailer)
  std::string source = "tprof record";  // or "perf.data import", ...
  // perf script text that printed one number per sample (its default: the thread id): each
  // sample's pid then repeats its tid, and the process is not known.
  bool pids_unknown = false;
  // The off-cpu event's samples are each thread's off-CPU time summed per stack over the whole
  // run (perf record --off-cpu), not intervals: nothing says when a thread waited.
  bool off_cpu_summed = false;
};

// One event as opened with perf_event_open: the attribute fields that define what it counts and
// how it samples. Group members refer to their leader by index in the profile's event list.
struct EventDesc {
  std::string name;
  uint32_t type = 0;
  uint64_t config = 0;
  uint64_t config1 = 0;
  uint64_t config2 = 0;
  bool use_frequency = false;
  uint64_t period_or_frequency = 0;
  uint64_t sample_type = 0;
  uint64_t read_format = 0;
  uint64_t branch_sample_type = 0;
  uint64_t sample_regs_user = 0;   // which user registers samples copy (DWARF unwinding)
  uint32_t sample_stack_user = 0;  // bytes of user stack samples copy
  // The kernel recorded no user frames: the stack copies stand for them (--call-graph dwarf),
  // where with -g they only mend the frame-pointer chain.
  bool exclude_callchain_user = false;
  uint32_t hf_sample_period = 0;        // burst sampling: the short window after each long period
  int32_t group_leader = -1;            // index of the leader; -1 when the event is not in a group
  std::vector<uint32_t> group_members;  // indexes, leader first; set on the leader only
  bool exclude_user = false;
  bool exclude_kernel = false;
  uint32_t precise_ip = 0;
};

// A branch-stack entry; flags is perf's packed word (mispred, predicted, in_tx, abort, cycles,
// type), kept whole so nothing the hardware said is lost.
struct BranchEntry {
  uint64_t from = 0;
  uint64_t to = 0;
  uint64_t flags = 0;
  bool mispredicted() const { return flags & 1; }
  bool predicted() const { return flags & 2; }
  uint32_t cycles() const { return static_cast<uint32_t>((flags >> 4) & 0xffff); }

  bool operator==(const BranchEntry&) const = default;
};

// A callchain a decoder left as its input holds it, for a visitor that decodes it only where it
// needs it (RecordVisitor::takes_deferred_callchains): in a profile most samples repeat a stack
// already counted, and decoding their frames was a quarter of a flat report's decoding thread.
// Unequal chains have unequal bytes (decoding is a function), and an encoder writes equal chains
// as equal bytes, so the bytes can stand for the chain as a key (a file that wrote one chain two
// ways would count it as two stacks, with the same rows). The bytes belong to the decoder and are
// valid only while the sample is visited.
struct DeferredCallchain {
  const uint8_t* bytes = nullptr;
  size_t size = 0;
  uint32_t frames = 0;  // what the whole chain holds; 0: nothing is deferred
  // Writes the whole chain, leaf first, as Sample::callchain holds it. The decoder has checked
  // the bytes, so it cannot fail.
  void (*decode)(const DeferredCallchain&, std::vector<uint64_t>* frames) = nullptr;

  explicit operator bool() const { return frames != 0; }
  bool operator==(const DeferredCallchain&) const = default;
};

struct Sample {
  uint64_t time = 0;
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint32_t cpu = 0;
  uint32_t event = 0;  // index into the profile's events
  uint64_t period = 0;
  uint64_t ip = 0;
  // Group read (PERF_SAMPLE_READ): running totals of every member, leader first, and the group's
  // enabled/running times. Empty when the event was not read as a group. The totals are those of
  // the counter instance that took the sample: with per-CPU events, one per (thread, CPU), so
  // deltas between samples are taken per (tid, cpu).
  uint64_t time_enabled = 0;
  uint64_t time_running = 0;
  std::vector<uint64_t> counter_values;
  std::vector<uint64_t> callchain;  // leaf first, with context markers in place
  // When set, `callchain` holds only the leaf's context (as for RecordVisitor::reads_callers
  // false) and this the whole chain: see CompleteCallchain.
  DeferredCallchain deferred_callchain;
  std::vector<BranchEntry> branches;
  uint64_t branch_hw_index = 0;
  // Copies for DWARF unwinding (PERF_SAMPLE_REGS_USER / STACK_USER): the registers in the
  // kernel's perf_regs order for user_regs_abi, and the bytes from the stack pointer up. Kept in a
  // profile only when asked for; normally unwound into `callchain` at the end of recording.
  uint64_t user_regs_abi = 0;
  std::vector<uint64_t> user_regs;
  std::string user_stack;

  void ClearKeepCapacity() {
    time = period = ip = time_enabled = time_running = branch_hw_index = user_regs_abi = 0;
    pid = tid = cpu = event = 0;
    counter_values.clear();
    callchain.clear();
    deferred_callchain = {};
    branches.clear();
    user_regs.clear();
    user_stack.clear();
  }

  bool operator==(const Sample&) const = default;
};

// Decodes a sample's deferred callchain into its callchain, so that the sample holds its whole
// chain and nothing of the decoder's (a sample kept beyond its visit must be).
inline void CompleteCallchain(Sample& sample) {
  if (!sample.deferred_callchain) return;
  sample.deferred_callchain.decode(sample.deferred_callchain, &sample.callchain);
  sample.deferred_callchain = {};
}

struct MmapRecord {
  uint64_t time = 0;
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t start = 0;
  uint64_t length = 0;
  uint64_t page_offset = 0;
  uint32_t prot = 0;
  uint32_t flags = 0;
  bool executable = true;
  std::string filename;
  std::string build_id;  // raw bytes; empty when unknown

  bool operator==(const MmapRecord&) const = default;
};

struct CommRecord {
  uint64_t time = 0;
  uint32_t pid = 0;
  uint32_t tid = 0;
  bool exec = false;  // the comm changed because of an exec
  std::string comm;

  bool operator==(const CommRecord&) const = default;
};

struct TaskRecord {  // fork or exit
  uint64_t time = 0;
  bool is_exit = false;
  uint32_t pid = 0;
  uint32_t ppid = 0;
  uint32_t tid = 0;
  uint32_t ptid = 0;

  bool operator==(const TaskRecord&) const = default;
};

struct LostRecord {
  uint64_t time = 0;
  uint32_t event = 0;
  uint64_t lost = 0;
  bool samples_only = false;  // PERF_RECORD_LOST_SAMPLES rather than PERF_RECORD_LOST

  bool operator==(const LostRecord&) const = default;
};

struct ThrottleRecord {
  uint64_t time = 0;
  uint32_t event = 0;
  bool throttled = true;  // false: unthrottle

  bool operator==(const ThrottleRecord&) const = default;
};

// A sample's frames split into the leaf and its callers. The leaf is the first address of the
// callchain (a pc), or the ip when there is no callchain. The callers are the callchain entries
// after it, context markers included, starting in the context `callers_kernel` says. Samples
// that differ only in the leaf share their callers, which lets aggregations resolve the callers
// once for all of them.
struct SplitStack {
  bool has_leaf = false;  // false only for a callchain of context markers alone
  uint64_t leaf = 0;
  bool leaf_kernel = false;
  std::span<const uint64_t> callers;
  bool callers_kernel = false;
};
inline SplitStack SplitLeaf(const Sample& sample) {
  SplitStack stack;
  bool kernel = sample.ip >> 63;  // kernel text is the upper half (frame_resolver.h)
  if (sample.callchain.empty()) {
    stack.has_leaf = true;
    stack.leaf = sample.ip;
    stack.leaf_kernel = kernel;
    return stack;
  }
  for (size_t i = 0; i < sample.callchain.size(); ++i) {
    const uint64_t a = sample.callchain[i];
    if (IsContextMarker(a)) {
      kernel = a == kContextKernel;
      continue;
    }
    stack.has_leaf = true;
    stack.leaf = a;
    stack.leaf_kernel = kernel;
    stack.callers = std::span<const uint64_t>(sample.callchain).subspan(i + 1);
    stack.callers_kernel = kernel;
    break;
  }
  return stack;
}

// Walks callers (see SplitStack) leaf side first. After a context marker the first address is a
// pc; the others are return addresses, looked up at address - 1 so that they name the call and
// its line, not the next one. `visit(address, kernel)` returns false to stop the walk.
template <typename Visit>
void ForEachCallerAddress(std::span<const uint64_t> callers, bool kernel, Visit visit) {
  bool pc = false;
  for (uint64_t a : callers) {
    if (IsContextMarker(a)) {
      kernel = a == kContextKernel;
      pc = true;
      continue;
    }
    // A zero return address ends a frame-pointer walk (the outermost frame record); looked up
    // at address - 1 it became [kernel.kallsyms+0xffffffffffffffff]. perf drops it too. In a pc's
    // place it takes the pc's turn: what follows is a return address.
    if (a == 0) {
      pc = false;
      continue;
    }
    if (!visit(pc ? a : a - 1, kernel)) return;
    pc = false;
  }
}

// Walks a sample's frames leaf first: the leaf, then its callers (see SplitStack), giving each
// the address to look it up at and whether it is kernel code.
template <typename Visit>
void ForEachFrameAddress(const Sample& sample, Visit visit) {
  const SplitStack stack = SplitLeaf(sample);
  if (!stack.has_leaf || !visit(stack.leaf, stack.leaf_kernel)) return;
  ForEachCallerAddress(stack.callers, stack.callers_kernel, visit);
}

// Receives records in file order. Implementations override only what they use.
class RecordVisitor {
 public:
  virtual ~RecordVisitor() = default;
  virtual void OnSample(const Sample&) {}
  virtual void OnMmap(const MmapRecord&) {}
  virtual void OnComm(const CommRecord&) {}
  virtual void OnTask(const TaskRecord&) {}
  virtual void OnLost(const LostRecord&) {}
  virtual void OnThrottle(const ThrottleRecord&) {}
  // The sample that will be visited right after the next one, with no other record between:
  // a hint to start fetching what it will need (a hash table slot) while the next one is
  // worked on. It is still visited, in order, with OnSample; a visitor must not let the hint
  // change anything it computes. A decoder that reads ahead gives it; others need not.
  virtual void OnSampleAhead(const Sample&) {}
  // True when the visitor does something with OnSampleAhead: a decoder reads ahead only then,
  // since holding each sample back costs the other visitors a little for nothing.
  virtual bool takes_sample_hints() const { return false; }
  // The samples that will be visited next, in order, with no other record between them: a hint
  // to look up together what each will need, before the first is worked on. They are still
  // visited with OnSample; a visitor must not let the hint change anything it computes. A
  // replay of records handed over in batches (RecordBatch) gives it.
  virtual void OnSamplesAhead(std::span<const Sample>) {}
  virtual bool takes_sample_runs() const { return false; }
  // True when the visitor passes most of its work on to threads of its own: a reader then
  // decodes on the thread that visits, not on one more that would leave those a core short.
  virtual bool has_own_threads() const { return false; }
  // False when the visitor reads no more of a sample's callchain than its leaf and, for a leaf
  // in the kernel, the user context that entered the kernel (SplitLeaf, KernelEntryCredit): a
  // decoder may then keep only that part of each chain. A function diff reads the leaf alone,
  // and decoding and copying whole chains was a third of its time.
  virtual bool reads_callers() const { return true; }
  // True when the visitor takes samples whose callchain is deferred (Sample::deferred_callchain)
  // and completes them where it needs the whole chain: a decoder may then leave it so.
  virtual bool takes_deferred_callchains() const { return false; }
};

// Passes every record on to `next`: a filter in a chain of visitors overrides what it changes.
class ForwardingVisitor : public RecordVisitor {
 public:
  explicit ForwardingVisitor(RecordVisitor& next) : next_(next) {}
  // A copy would pass records to the original's next, skipping the original: `Filter f(other)`
  // of another filter must mean the constructor above.
  ForwardingVisitor(const ForwardingVisitor&) = delete;
  ForwardingVisitor& operator=(const ForwardingVisitor&) = delete;
  void OnSample(const Sample& s) override { next_.OnSample(s); }
  void OnMmap(const MmapRecord& r) override { next_.OnMmap(r); }
  void OnComm(const CommRecord& r) override { next_.OnComm(r); }
  void OnTask(const TaskRecord& r) override { next_.OnTask(r); }
  void OnLost(const LostRecord& r) override { next_.OnLost(r); }
  void OnThrottle(const ThrottleRecord& r) override { next_.OnThrottle(r); }
  void OnSampleAhead(const Sample& s) override { next_.OnSampleAhead(s); }
  bool takes_sample_hints() const override { return next_.takes_sample_hints(); }
  // Runs are not passed on: a filter may drop or change the samples a run names.
  bool has_own_threads() const override { return next_.has_own_threads(); }
  bool reads_callers() const override { return next_.reads_callers(); }
  // Deferred callchains are not taken: a filter may read a sample's callers.

 protected:
  RecordVisitor& next() { return next_; }
  const RecordVisitor& next() const { return next_; }

 private:
  RecordVisitor& next_;
};

// Forwards every record to each of its visitors in turn, so that one pass over a profile feeds
// them all (every output of one report run).
class RecordTee : public RecordVisitor {
 public:
  RecordTee() = default;
  RecordTee(RecordVisitor& a, RecordVisitor& b) : visitors_{&a, &b} {}
  void Add(RecordVisitor& visitor) { visitors_.push_back(&visitor); }
  void OnSample(const Sample& s) override {
    for (RecordVisitor* v : visitors_) v->OnSample(s);
  }
  void OnMmap(const MmapRecord& r) override {
    for (RecordVisitor* v : visitors_) v->OnMmap(r);
  }
  void OnComm(const CommRecord& r) override {
    for (RecordVisitor* v : visitors_) v->OnComm(r);
  }
  void OnTask(const TaskRecord& r) override {
    for (RecordVisitor* v : visitors_) v->OnTask(r);
  }
  void OnLost(const LostRecord& r) override {
    for (RecordVisitor* v : visitors_) v->OnLost(r);
  }
  void OnThrottle(const ThrottleRecord& r) override {
    for (RecordVisitor* v : visitors_) v->OnThrottle(r);
  }
  void OnSampleAhead(const Sample& s) override {
    for (RecordVisitor* v : visitors_) v->OnSampleAhead(s);
  }
  bool takes_sample_hints() const override {
    for (const RecordVisitor* v : visitors_)
      if (v->takes_sample_hints()) return true;
    return false;
  }
  void OnSamplesAhead(std::span<const Sample> s) override {
    for (RecordVisitor* v : visitors_) v->OnSamplesAhead(s);
  }
  bool takes_sample_runs() const override {
    for (const RecordVisitor* v : visitors_)
      if (v->takes_sample_runs()) return true;
    return false;
  }
  bool has_own_threads() const override {
    for (const RecordVisitor* v : visitors_)
      if (v->has_own_threads()) return true;
    return false;
  }
  bool reads_callers() const override {
    for (const RecordVisitor* v : visitors_)
      if (v->reads_callers()) return true;
    return false;
  }
  bool takes_deferred_callchains() const override {
    for (const RecordVisitor* v : visitors_)
      if (!v->takes_deferred_callchains()) return false;
    return true;
  }

 private:
  std::vector<RecordVisitor*> visitors_;
};

// Visits `sample` in `visitor`, through `scratch` with its callchain completed when the visitor
// does not take deferred callchains (an aggregation passing its new stacks on).
inline void OnSampleWithChainFor(RecordVisitor& visitor, const Sample& sample, Sample& scratch) {
  if (!sample.deferred_callchain || visitor.takes_deferred_callchains())
    return visitor.OnSample(sample);
  scratch = sample;
  CompleteCallchain(scratch);
  visitor.OnSample(scratch);
}

}  // namespace tprof
