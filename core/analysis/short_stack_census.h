// Why a -g profile's stacks may be flat: a frame-pointer walk stops at the first function built
// without frame pointers (liblzma, most distributions' libraries), leaving user stacks of one
// or two frames. The census counts, over samples with callchains, how many user stacks are that
// short and in which module the walk stopped, so that report and record can say so once and
// point at the remedy: rebuilding the user's own code, or --call-graph dwarf for a system
// library that the user did not build.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>

#include "core/model/address_space.h"
#include "core/model/frame_resolver.h"

namespace tprof {

class ShortStackCensus : public ProcessTrackingVisitor {
 public:
  explicit ShortStackCensus(FrameResolver& resolver) : resolver_(resolver) {}
  void OnSample(const Sample& sample) override;

  uint64_t user_stacks() const { return user_stacks_; }  // samples with a user frame
  // User stacks of one or two frames that do not end in a thread's or process's start routine
  // (a stack whose outermost frame is __libc_start_call_main or start_thread reached its root,
  // however few frames the walk needed to get there).
  uint64_t short_stacks() const { return short_stacks_; }
  // Short stacks per module the walk stopped in: that of their outermost frame in a known
  // mapping (a frame-pointer walk through code without frame pointers reads a garbage address
  // last; the module to rebuild is the one before it).
  const std::map<std::string, uint64_t>& by_module() const { return by_module_; }
  // Whether a module of by_module() is a system library (under /lib, /usr/lib, Android's
  // /system or /apex, or the vdso): code the user did not build.
  bool IsSystemModule(const std::string& module) const;

 private:
  bool IsStartRoutine(uint32_t pid, const Mapping* mapping, uint64_t address);

  FrameResolver& resolver_;
  uint64_t user_stacks_ = 0, short_stacks_ = 0;
  std::map<std::string, uint64_t> by_module_;
  std::map<std::string, bool> system_module_;
  std::unordered_map<uint64_t, bool> start_routine_by_address_;
};

// One line when most user stacks (at least half of at least 50) stop after one or two frames:
// the share, the module most of them stop in, and the remedy (rebuild it with frame pointers,
// or --call-graph dwarf for a system library). None otherwise.
std::optional<std::string> ShortStackHint(const ShortStackCensus& census);

}  // namespace tprof
