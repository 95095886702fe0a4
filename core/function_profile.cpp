#include "core/function_profile.h"

#include <algorithm>

namespace tprof {

FunctionProfileBuilder::FunctionProfileBuilder(std::vector<EventDesc> events,
                                               FrameResolver& resolver)
    : resolver_(resolver) {
  profile_.events = std::move(events);
  profile_.total_period.assign(profile_.events.size(), 0);
  profile_.total_samples.assign(profile_.events.size(), 0);
}

void FunctionProfileBuilder::OnSample(const Sample& sample) {
  if (sample.event >= profile_.events.size()) return;
  const Mapping* mapping = space_.Find(sample.pid, sample.ip);
  FrameKey key{mapping, sample.ip};
  auto it = frame_cache_.find(key);
  if (it == frame_cache_.end())
    it =
        frame_cache_.emplace(key, resolver_.ResolveInProcess(sample.pid, mapping, sample.ip)).first;
  const ResolvedFrame& frame = it->second;
  std::string command = space_.ThreadName(sample.pid, sample.tid);
  auto [row_it, inserted] =
      row_index_.try_emplace({command, frame.module, frame.function}, profile_.rows.size());
  if (inserted) {
    FunctionRow row;
    row.function = frame.function;
    row.module = frame.module;
    row.command = command;
    row.self_period.assign(profile_.events.size(), 0);
    row.self_samples.assign(profile_.events.size(), 0);
    profile_.rows.push_back(std::move(row));
  }
  FunctionRow& row = profile_.rows[row_it->second];
  row.self_period[sample.event] += sample.period;
  row.self_samples[sample.event] += 1;
  profile_.total_period[sample.event] += sample.period;
  profile_.total_samples[sample.event] += 1;
}

FunctionProfile FunctionProfileBuilder::Finish() {
  std::stable_sort(profile_.rows.begin(), profile_.rows.end(),
                   [](const FunctionRow& a, const FunctionRow& b) {
                     if (a.self_period.empty()) return false;
                     return a.self_period[0] > b.self_period[0];
                   });
  row_index_.clear();
  return std::move(profile_);
}

}  // namespace tprof
