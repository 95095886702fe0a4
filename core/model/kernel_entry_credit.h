// Credits a sample taken in the kernel on a user thread's behalf (a page fault, a system call,
// an interrupt) to the user code that entered the kernel, so that a user function's row, its
// windows of group counts and its flame-graph frame hold the kernel work it caused. perf shows
// such samples as kernel functions; tprof does that only when asked (`report --kernel-rows`),
// because "which of my functions faults" is the question a per-function count answers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/model/profile.h"

namespace tprof {

struct KernelCreditStatistics {
  uint64_t samples = 0;         // every sample seen
  uint64_t kernel_samples = 0;  // samples whose leaf is kernel code
  uint64_t from_callchain = 0;  // credited through the callchain's user part
  uint64_t from_registers = 0;  // credited through the sampled user registers' pc
  // Kernel samples left as kernel rows: kernel threads, and samples recorded with neither a
  // callchain nor user registers (older recordings, most perf.data files without -g).
  uint64_t without_user_context = 0;

  uint64_t credited() const { return from_callchain + from_registers; }
};

// The index in a sample's user registers of the user pc, for registers copied per `regs_mask`
// (the event's sample_regs_user) on `architecture` (`uname -m`); nullopt when the mask lacks it.
std::optional<size_t> UserPcIndex(const std::string& architecture, uint64_t regs_mask);
// The perf_regs bit of the user pc, 0 where the architecture is unknown to tprof.
uint64_t UserPcRegisterBit(const std::string& architecture);

// Whether every event that takes samples records a user context for its kernel samples (a
// callchain, or the user pc among its user registers), so that kernel work can be credited to
// user functions in every sample that has one. A comparison credits both sides or neither.
bool RecordsUserContext(const std::vector<EventDesc>& events, const std::string& architecture);

// Forwards every record to `downstream`, each kernel sample with a user context rewritten so that
// its leaf is the user pc at kernel entry and its callers are the user frames.
class KernelEntryCredit : public ForwardingVisitor {
 public:
  KernelEntryCredit(const std::vector<EventDesc>& events, const std::string& architecture,
                    RecordVisitor& downstream);
  void OnSample(const Sample& sample) override;
  // It completes what it rewrites; the rest goes on as it came.
  bool takes_deferred_callchains() const override { return next().takes_deferred_callchains(); }

  const KernelCreditStatistics& statistics() const { return stats_; }

 private:
  std::vector<std::optional<size_t>> pc_index_;  // per event
  // Per event: whether its samples count in the statistics; not the off-cpu event's reasons,
  // which read the off-cpu samples a second time.
  std::vector<bool> counted_;
  Sample credited_;  // reused, so that rewriting does not allocate per sample
  KernelCreditStatistics stats_;
  KernelCreditStatistics uncounted_;
};

}  // namespace tprof
