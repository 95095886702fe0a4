// Samples aggregated by distinct stack of resolved locations: the analysis model that exporters
// (pprof, speedscope) render. Unlike the call tree, it keeps addresses and the mappings that
// hold them, which pprof's Location and Mapping messages need; unlike the raw records, every
// distinct (thread, stack) appears once with its summed period per event.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/model/address_space.h"
#include "core/model/frame_resolver.h"
#include "core/model/profile.h"
#include "core/model/stack_tally.h"

namespace tprof {

struct StackMapping {
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t file_offset = 0;
  std::string filename;
  std::string build_id;  // raw bytes; empty when unknown
};

inline constexpr uint32_t kNoMapping = static_cast<uint32_t>(-1);

// One distinct code address of the profile, resolved once.
struct StackLocation {
  uint32_t mapping = kNoMapping;  // index into StackProfile::mappings
  // The address looked up: the sampled pc for leaves, the return address minus one (inside the
  // call instruction) for callers.
  uint64_t address = 0;
  bool kernel = false;
  ResolvedFrame frame;
};

struct Stack {
  uint32_t pid = 0;
  uint32_t tid = 0;
  std::string comm;                 // the thread's name when the stack was first sampled
  std::vector<uint32_t> locations;  // leaf first, indexes into StackProfile::locations
  std::vector<uint64_t> period;     // per event
  std::vector<uint64_t> samples;    // per event
};

struct StackProfile {
  std::vector<EventDesc> events;
  std::vector<StackMapping> mappings;
  std::vector<StackLocation> locations;
  std::vector<Stack> stacks;            // in order of first appearance
  std::vector<uint64_t> total_period;   // per event
  std::vector<uint64_t> total_samples;  // per event
};

class StackProfileBuilder : public ProcessTrackingVisitor {
 public:
  StackProfileBuilder(std::vector<EventDesc> events, FrameResolver& resolver);

  void OnSample(const Sample& sample) override;

  StackProfile Finish();

 private:
  uint32_t MappingIndex(const Mapping* mapping);
  uint32_t LocationIndex(uint32_t pid, uint64_t address, bool kernel);
  // The index in profile_.stacks of the sample's resolved stack, added when new.
  uint32_t ResolveStack(const Sample& sample);

  struct LocationKey {
    uint32_t mapping;
    uint64_t address;
    uint32_t pid;  // only for addresses outside any mapping (JIT code is named per process)
    bool operator==(const LocationKey&) const = default;
  };
  struct LocationKeyHash {
    size_t operator()(const LocationKey& k) const {
      return (k.address * 0x9e3779b97f4a7c15ULL) ^ (uint64_t{k.mapping} << 32) ^ k.pid;
    }
  };
  struct StackKeyHash {
    size_t operator()(const std::vector<uint32_t>& key) const;
  };

  FrameResolver& resolver_;
  StackProfile profile_;
  // A Mapping's address is reused once the address space drops it; entries are checked against
  // the mapping's content before use.
  std::unordered_map<const Mapping*, uint32_t> mapping_by_pointer_;
  std::map<std::tuple<uint64_t, uint64_t, uint64_t, std::string, std::string>, uint32_t>
      mapping_by_content_;
  std::unordered_map<LocationKey, uint32_t, LocationKeyHash> location_index_;
  // pid, tid, then the location indexes, leaf first.
  std::unordered_map<std::vector<uint32_t>, uint32_t, StackKeyHash> stack_index_;
  std::vector<uint32_t> key_;  // reused per sample
  // Raw stacks (thread, ip, callchain, address-space generation) to their index in
  // profile_.stacks: each raw stack is resolved once, at its first sample.
  StackInterner raw_stacks_;
  std::vector<uint32_t> stack_of_raw_;
};

}  // namespace tprof
