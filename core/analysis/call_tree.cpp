#include "core/analysis/call_tree.h"

#include <algorithm>
#include <cassert>
#include <sstream>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "core/base/absl_view.h"

namespace tprof {

size_t CallNode::KeyHash(std::string_view name, std::string_view module, FrameKind kind) {
  // A tree is built from every distinct address's frames (absl_view.h says why AbslView).
  return absl::HashOf(AbslView(name), AbslView(module), kind);
}

CallNode* CallNode::Existing(std::string_view child_name, std::string_view child_module,
                             FrameKind child_kind, size_t key_hash) const {
  // A wrong hash would give this node a second child with the same text.
  assert(key_hash == KeyHash(child_name, child_module, child_kind));
  if (!child_index_)
    return children.size() == 1 && children[0]->Is(child_name, child_module, child_kind)
               ? children[0].get()
               : nullptr;
  auto it = child_index_->find(ChildKey{child_name, child_module, child_kind, key_hash});
  return it == child_index_->end() ? nullptr : it->second;
}

template <typename Text>
CallNode* CallNode::ChildNamed(const Text& child_name, const Text& child_module,
                               FrameKind child_kind, size_t key_hash, size_t events) {
  if (CallNode* found = Existing(child_name, child_module, child_kind, key_hash)) return found;
  auto node = std::make_unique<CallNode>();
  node->name = child_name;  // a copy of a view's text; a SharedString's own
  node->module = child_module;
  node->kind = child_kind;
  node->self.assign(events, 0);
  node->total.assign(events, 0);
  node->self_samples.assign(events, 0);
  return Adopt(std::move(node), key_hash);
}

CallNode* CallNode::Child(std::string_view child_name, std::string_view child_module,
                          FrameKind child_kind, size_t key_hash, size_t events) {
  return ChildNamed(child_name, child_module, child_kind, key_hash, events);
}

CallNode* CallNode::Child(const SharedString& child_name, const SharedString& child_module,
                          FrameKind child_kind, size_t key_hash, size_t events) {
  return ChildNamed(child_name, child_module, child_kind, key_hash, events);
}

CallNode* CallNode::Adopt(std::unique_ptr<CallNode> child) {
  const size_t key_hash = KeyHash(child->name, child->module, child->kind);
  return Adopt(std::move(child), key_hash);
}

CallNode* CallNode::Adopt(std::unique_ptr<CallNode> child, size_t key_hash) {
  CallNode* raw = child.get();
  children.push_back(std::move(child));
  if (children.size() == 1) return raw;  // found without an index (see child_index_)
  if (children.size() == 2) {
    const CallNode& first = *children[0];
    child_index_ = std::make_unique<absl::flat_hash_map<ChildKey, CallNode*>>();
    child_index_->emplace(ChildKey{first.name, first.module, first.kind,
                                   KeyHash(first.name, first.module, first.kind)},
                          children[0].get());
  }
  child_index_->emplace(ChildKey{raw->name, raw->module, raw->kind, key_hash}, raw);
  return raw;
}

const CallNode* CallNode::Find(std::string_view child_name, std::string_view child_module,
                               FrameKind child_kind) const {
  return Existing(child_name, child_module, child_kind,
                  KeyHash(child_name, child_module, child_kind));
}

namespace {

// The name of the root a sample's thread goes under (empty without roots).
std::string RootName(const AddressSpace& space, CallTreeOptions::Roots roots,
                     const Sample& sample) {
  switch (roots) {
    case CallTreeOptions::Roots::kNone:
      break;
    case CallTreeOptions::Roots::kProcess:
      return space.ThreadName(sample.pid, sample.pid);
    case CallTreeOptions::Roots::kPid:
      return space.ThreadName(sample.pid, sample.pid) + "-" + std::to_string(sample.pid);
    case CallTreeOptions::Roots::kThread:
      return space.ThreadName(sample.pid, sample.tid) + "-" + std::to_string(sample.pid) + "/" +
             std::to_string(sample.tid);
  }
  return {};
}

}  // namespace

CallPathBuilder::CallPathBuilder(size_t events, FrameResolver& resolver, CallTreeOptions options)
    : events_(events), resolver_(resolver), options_(options) {
  root_.name = "all";
  root_.kind = FrameKind::kRoot;
  root_.self.assign(events_, 0);
  root_.total.assign(events_, 0);
  root_.self_samples.assign(events_, 0);
}

CallPathBuilder::~CallPathBuilder() {
  // Each node is deleted with its children let go (they are deleted in their own turn, after
  // it): the nodes below the root are all in made_.
  for (auto& child : root_.children) (void)child.release();
  for (CallNode* node : made_) {
    for (auto& child : node->children) (void)child.release();
    delete node;
  }
}

CallNode CallPathBuilder::TakeRoot() {
  made_.clear();  // they go with the root
  return std::move(root_);
}

CallNode* CallPathBuilder::ChildOf(CallNode* node, const SharedString& name,
                                   const SharedString& module, FrameKind kind, size_t key_hash) {
  const size_t children = node->children.size();
  CallNode* child = node->Child(name, module, kind, key_hash, events_);
  if (node->children.size() != children) made_.push_back(child);
  return child;
}

const std::vector<CallPathBuilder::Frame>& CallPathBuilder::FramesAt(uint32_t pid, uint64_t address,
                                                                     bool kernel) {
  const Mapping* mapping = space().Find(pid, address);
  auto [it, inserted] = frame_cache_.try_emplace(FrameKey{mapping, address, kernel}, nullptr);
  if (!inserted) return *it->second;
  return MakeFrames(it->second, pid, mapping, address, kernel,
                    resolver_.FindHeld(pid, mapping, address));
}

const std::vector<CallPathBuilder::Frame>& CallPathBuilder::MakeFrames(
    const std::vector<Frame>*& slot, uint32_t pid, const Mapping* mapping, uint64_t address,
    bool kernel, const ResolvedFrame* held) {
  const ResolvedFrame* resolved = held;
  std::vector<Frame>* made;
  ResolvedFrame resolved_here;  // read for its names, which names_ copies
  if (resolved) {
    auto [of_held, first] = frames_of_held_.try_emplace(std::pair{resolved, kernel});
    if (!first) {
      slot = of_held->second.get();
      return *slot;
    }
    of_held->second = std::make_unique<std::vector<Frame>>();
    made = of_held->second.get();
  } else {  // a frame of this address alone: nothing to share
    resolved_here = resolver_.ResolveInProcess(pid, mapping, address);
    resolved = &resolved_here;
    made = owned_.emplace_back(std::make_unique<std::vector<Frame>>()).get();
  }
  std::vector<Frame>& frames = *made;
  slot = &frames;
  const FrameKind base = kernel ? FrameKind::kKernel : FrameKind::kUser;
  const FunctionAttribution attribution(options_.expand_inlined ? InlineMode::kInnermost
                                                                : InlineMode::kPhysical);
  // Levels are innermost first; the tree wants the outermost (out-of-line) first.
  const SharedString module =
      options_.ignore_module ? SharedString() : names_.Intern(resolved->module);
  for (uint32_t level = attribution.Depth(*resolved); level-- > 0;) {
    const SharedString& name = names_.Intern(attribution.Name(*resolved, level));
    const FrameKind kind = attribution.Inlined(*resolved, level) ? FrameKind::kInlined : base;
    frames.push_back({name, module, kind, CallNode::KeyHash(name, module, kind)});
  }
  return frames;
}

void CallPathBuilder::LookUpAhead(std::span<const Ahead> ahead) {
  // In blocks, so what one step of a block fetches is still in the cache at its next step.
  constexpr size_t kBlock = 64;
  for (size_t begin = 0; begin < ahead.size(); begin += kBlock) {
    const std::span<const Ahead> block =
        ahead.subspan(begin, std::min(kBlock, ahead.size() - begin));
    for (const Ahead& a : block) frame_cache_.prefetch(FrameKey{a.mapping, a.address, a.kernel});
    queries_.clear();
    query_kernel_.clear();
    for (const Ahead& a : block)
      if (!frame_cache_.contains(FrameKey{a.mapping, a.address, a.kernel})) {
        queries_.push_back({a.pid, a.mapping, a.address, nullptr});
        query_kernel_.push_back(a.kernel);
      }
    if (queries_.empty()) continue;
    resolver_.FindHeldMany(queries_);
    for (size_t i = 0; i < queries_.size(); ++i) {
      const FrameResolver::HeldQuery& q = queries_[i];
      auto [it, inserted] =
          frame_cache_.try_emplace(FrameKey{q.mapping, q.address, query_kernel_[i]}, nullptr);
      if (inserted)  // once for one asked twice
        MakeFrames(it->second, q.pid, q.mapping, q.address, query_kernel_[i], q.frame);
    }
  }
}

void CallPathBuilder::OnSamplesAhead(std::span<const Sample> samples) {
  // Only leaves whose frame is the same whichever process asks: the frame cache is not keyed by
  // process.
  ahead_.clear();
  for (const Sample& sample : samples) {
    const SplitStack split = SplitLeaf(sample);
    if (!split.has_leaf || (split.leaf_kernel && !options_.include_kernel)) continue;
    const Mapping* mapping = space().Find(sample.pid, split.leaf);
    if (NamedAlikeInEveryProcess(mapping, split.leaf))
      ahead_.push_back({sample.pid, mapping, split.leaf, split.leaf_kernel});
  }
  LookUpAhead(ahead_);
}

CallNode* CallPathBuilder::Descend(CallNode* node, uint32_t pid, uint64_t address, bool kernel) {
  if (kernel && !options_.include_kernel) return node;
  for (const Frame& f : FramesAt(pid, address, kernel))
    node = ChildOf(node, f.name, f.module, f.kind, f.key_hash);
  return node;
}

CallNode* CallPathBuilder::RootOf(const Sample& sample) {
  if (options_.roots == CallTreeOptions::Roots::kNone) return &root_;
  auto [it, inserted] = thread_roots_.try_emplace(uint64_t{sample.pid} << 32 | sample.tid);
  if (inserted) {
    const SharedString name(RootName(space(), options_.roots, sample));
    it->second = ChildOf(&root_, name, SharedString(), FrameKind::kRoot,
                         CallNode::KeyHash(name, "", FrameKind::kRoot));
  }
  return it->second;
}

void CallPathBuilder::OnSample(const Sample& sample) {
  // The path of a new stack: its callers' part, root first, is shared by every stack with the
  // same callers; then the leaf's frames.
  CallNode* top = RootOf(sample);
  const SplitStack split = SplitLeaf(sample);
  // Nodes never move, so the top node's address tells roots apart.
  const auto callers = caller_ids_.Intern(sample, split, reinterpret_cast<uintptr_t>(top),
                                          space().GenerationOf(sample.pid));
  if (callers.first) {
    // The callers' frames, mostly new early in a profile, looked up together first: one
    // process asks for them all, so the order they are asked in names nothing differently.
    ahead_.clear();  // leaf side first
    ForEachCallerAddress(split.callers, split.callers_kernel, [&](uint64_t address, bool kernel) {
      if (!kernel || options_.include_kernel)
        ahead_.push_back({sample.pid, space().Find(sample.pid, address), address, kernel});
      return true;
    });
    LookUpAhead(ahead_);
    CallNode* node = top;
    for (auto it = ahead_.rbegin(); it != ahead_.rend(); ++it)
      node = Descend(node, sample.pid, it->address, it->kernel);
    callers_node_.push_back(node);
  }
  CallNode* leaf = callers_node_[callers.id];
  if (split.has_leaf) leaf = Descend(leaf, sample.pid, split.leaf, split.leaf_kernel);
  leaf_of_stack_.push_back(leaf);
}

CallTreeBuilder::CallTreeBuilder(std::vector<EventDesc> events, FrameResolver& resolver,
                                 CallTreeOptions options)
    : events_(std::move(events)),
      options_(options),
      tally_(events_.size()),
      paths_(events_.size(), resolver, options),
      rhythm_(events_),
      left_out_(events_),
      windows_(events_) {
  timed_windows_.groups = windows_.groups();
  // The path thread falls far behind early in a profile, when most stacks are new, and idles
  // later: it is given room for tens of thousands of first samples (as the report table's
  // stack-row thread is) rather than stalling the tally. Measured on 1M samples: 16 or 64
  // batches took 1.1-1.2x the time of 256.
  paths_thread_ =
      std::make_unique<BackgroundReplay>(paths_, /*batch_records=*/256, /*batches=*/256);
}

void CallTreeBuilder::OnMmap(const MmapRecord& r) {
  hinted_.Forget();
  ProcessTrackingVisitor::OnMmap(r);
  ToPaths().OnMmap(r);
}

void CallTreeBuilder::OnComm(const CommRecord& r) {
  hinted_.Forget();
  ProcessTrackingVisitor::OnComm(r);
  ToPaths().OnComm(r);
}

void CallTreeBuilder::OnTask(const TaskRecord& r) {
  hinted_.Forget();
  ProcessTrackingVisitor::OnTask(r);
  ToPaths().OnTask(r);
}

uint64_t CallTreeBuilder::RootTagOf(const Sample& sample) {
  if (options_.roots == CallTreeOptions::Roots::kNone) return 0;
  auto [it, inserted] = root_of_thread_.try_emplace(uint64_t{sample.pid} << 32 | sample.tid);
  if (inserted)
    it->second =
        root_tags_.try_emplace(RootName(space(), options_.roots, sample), root_tags_.size())
            .first->second;
  return it->second;
}

void CallTreeBuilder::OnSampleAhead(const Sample& sample) {
  // Only for a thread already known: the hint must not change the tree.
  uint64_t tag = 0;
  if (options_.roots != CallTreeOptions::Roots::kNone) {
    const auto it = root_of_thread_.find(uint64_t{sample.pid} << 32 | sample.tid);
    if (it == root_of_thread_.end()) return;
    tag = it->second;
  }
  const StackInterner::Key key = StackTally::KeyOf(sample, tag, space().GenerationOf(sample.pid));
  tally_.Prefetch(key);
  hinted_.Hinted(sample, key);
}

void CallTreeBuilder::OnSample(const Sample& sample) {
  StackInterner::Key key;
  const bool hinted = hinted_.Visit(sample, &key);
  if (sample.event >= events_.size()) return;
  const auto stack = hinted
                         ? tally_.Add(sample, key)
                         : tally_.Add(sample, RootTagOf(sample), space().GenerationOf(sample.pid));
  ++samples_;
  if (keep_times_) {
    times_.push_back({sample.time, sample.period, sample.pid, sample.tid,
                      static_cast<uint32_t>(stack.id), sample.event});
    if (const int g = windows_.any() ? windows_.Close(sample, &window_deltas_) : -1; g >= 0) {
      timed_windows_.windows.push_back({sample.time, static_cast<uint32_t>(g),
                                        static_cast<uint32_t>(timed_windows_.deltas.size())});
      timed_windows_.deltas.insert(timed_windows_.deltas.end(), window_deltas_.begin(),
                                   window_deltas_.end());
    }
  }
  if (left_out_.any()) left_out_.Add(sample);
  if (stack.first) OnSampleWithChainFor(ToPaths(), sample, completed_);
  if (rhythm_.Watches(sample.event))
    rhythm_.Add(sample, stack.id);
  else if (rhythm_.watches_any())
    rhythm_.AddOther(sample, stack.id);
}

const CallNode& CallTreeBuilder::root() {
  if (paths_thread_) {
    paths_thread_->Finish();
    paths_thread_.reset();
  }
  CallNode& root = paths_.root();
  if (samples_in_tree_ == samples_) return root;
  // The nodes as they were made: reversed, every node comes after all of its children.
  const std::vector<CallNode*>& made = paths_.made();
  auto clear_self = [](CallNode* node) {
    std::fill(node->self.begin(), node->self.end(), 0);
    std::fill(node->self_samples.begin(), node->self_samples.end(), 0);
  };
  clear_self(&root);
  for (CallNode* node : made) clear_self(node);
  const std::vector<CallNode*>& leaf_of_stack = paths_.leaf_of_stack();
  for (uint32_t s = 0; s < leaf_of_stack.size(); ++s) {
    CallNode* leaf = leaf_of_stack[s];
    for (size_t e = 0; e < events_.size(); ++e) {
      leaf->self[e] += tally_.period(s, e);
      leaf->self_samples[e] += tally_.samples(s, e);
    }
  }
  // A node's total is its self plus its children's totals: every sample's path is one chain
  // that ends where its self is counted.
  auto add_children = [&](CallNode* node) {
    node->total = node->self;
    for (const auto& child : node->children)
      for (size_t e = 0; e < events_.size(); ++e) node->total[e] += child->total[e];
  };
  for (auto it = made.rbegin(); it != made.rend(); ++it) add_children(*it);
  add_children(&root);
  samples_in_tree_ = samples_;
  return root;
}

const ClockRhythmFinding* FrameClockRhythm::FindingOf(size_t event) const {
  return OfEvent(findings, event);
}

const ClockRhythmCount* FrameClockRhythm::CountOf(const CallNode* node, size_t event) const {
  auto it = counts.find(node);
  return it == counts.end() ? nullptr : OfEvent(it->second, event);
}

FrameClockRhythm CallTreeBuilder::ClockRhythmOfFrames() {
  const CallNode& root_node = root();
  const std::vector<CallNode*>& leaf_of_stack = paths_.leaf_of_stack();
  FrameClockRhythm out;
  // A leaf frame is its function on its path: an inlined helper's frame under one caller is not
  // its frame under another, which is what a loop through three callers of it repeats.
  ClockRhythm::Result found = rhythm_.Find(
      [&](uint32_t stack) { return reinterpret_cast<uintptr_t>(leaf_of_stack[stack]); });
  out.findings = found.findings;
  if (found.findings.empty()) return out;
  // Each frame's parent and depth: the frames a sample counts toward are its leaf's ancestors,
  // and where the loop steps from one stack to another it leaves those below their lowest
  // common one.
  absl::flat_hash_map<const CallNode*, std::pair<const CallNode*, uint32_t>> up;
  up[&root_node] = {nullptr, 0};
  for (const auto& child : root_node.children) up[child.get()] = {&root_node, 1};
  for (const CallNode* node : paths_.made())  // a parent before its children
    for (const auto& child : node->children) up[child.get()] = {node, up[node].second + 1};
  const auto count_of = [&](const CallNode* node, uint32_t event) -> ClockRhythmCount& {
    return CountOfEvent(out.counts[node], event);
  };
  for (size_t f = 0; f < found.findings.size(); ++f) {
    const uint32_t event = found.findings[f].event;
    for (const auto& [stack, counts] : found.stacks[f]) {
      const CallNode* leaf = leaf_of_stack[stack];
      count_of(leaf, event).AddSelf(counts);
      for (const CallNode* node = leaf; node; node = up[node].first)
        count_of(node, event).AddTotal(counts);
    }
    for (const auto& [step, times] : found.steps[f]) {
      const CallNode* from = leaf_of_stack[step.first];
      const CallNode* to = leaf_of_stack[step.second];
      if (from != to) count_of(from, event).self_exits += times;
      while (from != to) {
        // The deeper of the two climbs first; the frames `from` passes are left.
        if (up[from].second >= up[to].second) {
          count_of(from, event).total_exits += times;
          from = up[from].first;
        } else {
          to = up[to].first;
        }
      }
    }
    // Where the other events' samples show the thread entering frames: those `to` passes below
    // the lowest frame it shares with `from`.
    const auto count_entries = [&](const auto& steps, uint64_t ClockRhythmCount::*self,
                                   uint64_t ClockRhythmCount::*total) {
      for (const auto& [step, times] : steps) {
        const CallNode* from = leaf_of_stack[step.first];
        const CallNode* to = leaf_of_stack[step.second];
        if (from != to) count_of(to, event).*self += times;
        while (from != to) {
          if (up[to].second >= up[from].second) {
            count_of(to, event).*total += times;
            to = up[to].first;
          } else {
            from = up[from].first;
          }
        }
      }
    };
    count_entries(found.other_steps[f], &ClockRhythmCount::self_entries,
                  &ClockRhythmCount::total_entries);
    // ... and the clock's own samples.
    count_entries(found.clock_steps[f], &ClockRhythmCount::self_clock_entries,
                  &ClockRhythmCount::total_clock_entries);
  }
  return out;
}

CallNode CallTreeBuilder::TakeRoot() {
  root();
  return paths_.TakeRoot();
}

size_t AppendSumOfEvents(CallNode& root, size_t a, size_t b) {
  const size_t added = root.total.size();
  // Iterative: broken frame pointers make towers of hundreds of frames.
  std::vector<CallNode*> pending{&root};
  while (!pending.empty()) {
    CallNode* node = pending.back();
    pending.pop_back();
    for (EventCounts* column : {&node->self, &node->total, &node->self_samples}) {
      const uint64_t sum = (*column)[a] + (*column)[b];
      column->push_back(sum);
    }
    for (const auto& child : node->children) pending.push_back(child.get());
  }
  return added;
}

}  // namespace tprof
