#include "core/analysis/report_table.h"

#include <linux/perf_event.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "core/analysis/derived_metrics.h"
#include "core/analysis/group_windows_by_time.h"
#include "core/base/file_paths.h"
#include "core/model/event_unit.h"

namespace tprof {
namespace {

constexpr struct {
  SortKey key;
  const char* name;
} kSortKeyNames[] = {
    {SortKey::kSymbol, "sym"}, {SortKey::kDso, "dso"}, {SortKey::kComm, "comm"},
    {SortKey::kPid, "pid"},    {SortKey::kTid, "tid"}, {SortKey::kSrcline, "srcline"},
};

}  // namespace

const char* SortKeyName(SortKey key) {
  for (const auto& k : kSortKeyNames)
    if (k.key == key) return k.name;
  return "?";
}

Result<std::vector<SortKey>> ParseSortKeys(const std::string& text) {
  std::vector<SortKey> keys;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    if (item == "symbol") item = "sym";
    if (item == "thread") item = "tid";
    if (item == "process") item = "comm";
    bool found = false;
    for (const auto& k : kSortKeyNames)
      if (item == k.name) {
        if (std::find(keys.begin(), keys.end(), k.key) == keys.end()) keys.push_back(k.key);
        found = true;
      }
    if (!found)
      return Error("unknown sort key '" + item + "' (known: sym, dso, comm, pid, tid, srcline)");
  }
  if (keys.empty())
    return Error("--sort needs at least one key (sym, dso, comm, pid, tid, srcline)");
  return keys;
}

Result<TimeRangeText> ParseTimeRange(const std::string& text) {
  const std::string forms =
      "wants START,END in seconds from the profile's start (\"1.5,2\", \"+1.5,+2\", an end "
      "left open: \"1.5,\") or percents of its length (\"10%-20%\"), not '" +
      text + "'";
  auto number = [](std::string s, const char* unit) -> Result<std::optional<double>> {
    if (s.empty()) return std::optional<double>();
    if (s[0] == '+') s.erase(0, 1);
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (s.empty() || *end != '\0' || !std::isfinite(v) || v < 0)
      return Error("wants a time in " + std::string(unit) + ", not negative, not '" + s + "'");
    return std::optional<double>(v);
  };
  TimeRangeText range;
  const size_t comma = text.find(',');
  if (comma == std::string::npos) {
    // "A%-B%": both ends, each with its '%'.
    const size_t dash = text.find("%-");
    if (dash == std::string::npos || text.empty() || text.back() != '%') return Error(forms);
    auto start = number(text.substr(0, dash), "percent");
    if (!start.ok()) return start.error();
    auto end = number(text.substr(dash + 2, text.size() - dash - 3), "percent");
    if (!end.ok()) return end.error();
    if (!*start || !*end) return Error(forms);
    if (**end > 100) return Error(text + ": a percent beyond 100");
    range = {*start, *end, true};
  } else {
    auto start = number(text.substr(0, comma), "seconds");
    if (!start.ok()) return start.error();
    auto end = number(text.substr(comma + 1), "seconds");
    if (!end.ok()) return end.error();
    range = {*start, *end, false};
  }
  if (range.start && range.end && *range.end <= *range.start)
    return Error(text + ": END is not after START");
  return range;
}

Result<std::pair<std::optional<double>, std::optional<double>>> ResolveTimeRange(
    const TimeRangeText& range, uint64_t duration_ns) {
  const double length = static_cast<double>(duration_ns) / 1e9;
  std::optional<double> start = range.start, end = range.end;
  if (range.percent) {
    if (duration_ns == 0)
      return Error(
          "percents need the profile's length, which this input does not record; give seconds "
          "from its start (START,END)");
    start = *start / 100 * length;
    // 100 % is the end itself, where a perf.data file's last sample lies (its length is from
    // the first sample to the last): an end excluded there would drop that sample.
    end = *end >= 100 ? std::nullopt : std::optional<double>(*end / 100 * length);
  }
  if (duration_ns != 0 && start && *start > length) {  // the last sample may lie at the end
    char text[160];
    std::snprintf(text, sizeof text,
                  "starts at %.3f s, after the profile's end (%.3f s): no sample lies in it",
                  *start, length);
    return Error(text);
  }
  return std::make_pair(start, end);
}

Result<std::pair<std::optional<double>, std::optional<double>>> TimeRangeOption(
    const std::string& text, uint64_t duration_ns) {
  auto parsed = ParseTimeRange(text);
  if (!parsed.ok()) return Error::BadRequest("--time " + parsed.error().message());
  auto range = ResolveTimeRange(*parsed, duration_ns);
  if (!range.ok()) return Error::BadRequest("--time " + text + ": " + range.error().message());
  return range;
}

