// Samples aggregated into a tree of calls, root first: every distinct path of functions from a
// root (optionally a process or thread) to a leaf is one node chain, with the period each event
// spent exactly there (self) and below (total). Inlined calls are frames of their own. The tree
// is what folded stacks, flame graphs and exporters render.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "core/analysis/clock_left_out.h"
#include "core/analysis/clock_rhythm.h"
#include "core/analysis/function_attribution.h"
#include "core/analysis/group_windows_by_time.h"
#include "core/base/shared_string.h"
#include "core/model/address_space.h"
#include "core/model/frame_resolver.h"
#include "core/model/profile.h"
#include "core/model/record_batch.h"
#include "core/model/stack_tally.h"

namespace tprof {

enum class FrameKind : uint8_t { kUser, kKernel, kInlined, kRoot };

// A node's counts, one per event. Most trees have one or two events: those are kept in the node
// itself rather than in an allocation of their own (a tree has hundreds of thousands of nodes,
// each with three of these).
using EventCounts = absl::InlinedVector<uint64_t, 2>;

// A node's names are shared texts (SharedString): the nodes a CallPathBuilder makes for one
// function share one copy of its names, and a tree built from another CallNode tree (a mean,
// a selection of events) shares them too, whatever outlives what. A node's names are not
// changed once it is a child: its parent's index views their text.
struct CallNode {
  SharedString name;
  SharedString module;
  FrameKind kind = FrameKind::kUser;
  EventCounts self;   // per event: period of samples whose leaf is this node
  EventCounts total;  // per event: period of samples through this node
  EventCounts self_samples;
  std::vector<std::unique_ptr<CallNode>> children;

  // The child with this name, module and kind; a new one with zero counts for `events` events
  // when there is none.
  CallNode* Child(std::string_view name, std::string_view module, FrameKind kind, size_t events) {
    return Child(name, module, kind, KeyHash(name, module, kind), events);
  }
  // The same, given KeyHash(name, module, kind): a caller that steps to the same frame's child
  // under many parents hashes the frame's long names once rather than at every step.
  CallNode* Child(std::string_view name, std::string_view module, FrameKind kind, size_t key_hash,
                  size_t events);
  // The same with names already shared: a new child shares them rather than copying the text.
  CallNode* Child(const SharedString& name, const SharedString& module, FrameKind kind,
                  size_t events) {
    return Child(name, module, kind, KeyHash(name, module, kind), events);
  }
  CallNode* Child(const SharedString& name, const SharedString& module, FrameKind kind,
                  size_t key_hash, size_t events);
  static size_t KeyHash(std::string_view name, std::string_view module, FrameKind kind);
  // Appends a child built elsewhere (its name, module and kind set); returns it.
  CallNode* Adopt(std::unique_ptr<CallNode> child);
  // The child with this name, module and kind, or null.
  const CallNode* Find(std::string_view name, std::string_view module, FrameKind kind) const;

