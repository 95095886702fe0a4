#include "core/model/stack_tally.h"

#include <xxhash.h>

namespace tprof {

StackInterner::Key StackInterner::KeyOf(std::span<const uint64_t> header,
                                        std::span<const uint64_t> body) {
  return KeyOf(header, std::span(reinterpret_cast<const uint8_t*>(body.data()), body.size_bytes()));
}

StackInterner::Key StackInterner::KeyOf(std::span<const uint64_t> header,
                                        std::span<const uint8_t> body) {
  // The header seeds the hash of the body, which is hashed where it lies: copying the two
  // together cost as much as hashing them. (XXH3 mixes the length in, so bodies that are
  // prefixes of each other still differ.)
  const XXH64_hash_t seed = XXH3_64bits(header.data(), header.size() * sizeof(uint64_t));
  const XXH128_hash_t h = XXH3_128bits_withSeed(body.data(), body.size(), seed);
  return Key{h.low64, h.high64};
}

StackInterner::Interned StackInterner::Intern(const Key& key) {
  auto [it, first] = ids_.try_emplace(key, static_cast<uint32_t>(ids_.size()));
  return {it->second, first};
}

StackInterner::Interned StackTally::Add(const Sample& sample, const StackInterner::Key& key) {
  auto [it, first] = stacks_.try_emplace(key, Stack{static_cast<uint32_t>(stacks_.size()), {}});
  const uint32_t id = it->second.id;
  if (sample.event == 0) {
    it->second.first_event.Add(sample.period);
  } else {
    if (other_events_.size() < (id + size_t{1}) * (events_ - 1))
      other_events_.resize((id + size_t{1}) * (events_ - 1));
    other_events_[id * (events_ - 1) + sample.event - 1].Add(sample.period);
  }
  first_event_stale_ = true;
  return {id, first};
}

const SampleCounts& StackTally::CountsOf(uint32_t stack, size_t event) const {
  if (event > 0) {
    static const SampleCounts kNone;
    const size_t at = stack * (events_ - 1) + event - 1;
    return at < other_events_.size() ? other_events_[at] : kNone;
  }
  if (first_event_stale_) {
    first_event_.resize(stacks_.size());
    for (const auto& [key, counted] : stacks_) first_event_[counted.id] = counted.first_event;
    first_event_stale_ = false;
  }
  return first_event_[stack];
}

}  // namespace tprof