bool ReportTable::IsSampled(size_t event) const {
  return !IsReadOnlyMember(events, event, total_samples);
}

size_t ReportTable::FirstSampledEvent() const {
  for (size_t e = 0; e < events.size(); ++e)
    if (IsSampled(e) && total_samples[e] != 0) return e;
  return 0;
}

bool ClockReadsLeftOut::BeyondLateness() const {
  return one_mode || left_out >= kTimerLatenessShare * read;
}

std::optional<ClockReadsLeftOut> ClockLeftOutOfReads(const ReportTable& table,
                                                     const ReadGroup& group) {
  if (group.leader >= table.events.size() || group.read_totals.empty() || group.read_totals[0] == 0)
    return std::nullopt;
  const EventDesc& desc = table.events[group.leader];
  if (!IsTimerClock(desc.type, desc.config)) return std::nullopt;
  ClockReadsLeftOut r;
  r.clock = group.leader;
  r.one_mode =
      IsClockSampledInOneMode(desc.type, desc.config, desc.exclude_user, desc.exclude_kernel);
  if (!r.one_mode && group.members.size() != 1) return std::nullopt;
  r.read = static_cast<double>(group.read_totals[0]);
  // Under a time range the reads hold the time before it too (counters count from the start).
  if (table.samples_outside_time)
    r.read = std::max(0.0, r.read - static_cast<double>(group.leader_read_before_first_samples));
  if (r.read <= 0) return std::nullopt;
  // A clock in one mode keeps its reads across a loss: they hold the other mode's time too.
  const double across = r.one_mode ? 0.0 : static_cast<double>(group.leader_read_across_interrupts);
  const double sampled = group.leader < table.total_period.size()
                             ? static_cast<double>(table.total_period[group.leader])
                             : 0.0;
  r.left_out = std::max(0.0, r.read - sampled - across);
  return r;
}

std::string SourceLineOf(const ResolvedFrame& frame) {
  if (frame.file().empty()) return "??:0";
  return frame.file() + ":" + std::to_string(frame.line());
}

SampleFrames::Frame SampleFrames::FrameAt(uint32_t pid, const Location& location) {
  auto [it, inserted] = cache_.try_emplace(location, Frame{nullptr, 0});
  if (inserted)
    it->second = Held(pid, location, resolver_.FindHeld(pid, location.mapping, location.address));
  return it->second;
}

SampleFrames::Frame SampleFrames::Held(uint32_t pid, const Location& location,
                                       const ResolvedFrame* frame) {
  if (!frame) {
    owned_.push_back(std::make_unique<ResolvedFrame>(
        resolver_.ResolveInProcess(pid, location.mapping, location.address)));
    frame = owned_.back().get();
  }
  return {frame, FunctionAttribution::InlinedCount(*frame)};
}

void SampleFrames::Resolve(std::span<const Lookup> lookups) {
  // In blocks, so what one step of a block fetches is still in the cache at its next step.
  constexpr size_t kBlock = 64;
  for (size_t begin = 0; begin < lookups.size(); begin += kBlock) {
    const std::span<const Lookup> block =
        lookups.subspan(begin, std::min(kBlock, lookups.size() - begin));
    for (const Lookup& lookup : block) Prefetch(lookup.location);
    queries_.clear();
    for (const Lookup& lookup : block)
      if (!cache_.contains(lookup.location))
        queries_.push_back({lookup.pid, lookup.location.mapping, lookup.location.address, nullptr});
    if (queries_.empty()) continue;
    resolver_.FindHeldMany(queries_);
    for (const FrameResolver::HeldQuery& q : queries_) {
      const Location location{q.mapping, q.address};
      auto [it, inserted] = cache_.try_emplace(location, Frame{nullptr, 0});
      if (inserted) it->second = Held(q.pid, location, q.frame);  // once for one asked twice
    }
  }
}

const ResolvedFrame& SampleFrames::Leaf(const Sample& sample) { return At(sample.pid, sample.ip); }

const std::vector<const ResolvedFrame*>& SampleFrames::Chain(const Sample& sample) {
  chain_.clear();
  ForEachFrameAddress(sample, [&](uint64_t address, bool) {
    chain_.push_back(&At(sample.pid, address));
    return true;
  });
  if (chain_.empty()) chain_.push_back(&Leaf(sample));
  return chain_;
}

Result<SampleSelector> SampleSelector::Create(const SampleFilter& filter,
                                              uint64_t start_timestamp) {
  SampleSelector s;
  s.filter_ = filter;
  if (!filter.symbol_pattern.empty()) {
    try {
      s.symbol_.emplace(filter.symbol_pattern, std::regex::ECMAScript | std::regex::optimize);
    } catch (const std::regex_error& e) {
      return Error("bad --symbol regular expression '" + filter.symbol_pattern + "': " + e.what());
    }
  }
  s.start_ = start_timestamp;
  s.start_known_ = start_timestamp != 0;
  return s;
}

