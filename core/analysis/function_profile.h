// Aggregation of samples by function: self share per event, sample counts, and the process that
// ran it. The walking skeleton of `tprof report`, and what `tprof diff` compares. A sample counts
// toward the function FunctionAttribution names (by default an inlined function itself).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/analysis/function_attribution.h"
#include "core/model/address_space.h"
#include "core/model/frame_resolver.h"
#include "core/model/profile.h"
#include "core/model/stack_tally.h"

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
  InlineMode inline_mode = InlineMode::kInnermost;  // what a row's function is
};

class FunctionProfileBuilder : public ProcessTrackingVisitor {
 public:
  FunctionProfileBuilder(std::vector<EventDesc> events, FrameResolver& resolver,
                         InlineMode inline_mode = InlineMode::kInnermost);

  void OnSample(const Sample& sample) override;
  void OnLost(const LostRecord& r) override { profile_.lost += r.lost; }
  bool reads_callers() const override { return false; }  // a row is the sample's ip's

  FunctionProfile Finish();

 private:
  void OnThreadsChanged() override {  // names may have changed
    command_of_thread_.clear();
    row_of_sample_.clear();
  }
  struct FrameKey {
    const Mapping* mapping;
    uint64_t address;
    bool operator==(const FrameKey&) const = default;
    template <typename H>
    friend H AbslHashValue(H h, const FrameKey& k) {
      return H::combine(std::move(h), k.mapping, k.address);
    }
  };

  FrameResolver& resolver_;
  FunctionAttribution attribution_;
  FunctionProfile profile_;
  // The function id of each distinct address (see FunctionId).
  absl::flat_hash_map<FrameKey, uint32_t> frame_cache_;
  absl::flat_hash_map<const ResolvedFrame*, uint32_t> function_of_frame_;  // held frames
  // (command, module, function) -> row index
  std::map<std::tuple<std::string, std::string, std::string>, size_t> row_index_;

  // The per-sample path without strings: the row of a (command, function) pair by small ids,
  // so that a sample costs a few hash lookups rather than building and comparing names.
  uint32_t CommandId(uint32_t pid, uint32_t tid);
  uint32_t FunctionId(const ResolvedFrame& frame);
  absl::flat_hash_map<uint64_t, uint32_t> command_of_thread_;  // pid << 32 | tid -> command id
  std::unordered_map<std::string, uint32_t> command_ids_;
  std::vector<std::string> commands_;
  std::map<std::pair<std::string, std::string>, uint32_t> function_ids_;  // (module, function)
  std::vector<std::pair<std::string, std::string>> functions_;            // by id
  absl::flat_hash_map<uint64_t, size_t> row_of_ids_;  // command id << 32 | function id -> row
  size_t RowOf(const Sample& sample);

  // The row of each distinct (thread, pc) under its address space's generation: one lookup per
  // sample for what the lookups above decide once. (A profile repeats its pcs: a million
  // samples may hold some tens of thousands.)
  struct SampleKey {
    uint64_t thread;  // pid << 32 | tid
    uint64_t ip;
    AddressSpace::Generation generation;
    bool operator==(const SampleKey&) const = default;
    template <typename H>
    friend H AbslHashValue(H h, const SampleKey& k) {
      return H::combine(std::move(h), k.thread, k.ip, k.generation.process, k.generation.kernel);
    }
  };
  absl::flat_hash_map<SampleKey, size_t> row_of_sample_;
  // Each row's self counts, row * events + event: a sample touches one cache line here, where
  // the rows' own vectors cost two more misses per sample (a third of a diff's time went to
  // them). Copied into the rows by Finish.
  std::vector<SampleCounts> counts_;
};

}  // namespace tprof
