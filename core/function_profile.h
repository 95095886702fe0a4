// Aggregation of samples by function: self share per event, sample counts, and the process that
// ran it. The walking skeleton of `tprof report`.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/address_space.h"
#include "core/frame_resolver.h"
#include "core/profile.h"

namespace tprof {

struct FunctionRow {
  std::string function;
  std::string module;
  std::string command;                 // process name
  std::vector<uint64_t> self_period;   // per event
  std::vector<uint64_t> self_samples;  // per event
};

struct FunctionProfile {
  std::vector<EventDesc> events;
  std::vector<FunctionRow> rows;  // sorted by self period of the first event, descending
  std::vector<uint64_t> total_period;
  std::vector<uint64_t> total_samples;
  uint64_t lost = 0;
};

class FunctionProfileBuilder : public RecordVisitor {
 public:
  FunctionProfileBuilder(std::vector<EventDesc> events, FrameResolver& resolver);

  void OnSample(const Sample& sample) override;
  void OnMmap(const MmapRecord& r) override { space_.OnMmap(r); }
  void OnComm(const CommRecord& r) override { space_.OnComm(r); }
  void OnTask(const TaskRecord& r) override { space_.OnTask(r); }
  void OnLost(const LostRecord& r) override { profile_.lost += r.lost; }

  FunctionProfile Finish();

 private:
  struct FrameKey {
    const Mapping* mapping;
    uint64_t address;
    bool operator==(const FrameKey&) const = default;
  };
  struct FrameKeyHash {
    size_t operator()(const FrameKey& k) const {
      return std::hash<const void*>()(k.mapping) ^ (k.address * 0x9e3779b97f4a7c15ULL);
    }
  };

  AddressSpace space_;
  FrameResolver& resolver_;
  FunctionProfile profile_;
  std::unordered_map<FrameKey, ResolvedFrame, FrameKeyHash> frame_cache_;
  // (command, module, function) -> row index
  std::map<std::tuple<std::string, std::string, std::string>, size_t> row_index_;
};

}  // namespace tprof
