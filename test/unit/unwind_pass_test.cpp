// Callchain assembly around the unwinder: kernel part as recorded, then the user context marker
// and the frames the unwinder returns (the user pc first); the sampled ip when it returns none;
// stack copies dropped unless kept; outcomes counted by the reason a walk ended.
#include "core/format/unwind_pass.h"

#include <gtest/gtest.h>

#include "core/format/profile_reader.h"
#include "core/model/unwind_statistics_json.h"
#include "test/support/record_generator.h"

namespace tprof {
namespace {

// Gives the pc (the last register: the highest bit of the masks below) and fixed return
// addresses; without a stack, nothing. Records what it was given.
class FakeUnwinder : public UserStackUnwinder {
 public:
  void OnArchitecture(const std::string& machine) override { architecture = machine; }
  void OnMmap(const MmapRecord& r) override { mmaps.push_back(r.filename); }
  UnwindOutcome Unwind(const UserStackSample& s, std::vector<uint64_t>* frames) override {
    seen_pcs.push_back(s.regs.back());
    seen_stack_sizes.push_back(s.stack.size());
    if (s.stack.empty()) return {UnwindEnd::kStackCopyTooShort, ""};
    frames->insert(frames->end(), {s.regs.back(), 0x401100, 0x401200, 0x401300});
    return {};
  }
  std::string architecture = "unset";
  std::vector<std::string> mmaps;
  std::vector<uint64_t> seen_pcs;
  std::vector<size_t> seen_stack_sizes;
};

#if defined(__x86_64__)
constexpr uint64_t kMask = (1ull << 8) | (1ull << 7) | (1ull << 6);  // BP, SP, IP
#else
constexpr uint64_t kMask = (1ull << 32) | (1ull << 31) | (1ull << 29);  // PC, SP, FP
#endif

std::string UnwindToBytes(const std::vector<Sample>& input, bool keep, FakeUnwinder& unwinder,
                          UnwindStatistics* stats) {
  std::vector<EventDesc> events(1);
  events[0].name = "task-clock";
  events[0].sample_regs_user = kMask;
  events[0].sample_stack_user = 8192;  // a --call-graph dwarf recording copies both
  std::string bytes;
  auto writer = ProfileWriter::Create(std::make_unique<StringSink>(bytes), Metadata{}, events);
  EXPECT_TRUE(writer.ok());
  UnwindPass pass(events, unwinder, *writer.value(), keep, "aarch64");
  MmapRecord m;
  m.filename = "/bin/prog";
  pass.OnMmap(m);
  for (const Sample& s : input) pass.OnSample(s);
  EXPECT_TRUE(pass.status().ok());
  EXPECT_TRUE(writer.value()->Finish({1, 1, {}}).ok());
  *stats = pass.stats();
  return bytes;
}

std::vector<Sample> ReadSamples(const std::string& bytes) {
  auto reader = ProfileReader::OpenBytes(bytes);
  testing::CollectingVisitor visitor;
  EXPECT_TRUE(reader.ok() && reader->ReadRecords(visitor).ok());
  std::vector<Sample> out;
  for (const auto& r : visitor.records)
    if (auto* s = std::get_if<Sample>(&r)) out.push_back(*s);
  return out;
}

TEST(UnwindPassTest, UserSampleGetsPcThenUnwoundFrames) {
  Sample s;
  s.ip = 0x401050;
  s.user_regs_abi = 2;
  s.user_regs = {0x7ffd0000, 0x7ffc0000, 0x401050};  // mask order: lowest bit first
  s.user_stack = std::string(64, 'x');
  FakeUnwinder unwinder;
  UnwindStatistics stats;
  auto out = ReadSamples(UnwindToBytes({s}, false, unwinder, &stats));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].callchain,
            (std::vector<uint64_t>{kContextUser, 0x401050, 0x401100, 0x401200, 0x401300}));
  EXPECT_TRUE(out[0].user_stack.empty());
  EXPECT_TRUE(out[0].user_regs.empty());
  EXPECT_EQ(stats.samples, 1u);
  EXPECT_EQ(stats.complete, 1u);
  EXPECT_EQ(stats.user_frames, 4u);
  EXPECT_EQ(unwinder.mmaps, std::vector<std::string>{"/bin/prog"});
  EXPECT_EQ(unwinder.architecture, "aarch64");
}

