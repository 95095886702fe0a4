#include "core/analysis/function_profile.h"

#include <algorithm>

namespace tprof {

FunctionProfileBuilder::FunctionProfileBuilder(std::vector<EventDesc> events,
                                               FrameResolver& resolver, InlineMode inline_mode)
    : left_out_(events), windows_(events), resolver_(resolver), attribution_(inline_mode) {
  profile_.events = std::move(events);
  profile_.inline_mode = inline_mode;
  profile_.read_groups = windows_.groups();
  profile_.total_period.assign(profile_.events.size(), 0);
  profile_.total_samples.assign(profile_.events.size(), 0);
}

void FunctionProfileBuilder::OnSample(const Sample& sample) {
  if (sample.event >= profile_.events.size()) return;
  const SampleKey key{uint64_t{sample.pid} << 32 | sample.tid, sample.ip,
                      space().GenerationOf(sample.pid)};
  auto [it, inserted] = row_of_sample_.try_emplace(key, 0);
  if (inserted) it->second = RowOf(sample);
  counts_[it->second * profile_.events.size() + sample.event].Add(sample.period);
  profile_.total_period[sample.event] += sample.period;
  profile_.total_samples[sample.event] += 1;
  if (profile_.timeline_interval_ns) CountInTimeline(sample, it->second);
}

void FunctionProfileBuilder::CountInTimeline(const Sample& sample, size_t row) {
  if (timeline_start_ == 0) timeline_start_ = sample.time;  // a start the profile did not record
  const uint64_t since = sample.time > timeline_start_ ? sample.time - timeline_start_ : 0;
  const uint64_t interval = since / profile_.timeline_interval_ns;
  if (interval >= kMaxTimelineIntervals) {
    ++profile_.samples_beyond_timeline;
    return;
  }
  if (interval >= interval_counts_.size()) interval_counts_.resize(interval + 1);
  interval_counts_[interval][row * profile_.events.size() + sample.event].Add(sample.period);
  windows_.Add(sample, interval);
  // The periods dropped since the thread's last sample count where this one falls (a period is
  // short against an interval).
  if (const double left_out = left_out_.Add(sample); left_out > 0) {
    if (interval_left_out_.size() <= interval) interval_left_out_.resize(interval + 1);
    interval_left_out_[interval].resize(profile_.events.size());
    interval_left_out_[interval][sample.event] += left_out;
  }
}

size_t FunctionProfileBuilder::RowOf(const Sample& sample) {
  const Mapping* mapping = space().Find(sample.pid, sample.ip);
  FrameKey key{mapping, sample.ip};
  auto [it, inserted] = frame_cache_.try_emplace(key, 0);
  if (inserted) {
    // A frame the resolver holds is read in place; others are resolved into a copy.
    const ResolvedFrame* held = resolver_.FindHeld(sample.pid, mapping, sample.ip);
    if (held) {
      // Held frames are shared by the addresses that resolve alike: name each once.
      auto [f, first] = function_of_frame_.try_emplace(held, 0);
      if (first) f->second = FunctionId(*held);
      it->second = f->second;
    } else {
      it->second = FunctionId(resolver_.ResolveInProcess(sample.pid, mapping, sample.ip));
    }
  }
  const uint32_t function_id = it->second;
  const uint32_t command_id = CommandId(sample.pid, sample.tid);
  const uint64_t ids = uint64_t{command_id} << 32 | function_id;
  auto [ids_it, new_ids] = row_of_ids_.try_emplace(ids, 0);
  if (new_ids) {
    const std::string& command = commands_[command_id];
    const auto& [module, function] = functions_[function_id];
    auto [row_it, inserted] =
        row_index_.try_emplace({command, module, function}, profile_.rows.size());
    if (inserted) {
      FunctionRow row;
      row.function = function;
      row.module = module;
      row.command = command;
      profile_.rows.push_back(std::move(row));
      counts_.resize(profile_.rows.size() * profile_.events.size());
    }
    ids_it->second = row_it->second;
  }
  return ids_it->second;
}

uint32_t FunctionProfileBuilder::CommandId(uint32_t pid, uint32_t tid) {
  const uint64_t thread = uint64_t{pid} << 32 | tid;
  auto it = command_of_thread_.find(thread);
  if (it != command_of_thread_.end()) return it->second;
  std::string command = space().ThreadName(pid, tid);
  auto [id, inserted] = command_ids_.try_emplace(command, static_cast<uint32_t>(commands_.size()));
  if (inserted) commands_.push_back(std::move(command));
  command_of_thread_.emplace(thread, id->second);
  return id->second;
}

uint32_t FunctionProfileBuilder::FunctionId(const ResolvedFrame& frame) {
  const std::string& function = attribution_.LeafName(frame);
  auto [id, inserted] =
      function_ids_.try_emplace({frame.module, function}, static_cast<uint32_t>(functions_.size()));
  if (inserted) functions_.emplace_back(frame.module, function);
  return id->second;
}

FunctionProfile FunctionProfileBuilder::Finish() {
  const size_t events = profile_.events.size();
  for (size_t r = 0; r < profile_.rows.size(); ++r) {
    FunctionRow& row = profile_.rows[r];
    row.self_period.resize(events);
    row.self_samples.resize(events);
    for (size_t e = 0; e < events; ++e) {
      row.self_period[e] = counts_[r * events + e].period;
      row.self_samples[e] = counts_[r * events + e].samples;
    }
  }
  counts_.clear();
  std::vector<size_t> order(profile_.rows.size());
  for (size_t r = 0; r < order.size(); ++r) order[r] = r;
  std::stable_sort(order.begin(), order.end(), [this](size_t a, size_t b) {
    const FunctionRow &x = profile_.rows[a], &y = profile_.rows[b];
    if (x.self_period.empty()) return false;
    return x.self_period[0] > y.self_period[0];
  });
  std::vector<FunctionRow> sorted;
  sorted.reserve(order.size());
  std::vector<size_t> sorted_index(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    sorted_index[order[i]] = i;
    sorted.push_back(std::move(profile_.rows[order[i]]));
  }
  profile_.rows = std::move(sorted);
  row_index_.clear();
  for (size_t i = 0; i < interval_counts_.size(); ++i) {
    TimelineInterval interval;
    interval.start_ns = i * profile_.timeline_interval_ns;
    interval.end_ns = interval.start_ns + profile_.timeline_interval_ns;
    interval.total_period.assign(events, 0);
    interval.total_samples.assign(events, 0);
    std::map<size_t, TimelineInterval::Row> rows;
    for (const auto& [key, counts] : interval_counts_[i]) {
      const size_t row = sorted_index[key / events], event = key % events;
      TimelineInterval::Row& r = rows[row];
      r.row = row;
      r.period.resize(events);
      r.samples.resize(events);
      r.period[event] += counts.period;
      r.samples[event] += counts.samples;
      interval.total_period[event] += counts.period;
      interval.total_samples[event] += counts.samples;
    }
    for (auto& [row, counts] : rows) interval.rows.push_back(std::move(counts));
    if (left_out_.any()) {
      interval.left_out.assign(events, -1);
      for (size_t e = 0; e < events; ++e)
        if (left_out_.reads_itself(e))
          interval.left_out[e] = i < interval_left_out_.size() && e < interval_left_out_[i].size()
                                     ? interval_left_out_[i][e]
                                     : 0.0;
    }
    if (windows_.any() && i < windows_.slots().size()) interval.windows = windows_.slots()[i];
    profile_.timeline.push_back(std::move(interval));
  }
  interval_counts_.clear();
  interval_left_out_.clear();
  return std::move(profile_);
}

}  // namespace tprof
