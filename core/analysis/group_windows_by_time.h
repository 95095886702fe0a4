// A read group's windows (two samples of its leader in a row on one thread and CPU, every member's
// running count read in each) summed by time slot: the interval of a timeline a window ends in.
// Over a slot, its windows' deltas are the group's own counts there, whatever functions ran, so a
// formula over the group (IPC from {cycles,instructions}) has a value per slot where its events
// were not sampled on their own. A window is whole on the rules of the report table's windows
// (WindowAttributor): the counts rose, the thread stayed on its CPU, no throttle or loss came
// between, and under burst sampling it is a short period.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/analysis/report_table.h"
#include "core/model/profile.h"

namespace tprof {

// The leader-sampled read groups of `events` (PERF_SAMPLE_READ with PERF_FORMAT_GROUP on the
// leader), in event order: a report table's groups.
std::vector<ReadGroup> ReadGroupsOf(const std::vector<EventDesc>& events);

// Whether `event` is read only in its leader's samples: a member of a leader-sampled group
// ({a,b}:S) with no samples of its own (`samples`, per event). A member of a group read with
// --sample-read but not led by its leader alone (no :S) samples on its own too.
bool IsReadOnlyMember(const std::vector<EventDesc>& events, size_t event,
                      const std::vector<uint64_t>& samples);

// Sums of whole windows: what DerivedMetrics::EvaluateWindows reads.
struct WindowSums {
  std::vector<double> deltas;    // per member, leader first
  std::vector<double> products;  // members x members: sums of delta_i * delta_j per window
  uint64_t windows = 0;
  void Add(const double* window_deltas, size_t members);
};

// Every whole window with the time of its closing sample, for slots chosen later (a flame
// graph's buckets, whose length follows the profile's).
struct TimedGroupWindows {
  std::vector<ReadGroup> groups;
  struct Window {
    uint64_t time = 0;
    uint32_t group = 0;
    uint32_t first = 0;  // into deltas: the group's members' deltas, leader first
  };
  std::vector<Window> windows;
  std::vector<double> deltas;
};

class GroupWindowsByTime {
 public:
  explicit GroupWindowsByTime(const std::vector<EventDesc>& events);

  const std::vector<ReadGroup>& groups() const { return groups_; }
  bool any() const { return !groups_.empty(); }
  // Adds the window `sample` closes, if it is a whole one, to `slot`.
  void Add(const Sample& sample, size_t slot);
  // The group of the whole window `sample` closes, with its members' deltas in `deltas`; -1
  // when it closes none.
  int Close(const Sample& sample, std::vector<double>* deltas);
  // A throttle or a loss: the windows open now are not whole.
  void Interrupt();
  // Per slot (up to the last one given a window), per group.
  const std::vector<std::vector<WindowSums>>& slots() const { return slots_; }

 private:
  struct Open {
    std::vector<uint64_t> values;
    bool interrupted = false;
  };
  std::vector<ReadGroup> groups_;
  std::vector<int> group_of_leader_;  // per event: its group, or -1
  // Per group, per (tid, cpu): the last read.
  std::vector<absl::flat_hash_map<uint64_t, Open>> open_;
  std::vector<absl::flat_hash_map<uint32_t, uint32_t>> last_cpu_;  // per group: tid -> cpu
  std::vector<uint64_t> short_window_;  // per group: burst sampling's short period, or 0
  std::vector<std::vector<WindowSums>> slots_;
  std::vector<double> scratch_;
};

}  // namespace tprof