TEST(UnwindPassTest, KernelSampleKeepsItsKernelPartBeforeTheUserFrames) {
  Sample s;
  s.ip = 0xffffffff81001234;
  s.callchain = {kContextKernel, 0xffffffff81001234, 0xffffffff81005678};
  s.user_regs_abi = 2;
  s.user_regs = {0x7ffd0000, 0x7ffc0000, 0x401777};
  s.user_stack = std::string(64, 'x');
  FakeUnwinder unwinder;
  UnwindStatistics stats;
  auto out = ReadSamples(UnwindToBytes({s}, true, unwinder, &stats));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(unwinder.seen_pcs, std::vector<uint64_t>{0x401777});
  EXPECT_EQ(out[0].callchain,
            (std::vector<uint64_t>{kContextKernel, 0xffffffff81001234, 0xffffffff81005678,
                                   kContextUser, 0x401777, 0x401100, 0x401200, 0x401300}));
  EXPECT_EQ(out[0].user_stack.size(), 64u);  // kept on request
}

TEST(UnwindPassTest, SamplesWithoutStacksPassThroughAndFailuresKeepTheLeaf) {
  Sample plain;
  plain.ip = 0x401000;
  plain.callchain = {kContextUser, 0x401000, 0x402000};
  Sample no_stack;
  no_stack.ip = 0x401050;
  no_stack.user_regs_abi = 2;
  no_stack.user_regs = {1, 2, 0x401050};
  FakeUnwinder unwinder;
  UnwindStatistics stats;
  auto out = ReadSamples(UnwindToBytes({plain, no_stack}, false, unwinder, &stats));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].callchain, plain.callchain);
  EXPECT_EQ(out[1].callchain, (std::vector<uint64_t>{kContextUser, 0x401050}));
  EXPECT_EQ(stats.samples, 1u);
  EXPECT_EQ(stats.complete, 0u);
  const auto& short_copy = stats.stopped[static_cast<size_t>(UnwindEnd::kStackCopyTooShort)];
  EXPECT_EQ(short_copy.samples, 1u);
  EXPECT_EQ(short_copy.leaf_only, 1u);
}

// A kernel sample the unwinder gives nothing for keeps its kernel part alone: its ip is no user
// address to stand for the leaf.
TEST(UnwindPassTest, KernelSampleWithoutUserFramesKeepsTheKernelPart) {
  Sample s;
  s.ip = 0xffffffff81001234;
  s.callchain = {kContextKernel, 0xffffffff81001234};
  s.user_regs_abi = 2;
  s.user_regs = {1, 2, 0x401777};
  FakeUnwinder unwinder;
  UnwindStatistics stats;
  auto out = ReadSamples(UnwindToBytes({s}, false, unwinder, &stats));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].callchain, s.callchain);
}

TEST(UnwindStatisticsTest, OneLinePerReasonWithTheModuleAndTheRemedy) {
  UnwindStatistics stats;
  EXPECT_TRUE(DescribeUnwinding(stats).empty());
  for (int i = 0; i < 6; ++i) stats.Add({UnwindEnd::kOutermostFrame, ""}, 5);
  stats.Add({UnwindEnd::kNoBinary, "/opt/app/prog"}, 1);
  stats.Add({UnwindEnd::kNoBinary, "/usr/lib/libc.so.6"}, 3);
  stats.Add({UnwindEnd::kStackCopyTooShort, "/opt/app/prog"}, 2);
  stats.Add({UnwindEnd::kFrameLimit, ""}, 256);
  EXPECT_EQ(stats.samples, 10u);
  EXPECT_EQ(stats.complete, 7u);
  EXPECT_EQ(stats.incomplete(), 3u);
  auto lines = DescribeUnwinding(stats);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0],
            "7 of 10 user stacks (70.0%) unwound from their DWARF stack copies to the outermost "
            "frame, 29.2 user frames on average");
  EXPECT_EQ(lines[1],
            "2 not unwound to the end (20.0%, 1 of them leaf only): no binary: /opt/app/prog was "
            "not found here; name it with --binary FILE or --symfs DIR");
  EXPECT_NE(lines[2].find("1 not unwound to the end (10.0%, 0 of them leaf only): stack copy "
                          "too short: "),
            std::string::npos)
      << lines[2];
  EXPECT_NE(lines[2].find("--call-graph dwarf,SIZE"), std::string::npos);
}

// -g's repair: the walk of the stack copy (leaf first) against the kernel's frame-pointer chain.
// Addresses below stand for: 0x10 the sampled pc in libc, 0x2x libc's return addresses, 0x3x the
// program's (0x31 into the function that called libc, 0x32 into main, 0x33 into _start's caller).
using ChainFrames = std::vector<uint64_t>;

