// Symbols embedded in a profile (chunk kind 16, docs/format.md section 12): the resolved frame
// of every sampled address, written at the end of recording or import, so that a report on
// another machine, or after the binaries were deleted or rebuilt, names the same functions and
// lines. Addresses are keyed by module and file offset, so every process that mapped a binary
// shares its entries whatever its load address.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"
#include "core/base/background_batches.h"
#include "core/base/error.h"
#include "core/format/profile_writer.h"
#include "core/model/address_space.h"
#include "core/model/frame_interner.h"
#include "core/model/frame_resolver.h"
#include "core/model/profile.h"
#include "core/model/stack_tally.h"

namespace tprof {

class ProfileReader;
class ProfileWriter;

// Where an address lives, independent of the process's load address.
struct SymbolKey {
  // The recorded path of the mapping; "[kernel.kallsyms]" for kernel addresses; "[jit:PID]" for
  // addresses outside any file (JIT code, named per process); "[unknown]" otherwise.
  std::string module;
  std::string build_id;  // raw bytes as recorded; empty when unknown
  uint64_t offset = 0;   // file offset for file-backed mappings, else the address itself

  bool operator==(const SymbolKey&) const = default;
};

SymbolKey SymbolKeyOf(uint32_t pid, const Mapping* mapping, uint64_t address);

class SymbolTable {
 public:
  SymbolTable() = default;
  // Movable, not copyable: the modules point at frames the table holds.
  SymbolTable(SymbolTable&&) = default;
  SymbolTable& operator=(SymbolTable&&) = default;
  SymbolTable(const SymbolTable&) = delete;
  SymbolTable& operator=(const SymbolTable&) = delete;

  void Add(const SymbolKey& key, ResolvedFrame frame);
  const ResolvedFrame* Find(const SymbolKey& key) const;
  // The same in two steps, for callers that look up many offsets of one module: its index
  // (-1 when the table has none of it), then an offset in it.
  int64_t FindModule(const std::string& name, const std::string& build_id) const;
  const ResolvedFrame* FindAt(int64_t module, uint64_t offset) const;
  // FindAt for many offsets at once. A lookup of an address not yet asked for waits for memory
  // three times in turn (its bucket of the index, the entry, the entry's fields in the
  // payload); here each step is taken for every query before the next, so the waits of a
  // batch overlap.
  struct OffsetQuery {
    int64_t module;  // FindModule's answer
    uint64_t offset;
    const ResolvedFrame* frame = nullptr;  // the answer, as FindAt's
  };
  void FindManyAt(std::span<OffsetQuery> queries) const;
  size_t size() const;

  // The section payloads (chunk kind 16): one or more, each decodable on its own and at most
  // about `max_payload_bytes` raw.
  std::vector<std::string> Encode(size_t max_payload_bytes = 16u << 20) const;
  // Adds the entries of one payload. Bounds-checked: the payload may come from a corrupt file.
  // Entries are checked and indexed here but built on first lookup: a report looks up the
  // sampled pcs, a small part of a table that holds every callchain address.
  Status Decode(std::string_view payload);
  Status Decode(std::string&& payload);  // the same, keeping the bytes rather than a copy

