// perf_event_open: attribute construction, opening, and errors explained in plain words.
#pragma once

#include <linux/perf_event.h>

#include <cstdint>
#include <string>

#include "core/error.h"
#include "core/profile.h"
#include "pmu/event_spec.h"

namespace tprof {

struct SamplingOptions {
  bool use_frequency = true;
  uint64_t frequency = 4000;  // Hz, perf's default
  uint64_t period = 0;
  bool callchain = false;  // frame-pointer callchains
};

// The attribute tprof records with: samples carry ip, tid, time, cpu, period, the event id and
// (optionally) a callchain; side-band records (mmap2 with build-ids, comm, task) come from the
// same events; counting starts at the workload's exec.
perf_event_attr BuildSamplingAttr(const EventSpec& spec, const SamplingOptions& options);

// Describes the attribute in the profile's event list.
EventDesc DescribeEvent(const EventSpec& spec, const perf_event_attr& attr);

// Owns a perf event file descriptor.
class PerfEventFd {
 public:
  PerfEventFd() = default;
  explicit PerfEventFd(int fd) : fd_(fd) {}
  PerfEventFd(PerfEventFd&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  PerfEventFd& operator=(PerfEventFd&& other) noexcept;
  PerfEventFd(const PerfEventFd&) = delete;
  PerfEventFd& operator=(const PerfEventFd&) = delete;
  ~PerfEventFd();

  int get() const { return fd_; }
  Result<uint64_t> ReadId() const;

 private:
  int fd_ = -1;
};

Result<PerfEventFd> OpenPerfEvent(perf_event_attr& attr, int pid, int cpu, int group_fd,
                                  const std::string& event_name);

// The kernel's reason for refusing an event, in words a user can act on.
std::string ExplainOpenError(int error_number, const std::string& event_name);

}  // namespace tprof