bool SampleSelector::InTimeRange(const Sample& sample) {
  if (!start_known_) {
    start_ = sample.time;
    start_known_ = true;
  }
  if (!filter_.time_start && !filter_.time_end) return true;
  double t = sample.time >= start_ ? static_cast<double>(sample.time - start_) / 1e9
                                   : -static_cast<double>(start_ - sample.time) / 1e9;
  if (filter_.time_start && t < *filter_.time_start) return false;
  if (filter_.time_end && t >= *filter_.time_end) return false;
  return true;
}

bool SampleSelector::ThreadMatches(const Sample& sample, const std::string& comm) const {
  if (!filter_.comms.empty() && !filter_.comms.count(comm)) return false;
  if (!filter_.pids.empty() && !filter_.pids.count(sample.pid)) return false;
  if (!filter_.tids.empty() && !filter_.tids.count(sample.tid)) return false;
  return true;
}

bool SampleSelector::FrameMatches(const ResolvedFrame& frame, const std::string& function) const {
  if (!filter_.dsos.empty()) {
    bool any = false;
    for (const std::string& d : filter_.dsos)
      any |= frame.module == d || BaseName(frame.module) == d;
    if (!any) return false;
  }
  if (symbol_ && !std::regex_search(function, *symbol_)) return false;
  return true;
}

Result<std::unique_ptr<ReportTableBuilder>> ReportTableBuilder::Create(
    std::vector<EventDesc> events, FrameResolver& resolver, std::vector<SortKey> sort,
    const SampleFilter& filter, uint64_t start_timestamp, InlineMode inline_mode) {
  auto selector = SampleSelector::Create(filter, start_timestamp);
  if (!selector.ok()) return selector.error();
  return std::unique_ptr<ReportTableBuilder>(new ReportTableBuilder(
      std::move(events), resolver, std::move(sort), std::move(selector).value(), inline_mode));
}

namespace {

// A row's name in a reason's text, from its sort-key values as WindowAttributor has them (each
// followed by '\x1f'): the last, most specific one (the function, where the sort has it).
std::string RowNameOfJoinedKey(const std::string& joined) {
  std::string_view keys(joined);
  if (!keys.empty() && keys.back() == '\x1f') keys.remove_suffix(1);
  const size_t last = keys.rfind('\x1f');
  return std::string(last == std::string_view::npos ? keys : keys.substr(last + 1));
}

bool IsThreadKey(SortKey k) {
  return k == SortKey::kComm || k == SortKey::kPid || k == SortKey::kTid;
}

// Appends a sort key's value for a sample of thread `comm` whose function is the one at `level`
// of `frame` to `out`. (Appending rather than returning: every new address of a report builds
// its row's key, and copying function names into temporaries was much of that.)
void AppendSortValue(std::string& out, SortKey k, const Sample& sample, const std::string& comm,
                     const FunctionAttribution& attribution, const ResolvedFrame& frame,
                     uint32_t level) {
  switch (k) {
    case SortKey::kSymbol:
      out += attribution.Name(frame, level);
      return;
    case SortKey::kDso:
      out += frame.module;
      return;
    case SortKey::kComm:
      out += comm;
      return;
    case SortKey::kPid:
      out += std::to_string(sample.pid);
      return;
    case SortKey::kTid:
      out += std::to_string(sample.tid);
      return;
    case SortKey::kSrcline:
      out += attribution.SourceLine(frame, level);
      return;
  }
}

// The sort keys' thread-dependent values of a sample of thread `comm`, joined: what its rows
// share with every other sample of threads alike.
std::string ThreadPart(const std::vector<SortKey>& sort, const Sample& sample,
                       const std::string& comm) {
  static const FunctionAttribution kNoAttribution;  // thread keys do not look at the frame
  static const ResolvedFrame kNoFrame;
  std::string part;
  for (SortKey k : sort) {
    if (IsThreadKey(k)) AppendSortValue(part, k, sample, comm, kNoAttribution, kNoFrame, 0);
    part.push_back('\x1f');
  }
  return part;
}

}  // namespace

StackRowResolver::StackRowResolver(FrameResolver& resolver, std::vector<SortKey> sort,
                                   SampleSelector selector, InlineMode inline_mode)
    : sort_(std::move(sort)),
      attribution_(inline_mode),
      frames_(resolver, space()),
      selector_(std::move(selector)),
      census_(resolver) {}

