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
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/model/address_space.h"
#include "core/model/frame_resolver.h"

namespace tprof {

// What a census counted.
struct ShortStackCounts {
  uint64_t user_stacks = 0;  // samples with a user frame
  // User stacks of one or two frames that do not end in a thread's or process's start routine
  // (a stack whose outermost frame is __libc_start_call_main or start_thread reached its root,
  // however few frames the walk needed to get there).
  uint64_t short_stacks = 0;
  // Short stacks per module the walk stopped in: that of their outermost frame in a known
  // mapping (a frame-pointer walk through code without frame pointers reads a garbage address
  // last; the module to rebuild is the one before it).
  std::map<std::string, uint64_t> by_module;
  // The modules of by_module that are system libraries (under /lib, /usr/lib, Android's
  // /system or /apex, or the vdso): code the user did not build.
  std::set<std::string> system_modules;
};

class ShortStackCensus : public ProcessTrackingVisitor {
 public:
  explicit ShortStackCensus(FrameResolver& resolver) : resolver_(resolver) {}
  void OnSample(const Sample& sample) override { Count(ShapeOf(sample, space()), 1); }

  // What the census makes of a stack: whether it is a user stack, and if short, where it
  // stopped. The same for every sample with the same pid and callchain in one generation of
  // the process's address space, so an aggregation that meets each distinct stack once can
  // ask once and Count all of its samples (a report does, on its stack-row thread).
  using Shape = uint32_t;
  Shape ShapeOf(const Sample& sample, const AddressSpace& space);
  void Count(Shape shape, uint64_t samples);
  ShortStackCounts Counts() const;

 private:
  static constexpr Shape kNotUser = 0, kComplete = 1, kFirstShort = 2;  // + module index
  bool IsStartRoutine(uint32_t pid, const Mapping* mapping, uint64_t address);

  FrameResolver& resolver_;
  uint64_t user_stacks_ = 0;
  struct StopModule {  // a module short stacks stopped in
    std::string name;
    bool system = false;  // see ShortStackCounts::system_modules
    uint64_t short_stacks = 0;
  };
  std::vector<StopModule> modules_;  // by Shape - kFirstShort
  std::unordered_map<std::string, Shape> shape_of_module_;
  std::unordered_map<uint64_t, bool> start_routine_by_address_;
};

// One line when most user stacks (at least half of at least 50) stop after one or two frames:
// the share, the module most of them stop in, and the remedy (rebuild it with frame pointers,
// or --call-graph dwarf for a system library). None otherwise.
std::optional<std::string> ShortStackHint(const ShortStackCounts& counts);

}  // namespace tprof
