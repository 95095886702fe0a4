#include "core/analysis/annotation.h"

#include <algorithm>
#include <iterator>

namespace tprof {

FunctionAnnotation AnnotateFunction(const FunctionSamples& function, size_t events,
                                    CodeListing listing) {
  FunctionAnnotation a;
  a.function = &function;
  for (size_t e = 0; e < function.self_samples.size(); ++e)
    if (function.self_samples[e]) a.shown_events.push_back(e);
  a.listing = std::move(listing);
  a.outside.period.assign(events, 0);
  a.outside.samples.assign(events, 0);
  const std::vector<ListedInstruction>& instructions = a.listing.instructions;
  for (const auto& [key, period] : function.period_by_offset) {
    const std::vector<uint64_t>& samples = function.samples_by_offset.at(key);
    uint64_t address = key;
    bool placed = false;
    if (!instructions.empty()) {
      auto mapped = a.listing.address_of_offset.find(key);
      if (mapped != a.listing.address_of_offset.end() && mapped->second >= a.listing.start &&
          mapped->second < a.listing.end) {
        // The instruction holding the pc (a pc is normally an instruction's first byte).
        auto it = std::upper_bound(
            instructions.begin(), instructions.end(), mapped->second,
            [](uint64_t pc, const ListedInstruction& insn) { return pc < insn.address; });
        if (it != instructions.begin()) {
          address = std::prev(it)->address;
          placed = true;
        }
      }
      if (!placed) {
        for (size_t e = 0; e < period.size(); ++e) {
          a.outside.period[e] += period[e];
          a.outside.samples[e] += samples[e];
        }
        continue;
      }
    }
    InstructionCounts& slot = a.counts[address];
    if (slot.period.empty()) {
      slot.period.assign(period.size(), 0);
      slot.samples.assign(period.size(), 0);
    }
    for (size_t e = 0; e < period.size(); ++e) {
      slot.period[e] += period[e];
      slot.samples[e] += samples[e];
    }
  }
  return a;
}

}  // namespace tprof