const StackRowResolver::Thread& StackRowResolver::ThreadOf(const Sample& sample) {
  auto [thread, inserted] = threads_.Get(sample);
  if (!inserted) return thread;
  thread.comm = space().ThreadName(sample.pid, sample.tid);
  thread.part = thread_parts_
                    .try_emplace(ThreadPart(sort_, sample, thread.comm),
                                 static_cast<uint32_t>(thread_parts_.size()))
                    .first->second;
  return thread;
}

uint32_t StackRowResolver::KeyOf(const Sample& sample, const Thread& thread,
                                 const ResolvedFrame& frame, uint32_t level) {
  auto [part_it, new_frame] = frame_parts_.try_emplace(std::pair{&frame, level});
  FramePart& frame_part = part_it->second;
  if (new_frame) {
    std::string& part = part_buffer_;
    part.clear();
    for (SortKey k : sort_) {
      if (!IsThreadKey(k))
        AppendSortValue(part, k, sample, thread.comm, attribution_, frame, level);
      part.push_back('\x1f');
    }
    auto found = frame_part_ids_.find(part);
    if (found == frame_part_ids_.end())
      found = frame_part_ids_.emplace(part, static_cast<uint32_t>(frame_part_ids_.size())).first;
    frame_part.part = found->second;
  }
  if (frame_part.last_thread_part == thread.part) return frame_part.last_key;
  auto [key_it, new_key] = key_ids_.try_emplace(uint64_t{thread.part} << 32 | frame_part.part,
                                                static_cast<uint32_t>(keys_.size()));
  if (new_key) {
    Key key;
    for (SortKey k : sort_) {
      AppendSortValue(key.values.emplace_back(), k, sample, thread.comm, attribution_, frame,
                      level);
      key.joined += key.values.back();
      key.joined.push_back('\x1f');
    }
    keys_.push_back(std::move(key));
  }
  frame_part.last_thread_part = thread.part;
  frame_part.last_key = key_it->second;
  return key_it->second;
}

uint32_t StackRowResolver::LeafKey(const Sample& sample) {
  return KeyOf(sample, ThreadOf(sample), frames_.Leaf(sample), 0);
}

void StackRowResolver::OnSample(const Sample& sample) {
  const Thread& thread = ThreadOf(sample);
  const AddressSpace::Generation generation = space().GenerationOf(sample.pid);
  StackKeys stack;
  const ResolvedFrame& leaf = frames_.Leaf(sample);
  stack.leaf = KeyOf(sample, thread, leaf, 0);
  stack.leaf_matches = Keeps(leaf, 0);
  const SplitStack split = SplitLeaf(sample);
  const auto callers = caller_ids_.Intern(sample, split, thread.part, generation);
  stack.callers = callers.id;
  if (callers.first) {
    KeyRange range;
    range.begin = static_cast<uint32_t>(caller_keys_.size());
    // All the callers' frames are resolved together before the first is looked up.
    lookups_.clear();
    ForEachCallerAddress(split.callers, split.callers_kernel, [&](uint64_t address, bool) {
      lookups_.push_back({sample.pid, frames_.Locate(sample.pid, address)});
      return true;
    });
    frames_.Resolve(lookups_);
    for (const SampleFrames::Lookup& lookup : lookups_) {
      const SampleFrames::Frame at = frames_.FrameAt(sample.pid, lookup.location);
      const ResolvedFrame& frame = *at.frame;
      attribution_.ForEachLevel(at.inlined_count, [&](uint32_t level) {
        if (!Keeps(frame, level)) return;
        const uint32_t key = KeyOf(sample, thread, frame, level);
        // Every distinct row once per stack: a recursive function, or one both inlined and
        // called out of line on one stack, is not counted twice.
        if (std::find(caller_keys_.begin() + range.begin, caller_keys_.end(), key) ==
            caller_keys_.end())
          caller_keys_.push_back(key);
      });
    }
    range.end = static_cast<uint32_t>(caller_keys_.size());
    callers_.push_back(range);
  }
  const SampleFrames::Frame first_at = frames_.FrameAt(
      sample.pid, frames_.Locate(sample.pid, split.has_leaf ? split.leaf : sample.ip));
  const ResolvedFrame& first = *first_at.frame;
  const KeyRange callers_range = callers_[stack.callers];
  stack.first.begin = static_cast<uint32_t>(first_keys_.size());
  attribution_.ForEachLevel(first_at.inlined_count, [&](uint32_t level) {
    if (!Keeps(first, level)) return;
    const uint32_t key = KeyOf(sample, thread, first, level);
    if (std::find(caller_keys_.begin() + callers_range.begin,
                  caller_keys_.begin() + callers_range.end,
                  key) == caller_keys_.begin() + callers_range.end &&
        std::find(first_keys_.begin() + stack.first.begin, first_keys_.end(), key) ==
            first_keys_.end())
      first_keys_.push_back(key);
  });
  stack.first.end = static_cast<uint32_t>(first_keys_.size());
  // A short user stack's cause, once per distinct stack rather than per sample: on this thread,
  // off the tally's, which is a report's longest.
  stack.shape = census_.ShapeOf(sample, space());
  stack_keys_.push_back(stack);
}

