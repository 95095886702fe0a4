// Callers and callees of one function, from callchains: of the period of the samples whose chain
// passes through the function, how much came through each caller (the frame just outside it)
// and went to each callee (the frame just inside it). Each caller or callee counts once per
// sample, so recursion does not inflate shares. Functions are as FunctionAttribution says: by
// default an inlined function is a function of its own, called by the one it was inlined into.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/analysis/report_table.h"
#include "core/base/error.h"
#include "core/model/stack_tally.h"

namespace tprof {

// FUNC names a function when it equals its full name, its name without the parameter list, or
// its unqualified name ("compute_kernel" for "(anonymous namespace)::compute_kernel(double)").
bool FunctionNameMatches(const std::string& full_name, const std::string& wanted);

struct Neighbour {
  std::string function;
  std::string module;
  std::vector<uint64_t> period;   // per event
  std::vector<uint64_t> samples;  // per event
};

struct CallRelations {
  std::vector<EventDesc> events;
  std::string wanted;
  std::vector<std::string> matched;        // full names of the functions FUNC matched
  std::vector<uint64_t> through_period;    // per event: samples with the function on the chain
  std::vector<uint64_t> through_samples;   // per event
  std::vector<uint64_t> self_period;       // per event: samples with the function as the leaf
  std::vector<uint64_t> total_period;      // per event: every sample in the time range
  std::vector<uint64_t> no_caller_period;  // per event: the function was the chain's root
  std::vector<Neighbour> callers;          // by period of the first sampled event, descending
  std::vector<Neighbour> callees;
  bool has_callchains = false;
};

// Samples are tallied per distinct stack (StackTally) and each stack's relations are worked out
// once, at its first sample.
class CallRelationsBuilder : public ProcessTrackingVisitor {
 public:
  static Result<std::unique_ptr<CallRelationsBuilder>> Create(
      std::vector<EventDesc> events, FrameResolver& resolver, std::string function,
      const SampleFilter& filter, uint64_t start_timestamp,
      InlineMode inline_mode = InlineMode::kInnermost);

  void OnSample(const Sample& sample) override;

  CallRelations Finish();

 private:
  void OnThreadsChanged() override { thread_matches_.clear(); }  // names may have changed
  CallRelationsBuilder(std::vector<EventDesc> events, FrameResolver& resolver, std::string function,
                       SampleSelector selector, InlineMode inline_mode);
  // One function of a frame: the frame and the level FunctionAttribution gives it.
  using FunctionRef = std::pair<const ResolvedFrame*, uint32_t>;
  bool Matches(FunctionRef function);
  uint32_t NeighbourOf(FunctionRef function);
  void ResolveStack(const Sample& sample);

  // What one distinct stack contributes.
  struct StackRelations {
    bool through = false;                         // the function is on the chain
    bool self = false;                            // ... as the leaf
    bool no_caller = false;                       // ... as the root
    uint32_t callers_begin = 0, callers_end = 0;  // into neighbour_ids_, distinct
    uint32_t callees_begin = 0, callees_end = 0;
  };

  CallRelations result_;
  FunctionAttribution attribution_;
  SampleFrames frames_;
  SampleSelector selector_;
  StackTally tally_;
  std::vector<StackRelations> stacks_;  // by stack id
  std::vector<uint32_t> neighbour_ids_;
  absl::flat_hash_map<uint64_t, bool> thread_matches_;  // pid << 32 | tid
  absl::flat_hash_map<FunctionRef, bool> matches_;
  absl::flat_hash_map<FunctionRef, uint32_t> frame_neighbours_;
  std::vector<FunctionRef> functions_;  // of the stack being resolved, leaf first
  std::map<std::pair<std::string, std::string>, uint32_t> neighbour_index_;  // (module, function)
  std::vector<std::pair<std::string, std::string>> neighbours_;              // by id
  std::set<std::string> matched_;
};

}  // namespace tprof