 private:
  struct ChildKey {
    std::string_view name, module;  // the child's own strings: children never move
    FrameKind kind;
    size_t hash;  // KeyHash of the three, kept so that the index's growth rehashes no names
    bool operator==(const ChildKey& o) const {
      return hash == o.hash && Same(name, module, kind, o.name, o.module, o.kind);
    }
    template <typename H>
    friend H AbslHashValue(H h, const ChildKey& k) {
      return H::combine(std::move(h), k.hash);
    }
  };
  CallNode* Adopt(std::unique_ptr<CallNode> child, size_t key_hash);
  // The child with this key, or null (Child's and Find's lookup).
  CallNode* Existing(std::string_view name, std::string_view module, FrameKind kind,
                     size_t key_hash) const;
  // Child's body for both kinds of text (std::string_view, SharedString).
  template <typename Text>
  CallNode* ChildNamed(const Text& name, const Text& module, FrameKind kind, size_t key_hash,
                       size_t events);
  bool Is(std::string_view other_name, std::string_view other_module, FrameKind other_kind) const {
    return Same(name, module, kind, other_name, other_module, other_kind);
  }
  // Whether two children's keys are equal (Is and ChildKey's one test). A child is mostly looked
  // for by the names it shares (the frame's, which it was made from): equal views are equal texts
  // without reading them.
  static bool Same(std::string_view name, std::string_view module, FrameKind kind,
                   std::string_view other_name, std::string_view other_module,
                   FrameKind other_kind) {
    auto same_text = [](std::string_view a, std::string_view b) {
      return a.size() == b.size() && (a.data() == b.data() || a == b);
    };
    return kind == other_kind && same_text(name, other_name) && same_text(module, other_module);
  }
  // The children by key, once there are two or more: most nodes have one child (177,683 of the
  // 178,945 parents of the benchmark profile's 198,914 nodes), which is found by comparing it,
  // and a table of one entry cost some 80 bytes of heap a node. Held by pointer: the table's
  // 40 bytes in every node made it 160 bytes, and every walk of a large tree (its totals, its
  // folded lines, its destruction) reads three cache lines a node rather than two.
  std::unique_ptr<absl::flat_hash_map<ChildKey, CallNode*>> child_index_;
};

struct CallTreeOptions {
  enum class Roots { kNone, kProcess, kPid, kThread } roots = Roots::kNone;
  bool include_kernel = true;
  bool expand_inlined = true;  // inlined calls are frames of their own (FunctionAttribution)
  // Frames by function name alone, the module left empty: `diff --ignore-module` pairs a
  // renamed program's frames with the old ones.
  bool ignore_module = false;
};

// The tree's paths: each distinct stack's chain of nodes, made at the stack's first sample.
// Resolving a new stack's frames and walking them down the tree is most of a tree's work, and
// it is needed once per distinct stack, so it can run on a thread of its own beside the tally
// (as StackRowResolver does for the report table): it is fed every mapping, name and task
// record in order, but of the samples only the first of each distinct stack, in the tally's
// order (its n-th sample is stack n).
class CallPathBuilder : public ProcessTrackingVisitor {
 public:
  CallPathBuilder(size_t events, FrameResolver& resolver, CallTreeOptions options);
  // Takes the tree apart in the order its nodes were made (see made_).
  ~CallPathBuilder() override;
  CallPathBuilder(const CallPathBuilder&) = delete;
  CallPathBuilder& operator=(const CallPathBuilder&) = delete;

  // The first sample of the next stack.
  void OnSample(const Sample& sample) override;
  // The next samples, one per new stack: their leaves, mostly new addresses, are looked up
  // together.
  void OnSamplesAhead(std::span<const Sample> samples) override;
  bool takes_sample_runs() const override { return true; }

  // The tree. Its nodes are made by this builder alone: add none to it (see made_).
  CallNode& root() { return root_; }
  // The tree, moved out; the builder makes no more nodes after.
  CallNode TakeRoot();
  // Every node below the root, in the order they were made: a node comes after its parent.
  const std::vector<CallNode*>& made() const { return made_; }
  // By stack id: the node where the stack's samples are counted as self.
  const std::vector<CallNode*>& leaf_of_stack() const { return leaf_of_stack_; }

 private:
  void OnThreadsChanged() override { thread_roots_.clear(); }  // names may have changed
  struct Frame {
    SharedString name, module;  // from names_: one copy of each text for the whole tree
    FrameKind kind;
    size_t key_hash;  // CallNode::KeyHash of the three: hashed once per resolved frame
  };
  // The frames of one address, outermost first (inlined callers before their inlinees).
  const std::vector<Frame>& FramesAt(uint32_t pid, uint64_t address, bool kernel);
  // The frames of an address not cached yet, made into its cache slot from what the resolver
  // holds for it (`held`, null when it holds nothing).
  const std::vector<Frame>& MakeFrames(const std::vector<Frame>*& slot, uint32_t pid,
                                       const Mapping* mapping, uint64_t address, bool kernel,
                                       const ResolvedFrame* held);
  // An address to look up ahead of the frames asked for it (FramesAt).
  struct Ahead {
    uint32_t pid;
    const Mapping* mapping;
    uint64_t address;
    bool kernel;
  };
  // Looks up together the frames of the addresses not cached yet (FrameResolver::FindHeldMany):
  // a lookup in an embedded symbol table waits for memory several times in turn.
  void LookUpAhead(std::span<const Ahead> ahead);
  CallNode* RootOf(const Sample& sample);
  // node->Child(...), with a new child counted in made_.
  CallNode* ChildOf(CallNode* node, const SharedString& name, const SharedString& module,
                    FrameKind kind, size_t key_hash);
  // Extends the tree by `node`'s callee path for the frames at `address`.
  CallNode* Descend(CallNode* node, uint32_t pid, uint64_t address, bool kernel);