ChainRepairStatistics Mend(const ChainFrames& walked, UnwindEnd end, ChainFrames* chain) {
  ChainRepairStatistics stats;
  MendFramePointerChain(walked, {end, "/lib/libc.so.6"}, chain, &stats);
  EXPECT_EQ(stats.samples, 1u);
  return stats;
}

TEST(ChainRepairTest, FramesALeafWithoutFramePointerSkippedArePutIn) {
  // nanosleep's wrapper keeps the caller's frame pointer: the chain goes from the pc straight to
  // the return address into main, skipping the wrapper's caller and the wrapper itself.
  ChainFrames chain = {0x10, 0x32, 0x33};
  auto stats = Mend({0x10, 0x21, 0x31, 0x32}, UnwindEnd::kStackCopyTooShort, &chain);
  EXPECT_EQ(chain, (ChainFrames{0x10, 0x21, 0x31, 0x32, 0x33}));
  EXPECT_EQ(stats.repaired, 1u);
  EXPECT_EQ(stats.frames_added, 2u);
  EXPECT_EQ(stats.unchanged(), 0u);
}

TEST(ChainRepairTest, AChainTheWalkConfirmsStaysAsItIs) {
  ChainFrames chain = {0x10, 0x31, 0x32, 0x33};
  auto stats = Mend({0x10, 0x31, 0x32}, UnwindEnd::kStackCopyTooShort, &chain);
  EXPECT_EQ(chain, (ChainFrames{0x10, 0x31, 0x32, 0x33}));
  EXPECT_EQ(stats.repaired, 0u);
  EXPECT_EQ(stats.unchanged(), 1u);
}

TEST(ChainRepairTest, AMisreadFrameIsTakenOut) {
  // A leaf that used the frame pointer register for data: the chain's second frame is noise.
  ChainFrames chain = {0x10, 0x9999, 0x32, 0x33};
  auto stats = Mend({0x10, 0x31, 0x32}, UnwindEnd::kStackCopyTooShort, &chain);
  EXPECT_EQ(chain, (ChainFrames{0x10, 0x31, 0x32, 0x33}));
  EXPECT_EQ(stats.repaired, 1u);
  EXPECT_EQ(stats.frames_added, 0u);  // one put in, one taken out
}

TEST(ChainRepairTest, RecursionMeetsWhereTheRestAgreesNotAtTheFirstRepeat) {
  // f calls itself: 0x31 three times. The chain lost one of them (the leaf's caller).
  ChainFrames chain = {0x10, 0x31, 0x31, 0x32};
  auto stats = Mend({0x10, 0x31, 0x31, 0x31, 0x32}, UnwindEnd::kOutermostFrame, &chain);
  EXPECT_EQ(chain, (ChainFrames{0x10, 0x31, 0x31, 0x31, 0x32}));
  EXPECT_EQ(stats.repaired, 1u);
  EXPECT_EQ(stats.frames_added, 1u);
}

TEST(ChainRepairTest, AWalkThatNeverMeetsTheChainLeavesItAndSaysWhy) {
  ChainFrames chain = {0x10, 0x32, 0x33};
  auto stats = Mend({0x10, 0x21}, UnwindEnd::kStackCopyTooShort, &chain);
  EXPECT_EQ(chain, (ChainFrames{0x10, 0x32, 0x33}));
  EXPECT_EQ(stats.kept(), 1u);
  EXPECT_EQ(stats.kept_by_end[static_cast<size_t>(UnwindEnd::kStackCopyTooShort)], 1u);
  ChainFrames no_cfi = {0x10, 0x32, 0x33};
  auto stats2 = Mend({0x10}, UnwindEnd::kNoCfi, &no_cfi);
  EXPECT_EQ(no_cfi, (ChainFrames{0x10, 0x32, 0x33}));
  EXPECT_EQ(stats2.kept_by_end[static_cast<size_t>(UnwindEnd::kNoCfi)], 1u);
  EXPECT_EQ(stats2.kept_module_by_end[static_cast<size_t>(UnwindEnd::kNoCfi)].module,
            "/lib/libc.so.6");
  // A walk of another pc than the chain's (none should be) is not compared.
  ChainFrames other = {0x11, 0x32};
  auto stats3 = Mend({0x10, 0x31, 0x32}, UnwindEnd::kOutermostFrame, &other);
  EXPECT_EQ(other, (ChainFrames{0x11, 0x32}));
  EXPECT_EQ(stats3.kept(), 1u);
}

