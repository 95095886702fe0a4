#include "pmu/perf_event.h"

#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>

namespace tprof {

perf_event_attr BuildSamplingAttr(const EventSpec& spec, const SamplingOptions& options) {
  perf_event_attr attr{};
  attr.size = sizeof(attr);
  attr.type = spec.type;
  attr.config = spec.config;
  if (options.use_frequency) {
    attr.freq = 1;
    attr.sample_freq = options.frequency;
  } else {
    attr.sample_period = options.period;
  }
  attr.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                     PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
  if (options.callchain) attr.sample_type |= PERF_SAMPLE_CALLCHAIN;
  attr.exclude_user = spec.exclude_user;
  attr.exclude_kernel = spec.exclude_kernel;
  attr.exclude_hv = 1;
  attr.precise_ip = spec.precise_ip;
  attr.disabled = 1;
  attr.enable_on_exec = 1;
  attr.inherit = 1;
  attr.mmap = 1;
  attr.mmap2 = 1;
  attr.build_id = 1;
  attr.comm = 1;
  attr.comm_exec = 1;
  attr.task = 1;
  attr.sample_id_all = 1;
  // Timestamps on CLOCK_MONOTONIC, so they line up with the metadata's start time.
  attr.use_clockid = 1;
  attr.clockid = CLOCK_MONOTONIC;
  attr.watermark = 1;
  attr.wakeup_watermark = 0;  // set by the recorder from the buffer size
  return attr;
}

EventDesc DescribeEvent(const EventSpec& spec, const perf_event_attr& attr) {
  EventDesc d;
  d.name = spec.name;
  d.type = attr.type;
  d.config = attr.config;
  d.config1 = attr.config1;
  d.config2 = attr.config2;
  d.use_frequency = attr.freq;
  d.period_or_frequency = attr.sample_period;  // union with sample_freq
  d.sample_type = attr.sample_type;
  d.read_format = attr.read_format;
  d.branch_sample_type = attr.branch_sample_type;
  d.exclude_user = attr.exclude_user;
  d.exclude_kernel = attr.exclude_kernel;
  d.precise_ip = attr.precise_ip;
  return d;
}

PerfEventFd& PerfEventFd::operator=(PerfEventFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

PerfEventFd::~PerfEventFd() {
  if (fd_ >= 0) ::close(fd_);
}

Result<uint64_t> PerfEventFd::ReadId() const {
  uint64_t id = 0;
  if (::ioctl(fd_, PERF_EVENT_IOC_ID, &id) != 0)
    return Error(std::string("PERF_EVENT_IOC_ID: ") + std::strerror(errno));
  return id;
}

Result<PerfEventFd> OpenPerfEvent(perf_event_attr& attr, int pid, int cpu, int group_fd,
                                  const std::string& event_name) {
  long fd = ::syscall(SYS_perf_event_open, &attr, pid, cpu, group_fd, PERF_FLAG_FD_CLOEXEC);
  if (fd < 0) return Error(ExplainOpenError(errno, event_name));
  return PerfEventFd(static_cast<int>(fd));
}

std::string ExplainOpenError(int error_number, const std::string& event_name) {
  std::string prefix = "cannot open event '" + event_name + "': ";
  switch (error_number) {
    case ENOENT:
    case ENODEV:
      return prefix +
             "this machine has no hardware PMU that counts it (ENOENT; typical of a virtual "
             "machine); software events such as cpu-clock and task-clock still work";
    case EACCES:
    case EPERM: {
      std::string paranoid = "?";
      std::ifstream in("/proc/sys/kernel/perf_event_paranoid");
      in >> paranoid;
      return prefix + "permission denied (" + std::strerror(error_number) +
             "); kernel.perf_event_paranoid is " + paranoid +
             ": run as root, or lower it with 'sysctl kernel.perf_event_paranoid=1' (or -1 for "
             "system-wide and kernel profiling)";
    }
    case EOPNOTSUPP:
      return prefix +
             "the PMU cannot sample this event (EOPNOTSUPP: no sampling interrupt, or branch "
             "stacks are not supported here); count it instead";
    case EINVAL:
      return prefix +
             "the kernel refused an attribute (EINVAL): check the period or frequency "
             "(kernel.perf_event_max_sample_rate), the precise modifiers and the event encoding";
    case EMFILE:
      return prefix + "too many open files (EMFILE); raise 'ulimit -n'";
    case ESRCH:
      return prefix + "the target process does not exist (ESRCH)";
    case E2BIG:
      return prefix + "this kernel does not know the attribute size tprof uses (E2BIG)";
    default:
      return prefix + std::strerror(error_number);
  }
}

}  // namespace tprof
