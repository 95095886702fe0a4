// Callchain assembly around the unwinder: kernel part as recorded, then the user context marker,
// the user pc (from the sample or, for kernel samples, from the copied registers) and the frames
// the unwinder returns; stack copies dropped unless kept.
#include "core/unwind_pass.h"

#include <gtest/gtest.h>

#include "core/profile_reader.h"
#include "test/support/record_generator.h"

namespace tprof {
namespace {

// Returns fixed frames and records what it was given.
class FakeUnwinder : public UserStackUnwinder {
 public:
  void OnMmap(const MmapRecord& r) override { mmaps.push_back(r.filename); }
  bool Unwind(const UserStackSample& s, std::vector<uint64_t>* frames) override {
    seen_pcs.push_back(s.ip);
    seen_stack_sizes.push_back(s.stack.size());
    if (s.stack.empty()) return false;
    frames->insert(frames->end(), {0x401100, 0x401200, 0x401300});
    return true;
  }
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
                          UnwindStats* stats) {
  std::vector<EventDesc> events(1);
  events[0].name = "task-clock";
  events[0].sample_regs_user = kMask;
  std::string bytes;
  auto writer = ProfileWriter::Create(std::make_unique<StringSink>(bytes), Metadata{}, events);
  EXPECT_TRUE(writer.ok());
  UnwindPass pass(events, unwinder, *writer.value(), keep);
  MmapRecord m;
  m.filename = "/bin/prog";
  pass.OnMmap(m);
  for (const Sample& s : input) pass.OnSample(s);
  EXPECT_TRUE(pass.status().ok());
  EXPECT_TRUE(writer.value()->Finish({1, 1}).ok());
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
  UnwindStats stats;
  auto out = ReadSamples(UnwindToBytes({s}, false, unwinder, &stats));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].callchain,
            (std::vector<uint64_t>{kContextUser, 0x401050, 0x401100, 0x401200, 0x401300}));
  EXPECT_TRUE(out[0].user_stack.empty());
  EXPECT_TRUE(out[0].user_regs.empty());
  EXPECT_EQ(stats.unwound, 1u);
  EXPECT_EQ(stats.total_user_frames, 3u);
  EXPECT_EQ(unwinder.mmaps, std::vector<std::string>{"/bin/prog"});
}

TEST(UnwindPassTest, KernelSampleTakesTheUserPcFromTheRegisters) {
  Sample s;
  s.ip = 0xffffffff81001234;
  s.callchain = {kContextKernel, 0xffffffff81001234, 0xffffffff81005678};
  s.user_regs_abi = 2;
  s.user_regs = {0x7ffd0000, 0x7ffc0000, 0x401777};
  s.user_stack = std::string(64, 'x');
  FakeUnwinder unwinder;
  UnwindStats stats;
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
  UnwindStats stats;
  auto out = ReadSamples(UnwindToBytes({plain, no_stack}, false, unwinder, &stats));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].callchain, plain.callchain);
  EXPECT_EQ(out[1].callchain, (std::vector<uint64_t>{kContextUser, 0x401050}));
  EXPECT_EQ(stats.samples_with_stacks, 1u);
  EXPECT_EQ(stats.unwound, 0u);
}

}  // namespace
}  // namespace tprof
