// The census behind the "stacks stop after one or two frames" hint: which samples count as
// short, which module they end in, and when the hint is given.
#include "core/analysis/short_stack_census.h"

#include <gtest/gtest.h>

namespace tprof {
namespace {

constexpr uint64_t kLzma = 0x7f0000000000, kXz = 0x400000, kLibc = 0x7f1000000000;
// Where libc's start routine lies in the Census's libc mapping.
constexpr uint64_t kStartCallMain = kLibc + 0x2a000;

// Names only libc's start routine, as a symbol table would.
class LibcStartOnly : public FrameResolver {
 public:
  ResolvedFrame Resolve(const Mapping*, uint64_t address) override {
    ResolvedFrame frame;
    if (address >= kStartCallMain && address < kStartCallMain + 0x100)
      frame.function = "__libc_start_call_main";
    return frame;
  }
};

MmapRecord Map(uint64_t start, const char* file) {
  MmapRecord m;
  m.pid = 7;
  m.start = start;
  m.length = 0x100000;
  m.filename = file;
  return m;
}

Sample UserStack(std::vector<uint64_t> frames) {
  Sample s;
  s.pid = s.tid = 7;
  s.ip = frames.front();
  s.callchain = {kContextUser};
  s.callchain.insert(s.callchain.end(), frames.begin(), frames.end());
  return s;
}

struct Census {
  LibcStartOnly resolver;
  ShortStackCensus census{resolver};
  Census() {
    census.OnMmap(Map(kLzma, "/usr/lib/x86_64-linux-gnu/liblzma.so.5.4.1"));
    census.OnMmap(Map(kXz, "/usr/bin/xz"));
    census.OnMmap(Map(kLibc, "/usr/lib/x86_64-linux-gnu/libc.so.6"));
  }
  void Add(int n, std::vector<uint64_t> frames) {
    for (int i = 0; i < n; ++i) census.OnSample(UserStack(frames));
  }
};

// The hint, which must start with `prefix`.
std::string HintStartingWith(const ShortStackCensus& census, const std::string& prefix) {
  auto hint = ShortStackHint(census.Counts());
  EXPECT_TRUE(hint.has_value()) << prefix;
  if (!hint) return "";
  EXPECT_EQ(hint->find(prefix), 0u) << *hint;
  return *hint;
}

TEST(ShortStackCensus, MostStacksOfOneOrTwoFramesGiveTheHintWithTheirModule) {
  Census c;
  c.Add(50, {kLzma + 0x10});                                    // one frame, in liblzma
  c.Add(10, {kLzma + 0x20, kXz + 0x31});                        // two frames, the outer one in xz
  c.Add(40, {kXz + 0x10, kXz + 0x21, kXz + 0x31, kXz + 0x41});  // complete
  // Kernel-only stacks are not user stacks; samples without callchains were not walked.
  Sample kernel;
  kernel.ip = 0xffffffff81000000;
  kernel.callchain = {kContextKernel, 0xffffffff81000000};
  c.census.OnSample(kernel);
  Sample flat;
  flat.ip = kXz + 0x10;
  c.census.OnSample(flat);
  EXPECT_EQ(c.census.Counts().user_stacks, 100u);
  EXPECT_EQ(c.census.Counts().short_stacks, 60u);
  const std::string hint = HintStartingWith(
      c.census, "60% of user stacks stop after one or two frames, most (83%) in liblzma.so.5.4.1");
  // liblzma is a system library: the remedy is dwarf unwinding, not a rebuild.
  EXPECT_NE(hint.find("a system library built without frame pointers"), std::string::npos) << hint;
  EXPECT_NE(hint.find("--call-graph dwarf"), std::string::npos);
  EXPECT_EQ(hint.find("-fno-omit-frame-pointer"), std::string::npos) << hint;
}

// A frame-pointer stack that reaches libc's start routine is complete however few frames it
// has: a frameless leaf in libc (memset filling a fresh vector) hides its caller, main, and the
// walk lands on __libc_start_call_main. The demo's start-up gave 65% such stacks in a short run.
TEST(ShortStackCensus, StacksThatReachTheStartRoutineAreNotShort) {
  Census c;
  c.Add(70, {kLibc + 0x1000, kStartCallMain + 0x10});  // memset; __libc_start_call_main
  c.Add(30, {kXz + 0x10, kXz + 0x21, kXz + 0x31});
  EXPECT_EQ(c.census.Counts().user_stacks, 100u);
  EXPECT_EQ(c.census.Counts().short_stacks, 0u);
  EXPECT_FALSE(ShortStackHint(c.census.Counts()).has_value());
  // The same stacks without the start routine (libc's code elsewhere) are short, and in libc.
  Census cut;
  cut.Add(70, {kLibc + 0x1000, kLibc + 0x3000});
  cut.Add(30, {kXz + 0x10, kXz + 0x21, kXz + 0x31});
  EXPECT_EQ(cut.census.Counts().short_stacks, 70u);
  HintStartingWith(cut.census,
                   "70% of user stacks stop after one or two frames, most (100%) in libc.so.6, "
                   "a system library");
}

// The user's own binary built without frame pointers: the walk reads a garbage "return address"
// from a register that held no frame pointer, so the outermost frame is in no mapping. The hint
// names the binary the walk stopped in, the one to rebuild, not [unknown].
TEST(ShortStackCensus, AWalkThatEndsInGarbageBlamesTheModuleBeforeIt) {
  Census c;
  c.Add(60, {kXz + 0x10, 0x1234});  // in xz, then an address in no mapping
  c.Add(40, {kXz + 0x10, kXz + 0x21, kXz + 0x31});
  const std::string hint = HintStartingWith(
      c.census, "60% of user stacks stop after one or two frames, most (100%) in xz: ");
  EXPECT_NE(hint.find("rebuild it with -fno-omit-frame-pointer"), std::string::npos) << hint;
  EXPECT_EQ(c.census.Counts().by_module.count("[unknown]"), 0u);
}

TEST(ShortStackCensus, NoHintWhenMostStacksAreDeepOrTooFewAreSeen) {
  Census deep;
  deep.Add(49, {kLzma + 0x10});
  deep.Add(51, {kXz + 0x10, kXz + 0x21, kXz + 0x31});
  EXPECT_FALSE(ShortStackHint(deep.census.Counts()).has_value());
  Census few;
  few.Add(49, {kLzma + 0x10});
  EXPECT_FALSE(ShortStackHint(few.census.Counts()).has_value());
}

}  // namespace
}  // namespace tprof
