// The census behind the "stacks stop after one or two frames" hint: which samples count as
// short, which module they end in, and when the hint is given.
#include "core/analysis/short_stack_census.h"

#include <gtest/gtest.h>

namespace tprof {
namespace {

class NoSymbols : public FrameResolver {
 public:
  ResolvedFrame Resolve(const Mapping*, uint64_t) override { return {}; }
};

constexpr uint64_t kLzma = 0x7f0000000000, kXz = 0x400000;

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
  NoSymbols resolver;
  ShortStackCensus census{resolver};
  Census() {
    census.OnMmap(Map(kLzma, "/usr/lib/x86_64-linux-gnu/liblzma.so.5.4.1"));
    census.OnMmap(Map(kXz, "/usr/bin/xz"));
  }
  void Add(int n, std::vector<uint64_t> frames) {
    for (int i = 0; i < n; ++i) census.OnSample(UserStack(frames));
  }
};

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
  EXPECT_EQ(c.census.user_stacks(), 100u);
  EXPECT_EQ(c.census.short_stacks(), 60u);
  auto hint = ShortStackHint(c.census);
  ASSERT_TRUE(hint.has_value());
  EXPECT_EQ(hint->find("60% of user stacks stop after one or two frames, most (83%) in "
                       "liblzma.so.5.4.1"),
            0u)
      << *hint;
  EXPECT_NE(hint->find("--call-graph dwarf"), std::string::npos);
}

TEST(ShortStackCensus, NoHintWhenMostStacksAreDeepOrTooFewAreSeen) {
  Census deep;
  deep.Add(49, {kLzma + 0x10});
  deep.Add(51, {kXz + 0x10, kXz + 0x21, kXz + 0x31});
  EXPECT_FALSE(ShortStackHint(deep.census).has_value());
  Census few;
  few.Add(49, {kLzma + 0x10});
  EXPECT_FALSE(ShortStackHint(few.census).has_value());
}

}  // namespace
}  // namespace tprof
