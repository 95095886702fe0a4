#include "core/analysis/function_attribution.h"

namespace tprof {

const char* InlineModeDescription(InlineMode mode) {
  return mode == InlineMode::kPhysical
             ? "out-of-line function (inlined calls count toward the function they were "
               "inlined into; --no-inline)"
             : "innermost function (an inlined function is a row of its own; --no-inline for "
               "the out-of-line function)";
}

const char* InlineModeName(InlineMode mode) {
  return mode == InlineMode::kPhysical ? "physical" : "innermost";
}

uint32_t FunctionAttribution::InlinedCount(const ResolvedFrame& frame) {
  uint32_t count = 0;
  while (count < frame.frames.size() && frame.frames[count].inlined) ++count;
  return count;
}

const std::string& FunctionAttribution::Name(const ResolvedFrame& frame, uint32_t level) const {
  // The out-of-line function keeps its symbol's name (what every view named it before inlined
  // calls were rows), even where DWARF names it differently (a .constprop clone).
  if (!Inlined(frame, level)) return frame.function;
  static const std::string kUnnamed = "[inlined]";
  const std::string& name = frame.frames[level].function;
  return name.empty() ? kUnnamed : name;
}

const std::string& FunctionAttribution::Mangled(const ResolvedFrame& frame, uint32_t level) const {
  return Inlined(frame, level) ? frame.frames[level].mangled : frame.mangled;
}

std::string FunctionAttribution::SourceLine(const ResolvedFrame& frame, uint32_t level) const {
  // The out-of-line function seen alone (kPhysical, or no inlined calls) has the address's line.
  const SourceFrame* source = nullptr;
  if (level == 0 || mode_ == InlineMode::kPhysical) {
    if (!frame.frames.empty()) source = &frame.frames.front();
  } else if (level < frame.frames.size()) {
    source = &frame.frames[level];
  }
  if (!source || source->file.empty()) return "??:0";
  return source->file + ":" + std::to_string(source->line);
}

}  // namespace tprof
