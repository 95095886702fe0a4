#include "pmu/recorder.h"

#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <type_traits>
#include <variant>

#include "core/model/event_unit.h"
#include "core/model/off_cpu_tracker.h"
#include "core/model/user_stack_unwinder.h"
#include "pmu/build_id.h"
#include "pmu/host_info.h"
#include "pmu/poll_sources.h"
#include "pmu/proc_scanner.h"

namespace tprof {
namespace {

// A thread's return to the CPU (PERF_RECORD_SWITCH without SWITCH_OUT), for --off-cpu.
struct SwitchIn {
  uint32_t tid = 0;
  uint64_t time = 0;
};

using AnyRecord =
    std::variant<Sample, MmapRecord, CommRecord, TaskRecord, LostRecord, ThrottleRecord, SwitchIn>;

struct TimedRecord {
  uint64_t time;
  uint64_t sequence;  // read order, to keep equal timestamps stable
  AnyRecord record;
};

// Orders records from several per-CPU buffers by time. A record read in round N+1 was written
// after round N started, so once round N+1 is read, everything up to the newest timestamp of
// round N can no longer be preceded by a record still in a buffer (perf's "finished round").
class TimeOrderedQueue {
 public:
  // With --off-cpu, the records pass `tracker` in time order.
  void TrackOffCpu(OffCpuTracker* tracker) { off_cpu_ = tracker; }
  // With -g, the records pass `trimmer` in time order, and it drops the stack copies not needed.
  void TrimStackCopies(StackCopyTrimmer* trimmer) { trimmer_ = trimmer; }
  void Push(uint64_t time, AnyRecord record) {
    round_max_ = std::max(round_max_, time);
    pending_.push_back({time, sequence_++, std::move(record)});
  }
  // Ends a read round and writes out what is safe to write.
  Status EndRound(ProfileWriter& writer) {
    Status status = FlushUpTo(writer, previous_round_max_);
    previous_round_max_ = round_max_;
    return status;
  }
  Status FlushAll(ProfileWriter& writer) {
    TPROF_RETURN_IF_ERROR(FlushUpTo(writer, UINT64_MAX));
    if (!off_cpu_) return Status::Ok();
    for (Sample& still_off : off_cpu_->Finish()) {
      if (trimmer_) trimmer_->Trim(&still_off);
      TPROF_RETURN_IF_ERROR(writer.Write(still_off));
    }
    return Status::Ok();
  }

 private:
  Status FlushUpTo(ProfileWriter& writer, uint64_t limit) {
    std::stable_sort(pending_.begin(), pending_.end(),
                     [](const TimedRecord& a, const TimedRecord& b) { return a.time < b.time; });
    size_t n = 0;
    while (n < pending_.size() && pending_[n].time <= limit) ++n;
    for (size_t i = 0; i < n; ++i) {
      if (off_cpu_) off_cpu_->SawTime(pending_[i].time);
      Status status = std::visit([&](auto& r) { return Write(writer, r); }, pending_[i].record);
      if (!status.ok()) return status;
    }
    pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(n));
    return Status::Ok();
  }

  template <typename Record>
  Status Write(ProfileWriter& writer, Record& record) {
    if constexpr (std::is_same_v<Record, Sample>) {
      // The tracker keeps the switch-out whole: its interval, written later, is trimmed (and
      // counted) on its own, as the pass after the workload would check it.
      if (off_cpu_) off_cpu_->SawSample(record);
      if (trimmer_) trimmer_->Trim(&record);
    } else if constexpr (std::is_same_v<Record, TaskRecord>) {
      if (trimmer_) trimmer_->OnTask(record);
      if (off_cpu_) off_cpu_->SawTask(record);
    } else if constexpr (std::is_same_v<Record, MmapRecord>) {
      if (trimmer_) trimmer_->OnMmap(record);
    } else if constexpr (std::is_same_v<Record, CommRecord>) {
      if (trimmer_) trimmer_->OnComm(record);
    }
    return writer.Write(record);
  }
  Status Write(ProfileWriter& writer, SwitchIn& in) {
    if (!off_cpu_) return Status::Ok();
    std::optional<Sample> interval = off_cpu_->SwitchedIn(in.tid, in.time);
    if (!interval) return Status::Ok();
    if (trimmer_) trimmer_->Trim(&*interval);
    return writer.Write(*interval);
  }

