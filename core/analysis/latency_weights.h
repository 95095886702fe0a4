// The latency view (perf 6.15's `--latency`): each on-CPU sample weighted by 1 / (threads of its
// process running at that moment), so that a stretch of wall time counts once however many
// threads computed in it, and what holds up the wall clock (a serial phase) stands above what
// burns CPU in parallel. Which threads run comes from an off-CPU profile (`record --off-cpu`):
// a thread runs from its fork (or first record) to its exit (or last record), except inside its
// off-CPU intervals.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "core/model/profile.h"

namespace tprof {

// First pass: when each thread lives and when it is off the CPU.
class RunningThreads : public RecordVisitor {
 public:
  explicit RunningThreads(uint32_t off_cpu_event) : off_cpu_event_(off_cpu_event) {}

  void OnSample(const Sample& sample) override;
  void OnTask(const TaskRecord& task) override;

  // Builds the per-process counts; call once, after the pass.
  void Finish();
  // How many threads of `pid` ran at `time` (at least 1: a sample's own thread runs).
  uint32_t RunningAt(uint32_t pid, uint64_t time) const;

 private:
  struct Thread {
    uint32_t pid = 0;
    uint64_t first = UINT64_MAX, last = 0;  // records seen
    std::optional<uint64_t> fork, exit;
    std::vector<std::pair<uint64_t, uint64_t>> off;  // off-CPU intervals: start, end
  };
  struct Steps {
    std::vector<uint64_t> times;   // sorted
    std::vector<int64_t> running;  // threads running from times[i] on
  };
  void Seen(uint32_t pid, uint32_t tid, uint64_t time);

  uint32_t off_cpu_event_;
  std::map<uint32_t, Thread> threads_;
  std::map<uint32_t, Steps> processes_;
};

// Second pass: forwards every record, the on-CPU samples with period / RunningAt(pid, time).
// `off_cpu_event`: the profile's off-cpu event (OffCpuEventIndex).
class LatencyWeighting : public ForwardingVisitor {
 public:
  // Weighs the samples of CPU work: hardware events and the software clocks, not the off-cpu
  // event (nor its reasons' parts, report --off-cpu-reasons) nor counts of occurrences (context
  // switches, page faults), which are not CPU time.
  LatencyWeighting(const RunningThreads& running, const std::vector<EventDesc>& events,
                   uint32_t off_cpu_event, RecordVisitor& next);

  void OnSample(const Sample& sample) override;

 private:
  const RunningThreads& running_;
  std::vector<bool> weighs_;  // by event
};

}  // namespace tprof
