#include "core/analysis/group_windows_by_time.h"

#include <linux/perf_event.h>

namespace tprof {

bool IsReadOnlyMember(const std::vector<EventDesc>& events, size_t event,
                      const std::vector<uint64_t>& samples) {
  const int32_t leader = events[event].group_leader;
  if (leader < 0 || leader == static_cast<int32_t>(event) ||
      static_cast<size_t>(leader) >= events.size())
    return false;
  if (event < samples.size() && samples[event] != 0) return false;
  return events[static_cast<size_t>(leader)].sample_type & PERF_SAMPLE_READ;
}

std::vector<ReadGroup> ReadGroupsOf(const std::vector<EventDesc>& events) {
  std::vector<ReadGroup> groups;
  for (size_t e = 0; e < events.size(); ++e) {
    const EventDesc& event = events[e];
    if (!(event.sample_type & PERF_SAMPLE_READ) || !(event.read_format & PERF_FORMAT_GROUP) ||
        event.group_members.empty() ||
        (event.group_leader >= 0 && event.group_leader != static_cast<int32_t>(e)))
      continue;
    ReadGroup group;
    group.leader = static_cast<uint32_t>(e);
    group.members = event.group_members;
    groups.push_back(std::move(group));
  }
  return groups;
}

GroupWindowsByTime::GroupWindowsByTime(const std::vector<EventDesc>& events)
    : groups_(ReadGroupsOf(events)), group_of_leader_(events.size(), -1) {
  for (size_t g = 0; g < groups_.size(); ++g)
    group_of_leader_[groups_[g].leader] = static_cast<int>(g);
  open_.resize(groups_.size());
  last_cpu_.resize(groups_.size());
  short_window_.resize(groups_.size());
  for (size_t g = 0; g < groups_.size(); ++g)
    short_window_[g] = events[groups_[g].leader].hf_sample_period;
}

void WindowSums::Add(const double* window_deltas, size_t members) {
  if (deltas.empty()) {
    deltas.assign(members, 0);
    products.assign(members * members, 0);
  }
  for (size_t i = 0; i < members; ++i) {
    deltas[i] += window_deltas[i];
    for (size_t j = 0; j < members; ++j)
      products[i * members + j] += window_deltas[i] * window_deltas[j];
  }
  ++windows;
}

int GroupWindowsByTime::Close(const Sample& sample, std::vector<double>* deltas) {
  if (sample.event >= group_of_leader_.size() || group_of_leader_[sample.event] < 0) return -1;
  const size_t g = static_cast<size_t>(group_of_leader_[sample.event]);
  const size_t members = groups_[g].members.size();
  if (sample.counter_values.size() != members) return -1;
  auto [cpu, first_of_thread] = last_cpu_[g].try_emplace(sample.tid, sample.cpu);
  const bool migrated = !first_of_thread && cpu->second != sample.cpu;
  cpu->second = sample.cpu;
  auto [it, first] = open_[g].try_emplace(uint64_t{sample.tid} << 32 | sample.cpu);
  Open& before = it->second;
  const bool long_period = short_window_[g] && sample.period != short_window_[g];
  bool whole = !first && !before.interrupted && !migrated && !long_period;
  for (size_t i = 0; whole && i < members; ++i)
    whole = sample.counter_values[i] >= before.values[i];
  if (whole) {
    deltas->resize(members);
    for (size_t i = 0; i < members; ++i)
      (*deltas)[i] = static_cast<double>(sample.counter_values[i] - before.values[i]);
  }
  before.values = sample.counter_values;
  before.interrupted = false;
  return whole ? static_cast<int>(g) : -1;
}

void GroupWindowsByTime::Add(const Sample& sample, size_t slot) {
  const int g = Close(sample, &scratch_);
  if (g < 0) return;
  if (slots_.size() <= slot) slots_.resize(slot + 1);
  std::vector<WindowSums>& sums = slots_[slot];
  if (sums.empty()) sums.resize(groups_.size());
  sums[static_cast<size_t>(g)].Add(scratch_.data(), scratch_.size());
}

void GroupWindowsByTime::Interrupt() {
  for (auto& series : open_)
    for (auto& [key, open] : series) open.interrupted = true;
}

}  // namespace tprof
