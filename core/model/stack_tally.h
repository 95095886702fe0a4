// Per-stack tallies: samples grouped by their exact stack (process, the caller's tag, ip and
// callchain, under the address-space generation they were taken in), with period and sample
// counts per event. Real profiles repeat stacks heavily (a hot loop samples the same chain
// thousands of times), so an aggregation that tallies stacks and resolves each distinct stack
// once, at its first sample, costs one hash of the raw chain per sample instead of a lookup and
// a string key per frame.
//
// Stacks are told apart by a 128-bit hash (XXH3) of their raw contents rather than by the
// contents themselves, which keeps the table small; two different stacks would merge only on a
// 128-bit collision (probability about n^2 / 2^129 for n distinct stacks).
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/model/address_space.h"
#include "core/model/profile.h"

namespace tprof {

// A total period and its number of samples, as aggregations keep them per (stack or row, event):
// side by side, so that counting a sample touches one cache line of them, not two.
struct SampleCounts {
  uint64_t period = 0;
  uint64_t samples = 0;
  void Add(uint64_t more_period, uint64_t more_samples = 1) {
    period += more_period;
    samples += more_samples;
  }
};

// Dense ids for distinct word sequences (a context header, then a body such as a callchain).
class StackInterner {
 public:
  struct Interned {
    uint32_t id;  // from 0
    bool first;   // never seen before: the caller resolves what it means now
  };
  // The words' hash, which tells them apart: computed once, it serves a Prefetch and the Intern
  // after it.
  struct Key {
    uint64_t low = 0, high = 0;
    bool operator==(const Key&) const = default;
    template <typename H>
    friend H AbslHashValue(H h, const Key& k) {
      return H::combine(std::move(h), k.low);  // already a hash
    }
  };
  static Key KeyOf(std::span<const uint64_t> header, std::span<const uint64_t> body);
  static Key KeyOf(std::span<const uint64_t> header, std::span<const uint8_t> body);

  Interned Intern(const Key& key);
  Interned Intern(std::span<const uint64_t> header, std::span<const uint64_t> body) {
    return Intern(KeyOf(header, body));
  }
  Interned Intern(std::initializer_list<uint64_t> header, std::span<const uint64_t> body) {
    return Intern(std::span(header.begin(), header.size()), body);
  }
  // Starts fetching the table slot that Intern of the same key will probe.
  void Prefetch(const Key& key) const { ids_.prefetch(key); }
  size_t size() const { return ids_.size(); }

 private:
  absl::flat_hash_map<Key, uint32_t> ids_;
};

// Dense ids for distinct callers of samples (SplitStack::callers): what aggregations resolve once
// for every stack that differs only in its leaf. Callers are told apart by the same things a
// stack is (a tag, the process and its address-space generation) and by the context they start in.
class CallerInterner {
 public:
  StackInterner::Interned Intern(const Sample& sample, const SplitStack& split, uint64_t tag,
                                 AddressSpace::Generation generation) {
    return callers_.Intern(
        {tag, sample.pid, generation.process, generation.kernel, split.callers_kernel},
        split.callers);
  }

 private:
  StackInterner callers_;
};

class StackTally {
 public:
  explicit StackTally(size_t events) : events_(events) {}

  // Counts `sample` under its stack. `tag` separates samples the caller aggregates apart even
  // with equal stacks (a thread or process key, say). `generation` is the address space's for
  // the sample's process: after a mapping changes, an equal raw stack may mean other code.
  StackInterner::Interned Add(const Sample& sample, uint64_t tag,
                              AddressSpace::Generation generation) {
    return Add(sample, KeyOf(sample, tag, generation));
  }
  // The same with the sample's key computed before (KeyOf of the same tag and generation).
  StackInterner::Interned Add(const Sample& sample, const StackInterner::Key& key);
  // A deferred callchain is keyed by its bytes, which are told apart from frames by the header.
  static StackInterner::Key KeyOf(const Sample& sample, uint64_t tag,
                                  AddressSpace::Generation generation) {
    const DeferredCallchain& deferred = sample.deferred_callchain;
    if (deferred)
      return StackInterner::KeyOf(HeaderOf(sample, tag, generation, /*deferred=*/true),
                                  std::span(deferred.bytes, deferred.size));
    return StackInterner::KeyOf(HeaderOf(sample, tag, generation, false), sample.callchain);
  }
  // For a sample about to be added (see RecordVisitor::OnSampleAhead): the table is larger than
  // the caches, and a lookup that waits for memory was most of a tally's time.
  void Prefetch(const StackInterner::Key& key) const { stacks_.prefetch(key); }

