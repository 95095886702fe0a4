// The rows of `tprof report`: samples aggregated by a perf-style sort key (sym, dso, comm, pid,
// tid, srcline, combinable), with self and total ("children") period and sample counts per
// event, and, for leader-sampled groups (PERF_SAMPLE_READ), the group-read counter deltas of the
// windows credited to each row by WindowAttributor. Sample filters (comm, pid, tid, dso, symbol,
// time range) choose what is aggregated into rows; shares stay relative to every sample in the
// time range, as perf's default `--percentage absolute`.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/analysis/clock_left_out.h"
#include "core/analysis/clock_rhythm.h"
#include "core/analysis/function_attribution.h"
#include "core/analysis/short_stack_census.h"
#include "core/analysis/window_attribution.h"
#include "core/analysis/window_bias.h"
#include "core/base/error.h"
#include "core/model/address_space.h"
#include "core/model/frame_resolver.h"
#include "core/model/profile.h"
#include "core/model/record_batch.h"
#include "core/model/stack_tally.h"

namespace tprof {

enum class SortKey { kSymbol, kDso, kComm, kPid, kTid, kSrcline };

const char* SortKeyName(SortKey key);  // "sym", "dso", ...
// "comm,dso,sym" -> keys; an unknown name is an error listing the known ones.
Result<std::vector<SortKey>> ParseSortKeys(const std::string& text);

struct SampleFilter {
  std::set<std::string> comms;  // thread/process names; empty: any
  std::set<uint32_t> pids;
  std::set<uint32_t> tids;
  std::vector<std::string> dsos;  // full module path or its file name
  std::string symbol_pattern;     // ECMAScript regex searched in the function name; empty: any
  // Seconds relative to the profile start (metadata start_timestamp, else the first sample).
  std::optional<double> time_start;
  std::optional<double> time_end;

