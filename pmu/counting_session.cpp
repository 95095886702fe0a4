#include "pmu/counting_session.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>

#include "pmu/host_info.h"
#include "pmu/proc_scanner.h"

namespace tprof {

std::optional<double> ScaleCount(uint64_t value, uint64_t time_enabled, uint64_t time_running) {
  if (time_running == 0) return std::nullopt;
  if (time_running >= time_enabled) return static_cast<double>(value);
  return static_cast<double>(value) * static_cast<double>(time_enabled) /
         static_cast<double>(time_running);
}

Result<std::vector<CountingInstance>> ThreadsOfProcesses(const std::vector<pid_t>& pids) {
  std::vector<CountingInstance> instances;
  std::set<pid_t> seen;  // a pid given twice is counted once
  for (pid_t pid : pids) {
    auto tids = ListThreads(pid);
    if (!tids.ok()) return tids.error();
    for (pid_t tid : tids.value())
      if (seen.insert(tid).second) instances.push_back({tid, -1});
  }
  return instances;
}

std::vector<CountingInstance> EveryCpu() {
  std::vector<CountingInstance> instances;
  for (int cpu : OnlineCpus()) instances.push_back({-1, cpu});
  return instances;
}

RawCounts Subtract(const RawCounts& later, const RawCounts& earlier) {
  RawCounts out = later;
  for (size_t g = 0; g < out.groups.size() && g < earlier.groups.size(); ++g)
    for (size_t i = 0; i < out.groups[g].size() && i < earlier.groups[g].size(); ++i) {
      RawCount& c = out.groups[g][i];
      const RawCount& e = earlier.groups[g][i];
      c.value -= e.value;
      c.time_enabled -= e.time_enabled;
      c.time_running -= e.time_running;
    }
  return out;
}

Result<CountingSession> CountingSession::Open(const std::vector<std::vector<CountedEvent>>& groups,
                                              pid_t pid, int cpu, bool enable_on_exec) {
  return OpenWith(groups, {{pid, cpu}}, enable_on_exec);
}

Result<CountingSession> CountingSession::Open(const std::vector<std::vector<CountedEvent>>& groups,
                                              const std::vector<CountingInstance>& instances) {
  return OpenWith(groups, instances, /*enable_on_exec=*/false);
}

Result<CountingSession> CountingSession::OpenWith(
    const std::vector<std::vector<CountedEvent>>& groups,
    const std::vector<CountingInstance>& instances, bool enable_on_exec) {
  CountingSession session;
  for (const auto& group : groups) {
    std::vector<Counter> counters;
    for (const CountedEvent& e : group) counters.push_back({{}, e.name});
    session.groups_.push_back(std::move(counters));
  }
  for (const CountingInstance& instance : instances) {
    for (size_t g = 0; g < groups.size(); ++g) {
      const auto& group = groups[g];
      int leader = -1;
      for (size_t i = 0; i < group.size(); ++i) {
        perf_event_attr attr{};
        attr.size = sizeof attr;
        attr.type = group[i].type;
        attr.config = group[i].config;
        // Each counter is read on its own, which works with inherit on every kernel; members
        // share their leader's schedule, so their times are the group's.
        attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
        attr.inherit = instance.pid != -1;  // a CPU-wide counter already sees every task
        attr.disabled = i == 0;
        attr.enable_on_exec = i == 0 && enable_on_exec;
        attr.exclude_hv = 1;
        attr.exclude_kernel = group[i].exclude_kernel;
        int error_number = 0;
        auto fd =
            OpenPerfEvent(attr, instance.pid, instance.cpu, leader, group[i].name, &error_number);
        if (!fd.ok()) {
          // A thread that ended since /proc listed it: nothing of it is left to count.
          if (error_number == ESRCH && instances.size() > 1 && g == 0 && i == 0) break;
          return fd.error();
        }
        if (i == 0) leader = fd->get();
        session.groups_[g][i].fds.push_back(std::move(fd).value());
      }
      if (leader == -1) break;  // skipped instance
      if (g == 0) ++session.instance_count_;
    }
  }
  if (session.instance_count_ == 0) return Error("no thread of the target is left to count");
  return session;
}

Status CountingSession::Enable() {
  for (const auto& group : groups_)
    if (!group.empty())
      for (const PerfEventFd& fd : group[0].fds)
        if (::ioctl(fd.get(), PERF_EVENT_IOC_ENABLE, 0) != 0)
          return Error(std::string("enabling counters: ") + std::strerror(errno));
  return Status::Ok();
}

Status CountingSession::Disable() {
  for (const auto& group : groups_)
    if (!group.empty())
      for (const PerfEventFd& fd : group[0].fds)
        if (::ioctl(fd.get(), PERF_EVENT_IOC_DISABLE, 0) != 0)
          return Error(std::string("disabling counters: ") + std::strerror(errno));
  return Status::Ok();
}

Result<RawCounts> CountingSession::ReadRaw() const {
  RawCounts counts;
  for (const auto& group : groups_) {
    std::vector<RawCount> out;
    for (const Counter& counter : group) {
      RawCount sum;
      for (const PerfEventFd& fd : counter.fds) {
        uint64_t values[3] = {0, 0, 0};  // value, time_enabled, time_running
        if (::read(fd.get(), values, sizeof values) != sizeof values)
          return Error("reading counter '" + counter.name + "': " + std::strerror(errno));
        sum.value += values[0];
        sum.time_enabled += values[1];
        sum.time_running += values[2];
      }
      out.push_back(sum);
    }
    counts.groups.push_back(std::move(out));
  }
  return counts;
}

Result<CounterReport> CountingSession::Read() const {
  auto raw = ReadRaw();
  if (!raw.ok()) return raw.error();
  return ToReport(raw.value());
}

CounterReport CountingSession::ToReport(const RawCounts& counts) const {
  CounterReport report;
  report.format = "tprof counts";
  for (size_t g = 0; g < groups_.size() && g < counts.groups.size(); ++g) {
    CounterGroup out;
    const auto& raw = counts.groups[g];
    for (size_t i = 0; i < groups_[g].size() && i < raw.size(); ++i) {
      if (i == 0) {
        out.run_time = raw[i].time_running;
        out.running_percent = raw[i].time_enabled
                                  ? 100.0 * static_cast<double>(raw[i].time_running) /
                                        static_cast<double>(raw[i].time_enabled)
                                  : 0;
      }
      out.counters.push_back(
          {groups_[g][i].name, ScaleCount(raw[i].value, raw[i].time_enabled, raw[i].time_running)});
    }
    report.groups.push_back(std::move(out));
  }
  return report;
}

}  // namespace tprof
