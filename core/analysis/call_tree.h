// Samples aggregated into a tree of calls, root first: every distinct path of functions from a
// root (optionally a process or thread) to a leaf is one node chain, with the period each event
// spent exactly there (self) and below (total). Inlined calls are frames of their own. The tree
// is what folded stacks, flame graphs and exporters render.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/analysis/function_attribution.h"
#include "core/model/address_space.h"
#include "core/model/frame_resolver.h"
#include "core/model/profile.h"
#include "core/model/stack_tally.h"

namespace tprof {

enum class FrameKind : uint8_t { kUser, kKernel, kInlined, kRoot };

struct CallNode {
  std::string name;
  std::string module;
  FrameKind kind = FrameKind::kUser;
  std::vector<uint64_t> self;   // per event: period of samples whose leaf is this node
  std::vector<uint64_t> total;  // per event: period of samples through this node
  std::vector<uint64_t> self_samples;
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
      return hash == o.hash && kind == o.kind && name == o.name && module == o.module;
    }
    template <typename H>
    friend H AbslHashValue(H h, const ChildKey& k) {
      return H::combine(std::move(h), k.hash);
    }
  };
  CallNode* Adopt(std::unique_ptr<CallNode> child, size_t key_hash);
  absl::flat_hash_map<ChildKey, CallNode*> child_index_;
};

struct CallTreeOptions {
  enum class Roots { kNone, kProcess, kPid, kThread } roots = Roots::kNone;
  bool include_kernel = true;
  bool expand_inlined = true;  // inlined calls are frames of their own (FunctionAttribution)
  // Frames by function name alone, the module left empty: `diff --ignore-module` pairs a
  // renamed program's frames with the old ones.
  bool ignore_module = false;
};

// Samples are tallied per distinct stack (StackTally) and each stack's path is built once; the
// nodes' counts are filled in from the tallies when the tree is asked for.
class CallTreeBuilder : public ProcessTrackingVisitor {
 public:
  CallTreeBuilder(std::vector<EventDesc> events, FrameResolver& resolver, CallTreeOptions options);

  void OnSample(const Sample& sample) override;
  // Prefetches the sample's slot in the stack tally (larger than the caches).
  void OnSampleAhead(const Sample& sample) override;
  bool takes_sample_hints() const override { return true; }

  // The tree of every sample so far.
  const CallNode& root();
  // The tree, moved out: for callers that keep the tree but not the builder's caches (or the
  // resolver they borrow from). The builder takes no more samples after.
  CallNode TakeRoot();
  const std::vector<EventDesc>& events() const { return events_; }

 private:
  void OnThreadsChanged() override { thread_roots_.clear(); }  // names may have changed
  struct Frame {
    std::string_view name, module;  // into a ResolvedFrame held by the resolver or owned_
    FrameKind kind;
    size_t key_hash;  // CallNode::KeyHash of the three: hashed once per distinct address
  };
  // The frames of one address, outermost first (inlined callers before their inlinees).
  const std::vector<Frame>& FramesAt(uint32_t pid, uint64_t address, bool kernel);
  CallNode* RootOf(const Sample& sample);
  // Extends the tree by `node`'s callee path for the frames at `address`.
  CallNode* Descend(CallNode* node, uint32_t pid, uint64_t address, bool kernel);

  std::vector<EventDesc> events_;
  FrameResolver& resolver_;
  CallTreeOptions options_;
  CallNode root_;
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
  absl::flat_hash_map<FrameKey, std::vector<Frame>> frame_cache_;
  std::vector<std::unique_ptr<ResolvedFrame>> owned_;      // frames the resolver does not hold
  absl::flat_hash_map<uint64_t, CallNode*> thread_roots_;  // pid << 32 | tid
  StackTally tally_;
  std::vector<CallNode*> leaf_of_stack_;  // by stack id
  StackInterner caller_ids_;
  std::vector<CallNode*> callers_node_;  // by caller id: the node the callers lead to
  uint64_t samples_ = 0;
  uint64_t samples_in_tree_ = 0;  // samples the nodes' counts include
};

// Appends to every node of the tree an event whose values are the sum of events `a` and `b`
// (wall time: on-CPU plus off-CPU nanoseconds); returns the new event's index.
size_t AppendSumOfEvents(CallNode& root, size_t a, size_t b);

}  // namespace tprof
