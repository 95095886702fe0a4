// Call trees and folded stacks from constructed samples, with a resolver that names addresses.
#include "core/analysis/call_tree.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <span>

#include "report/folded_stacks.h"
#include "test/support/mapping_named_resolver.h"

namespace tprof {
namespace {

// Names each address "f<hex>", except a few that carry inline chains.
class NamingResolver : public FrameResolver {
 public:
  ResolvedFrame Resolve(const Mapping*, uint64_t address) override {
    ++calls;
    ResolvedFrame f;
    char name[32];
    std::snprintf(name, sizeof name, "f%llx", static_cast<unsigned long long>(address));
    f.function = name;
    f.module = IsKernelAddress(address) ? "[kernel.kallsyms]" : "prog";
    if (address == 0x500) {  // helper inlined into caller inlined into outer
      f.function = "outer";
      f.frames = {{"helper", "", "a.cc", 3, 0, true},
                  {"caller", "", "a.cc", 9, 0, true},
                  {"outer", "", "a.cc", 20, 0, false}};
    }
    return f;
  }
  int calls = 0;
};

std::vector<EventDesc> OneEvent() {
  std::vector<EventDesc> events(1);
  events[0].name = "cycles";
  return events;
}

Sample At(uint64_t period, std::vector<uint64_t> chain, uint32_t tid = 10) {
  Sample s;
  s.pid = 10;
  s.tid = tid;
  s.period = period;
  s.ip = chain.empty() ? 0 : (IsContextMarker(chain[0]) ? chain[1] : chain[0]);
  s.callchain = std::move(chain);
  return s;
}

// A node finds its one child by comparing it, and its children by an index from the second
// on: every child stays found by its name, module and kind, and only by all three.
TEST(CallTreeTest, ChildrenAreFoundByNameModuleAndKindFromTheFirstToTheLast) {
  CallNode node;
  CallNode* f = node.Child("f", "prog", FrameKind::kUser, 1);
  EXPECT_EQ(node.Child("f", "prog", FrameKind::kUser, 1), f);
  EXPECT_EQ(node.Find("f", "prog", FrameKind::kUser), f);
  EXPECT_EQ(node.Find("f", "lib", FrameKind::kUser), nullptr);
  EXPECT_EQ(node.Find("f", "prog", FrameKind::kInlined), nullptr);
  EXPECT_EQ(node.Find("g", "prog", FrameKind::kUser), nullptr);
  CallNode* f_inlined = node.Child("f", "prog", FrameKind::kInlined, 1);
  CallNode* f_lib = node.Child("f", "lib", FrameKind::kUser, 1);
  CallNode* g = node.Child("g", "prog", FrameKind::kUser, 1);
  EXPECT_EQ(node.children.size(), 4u);
  EXPECT_NE(f_inlined, f);
  EXPECT_NE(f_lib, f);
  for (CallNode* child : {f, f_inlined, f_lib, g}) {
    EXPECT_EQ(node.Find(child->name, child->module, child->kind), child) << child->name;
    EXPECT_EQ(node.Child(child->name, child->module, child->kind, 1), child) << child->name;
  }
  EXPECT_EQ(node.children.size(), 4u);
}

TEST(CallTreeTest, FoldedStacksRootFirstWithKernelMarksAndCallSites) {
  NamingResolver resolver;
  CallTreeBuilder builder(OneEvent(), resolver, {});
  const uint64_t k1 = 0xffffffff81000010, k2 = 0xffffffff81000020;
  // A kernel sample under a user stack: kernel part, then the user pc and return addresses.
  builder.OnSample(At(5, {kContextKernel, k1, k2, kContextUser, 0x100, 0x201, 0x301}));
  builder.OnSample(At(3, {kContextUser, 0x100, 0x201, 0x301}));
  builder.OnSample(At(2, {kContextUser, 0x100, 0x201, 0x301}));
  // Return addresses resolve at address - 1 (0x201 -> f200, k2 -> ...1f); pcs as they are.
  EXPECT_EQ(RenderFolded(builder.root(), {}),
            "f300;f200;f100 5\n"
            "f300;f200;f100;fffffffff8100001f_[k];fffffffff81000010_[k] 5\n");
  FoldedOptions plain;
  plain.annotate = false;
  EXPECT_NE(RenderFolded(builder.root(), plain).find("f100;fffffffff8100001f;"), std::string::npos);
  // Totals: the root saw all 10; f100 5 of its own and 5 below it.
  EXPECT_EQ(builder.root().total[0], 10u);
  // One resolution per distinct address, however often it is sampled.
  EXPECT_EQ(resolver.calls, 5);
}

// Wall time is on-CPU plus off-CPU time in every frame: self, total and sample counts.
TEST(CallTreeTest, ASummedEventAddsTwoEventsInEveryNode) {
  NamingResolver resolver;
  std::vector<EventDesc> events(2);
  events[0].name = "task-clock";
  events[1].name = "off-cpu";
  CallTreeBuilder builder(events, resolver, {});
  Sample on = At(7, {kContextUser, 0x100, 0x201});
  Sample off = At(40, {kContextUser, 0x400, 0x201});
  off.event = 1;
  builder.OnSample(on);
  builder.OnSample(on);
  builder.OnSample(off);
  CallNode root = builder.TakeRoot();
  const size_t wall = AppendSumOfEvents(root, 0, 1);
  EXPECT_EQ(wall, 2u);
  EXPECT_EQ(root.total[wall], 54u);  // 7 + 7 + 40
  const CallNode* caller = root.Find("f200", "prog", FrameKind::kUser);
  ASSERT_NE(caller, nullptr);
  EXPECT_EQ(caller->total[wall], 54u);
  EXPECT_EQ(caller->self[wall], 0u);
  const CallNode* on_leaf = caller->Find("f100", "prog", FrameKind::kUser);
  const CallNode* off_leaf = caller->Find("f400", "prog", FrameKind::kUser);
  ASSERT_NE(on_leaf, nullptr);
  ASSERT_NE(off_leaf, nullptr);
  EXPECT_EQ(on_leaf->self[wall], 14u);
  EXPECT_EQ(on_leaf->self_samples[wall], 2u);
  EXPECT_EQ(off_leaf->self[wall], 40u);
  EXPECT_EQ(off_leaf->self_samples[wall], 1u);
}

TEST(CallTreeTest, InlinedCallsAreFramesOfTheirOwn) {
  NamingResolver resolver;
  CallTreeBuilder builder(OneEvent(), resolver, {});
  builder.OnSample(At(7, {kContextUser, 0x500, 0x301}));
  EXPECT_EQ(RenderFolded(builder.root(), {}), "f300;outer;caller_[i];helper_[i] 7\n");
  CallTreeOptions flat;
  flat.expand_inlined = false;
  CallTreeBuilder flat_builder(OneEvent(), resolver, flat);
  flat_builder.OnSample(At(7, {kContextUser, 0x500, 0x301}));
  EXPECT_EQ(RenderFolded(flat_builder.root(), {}), "f300;outer 7\n");
}

TEST(CallTreeTest, ThreadRootsAndKernelFiltering) {
  NamingResolver resolver;
  CallTreeOptions options;
  options.roots = CallTreeOptions::Roots::kThread;
  options.include_kernel = false;
  CallTreeBuilder builder(OneEvent(), resolver, options);
  CommRecord comm;
  comm.pid = 10;
  comm.tid = 11;
  comm.comm = "worker";
  builder.OnComm(comm);
  builder.OnSample(At(4, {kContextKernel, 0xffffffff81000010, kContextUser, 0x100}, 11));
  builder.OnSample(At(1, {kContextUser, 0x100}, 10));
  FoldedOptions samples;
  samples.use_period = false;
  EXPECT_EQ(RenderFolded(builder.root(), samples), "[10]-10/10;f100 1\nworker-10/11;f100 1\n");
  EXPECT_EQ(RenderFolded(builder.root(), {}), "[10]-10/10;f100 1\nworker-10/11;f100 4\n");
}

// The tally and the thread that builds the paths each name a sample's root: a thread renamed
// between two samples of one stack must put them under two roots, each with its own count.
TEST(CallTreeTest, AStackSampledBeforeAndAfterARenameCountsUnderEachName) {
  NamingResolver resolver;
  CallTreeOptions options;
  options.roots = CallTreeOptions::Roots::kThread;
  CallTreeBuilder builder(OneEvent(), resolver, options);
  CommRecord comm;
  comm.pid = 10;
  comm.tid = 11;
  comm.comm = "before";
  builder.OnComm(comm);
  builder.OnSample(At(3, {kContextUser, 0x100, 0x201}, 11));
  comm.comm = "after";
  builder.OnComm(comm);
  builder.OnSample(At(5, {kContextUser, 0x100, 0x201}, 11));
  builder.OnSample(At(7, {kContextUser, 0x100, 0x201}, 11));
  EXPECT_EQ(RenderFolded(builder.root(), {}),
            "after-10/11;f200;f100 12\nbefore-10/11;f200;f100 3\n");
}

// Asking for the tree ends the path thread; samples after that still count.
TEST(CallTreeTest, SamplesAfterTheTreeWasAskedForAreCounted) {
  NamingResolver resolver;
  CallTreeBuilder builder(OneEvent(), resolver, {});
  builder.OnSample(At(2, {kContextUser, 0x100, 0x201}));
  EXPECT_EQ(RenderFolded(builder.root(), {}), "f200;f100 2\n");
  builder.OnSample(At(3, {kContextUser, 0x100, 0x201}));  // a stack seen before
  builder.OnSample(At(4, {kContextUser, 0x300, 0x201}));  // a new one
  EXPECT_EQ(RenderFolded(builder.root(), {}), "f200;f100 5\nf200;f300 4\n");
}

TEST(CallTreeTest, SamplesWithoutCallchainsAreTheirIp) {
  NamingResolver resolver;
  CallTreeBuilder builder(OneEvent(), resolver, {});
  Sample s;
  s.pid = 1;
  s.ip = 0x700;
  s.period = 9;
  builder.OnSample(s);
  EXPECT_EQ(RenderFolded(builder.root(), {}), "f700 9\n");
}

// Addresses that resolve to one held frame share its frames, but not across the kernel line:
// one frame as kernel code and as user code makes nodes of each kind.
TEST(CallTreeTest, AddressesSharingAHeldFrameKeepTheirSideOfTheKernelLine) {
  class OneFrame : public FrameResolver {
   public:
    OneFrame() {
      frame.function = "same";
      frame.module = "m";
      frame.resolved = true;
    }
    ResolvedFrame Resolve(const Mapping*, uint64_t) override { return frame; }
    const ResolvedFrame* FindHeld(uint32_t, const Mapping*, uint64_t) override { return &frame; }
    ResolvedFrame frame;
  } resolver;
  CallTreeBuilder builder(OneEvent(), resolver, {});
  builder.OnSample(At(5, {kContextKernel, 0xffffffff81000010, kContextUser, 0x100, 0x201}));
  builder.OnSample(At(3, {kContextUser, 0x110, 0x301}));
  builder.OnSample(At(1, {kContextKernel, 0xffffffff81000020}));
  EXPECT_EQ(RenderFolded(builder.root(), {}), "same;same 3\nsame;same;same_[k] 5\nsame_[k] 1\n");
}

// Stacks are tallied and resolved once each (StackTally): the tree asked for between samples
// holds the samples so far, and a remapped address names the new mapping's code.
TEST(CallTreeTest, TheTreeFollowsLaterSamplesAndRemappedCode) {
  class ByMapping : public FrameResolver {
   public:
    ResolvedFrame Resolve(const Mapping* mapping, uint64_t address) override {
      ResolvedFrame f;
      f.module = mapping ? mapping->filename : "prog";
      f.function = (mapping ? mapping->filename + ":" : "") + std::to_string(address);
      return f;
    }
  } resolver;
  CallTreeBuilder builder(OneEvent(), resolver, {});
  builder.OnSample(At(1, {kContextUser, 0x100, 0x201}));
  builder.OnSample(At(2, {kContextUser, 0x110, 0x201}));  // the same caller, another leaf
  EXPECT_EQ(RenderFolded(builder.root(), {}), "512;256 1\n512;272 2\n");
  EXPECT_EQ(builder.root().total[0], 3u);
  builder.OnSample(At(4, {kContextUser, 0x100, 0x201}));
  EXPECT_EQ(RenderFolded(builder.root(), {}), "512;256 5\n512;272 2\n");
  MmapRecord map;
  map.pid = 10;
  map.start = 0x100;
  map.length = 0x200;  // the leaf and its caller (0x201 looks up 0x200)
  map.filename = "lib.so";
  builder.OnMmap(map);
  builder.OnSample(At(8, {kContextUser, 0x100, 0x201}));
  EXPECT_EQ(RenderFolded(builder.root(), {}), "512;256 5\n512;272 2\nlib.so:512;lib.so:256 8\n");
  EXPECT_EQ(builder.root().total[0], 15u);
  EXPECT_EQ(builder.root().children.size(), 2u);
}

}  // namespace
}  // namespace tprof

