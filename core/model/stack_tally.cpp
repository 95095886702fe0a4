#include "core/model/stack_tally.h"

#include <xxhash.h>

namespace tprof {

StackInterner::Interned StackInterner::Intern(std::initializer_list<uint64_t> header,
                                              std::span<const uint64_t> body) {
  // The header seeds the hash of the body, which is hashed where it lies: copying the two
  // together cost as much as hashing them. (XXH3 mixes the length in, so bodies that are
  // prefixes of each other still differ.)
  const XXH64_hash_t seed = XXH3_64bits(header.begin(), header.size() * sizeof(uint64_t));
  const XXH128_hash_t h = XXH3_128bits_withSeed(body.data(), body.size() * sizeof(uint64_t), seed);
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