 private:
  struct Payload {
    std::string bytes;
    std::vector<std::string_view> strings;  // into bytes
  };
  struct Pending {  // a decoded payload's entry, built on first lookup
    uint64_t offset;
    uint32_t payload;   // index into payloads_
    uint32_t position;  // of the entry's fields after the offset, in the payload's bytes
    uint32_t length;    // of those fields
    const ResolvedFrame* frame = nullptr;  // once built
  };
  struct Module {
    std::string name, build_id;
    // By offset: the entries added, equal frames shared (decoded entries are in `pending`,
    // and those of one payload with the same fields share one frame too). Most addresses of a
    // function resolve alike, so the table holds a frame per distinct answer, not per address.
    absl::flat_hash_map<uint64_t, const ResolvedFrame*> frames;
    std::vector<Pending> pending;  // sorted by offset
    // Where to search `pending` for an offset: the entries of bucket b, a slice of the offset
    // range, start at bucket_start[b]. A report looks up hundreds of thousands of addresses in
    // tables of about as many entries, and a binary search over all of them misses the cache
    // at nearly every step. Built on the first lookup after `pending` changed; empty until then.
    std::vector<uint32_t> bucket_start;
    unsigned bucket_shift = 0;  // bucket of an offset: (offset - first) >> bucket_shift
  };
  // The entries of `module.pending` that may hold `offset` (see Module::bucket_start).
  static std::span<Pending> PendingNear(Module& module, uint64_t offset);
  // Builds `module`'s bucket index when it has none; false when it is too small for one (its
  // entries are then searched whole).
  static bool IndexBuckets(Module& module);
  // Where `offset`'s bucket starts in `module`'s index (built), or null when the offset is
  // outside the entries; the bucket ends where the next one starts.
  static const uint32_t* BucketOf(const Module& module, uint64_t offset);
  // The entry at `offset` among `near` (PendingNear's), or null.
  static Pending* EntryAt(std::span<Pending> near, uint64_t offset);
  // The frame added (not decoded) at `offset`, or null.
  static const ResolvedFrame* AddedAt(const Module& module, uint64_t offset);
  // A decoded entry's fields in its payload.
  std::string_view FieldsOf(const Pending& entry) const;
  Module& ModuleOf(const std::string& name, const std::string& build_id);
  // The entry at `offset`, built from its payload when it is pending; null when there is none.
  const ResolvedFrame* FindIn(Module& module, uint64_t offset) const;
  // A pending entry's frame: the one already built from the same fields of the same payload,
  // or a new one.
  const ResolvedFrame* Build(const Module& module, const Pending& entry) const;

  // Mutable: lookups build pending entries (single-threaded use, as every profile analysis).
  mutable std::vector<Module> modules_;
  FrameInterner added_;                      // what Module::frames point at
  mutable std::deque<ResolvedFrame> built_;  // what Pending::frame points at; never moves
  // (payload, the entry's encoded fields) -> its frame. The views point into payloads_; asked
  // once per distinct address of a report, hence absl's own view (core/base/absl_view.h).
  mutable absl::flat_hash_map<std::pair<uint32_t, absl::string_view>, const ResolvedFrame*>
      built_by_fields_;
  std::vector<std::shared_ptr<const Payload>> payloads_;
  struct QueryStep {  // FindManyAt's state of one query between its steps
    Module* module;
    std::span<Pending> near;
    Pending* entry;
  };
  mutable std::vector<QueryStep> query_steps_;
  std::unordered_map<std::string, size_t> module_index_;  // name + '\0' + build-id
};

// Writes `table` as symbols chunks. Call after the last record, before ProfileWriter::Finish.
Status WriteSymbolSection(ProfileWriter& writer, const SymbolTable& table);
// Reads every symbols chunk of a profile; an empty table when it has none.
Result<SymbolTable> ReadSymbolSection(const ProfileReader& reader);

// Collects the distinct addresses of the samples it sees (the ip, and every callchain entry:
// return addresses also minus one, the call instruction, which is what call-graph views
// resolve) and resolves each once through `resolver`. Feed it the records in order.
//
// With ResolveOn::kWorkerThread all of that happens on a thread of the builder's own: the
// caller's thread only copies what the builder needs of each record (a sample's pid, ip and
// callchain; mappings, names and tasks in full) into batches, so finding stacks and addresses,
// opening binaries and reading their DWARF overlap with reading the records. `resolver` is then
// used by that thread alone until Finish returns.
//
// With ResolveOn::kFinishByModule the addresses wait for Finish, which resolves them one
// module at a time and has the resolver release each module before opening the next
// (FrameResolver::ReleaseModules): the peak memory is the largest module's DWARF, not the sum
// of every module's. For a recorder, whose symbol step after the workload is its peak.
class SymbolTableBuilder : public ProcessTrackingVisitor {
 public:
  enum class ResolveOn { kCallerThread, kWorkerThread, kFinishByModule };
  explicit SymbolTableBuilder(FrameResolver& resolver, ResolveOn where = ResolveOn::kCallerThread);
  ~SymbolTableBuilder() override;

  void OnSample(const Sample& sample) override;
  void OnMmap(const MmapRecord& record) override;
  void OnComm(const CommRecord& record) override;
  void OnTask(const TaskRecord& record) override;

  // Valid after Finish.
  size_t distinct_addresses() const { return distinct_addresses_; }
  // Waits for the records still being handled; call once, after the last record.
  SymbolTable Finish();

