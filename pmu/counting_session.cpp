#include "pmu/counting_session.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tprof {

std::optional<double> ScaleCount(uint64_t value, uint64_t time_enabled, uint64_t time_running) {
  if (time_running == 0) return std::nullopt;
  if (time_running >= time_enabled) return static_cast<double>(value);
  return static_cast<double>(value) * static_cast<double>(time_enabled) /
         static_cast<double>(time_running);
}

Result<CountingSession> CountingSession::Open(const std::vector<std::vector<CountedEvent>>& groups,
                                              pid_t pid, int cpu, bool enable_on_exec) {
  CountingSession session;
  for (const auto& group : groups) {
    std::vector<Counter> counters;
    int leader = -1;
    for (size_t i = 0; i < group.size(); ++i) {
      perf_event_attr attr{};
      attr.size = sizeof attr;
      attr.type = group[i].type;
      attr.config = group[i].config;
      // Each counter is read on its own, which works with inherit on every kernel; members share
      // their leader's schedule, so their times are the group's.
      attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
      attr.inherit = 1;
      attr.disabled = i == 0;
      attr.enable_on_exec = i == 0 && enable_on_exec;
      attr.exclude_hv = 1;
      auto fd = OpenPerfEvent(attr, pid, cpu, leader, group[i].name);
      if (!fd.ok()) return fd.error();
      if (i == 0) leader = fd->get();
      counters.push_back({std::move(fd).value(), group[i].name});
    }
    session.groups_.push_back(std::move(counters));
  }
  return session;
}

Status CountingSession::Enable() {
  for (const auto& group : groups_)
    if (!group.empty() && ::ioctl(group[0].fd.get(), PERF_EVENT_IOC_ENABLE, 0) != 0)
      return Error(std::string("enabling counters: ") + std::strerror(errno));
  return Status::Ok();
}

Result<CounterReport> CountingSession::Read() const {
  CounterReport report;
  report.format = "tprof counts";
  for (const auto& group : groups_) {
    CounterGroup out;
    for (size_t i = 0; i < group.size(); ++i) {
      uint64_t values[3] = {0, 0, 0};  // value, time_enabled, time_running
      if (::read(group[i].fd.get(), values, sizeof values) != sizeof values)
        return Error("reading counter '" + group[i].name + "': " + std::strerror(errno));
      if (i == 0) {
        out.run_time = values[2];
        out.running_percent =
            values[1] ? 100.0 * static_cast<double>(values[2]) / static_cast<double>(values[1]) : 0;
      }
      out.counters.push_back({group[i].name, ScaleCount(values[0], values[1], values[2])});
    }
    report.groups.push_back(std::move(out));
  }
  return report;
}

}  // namespace tprof