  bool restricts_rows() const {
    return !comms.empty() || !pids.empty() || !tids.empty() || !dsos.empty() ||
           !symbol_pattern.empty();
  }
};

// A --time range as the user gave it: seconds from the profile's start ("1.5,2.0", "+1.5,+2.0",
// either end left open: "1.5,") or percents of the profile's length ("10%-20%", as perf reads it).
struct TimeRangeText {
  std::optional<double> start, end;  // seconds, or percents when `percent`
  bool percent = false;
};
// Errors do not name the option: the caller puts it before them ("--time wants START,END...").
Result<TimeRangeText> ParseTimeRange(const std::string& text);

// The range in seconds from the profile's start (SampleFilter's time_start and time_end), for a
// profile `duration_ns` long (0: its length is not recorded, which percents need). A range that
// starts after the profile's end holds no sample: an error that says so. (The errors
// name neither the option nor the text: the caller does.)
Result<std::pair<std::optional<double>, std::optional<double>>> ResolveTimeRange(
    const TimeRangeText& range, uint64_t duration_ns);

// A --time option's text parsed and resolved, for every command that takes it: each error is a
// bad request (the command line must change), one that resolving finds names the option.
Result<std::pair<std::optional<double>, std::optional<double>>> TimeRangeOption(
    const std::string& text, uint64_t duration_ns);

// Credited group-read deltas of one row for one read group (see WindowAttributor).
struct GroupCredit {
  std::vector<double> deltas;    // per member, leader first
  std::vector<double> products;  // members x members: sums of delta_i * delta_j per window
  uint64_t windows_credited = 0;
  uint64_t windows_discarded = 0;  // windows that ended in this row but started elsewhere
  // The leader's count over the whole windows with one end in this row and the other in
  // another, and how many: what happened across the row's call edges, some of it the row's.
  double edge_leader_delta = 0;
  uint64_t edge_windows = 0;
  // Per member (leader first): what makes the credited windows miss this row's true counts
  // beyond their interval (DetectWindowBias); empty when nothing was found.
  std::vector<std::vector<WindowBias>> member_bias;
  // Per member: how far its credited rate per unit of the leader may lie from the whole calls'
  // for what the call edges hold, too little to flag (WindowBounds); empty when nothing was seen.
  std::vector<double> member_bound;
};

// A leader-sampled group whose samples carry every member's running count.
struct ReadGroup {
  uint32_t leader = 0;            // event index
  std::vector<uint32_t> members;  // event indexes, leader first
  uint64_t windows_credited = 0;
  uint64_t windows_discarded = 0;
  double discarded_percent = 0;       // of all windows
  uint64_t short_window = 0;          // burst sampling in the kernel: the short period
  uint64_t long_periods = 0;          // ... and the long periods between, which are not windows
  std::vector<uint64_t> read_totals;  // per member: the last reads of every instance, summed
  // A timer clock in both modes that reads itself (a group of one): of its reads beyond its
  // samples' periods, those across a lost record or its own throttle (ClockLeftOutTime): samples
  // the kernel lost or did not take, not ticks its timer missed. 0 for every other group.
  uint64_t leader_read_across_interrupts = 0;
  // The leader's reads before each instance's first sample here, less that sample's period
  // (WindowAttributor): under a time range, the time before the range, which read_totals hold.
  uint64_t leader_read_before_first_samples = 0;
};

struct ReportRow {
  std::vector<std::string> keys;       // one per sort key, in the table's order
  std::vector<uint64_t> self_period;   // per event: samples whose leaf falls in this row
  std::vector<uint64_t> self_samples;  // per event
  std::vector<uint64_t> total_period;  // per event: samples with the row anywhere in the chain
  std::vector<uint64_t> total_samples;
  std::vector<GroupCredit> groups;  // parallel to ReportTable::groups
  // Per timer clock whose samples fell in step with a loop on some thread (ClockRhythm): how
  // many of this row's samples were looked at, and how many came from such threads. Empty for
  // most rows.
  std::vector<ClockRhythmCount> clock_rhythm;
  const ClockRhythmCount* ClockRhythmOf(uint32_t event) const {
    return OfEvent(clock_rhythm, event);
  }
};

struct ReportTable {
  std::vector<EventDesc> events;
  std::vector<SortKey> sort;
  InlineMode inline_mode = InlineMode::kInnermost;  // what the sym key names
  std::vector<ReportRow> rows;  // by self period of the first sampled event, descending
  // Per event, every sample in the time range (the denominators of the shares).
  std::vector<uint64_t> total_period;
  std::vector<uint64_t> total_samples;
  std::vector<ReadGroup> groups;
  // Timer clocks whose samples fell in step with a loop on some thread (ClockRhythm).
  std::vector<ClockRhythmFinding> clock_rhythms;
  const ClockRhythmFinding* ClockRhythmOf(uint32_t event) const {
    return OfEvent(clock_rhythms, event);
  }
  uint64_t lost = 0;
  // Per event, the times the kernel throttled its sampling (PERF_RECORD_THROTTLE): until the
  // next tick each time, the event counted on unsampled, so its samples miss those events.
  std::vector<uint64_t> throttles;
  uint64_t samples_outside_time = 0;  // skipped by the time range
  uint64_t samples_filtered = 0;      // in the time range but outside --comm/--pid/--tid/...
  bool has_callchains = false;
  uint64_t start_timestamp = 0;  // what --time is relative to
  // How many of the samples the thread and time filters keep have user stacks cut short
  // (ShortStackHint says why).
  ShortStackCounts short_stacks;