  std::vector<TimedRecord> pending_;
  OffCpuTracker* off_cpu_ = nullptr;
  StackCopyTrimmer* trimmer_ = nullptr;
  uint64_t sequence_ = 0;
  uint64_t round_max_ = 0;
  uint64_t previous_round_max_ = 0;
};

PerfRecordLayout LayoutOf(const perf_event_attr& attr) {
  PerfRecordLayout layout;
  layout.sample_type = attr.sample_type;
  layout.read_format = attr.read_format;
  layout.sample_id_all = attr.sample_id_all;
  layout.branch_hw_index = attr.branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX;
  layout.regs_user_count = static_cast<uint32_t>(std::popcount(attr.sample_regs_user));
  layout.regs_intr_count = static_cast<uint32_t>(std::popcount(attr.sample_regs_intr));
  return layout;
}

}  // namespace

Recorder::Recorder(RecordOptions options) : options_(std::move(options)) {}
Recorder::~Recorder() = default;

Status Recorder::OpenOn(pid_t pid, size_t cpu_index) {
  const int cpu = cpus_[cpu_index];
  std::vector<int> leader_fd(groups_.size(), -1);
  for (size_t e = 0; e < planned_.size(); ++e) {
    PlannedEvent& p = planned_[e];
    int group_fd = p.leader ? -1 : leader_fd[p.group];
    int err = 0;
    auto fd = OpenPerfEvent(p, pid, cpu, group_fd, &err);
    if (!fd.ok()) return fd.error();
    if (p.leader) leader_fd[p.group] = fd->get();
    auto id = fd->ReadId();
    if (!id.ok()) return id.error();
    event_by_id_[id.value()] = e;
    if (ring_fds_[cpu_index] < 0) {
      auto ring = RingBuffer::Map(fd->get(), options_.mmap_pages);
      if (!ring.ok()) return ring.error();
      rings_[cpu_index] = std::make_unique<RingBuffer>(std::move(ring).value());
      ring_fds_[cpu_index] = fd->get();
    } else if (::ioctl(fd->get(), PERF_EVENT_IOC_SET_OUTPUT, ring_fds_[cpu_index]) != 0) {
      return Error(std::string("PERF_EVENT_IOC_SET_OUTPUT: ") + std::strerror(errno));
    }
    open_.push_back({std::move(fd).value(), e, cpu});
  }
  return Status::Ok();
}

