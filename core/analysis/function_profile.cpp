#include "core/analysis/function_profile.h"

#include <algorithm>

namespace tprof {

FunctionProfileBuilder::FunctionProfileBuilder(std::vector<EventDesc> events,
                                               FrameResolver& resolver, InlineMode inline_mode)
    : resolver_(resolver), attribution_(inline_mode) {
  profile_.events = std::move(events);
  profile_.inline_mode = inline_mode;
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
  std::stable_sort(profile_.rows.begin(), profile_.rows.end(),
                   [](const FunctionRow& a, const FunctionRow& b) {
                     if (a.self_period.empty()) return false;
                     return a.self_period[0] > b.self_period[0];
                   });
  row_index_.clear();
  return std::move(profile_);
}

}  // namespace tprof