  // True for events that take samples (not read-only members of a leader-sampled group).
  bool IsSampled(size_t event) const;
  // The first sampled event: what rows are ordered by by default.
  size_t FirstSampledEvent() const;
};

// What a read group led by a timer clock says the clock's samples leave out of the time its reads
// counted, over the run (or the time range): the time in the mode it does not sample (a clock in
// one mode), or the ticks its timer missed (a clock in both modes that reads itself, a group of
// one, whose reads across lost samples or its own throttle are the samples the kernel lost or did
// not take, and are not counted here).
struct ClockReadsLeftOut {
  uint32_t clock = 0;     // event index
  double read = 0;        // its reads' total
  double left_out = 0;    // of that, beyond its samples' periods
  bool one_mode = false;  // IsClockSampledInOneMode
  // For a clock in both modes, whether left_out goes beyond a timer's usual lateness, which the
  // next tick gives back (kTimerLatenessShare); a clock in one mode always leaves its time out.
  bool BeyondLateness() const;
};
// nullopt where the group is not led by a timer clock, is led by a clock in both modes beside
// other members (its reads across lost samples are not kept apart), or its reads counted nothing.
std::optional<ClockReadsLeftOut> ClockLeftOutOfReads(const ReportTable& table,
                                                     const ReadGroup& group);

// What a builder keeps per thread, by (pid, tid), with the last thread asked of at hand: samples
// come in runs of one thread, and the hash lookup per sample (two in ReportTableBuilder) showed
// as 1 % of a flat report's samples.
template <typename Value>
class ThreadTable {
 public:
  // The thread's entry, and whether it was made by this call.
  std::pair<Value&, bool> Get(const Sample& sample) {
    const uint64_t key = uint64_t{sample.pid} << 32 | sample.tid;
    if (last_ && last_key_ == key) return {*last_, false};
    auto [it, inserted] = map_.try_emplace(key);
    // An insert may move every other entry: last_ is always the entry of the latest call.
    last_key_ = key;
    last_ = &it->second;
    return {it->second, inserted};
  }
  // The thread's entry, or null when it has none yet.
  const Value* Find(const Sample& sample) {
    const uint64_t key = uint64_t{sample.pid} << 32 | sample.tid;
    if (last_ && last_key_ == key) return last_;
    auto it = map_.find(key);
    if (it == map_.end()) return nullptr;
    last_key_ = key;
    last_ = &it->second;
    return last_;
  }
  void Clear() {
    map_.clear();
    last_ = nullptr;
  }

 private:
  absl::flat_hash_map<uint64_t, Value> map_;  // pid << 32 | tid
  uint64_t last_key_ = 0;
  Value* last_ = nullptr;
};

// The frames of a sample, leaf first: the callchain (return addresses resolved at address - 1,
// context markers dropped) or the ip alone. Resolution is cached per (mapping, address).
class SampleFrames {
 public:
  // `space`: the processes as the records so far describe them (kept current by the caller).
  SampleFrames(FrameResolver& resolver, const AddressSpace& space)
      : resolver_(resolver), space_(space) {}

  const std::vector<const ResolvedFrame*>& Chain(const Sample& sample);
  const ResolvedFrame& Leaf(const Sample& sample);
  // An address (already adjusted for return addresses) and the mapping of its process it lies
  // in: what frames are cached by.
  struct Location {
    const Mapping* mapping;
    uint64_t address;
    bool operator==(const Location&) const = default;
    template <typename H>
    friend H AbslHashValue(H h, const Location& l) {
      return H::combine(std::move(h), l.mapping, l.address);
    }
  };
  Location Locate(uint32_t pid, uint64_t address) const {
    return {space_.Find(pid, address), address};
  }
  // The frame at `address` in process `pid`.
  const ResolvedFrame& At(uint32_t pid, uint64_t address) { return At(pid, Locate(pid, address)); }
  const ResolvedFrame& At(uint32_t pid, const Location& location) {
    return *FrameAt(pid, location).frame;
  }
  // The frame and its count of inlined calls (FunctionAttribution::InlinedCount), kept beside
  // it in the cache: a new stack asks every frame for its functions, and reading the count from
  // the frame, and from the frame's first source frame, waited for memory twice per frame.
  struct Frame {
    const ResolvedFrame* frame;
    uint32_t inlined_count;
  };
  Frame FrameAt(uint32_t pid, const Location& location);
  // Starts fetching the cache entry of `location`, to be looked up with At soon after: a new
  // stack's frames are mostly new addresses, each a cache miss, and fetched together they wait
  // for memory once rather than once each.
  void Prefetch(const Location& location) const { cache_.prefetch(location); }
  // Resolves together the locations not cached yet, for FrameAt to find: a lookup in an
  // embedded symbol table waits for memory several times in turn, and the lookups of a batch
  // wait together (FrameResolver::FindHeldMany).
  struct Lookup {
    uint32_t pid;
    Location location;
  };
  void Resolve(std::span<const Lookup> lookups);

