// Aggregation of samples by function: self share per event, sample counts, and the process that
// ran it. The walking skeleton of `tprof report`, and what `tprof diff` compares. A sample counts
// toward the function FunctionAttribution names (by default an inlined function itself).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/analysis/clock_left_out.h"
#include "core/analysis/function_attribution.h"
#include "core/analysis/group_windows_by_time.h"
#include "core/model/address_space.h"
#include "core/model/frame_resolver.h"
#include "core/model/profile.h"
#include "core/model/stack_tally.h"

namespace tprof {

struct FunctionRow {
  std::string function;
  std::string module;
  std::string command;                 // process name
  std::vector<uint64_t> self_period;   // per event
  std::vector<uint64_t> self_samples;  // per event
};

// One interval of a timeline (FunctionProfileBuilder::KeepTimeline): what its samples counted,
// in all and per function.
struct TimelineInterval {
  uint64_t start_ns = 0, end_ns = 0;    // from the profile's start
  std::vector<uint64_t> total_period;   // per event
  std::vector<uint64_t> total_samples;  // per event
  struct Row {
    size_t row = 0;                 // into FunctionProfile::rows
    std::vector<uint64_t> period;   // per event
    std::vector<uint64_t> samples;  // per event
  };
  std::vector<Row> rows;  // the functions with a sample in the interval, by row
  // Per event, for a timer clock that reads itself (record's ReadClocksSampledAlone):
  // the time its reads counted in the interval beyond its samples' periods, which its samples
  // left out; -1 for the other events; empty when no event does.
  std::vector<double> left_out;
  // Per read group (FunctionProfile::read_groups): the whole windows that ended in the interval;
  // empty when none did.
  std::vector<WindowSums> windows;
};

struct FunctionProfile {
  std::vector<EventDesc> events;
  std::vector<FunctionRow> rows;  // sorted by self period of the first event, descending
  std::vector<uint64_t> total_period;
  std::vector<uint64_t> total_samples;
  uint64_t lost = 0;
  InlineMode inline_mode = InlineMode::kInnermost;  // what a row's function is
  std::vector<ReadGroup> read_groups;  // the events' leader-sampled groups (ReadGroupsOf)
  // Kept only when asked for: every interval from the profile's start to its last sample, those
  // without a sample included (a pause is part of the story). A sample before the start counts
  // in the first interval.
  std::vector<TimelineInterval> timeline;
  uint64_t timeline_interval_ns = 0;
  uint64_t samples_beyond_timeline = 0;  // past kMaxTimelineIntervals intervals: left out
};

// The most intervals a timeline keeps: a sample with a time stamp far past the others (a damaged
// record) must not make a timeline of billions.
inline constexpr size_t kMaxTimelineIntervals = 100000;

class FunctionProfileBuilder : public ProcessTrackingVisitor {
 public:
  FunctionProfileBuilder(std::vector<EventDesc> events, FrameResolver& resolver,
                         InlineMode inline_mode = InlineMode::kInnermost);

  void OnSample(const Sample& sample) override;
  void OnLost(const LostRecord& r) override {
    profile_.lost += r.lost;
    windows_.Interrupt();
    left_out_.Interrupt();
  }
  void OnThrottle(const ThrottleRecord& r) override {
    windows_.Interrupt();
    left_out_.Interrupt(r.event);
  }
  bool reads_callers() const override { return false; }  // a row is the sample's ip's

  FunctionProfile Finish();

  // Also counts each interval of `interval_ns` from `start_timestamp` (the profile's start on the
  // samples' clock) on its own: FunctionProfile::timeline.
  void KeepTimeline(uint64_t start_timestamp, uint64_t interval_ns) {
    timeline_start_ = start_timestamp;
    profile_.timeline_interval_ns = interval_ns;
  }

 private:
  void CountInTimeline(const Sample& sample, size_t row);
  uint64_t timeline_start_ = 0;
  // Per interval: row * events + event -> its counts there.
  std::vector<absl::flat_hash_map<size_t, SampleCounts>> interval_counts_;
  // Clocks that read themselves; per interval, per event, the time left out of their samples.
  ClockLeftOutTime left_out_;
  std::vector<std::vector<double>> interval_left_out_;
  // Read groups' windows per interval.
  GroupWindowsByTime windows_;
  void OnThreadsChanged() override {  // names may have changed
    command_of_thread_.clear();
    row_of_sample_.clear();
  }
  struct FrameKey {
    const Mapping* mapping;
    uint64_t address;
    bool operator==(const FrameKey&) const = default;
    template <typename H>
    friend H AbslHashValue(H h, const FrameKey& k) {
      return H::combine(std::move(h), k.mapping, k.address);
    }
  };

  FrameResolver& resolver_;
  FunctionAttribution attribution_;
  FunctionProfile profile_;
  // The function id of each distinct address (see FunctionId).
  absl::flat_hash_map<FrameKey, uint32_t> frame_cache_;
  absl::flat_hash_map<const ResolvedFrame*, uint32_t> function_of_frame_;  // held frames
  // (command, module, function) -> row index
  std::map<std::tuple<std::string, std::string, std::string>, size_t> row_index_;

  // The per-sample path without strings: the row of a (command, function) pair by small ids,
  // so that a sample costs a few hash lookups rather than building and comparing names.
  uint32_t CommandId(uint32_t pid, uint32_t tid);
  uint32_t FunctionId(const ResolvedFrame& frame);
  absl::flat_hash_map<uint64_t, uint32_t> command_of_thread_;  // pid << 32 | tid -> command id
  std::unordered_map<std::string, uint32_t> command_ids_;
  std::vector<std::string> commands_;
  std::map<std::pair<std::string, std::string>, uint32_t> function_ids_;  // (module, function)
  std::vector<std::pair<std::string, std::string>> functions_;            // by id
  absl::flat_hash_map<uint64_t, size_t> row_of_ids_;  // command id << 32 | function id -> row
  size_t RowOf(const Sample& sample);

  // The row of each distinct (thread, pc) under its address space's generation: one lookup per
  // sample for what the lookups above decide once. (A profile repeats its pcs: a million
  // samples may hold some tens of thousands.)
  struct SampleKey {
    uint64_t thread;  // pid << 32 | tid
    uint64_t ip;
    AddressSpace::Generation generation;
    bool operator==(const SampleKey&) const = default;
    template <typename H>
    friend H AbslHashValue(H h, const SampleKey& k) {
      return H::combine(std::move(h), k.thread, k.ip, k.generation.process, k.generation.kernel);
    }
  };
  absl::flat_hash_map<SampleKey, size_t> row_of_sample_;
  // Each row's self counts, row * events + event: a sample touches one cache line here, where
  // the rows' own vectors cost two more misses per sample (a third of a diff's time went to
  // them). Copied into the rows by Finish.
  std::vector<SampleCounts> counts_;
};

}  // namespace tprof
