#include "pmu/counting_run.h"

#include <optional>

#include "pmu/interval_reader.h"
#include "pmu/workload.h"

namespace tprof {

Result<CountingRunResult> RunCounting(
    const std::vector<std::vector<CountedEvent>>& groups, const CountingRunOptions& options,
    const std::function<Status(double seconds, const CounterReport& counts)>& on_interval) {
  CountingRunResult result;
  // A launched command counts from its exec; every CPU and attached processes from now, with a
  // launched command (-a -- cmd) only saying when to stop.
  std::optional<Workload> workload;
  std::optional<CountingSession> session;
  if (!options.command.empty()) {
    auto created = Workload::Create(options.command);
    if (!created.ok()) return created.error();
    workload.emplace(std::move(created).value());
  }
  if (workload && !options.system_wide) {
    auto opened = CountingSession::Open(groups, workload->pid(), -1, /*enable_on_exec=*/true);
    // A user the kernel lets count user space only (perf_event_paranoid 2) counts that, and the
    // result says so; an event already asked for in one mode is not changed.
    if (!opened.ok() && opened.error().message().find("permission denied") != std::string::npos) {
      std::vector<std::vector<CountedEvent>> user_only = groups;
      std::vector<std::string> changed;
      for (auto& group : user_only)
        for (CountedEvent& e : group)
          if (!e.exclude_kernel && MayFallBackToUserSpace(e.name)) {
            e.exclude_kernel = true;
            changed.push_back(e.name);
          }
      if (!changed.empty()) {
        auto retried =
            CountingSession::Open(user_only, workload->pid(), -1, /*enable_on_exec=*/true);
        if (retried.ok()) {
          opened = std::move(retried);
          result.user_space_only = true;
          result.notes.push_back(UserSpaceOnlyNote(
              "count", "counting", changed,
              "what the kernel does on the command's behalf is not in the counts"));
        }
      }
    }
    if (!opened.ok()) return opened.error();
    session.emplace(std::move(opened).value());
    result.target = "the command";
  } else {
    auto instances = options.system_wide ? EveryCpu() : ThreadsOfProcesses(options.pids);
    if (!instances.ok()) return instances.error();
    auto opened = CountingSession::Open(groups, instances.value());
    if (!opened.ok()) return opened.error();
    session.emplace(std::move(opened).value());
    if (options.system_wide) {
      result.target = std::to_string(session->instance_count()) + " CPUs";
      if (workload) result.target += " while the command ran";
    } else {
      std::string pids;
      for (pid_t pid : options.pids) pids += (pids.empty() ? "" : ",") + std::to_string(pid);
      result.target = std::to_string(session->instance_count()) + " threads of pid " + pids;
    }
    TPROF_RETURN_IF_ERROR(session->Enable());
  }

  IntervalReader reader(*session);
  auto next_interval = [&](uint64_t elapsed_ns) -> Status {
    auto delta = reader.NextReport();
    if (!delta.ok()) return delta.error();
    ++result.intervals;
    return on_interval(static_cast<double>(elapsed_ns) * 1e-9, delta.value());
  };
  CountingWatchOptions watch;
  watch.duration_seconds = options.duration_seconds;
  watch.interval_ns = options.interval_ns;
  watch.processes = options.pids;
  watch.workload = workload ? &*workload : nullptr;
  auto stop = WatchCounting(watch, next_interval);
  if (!stop.ok()) {
    if (workload) (void)workload->Wait();
    return stop.error();
  }
  result.end = stop->end;
  result.elapsed_ns = stop->elapsed_ns;
  if (!workload || options.system_wide) TPROF_RETURN_IF_ERROR(session->Disable());
  if (options.interval_ns) TPROF_RETURN_IF_ERROR(next_interval(stop->elapsed_ns));
  if (workload) {
    auto status = workload->Wait();
    if (!status.ok()) return status.error();
    result.wait_status = status.value();
  }
  if (options.interval_ns) {
    result.total = session->ToReport(reader.total());
  } else {
    auto total = session->Read();
    if (!total.ok()) return total.error();
    result.total = std::move(total).value();
  }
  return result;
}

}  // namespace tprof