Result<std::vector<EventDesc>> Recorder::Open(pid_t launched_pid) {
  using Kind = RecordTarget::Kind;
  const Kind kind = options_.target.kind;
  SamplingOptions sampling = options_.sampling;
  sampling.enable_on_exec = kind == Kind::kLaunch;
  sampling.inherit = kind == Kind::kLaunch || kind == Kind::kProcesses;
  cpus_ = OnlineCpus();

  std::vector<pid_t> pids;
  switch (kind) {
    case Kind::kLaunch:
      pids = {launched_pid};
      break;
    case Kind::kProcesses:
      for (pid_t pid : options_.target.ids) {
        auto tids = ListThreads(pid);
        if (!tids.ok()) return tids.error();
        pids.insert(pids.end(), tids->begin(), tids->end());
      }
      break;
    case Kind::kThreads:
      pids = options_.target.ids;
      break;
    case Kind::kSystemWide:
      pids = {-1};
      break;
  }

  // Some kernels refuse parts of the plan; each retry drops one optional feature and says so.
  groups_ = options_.groups;
  if (options_.off_cpu) {
    // Every switch out, with the stack it happened in; the switches back in come as records.
    EventGroup switches;
    switches.events.push_back(ParseEventSpec("context-switches").value());
    switches.events.back().period = 1;
    groups_.push_back(std::move(switches));
  }
  // Whether a clock sampled on its own reads itself (ReadClocksSampledAlone): dropped before
  // inheritance where the kernel cannot have both, since following new threads matters more.
  bool read_clocks = true;
  for (int attempt = 0;; ++attempt) {
    std::vector<EventGroup> groups = groups_;
    const bool clocks_read = read_clocks && ReadClocksSampledAlone(&groups);
    planned_ = PlanEvents(groups, sampling);
    if (options_.off_cpu) {
      switch_event_ = planned_.size() - 1;
      planned_.back().attr.context_switch = 1;
    }
    open_.clear();
    event_by_id_.clear();
    rings_.clear();
    rings_.resize(cpus_.size());
    ring_fds_.assign(cpus_.size(), -1);
    Status status = Status::Ok();
    for (pid_t pid : pids) {
      for (size_t c = 0; c < cpus_.size() && status.ok(); ++c) status = OpenOn(pid, c);
      if (!status.ok()) break;
    }
    if (status.ok()) break;
    const std::string& message = status.error().message();
    if (sampling.burst_long && message.find("(hf_sample_period; E2BIG)") != std::string::npos) {
      // The same filter still works on windows of the short period, only with more samples.
      notes_.push_back(
          "burst sampling: this kernel has no hf_sample_period (E2BIG); fallback "
          "mode: sampling every " +
          std::to_string(sampling.burst_short) + " events, windows filtered the same way");
      sampling.use_frequency = false;
      sampling.period = sampling.burst_short;
      sampling.burst_long = 0;
      burst_mode_ = "fallback";
      continue;
    }
    // perf_event_paranoid 2 (the kernel's default) lets a user who is not root sample user
    // space only: the events the user gave no :u/:k fall back to :u, as perf's do, and say so.
    // (An event asked for with :k, and the off-CPU switches, which happen in the kernel, cannot.)
    if (message.find("permission denied") != std::string::npos && options_.off_cpu &&
        message.find("'context-switches'") != std::string::npos)
      return Error(
          "--off-cpu: where a thread leaves the CPU, and its stack there, is a kernel event "
          "(context-switches), which " +
          ParanoidSetting() +
          " keeps from this user: run as root, or lower it with 'sysctl "
          "kernel.perf_event_paranoid=1'; without --off-cpu tprof records on-CPU time in user "
          "space");
    if (message.find("permission denied") != std::string::npos) {
      std::vector<std::string> names;
      for (EventGroup& group : groups_)
        for (EventSpec& spec : group.events)
          if (!spec.exclude_kernel && !spec.exclude_user && MayFallBackToUserSpace(spec.name)) {
            spec.exclude_kernel = spec.exclude_hv = true;
            spec.name += ":u";
            names.push_back(spec.name);
          }
      if (!names.empty()) {
        notes_.push_back(UserSpaceOnlyNote(
            "sample", "sampling", names,
            "kernel work is not seen, so neither credited to the functions that caused it nor "
            "shown as kernel rows"));
        continue;
      }
    }
    bool einval = message.find("(EINVAL)") != std::string::npos;
    bool reads_groups = false;
    for (const PlannedEvent& p : planned_)
      reads_groups |= (p.attr.sample_type & PERF_SAMPLE_READ) != 0;
    if (einval && clocks_read && sampling.inherit) {
      read_clocks = false;
      bool one_mode = false;
      for (const EventGroup& g : groups_)
        for (const EventSpec& e : g.events)
          one_mode |= IsClockSampledInOneMode(e.type, e.config, e.exclude_user, e.exclude_kernel);
      notes_.push_back(
          one_mode ? "this kernel cannot read a clock in inherited events (Linux 6.12+): the time "
                     "a clock sampled in one mode leaves out of its samples is not measured, and "
                     "report says where that matters"
                   : "this kernel cannot read a clock in inherited events (Linux 6.12+): ticks "
                     "the clock's timer missed (a busy host holding the CPU) are not measured");
      continue;
    }
    // Inherited group reads came with Linux 6.12, lost counts in reads with 6.0: a kernel
    // between the two refuses only the first, so that one is dropped first (the arm lab's 6.1
    // kernel showed the other order blaming lost counts it does report).
    if (einval && reads_groups && sampling.inherit) {
      sampling.inherit = false;
      notes_.push_back(
          "this kernel cannot read groups in inherited events (Linux 6.12+): only the "
          "threads that exist at the start are followed");
      continue;
    }
    if (einval && reads_groups && sampling.read_lost) {
      sampling.read_lost = false;
      notes_.push_back("this kernel does not report lost counts in group reads (Linux 6.0+)");
      continue;
    }
    return status.error();
  }
  if (sampling.burst_long) burst_mode_ = "kernel";
  layouts_.clear();
  std::vector<EventDesc> descs;
  for (const PlannedEvent& p : planned_) {
    layouts_.push_back(LayoutOf(p.attr));
    descs.push_back(p.desc);
  }
  if (switch_event_) descs.push_back(OffCpuEventDesc(descs[*switch_event_]));
  event_count_ = descs.size();
  return descs;
}

