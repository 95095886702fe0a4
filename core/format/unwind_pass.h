// Turns samples that carry user register and stack copies into samples with complete callchains:
// the kernel part as recorded, then PERF_CONTEXT_USER, the user pc and the frames the unwinder
// finds. Runs over a finished recording (or an import), so unwinding costs nothing while the
// workload runs, and the copies are dropped unless asked for.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/format/profile_writer.h"
#include "core/model/profile.h"
#include "core/model/user_stack_unwinder.h"

namespace tprof {

class UnwindPass : public RecordVisitor {
 public:
  UnwindPass(const std::vector<EventDesc>& events, UserStackUnwinder& unwinder,
             ProfileWriter& output, bool keep_stacks, const std::string& architecture = "");

  void OnSample(const Sample& sample) override;
  void OnMmap(const MmapRecord& r) override;
  void OnComm(const CommRecord& r) override;
  void OnTask(const TaskRecord& r) override;
  void OnLost(const LostRecord& r) override { Forward(r); }
  void OnThrottle(const ThrottleRecord& r) override { Forward(r); }

  // The first write error, if any.
  const Status& status() const { return status_; }
  const UnwindStatistics& stats() const { return stats_; }
  // Chains checked (and found right) before this pass, whose samples come without a copy.
  void CountCheckedChains(uint64_t n) { stats_.chain_repair.samples += n; }

 private:
  template <typename RecordT>
  void Forward(const RecordT& r) {
    if (status_.ok()) status_ = output_.Write(r);
  }

  const std::vector<EventDesc>& events_;
  UserStackUnwinder& unwinder_;
  ProfileWriter& output_;
  bool keep_stacks_;
  Sample sample_;
  Status status_;
  UnwindStatistics stats_;
};

}  // namespace tprof

namespace tprof {

// Reads a finished recording whose samples carry stack copies and writes `output` with unwound
// callchains (and the copies too when `keep_stacks`). The metadata and events are carried over.
// `checked_while_recording`: -g chains a StackCopyTrimmer found right as recorded and wrote
// without their copies; they count among the chains checked.
Result<UnwindStatistics> UnwindProfile(const std::string& input, const std::string& output,
                                       UserStackUnwinder& unwinder, bool keep_stacks,
                                       uint64_t checked_while_recording = 0);

}  // namespace tprof
