#include "core/model/stack_tally.h"

#include <xxhash.h>

namespace tprof {

StackInterner::Key StackInterner::KeyOf(std::span<const uint64_t> header,
                                        std::span<const uint64_t> body) {
  // The header seeds the hash of the body, which is hashed where it lies: copying the two
  // together cost as much as hashing them. (XXH3 mixes the length in, so bodies that are
  // prefixes of each other still differ.)
  const XXH64_hash_t seed = XXH3_64bits(header.data(), header.size() * sizeof(uint64_t));
  const XXH128_hash_t h = XXH3_128bits_withSeed(body.data(), body.size() * sizeof(uint64_t), seed);
  return Key{h.low64, h.high64};
}

StackInterner::Interned StackInterner::Intern(const Key& key) {
  auto [it, first] = ids_.try_emplace(key, static_cast<uint32_t>(ids_.size()));
  return {it->second, first};
}

StackInterner::Interned StackTally::Add(const Sample& sample, const StackInterner::Key& key) {
  const auto stack = stacks_.Intern(key);
  if (stack.first) counts_.resize(counts_.size() + events_);
  counts_[stack.id * events_ + sample.event].Add(sample.period);
  return stack;
}

}  // namespace tprof