 private:
  struct Request {
    uint32_t pid;
    uint32_t group = 0;      // ResolveByModule: what the resolver opens for it
    const Mapping* mapping;  // kept alive by mappings_
    uint64_t address;
  };
  struct Seen {
    const Mapping* mapping;
    uint64_t address;
    uint32_t pid;  // 0 where a file names the code: every process shares its entries
    bool operator==(const Seen&) const = default;
    template <typename H>
    friend H AbslHashValue(H h, const Seen& s) {
      return H::combine(std::move(h), s.mapping, s.address, s.pid);
    }
  };
  struct MappingEntry {
    std::shared_ptr<const Mapping> owner;  // a replaced mapping stays valid for the resolver
    bool fileless;
  };
  // Records on their way to the worker, in order. A sample's callchain is the range
  // [first, first + count) of `chains`; other records are copied whole.
  struct RecordBatch {
    enum class Kind : uint8_t { kSample, kMmap, kComm, kTask };
    struct Entry {
      Kind kind;
      uint32_t pid;
      uint64_t ip;
      size_t first, count;  // kSample: its callchain; else: the index in its vector
    };
    std::vector<Entry> entries;
    std::vector<uint64_t> chains;
    std::vector<MmapRecord> mmaps;
    std::vector<CommRecord> comms;
    std::vector<TaskRecord> tasks;
  };

  // Copies a mapping, name or task record into the batch being filled.
  template <typename RecordT>
  void Queue(RecordBatch::Kind kind, std::vector<RecordT>& records, const RecordT& record);
  void HandOverIfFull();
  void Replay(const RecordBatch& batch);  // on the worker
  void AddStack(uint32_t pid, uint64_t ip, std::span<const uint64_t> callchain);
  void AddAddress(uint32_t pid, uint64_t address);
  void Resolve(const Request& request);
  void ResolveByModule();  // the deferred requests

  FrameResolver& resolver_;
  // The building thread's (the worker's until Finish):
  StackInterner stacks_;  // a stack seen before adds no address
  absl::flat_hash_map<const Mapping*, MappingEntry> mappings_;
  absl::flat_hash_set<Seen> seen_;
  SymbolTable table_;
  std::vector<Request> kernel_requests_;  // resolved by Finish (worker mode)
  bool by_module_ = false;                // ResolveOn::kFinishByModule
  std::vector<Request> deferred_;         // resolved by Finish, module by module
  size_t distinct_addresses_ = 0;         // seen_'s size at Finish (which lets seen_ go)
  // The caller's:
  RecordBatch filling_;
  size_t hand_over_at_ = 8;  // entries; grows, so the worker starts at the first samples
  std::unique_ptr<BackgroundBatches<RecordBatch>> worker_;  // null: built on the caller's thread
};

// Rewrites the profile `input` as `output` with the symbols of every sampled address embedded
// (resolved through `resolver`, normally a Symbolizer). For profiles recorded before symbols
// were embedded, and for imports. Returns the number of entries embedded.
Result<size_t> EmbedSymbols(const std::string& input, const std::string& output,
                            FrameResolver& resolver);

// Finishes a profile being written with its symbols embedded: flushes, reads back the records
// written so far (PATH.partial), resolves every sampled address through `resolver`, writes the
// symbols chunks and the trailer. Cheaper than keeping the addresses while recording.

Status EmbedSymbolsAndFinish(ProfileWriter& writer, const std::string& path,
                             FrameResolver& resolver, const FinishInfo& info);

// Copies records to `writer` and shows `builder` those it needs, so that a profile is written
// and its symbols found in one reading of the records (an import, a rewrite that embeds
// symbols). Keeps the first write error.
class RecordCopier : public RecordVisitor {
 public:
  RecordCopier(ProfileWriter& writer, SymbolTableBuilder& builder)
      : writer_(writer), builder_(builder) {}

  void OnSample(const Sample& r) override;
  void OnMmap(const MmapRecord& r) override {
    ++epoch_;
    builder_.OnMmap(r);
    Keep(r.time, writer_.Write(r));
  }
  void OnComm(const CommRecord& r) override {
    ++epoch_;
    builder_.OnComm(r);
    Keep(r.time, writer_.Write(r));
  }
  void OnTask(const TaskRecord& r) override {
    ++epoch_;
    builder_.OnTask(r);
    Keep(r.time, writer_.Write(r));
  }
  void OnLost(const LostRecord& r) override { Keep(r.time, writer_.Write(r)); }
  void OnThrottle(const ThrottleRecord& r) override { Keep(r.time, writer_.Write(r)); }

