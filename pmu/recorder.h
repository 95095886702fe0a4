// Samples a target (a launched command, running processes or threads, or the whole system):
// opens the planned events on it, drains the per-CPU ring buffers while it runs, orders the
// records by time and hands them to the profile writer.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/format/profile_writer.h"
#include "core/model/profile.h"
#include "core/model/user_stack_unwinder.h"
#include "core/perfdata/perf_record_parser.h"
#include "pmu/event_spec.h"
#include "pmu/perf_event.h"
#include "pmu/ring_buffer.h"
#include "pmu/workload.h"

namespace tprof {

struct RecordTarget {
  enum class Kind {
    kLaunch,      // a command tprof starts (Workload)
    kProcesses,   // -p: running processes, with their threads and later children
    kThreads,     // -t: running threads only
    kSystemWide,  // -a: every CPU
  };
  Kind kind = Kind::kLaunch;
  std::vector<pid_t> ids;  // pids for kProcesses, tids for kThreads
};

struct RecordOptions {
  std::vector<EventGroup> groups;
  SamplingOptions sampling;
  RecordTarget target;
  size_t mmap_pages = 128;                  // data pages per CPU buffer (512 KiB with 4 KiB pages)
  double duration_seconds = 0;              // 0: until the target ends or Ctrl-C
  uint64_t flush_interval_ns = 1000000000;  // a killed recording loses at most about this much
  // --off-cpu: also sample every switch out of the CPU (context-switches at period 1, with the
  // call graph asked for) and record switches back in, for the "off-cpu" event.
  bool off_cpu = false;
};

struct RecordStats {
  std::vector<uint64_t> samples_per_event;
  uint64_t lost_samples = 0;     // samples the kernel dropped (PERF_RECORD_LOST and LOST_SAMPLES)
  uint64_t throttle_events = 0;  // times the kernel throttled sampling
  uint64_t throttled_ns = 0;     // summed over counter instances (event on one CPU)
  uint64_t counter_instances = 0;
  uint64_t wall_time_ns = 0;
  // The recorder's own CPU time while recording (draining buffers, encoding, writing), without
  // the symbol step after it: the user-space cost of the samples.
  uint64_t recorder_cpu_ns = 0;
  uint64_t off_cpu_intervals = 0;  // --off-cpu: blocked intervals with a start and an end
  int wait_status = 0;             // of a launched workload
  bool interrupted = false;
  bool duration_reached = false;
};

class Recorder {
 public:
  explicit Recorder(RecordOptions options);
  ~Recorder();

  // Opens every event on the target and maps the buffers. For kLaunch, `launched_pid` is the
  // workload held before exec. Returns the events as the profile describes them.
  Result<std::vector<EventDesc>> Open(pid_t launched_pid = -1);
  // Notes about what had to be adjusted to open the events (printed by the caller).
  const std::vector<std::string>& notes() const { return notes_; }
  // "kernel" (hf_sample_period), "fallback" (short period), or "" when burst sampling is off.
  const std::string& burst_mode() const { return burst_mode_; }

  // Records until the target ends, --duration passes, or Ctrl-C / SIGTERM arrives. A launched
  // workload receives Ctrl-C from the terminal (same process group); a second one kills it.
  // On a write error, recording stops, a launched workload is waited for, and the error returns.
  Result<RecordStats> Run(ProfileWriter& writer, Workload* workload);
  // With -g: every record passes `trimmer` on its way to the writer, which drops the stack copies
  // whose chains need no mending (StackCopyTrimmer). Not owned; set before Run.
  void TrimStackCopies(StackCopyTrimmer* trimmer) { trimmer_ = trimmer; }

 private:
  struct OpenEvent {
    PerfEventFd fd;
    size_t event_index;
    int cpu;
  };

  Status OpenAll(const std::vector<pid_t>& pids, bool per_thread_attach);
  Status OpenOn(pid_t pid, size_t cpu_index);
  Status WriteSnapshots(ProfileWriter& writer);

  RecordOptions options_;
  StackCopyTrimmer* trimmer_ = nullptr;
  std::vector<EventGroup> groups_;  // options_.groups, and --off-cpu's switches
  std::vector<PlannedEvent> planned_;
  std::vector<int> cpus_;
  std::vector<OpenEvent> open_;
  std::vector<std::unique_ptr<RingBuffer>> rings_;  // one per CPU
  std::vector<int> ring_fds_;                       // the fd each ring belongs to, per CPU
  std::map<uint64_t, size_t> event_by_id_;
  std::vector<PerfRecordLayout> layouts_;  // per event
  // --off-cpu: the planned context-switches event, and the synthetic event after the planned ones.
  std::optional<size_t> switch_event_;
  size_t event_count_ = 0;  // the profile's events: the planned ones, and off-cpu
  std::vector<std::string> notes_;
  std::string burst_mode_;
};

}  // namespace tprof