TEST(ChainRepairTest, AWalkToTheOutermostFrameReplacesAChainItNeverMeets) {
  ChainFrames chain = {0x10, 0x9999, 0x8888};
  auto stats = Mend({0x10, 0x31, 0x32, 0x33}, UnwindEnd::kOutermostFrame, &chain);
  EXPECT_EQ(chain, (ChainFrames{0x10, 0x31, 0x32, 0x33}));
  EXPECT_EQ(stats.replaced, 1u);
}

// Through UnwindPass: a sample with a frame-pointer chain and a copy keeps its kernel part and
// gets the mended user part; the statistics count it as a repair, not as a DWARF walk.
TEST(ChainRepairTest, UnwindPassMendsFramePointerChainsAndCountsThemApart) {
  Sample s;
  s.ip = 0xffffffff81001234;
  s.callchain = {kContextKernel, 0xffffffff81001234, kContextUser, 0x401050, 0x401300};
  s.user_regs_abi = 2;
  s.user_regs = {0x7ffd0000, 0x7ffc0000, 0x401050};
  s.user_stack = std::string(64, 'x');
  FakeUnwinder unwinder;  // walks 0x401050, 0x401100, 0x401200, 0x401300
  UnwindStatistics stats;
  auto out = ReadSamples(UnwindToBytes({s}, false, unwinder, &stats));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].callchain, (ChainFrames{kContextKernel, 0xffffffff81001234, kContextUser,
                                           0x401050, 0x401100, 0x401200, 0x401300}));
  EXPECT_EQ(stats.samples, 0u);
  EXPECT_EQ(stats.chain_repair.samples, 1u);
  EXPECT_EQ(stats.chain_repair.repaired, 1u);
  EXPECT_EQ(stats.chain_repair.frames_added, 2u);
  auto lines = DescribeUnwinding(stats);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0],
            "1 frame-pointer stacks checked against a CFI walk of their stack copies: 1 (100.0%) "
            "mended, 2 frames the frame-pointer walk had skipped put in; 0 (0.0%) right as "
            "recorded");
}

// Where the unwinder says every function along the chain keeps its frame pointer (so the chain
// skipped no caller), the copy is not walked: the chain stays as recorded and counts as right.
TEST(ChainRepairTest, ALeafThatKeepsItsFramePointerIsNotWalked) {
  struct KeepsFramePointer : FakeUnwinder {
    bool ChainKeepsFramePointers(const UserStackSample&, std::span<const uint64_t>) override {
      return true;
    }
  } unwinder;
  Sample s;
  s.ip = 0x401050;
  s.callchain = {kContextUser, 0x401050, 0x401300};
  s.user_regs_abi = 2;
  s.user_regs = {0x7ffd0000, 0x7ffc0000, 0x401050};
  s.user_stack = std::string(64, 'x');
  UnwindStatistics stats;
  auto out = ReadSamples(UnwindToBytes({s}, false, unwinder, &stats));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].callchain, s.callchain);
  EXPECT_TRUE(unwinder.seen_pcs.empty());
  EXPECT_EQ(stats.chain_repair.samples, 1u);
  EXPECT_EQ(stats.chain_repair.unchanged(), 1u);
}