void StackRowResolver::OnSamplesAhead(std::span<const Sample> samples) {
  // What OnSample asks first of each: the leaf (by its ip) and the first frame (the callchain's
  // first address, the same one unless the chain says otherwise). Only addresses whose frame
  // is the same whichever process asks: the frame cache is not keyed by process.
  lookups_.clear();
  auto ask = [&](uint32_t pid, uint64_t address) {
    const SampleFrames::Location location = frames_.Locate(pid, address);
    if (NamedAlikeInEveryProcess(location.mapping, address)) lookups_.push_back({pid, location});
  };
  for (const Sample& sample : samples) {
    ask(sample.pid, sample.ip);
    const SplitStack split = SplitLeaf(sample);
    if (split.has_leaf && split.leaf != sample.ip) ask(sample.pid, split.leaf);
  }
  frames_.Resolve(lookups_);
}

ReportTableBuilder::ReportTableBuilder(std::vector<EventDesc> events, FrameResolver& resolver,
                                       std::vector<SortKey> sort, SampleSelector selector,
                                       InlineMode inline_mode)
    : selector_(selector),
      tally_(events.size()),
      rows_(resolver, sort, selector, inline_mode),
      rhythm_(events),
      clock_reads_(events) {
  table_.events = std::move(events);
  table_.sort = std::move(sort);
  table_.inline_mode = inline_mode;
  table_.total_period.assign(table_.events.size(), 0);
  table_.total_samples.assign(table_.events.size(), 0);
  table_.throttles.assign(table_.events.size(), 0);
  group_of_leader_.assign(table_.events.size(), -1);
  for (ReadGroup& group : ReadGroupsOf(table_.events)) {
    const EventDesc& leader = table_.events[group.leader];
    group_of_leader_[group.leader] = static_cast<int>(table_.groups.size());
    attributors_.push_back(
        std::make_unique<WindowAttributor>(group.members.size(), leader.hf_sample_period));
    table_.groups.push_back(std::move(group));
  }
  // A group member's event sampled on its own (record samples each member beside the group)
  // shows, by its samples' rows, work that a window credited to another row stepped over.
  interloper_slots_.assign(table_.events.size(), {});
  for (size_t e = 0; e < table_.events.size(); ++e) {
    if (group_of_leader_[e] >= 0 || !table_.IsSampled(e)) continue;
    const std::string name = FormulaEventName(table_.events[e].name);
    for (size_t g = 0; g < table_.groups.size(); ++g)
      for (size_t m = 0; m < table_.groups[g].members.size(); ++m) {
        const uint32_t member = table_.groups[g].members[m];
        if (member != e && member < table_.events.size() &&
            FormulaEventName(table_.events[member].name) == name)
          interloper_slots_[e].push_back({g, m});
      }
  }
  // Read groups credit each sample's window to its row as it comes; without them the rows of
  // the stacks are only needed at Finish. The stack-row thread may fall far behind: early in a
  // profile most stacks are new and it is the slower of the two, later few are and it idles,
  // so it is given room for tens of thousands of first samples (256 batches of 256, measured:
  // 16 kept the tally waiting, 1.24x the time with 64) rather than stalling the tally.
  if (attributors_.empty())
    rows_thread_ = std::make_unique<BackgroundReplay>(rows_, /*batch_records=*/256,
                                                      /*batches=*/256);
}

const ReportTableBuilder::Thread& ReportTableBuilder::ThreadOf(const Sample& sample) {
  auto [thread, inserted] = threads_.Get(sample);
  if (!inserted) return thread;
  const std::string comm = space().ThreadName(sample.pid, sample.tid);
  thread.matches = selector_.ThreadMatches(sample, comm);
  thread.part = thread_parts_
                    .try_emplace(ThreadPart(table_.sort, sample, comm),
                                 static_cast<uint32_t>(thread_parts_.size()))
                    .first->second;
  return thread;
}

