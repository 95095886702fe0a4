// Kernel samples of user threads credited to the user code that entered the kernel: through the
// callchain's user part, else the sampled user pc; kernel threads' samples left alone.
#include "core/model/kernel_entry_credit.h"

#include <gtest/gtest.h>

namespace tprof {
namespace {

constexpr uint64_t kKernelPc = 0xffffffff81001000ull;
constexpr uint64_t kUserPc = 0x401234;

struct CollectedSamples : RecordVisitor {
  void OnSample(const Sample& s) override { samples.push_back(s); }
  std::vector<Sample> samples;
};

std::vector<EventDesc> Events(uint64_t regs_mask) {
  std::vector<EventDesc> events(1);
  events[0].name = "task-clock";
  events[0].sample_regs_user = regs_mask;
  return events;
}

TEST(KernelEntryCredit, UserPcIndexFollowsTheMaskOrderPerArchitecture) {
  EXPECT_EQ(UserPcIndex("x86_64", 1ull << 8), 0u);
  // perf's full x86-64 mask (AX..R15 without DS/ES/FS/GS): IP is the ninth register copied.
  EXPECT_EQ(UserPcIndex("x86_64", ((1ull << 24) - 1) & ~(0xfull << 12)), 8u);
  EXPECT_EQ(UserPcIndex("aarch64", (1ull << 33) - 1), 32u);  // x0..x30, sp, pc
  EXPECT_EQ(UserPcIndex("aarch64", 1ull << 32), 0u);
  EXPECT_EQ(UserPcIndex("x86_64", 0), std::nullopt);
  EXPECT_EQ(UserPcIndex("riscv64", 1ull << 8), std::nullopt);
}

TEST(KernelEntryCredit, CallchainUserPartBecomesTheStack) {
  CollectedSamples out;
  KernelEntryCredit credit(Events(0), "x86_64", out);
  Sample s;
  s.ip = kKernelPc;
  s.callchain = {kContextKernel, kKernelPc, kKernelPc + 0x40, kContextUser, kUserPc, 0x401500};
  credit.OnSample(s);
  ASSERT_EQ(out.samples.size(), 1u);
  EXPECT_EQ(out.samples[0].ip, kUserPc);
  EXPECT_EQ(out.samples[0].callchain, (std::vector<uint64_t>{kContextUser, kUserPc, 0x401500}));
  const SplitStack stack = SplitLeaf(out.samples[0]);
  EXPECT_EQ(stack.leaf, kUserPc);
  EXPECT_FALSE(stack.leaf_kernel);
  EXPECT_EQ(credit.statistics().from_callchain, 1u);
}

TEST(KernelEntryCredit, SampledUserPcWithoutACallchain) {
  CollectedSamples out;
  KernelEntryCredit credit(Events((1ull << 7) | (1ull << 8)), "x86_64", out);  // SP, IP
  Sample s;
  s.ip = kKernelPc;
  s.user_regs_abi = 2;  // PERF_SAMPLE_REGS_ABI_64
  s.user_regs = {0x7ffc0000, kUserPc};
  credit.OnSample(s);
  ASSERT_EQ(out.samples.size(), 1u);
  EXPECT_EQ(out.samples[0].ip, kUserPc);
  EXPECT_TRUE(out.samples[0].callchain.empty());
  EXPECT_EQ(credit.statistics().from_registers, 1u);
}

TEST(KernelEntryCredit, KernelOnlyChainGetsTheUserPcAsItsUserPart) {
  CollectedSamples out;
  KernelEntryCredit credit(Events(1ull << 32), "aarch64", out);
  Sample s;
  s.ip = kKernelPc;
  s.callchain = {kContextKernel, kKernelPc};
  s.user_regs_abi = 2;
  s.user_regs = {kUserPc};
  credit.OnSample(s);
  ASSERT_EQ(out.samples.size(), 1u);
  EXPECT_EQ(out.samples[0].callchain, (std::vector<uint64_t>{kContextUser, kUserPc}));
}

TEST(KernelEntryCredit, UserSamplesAndKernelThreadsPassUnchanged) {
  CollectedSamples out;
  KernelEntryCredit credit(Events(1ull << 8), "x86_64", out);
  Sample user;
  user.ip = kUserPc;
  user.user_regs_abi = 2;
  user.user_regs = {kUserPc};
  Sample kthread;  // a kworker: no user registers (abi 0) and a kernel-only chain
  kthread.ip = kKernelPc;
  kthread.callchain = {kContextKernel, kKernelPc};
  credit.OnSample(user);
  credit.OnSample(kthread);
  ASSERT_EQ(out.samples.size(), 2u);
  EXPECT_EQ(out.samples[0], user);
  EXPECT_EQ(out.samples[1], kthread);
  const KernelCreditStatistics& k = credit.statistics();
  EXPECT_EQ(k.samples, 2u);
  EXPECT_EQ(k.kernel_samples, 1u);
  EXPECT_EQ(k.credited(), 0u);
  EXPECT_EQ(k.without_user_context, 1u);
}

}  // namespace
}  // namespace tprof