  const Status& status() const { return status_; }
  uint64_t last_time() const { return last_time_; }  // of the records copied so far

 private:
  void Keep(uint64_t time, Status s) {
    last_time_ = std::max(last_time_, time);
    if (status_.ok() && !s.ok()) status_ = std::move(s);
  }

  // What the builder was last shown with a callchain of the writer's current chunk.
  struct Shown {
    uint64_t epoch = 0;  // 0: never
    uint64_t ip = 0;
    uint32_t pid = 0;
  };

  ProfileWriter& writer_;
  SymbolTableBuilder& builder_;
  Status status_;
  uint64_t last_time_ = 0;
  uint64_t epoch_ = 1;  // advances with every record that may change an address space
  uint64_t shown_chunk_ = UINT64_MAX;
  std::vector<Shown> shown_;  // by callchain id in that chunk
};

// Finishes a profile whose records `builder` saw as they were written: writes the symbols
// chunks and the trailer.
Status FinishWithSymbols(ProfileWriter& writer, SymbolTableBuilder& builder,
                         const FinishInfo& info);

// Resolves from an embedded table; addresses it lacks go to `fallback` (a live symbolizer)
// when given, else read "[module+0xoffset]".
class EmbeddedSymbolResolver : public FrameResolver {
 public:
  explicit EmbeddedSymbolResolver(SymbolTable table, FrameResolver* fallback = nullptr)
      : table_(std::move(table)), fallback_(fallback) {}
  // The table as it is being read on another thread: the first question waits for it. A
  // report's reading of the records need not wait for the symbols section as well.
  explicit EmbeddedSymbolResolver(std::future<SymbolTable> table, FrameResolver* fallback)
      : reading_(std::move(table)), fallback_(fallback) {}

  ResolvedFrame Resolve(const Mapping* mapping, uint64_t address) override {
    return ResolveInProcess(0, mapping, address);
  }
  ResolvedFrame ResolveInProcess(uint32_t pid, const Mapping* mapping, uint64_t address) override;
  const ResolvedFrame* FindHeld(uint32_t pid, const Mapping* mapping, uint64_t address) override;
  void FindHeldMany(std::span<HeldQuery> queries) override;

  const SymbolTable& table() const { return Table(); }
  uint64_t misses() const { return misses_; }

 private:
  // A file mapping's module in the table, found once per mapping rather than by building its
  // key at every address; and whether the mapping has no file (JIT code, keyed by address), asked
  // once per mapping too: by name, it was 5 % of a flat report's instructions, asked at every
  // address. The names are kept to notice a mapping freed and another allocated at its place.
  struct MappingModule {
    std::string filename, build_id;
    int64_t module = -1;
    bool fileless = false;
  };
  const MappingModule& ModuleOf(const Mapping& mapping);
  // The table's module and offset of an address in a file's code, looked up by file offset;
  // nullopt for kernel code, and code without a file or a mapping (looked up by SymbolKeyOf).
  std::optional<SymbolTable::OffsetQuery> FileOffsetQuery(const Mapping* mapping, uint64_t address);
  SymbolTable& Table() const {
    std::call_once(read_, [this] {
      if (reading_.valid()) table_ = reading_.get();
      empty_ = table_.size() == 0;
    });
    return table_;
  }
  // Whether the table holds nothing (a section that did not decode): the fallback then
  // answers FindHeld too, with the frames it holds, as it did when there was no table.
  bool Empty() const {
    Table();
    return empty_;
  }

  mutable std::future<SymbolTable> reading_;
  mutable std::once_flag read_;
  mutable SymbolTable table_;   // once read_
  mutable bool empty_ = false;  // once read_
  FrameResolver* fallback_;
  uint64_t misses_ = 0;
  absl::flat_hash_map<const Mapping*, MappingModule> module_of_mapping_;
  std::vector<SymbolTable::OffsetQuery> offset_queries_;  // FindHeldMany's, and which query
  std::vector<size_t> batched_;                           // each one answers
};

}  // namespace tprof
