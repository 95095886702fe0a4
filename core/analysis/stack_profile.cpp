#include "core/analysis/stack_profile.h"

namespace tprof {

size_t StackProfileBuilder::StackKeyHash::operator()(const std::vector<uint32_t>& key) const {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (uint32_t v : key) h = (h ^ v) * 0x100000001b3ULL;
  return static_cast<size_t>(h ^ (h >> 29));
}

StackProfileBuilder::StackProfileBuilder(std::vector<EventDesc> events, FrameResolver& resolver)
    : resolver_(resolver) {
  profile_.events = std::move(events);
  profile_.total_period.assign(profile_.events.size(), 0);
  profile_.total_samples.assign(profile_.events.size(), 0);
}

uint32_t StackProfileBuilder::MappingIndex(const Mapping* mapping) {
  if (!mapping) return kNoMapping;
  if (auto it = mapping_by_pointer_.find(mapping); it != mapping_by_pointer_.end()) {
    const StackMapping& known = profile_.mappings[it->second];
    if (known.start == mapping->start && known.end == mapping->end &&
        known.file_offset == mapping->page_offset && known.filename == mapping->filename)
      return it->second;
  }
  auto [it, inserted] = mapping_by_content_.try_emplace(
      {mapping->start, mapping->end, mapping->page_offset, mapping->filename, mapping->build_id},
      static_cast<uint32_t>(profile_.mappings.size()));
  if (inserted)
    profile_.mappings.push_back(
        {mapping->start, mapping->end, mapping->page_offset, mapping->filename, mapping->build_id});
  mapping_by_pointer_[mapping] = it->second;
  return it->second;
}

uint32_t StackProfileBuilder::LocationIndex(uint32_t pid, uint64_t address, bool kernel) {
  const Mapping* mapping = space().Find(pid, address);
  const uint32_t mapping_index = MappingIndex(mapping);
  LocationKey key{mapping_index, address, mapping ? 0 : pid};
  auto [it, inserted] =
      location_index_.try_emplace(key, static_cast<uint32_t>(profile_.locations.size()));
  if (inserted) {
    StackLocation location;
    location.mapping = mapping_index;
    location.address = address;
    location.kernel = kernel;
    location.frame = resolver_.ResolveInProcess(pid, mapping, address);
    profile_.locations.push_back(std::move(location));
  }
  return it->second;
}

void StackProfileBuilder::OnSample(const Sample& sample) {
  if (sample.event >= profile_.events.size()) return;
  const AddressSpace::Generation generation = space().GenerationOf(sample.pid);
  const auto raw = raw_stacks_.Intern(
      {sample.tid, sample.pid, generation.process, generation.kernel, sample.ip}, sample.callchain);
  if (raw.first) stack_of_raw_.push_back(ResolveStack(sample));
  Stack& stack = profile_.stacks[stack_of_raw_[raw.id]];
  stack.period[sample.event] += sample.period;
  stack.samples[sample.event] += 1;
  profile_.total_period[sample.event] += sample.period;
  profile_.total_samples[sample.event] += 1;
}

uint32_t StackProfileBuilder::ResolveStack(const Sample& sample) {
  key_.clear();
  key_.push_back(sample.pid);
  key_.push_back(sample.tid);
  ForEachFrameAddress(sample, [&](uint64_t address, bool kernel) {
    key_.push_back(LocationIndex(sample.pid, address, kernel));
    return true;
  });
  auto [it, inserted] =
      stack_index_.try_emplace(key_, static_cast<uint32_t>(profile_.stacks.size()));
  if (inserted) {
    Stack stack;
    stack.pid = sample.pid;
    stack.tid = sample.tid;
    stack.comm = space().ThreadName(sample.pid, sample.tid);
    stack.locations.assign(key_.begin() + 2, key_.end());
    stack.period.assign(profile_.events.size(), 0);
    stack.samples.assign(profile_.events.size(), 0);
    profile_.stacks.push_back(std::move(stack));
  }
  return it->second;
}

StackProfile StackProfileBuilder::Finish() {
  stack_index_.clear();
  location_index_.clear();
  mapping_by_pointer_.clear();
  mapping_by_content_.clear();
  return std::move(profile_);
}

}  // namespace tprof