ReportRow& ReportTableBuilder::RowOf(uint32_t key) {
  if (row_of_key_[key] < 0) {
    row_of_key_[key] = static_cast<int64_t>(table_.rows.size());
    ReportRow row;
    row.keys = rows_.keys()[key].values;
    const size_t n = table_.events.size();
    row.self_period.assign(n, 0);
    row.self_samples.assign(n, 0);
    row.total_period.assign(n, 0);
    row.total_samples.assign(n, 0);
    row.groups.resize(table_.groups.size());
    for (size_t g = 0; g < table_.groups.size(); ++g) {
      const size_t members = table_.groups[g].members.size();
      row.groups[g].deltas.assign(members, 0);
      row.groups[g].products.assign(members * members, 0);
    }
    table_.rows.push_back(std::move(row));
  }
  return table_.rows[static_cast<size_t>(row_of_key_[key])];
}

void ReportTableBuilder::OnMmap(const MmapRecord& r) {
  hinted_.Forget();
  ProcessTrackingVisitor::OnMmap(r);
  ToRows().OnMmap(r);
}

void ReportTableBuilder::OnComm(const CommRecord& r) {
  hinted_.Forget();
  ProcessTrackingVisitor::OnComm(r);
  ToRows().OnComm(r);
}

void ReportTableBuilder::OnTask(const TaskRecord& r) {
  hinted_.Forget();
  ProcessTrackingVisitor::OnTask(r);
  ToRows().OnTask(r);
}

void ReportTableBuilder::OnSampleAhead(const Sample& sample) {
  // Only for a thread already known: the hint must not change what the tally computes.
  const Thread* thread = threads_.Find(sample);
  if (!thread || !thread->matches) return;
  const StackInterner::Key key =
      StackTally::KeyOf(sample, thread->part, space().GenerationOf(sample.pid));
  tally_.Prefetch(key);
  hinted_.Hinted(sample, key);
}

void ReportTableBuilder::OnSample(const Sample& sample) {
  StackInterner::Key key;
  const bool hinted = hinted_.Visit(sample, &key);
  if (sample.event >= table_.events.size()) return;
  if (!selector_.InTimeRange(sample)) {
    ++table_.samples_outside_time;
    return;
  }
  const size_t e = sample.event;
  table_.total_period[e] += sample.period;
  table_.total_samples[e] += 1;
  if (!sample.callchain.empty()) table_.has_callchains = true;
  if (clock_reads_.any()) clock_reads_.Add(sample);
  const Thread& thread = ThreadOf(sample);
  if (!thread.matches) {
    ++table_.samples_filtered;
    rhythm_.Break(sample);
    // Windows are credited by row over every sample in the time range, filtered or not: a
    // filtered-out sample between two samples of one row still ends a window.
    if (group_of_leader_[e] >= 0)
      attributors_[static_cast<size_t>(group_of_leader_[e])]->Add(
          sample, rows_.keys()[rows_.LeafKey(sample)].joined);
    for (const auto& [g, member] : interloper_slots_[e])
      attributors_[g]->AddInterloper(sample, rows_.keys()[rows_.LeafKey(sample)].joined, member,
                                     sample.period);
    return;
  }
  auto [stack, first] = hinted ? tally_.Add(sample, key)
                               : tally_.Add(sample, thread.part, space().GenerationOf(sample.pid));
  if (first) OnSampleWithChainFor(ToRows(), sample, completed_);
  if (rhythm_.Watches(e))
    rhythm_.Add(sample, stack);
  else if (rhythm_.watches_any())
    rhythm_.AddOther(sample, stack);
  if (group_of_leader_[e] >= 0)  // rows_ is in line
    attributors_[static_cast<size_t>(group_of_leader_[e])]->Add(
        sample, rows_.keys()[rows_.stacks()[stack].leaf].joined);
  for (const auto& [g, member] : interloper_slots_[e])
    attributors_[g]->AddInterloper(sample, rows_.keys()[rows_.stacks()[stack].leaf].joined, member,
                                   sample.period);
}

// A lost record stands for samples that never arrived: a group's next window would span them
// (and whatever ran meanwhile), so every group's next window is discarded, as after a throttle.
void ReportTableBuilder::OnLost(const LostRecord& r) {
  table_.lost += r.lost;
  for (auto& attributor : attributors_) attributor->Interrupt();
  clock_reads_.Interrupt();
}

void ReportTableBuilder::OnThrottle(const ThrottleRecord& r) {
  if (r.throttled && r.event < table_.throttles.size()) ++table_.throttles[r.event];
  if (r.event < group_of_leader_.size() && group_of_leader_[r.event] >= 0)
    attributors_[static_cast<size_t>(group_of_leader_[r.event])]->Interrupt();
  clock_reads_.Interrupt(r.event);
}