  size_t stacks() const { return stacks_.size(); }
  // What was counted under a stack (by its id) for an event. The first event's counts are read
  // from a copy by id, made again when samples were added since it was last made: read them
  // after the samples, as aggregations do at their end, from the thread that added them.
  uint64_t period(uint32_t stack, size_t event) const { return CountsOf(stack, event).period; }
  uint64_t samples(uint32_t stack, size_t event) const { return CountsOf(stack, event).samples; }

 private:
  // What sets a sample's stack apart beside its callchain. Add and Prefetch both key by it: a
  // prefetch keyed otherwise would fetch a slot Add never probes (slower, never wrong).
  static std::array<uint64_t, 6> HeaderOf(const Sample& sample, uint64_t tag,
                                          AddressSpace::Generation generation, bool deferred) {
    return {tag, sample.pid, generation.process, generation.kernel, sample.ip, deferred};
  }
  const SampleCounts& CountsOf(uint32_t stack, size_t event) const;

  // A stack's id and its first event's counts share the table's slot, which the prefetch has
  // fetched: counts kept apart by id cost a second cache miss per sample (some 6 % of a flat
  // report's time). Most profiles sample one event; the others' counts are kept by id.
  struct Stack {
    uint32_t id = 0;
    SampleCounts first_event;
  };
  size_t events_;
  absl::flat_hash_map<StackInterner::Key, Stack> stacks_;
  std::vector<SampleCounts> other_events_;         // stack * (events - 1) + event - 1
  mutable std::vector<SampleCounts> first_event_;  // by stack id, copied from stacks_ when read
  mutable bool first_event_stale_ = false;
};

// The stack keys of the samples a tally was told of ahead (RecordVisitor::OnSampleAhead), kept
// for their visits, so that each sample's words are hashed once rather than for the hint and
// again for the tally. A hint is for the sample after the next one, so the last two are held,
// each with the number of the visit it is for, and a visit takes a key only when it is that
// visit, of the same sample object with the same time and ip: a hint not followed as given (a
// filter before the tally dropped a sample) or a sample object reused for another sample gives
// no key, never a wrong one. (The last two hints name two different objects: a decoder's
// consecutive samples are.) A record that may change what a key is made of (a mapping, a
// thread's name) makes the keys hinted before it forgotten: a batch's replay hints its next
// sample even with such a record between.
class HintedStackKeys {
 public:
  void Forget() { slots_ = {}; }
  void Hinted(const Sample& sample, const StackInterner::Key& key) {
    slots_[next_] = {&sample, sample.time, sample.ip, visits_ + 1, key};
    next_ ^= 1;
  }
  // Counts a visit; `*key` is set to the key hinted for this visit of `sample` when there is one.
  bool Visit(const Sample& sample, StackInterner::Key* key) {
    const uint64_t visit = visits_++;
    for (const Slot& slot : slots_)
      if (slot.sample == &sample && slot.visit == visit && slot.time == sample.time &&
          slot.ip == sample.ip) {
        *key = slot.key;
        return true;
      }
    return false;
  }

 private:
  struct Slot {
    const Sample* sample = nullptr;
    uint64_t time = 0, ip = 0;
    uint64_t visit = UINT64_MAX;
    StackInterner::Key key;
  };
  std::array<Slot, 2> slots_;
  size_t next_ = 0;
  uint64_t visits_ = 0;  // OnSample calls so far
};

}  // namespace tprof
