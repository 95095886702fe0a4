#include "core/analysis/off_cpu_reasons.h"

#include <algorithm>
#include <array>

#include "core/model/event_unit.h"

namespace tprof {

const char* OffCpuReasonName(OffCpuReason reason) {
  switch (reason) {
    case OffCpuReason::kPreempted:
      return "preempted";
    case OffCpuReason::kLock:
      return "lock";
    case OffCpuReason::kIoWait:
      return "I/O wait";
    case OffCpuReason::kDiskIo:
      return "disk";
    case OffCpuReason::kChild:
      return "child";
    case OffCpuReason::kSleep:
      return "sleep";
    case OffCpuReason::kOther:
      return "other";
  }
  return "other";
}

const char* OffCpuReasonSlug(OffCpuReason reason) {
  return reason == OffCpuReason::kIoWait ? "io-wait" : OffCpuReasonName(reason);
}

OffCpuReason ReasonOfKernelFrames(const std::vector<std::string_view>& functions) {
  struct Rule {
    OffCpuReason reason;
    std::array<std::string_view, 9> marks;
  };
  // In this order: a thread preempted inside a system call was runnable, whatever the call; a
  // wait with a timeout (poll, a futex) is the wait, not the timer.
  static constexpr Rule kRules[] = {
      {OffCpuReason::kPreempted,
       {"irqentry_exit", "preempt_schedule", "_cond_resched", "el0_interrupt", "el1_interrupt",
        "exit_to_user_mode", "el0_irq", "el1_irq", "sched_yield"}},
      {OffCpuReason::kLock, {"futex"}},
      {OffCpuReason::kIoWait,
       {"pipe_read", "pipe_write", "do_sys_poll", "do_select", "ep_poll", "sk_wait", "unix_stream",
        "n_tty_read", "wait_woken"}},
      {OffCpuReason::kDiskIo, {"io_schedule", "folio_wait", "wait_on_page", "bit_wait_io", "blk_"}},
      {OffCpuReason::kChild, {"do_wait", "kernel_wait"}},
      {OffCpuReason::kSleep, {"nanosleep", "schedule_hrtimeout", "schedule_timeout", "msleep"}},
  };
  for (const Rule& rule : kRules)
    for (std::string_view function : functions)
      for (std::string_view mark : rule.marks)
        if (!mark.empty() && function.find(mark) != std::string_view::npos) return rule.reason;
  return OffCpuReason::kOther;
}

const std::string& OffCpuReasons::FunctionAt(uint32_t pid, uint64_t address) {
  auto [it, inserted] = function_by_address_.try_emplace(address);
  if (inserted)
    it->second = resolver_.ResolveInProcess(pid, space().Find(pid, address), address).function;
  return it->second;
}

OffCpuReason OffCpuReasons::ReasonOf(const Sample& sample) {
  std::vector<std::string_view> kernel;
  ForEachFrameAddress(sample, [&](uint64_t address, bool in_kernel) {
    if (!in_kernel) return false;  // the kernel part comes first, innermost first
    kernel.push_back(FunctionAt(sample.pid, address));
    return true;
  });
  return ReasonOfKernelFrames(kernel);
}

void OffCpuReasons::OnSample(const Sample& sample) {
  if (sample.event != off_cpu_event_) return;
  OffCpuShare& share = by_reason_[static_cast<size_t>(ReasonOf(sample))];
  share.ns += sample.period;
  ++share.intervals;
  total_ns_ += sample.period;
  ++intervals_;
}

std::vector<OffCpuShare> OffCpuReasons::Shares() const {
  std::vector<OffCpuShare> shares;
  for (size_t r = 0; r < kOffCpuReasons; ++r) {
    if (!by_reason_[r].intervals) continue;
    shares.push_back(by_reason_[r]);
    shares.back().reason = static_cast<OffCpuReason>(r);
  }
  std::stable_sort(shares.begin(), shares.end(),
                   [](const OffCpuShare& a, const OffCpuShare& b) { return a.ns > b.ns; });
  return shares;
}

OffCpuReasonEvents AppendOffCpuReasonEvents(const std::vector<EventDesc>& events,
                                            size_t off_cpu_event,
                                            const std::vector<OffCpuShare>& shares) {
  OffCpuReasonEvents split;
  split.events = events;
  split.event_of_reason.fill(-1);
  for (const OffCpuShare& share : shares) {
    EventDesc part = events[off_cpu_event];
    part.name = std::string(kOffCpuEventName) + ":" + OffCpuReasonSlug(share.reason);
    // Not the off-cpu event itself (OffCpuEventIndex), nor each other.
    part.config = kOffCpuReasonEventConfig + static_cast<uint64_t>(share.reason);
    split.event_of_reason[static_cast<size_t>(share.reason)] =
        static_cast<int>(split.events.size());
    split.events.push_back(std::move(part));
  }
  return split;
}

void OffCpuReasonSplitter::OnSample(const Sample& sample) {
  next().OnSample(sample);
  if (sample.event != off_cpu_event_) return;
  const int part = event_of_reason_[static_cast<size_t>(reasons_.ReasonOf(sample))];
  if (part < 0) return;  // a reason the first pass did not see: the profile changed under us
  Sample copy = sample;
  copy.event = static_cast<uint32_t>(part);
  next().OnSample(copy);
}

void OffCpuReasonSplitter::OnMmap(const MmapRecord& r) {
  reasons_.OnMmap(r);
  next().OnMmap(r);
}

void OffCpuReasonSplitter::OnComm(const CommRecord& r) {
  reasons_.OnComm(r);
  next().OnComm(r);
}

void OffCpuReasonSplitter::OnTask(const TaskRecord& r) {
  reasons_.OnTask(r);
  next().OnTask(r);
}

int OffCpuEventIndex(const std::vector<EventDesc>& events) {
  for (size_t e = 0; e < events.size(); ++e)
    if (events[e].config == kOffCpuEventConfig && events[e].name == kOffCpuEventName)
      return static_cast<int>(e);
  return -1;
}

std::optional<WallTimeEvents> FindWallTimeEvents(const std::vector<EventDesc>& events) {
  const int off_cpu = OffCpuEventIndex(events);
  if (off_cpu < 0) return std::nullopt;
  for (size_t e = 0; e < events.size(); ++e)
    if (static_cast<int>(e) != off_cpu && !IsOffCpuReasonEvent(events[e].config) &&
        UnitOfEvent(events[e].name) == EventUnit::kNanoseconds)
      return WallTimeEvents{e, static_cast<size_t>(off_cpu)};
  return std::nullopt;
}

}  // namespace tprof