template <typename Visit>
void ReportTableBuilder::ForEachTotalKey(const StackRowResolver::StackKeys& stack, Visit visit) {
  for (uint32_t k = stack.first.begin; k < stack.first.end; ++k) visit(rows_.first_keys()[k]);
  const StackRowResolver::KeyRange& callers = rows_.callers()[stack.callers];
  for (uint32_t k = callers.begin; k < callers.end; ++k) visit(rows_.caller_keys()[k]);
}

void ReportTableBuilder::CountClockRhythm() {
  const std::vector<StackRowResolver::StackKeys>& stacks = rows_.stacks();
  ClockRhythm::Result found = rhythm_.Find([&](uint32_t stack) { return stacks[stack].leaf; });
  table_.clock_rhythms = found.findings;
  const auto count_of = [&](uint32_t key, uint32_t event) -> ClockRhythmCount& {
    return CountOfEvent(RowOf(key).clock_rhythm, event);
  };
  for (size_t f = 0; f < found.findings.size(); ++f) {
    const uint32_t event = found.findings[f].event;
    for (const auto& stack_counts : found.stacks[f]) {
      const uint32_t s = stack_counts.first;
      const ClockRhythm::StackCounts& counts = stack_counts.second;
      const StackRowResolver::StackKeys& stack = stacks[s];
      if (stack.leaf_matches) count_of(stack.leaf, event).AddSelf(counts);
      ForEachTotalKey(stack, [&](uint32_t key) { count_of(key, event).AddTotal(counts); });
    }
    // Where the loop leaves a row: the rows of one sample that the next one's lacks.
    std::vector<uint32_t> to_rows;
    for (const auto& step_times : found.steps[f]) {
      const auto& step = step_times.first;
      const uint64_t times = step_times.second;
      const StackRowResolver::StackKeys& from = stacks[step.first];
      const StackRowResolver::StackKeys& to = stacks[step.second];
      if (from.leaf_matches && (!to.leaf_matches || from.leaf != to.leaf))
        count_of(from.leaf, event).self_exits += times;
      to_rows.clear();
      ForEachTotalKey(to, [&](uint32_t key) { to_rows.push_back(key); });
      ForEachTotalKey(from, [&](uint32_t key) {
        if (std::find(to_rows.begin(), to_rows.end(), key) == to_rows.end())
          count_of(key, event).total_exits += times;
      });
    }
    // Where the other events' samples show the thread entering a row: the rows of the second
    // sample that the first's lacks.
    // The first's rows are marked with the pair's number, so that each of the second's is
    // looked up once, however deep the stacks (the clock's pairs are most of the samples').
    std::vector<uint32_t> marked_in(rows_.keys().size(), 0);
    uint32_t pair = 0;
    const auto count_entries = [&](const auto& steps, uint64_t ClockRhythmCount::*self,
                                   uint64_t ClockRhythmCount::*total) {
      for (const auto& step_times : steps) {
        const StackRowResolver::StackKeys& from = stacks[step_times.first.first];
        const StackRowResolver::StackKeys& to = stacks[step_times.first.second];
        if (to.leaf_matches && (!from.leaf_matches || from.leaf != to.leaf))
          count_of(to.leaf, event).*self += step_times.second;
        ++pair;
        ForEachTotalKey(from, [&](uint32_t key) { marked_in[key] = pair; });
        ForEachTotalKey(to, [&](uint32_t key) {
          if (marked_in[key] != pair) count_of(key, event).*total += step_times.second;
        });
      }
    };
    count_entries(found.other_steps[f], &ClockRhythmCount::self_entries,
                  &ClockRhythmCount::total_entries);
    // ... and the clock's own samples.
    count_entries(found.clock_steps[f], &ClockRhythmCount::self_clock_entries,
                  &ClockRhythmCount::total_clock_entries);
  }
}

