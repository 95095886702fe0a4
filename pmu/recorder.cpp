#include "pmu/recorder.h"

#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <variant>

#include "core/perf_record_parser.h"
#include "pmu/host_info.h"

namespace tprof {
namespace {

using AnyRecord =
    std::variant<Sample, MmapRecord, CommRecord, TaskRecord, LostRecord, ThrottleRecord>;

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
  Status FlushAll(ProfileWriter& writer) { return FlushUpTo(writer, UINT64_MAX); }

 private:
  Status FlushUpTo(ProfileWriter& writer, uint64_t limit) {
    std::stable_sort(pending_.begin(), pending_.end(),
                     [](const TimedRecord& a, const TimedRecord& b) { return a.time < b.time; });
    size_t n = 0;
    while (n < pending_.size() && pending_[n].time <= limit) ++n;
    for (size_t i = 0; i < n; ++i) {
      Status status =
          std::visit([&](const auto& r) { return writer.Write(r); }, pending_[i].record);
      if (!status.ok()) return status;
    }
    pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(n));
    return Status::Ok();
  }

  std::vector<TimedRecord> pending_;
  uint64_t sequence_ = 0;
  uint64_t round_max_ = 0;
  uint64_t previous_round_max_ = 0;
};

// Blocks the termination signals while recording and delivers them through a descriptor, so the
// poll loop sees them without a handler or global state. Restores the mask when done.
class SignalWatch {
 public:
  SignalWatch() {
    sigemptyset(&set_);
    for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&set_, s);
    sigprocmask(SIG_BLOCK, &set_, &old_);
    fd_ = signalfd(-1, &set_, SFD_CLOEXEC | SFD_NONBLOCK);
  }
  ~SignalWatch() {
    if (fd_ >= 0) ::close(fd_);
    sigprocmask(SIG_SETMASK, &old_, nullptr);
  }
  int fd() const { return fd_; }
  // Returns the next pending signal, with the sender's pid (0 when the kernel sent it, e.g. the
  // terminal's Ctrl-C, which the workload in the same process group receives as well).
  bool Next(int* signal, pid_t* sender) {
    signalfd_siginfo info;
    if (::read(fd_, &info, sizeof info) != sizeof info) return false;
    *signal = static_cast<int>(info.ssi_signo);
    *sender = static_cast<pid_t>(info.ssi_pid);
    return true;
  }

 private:
  sigset_t set_, old_;
  int fd_ = -1;
};

}  // namespace

Result<std::vector<EventDesc>> Recorder::Attach(pid_t pid) {
  std::vector<int> cpus = OnlineCpus();
  for (size_t e = 0; e < options_.events.size(); ++e) {
    const EventSpec& spec = options_.events[e];
    perf_event_attr attr = BuildSamplingAttr(spec, options_.sampling);
    // Only the first event produces side-band records; the others would duplicate them.
    if (e > 0)
      attr.mmap = attr.mmap2 = attr.comm = attr.task = attr.build_id = 0, attr.comm_exec = 0;
    size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    attr.wakeup_watermark = static_cast<uint32_t>(options_.mmap_pages * page / 4);
    descs_.push_back(DescribeEvent(spec, attr));
    for (size_t cpu_index = 0; cpu_index < cpus.size(); ++cpu_index) {
      int cpu = cpus[cpu_index];
      auto fd = OpenPerfEvent(attr, pid, cpu, -1, spec.name);
      if (!fd.ok()) return fd.error();
      auto id = fd->ReadId();
      if (!id.ok()) return id.error();
      event_by_id_[id.value()] = static_cast<int>(e);
      if (e == 0) {
        auto ring = RingBuffer::Map(fd->get(), options_.mmap_pages);
        if (!ring.ok()) return ring.error();
        rings_.push_back(std::move(ring).value());
      } else {
        // Later events share the first event's buffer on the same CPU.
        int leader_fd = open_[cpu_index].fd.get();
        if (::ioctl(fd->get(), PERF_EVENT_IOC_SET_OUTPUT, leader_fd) != 0)
          return Error(std::string("PERF_EVENT_IOC_SET_OUTPUT: ") + std::strerror(errno));
      }
      open_.push_back({std::move(fd).value(), static_cast<int>(e), cpu});
    }
  }
  return descs_;
}

