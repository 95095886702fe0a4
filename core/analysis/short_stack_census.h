// Why a -g profile's stacks may be flat: a frame-pointer walk stops at the first function built
// without frame pointers (liblzma, most distributions' libraries), leaving user stacks of one
// or two frames. The census counts, over samples with callchains, how many user stacks are that
// short and in which module their outermost frame is, so that report and record can say so once
// and point at --call-graph dwarf.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "core/model/address_space.h"
#include "core/model/frame_resolver.h"

namespace tprof {

class ShortStackCensus : public ProcessTrackingVisitor {
 public:
  explicit ShortStackCensus(FrameResolver& resolver) : resolver_(resolver) {}
  void OnSample(const Sample& sample) override;

  uint64_t user_stacks() const { return user_stacks_; }  // samples with a user frame
  uint64_t short_stacks() const { return short_stacks_; }
  // Short stacks per module of their outermost user frame.
  const std::map<std::string, uint64_t>& by_module() const { return by_module_; }

 private:
  FrameResolver& resolver_;
  uint64_t user_stacks_ = 0, short_stacks_ = 0;
  std::map<std::string, uint64_t> by_module_;
};

// One line when most user stacks (at least half of at least 50) stop after one or two frames:
// the share, the module most of them end in, and the remedy. None otherwise.
std::optional<std::string> ShortStackHint(const ShortStackCensus& census);

}  // namespace tprof