ReportTable ReportTableBuilder::Finish() {
  if (rows_thread_) rows_thread_->Finish();
  row_of_key_.assign(rows_.keys().size(), -1);
  const std::vector<StackRowResolver::StackKeys>& stacks = rows_.stacks();
  const std::vector<StackRowResolver::KeyRange>& callers_of = rows_.callers();
  const std::vector<uint32_t>& caller_keys = rows_.caller_keys();
  const std::vector<uint32_t>& first_keys = rows_.first_keys();
  // Each distinct stack's tallies go to its leaf's row (self) and to every row on its chain
  // (total). Many stacks share their callers (a function sampled at several addresses, or
  // called with several leaves), so the callers' totals are summed per set of callers first and
  // credited to each set's rows once: a tenth of the additions.
  const size_t events = table_.events.size();
  std::vector<SampleCounts> by_callers(callers_of.size() * events);
  auto add_total = [&](uint32_t key, size_t e, uint64_t period, uint64_t samples) {
    ReportRow& row = RowOf(key);
    row.total_period[e] += period;
    row.total_samples[e] += samples;
  };
  ShortStackCensus& census = rows_.census();
  for (uint32_t s = 0; s < stacks.size(); ++s) {
    const StackRowResolver::StackKeys& stack = stacks[s];
    uint64_t stack_samples = 0;
    for (size_t e = 0; e < events; ++e) {
      const uint64_t samples = tally_.samples(s, e);
      if (samples == 0) continue;
      stack_samples += samples;
      const uint64_t period = tally_.period(s, e);
      if (stack.leaf_matches) {
        ReportRow& row = RowOf(stack.leaf);
        row.self_period[e] += period;
        row.self_samples[e] += samples;
      } else {
        table_.samples_filtered += samples;
      }
      by_callers[stack.callers * events + e].Add(period, samples);
      for (uint32_t k = stack.first.begin; k < stack.first.end; ++k)
        add_total(first_keys[k], e, period, samples);
    }
    census.Count(stack.shape, stack_samples);
  }
  table_.short_stacks = census.Counts();
  for (uint32_t c = 0; c < callers_of.size(); ++c)
    for (size_t e = 0; e < events; ++e) {
      const SampleCounts& counts = by_callers[c * events + e];
      if (counts.samples == 0) continue;
      for (uint32_t k = callers_of[c].begin; k < callers_of[c].end; ++k)
        add_total(caller_keys[k], e, counts.period, counts.samples);
    }
  CountClockRhythm();
  std::unordered_map<std::string, uint32_t> key_of_joined;
  if (!table_.groups.empty())
    for (uint32_t k = 0; k < rows_.keys().size(); ++k)
      key_of_joined.emplace(rows_.keys()[k].joined, k);
  for (size_t g = 0; g < table_.groups.size(); ++g) {
    const WindowAttributor& a = *attributors_[g];
    table_.groups[g].windows_credited = a.windows_credited();
    table_.groups[g].windows_discarded = a.windows_discarded();
    table_.groups[g].discarded_percent = a.discarded_percent();
    table_.groups[g].short_window = table_.events[table_.groups[g].leader].hf_sample_period;
    table_.groups[g].long_periods = a.long_periods();
    table_.groups[g].read_totals = a.read_totals();
    table_.groups[g].leader_read_before_first_samples = a.leader_read_before_first_samples();
    const uint32_t leader = table_.groups[g].leader;
    if (table_.groups[g].members.size() == 1 && clock_reads_.reads_itself(leader))
      table_.groups[g].leader_read_across_interrupts =
          static_cast<uint64_t>(clock_reads_.across_interrupts()[leader]);
    std::vector<std::string> member_names;
    for (uint32_t m : table_.groups[g].members)
      member_names.push_back(m < table_.events.size() ? table_.events[m].name : "?");
    const WindowFindings findings = DetectWindowBias(a, member_names, &RowNameOfJoinedKey);
    for (const auto& [key, counters] : a.functions()) {
      auto it = key_of_joined.find(key);
      if (it == key_of_joined.end() || row_of_key_[it->second] < 0)
        continue;  // a row the filters hide
      GroupCredit& credit = table_.rows[static_cast<size_t>(row_of_key_[it->second])].groups[g];
      credit.deltas = counters.deltas;
      credit.products = counters.products;
      credit.windows_credited = counters.windows_credited;
      credit.windows_discarded = counters.windows_discarded;
      if (auto b = findings.biases.find(key); b != findings.biases.end())
        credit.member_bias = b->second;
      if (auto b = findings.bounds.find(key); b != findings.bounds.end())
        credit.member_bound = b->second;
    }
    for (const auto& [ends, windows] : a.edges()) {
      if (ends.first == ends.second || windows.deltas.empty()) continue;
      for (const std::string* end : {&ends.first, &ends.second}) {
        auto it = key_of_joined.find(*end);
        if (it == key_of_joined.end() || row_of_key_[it->second] < 0) continue;
        GroupCredit& credit = table_.rows[static_cast<size_t>(row_of_key_[it->second])].groups[g];
        credit.edge_leader_delta += windows.deltas[0];
        credit.edge_windows += windows.windows;
      }
    }
  }
  table_.start_timestamp = selector_.start_timestamp();
  const size_t order = table_.FirstSampledEvent();
  std::stable_sort(table_.rows.begin(), table_.rows.end(),
                   [order](const ReportRow& a, const ReportRow& b) {
                     if (a.self_period[order] != b.self_period[order])
                       return a.self_period[order] > b.self_period[order];
                     if (a.total_period[order] != b.total_period[order])
                       return a.total_period[order] > b.total_period[order];
                     return a.keys < b.keys;
                   });
  return std::move(table_);
}

}  // namespace tprof
