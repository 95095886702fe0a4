#include "core/analysis/hot_streams.h"

#include <algorithm>

#include "core/model/event_selection.h"

namespace tprof {

const char* StreamKindName(StreamKind kind) {
  return kind == StreamKind::kBranch ? "branch" : "callchain";
}

double StreamProfile::Share(const BasicBlock& b) const {
  if (has_cycles)
    return block_cycles ? static_cast<double>(b.cycles) / static_cast<double>(block_cycles) : 0;
  return block_executions
             ? static_cast<double>(b.executions) / static_cast<double>(block_executions)
             : 0;
}

size_t HotStreamBuilder::StreamKeyHash::operator()(const std::vector<uint32_t>& key) const {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (uint32_t v : key) h = (h ^ v) * 0x100000001b3ULL;
  return static_cast<size_t>(h ^ (h >> 29));
}

HotStreamBuilder::HotStreamBuilder(std::vector<EventDesc> events, FrameResolver& resolver,
                                   HotStreamOptions options)
    : events_(std::move(events)), resolver_(resolver), options_(std::move(options)) {
  if (options_.depth == 0) options_.depth = 1;
}

uint32_t HotStreamBuilder::InternEntry(StreamEntry entry) {
  std::string key = entry.function;
  key.push_back('\0');
  key += entry.file;
  key.push_back('\0');
  key += std::to_string(entry.line);
  key.push_back(':');
  key += std::to_string(entry.end_line);
  key.push_back(':');
  key += std::to_string(entry.offset);
  key.push_back(':');
  key += std::to_string(entry.end_offset);
  auto [it, inserted] =
      entry_index_.emplace(std::move(key), static_cast<uint32_t>(entries_.size()));
  if (inserted) entries_.push_back(std::move(entry));
  return it->second;
}

void HotStreamBuilder::OnMmap(const MmapRecord& r) {
  space_.OnMmap(r);
  address_cache_.clear();
  for (auto& cache : block_cache_) cache.clear();
  memo_.clear();
}

const std::vector<uint32_t>& HotStreamBuilder::EntriesAt(uint32_t pid, uint64_t address) {
  AddressKey key{pid, address};
  auto it = address_cache_.find(key);
  if (it != address_cache_.end()) return it->second;
  const Mapping* mapping = space_.Find(pid, address);
  ResolvedFrame resolved = resolver_.ResolveInProcess(pid, mapping, address);
  std::vector<uint32_t> ids;
  const uint64_t offset = mapping ? mapping->FileOffset(address) : address;
  if (resolved.frames.empty()) {
    ids.push_back(InternEntry({resolved.function, "", 0, 0, offset, 0}));
  } else {
    // Innermost first, as the chain runs from the most recent code outwards.
    for (const SourceFrame& f : resolved.frames)
      ids.push_back(InternEntry({f.function.empty() ? resolved.function : f.function, f.file,
                                 f.line, 0, f.line ? 0 : offset, 0}));
  }
  return address_cache_.emplace(key, std::move(ids)).first->second;
}

const HotStreamBuilder::BlockInfo* HotStreamBuilder::BlockAt(uint32_t pid, uint64_t start,
                                                             uint64_t end, EventStreams& out) {
  auto& cache = block_cache_[&out - per_event_.data()];
  BlockKey key{pid, start, end};
  auto it = cache.find(key);
  if (it != cache.end()) return it->second.plausible ? &it->second : nullptr;

  const Mapping* mapping = space_.Find(pid, start);
  BlockInfo info;
  // A block runs forward within one mapping; anything else means branches were lost between
  // the two entries, and the "block" would cover code that did not run.
  bool plausible = start != 0 && start <= end && end - start <= kMaxBlockBytes &&
                   space_.Find(pid, end) == mapping &&
                   (options_.include_kernel || !IsKernelAddress(start));
  if (plausible) {
    ResolvedFrame first = resolver_.ResolveInProcess(pid, mapping, start);
    ResolvedFrame last = resolver_.ResolveInProcess(pid, mapping, end);
    StreamEntry entry;
    entry.function = first.frames.empty() || first.frames.front().function.empty()
                         ? first.function
                         : first.frames.front().function;
    entry.file = first.file();
    entry.line = first.line();
    entry.end_line = last.file() == first.file() ? last.line() : 0;
    std::string module = mapping ? mapping->filename : std::string("[unknown]");
    uint64_t offset_start = mapping ? mapping->FileOffset(start) : start;
    uint64_t offset_end = mapping ? mapping->FileOffset(end) : end;
    if (!entry.line) {
      entry.offset = offset_start;
      entry.end_offset = offset_end;
    }
    info.plausible = true;
    info.entry = InternEntry(std::move(entry));
    auto [slot, inserted] = out.block_index.emplace(
        std::make_tuple(module, offset_start, offset_end), out.blocks.size());
    if (inserted) {
      BasicBlock block;
      block.module = module;
      block.start = offset_start;
      block.end = offset_end;
      block.entry = info.entry;
      out.blocks.push_back(std::move(block));
    }
    info.block = slot->second;
  }
  BlockInfo& cached = cache.emplace(key, info).first->second;
  return cached.plausible ? &cached : nullptr;
}

size_t HotStreamBuilder::RawKeyHash::operator()(const std::vector<uint64_t>& key) const {
  uint64_t h = 0x9e3779b97f4a7c15ULL;
  for (uint64_t v : key) h = (h ^ v) * 0xff51afd7ed558ccdULL;
  return static_cast<size_t>(h ^ (h >> 32));
}

int32_t HotStreamBuilder::StreamIndex(StreamKind kind, EventStreams& out) {
  auto it = out.index.find(key_);
  if (it != out.index.end()) return static_cast<int32_t>(it->second);
  HotStream stream;
  stream.kind = kind;
  stream.entries.assign(key_.begin() + 1, key_.end());
  out.streams.push_back(std::move(stream));
  out.index.emplace(key_, out.streams.size() - 1);
  return static_cast<int32_t>(out.streams.size() - 1);
}

HotStreamBuilder::Resolved HotStreamBuilder::ResolveBranches(const Sample& sample, size_t used,
                                                             EventStreams& out) {
  // Entry i is the most recent branch but i; the block that ran before branch i starts at the
  // target of branch i+1 and ends at the source of branch i, and entry i's cycle count is the
  // time since branch i+1 (perf accounts block cycles the same way).
  const std::vector<BranchEntry>& branches = sample.branches;
  Resolved r;
  key_.assign(1, static_cast<uint32_t>(StreamKind::kBranch));
  bool chain_open = true;
  for (size_t i = 0; i + 1 < used; ++i) {
    const BlockInfo* info = BlockAt(sample.pid, branches[i + 1].to, branches[i].from, out);
    r.blocks.push_back(info ? static_cast<int32_t>(info->block) : -1);
    if (!info) {
      chain_open = false;  // the chain is broken here; later blocks still count as blocks
      continue;
    }
    if (chain_open && key_.size() <= options_.depth) key_.push_back(info->entry);
  }
  r.stream_blocks = static_cast<uint32_t>(key_.size() - 1);
  if (key_.size() > 1) r.stream = StreamIndex(StreamKind::kBranch, out);
  return r;
}

HotStreamBuilder::Resolved HotStreamBuilder::ResolveCallchain(const Sample& sample,
                                                              EventStreams& out) {
  Resolved r;
  key_.assign(1, static_cast<uint32_t>(StreamKind::kCallchain));
  auto add = [&](uint64_t address, bool kernel) {
    if (kernel && !options_.include_kernel) return true;
    for (uint32_t id : EntriesAt(sample.pid, address)) {
      if (key_.size() > options_.depth) return false;
      key_.push_back(id);
    }
    return key_.size() <= options_.depth;
  };
  ForEachFrameAddress(sample, add);
  if (key_.size() > 1) r.stream = StreamIndex(StreamKind::kCallchain, out);
  return r;
}

void HotStreamBuilder::Apply(const Resolved& r, const Sample& sample, EventStreams& out) {
  uint64_t cycles = 0;
  bool all_cycles = true;
  for (size_t i = 0; i < r.blocks.size(); ++i) {
    if (r.blocks[i] < 0) continue;
    BasicBlock& block = out.blocks[r.blocks[i]];
    uint32_t block_cycles = sample.branches[i].cycles();
    block.executions += 1;
    if (block_cycles) {
      block.cycles += block_cycles;
      block.cycle_counts += 1;
      has_cycles_ = true;
    }
    if (i < r.stream_blocks) {
      cycles += block_cycles;
      all_cycles = all_cycles && block_cycles != 0;
    }
  }
  if (r.stream < 0) return;
  HotStream& stream = out.streams[r.stream];
  stream.samples += 1;
  stream.period += sample.period;
  if (stream.kind == StreamKind::kBranch && all_cycles) {
    stream.cycles += cycles;
    stream.cycle_samples += 1;
  }
}

void HotStreamBuilder::OnSample(const Sample& sample) {
  if (sample.event >= events_.size()) return;
  if (per_event_.empty()) {
    per_event_.resize(events_.size());
    block_cache_.resize(events_.size());
  }
  EventStreams& out = per_event_[sample.event];
  out.samples += 1;
  out.period += sample.period;
  if (!sample.branches.empty()) out.branch_samples += 1;
  const bool branch =
      !sample.branches.empty() && options_.source != HotStreamOptions::Source::kCallchain;
  if (!branch && options_.source == HotStreamOptions::Source::kBranch) return;

  raw_.clear();
  raw_.push_back((static_cast<uint64_t>(sample.pid) << 32) | sample.event);
  size_t used = 0;
  if (branch) {
    // Slots the hardware had not filled yet read 0 -> 0 (perf passes them on): the stack ends
    // there.
    while (used < sample.branches.size() &&
           (sample.branches[used].from || sample.branches[used].to))
      ++used;
    raw_.push_back(1);
    for (size_t i = 0; i < used; ++i) {
      raw_.push_back(sample.branches[i].from);
      raw_.push_back(sample.branches[i].to);
    }
  } else {
    raw_.push_back(0);
    raw_.push_back(sample.ip);
    raw_.insert(raw_.end(), sample.callchain.begin(), sample.callchain.end());
  }
  auto it = memo_.find(raw_);
  if (it == memo_.end()) {
    Resolved r = branch ? ResolveBranches(sample, used, out) : ResolveCallchain(sample, out);
    if (memo_.size() >= kMemoLimit) memo_.clear();
    it = memo_.emplace(raw_, std::move(r)).first;
  }
  Apply(it->second, sample, out);
}

Result<StreamProfile> HotStreamBuilder::Finish() {
  StreamProfile profile;
  profile.events = events_;
  int chosen = -1;
  if (!options_.event.empty()) {
    auto selected = SelectEvent(events_, options_.event);
    if (!selected.ok()) return selected.error();
    chosen = static_cast<int>(*selected);
  } else {
    for (size_t i = 0; i < per_event_.size(); ++i)
      if (per_event_[i].samples) {
        chosen = static_cast<int>(i);
        break;
      }
  }
  profile.event = chosen;
  profile.entries = entries_;
  profile.has_cycles = has_cycles_;
  if (chosen < 0 || static_cast<size_t>(chosen) >= per_event_.size()) return profile;
  EventStreams& in = per_event_[chosen];
  profile.samples = in.samples;
  profile.period = in.period;
  profile.branch_samples = in.branch_samples;
  profile.streams = std::move(in.streams);
  profile.blocks = std::move(in.blocks);
  for (const BasicBlock& b : profile.blocks) {
    profile.block_cycles += b.cycles;
    profile.block_executions += b.executions;
  }
  std::sort(profile.streams.begin(), profile.streams.end(),
            [](const HotStream& a, const HotStream& b) {
              if (a.period != b.period) return a.period > b.period;
              if (a.samples != b.samples) return a.samples > b.samples;
              return a.entries < b.entries;
            });
  std::sort(profile.blocks.begin(), profile.blocks.end(),
            [](const BasicBlock& a, const BasicBlock& b) {
              if (a.cycles != b.cycles) return a.cycles > b.cycles;
              if (a.executions != b.executions) return a.executions > b.executions;
              return std::tie(a.module, a.start, a.end) < std::tie(b.module, b.start, b.end);
            });
  return profile;
}

}  // namespace tprof
