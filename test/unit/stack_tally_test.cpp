// Stack tallies: which samples count as one stack, and the split of a chain into leaf and
// callers that aggregations resolve once per distinct callers.
#include "core/model/stack_tally.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace tprof {
namespace {

Sample Stack(uint32_t pid, uint64_t ip, std::vector<uint64_t> callchain, uint32_t event = 0,
             uint64_t period = 1) {
  Sample s;
  s.pid = s.tid = pid;
  s.ip = ip;
  s.callchain = std::move(callchain);
  s.event = event;
  s.period = period;
  return s;
}

TEST(StackTallyTest, EqualStacksShareAnIdAndEverythingElseSeparates) {
  StackTally tally(2);
  const AddressSpace::Generation g{1, 1};
  const auto a = tally.Add(Stack(7, 0x10, {kContextUser, 0x10, 0x21}), 0, g);
  EXPECT_TRUE(a.first);
  const auto again = tally.Add(Stack(7, 0x10, {kContextUser, 0x10, 0x21}, 1, 5), 0, g);
  EXPECT_FALSE(again.first);
  EXPECT_EQ(again.id, a.id);
  // Another caller, process, tag or generation, or a chain that only shares a prefix: new ids.
  std::vector<uint32_t> ids = {
      tally.Add(Stack(7, 0x10, {kContextUser, 0x10, 0x31}), 0, g).id,
      tally.Add(Stack(8, 0x10, {kContextUser, 0x10, 0x21}), 0, g).id,
      tally.Add(Stack(7, 0x10, {kContextUser, 0x10, 0x21}), 1, g).id,
      tally.Add(Stack(7, 0x10, {kContextUser, 0x10, 0x21}), 0, {2, 1}).id,
      tally.Add(Stack(7, 0x10, {kContextUser, 0x10, 0x21}), 0, {1, 2}).id,
      tally.Add(Stack(7, 0x10, {kContextUser, 0x10}), 0, g).id,
      tally.Add(Stack(7, 0x10, {}), 0, g).id,
  };
  ids.push_back(a.id);
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(std::unique(ids.begin(), ids.end()), ids.end());
  EXPECT_EQ(tally.stacks(), 8u);
  EXPECT_EQ(tally.period(a.id, 0), 1u);
  EXPECT_EQ(tally.period(a.id, 1), 5u);
  EXPECT_EQ(tally.samples(a.id, 1), 1u);
}

// Counts read between samples (a call tree asked for mid-stream) are those of the samples so far,
// and samples after the reading count too; each event's counts stay apart, for stacks of every
// age, including events a stack never had.
TEST(StackTallyTest, CountsReadBetweenSamplesAndPerEvent) {
  StackTally tally(3);
  const AddressSpace::Generation g{1, 1};
  const auto a = tally.Add(Stack(7, 0x10, {kContextUser, 0x10}, 0, 4), 0, g);
  EXPECT_EQ(tally.period(a.id, 0), 4u);
  EXPECT_EQ(tally.samples(a.id, 0), 1u);
  EXPECT_EQ(tally.period(a.id, 2), 0u);
  tally.Add(Stack(7, 0x10, {kContextUser, 0x10}, 0, 6), 0, g);
  const auto b = tally.Add(Stack(7, 0x20, {kContextUser, 0x20}, 2, 9), 0, g);
  tally.Add(Stack(7, 0x20, {kContextUser, 0x20}, 0, 1), 0, g);
  tally.Add(Stack(7, 0x10, {kContextUser, 0x10}, 1, 3), 0, g);
  EXPECT_EQ(tally.period(a.id, 0), 10u);
  EXPECT_EQ(tally.samples(a.id, 0), 2u);
  EXPECT_EQ(tally.period(a.id, 1), 3u);
  EXPECT_EQ(tally.period(a.id, 2), 0u);
  EXPECT_EQ(tally.period(b.id, 0), 1u);
  EXPECT_EQ(tally.period(b.id, 1), 0u);
  EXPECT_EQ(tally.period(b.id, 2), 9u);
  EXPECT_EQ(tally.samples(b.id, 2), 1u);
  const auto c = tally.Add(Stack(7, 0x30, {kContextUser, 0x30}, 0, 2), 0, g);
  EXPECT_EQ(tally.period(c.id, 0), 2u);
  EXPECT_EQ(tally.period(c.id, 2), 0u);
  EXPECT_EQ(tally.period(a.id, 0), 10u);
}

// A zero entry ends a frame-pointer walk (recorded by the host's kernel at the outermost frame
// record of ld.so): no frame, where it read [kernel.kallsyms+0xffffffffffffffff].
TEST(StackTallyTest, ZeroCallchainEntriesAreNotFrames) {
  std::vector<std::pair<uint64_t, bool>> seen;
  ForEachFrameAddress(
      Stack(7, 0x10, {kContextKernel, 0xffffffff81000130, kContextUser, 0x10, 0x21, 0}),
      [&](uint64_t address, bool kernel) {
        seen.emplace_back(address, kernel);
        return true;
      });
  EXPECT_EQ(seen, (std::vector<std::pair<uint64_t, bool>>{
                      {0xffffffff81000130, true}, {0x10, false}, {0x20, false}}));
  // A zero leaf is still the sampled pc (a call through a null pointer): the frames after it
  // are return addresses either way, and a zero where the callers' pc would be is skipped.
  seen.clear();
  ForEachFrameAddress(Stack(7, 0, {kContextUser, 0, 0x10, 0x21}),
                      [&](uint64_t address, bool kernel) {
                        seen.emplace_back(address, kernel);
                        return true;
                      });
  EXPECT_EQ(seen,
            (std::vector<std::pair<uint64_t, bool>>{{0, false}, {0xf, false}, {0x20, false}}));
  seen.clear();
  ForEachFrameAddress(
      Stack(7, 0xffffffff81000130, {kContextKernel, 0xffffffff81000130, kContextUser, 0, 0x21}),
      [&](uint64_t address, bool kernel) {
        seen.emplace_back(address, kernel);
        return true;
      });
  EXPECT_EQ(seen,
            (std::vector<std::pair<uint64_t, bool>>{{0xffffffff81000130, true}, {0x20, false}}));
}

// The other values perf reserves in a callchain (at or above -4095): the -1 end marker and the
// context markers (PERF_CONTEXT_HV -32, GUEST -2048, GUEST_KERNEL -2176, GUEST_USER -2560, MAX
// -4095) are never frames, wherever they sit; -4096 is an address.
TEST(StackTallyTest, EndAndContextMarkersAreNotFrames) {
  const uint64_t end = ~0ull, hv = -32ull, guest = -2048ull, guest_kernel = -2176ull,
                 guest_user = -2560ull, max = -4095ull, below = -4096ull;
  std::vector<uint64_t> seen;
  auto collect = [&](uint64_t address, bool) {
    seen.push_back(address);
    return true;
  };
  ForEachFrameAddress(Stack(7, 0x10, {kContextUser, 0x10, 0x21, end}), collect);
  EXPECT_EQ(seen, (std::vector<uint64_t>{0x10, 0x20}));
  seen.clear();
  ForEachFrameAddress(
      Stack(7, 0x10,
            {hv, guest, 0x10, guest_kernel, 0x31, guest_user, 0x41, max, 0x51, below, end}),
      collect);
  // After each marker the next entry is a pc (no - 1); -4096 is a return address.
  EXPECT_EQ(seen, (std::vector<uint64_t>{0x10, 0x31, 0x41, 0x51, below - 1}));
  seen.clear();
  ForEachFrameAddress(Stack(7, 0x10, {end, end}), collect);
  EXPECT_TRUE(seen.empty());
}

TEST(StackTallyTest, SplitLeafKeepsTheWalkOfForEachFrameAddress) {
  // A kernel leaf, its kernel caller, then the user part after a marker.
  Sample s =
      Stack(1, 0xffff000000000010,
            {kContextKernel, 0xffff000000000010, 0xffff000000000021, kContextUser, 0x400, 0x501});
  const SplitStack split = SplitLeaf(s);
  ASSERT_TRUE(split.has_leaf);
  EXPECT_EQ(split.leaf, 0xffff000000000010u);
  EXPECT_TRUE(split.leaf_kernel);
  EXPECT_TRUE(split.callers_kernel);
  std::vector<std::pair<uint64_t, bool>> callers;
  ForEachCallerAddress(split.callers, split.callers_kernel, [&](uint64_t a, bool kernel) {
    callers.push_back({a, kernel});
    return true;
  });
  // Return addresses at address - 1; the first user address after the marker is a pc.
  EXPECT_EQ(callers, (std::vector<std::pair<uint64_t, bool>>{
                         {0xffff000000000020, true}, {0x400, false}, {0x500, false}}));
  std::vector<uint64_t> all;
  ForEachFrameAddress(s, [&](uint64_t a, bool) {
    all.push_back(a);
    return true;
  });
  EXPECT_EQ(all, (std::vector<uint64_t>{0xffff000000000010, 0xffff000000000020, 0x400, 0x500}));
  // No callchain: the ip alone. Markers alone: nothing.
  EXPECT_EQ(SplitLeaf(Stack(1, 0x99, {})).leaf, 0x99u);
  EXPECT_FALSE(SplitLeaf(Stack(1, 0x99, {kContextUser})).has_leaf);
}

// A hinted key is given back only to the visit it was hinted for, of the same sample object,
// unchanged, and not after a record that forgets the hints: as the decoder gives hints (the sample
// after the next one), as a batch's replay gives them (across an mmap), and when a filter before
// the tally drops the sample in between.
TEST(HintedStackKeysTest, AKeyServesOnlyTheVisitItWasHintedFor) {
  Sample a, b, c;
  a.time = 1, b.time = 2, c.time = 3;
  a.ip = b.ip = c.ip = 0x400000;
  const StackInterner::Key kb{2, 2}, kc{3, 3};
  StackInterner::Key got;

  HintedStackKeys keys;  // the decoder's order: hint b, visit a, hint c, visit b, visit c
  keys.Hinted(b, kb);
  EXPECT_FALSE(keys.Visit(a, &got));
  keys.Hinted(c, kc);
  ASSERT_TRUE(keys.Visit(b, &got));
  EXPECT_EQ(got, kb);
  ASSERT_TRUE(keys.Visit(c, &got));
  EXPECT_EQ(got, kc);

  HintedStackKeys dropped;  // a filter drops a: b arrives one visit early and takes no key
  dropped.Hinted(b, kb);
  EXPECT_FALSE(dropped.Visit(b, &got));
  EXPECT_FALSE(dropped.Visit(c, &got));

  HintedStackKeys reused;  // b's object holds another sample by its visit
  reused.Hinted(b, kb);
  EXPECT_FALSE(reused.Visit(a, &got));
  Sample later = b;
  later.time = 9;
  EXPECT_FALSE(reused.Visit(later, &got));

  HintedStackKeys replay;  // hint b, visit a, an mmap, visit b
  replay.Hinted(b, kb);
  EXPECT_FALSE(replay.Visit(a, &got));
  replay.Forget();
  EXPECT_FALSE(replay.Visit(b, &got));
}

}  // namespace
}  // namespace tprof