namespace tprof {
namespace {

// Folded lines come out in the order of their text, as FlameGraph's `sort` leaves them, however
// the tree is shaped: names that are prefixes of their siblings' ('foo' and 'foo2', 'foo' and
// 'foo_[k]'), characters on both sides of ';' in the order, names that had a ';', the same name
// in two modules (whose lines interleave), an empty name, and equal lines ordered by count.
// The expected text is the tree's lines joined here and sorted as strings.
TEST(CallTreeTest, FoldedLinesAreInTheOrderOfTheirText) {
  CallNode root;
  root.name = "all";
  root.kind = FrameKind::kRoot;
  root.self.assign(1, 0);
  root.self_samples.assign(1, 0);
  struct Expected {
    std::string text;
    uint64_t count;
  };
  std::vector<Expected> expected;
  uint64_t next_count = 1;
  // Adds the path (name, module, kind per frame) with a self count at its end.
  auto add = [&](std::vector<std::tuple<std::string, std::string, FrameKind>> path,
                 uint64_t count = 0) {
    CallNode* node = &root;
    std::string text;
    for (const auto& [name, module, kind] : path) {
      node = node->Child(name, module, kind, 1);
      std::string shown = name;
      std::replace(shown.begin(), shown.end(), ';', ':');
      if (kind == FrameKind::kKernel) shown += "_[k]";
      if (kind == FrameKind::kInlined) shown += "_[i]";
      text += (text.empty() ? "" : ";") + shown;
    }
    if (!count) count = next_count++;
    node->self[0] += count;
    node->self_samples[0] += 1;
    expected.push_back({text, count});
  };
  const FrameKind u = FrameKind::kUser, k = FrameKind::kKernel, i = FrameKind::kInlined;
  add({{"main", "a", u}, {"foo", "a", u}});
  add({{"main", "a", u}, {"foo", "a", u}, {"bar", "a", u}});
  add({{"main", "a", u}, {"foo2", "a", u}, {"zed", "a", u}});
  add({{"main", "a", u}, {"foo", "a", k}, {"x", "a", u}});   // foo_[k]: '_' sorts after ';'
  add({{"main", "a", u}, {"foo", "a", i}});                  // foo_[i]
  add({{"main", "a", u}, {"foo!", "a", u}, {"y", "a", u}});  // '!' sorts before ';'
  add({{"main", "a", u}, {"fo", "a", u}});
  add({{"main", "a", u}, {"a;b", "a", u}, {"c", "a", u}});  // shown a:b
  add({{"main", "a", u}, {"a:b", "a", u}, {"b", "a", u}});  // the same text, another node
  add({{"main", "a", u}, {"dup", "libA", u}, {"m", "a", u}});
  add({{"main", "a", u}, {"dup", "libB", u}, {"k", "a", u}});
  add({{"main", "a", u}, {"dup", "libA", u}, {"n", "a", u}});
  add({{"main", "a", u}, {"dup", "libB", u}, {"m", "a", u}}, 3);  // the same text as libA's
  add({{"", "a", u}});                                            // no text: no line
  add({{"", "a", u}, {"under_empty", "a", u}});
  add({{"main", "a", u}});
  expected.erase(std::remove_if(expected.begin(), expected.end(),
                                [](const Expected& e) { return e.text.empty(); }),
                 expected.end());
  std::sort(expected.begin(), expected.end(), [](const Expected& a, const Expected& b) {
    return a.text != b.text ? a.text < b.text : a.count < b.count;
  });
  std::string want;
  for (const Expected& e : expected) want += e.text + " " + std::to_string(e.count) + "\n";
  // Lines with equal text (a:b's and dup;m's) sort by count, so the order is fully defined.
  EXPECT_EQ(RenderFolded(root, {}), want);
  EXPECT_NE(want.find("main;dup;m 3\nmain;dup;m "), std::string::npos) << want;
}

// Frames of code without a file are named per process (ResolveInProcess) and cached by mapping
// and address: a forked child shares its parent's mappings, so the first sample to reach such an
// address names it for both. The path thread looks the leaves of a run of samples up ahead of
// their callers; it must leave those addresses to be asked in the samples' order.
TEST(CallTreeTest, CodeWithoutAFileIsNamedByTheFirstSampleToReachIt) {
  testing::PidNamingResolver resolver;
  CallTreeBuilder builder(OneEvent(), resolver, {});
  MmapRecord jit;
  jit.pid = jit.tid = 10;
  jit.start = 0x1000;
  jit.length = 0x1000;
  jit.filename = "//anon";
  MmapRecord prog = jit;
  prog.start = 0x5000;
  prog.filename = "prog";
  builder.OnMmap(jit);
  builder.OnMmap(prog);
  TaskRecord fork;
  fork.pid = fork.tid = 20;
  fork.ppid = fork.ptid = 10;
  builder.OnTask(fork);
  // One run of two samples: the parent's, called from the JIT code (return address 0x1020,
  // looked up at 0x101f), then the child's, whose leaf is that same address.
  builder.OnSample(At(1, {kContextUser, 0x5010, 0x1020}));
  Sample child = At(4, {kContextUser, 0x101f});
  child.pid = child.tid = 20;
  builder.OnSample(child);
  EXPECT_EQ(RenderFolded(builder.root(), {}), "jit_of_10 4\njit_of_10;in_prog 1\n")
      << "named by the parent, whose sample reached it first";
}

// The leaves of runs of new stacks, and a new stack's callers, are looked up together
// (FrameResolver::FindHeldMany): the tree is the one their frames make, worked out here from the
// chains, in processes that map one file.
TEST(CallTreeTest, FramesLookedUpTogetherMakeTheTreeOfTheChains) {
  class Holding : public FrameResolver {
   public:
    ResolvedFrame Resolve(const Mapping*, uint64_t address) override { return Named(address); }
    const ResolvedFrame* FindHeld(uint32_t, const Mapping*, uint64_t address) override {
      auto [it, inserted] = held_.try_emplace(address);
      if (inserted) it->second = Named(address);
      return &it->second;
    }
    void FindHeldMany(std::span<HeldQuery> queries) override {
      largest_batch = std::max(largest_batch, queries.size());
      FrameResolver::FindHeldMany(queries);
    }
    static ResolvedFrame Named(uint64_t address) {
      ResolvedFrame f;
      f.function = "f" + std::to_string(address);
      f.module = "prog";
      f.resolved = true;
      return f;
    }
    size_t largest_batch = 0;

   private:
    std::map<uint64_t, ResolvedFrame> held_;
  } resolver;
  CallTreeBuilder builder(OneEvent(), resolver, {});
  for (uint32_t pid : {10, 11, 12}) {
    MmapRecord prog;
    prog.pid = prog.tid = pid;
    prog.start = 0x1000;
    prog.length = 0x10000;
    prog.filename = "/opt/prog";
    builder.OnMmap(prog);
  }
  std::map<std::string, uint64_t> expected;  // folded line -> period
  uint64_t state = 7;
  auto next = [&state](uint64_t below) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return (state >> 33) % below;
  };
  for (int i = 0; i < 3000; ++i) {
    std::vector<uint64_t> chain = {kContextUser};
    const uint64_t depth = 1 + next(8);
    for (uint64_t d = 0; d < depth; ++d) chain.push_back(0x1000 + 0x10 * next(d == 0 ? 400 : 6));
    Sample s = At(1 + next(5), chain);
    s.pid = s.tid = static_cast<uint32_t>(10 + next(3));
    builder.OnSample(s);
    // Root first; a caller is named by its return address less one.
    std::string line;
    for (size_t k = chain.size() - 1; k >= 1; --k)
      line += (line.empty() ? "" : ";") + Holding::Named(k == 1 ? chain[k] : chain[k] - 1).function;
    expected[line] += s.period;
  }
  std::string text;
  for (const auto& [line, period] : expected) text += line + " " + std::to_string(period) + "\n";
  EXPECT_EQ(RenderFolded(builder.root(), {}), text);
  EXPECT_GT(resolver.largest_batch, 8u);
}

}  // namespace
}  // namespace tprof
