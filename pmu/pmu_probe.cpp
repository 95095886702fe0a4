#include "pmu/pmu_probe.h"

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "pmu/perf_event.h"

namespace tprof {

Status ProbeCorePmu() {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_HARDWARE;
  attr.config = PERF_COUNT_HW_CPU_CYCLES;
  attr.disabled = 1;
  attr.exclude_kernel = 1;
  int error_number = 0;
  auto probe = OpenPerfEvent(attr, 0, -1, -1, "cycles", &error_number);
  if (!probe.ok()) {
    if (error_number == ENOENT || error_number == ENODEV || error_number == EOPNOTSUPP)
      return Error(
          "this machine has no hardware PMU (typical of a virtual machine), so "
          "nothing can be counted live; evaluate saved counts with --cpu NAME --input FILE");
    return probe.error();
  }
  return Status::Ok();
}

uint32_t CountGeneralCounters(uint64_t raw_code, const std::string& name) {
  uint32_t fits = 0;
  for (uint32_t k = 1; k <= 12; ++k) {
    std::vector<PerfEventFd> fds;
    bool opened = true;
    for (uint32_t i = 0; i < k && opened; ++i) {
      perf_event_attr attr{};
      attr.size = sizeof attr;
      attr.type = PERF_TYPE_RAW;
      attr.config = raw_code;
      attr.disabled = i == 0;
      attr.exclude_kernel = 1;
      attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
      auto fd = OpenPerfEvent(attr, 0, -1, fds.empty() ? -1 : fds[0].get(), name);
      opened = fd.ok();
      if (opened) fds.push_back(std::move(fd).value());
    }
    if (!opened) break;
    ioctl(fds[0].get(), PERF_EVENT_IOC_ENABLE, 0);
    volatile uint64_t spin = 0;
    for (int i = 0; i < 1000000; ++i) spin = spin + static_cast<uint64_t>(i);
    ioctl(fds[0].get(), PERF_EVENT_IOC_DISABLE, 0);
    uint64_t values[3] = {};
    if (read(fds[0].get(), values, sizeof values) != sizeof values || values[2] == 0) break;
    fits = k;
  }
  return fits;
}

}  // namespace tprof
