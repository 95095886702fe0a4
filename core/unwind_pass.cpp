#include "core/unwind_pass.h"

#include <bit>

#include "core/frame_resolver.h"
#include "core/profile_reader.h"

namespace tprof {

uint64_t UserPc(const Sample& sample, uint64_t regs_mask) {
  if (!IsKernelAddress(sample.ip)) return sample.ip;
#if defined(__x86_64__)
  constexpr unsigned kPcRegister = 8;  // PERF_REG_X86_IP
#elif defined(__aarch64__)
  constexpr unsigned kPcRegister = 32;  // PERF_REG_ARM64_PC
#else
  constexpr unsigned kPcRegister = 64;
#endif
  if (kPcRegister >= 64 || !(regs_mask & (1ull << kPcRegister))) return 0;
  // Registers are stored lowest mask bit first: the pc's index is the count of bits below it.
  size_t index = static_cast<size_t>(std::popcount(regs_mask & ((1ull << kPcRegister) - 1)));
  return index < sample.user_regs.size() ? sample.user_regs[index] : 0;
}

UnwindPass::UnwindPass(const std::vector<EventDesc>& events, UserStackUnwinder& unwinder,
                       ProfileWriter& output, bool keep_stacks)
    : events_(events), unwinder_(unwinder), output_(output), keep_stacks_(keep_stacks) {}

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
  if (sample.user_regs.empty() || sample.event >= events_.size()) {
    Forward(sample);
    return;
  }
  ++stats_.samples_with_stacks;
  sample_ = sample;
  const uint64_t regs_mask = events_[sample.event].sample_regs_user;
  const uint64_t pc = UserPc(sample, regs_mask);
  // The kernel part as recorded (with exclude_callchain_user the kernel adds no user frames).
  std::vector<uint64_t>& chain = sample_.callchain;
  while (!chain.empty() && chain.back() == kContextUser) chain.pop_back();
  if (pc) {
    chain.push_back(kContextUser);
    chain.push_back(pc);
    UserStackSample input;
    input.pid = sample.pid;
    input.tid = sample.tid;
    input.ip = pc;
    input.regs_abi = sample.user_regs_abi;
    input.regs_mask = regs_mask;
    input.regs = sample.user_regs;
    input.stack = sample.user_stack;
    frames_.clear();
    if (unwinder_.Unwind(input, &frames_) && !frames_.empty()) {
      ++stats_.unwound;
      stats_.total_user_frames += frames_.size();
      chain.insert(chain.end(), frames_.begin(), frames_.end());
    }
  }
  if (!keep_stacks_) {
    sample_.user_regs_abi = 0;
    sample_.user_regs.clear();
    sample_.user_stack.clear();
  }
  Forward(sample_);
}

}  // namespace tprof

namespace tprof {

Result<UnwindStats> UnwindProfile(const std::string& input, const std::string& output,
                                  UserStackUnwinder& unwinder, bool keep_stacks) {
  auto reader = ProfileReader::OpenFile(input);
  if (!reader.ok()) return reader.error();
  auto writer = ProfileWriter::CreateFile(output, reader->metadata(), reader->events());
  if (!writer.ok()) return writer.error();
  UnwindPass pass(reader->events(), unwinder, *writer.value(), keep_stacks);
  auto summary = reader->ReadRecords(pass);
  if (!summary.ok()) return summary.error().WithContext(input);
  if (!pass.status().ok()) return pass.status().error();
  Status finished = writer.value()->Finish({reader->metadata().duration_ns, 0});
  if (!finished.ok()) return finished.error();
  return pass.stats();
}

}  // namespace tprof
