#include "core/stack_tally.h"

#include <xxhash.h>

namespace tprof {

StackInterner::Interned StackInterner::Intern(std::initializer_list<uint64_t> header,
                                              std::span<const uint64_t> body) {
  words_.assign(header);
  words_.push_back(body.size());
  words_.insert(words_.end(), body.begin(), body.end());
  const XXH128_hash_t h = XXH3_128bits(words_.data(), words_.size() * sizeof(uint64_t));
  auto [it, first] = ids_.try_emplace(Key{h.low64, h.high64}, static_cast<uint32_t>(ids_.size()));
  return {it->second, first};
}

StackInterner::Interned StackTally::Add(const Sample& sample, uint64_t tag,
                                        AddressSpace::Generation generation) {
  const auto stack = stacks_.Intern(
      {tag, sample.pid, generation.process, generation.kernel, sample.ip}, sample.callchain);
  if (stack.first) {
    period_.resize(period_.size() + events_, 0);
    samples_.resize(samples_.size() + events_, 0);
  }
  const size_t at = stack.id * events_ + sample.event;
  period_[at] += sample.period;
  samples_[at] += 1;
  return stack;
}

}  // namespace tprof