  size_t events_;
  FrameResolver& resolver_;
  CallTreeOptions options_;
  CallNode root_;
  // The nodes below root_ as they were made, which is mostly their order in memory: walks of
  // every node (the counts, the tree's end) go through them in this order. A large tree taken
  // apart recursively, each node after its parent's other children, read 200k scattered nodes
  // (27 ms of a 0.4 s --folded report of 1M samples).
  std::vector<CallNode*> made_;
  struct FrameKey {
    const Mapping* mapping;
    uint64_t address;
    bool kernel;
    bool operator==(const FrameKey&) const = default;
    template <typename H>
    friend H AbslHashValue(H h, const FrameKey& k) {
      return H::combine(std::move(h), k.mapping, k.address, k.kernel);
    }
  };
  absl::flat_hash_map<FrameKey, const std::vector<Frame>*> frame_cache_;
  // The frames of each frame the resolver holds, as kernel code or not: the addresses of one
  // function (of one line) share a held frame, so its names are hashed and its frames stored
  // once for them all (a profile's 149,478 distinct addresses had 3,240 held frames). A frame
  // resolved for one address (a perf.data's, by the live symbolizer) is nobody else's, and its
  // frames are kept on their own: shared through this map they cost 3 % more instructions.
  absl::flat_hash_map<std::pair<const ResolvedFrame*, bool>, std::unique_ptr<std::vector<Frame>>>
      frames_of_held_;
  std::vector<std::unique_ptr<std::vector<Frame>>> owned_;  // of frames the resolver does not hold
  absl::flat_hash_map<uint64_t, CallNode*> thread_roots_;   // pid << 32 | tid
  std::vector<CallNode*> leaf_of_stack_;                    // by stack id
  CallerInterner caller_ids_;
  std::vector<CallNode*> callers_node_;            // by caller id: the node the callers lead to
  std::vector<Ahead> ahead_;                       // OnSample's and OnSamplesAhead's, reused
  std::vector<FrameResolver::HeldQuery> queries_;  // LookUpAhead's
  std::vector<bool> query_kernel_;                 // by query
  SharedStringPool names_;                         // the frames' names and modules
};

// Samples are tallied per distinct stack (StackTally) and each stack's path is built once, by a
// CallPathBuilder on a thread of its own; the nodes' counts are filled in from the tallies when
// the tree is asked for.
// For a timer clock whose samples fell in step with a loop on some thread (ClockRhythm): the
// findings, and per frame its counts as a Total% row's (its samples are those through it).
struct FrameClockRhythm {
  std::vector<ClockRhythmFinding> findings;
  absl::flat_hash_map<const CallNode*, std::vector<ClockRhythmCount>> counts;
  const ClockRhythmFinding* FindingOf(size_t event) const;
  const ClockRhythmCount* CountOf(const CallNode* node, size_t event) const;
};

// One sample as the tree tallied it, for views over time (a flame graph page's timeline): when
// it was taken, by which thread, and the stack it was counted under (CallPathBuilder's id).
struct TimedStackSample {
  uint64_t time = 0;
  uint64_t period = 0;
  uint32_t pid = 0, tid = 0;
  uint32_t stack = 0;
  uint32_t event = 0;
};

class CallTreeBuilder : public ProcessTrackingVisitor {
 public:
  CallTreeBuilder(std::vector<EventDesc> events, FrameResolver& resolver, CallTreeOptions options);