Result<RecordStats> Recorder::Run(Workload& workload, ProfileWriter& writer) {
  RecordStats stats;
  stats.samples_per_event.assign(descs_.size(), 0);
  SignalWatch signals;
  uint64_t start = MonotonicNowNs();
  TPROF_RETURN_IF_ERROR(workload.Start());

  PerfRecordLayout layout;
  layout.sample_type = descs_.empty() ? 0 : descs_[0].sample_type;
  layout.read_format = descs_.empty() ? 0 : descs_[0].read_format;
  layout.sample_id_all = true;

  TimeOrderedQueue queue;
  ParsedPerfSample parsed;
  ParsedPerfRecord other;
  Status parse_status;
  auto event_of = [&](uint64_t id) {
    auto it = event_by_id_.find(id);
    return it == event_by_id_.end() ? 0u : static_cast<uint32_t>(it->second);
  };
  auto on_record = [&](const perf_event_header& header, const uint8_t* bytes) {
    const uint8_t* body = bytes + sizeof(header);
    size_t size = header.size - sizeof(header);
    if (header.type == PERF_RECORD_SAMPLE) {
      Status s = ParsePerfSample(body, size, layout, &parsed);
      if (!s.ok()) {
        parse_status = s;
        return;
      }
      parsed.sample.event = event_of(parsed.id);
      ++stats.samples_per_event[parsed.sample.event];
      queue.Push(parsed.sample.time, parsed.sample);
      return;
    }
    Status s = ParsePerfNonSample(header.type, header.misc, body, size, layout, &other);
    if (!s.ok()) {
      parse_status = s;
      return;
    }
    using Kind = ParsedPerfRecord::Kind;
    switch (other.kind) {
      case Kind::kMmap:
        queue.Push(other.mmap.time, other.mmap);
        break;
      case Kind::kComm:
        queue.Push(other.comm.time, other.comm);
        break;
      case Kind::kTask:
        queue.Push(other.task.time, other.task);
        break;
      case Kind::kLost:
      case Kind::kLostSamples:
        other.lost.event = event_of(other.id);
        stats.lost_records += other.lost.lost;
        queue.Push(other.lost.time, other.lost);
        break;
      case Kind::kThrottle:
        other.throttle.event = event_of(other.id);
        if (other.throttle.throttled) ++stats.throttle_records;
        queue.Push(other.throttle.time, other.throttle);
        break;
      case Kind::kNone:
        break;
    }
  };
  auto drain_all = [&]() -> Status {
    for (RingBuffer& ring : rings_) ring.Drain(on_record);
    if (!parse_status.ok()) return parse_status.error().WithContext("reading the ring buffer");
    return queue.EndRound(writer);
  };

  std::vector<pollfd> fds;
  for (const OpenEvent& e : open_)
    if (e.event_index == 0) fds.push_back({e.fd.get(), POLLIN, 0});
  const size_t exit_index = fds.size();
  fds.push_back({workload.exit_fd(), POLLIN, 0});
  const size_t signal_index = fds.size();
  fds.push_back({signals.fd(), POLLIN, 0});

  int interrupts = 0;
  bool exited = false;
  while (!exited) {
    int n = ::poll(fds.data(), fds.size(), 100);
    if (n < 0 && errno != EINTR) return Error(std::string("poll: ") + std::strerror(errno));
    if (fds[signal_index].revents & POLLIN) {
      int sig;
      pid_t sender;
      while (signals.Next(&sig, &sender)) {
        stats.interrupted = true;
        ++interrupts;
        // A second interrupt means the workload ignores the first: stop it for good.
        if (interrupts > 1)
          ::kill(workload.pid(), SIGKILL);
        else if (sender != 0)
          ::kill(workload.pid(), sig);
      }
    }
    if (fds[exit_index].revents & POLLIN) exited = true;
    TPROF_RETURN_IF_ERROR(drain_all());
  }
  for (const OpenEvent& e : open_) ::ioctl(e.fd.get(), PERF_EVENT_IOC_DISABLE, 0);
  TPROF_RETURN_IF_ERROR(drain_all());
  TPROF_RETURN_IF_ERROR(queue.FlushAll(writer));
  auto status = workload.Wait();
  if (!status.ok()) return status.error();
  stats.wait_status = status.value();
  stats.wall_time_ns = MonotonicNowNs() - start;
  return stats;
}

}  // namespace tprof