Status Recorder::WriteSnapshots(ProfileWriter& writer) {
  using Kind = RecordTarget::Kind;
  std::vector<pid_t> pids;
  if (options_.target.kind == Kind::kProcesses) pids = options_.target.ids;
  if (options_.target.kind == Kind::kSystemWide) pids = ListProcesses();
  if (options_.target.kind == Kind::kThreads) {
    // The process of each thread: its maps are the thread's.
    for (pid_t tid : options_.target.ids) {
      std::string status_path = "/proc/" + std::to_string(tid) + "/status";
      FILE* f = std::fopen(status_path.c_str(), "r");
      if (!f) continue;
      char line[256];
      while (std::fgets(line, sizeof line, f))
        if (std::strncmp(line, "Tgid:", 5) == 0)
          pids.push_back(static_cast<pid_t>(std::atoi(line + 5)));
      std::fclose(f);
    }
  }
  uint64_t now = MonotonicNowNs();
  BuildIdCache build_ids;
  for (pid_t pid : pids) {
    auto snapshot = SnapshotProcess(pid, now);
    if (!snapshot.ok()) continue;  // the process ended meanwhile
    for (const CommRecord& c : snapshot->comms) {
      if (trimmer_) trimmer_->OnComm(c);
      TPROF_RETURN_IF_ERROR(writer.Write(c));
    }
    for (MmapRecord& m : snapshot->mmaps) {
      m.build_id = build_ids.Get(m.filename);
      if (trimmer_) trimmer_->OnMmap(m);
      TPROF_RETURN_IF_ERROR(writer.Write(m));
    }
  }
  return Status::Ok();
}

namespace {

// CPU time (user and system) of this process's threads so far: the recorder's, not the
// workload's, which is a child.
uint64_t OwnCpuNs() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  auto ns = [](const timeval& t) {
    return static_cast<uint64_t>(t.tv_sec) * 1000000000 + static_cast<uint64_t>(t.tv_usec) * 1000;
  };
  return ns(usage.ru_utime) + ns(usage.ru_stime);
}

}  // namespace

