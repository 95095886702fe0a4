// Why threads were off the CPU (tprof record --off-cpu): each blocked interval's kernel stack
// names what it waited for. Preempted (runnable, waiting for a CPU: the scheduler took it at an
// interrupt's or a reschedule point's exit), a lock (futex), I/O readiness (a pipe, socket,
// terminal or poll/select/epoll), the disk (page cache and block I/O), a child (wait4), a
// sleep (nanosleep and timeouts), or other. The split is a sum of the off-cpu event's periods.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/model/address_space.h"
#include "core/model/frame_resolver.h"

namespace tprof {

enum class OffCpuReason { kPreempted, kLock, kIoWait, kDiskIo, kChild, kSleep, kOther };
inline constexpr size_t kOffCpuReasons = 7;

const char* OffCpuReasonName(OffCpuReason reason);  // "preempted", "lock", ...

// The reason of one interval from the names of its kernel frames (any order).
OffCpuReason ReasonOfKernelFrames(const std::vector<std::string_view>& functions);

struct OffCpuShare {
  OffCpuReason reason;
  uint64_t ns = 0;
  uint64_t intervals = 0;
};

class OffCpuReasons : public ProcessTrackingVisitor {
 public:
  // `off_cpu_event`: the index of the off-cpu event in the profile's events.
  OffCpuReasons(FrameResolver& resolver, size_t off_cpu_event)
      : resolver_(resolver), off_cpu_event_(off_cpu_event) {}
  void OnSample(const Sample& sample) override;

  uint64_t total_ns() const { return total_ns_; }
  uint64_t intervals() const { return intervals_; }
  // The reasons that took any time, the longest first.
  std::vector<OffCpuShare> Shares() const;

 private:
  const std::string& FunctionAt(uint32_t pid, uint64_t address);

  FrameResolver& resolver_;
  size_t off_cpu_event_;
  uint64_t total_ns_ = 0, intervals_ = 0;
  OffCpuShare by_reason_[kOffCpuReasons] = {};
  std::unordered_map<uint64_t, std::string> function_by_address_;  // kernel addresses
};

// The index of the off-cpu event among `events`, or -1.
int OffCpuEventIndex(const std::vector<EventDesc>& events);

// The events whose sum is a thread's wall time: the off-cpu event and the first clock sampled
// beside it (task-clock or cpu-clock, nanoseconds both). None when either is missing.
struct WallTimeEvents {
  size_t on_cpu = 0, off_cpu = 0;
};
std::optional<WallTimeEvents> FindWallTimeEvents(const std::vector<EventDesc>& events);

}  // namespace tprof
