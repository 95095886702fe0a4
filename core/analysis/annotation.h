// A function's samples placed on its instructions: what `report --annotate` shows. The listing
// comes as data (core/model/code_listing.h, read from the binary by symbolize/); this step only
// places, so that the renderer only formats.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "core/analysis/instruction_profile.h"
#include "core/model/code_listing.h"

namespace tprof {

struct InstructionCounts {
  std::vector<uint64_t> period;   // per event
  std::vector<uint64_t> samples;  // per event
};

struct FunctionAnnotation {
  const FunctionSamples* function = nullptr;
  std::vector<size_t> shown_events;  // the events with samples in the function
  CodeListing listing;
  // By instruction address; by sampled key (file offset or address) when there is no listing.
  std::map<uint64_t, InstructionCounts> counts;
  // Samples at pcs outside the symbol's range (a listing only).
  InstructionCounts outside;
};

// Places `function`'s samples on the instructions of `listing` (each pc on the instruction that
// holds it), or keeps them by sampled key when the listing has no instructions.
FunctionAnnotation AnnotateFunction(const FunctionSamples& function, size_t events,
                                    CodeListing listing);

}  // namespace tprof
