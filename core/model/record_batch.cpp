#include "core/model/record_batch.h"

namespace tprof {

void RecordBatch::OnSample(const Sample& sample) {
  order_.emplace_back(Kind::kSample, static_cast<uint32_t>(samples_used_));
  if (samples_used_ == samples_.size())
    samples_.push_back(sample);
  else
    samples_[samples_used_] = sample;  // copy-assignment keeps the slot's room
  Sample& kept = samples_[samples_used_];
  CompleteCallchain(kept);  // the decoder's bytes are gone by the replay
  ++samples_used_;
  bytes_ += sizeof(Sample) +
            sizeof(uint64_t) *
                (kept.callchain.size() + kept.counter_values.size() + kept.user_regs.size()) +
            sizeof(BranchEntry) * kept.branches.size() + kept.user_stack.size();
}

void RecordBatch::Replay(RecordVisitor& visitor) const {
  // The batch was written on another core: ask for a coming sample's callchain ahead of its
  // visit, or the first visitor to read each one waits for it to cross.
  constexpr size_t kAhead = 4;
  auto prefetch = [this](size_t sample) {
    if (sample >= samples_used_) return;
    const std::vector<uint64_t>& chain = samples_[sample].callchain;
    for (size_t i = 0; i < chain.size(); i += 8) __builtin_prefetch(chain.data() + i);
  };
  for (size_t s = 0; s < kAhead; ++s) prefetch(s);
  // Samples are kept in their order, so the next one in the batch is the next visited.
  const bool hints = visitor.takes_sample_hints();
  const bool runs = visitor.takes_sample_runs();
  size_t run_end = 0;  // the samples before it were handed over ahead
  for (size_t at = 0; at < order_.size(); ++at) {
    const auto& [kind, index] = order_[at];
    switch (kind) {
      case Kind::kSample:
        if (runs && index >= run_end) {
          size_t next = at + 1;
          while (next < order_.size() && order_[next].first == Kind::kSample) ++next;
          run_end = index + (next - at);  // a run's samples are stored one after another
          visitor.OnSamplesAhead(std::span<const Sample>(samples_.data() + index, run_end - index));
        }
        prefetch(index + kAhead);
        if (hints && index + 1 < samples_used_) visitor.OnSampleAhead(samples_[index + 1]);
        visitor.OnSample(samples_[index]);
        break;
      case Kind::kMmap:
        visitor.OnMmap(mmaps_[index]);
        break;
      case Kind::kComm:
        visitor.OnComm(comms_[index]);
        break;
      case Kind::kTask:
        visitor.OnTask(tasks_[index]);
        break;
      case Kind::kLost:
        visitor.OnLost(losts_[index]);
        break;
      case Kind::kThrottle:
        visitor.OnThrottle(throttles_[index]);
        break;
    }
  }
}

void RecordBatch::Clear() {
  for (size_t s = 0; s < samples_used_; ++s)
    if (samples_[s].user_stack.capacity() > 4096) std::string().swap(samples_[s].user_stack);
  order_.clear();
  bytes_ = 0;
  samples_used_ = 0;
  mmaps_.clear();
  comms_.clear();
  tasks_.clear();
  losts_.clear();
  throttles_.clear();
}

BackgroundReplay::BackgroundReplay(RecordVisitor& visitor, size_t batch_records, size_t batches,
                                   size_t batch_bytes)
    : visitor_(visitor),
      batch_records_(batch_records),
      batch_bytes_(batch_bytes),
      slots_(batches, [this](RecordBatch& batch) {
        batch.Replay(visitor_);
        batch.Clear();
      }) {}

}  // namespace tprof
