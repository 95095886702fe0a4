// Why threads were off the CPU (tprof record --off-cpu): each blocked interval's kernel stack
// names what it waited for. Preempted (runnable, waiting for a CPU: the scheduler took it at an
// interrupt's or a reschedule point's exit), a lock (futex), I/O readiness (a pipe, socket,
// terminal or poll/select/epoll), the disk (page cache and block I/O), a child (wait4), a
// sleep (nanosleep and timeouts), or other. The split is a sum of the off-cpu event's periods.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/model/address_space.h"
#include "core/model/event_unit.h"
#include "core/model/frame_resolver.h"

namespace tprof {

enum class OffCpuReason { kPreempted, kLock, kIoWait, kDiskIo, kChild, kSleep, kOther };
inline constexpr size_t kOffCpuReasons = 7;
static_assert(kOffCpuReasons <= kOffCpuReasonEvents);

const char* OffCpuReasonName(OffCpuReason reason);  // "preempted", "lock", "I/O wait", ...
// The same as an event name's suffix: "preempted", "lock", "io-wait", ...
const char* OffCpuReasonSlug(OffCpuReason reason);

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
  // The reason of one sample of the off-cpu event, from its kernel frames.
  OffCpuReason ReasonOf(const Sample& sample);

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

// The off-cpu event split by reason, for every view (`report --off-cpu-reasons`): the profile's
// events, then one per reason that took any time, "off-cpu:lock" and so on.
struct OffCpuReasonEvents {
  std::vector<EventDesc> events;
  std::array<int, kOffCpuReasons> event_of_reason;  // index into events; -1: the reason took none
};
OffCpuReasonEvents AppendOffCpuReasonEvents(const std::vector<EventDesc>& events,
                                            size_t off_cpu_event,
                                            const std::vector<OffCpuShare>& shares);

// Forwards every record, and each sample of the off-cpu event once more as the event of its
// reason (OffCpuReasonEvents), so that the off-cpu event's own totals are unchanged and each
// reason's samples add up to the part of them it took.
class OffCpuReasonSplitter : public ForwardingVisitor {
 public:
  OffCpuReasonSplitter(FrameResolver& resolver, size_t off_cpu_event,
                       const std::array<int, kOffCpuReasons>& event_of_reason, RecordVisitor& next)
      : ForwardingVisitor(next),
        reasons_(resolver, off_cpu_event),
        off_cpu_event_(off_cpu_event),
        event_of_reason_(event_of_reason) {}
  void OnSample(const Sample& sample) override;
  void OnMmap(const MmapRecord& r) override;
  void OnComm(const CommRecord& r) override;
  void OnTask(const TaskRecord& r) override;
  // The reasons are read from the whole kernel stack, whatever the visitors after it read.
  bool reads_callers() const override { return true; }

 private:
  OffCpuReasons reasons_;  // tracks the processes to classify with
  size_t off_cpu_event_;
  std::array<int, kOffCpuReasons> event_of_reason_;
};

// The index of the off-cpu event among `events`, or -1.
int OffCpuEventIndex(const std::vector<EventDesc>& events);

// The events whose sum is a thread's wall time: the off-cpu event and the first clock sampled
// beside it (task-clock or cpu-clock, nanoseconds both; not a reason's part of the off-cpu
// event). None when either is missing.
struct WallTimeEvents {
  size_t on_cpu = 0, off_cpu = 0;
};
std::optional<WallTimeEvents> FindWallTimeEvents(const std::vector<EventDesc>& events);

}  // namespace tprof