TEST(ChainRepairTest, TheRecorderDropsOnlyTheCopiesOfChainsThatKeepFramePointers) {
  // The unwinder answers by the chain's first frame: 0x401050's function keeps its frame
  // pointer, 0x7f0010's (a libc leaf) does not.
  struct KeepsFramePointerAt401050 : FakeUnwinder {
    bool ChainKeepsFramePointers(const UserStackSample& sample,
                                 std::span<const uint64_t> chain) override {
      asked_pids.push_back(sample.pid);
      return chain.front() == 0x401050;
    }
    std::vector<uint32_t> asked_pids;
  } unwinder;
  StackCopyTrimmer trimmer(unwinder);
  MmapRecord m;
  m.filename = "/bin/prog";
  trimmer.OnMmap(m);
  EXPECT_EQ(unwinder.mmaps, std::vector<std::string>{"/bin/prog"});

  auto with_copy = [](std::vector<uint64_t> chain) {
    Sample s;
    s.pid = 7;
    s.ip = chain.size() > 1 ? chain[1] : 0;
    s.callchain = std::move(chain);
    s.user_regs_abi = 2;
    s.user_regs = {0x7ffd0000, 0x7ffc0000, s.ip};
    s.user_stack = std::string(64, 'x');
    return s;
  };
  Sample keeps = with_copy({kContextUser, 0x401050, 0x401300});
  Sample leaf = with_copy({kContextUser, 0x7f0010, 0x401300});
  Sample dwarf = with_copy({});  // --call-graph dwarf: no user chain
  Sample kernel = with_copy({kContextKernel, 0xffffffff81000000, kContextUser, 0x401050, 0x401300});
  for (Sample* s : {&keeps, &leaf, &dwarf, &kernel}) trimmer.Trim(s);

  EXPECT_TRUE(keeps.user_stack.empty());
  EXPECT_TRUE(keeps.user_regs.empty());
  EXPECT_EQ(keeps.user_regs_abi, 0u);
  EXPECT_EQ(keeps.callchain, (std::vector<uint64_t>{kContextUser, 0x401050, 0x401300}));
  EXPECT_EQ(leaf.user_stack.size(), 64u);
  EXPECT_EQ(leaf.user_regs.size(), 3u);
  EXPECT_EQ(dwarf.user_stack.size(), 64u);
  EXPECT_TRUE(kernel.user_stack.empty());  // the user part of a chain through the kernel
  EXPECT_EQ(trimmer.trimmed(), 2u);
  EXPECT_EQ(unwinder.asked_pids, (std::vector<uint32_t>{7, 7, 7}));

  // The pass after the workload counts the trimmed chains among those it checked, as right.
  UnwindStatistics stats;
  std::vector<EventDesc> events(1);
  events[0].sample_regs_user = kMask;
  events[0].sample_stack_user = 1024;
  std::string bytes;
  auto writer = ProfileWriter::Create(std::make_unique<StringSink>(bytes), Metadata{}, events);
  ASSERT_TRUE(writer.ok());
  UnwindPass pass(events, unwinder, *writer.value(), false, "");
  for (const Sample& s : {keeps, leaf, kernel}) pass.OnSample(s);
  pass.CountCheckedChains(trimmer.trimmed());
  ASSERT_TRUE(pass.status().ok());
  EXPECT_EQ(pass.stats().chain_repair.samples, 3u);
  EXPECT_EQ(pass.stats().chain_repair.repaired, 1u);  // the libc leaf's caller put in
  EXPECT_EQ(pass.stats().chain_repair.unchanged(), 2u);
}

TEST(ChainRepairTest, StatisticsSurviveTheTrailer) {
  UnwindStatistics stats;
  stats.chain_repair.samples = 10;
  stats.chain_repair.repaired = 4;
  stats.chain_repair.frames_added = 9;
  stats.chain_repair.replaced = 1;
  const size_t no_cfi = static_cast<size_t>(UnwindEnd::kNoCfi);
  const size_t too_short = static_cast<size_t>(UnwindEnd::kStackCopyTooShort);
  // Each cause names the module most of its walks stopped in, not the first one named.
  stats.chain_repair.kept_by_end[no_cfi] = 3;
  for (const char* module : {"/lib/ld.so", "/opt/jit", "/opt/jit"})
    stats.chain_repair.kept_module_by_end[no_cfi].Add(module);
  stats.chain_repair.kept_by_end[too_short] = 1;
  stats.chain_repair.kept_module_by_end[too_short].Add("/lib/libc.so.6");
  auto back = UnwindStatisticsFromJson(UnwindStatisticsJson(stats));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->chain_repair.samples, 10u);
  EXPECT_EQ(back->chain_repair.repaired, 4u);
  EXPECT_EQ(back->chain_repair.frames_added, 9u);
  EXPECT_EQ(back->chain_repair.replaced, 1u);
  EXPECT_EQ(back->chain_repair.kept(), 4u);
  EXPECT_EQ(back->chain_repair.kept_module_by_end[no_cfi].module, "/opt/jit");
  EXPECT_EQ(back->chain_repair.kept_module_by_end[too_short].module, "/lib/libc.so.6");
  EXPECT_EQ(DescribeUnwinding(*back), DescribeUnwinding(stats));
  auto lines = DescribeUnwinding(stats);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_NE(lines[1].find("3 (30.0%) kept as recorded, maybe missing the leaf's callers: no CFI: "
                          "/opt/jit has no call frame information"),
            std::string::npos)
      << lines[1];
  // A trailer written before the modules were per cause names one for all.
  nlohmann::json old = UnwindStatisticsJson(stats);
  for (auto& entry : old["frame_pointer_repair"]["kept"]) entry.erase("module");
  old["frame_pointer_repair"]["kept_module"] = "/opt/old";
  auto from_old = UnwindStatisticsFromJson(old);
  ASSERT_TRUE(from_old.has_value());
  EXPECT_EQ(from_old->chain_repair.kept_module_by_end[no_cfi].module, "/opt/old");
  EXPECT_EQ(from_old->chain_repair.kept_module_by_end[too_short].module, "/opt/old");
}

}  // namespace
}  // namespace tprof
