// Samples a workload: opens the events on it (one per CPU, inherited by every thread and child),
// drains the ring buffers while it runs, orders the records by time and hands them to the
// profile writer.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "core/error.h"
#include "core/profile.h"
#include "core/profile_writer.h"
#include "pmu/event_spec.h"
#include "pmu/perf_event.h"
#include "pmu/ring_buffer.h"
#include "pmu/workload.h"

namespace tprof {

struct RecordOptions {
  std::vector<EventSpec> events;
  SamplingOptions sampling;
  size_t mmap_pages = 128;  // data pages per CPU buffer (512 KiB with 4 KiB pages, as perf)
};

struct RecordStats {
  std::vector<uint64_t> samples_per_event;
  uint64_t lost_records = 0;  // samples the kernel dropped because a buffer was full
  uint64_t throttle_records = 0;
  uint64_t wall_time_ns = 0;
  int wait_status = 0;  // of the workload
  bool interrupted = false;
};

class Recorder {
 public:
  explicit Recorder(RecordOptions options) : options_(std::move(options)) {}

  // Opens every event on `pid` (not yet exec'd) and maps the buffers. Returns the events as the
  // profile describes them.
  Result<std::vector<EventDesc>> Attach(pid_t pid);
  // Starts the workload and records until it exits. Ctrl-C and SIGTERM end the workload (they
  // reach it directly from the terminal, or are forwarded) and the recording completes normally.
  Result<RecordStats> Run(Workload& workload, ProfileWriter& writer);

 private:
  struct OpenEvent {
    PerfEventFd fd;
    int event_index;
    int cpu;
  };

  RecordOptions options_;
  std::vector<EventDesc> descs_;
  std::vector<OpenEvent> open_;
  std::vector<RingBuffer> rings_;
  std::map<uint64_t, int> event_by_id_;
};

}  // namespace tprof
