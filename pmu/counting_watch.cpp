#include "pmu/counting_watch.h"

#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <memory>
#include <optional>

#include "pmu/host_info.h"
#include "pmu/poll_sources.h"

namespace tprof {
namespace {

itimerspec TimerSpec(uint64_t first_ns, uint64_t period_ns) {
  itimerspec spec{};
  spec.it_value.tv_sec = static_cast<time_t>(first_ns / 1000000000);
  spec.it_value.tv_nsec = static_cast<long>(first_ns % 1000000000);
  spec.it_interval.tv_sec = static_cast<time_t>(period_ns / 1000000000);
  spec.it_interval.tv_nsec = static_cast<long>(period_ns % 1000000000);
  return spec;
}

}  // namespace

Result<CountingStop> WatchCounting(const CountingWatchOptions& options,
                                   const std::function<Status(uint64_t elapsed_ns)>& on_tick) {
  SignalWatch signals;
  if (options.workload) TPROF_RETURN_IF_ERROR(options.workload->Start());
  const uint64_t start = MonotonicNowNs();

  std::vector<pollfd> fds;
  fds.push_back({signals.fd(), POLLIN, 0});
  const size_t signal_index = 0;
  auto add_timer = [&](uint64_t ns, uint64_t period_ns) -> Result<std::unique_ptr<FileDescriptor>> {
    auto timer = std::make_unique<FileDescriptor>(timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC));
    if (timer->get() < 0) return Error(std::string("timerfd_create: ") + std::strerror(errno));
    itimerspec spec = TimerSpec(ns, period_ns);
    timerfd_settime(timer->get(), 0, &spec, nullptr);
    fds.push_back({timer->get(), POLLIN, 0});
    return timer;
  };
  std::unique_ptr<FileDescriptor> duration_timer, interval_timer;
  size_t duration_index = SIZE_MAX, interval_index = SIZE_MAX;
  if (options.duration_seconds > 0) {
    auto timer = add_timer(static_cast<uint64_t>(options.duration_seconds * 1e9), 0);
    if (!timer.ok()) return timer.error();
    duration_timer = std::move(timer).value();
    duration_index = fds.size() - 1;
  }
  if (options.interval_ns > 0) {
    auto timer = add_timer(options.interval_ns, options.interval_ns);
    if (!timer.ok()) return timer.error();
    interval_timer = std::move(timer).value();
    interval_index = fds.size() - 1;
  }
  size_t exit_index = SIZE_MAX;
  if (options.workload) {
    exit_index = fds.size();
    fds.push_back({options.workload->exit_fd(), POLLIN, 0});
  }
  // Attached processes: one pidfd each; one that is already gone has ended.
  std::vector<std::unique_ptr<FileDescriptor>> pidfds;
  const size_t pidfd_begin = fds.size();
  for (pid_t pid : options.processes) {
    int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
    if (fd < 0) continue;
    pidfds.push_back(std::make_unique<FileDescriptor>(fd));
    fds.push_back({fd, POLLIN, 0});
  }
  size_t processes_alive = pidfds.size();
  if (!options.processes.empty() && processes_alive == 0)
    return CountingStop{CountingEnd::kTargetExited, 0};

  auto stop = [&](CountingEnd why) { return CountingStop{why, MonotonicNowNs() - start}; };
  std::optional<CountingEnd> end;
  int interrupts = 0;
  while (true) {
    int n = ::poll(fds.data(), fds.size(), -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Error(std::string("poll: ") + std::strerror(errno));
    }
    if (fds[signal_index].revents & POLLIN) {
      int sig;
      pid_t sender;
      while (signals.Next(&sig, &sender)) {
        if (!end) end = CountingEnd::kInterrupted;
        ++interrupts;
        if (!options.workload) return stop(CountingEnd::kInterrupted);
        if (interrupts > 1)
          ::kill(options.workload->pid(), SIGKILL);  // it ignored the first one
        else if (sender != 0)
          ::kill(options.workload->pid(), sig);  // not from the terminal: it did not get it
      }
    }
    if (duration_index != SIZE_MAX && (fds[duration_index].revents & POLLIN)) {
      fds[duration_index].fd = -1;  // poll ignores negative descriptors
      if (!end) end = CountingEnd::kDuration;
      if (!options.workload) return stop(CountingEnd::kDuration);
      ::kill(options.workload->pid(), SIGTERM);
    }
    if (interval_index != SIZE_MAX && (fds[interval_index].revents & POLLIN)) {
      uint64_t expirations = 0;
      if (::read(fds[interval_index].fd, &expirations, sizeof expirations) > 0)
        TPROF_RETURN_IF_ERROR(on_tick(MonotonicNowNs() - start));
    }
    if (exit_index != SIZE_MAX && (fds[exit_index].revents & POLLIN))
      return stop(end.value_or(CountingEnd::kTargetExited));
    for (size_t i = pidfd_begin; i < fds.size(); ++i) {
      if (fds[i].fd >= 0 && (fds[i].revents & POLLIN)) {
        fds[i].fd = -1;
        if (--processes_alive == 0) return stop(CountingEnd::kTargetExited);
      }
    }
  }
}

}  // namespace tprof