 private:
  // The cache entry of a location first asked for: `frame` when the resolver holds it, else
  // one resolved now and kept here.
  Frame Held(uint32_t pid, const Location& location, const ResolvedFrame* frame);

  FrameResolver& resolver_;
  const AddressSpace& space_;
  absl::flat_hash_map<Location, Frame> cache_;
  std::vector<std::unique_ptr<ResolvedFrame>> owned_;  // frames the resolver does not hold
  std::vector<FrameResolver::HeldQuery> queries_;      // Resolve's
  std::vector<const ResolvedFrame*> chain_;
};

// "file:line" of a frame's address, "??:0" when unknown.
std::string SourceLineOf(const ResolvedFrame& frame);

// Decides which samples and frames a report counts (shared by the table and the callers view).
class SampleSelector {
 public:
  static Result<SampleSelector> Create(const SampleFilter& filter, uint64_t start_timestamp);

  // Time range only; the first sample fixes the start when the metadata had none.
  bool InTimeRange(const Sample& sample);
  // comm/pid/tid.
  bool ThreadMatches(const Sample& sample, const std::string& comm) const;
  // dso/symbol, for one function of a frame (`function`: its name, see FunctionAttribution).
  bool FrameMatches(const ResolvedFrame& frame, const std::string& function) const;
  // Whether any dso/symbol filter is set: without one every frame matches, and a caller need
  // not look up each function's name to ask (a new stack's frames asked, one by one, showed as
  // 5 % of a report's instructions).
  bool FiltersFrames() const { return !filter_.dsos.empty() || symbol_.has_value(); }
  const SampleFilter& filter() const { return filter_; }
  uint64_t start_timestamp() const { return start_; }

 private:
  SampleFilter filter_;
  std::optional<std::regex> symbol_;
  uint64_t start_ = 0;
  bool start_known_ = false;
};

// The table's sample filters for the outputs that show whole stacks (folded stacks, flame
// graphs, exports): forwards every record, and of the samples those in the time range whose
// thread passes --comm/--pid/--tid. The row filters (--dso, --symbol) have no meaning there.
class SampleSelectingVisitor : public ForwardingVisitor {
 public:
  SampleSelectingVisitor(RecordVisitor& next, SampleSelector selector)
      : ForwardingVisitor(next), selector_(std::move(selector)) {}
  void OnSample(const Sample& sample) override {
    if (!selector_.InTimeRange(sample)) return;
    ++in_time_;
    if (!selector_.ThreadMatches(sample, space_.ThreadName(sample.pid, sample.tid))) return;
    ++kept_;
    next().OnSample(sample);
  }
  void OnComm(const CommRecord& r) override {
    space_.OnComm(r);
    next().OnComm(r);
  }
  void OnTask(const TaskRecord& r) override {
    space_.OnTask(r);
    next().OnTask(r);
  }
  uint64_t kept() const { return kept_; }
  uint64_t in_time() const { return in_time_; }  // whatever their thread
  // What the range counts from: the metadata's start, else the first sample read (0: none yet).
  uint64_t start_timestamp() const { return selector_.start_timestamp(); }

