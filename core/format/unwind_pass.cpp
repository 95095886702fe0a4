#include "core/format/unwind_pass.h"

#include "core/format/profile_reader.h"
#include "core/model/frame_resolver.h"

namespace tprof {

UnwindPass::UnwindPass(const std::vector<EventDesc>& events, UserStackUnwinder& unwinder,
                       ProfileWriter& output, bool keep_stacks, const std::string& architecture)
    : events_(events), unwinder_(unwinder), output_(output), keep_stacks_(keep_stacks) {
  unwinder_.OnArchitecture(architecture);
}

void UnwindPass::OnMmap(const MmapRecord& r) {
  unwinder_.OnMmap(r);
  Forward(r);
}
void UnwindPass::OnComm(const CommRecord& r) {
  unwinder_.OnComm(r);
  Forward(r);
}
void UnwindPass::OnTask(const TaskRecord& r) {
  unwinder_.OnTask(r);
  Forward(r);
}

void UnwindPass::OnSample(const Sample& sample) {
  // Registers without a stack copy (the user pc of kernel samples) are not for unwinding.
  if (sample.user_regs.empty() || sample.event >= events_.size() ||
      !events_[sample.event].sample_stack_user) {
    Forward(sample);
    return;
  }
  sample_ = sample;
  UserStackSample input;
  input.pid = sample.pid;
  input.tid = sample.tid;
  input.ip = sample.ip;
  input.regs_abi = sample.user_regs_abi;
  input.regs_mask = events_[sample.event].sample_regs_user;
  input.regs = sample.user_regs;
  input.stack = sample.user_stack;
  UnwindUserStack(input, unwinder_, &sample_, &stats_);
  if (!keep_stacks_) {
    sample_.user_regs_abi = 0;
    sample_.user_regs.clear();
    sample_.user_stack.clear();
  }
  Forward(sample_);
}

}  // namespace tprof

namespace tprof {

Result<UnwindStatistics> UnwindProfile(const std::string& input, const std::string& output,
                                       UserStackUnwinder& unwinder, bool keep_stacks,
                                       uint64_t checked_while_recording) {
  auto reader = ProfileReader::OpenFile(input);
  if (!reader.ok()) return reader.error();
  auto writer = ProfileWriter::CreateFile(output, reader->metadata(), reader->events());
  if (!writer.ok()) return writer.error();
  UnwindPass pass(reader->events(), unwinder, *writer.value(), keep_stacks,
                  reader->metadata().architecture);
  // Stack copies are large: none wait in batches.
  auto summary = reader->ReadRecords(pass, ProfileReader::Visiting::kOnThisThread);
  if (!summary.ok()) return summary.error().WithContext(input);
  if (!pass.status().ok()) return pass.status().error();
  pass.CountCheckedChains(checked_while_recording);
  Status finished = writer.value()->Finish({reader->metadata().duration_ns, 0, pass.stats()});
  if (!finished.ok()) return finished.error();
  return pass.stats();
}

}  // namespace tprof
