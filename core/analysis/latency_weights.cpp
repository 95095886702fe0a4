#include "core/analysis/latency_weights.h"

#include <linux/perf_event.h>

#include <algorithm>

#include "core/model/event_unit.h"

namespace tprof {

void RunningThreads::Seen(uint32_t pid, uint32_t tid, uint64_t time) {
  Thread& t = threads_[tid];
  t.pid = pid;
  t.first = std::min(t.first, time);
  t.last = std::max(t.last, time);
}

void RunningThreads::OnSample(const Sample& sample) {
  if (sample.event != off_cpu_event_) {
    Seen(sample.pid, sample.tid, sample.time);
    return;
  }
  // An interval is written where it ends; its period is its length.
  const uint64_t start = sample.time >= sample.period ? sample.time - sample.period : 0;
  Seen(sample.pid, sample.tid, start);
  Seen(sample.pid, sample.tid, sample.time);
  threads_[sample.tid].off.push_back({start, sample.time});
}

void RunningThreads::OnTask(const TaskRecord& task) {
  if (task.time == 0) return;
  Thread& t = threads_[task.tid];
  t.pid = task.pid;
  if (task.is_exit)
    t.exit = task.time;
  else
    t.fork = task.time;
}

void RunningThreads::Finish() {
  std::map<uint32_t, std::vector<std::pair<uint64_t, int64_t>>> changes;  // by pid
  for (const auto& [tid, t] : threads_) {
    const uint64_t begin = t.fork ? std::min(*t.fork, t.first) : t.first;
    // One past the last record: a sample at a thread's last moment finds it running.
    const uint64_t end = (t.exit ? std::max(*t.exit, t.last) : t.last) + 1;
    if (begin > end) continue;  // a fork or exit record only: never seen to run
    auto& c = changes[t.pid];
    c.push_back({begin, +1});
    c.push_back({end, -1});
    for (const auto& [off_start, off_end] : t.off) {
      const uint64_t a = std::max(off_start, begin), b = std::min(off_end, end);
      if (a >= b) continue;
      c.push_back({a, -1});
      c.push_back({b, +1});
    }
  }
  for (auto& [pid, c] : changes) {
    std::sort(c.begin(), c.end());
    Steps& steps = processes_[pid];
    int64_t running = 0;
    for (const auto& [time, delta] : c) {
      running += delta;
      if (!steps.times.empty() && steps.times.back() == time)
        steps.running.back() = running;
      else {
        steps.times.push_back(time);
        steps.running.push_back(running);
      }
    }
  }
}

uint32_t RunningThreads::RunningAt(uint32_t pid, uint64_t time) const {
  auto it = processes_.find(pid);
  if (it == processes_.end()) return 1;
  const Steps& s = it->second;
  auto at = std::upper_bound(s.times.begin(), s.times.end(), time);
  if (at == s.times.begin()) return 1;
  const int64_t running = s.running[static_cast<size_t>(at - s.times.begin()) - 1];
  return running > 1 ? static_cast<uint32_t>(running) : 1;
}

LatencyWeighting::LatencyWeighting(const RunningThreads& running,
                                   const std::vector<EventDesc>& events, uint32_t off_cpu_event,
                                   RecordVisitor& next)
    : ForwardingVisitor(next), running_(running) {
  for (uint32_t e = 0; e < events.size(); ++e) {
    const bool software_count = events[e].type == PERF_TYPE_SOFTWARE &&
                                UnitOfEvent(events[e].name) != EventUnit::kNanoseconds;
    weighs_.push_back(e != off_cpu_event && !IsOffCpuReasonEvent(events[e].config) &&
                      !software_count && events[e].type != PERF_TYPE_TRACEPOINT);
  }
}

void LatencyWeighting::OnSample(const Sample& sample) {
  if (sample.event >= weighs_.size() || !weighs_[sample.event]) return next().OnSample(sample);
  const uint32_t running = running_.RunningAt(sample.pid, sample.time);
  if (running <= 1) return next().OnSample(sample);
  Sample weighted = sample;
  weighted.period = sample.period / running;
  next().OnSample(weighted);
}

}  // namespace tprof