 private:
  SampleSelector selector_;
  AddressSpace space_;  // the threads' names
  uint64_t kept_ = 0, in_time_ = 0;
};

// What each distinct stack of a report counts toward: its leaf's row for Self% and, for Total%,
// the distinct rows of the functions on its chain that the filters keep (every function of each
// frame, inlined ones included, each once): its callers' (shared by every stack with the same
// callers) and its first frame's that are not already there. Resolving a stack's frames is most
// of a report's work, and it is needed once per distinct stack, so it can run on a thread of
// its own beside the tally: it is fed every mapping, name and task record in order, but of the
// samples only the first of each distinct stack, in the tally's order (its n-th sample is
// stack n).
class StackRowResolver : public ProcessTrackingVisitor {
 public:
  StackRowResolver(FrameResolver& resolver, std::vector<SortKey> sort, SampleSelector selector,
                   InlineMode inline_mode);

  // The first sample of the next stack.
  void OnSample(const Sample& sample) override;
  // The next samples, one per new stack: their first frames, mostly new addresses, are
  // resolved together.
  void OnSamplesAhead(std::span<const Sample> samples) override;
  bool takes_sample_runs() const override { return true; }
  // The key of `sample`'s leaf function (for a sample the tally skips; the caller's thread).
  uint32_t LeafKey(const Sample& sample);

  // A row key: one value per sort key, interned from a thread part and a frame part.
  struct Key {
    std::vector<std::string> values;
    std::string joined;  // values joined, as WindowAttributor names rows
  };
  struct KeyRange {
    uint32_t begin = 0, end = 0;  // into caller_keys() or first_keys()
  };
  struct StackKeys {
    uint32_t leaf = 0;
    bool leaf_matches = false;
    KeyRange first;                     // into first_keys()
    uint32_t callers = 0;               // index into callers()
    ShortStackCensus::Shape shape = 0;  // for census()
  };
  const std::vector<StackKeys>& stacks() const { return stack_keys_; }
  const std::vector<KeyRange>& callers() const { return callers_; }
  const std::vector<uint32_t>& caller_keys() const { return caller_keys_; }
  const std::vector<uint32_t>& first_keys() const { return first_keys_; }
  const std::vector<Key>& keys() const { return keys_; }
  // What Count of each stack's shape, times its samples, adds up.
  ShortStackCensus& census() { return census_; }

 private:
  void OnThreadsChanged() override { threads_.Clear(); }  // names may have changed
  struct Thread {
    std::string comm;
    uint32_t part = 0;
  };
  const Thread& ThreadOf(const Sample& sample);
  // Whether the frame filters keep the function at `level` of `frame`.
  bool Keeps(const ResolvedFrame& frame, uint32_t level) const {
    return !selector_.FiltersFrames() ||
           selector_.FrameMatches(frame, attribution_.Name(frame, level));
  }
  // The key of the function at `level` of `frame` (see FunctionAttribution).
  uint32_t KeyOf(const Sample& sample, const Thread& thread, const ResolvedFrame& frame,
                 uint32_t level);

  std::vector<SortKey> sort_;
  FunctionAttribution attribution_;
  SampleFrames frames_;
  SampleSelector selector_;            // its frame filters
  std::vector<StackKeys> stack_keys_;  // by stack id
  CallerInterner caller_ids_;
  std::vector<KeyRange> callers_;  // by caller id
  std::vector<uint32_t> caller_keys_;
  std::vector<uint32_t> first_keys_;
  ThreadTable<Thread> threads_;
  absl::flat_hash_map<std::string, uint32_t> thread_parts_;
  std::vector<SampleFrames::Lookup> lookups_;  // OnSample's and OnSamplesAhead's, reused
  // A function's part of its row keys, by (frame, level), with the key it last made and the
  // thread part that key was made with: a stack's frames are asked again and again for samples
  // of one thread, or of threads whose sort values are alike, and then the key is at hand.
  struct FramePart {
    uint32_t part = 0;
    uint32_t last_thread_part = UINT32_MAX;
    uint32_t last_key = 0;
  };
  absl::flat_hash_map<std::pair<const ResolvedFrame*, uint32_t>, FramePart> frame_parts_;
  absl::flat_hash_map<std::string, uint32_t> frame_part_ids_;
  std::string part_buffer_;                          // KeyOf's, reused
  absl::flat_hash_map<uint64_t, uint32_t> key_ids_;  // thread part << 32 | frame part
  std::vector<Key> keys_;
  ShortStackCensus census_;
};

class ReportTableBuilder : public ProcessTrackingVisitor {
 public:
  // `start_timestamp`: the profile's start on the record clock (0: the first sample's time).
  static Result<std::unique_ptr<ReportTableBuilder>> Create(
      std::vector<EventDesc> events, FrameResolver& resolver, std::vector<SortKey> sort,
      const SampleFilter& filter, uint64_t start_timestamp,
      InlineMode inline_mode = InlineMode::kInnermost);

