// The one place that decides which function a code address counts toward. Code inlined into
// other code is, by default, counted toward the innermost inlined function at the address (as
// pprof, hotspot and samply do), with the functions it was inlined into as its callers; with
// InlineMode::kPhysical, toward the out-of-line function that holds the address (the symbol).
// Every analysis that names functions (report rows, children totals, callers/callees, the
// function diff, annotate) asks here, so they all agree on what a row is.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "core/model/frame_resolver.h"

namespace tprof {

enum class InlineMode : uint8_t {
  kInnermost,  // the innermost inlined function; the functions it was inlined into are callers
  kPhysical,   // the out-of-line function holding the address; inlined calls are not seen
};

// "innermost function (inlined functions are rows of their own)" and the like, for headers.
const char* InlineModeDescription(InlineMode mode);
// "innermost" or "physical", for JSON/CSV.
const char* InlineModeName(InlineMode mode);

class FunctionAttribution {
 public:
  explicit FunctionAttribution(InlineMode mode = InlineMode::kInnermost) : mode_(mode) {}

  InlineMode mode() const { return mode_; }

  // How many functions an address counts toward: the inlined calls active there and the
  // out-of-line function, or just the latter with kPhysical. Level 0 is the function samples
  // at the address count toward as self; each next level is the function the previous one was
  // inlined into; the last is the out-of-line function.
  uint32_t Depth(const ResolvedFrame& frame) const { return DepthOf(InlinedCount(frame)); }
  // The same for a frame whose InlinedCount is known.
  uint32_t DepthOf(uint32_t inlined_count) const {
    return mode_ == InlineMode::kPhysical ? 1 : inlined_count + 1;
  }
  // The function at `level` (< Depth): its demangled name.
  const std::string& Name(const ResolvedFrame& frame, uint32_t level) const;
  // Its mangled name; empty when not mangled or unknown.
  const std::string& Mangled(const ResolvedFrame& frame, uint32_t level) const;
  // True when the function at `level` was inlined (not the out-of-line function).
  bool Inlined(const ResolvedFrame& frame, uint32_t level) const {
    return level + 1 < Depth(frame);
  }
  // "file:line" at `level`: the address's own line at level 0, the call site of the inlined
  // call at outer levels; "??:0" when unknown.
  std::string SourceLine(const ResolvedFrame& frame, uint32_t level) const;
  // The function samples at the address count toward as self.
  const std::string& LeafName(const ResolvedFrame& frame) const { return Name(frame, 0); }

  // Calls `f(level)` for every level of `frame`, innermost first.
  template <typename F>
  void ForEachLevel(const ResolvedFrame& frame, F&& f) const {
    ForEachLevel(InlinedCount(frame), std::forward<F>(f));
  }
  // The same for a frame whose InlinedCount is known.
  template <typename F>
  void ForEachLevel(uint32_t inlined_count, F&& f) const {
    const uint32_t depth = DepthOf(inlined_count);
    for (uint32_t level = 0; level < depth; ++level) f(level);
  }

  // The inlined calls at an address: the leading frames marked inlined, innermost first.
  static uint32_t InlinedCount(const ResolvedFrame& frame);

 private:
  InlineMode mode_;
};

}  // namespace tprof
