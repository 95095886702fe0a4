// Stream extraction and matching on hand-made samples: the blocks of a branch stack, stream
// depth and cycles, callchain frames at the call line, and the matcher's sections.
#include "core/analysis/hot_streams.h"

#include <gtest/gtest.h>

#include <set>

#include "core/analysis/stream_matcher.h"
#include "report/stream_report.h"

namespace tprof {
namespace {

// Addresses 0x1000.. are function "f", 0x2000.. "g"; the line is (address & 0xfff) / 0x10 + 1,
// in /src/a.cpp. Kernel addresses have no line.
class LineResolver : public FrameResolver {
 public:
  ResolvedFrame Resolve(const Mapping*, uint64_t address) override {
    ResolvedFrame r;
    r.resolved = true;
    r.module = "a.out";
    if (IsKernelAddress(address)) {
      r.function = "kfunc";
      r.frames.push_back({"kfunc", "", "", 0, 0, false});
      return r;
    }
    r.function = (address >> 12) == 1 ? "f" : "g";
    r.frames.push_back({r.function, "", "/src/a.cpp",
                        static_cast<uint32_t>((address & 0xfff) / 0x10 + 1), 0, false});
    return r;
  }
};

std::vector<EventDesc> CyclesEvent() {
  std::vector<EventDesc> events(1);
  events[0].name = "cycles";
  return events;
}

BranchEntry Branch(uint64_t from, uint64_t to, uint32_t cycles) {
  return {from, to, static_cast<uint64_t>(cycles) << 4};
}

Sample BranchSample(std::vector<BranchEntry> branches, uint64_t period = 100) {
  Sample s;
  s.period = period;
  s.ip = 0x1000;
  s.branches = std::move(branches);
  return s;
}

TEST(HotStreamsTest, BranchStacksGiveBlocksFromOneTargetToTheNextSource) {
  LineResolver resolver;
  HotStreamOptions options;
  HotStreamBuilder builder(CyclesEvent(), resolver, options);
  // Most recent first: the block before branch 0 runs from branch 1's target (0x1000) to
  // branch 0's source (0x1020), in 7 cycles; the one before from 0x2000 to 0x2040, 5 cycles.
  for (int i = 0; i < 3; ++i)
    builder.OnSample(BranchSample(
        {Branch(0x1020, 0x2000, 7), Branch(0x2040, 0x1000, 5), Branch(0x1090, 0x2000, 9)}));
  auto profile = builder.Finish();
  ASSERT_TRUE(profile.ok());
  ASSERT_EQ(profile->streams.size(), 1u);
  const HotStream& s = profile->streams[0];
  EXPECT_EQ(s.kind, StreamKind::kBranch);
  EXPECT_EQ(s.samples, 3u);
  EXPECT_EQ(s.period, 300u);
  ASSERT_EQ(s.entries.size(), 2u);
  EXPECT_EQ(FormatEntry(profile->entries[s.entries[0]]), "f a.cpp:1-3");
  EXPECT_EQ(FormatEntry(profile->entries[s.entries[1]]), "g a.cpp:1-5");
  EXPECT_DOUBLE_EQ(s.average_cycles(), 12.0);
  ASSERT_EQ(profile->blocks.size(), 2u);
  EXPECT_EQ(profile->blocks[0].cycles, 21u);  // the 7-cycle block, three times
  EXPECT_EQ(profile->blocks[0].executions, 3u);
  EXPECT_EQ(profile->block_cycles, 36u);
  EXPECT_DOUBLE_EQ(profile->Share(profile->blocks[0]), 21.0 / 36.0);
}

TEST(HotStreamsTest, RepeatedStacksStillCountEachSamplesOwnCycles) {
  LineResolver resolver;
  HotStreamBuilder builder(CyclesEvent(), resolver, {});
  // The same branches three times (resolved once), with different cycle counts; a zero count
  // (not recorded) keeps that sample out of the stream's average but not out of its samples.
  builder.OnSample(BranchSample({Branch(0x1020, 0x2000, 7), Branch(0x2040, 0x1000, 5)}));
  builder.OnSample(BranchSample({Branch(0x1020, 0x2000, 9), Branch(0x2040, 0x1000, 5)}));
  builder.OnSample(BranchSample({Branch(0x1020, 0x2000, 0), Branch(0x2040, 0x1000, 5)}));
  auto profile = builder.Finish();
  ASSERT_TRUE(profile.ok());
  ASSERT_EQ(profile->streams.size(), 1u);
  EXPECT_EQ(profile->streams[0].samples, 3u);
  EXPECT_EQ(profile->streams[0].cycle_samples, 2u);
  EXPECT_DOUBLE_EQ(profile->streams[0].average_cycles(), 8.0);
  ASSERT_EQ(profile->blocks.size(), 1u);
  EXPECT_EQ(profile->blocks[0].executions, 3u);
  EXPECT_EQ(profile->blocks[0].cycle_counts, 2u);
  EXPECT_EQ(profile->blocks[0].cycles, 16u);
}

TEST(HotStreamsTest, UnfilledSlotsEndTheStack) {
  LineResolver resolver;
  HotStreamBuilder builder(CyclesEvent(), resolver, {});
  builder.OnSample(BranchSample(
      {Branch(0x1020, 0x2000, 7), Branch(0x2040, 0x1000, 5), Branch(0, 0, 0), Branch(0, 0, 0)}));
  auto profile = builder.Finish();
  ASSERT_TRUE(profile.ok());
  EXPECT_EQ(profile->blocks.size(), 1u);  // no block from 0 to 0x2040, none from 0 to 0
  EXPECT_EQ(profile->block_executions, 1u);
}

TEST(HotStreamsTest, ANewMappingIsSeenByLaterSamplesOfTheSameStack) {
  // Without a mapping the offset of an unnamed address is the address; with one, the offset in
  // the file. The same stack before and after the mmap gives two streams.
  struct Unnamed : FrameResolver {
    ResolvedFrame Resolve(const Mapping* m, uint64_t) override {
      ResolvedFrame r;
      r.function = m ? "[lib.so]" : "[unknown]";
      return r;
    }
  } resolver;
  HotStreamBuilder builder(CyclesEvent(), resolver, {});
  Sample s;
  s.period = 1;
  s.pid = 7;
  s.ip = 0x10010;
  builder.OnSample(s);
  MmapRecord m;
  m.pid = m.tid = 7;
  m.start = 0x10000;
  m.length = 0x1000;
  m.page_offset = 0x3000;
  m.filename = "/lib.so";
  builder.OnMmap(m);
  builder.OnSample(s);
  auto profile = builder.Finish();
  ASSERT_TRUE(profile.ok());
  ASSERT_EQ(profile->streams.size(), 2u);
  std::set<std::string> names;
  for (const HotStream& stream : profile->streams)
    names.insert(FormatEntry(profile->entries[stream.entries[0]]));
  EXPECT_EQ(names, (std::set<std::string>{"[unknown] @0x10010", "[lib.so] @0x3010"}));
}

TEST(HotStreamsTest, ABackwardRangeBreaksTheChainButLaterBlocksStillCount) {
  LineResolver resolver;
  HotStreamBuilder builder(CyclesEvent(), resolver, {});
  // Block 0 [0x1000, 0x1020] fine; block 1 [0x2080, 0x2040] runs backwards (lost branches);
  // block 2 [0x1000, 0x1090] fine but beyond the break.
  builder.OnSample(BranchSample({Branch(0x1020, 0x2000, 7), Branch(0x2040, 0x1000, 5),
                                 Branch(0x1090, 0x2080, 9), Branch(0x1100, 0x1000, 2)}));
  auto profile = builder.Finish();
  ASSERT_TRUE(profile.ok());
  ASSERT_EQ(profile->streams.size(), 1u);
  EXPECT_EQ(profile->streams[0].entries.size(), 1u);
  EXPECT_DOUBLE_EQ(profile->streams[0].average_cycles(), 7.0);
  EXPECT_EQ(profile->blocks.size(), 2u);
  EXPECT_EQ(profile->block_cycles, 16u);
}

TEST(HotStreamsTest, DepthLimitsTheStream) {
  LineResolver resolver;
  HotStreamOptions options;
  options.depth = 1;
  HotStreamBuilder builder(CyclesEvent(), resolver, options);
  builder.OnSample(BranchSample(
      {Branch(0x1020, 0x2000, 7), Branch(0x2040, 0x1000, 5), Branch(0x1090, 0x2000, 9)}));
  auto profile = builder.Finish();
  ASSERT_TRUE(profile.ok());
  ASSERT_EQ(profile->streams[0].entries.size(), 1u);
  EXPECT_DOUBLE_EQ(profile->streams[0].average_cycles(), 7.0);
}

TEST(HotStreamsTest, CallchainsGiveFramesAtTheCallLine) {
  LineResolver resolver;
  HotStreamBuilder builder(CyclesEvent(), resolver, {});
  Sample s;
  s.period = 1;
  s.ip = 0x1031;
  // The return address 0x2050 is one past the call at 0x204f: line 5, not 6.
  s.callchain = {kContextUser, 0x1031, 0x2050};
  builder.OnSample(s);
  builder.OnSample(s);
  auto profile = builder.Finish();
  ASSERT_TRUE(profile.ok());
  ASSERT_EQ(profile->streams.size(), 1u);
  EXPECT_EQ(profile->streams[0].kind, StreamKind::kCallchain);
  EXPECT_EQ(profile->streams[0].samples, 2u);
  EXPECT_FALSE(profile->streams[0].has_cycles());
  ASSERT_EQ(profile->streams[0].entries.size(), 2u);
  EXPECT_EQ(FormatEntry(profile->entries[profile->streams[0].entries[0]]), "f a.cpp:4");
  EXPECT_EQ(FormatEntry(profile->entries[profile->streams[0].entries[1]]), "g a.cpp:5");
}

TEST(HotStreamsTest, AnUnknownEventIsAnError) {
  LineResolver resolver;
  HotStreamOptions options;
  options.event = "instructions";
  HotStreamBuilder builder(CyclesEvent(), resolver, options);
  EXPECT_FALSE(builder.Finish().ok());
}

// Profiles made of callchain samples (ip, caller) with the given periods.
StreamProfile Callchains(const std::vector<std::pair<std::vector<uint64_t>, uint64_t>>& chains) {
  LineResolver resolver;
  HotStreamBuilder builder(CyclesEvent(), resolver, {});
  for (const auto& [chain, period] : chains) {
    Sample s;
    s.period = period;
    s.ip = chain[0];
    s.callchain = chain;
    builder.OnSample(s);
  }
  return std::move(builder.Finish().value());
}

TEST(StreamMatcherTest, SectionsWithoutTrees) {
  // Old: f:1<-g:2 (hot), f:5<-g:2, g:9.  New: f:1<-g:2, f:7<-g:2, g:12.
  StreamProfile old_profile =
      Callchains({{{0x1000, 0x2011}, 50}, {{0x1040, 0x2011}, 30}, {{0x2080}, 20}});
  StreamProfile new_profile =
      Callchains({{{0x1000, 0x2011}, 40}, {{0x1060, 0x2011}, 35}, {{0x20b0}, 25}});
  SourceTreeMap no_trees;
  StreamMatcher matcher(old_profile, new_profile, no_trees, {});
  StreamComparison c = matcher.CompareStreams();
  ASSERT_EQ(c.matched.size(), 1u);
  EXPECT_EQ(old_profile.streams[c.matched[0].old_stream].period, 50u);
  EXPECT_EQ(new_profile.streams[c.matched[0].new_stream].period, 40u);
  // Without source trees nothing is known to have changed: the rest are one-sided.
  EXPECT_TRUE(c.source_changed.empty());
  EXPECT_EQ(c.old_only.size(), 2u);
  EXPECT_EQ(c.new_only.size(), 2u);
}

TEST(StreamMatcherTest, ANamedFunctionPairsItsStreamsAsChanged) {
  StreamProfile old_profile = Callchains({{{0x1000, 0x2011}, 50}, {{0x2080}, 20}});
  StreamProfile new_profile = Callchains({{{0x1000, 0x2011}, 40}, {{0x2080}, 25}});
  SourceTreeMap no_trees;
  StreamMatchOptions options;
  options.changed_functions = {"f"};
  StreamMatcher matcher(old_profile, new_profile, no_trees, options);
  StreamComparison c = matcher.CompareStreams();
  ASSERT_EQ(c.matched.size(), 1u);  // g:9 alone
  ASSERT_EQ(c.source_changed.size(), 1u);
  EXPECT_EQ(c.source_changed[0].changed, (std::vector<bool>{true, false}));
  EXPECT_TRUE(c.old_only.empty());
  EXPECT_TRUE(c.new_only.empty());
}

}  // namespace
}  // namespace tprof