  void OnSample(const Sample& sample) override;
  void OnSampleAhead(const Sample& sample) override;
  bool takes_sample_hints() const override { return true; }
  void OnMmap(const MmapRecord& r) override;
  void OnComm(const CommRecord& r) override;
  void OnTask(const TaskRecord& r) override;
  void OnLost(const LostRecord& r) override;
  void OnThrottle(const ThrottleRecord& r) override;
  bool has_own_threads() const override { return rows_thread_ != nullptr; }
  // Most samples only count under a stack already met: a deferred chain is decoded for a new
  // stack alone.
  bool takes_deferred_callchains() const override { return true; }

  ReportTable Finish();

 private:
  void OnThreadsChanged() override { threads_.Clear(); }  // names may have changed
  ReportTableBuilder(std::vector<EventDesc> events, FrameResolver& resolver,
                     std::vector<SortKey> sort, SampleSelector selector, InlineMode inline_mode);

  // What the tally needs of a thread: the sort keys' thread-dependent values (comm, pid, tid)
  // as one id, and whether the thread filters keep its samples.
  struct Thread {
    uint32_t part = 0;
    bool matches = true;
  };
  const Thread& ThreadOf(const Sample& sample);
  ReportRow& RowOf(uint32_t key);
  // The rows' ClockRhythmCounts and the table's findings, once every stack's rows are known.
  void CountClockRhythm();
  // Calls visit(key) for each row a stack's samples count toward in Total%.
  template <typename Visit>
  void ForEachTotalKey(const StackRowResolver::StackKeys& stack, Visit visit);
  // Where records for rows_ go: its thread, or rows_ itself when in line.
  RecordVisitor& ToRows() {
    return rows_thread_ ? static_cast<RecordVisitor&>(*rows_thread_) : rows_;
  }

  ReportTable table_;
  SampleSelector selector_;
  StackTally tally_;
  HintedStackKeys hinted_;  // the tally keys of hinted samples
  ThreadTable<Thread> threads_;
  absl::flat_hash_map<std::string, uint32_t> thread_parts_;
  StackRowResolver rows_;
  // rows_ on a thread of its own, unless read groups need each sample's row as it comes.
  std::unique_ptr<BackgroundReplay> rows_thread_;
  Sample completed_;  // a new stack's sample with its callchain completed, for rows_ in line
  std::vector<int64_t> row_of_key_;   // -1: no row yet
  std::vector<int> group_of_leader_;  // per event: index into table_.groups
  std::vector<std::unique_ptr<WindowAttributor>> attributors_;  // per read group
  // Per event sampled on its own: the (group, member slot) pairs whose member it is, by name.
  std::vector<std::vector<std::pair<size_t, size_t>>> interloper_slots_;
  ClockRhythm rhythm_;
  // The reads of clocks that read themselves, for what they held across lost samples or a
  // throttle (the same rule as the frames' and intervals').
  ClockLeftOutTime clock_reads_;
};

}  // namespace tprof
