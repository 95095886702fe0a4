// Samples of chosen functions by instruction: for each function whose name matches a query, the
// period each event spent at each sampled pc, keyed by module and file offset so that every
// process that mapped the binary adds up. What annotate views render beside the disassembly.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/analysis/function_attribution.h"
#include "core/model/address_space.h"
#include "core/model/frame_resolver.h"
#include "core/model/profile.h"

namespace tprof {

// True when the function named `function` (demangled) or `mangled` is what `query` names: its
// demangled or mangled name, the demangled name without its parameter list, or that without its
// namespaces and classes ("compute_kernel" names
// "(anonymous namespace)::compute_kernel(unsigned long)").
bool FunctionMatches(const std::string& function, const std::string& mangled,
                     const std::string& query);

// The samples whose function (as FunctionAttribution names it, by default the innermost inlined
// function) is one asked for. An inlined function is annotated within each function it was
// inlined into: the listing is that function's, with the inlined function's samples.
struct FunctionSamples {
  std::string function;  // demangled, as resolved
  std::string mangled;
  // The out-of-line function whose code holds the samples, when `function` was inlined into
  // it; empty otherwise.
  std::string inlined_into;
  std::string inlined_into_mangled;
  std::string module;         // the mapping's file; "[kernel.kallsyms]", "[unknown]", ...
  std::string build_id;       // raw bytes; empty when unknown
  bool file_offsets = false;  // keys of `by_offset` are file offsets (else addresses)
  std::map<uint64_t, std::vector<uint64_t>> period_by_offset;   // per event
  std::map<uint64_t, std::vector<uint64_t>> samples_by_offset;  // per event
  std::vector<uint64_t> self_period;                            // per event
  std::vector<uint64_t> self_samples;                           // per event
};

struct InstructionProfile {
  std::vector<EventDesc> events;
  std::vector<FunctionSamples> functions;  // by self period of the first event, descending
  std::vector<uint64_t> total_period;
  std::vector<uint64_t> total_samples;
};

class InstructionProfileBuilder : public ProcessTrackingVisitor {
 public:
  InstructionProfileBuilder(std::vector<EventDesc> events, FrameResolver& resolver,
                            std::string query, InlineMode inline_mode = InlineMode::kInnermost);

  void OnSample(const Sample& sample) override;

  InstructionProfile Finish();

 private:
  struct Resolved {
    int function = -1;  // index into profile_.functions; -1: not a function asked for
    uint64_t key = 0;   // file offset or address
  };
  struct KeyHash {
    size_t operator()(const std::pair<const Mapping*, uint64_t>& k) const {
      return std::hash<const void*>()(k.first) ^ (k.second * 0x9e3779b97f4a7c15ULL);
    }
  };

  FrameResolver& resolver_;
  FunctionAttribution attribution_;
  std::string query_;
  InstructionProfile profile_;
  // (module, build-id, function, inlined into) -> index into profile_.functions
  std::map<std::tuple<std::string, std::string, std::string, std::string>, int> function_index_;
  std::unordered_map<std::pair<const Mapping*, uint64_t>, Resolved, KeyHash> cache_;
};

}  // namespace tprof