  void OnSample(const Sample& sample) override;
  // Prefetches the sample's slot in the stack tally (larger than the caches).
  void OnSampleAhead(const Sample& sample) override;
  bool takes_sample_hints() const override { return true; }
  void OnMmap(const MmapRecord& r) override;
  void OnComm(const CommRecord& r) override;
  void OnTask(const TaskRecord& r) override;
  void OnLost(const LostRecord& r) override {
    lost_ += r.lost;
    windows_.Interrupt();
    left_out_.Interrupt();
  }
  void OnThrottle(const ThrottleRecord& r) override {
    windows_.Interrupt();
    left_out_.Interrupt(r.event);
  }
  bool has_own_threads() const override { return paths_thread_ != nullptr; }
  // A deferred chain is decoded for a new stack alone (see ReportTableBuilder).
  bool takes_deferred_callchains() const override { return true; }

  // The tree of every sample so far. Later samples are built into the tree on the caller's
  // thread.
  const CallNode& root();
  // The tree, moved out: for callers that keep the tree but not the builder's caches (or the
  // resolver they borrow from). The builder takes no more samples after.
  CallNode TakeRoot();
  const std::vector<EventDesc>& events() const { return events_; }
  // Samples the kernel lost while recording (PERF_RECORD_LOST and LOST_SAMPLES), of any event.
  uint64_t lost() const { return lost_; }
  // Where a timer clock's samples fell in step with a loop (ClockRhythm), per frame of the tree
  // (root() first); the leaf frames, each a function on its path, are what repeats.
  FrameClockRhythm ClockRhythmOfFrames();
  // A clock sampled in one mode that reads itself, per event: the time its samples left out.
  const ClockLeftOutTime& clock_left_out() const { return left_out_; }
  // Keeps every sample's time, thread and stack from now on (32 bytes a sample), and every read
  // group's whole windows with their times.
  void KeepSampleTimes() { keep_times_ = true; }
  const std::vector<TimedStackSample>& sample_times() const { return times_; }
  const TimedGroupWindows& group_windows() const { return timed_windows_; }
  // By stack id: the node where the stack's samples are counted as self (after root()).
  const std::vector<CallNode*>& leaf_of_stack() const { return paths_.leaf_of_stack(); }
  // A thread's name as the records so far give it.
  std::string ThreadName(uint32_t pid, uint32_t tid) const { return space().ThreadName(pid, tid); }

 private:
  uint64_t lost_ = 0;
  void OnThreadsChanged() override { root_of_thread_.clear(); }  // names may have changed
  // What the tally keeps the roots' samples apart by: the root's name, as an id (0 for the
  // one root when the tree has no process or thread roots).
  uint64_t RootTagOf(const Sample& sample);
  // Where records for paths_ go: its thread, or paths_ itself once the tree has been asked for.
  RecordVisitor& ToPaths() {
    return paths_thread_ ? static_cast<RecordVisitor&>(*paths_thread_) : paths_;
  }

  std::vector<EventDesc> events_;
  CallTreeOptions options_;
  absl::flat_hash_map<uint64_t, uint64_t> root_of_thread_;  // pid << 32 | tid -> RootTagOf
  absl::flat_hash_map<std::string, uint64_t> root_tags_;    // root name -> tag
  StackTally tally_;
  HintedStackKeys hinted_;  // the tally keys of hinted samples
  CallPathBuilder paths_;
  std::unique_ptr<BackgroundReplay> paths_thread_;  // paths_ on its thread until root()
  Sample completed_;  // a new stack's sample with its callchain completed, for paths_ in line
  uint64_t samples_ = 0;
  uint64_t samples_in_tree_ = 0;  // samples the nodes' counts include
  ClockRhythm rhythm_;
  ClockLeftOutTime left_out_;
  bool keep_times_ = false;
  std::vector<TimedStackSample> times_;
  GroupWindowsByTime windows_;
  TimedGroupWindows timed_windows_;
  std::vector<double> window_deltas_;  // scratch
};

// Appends to every node of the tree an event whose values are the sum of events `a` and `b`
// (wall time: on-CPU plus off-CPU nanoseconds); returns the new event's index.
size_t AppendSumOfEvents(CallNode& root, size_t a, size_t b);

}  // namespace tprof