Result<RecordStats> Recorder::Run(ProfileWriter& writer, Workload* workload) {
  using Kind = RecordTarget::Kind;
  RecordStats stats;
  stats.samples_per_event.assign(event_count_, 0);
  SignalWatch signals;
  const uint64_t start = MonotonicNowNs();
  const uint64_t cpu_start = OwnCpuNs();

  // A launched command's events start at its exec (enable_on_exec); any other target's start
  // now, before a command that runs beside them (-a -- ./prog) is let go.
  if (options_.target.kind != Kind::kLaunch) {
    TPROF_RETURN_IF_ERROR(WriteSnapshots(writer));
    for (const OpenEvent& e : open_)
      if (planned_[e.event_index].leader) ::ioctl(e.fd.get(), PERF_EVENT_IOC_ENABLE, 0);
  }
  if (workload) TPROF_RETURN_IF_ERROR(workload->Start());

  TimeOrderedQueue queue;
  std::optional<OffCpuTracker> off_cpu;
  if (switch_event_) {
    off_cpu.emplace(static_cast<uint32_t>(*switch_event_), static_cast<uint32_t>(planned_.size()));
    queue.TrackOffCpu(&*off_cpu);
  }
  queue.TrimStackCopies(trimmer_);
  BuildIdCache build_ids;
  std::map<std::pair<uint64_t, uint32_t>, uint64_t> throttled_since;
  ParsedPerfSample parsed;
  ParsedPerfRecord other;
  Status parse_status;
  auto event_of = [&](uint64_t id) {
    auto it = event_by_id_.find(id);
    return it == event_by_id_.end() ? size_t{0} : it->second;
  };
  auto on_record = [&](const perf_event_header& header, const uint8_t* bytes) {
    const uint8_t* body = bytes + sizeof(header);
    size_t size = header.size - sizeof(header);
    if (header.type == PERF_RECORD_SAMPLE) {
      uint64_t id = 0;
      PeekSampleIdentifier(body, size, layouts_[0].sample_type, &id);
      size_t event = event_of(id);
      Status s = ParsePerfSample(body, size, layouts_[event], &parsed);
      if (!s.ok()) {
        parse_status = s;
        return;
      }
      parsed.sample.event = static_cast<uint32_t>(event);
      if (!parsed.regs_user.empty() || !parsed.stack_user.empty()) {
        parsed.sample.user_regs_abi = parsed.regs_user_abi;
        parsed.sample.user_regs = parsed.regs_user;
        parsed.sample.user_stack.assign(parsed.stack_user);
      }
      ++stats.samples_per_event[event];
      // Moved, not copied: with -g every sample carries a stack copy, and a copy here was a
      // tenth of the recorder's time at 20 kHz. The parser clears what it reuses.
      queue.Push(parsed.sample.time, std::move(parsed.sample));
      return;
    }
    Status s = ParsePerfNonSample(header.type, header.misc, body, size, layouts_[0], &other);
    if (!s.ok()) {
      parse_status = s;
      return;
    }
    using RecordKind = ParsedPerfRecord::Kind;
    switch (other.kind) {
      case RecordKind::kMmap:
        if (other.mmap.build_id.empty() && other.mmap.executable)
          other.mmap.build_id = build_ids.Get(other.mmap.filename);
        queue.Push(other.mmap.time, other.mmap);
        break;
      case RecordKind::kComm:
        queue.Push(other.comm.time, other.comm);
        break;
      case RecordKind::kSwitch:
        // A switch out's sample holds its stack; the return ends the interval.
        if (!other.switch_out && other.sample_id.has_time)
          queue.Push(other.sample_id.time, SwitchIn{other.sample_id.tid, other.sample_id.time});
        break;
      case RecordKind::kTask:
        queue.Push(other.task.time, other.task);
        break;
      case RecordKind::kLost:
      case RecordKind::kLostSamples:
        other.lost.event = static_cast<uint32_t>(event_of(other.id));
        stats.lost_samples += other.lost.lost;
        queue.Push(other.lost.time, other.lost);
        break;
      case RecordKind::kThrottle:
        other.throttle.event = static_cast<uint32_t>(event_of(other.id));
        if (other.throttle.throttled) ++stats.throttle_events;
        {
          // Throttled time per counter instance (event id on one CPU), until the unthrottle.
          auto key = std::make_pair(other.id, other.sample_id.cpu);
          if (other.throttle.throttled) {
            throttled_since.emplace(key, other.throttle.time);
          } else if (auto it = throttled_since.find(key); it != throttled_since.end()) {
            if (other.throttle.time > it->second)
              stats.throttled_ns += other.throttle.time - it->second;
            throttled_since.erase(it);
          }
        }
        queue.Push(other.throttle.time, other.throttle);
        break;
      case RecordKind::kNone:
        break;
    }
  };
  uint64_t last_flush = start;
  auto drain_all = [&]() -> Status {
    for (auto& ring : rings_)
      if (ring) ring->Drain(on_record);
    if (!parse_status.ok()) return parse_status.error().WithContext("reading the ring buffer");
    TPROF_RETURN_IF_ERROR(queue.EndRound(writer));
    uint64_t now = MonotonicNowNs();
    if (now - last_flush >= options_.flush_interval_ns) {
      last_flush = now;
      return writer.Flush();  // so that a killed recording keeps all but the last moments
    }
    return Status::Ok();
  };

  std::vector<pollfd> fds;
  for (int fd : ring_fds_)
    if (fd >= 0) fds.push_back({fd, POLLIN, 0});
  const size_t signal_index = fds.size();
  fds.push_back({signals.fd(), POLLIN, 0});
  FileDescriptor timer(options_.duration_seconds > 0 ? timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC)
                                                     : -1);
  size_t timer_index = SIZE_MAX;
  if (timer.get() >= 0) {
    itimerspec spec{};
    uint64_t ns = static_cast<uint64_t>(options_.duration_seconds * 1e9);
    spec.it_value.tv_sec = static_cast<time_t>(ns / 1000000000);
    spec.it_value.tv_nsec = static_cast<long>(ns % 1000000000);
    timerfd_settime(timer.get(), 0, &spec, nullptr);
    timer_index = fds.size();
    fds.push_back({timer.get(), POLLIN, 0});
  }
  size_t exit_index = SIZE_MAX;
  if (workload) {
    exit_index = fds.size();
    fds.push_back({workload->exit_fd(), POLLIN, 0});
  }
  // -p: one pidfd per process; recording ends when all have exited.
  std::vector<std::unique_ptr<FileDescriptor>> pidfds;
  const size_t pidfd_begin = fds.size();
  if (options_.target.kind == Kind::kProcesses) {
    for (pid_t pid : options_.target.ids) {
      int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
      if (fd < 0) continue;
      pidfds.push_back(std::make_unique<FileDescriptor>(fd));
      fds.push_back({fd, POLLIN, 0});
    }
  }
  size_t processes_alive = pidfds.size();

  Status failure;
  int interrupts = 0;
  bool done = false;
  while (!done) {
    int n = ::poll(fds.data(), fds.size(), 100);
    if (n < 0 && errno != EINTR) {
      failure = Error(std::string("poll: ") + std::strerror(errno));
      break;
    }
    if (fds[signal_index].revents & POLLIN) {
      int sig;
      pid_t sender;
      while (signals.Next(&sig, &sender)) {
        stats.interrupted = true;
        ++interrupts;
        if (!workload) {
          done = true;  // attached: stop recording, leave the targets alone
        } else if (interrupts > 1) {
          ::kill(workload->pid(), SIGKILL);  // the workload ignored the first one
        } else if (sender != 0) {
          ::kill(workload->pid(), sig);  // not from the terminal: the workload did not get it
        }
      }
    }
    if (timer_index != SIZE_MAX && (fds[timer_index].revents & POLLIN)) {
      stats.duration_reached = true;
      fds[timer_index].fd = -1;  // poll ignores negative descriptors
      if (workload)
        ::kill(workload->pid(), SIGTERM);
      else
        done = true;
    }
    if (exit_index != SIZE_MAX && (fds[exit_index].revents & POLLIN)) done = true;
    for (size_t i = pidfd_begin; i < fds.size(); ++i) {
      if (fds[i].fd >= 0 && (fds[i].revents & POLLIN)) {
        fds[i].fd = -1;
        if (--processes_alive == 0) done = true;
      }
    }
    if (options_.target.kind == Kind::kThreads) {
      bool any_alive = false;
      for (pid_t tid : options_.target.ids)
        any_alive |= ::access(("/proc/" + std::to_string(tid)).c_str(), F_OK) == 0;
      if (!any_alive) done = true;
    }
    failure = drain_all();
    if (!failure.ok()) break;
  }
  for (const OpenEvent& e : open_) ::ioctl(e.fd.get(), PERF_EVENT_IOC_DISABLE, 0);
  if (failure.ok()) failure = drain_all();
  if (failure.ok()) failure = queue.FlushAll(writer);
  if (workload) {
    if (!failure.ok()) open_.clear();  // stop sampling the workload; let it finish on its own
    auto status = workload->Wait();
    if (!status.ok() && failure.ok()) failure = status.error();
    if (status.ok()) stats.wait_status = status.value();
  }
  stats.wall_time_ns = MonotonicNowNs() - start;
  stats.recorder_cpu_ns = OwnCpuNs() - cpu_start;
  // Still throttled at the end: count until the end.
  const uint64_t end = MonotonicNowNs();
  for (const auto& [key, since] : throttled_since)
    if (end > since) stats.throttled_ns += end - since;
  stats.counter_instances = open_.size();
  if (off_cpu) {
    stats.off_cpu_intervals = off_cpu->intervals();
    stats.samples_per_event.back() = off_cpu->intervals();
  }
  if (!failure.ok()) return failure.error();
  return stats;
}

}  // namespace tprof
