#include "core/format/symbol_section.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <utility>

#include "core/base/absl_view.h"
#include "core/base/file_paths.h"
#include "core/format/format_spec.h"
#include "core/format/profile_reader.h"
#include "core/format/profile_writer.h"
#include "core/format/varint.h"

namespace tprof {
namespace {

constexpr uint64_t kSectionVersion = 1;
constexpr uint64_t kEntryResolved = 1;
constexpr uint64_t kFrameInlined = 1;

std::string UnresolvedName(const std::string& module, uint64_t offset) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "+0x%llx]", static_cast<unsigned long long>(offset));
  bool bracketed = module.size() >= 2 && module.front() == '[' && module.back() == ']';
  return "[" + (bracketed ? module.substr(1, module.size() - 2) : module) + buf;
}

// Strings are stored once per payload and referred to by index; index 0 is "".
class StringTable {
 public:
  StringTable() { Index(""); }
  uint64_t Index(const std::string& s) {
    auto [it, inserted] = index_.try_emplace(s, strings_.size());
    if (inserted) strings_.push_back(&it->first);
    return it->second;
  }
  void Write(ByteWriter& out) const {
    out.PutVarint(strings_.size());
    for (const std::string* s : strings_) out.PutBytes(*s);
  }

 private:
  std::unordered_map<std::string, uint64_t> index_;
  std::vector<const std::string*> strings_;
};

}  // namespace

SymbolKey SymbolKeyOf(uint32_t pid, const Mapping* mapping, uint64_t address) {
  SymbolKey key;
  if (IsKernelCode(mapping, address)) {
    key.module = "[kernel.kallsyms]";
    if (mapping) key.build_id = mapping->build_id;
    key.offset = address;
  } else if (mapping && !IsFilelessMapping(mapping->filename)) {
    key.module = mapping->filename;
    key.build_id = mapping->build_id;
    key.offset = mapping->FileOffset(address);
  } else if (pid != 0) {
    key.module = "[jit:" + std::to_string(pid) + "]";
    key.offset = address;
  } else {
    key.module = "[unknown]";
    key.offset = address;
  }
  return key;
}

SymbolTable::Module& SymbolTable::ModuleOf(const std::string& name, const std::string& build_id) {
  std::string key = name;
  key.push_back('\0');
  key += build_id;
  auto [it, inserted] = module_index_.try_emplace(std::move(key), modules_.size());
  if (inserted) modules_.push_back({name, build_id, {}, {}, {}, 0});
  return modules_[it->second];
}

void SymbolTable::Add(const SymbolKey& key, ResolvedFrame frame) {
  Module& module = ModuleOf(key.module, key.build_id);
  if (FindIn(module, key.offset)) return;  // the first entry for an address stays
  module.frames.emplace(key.offset, added_.Intern(std::move(frame)));
}

size_t SymbolTable::size() const {
  size_t entries = 0;
  for (const Module& module : modules_) entries += module.pending.size() + module.frames.size();
  return entries;
}

const ResolvedFrame* SymbolTable::Find(const SymbolKey& key) const {
  return FindAt(FindModule(key.module, key.build_id), key.offset);
}

int64_t SymbolTable::FindModule(const std::string& name, const std::string& build_id) const {
  std::string index_key = name;
  index_key.push_back('\0');
  index_key += build_id;
  auto it = module_index_.find(index_key);
  return it == module_index_.end() ? -1 : static_cast<int64_t>(it->second);
}

const ResolvedFrame* SymbolTable::FindAt(int64_t module, uint64_t offset) const {
  return module < 0 ? nullptr : FindIn(modules_[static_cast<size_t>(module)], offset);
}

bool SymbolTable::IndexBuckets(Module& module) {
  std::vector<Pending>& pending = module.pending;
  if (pending.size() < 64) return false;
  if (!module.bucket_start.empty()) return true;
  // About two entries per bucket when offsets spread evenly; where they cluster, a bucket holds
  // more and is binary-searched like the whole table was.
  const uint64_t first = pending.front().offset;
  const uint64_t span = pending.back().offset - first;
  const unsigned width = std::bit_width(span);
  const unsigned buckets_log2 = std::bit_width(pending.size() / 2);
  module.bucket_shift = width > buckets_log2 ? width - buckets_log2 : 0;
  module.bucket_start.assign((span >> module.bucket_shift) + 2, 0);
  size_t entry = 0;
  for (size_t b = 0; b < module.bucket_start.size(); ++b) {
    while (entry < pending.size() && (pending[entry].offset - first) >> module.bucket_shift < b)
      ++entry;
    module.bucket_start[b] = static_cast<uint32_t>(entry);
  }
  return true;
}

const uint32_t* SymbolTable::BucketOf(const Module& module, uint64_t offset) {
  const uint64_t first = module.pending.front().offset;
  if (offset < first || offset > module.pending.back().offset) return nullptr;
  return &module.bucket_start[(offset - first) >> module.bucket_shift];
}

std::span<SymbolTable::Pending> SymbolTable::PendingNear(Module& module, uint64_t offset) {
  if (!IndexBuckets(module)) return module.pending;
  const uint32_t* bucket = BucketOf(module, offset);
  if (!bucket) return {};
  return std::span<Pending>(module.pending).subspan(bucket[0], bucket[1] - bucket[0]);
}

SymbolTable::Pending* SymbolTable::EntryAt(std::span<Pending> near, uint64_t offset) {
  auto p = std::lower_bound(near.begin(), near.end(), offset,
                            [](const Pending& e, uint64_t o) { return e.offset < o; });
  return p != near.end() && p->offset == offset ? &*p : nullptr;
}

const ResolvedFrame* SymbolTable::AddedAt(const Module& module, uint64_t offset) {
  if (module.frames.empty()) return nullptr;
  auto f = module.frames.find(offset);
  return f == module.frames.end() ? nullptr : f->second;
}

const ResolvedFrame* SymbolTable::FindIn(Module& module, uint64_t offset) const {
  if (Pending* p = EntryAt(PendingNear(module, offset), offset)) {
    if (!p->frame) p->frame = Build(module, *p);
    return p->frame;
  }
  return AddedAt(module, offset);
}

std::string_view SymbolTable::FieldsOf(const Pending& entry) const {
  return std::string_view(payloads_[entry.payload]->bytes).substr(entry.position, entry.length);
}

void SymbolTable::FindManyAt(std::span<OffsetQuery> queries) const {
  std::vector<QueryStep>& steps = query_steps_;
  steps.assign(queries.size(), {nullptr, {}, nullptr});
  // Step 1: each query's bucket of the index, asked for.
  for (size_t i = 0; i < queries.size(); ++i) {
    OffsetQuery& q = queries[i];
    q.frame = nullptr;
    if (q.module < 0) continue;
    Module& module = modules_[static_cast<size_t>(q.module)];
    steps[i].module = &module;
    if (!IndexBuckets(module)) continue;
    if (const uint32_t* bucket = BucketOf(module, q.offset)) __builtin_prefetch(bucket);
  }
  // Step 2: the entries the bucket holds, asked for.
  for (size_t i = 0; i < queries.size(); ++i) {
    if (!steps[i].module) continue;
    steps[i].near = PendingNear(*steps[i].module, queries[i].offset);
    if (!steps[i].near.empty()) __builtin_prefetch(steps[i].near.data());
  }
  // Step 3: the entry; a built one is the answer, a pending one's fields are asked for.
  for (size_t i = 0; i < queries.size(); ++i) {
    QueryStep& step = steps[i];
    if (!step.module) continue;
    step.entry = EntryAt(step.near, queries[i].offset);
    if (!step.entry) {
      queries[i].frame = AddedAt(*step.module, queries[i].offset);
    } else if (step.entry->frame) {
      queries[i].frame = step.entry->frame;
      step.entry = nullptr;
    } else {
      __builtin_prefetch(FieldsOf(*step.entry).data());
    }
  }
  // Step 4: where the frames built so far are found by those fields, asked for.
  for (size_t i = 0; i < queries.size(); ++i) {
    const Pending* entry = steps[i].entry;
    if (entry) built_by_fields_.prefetch(std::pair{entry->payload, AbslView(FieldsOf(*entry))});
  }
  // Step 5: the pending entries built (an entry asked for twice is built once).
  for (size_t i = 0; i < queries.size(); ++i) {
    Pending* entry = steps[i].entry;
    if (!entry) continue;
    if (!entry->frame) entry->frame = Build(*steps[i].module, *entry);
    queries[i].frame = entry->frame;
  }
}

const ResolvedFrame* SymbolTable::Build(const Module& module, const Pending& entry) const {
  // Decode validated the entry's fields and string indexes, and noted where they end: equal
  // fields in one payload mean an equal frame (the build-id is the module's).
  const Payload& payload = *payloads_[entry.payload];
  const std::string_view fields = FieldsOf(entry);
  auto [it, inserted] =
      built_by_fields_.try_emplace(std::pair{entry.payload, AbslView(fields)}, nullptr);
  if (!inserted) return it->second;

  ByteReader in(fields);
  auto str = [&](uint64_t index) { return std::string(payload.strings[index]); };
  ResolvedFrame& frame = built_.emplace_back();
  frame.resolved = in.GetVarint() & kEntryResolved;
  frame.function = str(in.GetVarint());
  frame.mangled = str(in.GetVarint());
  frame.module = str(in.GetVarint());
  frame.build_id = module.build_id;
  const uint64_t frame_count = in.GetVarint();
  frame.frames.reserve(frame_count);
  for (uint64_t f = 0; f < frame_count; ++f) {
    SourceFrame source;
    source.function = str(in.GetVarint());
    source.mangled = str(in.GetVarint());
    source.file = str(in.GetVarint());
    source.line = static_cast<uint32_t>(in.GetVarint());
    source.column = static_cast<uint32_t>(in.GetVarint());
    source.inlined = in.GetVarint() & kFrameInlined;
    frame.frames.push_back(std::move(source));
  }
  it->second = &frame;
  return &frame;
}

std::vector<std::string> SymbolTable::Encode(size_t max_payload_bytes) const {
  // Entries sorted by module and offset, so offsets are written as small deltas.
  std::vector<std::pair<size_t, uint64_t>> order;
  order.reserve(size());
  for (size_t m = 0; m < modules_.size(); ++m) {
    for (const Pending& entry : modules_[m].pending) order.emplace_back(m, entry.offset);
    for (const auto& [offset, frame] : modules_[m].frames) order.emplace_back(m, offset);
  }
  std::sort(order.begin(), order.end());
  std::vector<std::string> payloads;
  size_t next = 0;
  while (next < order.size()) {
    // Each payload carries its own string and module tables and decodes on its own.
    StringTable strings;
    std::vector<size_t> module_of_payload;  // payload module index -> table module index
    std::unordered_map<size_t, uint64_t> payload_module;
    std::string body;
    ByteWriter out(body);
    size_t count = 0;
    size_t previous_module = SIZE_MAX;
    uint64_t previous_offset = 0;
    for (; next < order.size() && body.size() < max_payload_bytes; ++next, ++count) {
      auto [module_index, offset] = order[next];
      const ResolvedFrame& frame = *FindIn(modules_[module_index], offset);
      auto [it, inserted] = payload_module.try_emplace(module_index, module_of_payload.size());
      if (inserted) module_of_payload.push_back(module_index);
      if (module_index != previous_module) previous_offset = 0;
      out.PutVarint(it->second);
      out.PutVarint(offset - previous_offset);
      previous_module = module_index;
      previous_offset = offset;
      out.PutVarint(frame.resolved ? kEntryResolved : 0);
      out.PutVarint(strings.Index(frame.function));
      out.PutVarint(strings.Index(frame.mangled));
      out.PutVarint(strings.Index(frame.module));
      out.PutVarint(frame.frames.size());
      for (const SourceFrame& f : frame.frames) {
        out.PutVarint(strings.Index(f.function));
        out.PutVarint(strings.Index(f.mangled));
        out.PutVarint(strings.Index(f.file));
        out.PutVarint(f.line);
        out.PutVarint(f.column);
        out.PutVarint(f.inlined ? kFrameInlined : 0);
      }
    }
    // Module names go through the string table too, so it is complete only now.
    std::vector<uint64_t> name_index;
    for (size_t index : module_of_payload)
      name_index.push_back(strings.Index(modules_[index].name));
    std::string payload;
    ByteWriter header(payload);
    header.PutVarint(kSectionVersion);
    strings.Write(header);
    header.PutVarint(module_of_payload.size());
    for (size_t i = 0; i < module_of_payload.size(); ++i) {
      header.PutVarint(name_index[i]);
      header.PutBytes(modules_[module_of_payload[i]].build_id);
    }
    header.PutVarint(count);
    payload += body;
    payloads.push_back(std::move(payload));
  }
  return payloads;
}

Status SymbolTable::Decode(std::string_view bytes) { return Decode(std::string(bytes)); }

Status SymbolTable::Decode(std::string&& bytes) {
  auto payload = std::make_shared<Payload>();
  payload->bytes = std::move(bytes);
  ByteReader in(payload->bytes);
  const auto* base = reinterpret_cast<const uint8_t*>(payload->bytes.data());
  uint64_t version = in.GetVarint();
  if (!in.ok()) return Error("symbols section: truncated");
  if (version != kSectionVersion)
    return Error("symbols section: version " + std::to_string(version) + " is not supported");
  uint64_t string_count = in.GetCount(1);
  std::vector<std::string_view>& strings = payload->strings;
  strings.reserve(string_count);
  for (uint64_t i = 0; i < string_count && in.ok(); ++i) strings.push_back(in.GetBytes());
  bool bad_index = false;
  auto check = [&](uint64_t index) { bad_index |= index >= strings.size(); };
  uint64_t module_count = in.GetCount(2);
  std::vector<size_t> modules;  // payload module index -> modules_ index
  for (uint64_t i = 0; i < module_count && in.ok(); ++i) {
    uint64_t name = in.GetVarint();
    std::string build_id(in.GetBytes());
    if (name >= strings.size()) return Error("symbols section: malformed or truncated");
    Module& module = ModuleOf(std::string(strings[name]), build_id);
    modules.push_back(static_cast<size_t>(&module - modules_.data()));
  }
  const auto payload_index = static_cast<uint32_t>(payloads_.size());
  if (payload->bytes.size() > UINT32_MAX) return Error("symbols section: payload too large");
  // Every entry is checked now, so a corrupt payload is an error here and not at a lookup.
  // The encoder writes each module's entries together, by offset: such a run is kept in one
  // piece and added to its module in one step. The section is read before any other work of a
  // report can start, so this loop is on every report's path.
  struct Run {
    size_t module;  // modules_ index
    size_t begin, end;
    bool increasing;  // by offset, strictly
  };
  std::vector<Pending> decoded;
  std::vector<Run> runs;
  uint64_t entry_count = in.GetCount(7);
  decoded.reserve(entry_count);
  uint64_t previous_module = UINT64_MAX, previous_offset = 0;
  for (uint64_t i = 0; i < entry_count && in.ok(); ++i) {
    uint64_t module = in.GetVarint();
    if (module >= modules.size()) return Error("symbols section: bad module index");
    const uint64_t delta = in.GetVarint();
    if (module != previous_module) {
      runs.push_back({modules[module], decoded.size(), decoded.size(), true});
      previous_offset = 0;
    } else if (delta == 0) {
      runs.back().increasing = false;  // not from our encoder; still read as before
    }
    const uint64_t offset = previous_offset + delta;
    if (offset < previous_offset) runs.back().increasing = false;
    previous_module = module;
    previous_offset = offset;
    auto position = static_cast<uint32_t>(in.position() - base);
    in.GetVarint();                                     // flags
    for (int s = 0; s < 3; ++s) check(in.GetVarint());  // function, mangled, module
    uint64_t frame_count = in.GetCount(6);
    for (uint64_t f = 0; f < frame_count && in.ok(); ++f) {
      for (int s = 0; s < 3; ++s) check(in.GetVarint());  // function, mangled, file
      in.GetVarint();                                     // line
      in.GetVarint();                                     // column
      in.GetVarint();                                     // flags
    }
    const auto length = static_cast<uint32_t>(in.position() - base) - position;
    if (in.ok()) {
      decoded.push_back({offset, payload_index, position, length, nullptr});
      runs.back().end = decoded.size();
    }
  }
  if (!in.ok() || bad_index) return Error("symbols section: malformed or truncated");
  payloads_.push_back(std::move(payload));
  for (const Run& run : runs) {
    Module& module = modules_[run.module];
    module.bucket_start.clear();
    const auto first = decoded.begin() + static_cast<ptrdiff_t>(run.begin);
    const auto last = decoded.begin() + static_cast<ptrdiff_t>(run.end);
    if (first == last) continue;
    if (run.increasing && module.frames.empty() &&
        (module.pending.empty() || module.pending.back().offset < first->offset)) {
      // The usual case: the payload's only run of a new module is its entries as they are.
      if (module.pending.empty() && runs.size() == 1)
        module.pending = std::move(decoded);
      else
        module.pending.insert(module.pending.end(), first, last);
      continue;
    }
    for (auto entry = first; entry != last; ++entry) {
      if (module.pending.empty() || module.pending.back().offset < entry->offset) {
        module.pending.push_back(*entry);
        continue;
      }
      // Out of order, or an address already present: the first entry for an address stays.
      if (module.frames.count(entry->offset)) continue;
      auto at = std::lower_bound(module.pending.begin(), module.pending.end(), entry->offset,
                                 [](const Pending& e, uint64_t o) { return e.offset < o; });
      if (at != module.pending.end() && at->offset == entry->offset) continue;
      module.pending.insert(at, *entry);
    }
  }
  return Status::Ok();
}

Status WriteSymbolSection(ProfileWriter& writer, const SymbolTable& table) {
  for (const std::string& payload : table.Encode())
    TPROF_RETURN_IF_ERROR(
        writer.WriteOpaqueChunk(static_cast<uint16_t>(format::ChunkKind::kSymbols), payload));
  return Status::Ok();
}

Result<SymbolTable> ReadSymbolSection(const ProfileReader& reader) {
  auto payloads = reader.ReadChunksOfKind(static_cast<uint16_t>(format::ChunkKind::kSymbols));
  if (!payloads.ok()) return payloads.error();
  SymbolTable table;
  for (std::string& payload : *payloads) TPROF_RETURN_IF_ERROR(table.Decode(std::move(payload)));
  return table;
}

SymbolTableBuilder::SymbolTableBuilder(FrameResolver& resolver, ResolveOn where)
    : resolver_(resolver), by_module_(where == ResolveOn::kFinishByModule) {
  if (where == ResolveOn::kWorkerThread)
    worker_ = std::make_unique<BackgroundBatches<RecordBatch>>(
        [this](std::vector<RecordBatch>& batches) {
          for (const RecordBatch& batch : batches) Replay(batch);
        },
        /*batch_size=*/1);
}

SymbolTableBuilder::~SymbolTableBuilder() = default;  // worker_ goes first: it uses the rest

void SymbolTableBuilder::OnSample(const Sample& sample) {
  if (!worker_) return AddStack(sample.pid, sample.ip, sample.callchain);
  filling_.entries.push_back({RecordBatch::Kind::kSample, sample.pid, sample.ip,
                              filling_.chains.size(), sample.callchain.size()});
  filling_.chains.insert(filling_.chains.end(), sample.callchain.begin(), sample.callchain.end());
  HandOverIfFull();
}

void SymbolTableBuilder::OnMmap(const MmapRecord& record) {
  if (!worker_) return ProcessTrackingVisitor::OnMmap(record);
  Queue(RecordBatch::Kind::kMmap, filling_.mmaps, record);
}

void SymbolTableBuilder::OnComm(const CommRecord& record) {
  if (!worker_) return ProcessTrackingVisitor::OnComm(record);
  Queue(RecordBatch::Kind::kComm, filling_.comms, record);
}

void SymbolTableBuilder::OnTask(const TaskRecord& record) {
  if (!worker_) return ProcessTrackingVisitor::OnTask(record);
  Queue(RecordBatch::Kind::kTask, filling_.tasks, record);
}

template <typename RecordT>
void SymbolTableBuilder::Queue(RecordBatch::Kind kind, std::vector<RecordT>& records,
                               const RecordT& record) {
  filling_.entries.push_back({kind, 0, 0, records.size(), 0});
  records.push_back(record);
  HandOverIfFull();
}

void SymbolTableBuilder::HandOverIfFull() {
  if (filling_.entries.size() < hand_over_at_) return;
  // Small batches first, so the worker starts opening binaries at the first samples; larger
  // ones after, so that handing over (a lock and a wake-up) stays rare.
  hand_over_at_ = std::min<size_t>(hand_over_at_ * 2, 4096);
  worker_->Add(std::exchange(filling_, RecordBatch{}));
}

void SymbolTableBuilder::Replay(const RecordBatch& batch) {
  using Kind = RecordBatch::Kind;
  for (const RecordBatch::Entry& e : batch.entries) {
    switch (e.kind) {
      case Kind::kSample:
        AddStack(e.pid, e.ip, std::span(batch.chains).subspan(e.first, e.count));
        break;
      case Kind::kMmap:
        ProcessTrackingVisitor::OnMmap(batch.mmaps[e.first]);
        break;
      case Kind::kComm:
        ProcessTrackingVisitor::OnComm(batch.comms[e.first]);
        break;
      case Kind::kTask:
        ProcessTrackingVisitor::OnTask(batch.tasks[e.first]);
        break;
    }
  }
}

void SymbolTableBuilder::AddStack(uint32_t pid, uint64_t ip, std::span<const uint64_t> callchain) {
  // A repeated stack (in the same address-space generation) adds no address.
  const AddressSpace::Generation generation = space().GenerationOf(pid);
  if (!stacks_.Intern({pid, generation.process, generation.kernel, ip}, callchain).first) return;
  AddAddress(pid, ip);
  bool after_marker = true;  // the first address of a chain (or after a context) is a pc
  for (uint64_t address : callchain) {
    if (IsContextMarker(address)) {
      after_marker = true;
      continue;
    }
    AddAddress(pid, address);
    if (!after_marker && address > 0) AddAddress(pid, address - 1);
    after_marker = false;
  }
}

void SymbolTableBuilder::AddAddress(uint32_t pid, uint64_t address) {
  const Mapping* mapping = space().Find(pid, address);
  // mappings_ holds every mapping it has seen, so a pointer found there cannot have been reused
  // for a newer mapping.
  auto entry = mappings_.find(mapping);
  if (entry == mappings_.end()) {
    std::shared_ptr<const Mapping> owner = space().FindShared(pid, address);
    const bool fileless = !mapping || IsFilelessMapping(mapping->filename);
    entry = mappings_.emplace(mapping, MappingEntry{std::move(owner), fileless}).first;
  }
  // The process matters only where no file names the code.
  if (!seen_.insert({mapping, address, entry->second.fileless ? pid : 0}).second) return;
  const Request request{pid, 0, mapping, address};
  // On the worker, kernel addresses wait for Finish: their symbols may still be loading on
  // another thread (a whole kallsyms file), and meanwhile this thread can open binaries.
  if (by_module_)
    deferred_.push_back(request);
  else if (worker_ && IsKernelCode(mapping, address))
    kernel_requests_.push_back(request);
  else
    Resolve(request);
}

void SymbolTableBuilder::Resolve(const Request& request) {
  SymbolKey key = SymbolKeyOf(request.pid, request.mapping, request.address);
  if (table_.Find(key)) return;
  table_.Add(key, resolver_.ResolveInProcess(request.pid, request.mapping, request.address));
}

SymbolTable SymbolTableBuilder::Finish() {
  if (worker_) {
    worker_->Add(std::exchange(filling_, RecordBatch{}));
    worker_->Finish();  // joined: the resolver and the tables are this thread's again
  }
  distinct_addresses_ = seen_.size();
  for (const Request& request : kernel_requests_) Resolve(request);
  kernel_requests_.clear();
  ResolveByModule();
  return std::move(table_);
}

void SymbolTableBuilder::ResolveByModule() {
  if (deferred_.empty()) return;
  // The reading's tables go before the resolving, where the recorder's memory peaks (libdw's
  // tables, mapped debug files, each module's frames): every address is in deferred_ now.
  seen_ = {};
  stacks_ = StackInterner();
  // Requests grouped by what the resolver opens for them: a file (by path and build-id), the
  // kernel, or nothing (code outside files, named per process); in first-seen order within a
  // group, as they came.
  absl::flat_hash_map<std::string, uint32_t> group_of_module;
  absl::flat_hash_map<const Mapping*, uint32_t> group_of_mapping;
  auto group_of = [&](std::string module) {
    return group_of_module.try_emplace(std::move(module), group_of_module.size()).first->second;
  };
  for (Request& r : deferred_) {
    if (IsKernelCode(r.mapping, r.address)) {
      r.group = group_of(std::string("\0kernel", 7));
      continue;
    }
    auto [it, inserted] = group_of_mapping.try_emplace(r.mapping, 0);
    if (inserted)
      it->second =
          group_of(r.mapping ? r.mapping->filename + '\0' + r.mapping->build_id : std::string());
    r.group = it->second;
  }
  std::stable_sort(deferred_.begin(), deferred_.end(),
                   [](const Request& a, const Request& b) { return a.group < b.group; });
  for (size_t i = 0; i < deferred_.size(); ++i) {
    if (i > 0 && deferred_[i].group != deferred_[i - 1].group) resolver_.ReleaseModules();
    Resolve(deferred_[i]);
  }
  resolver_.ReleaseModules();
  deferred_ = {};
}

Result<size_t> EmbedSymbols(const std::string& input, const std::string& output,
                            FrameResolver& resolver) {
  auto reader = ProfileReader::OpenFile(input);
  if (!reader.ok()) return reader.error();
  auto writer = ProfileWriter::CreateFile(output, reader->metadata(), reader->events());
  if (!writer.ok()) return writer.error();
  // Copies every record and feeds the builder the same stream.
  SymbolTableBuilder builder(resolver);
  RecordCopier copy(**writer, builder);
  auto summary = reader->ReadRecords(copy);
  if (!summary.ok()) return summary.error().WithContext(input);
  if (!copy.status().ok()) return copy.status().error();
  SymbolTable table = builder.Finish();
  TPROF_RETURN_IF_ERROR(WriteSymbolSection(**writer, table));
  TPROF_RETURN_IF_ERROR(
      (*writer)->Finish({reader->metadata().duration_ns, 0, reader->recorded_unwinding()}));
  return table.size();
}

const ResolvedFrame* EmbeddedSymbolResolver::FindHeld(uint32_t pid, const Mapping* mapping,
                                                      uint64_t address) {
  if (Empty()) return fallback_ ? fallback_->FindHeld(pid, mapping, address) : nullptr;
  if (const auto query = FileOffsetQuery(mapping, address))
    return Table().FindAt(query->module, query->offset);
  return Table().Find(SymbolKeyOf(pid, mapping, address));
}

std::optional<SymbolTable::OffsetQuery> EmbeddedSymbolResolver::FileOffsetQuery(
    const Mapping* mapping, uint64_t address) {
  if (!mapping || IsKernelCode(mapping, address)) return std::nullopt;
  const MappingModule& m = ModuleOf(*mapping);
  if (m.fileless) return std::nullopt;
  return SymbolTable::OffsetQuery{m.module, mapping->FileOffset(address)};
}

const EmbeddedSymbolResolver::MappingModule& EmbeddedSymbolResolver::ModuleOf(
    const Mapping& mapping) {
  auto [it, inserted] = module_of_mapping_.try_emplace(&mapping);
  MappingModule& m = it->second;
  if (inserted || m.filename != mapping.filename || m.build_id != mapping.build_id) {
    const bool fileless = IsFilelessMapping(mapping.filename);
    m = {mapping.filename, mapping.build_id,
         fileless ? -1 : Table().FindModule(mapping.filename, mapping.build_id), fileless};
  }
  return m;
}

void EmbeddedSymbolResolver::FindHeldMany(std::span<HeldQuery> queries) {
  if (Empty()) {
    if (fallback_) return fallback_->FindHeldMany(queries);
    for (HeldQuery& q : queries) q.frame = nullptr;
    return;
  }
  offset_queries_.clear();
  batched_.clear();
  for (size_t i = 0; i < queries.size(); ++i) {
    HeldQuery& q = queries[i];
    if (const auto query = FileOffsetQuery(q.mapping, q.address)) {
      offset_queries_.push_back(*query);
      batched_.push_back(i);
    } else {
      q.frame = Table().Find(SymbolKeyOf(q.pid, q.mapping, q.address));
    }
  }
  Table().FindManyAt(offset_queries_);
  for (size_t k = 0; k < batched_.size(); ++k)
    queries[batched_[k]].frame = offset_queries_[k].frame;
}

ResolvedFrame EmbeddedSymbolResolver::ResolveInProcess(uint32_t pid, const Mapping* mapping,
                                                       uint64_t address) {
  SymbolKey key = SymbolKeyOf(pid, mapping, address);
  if (const ResolvedFrame* frame = Table().Find(key)) return *frame;
  ++misses_;
  if (fallback_) return fallback_->ResolveInProcess(pid, mapping, address);
  ResolvedFrame frame;
  frame.module = key.module.starts_with("[") ? key.module : BaseName(key.module);
  frame.build_id = key.build_id;
  frame.function = UnresolvedName(frame.module, key.offset);
  return frame;
}

Status EmbedSymbolsAndFinish(ProfileWriter& writer, const std::string& path,
                             FrameResolver& resolver, const FinishInfo& info) {
  TPROF_RETURN_IF_ERROR(writer.Flush());
  auto reader = ProfileReader::OpenFile(path + ".partial");
  if (!reader.ok()) return reader.error();
  SymbolTableBuilder builder(resolver, SymbolTableBuilder::ResolveOn::kFinishByModule);
  auto summary = reader->ReadRecords(builder, ProfileReader::Visiting::kOnThisThread);
  if (!summary.ok()) return summary.error().WithContext("reading back " + path + ".partial");
  return FinishWithSymbols(writer, builder, info);
}

void RecordCopier::OnSample(const Sample& r) {
  Keep(r.time, writer_.Write(r));
  // Most samples repeat a stack the builder has already seen, which adds no address. The
  // writer has just matched the callchain against its chunk's: a sample with the same pid, ip
  // and callchain as one shown since the last mapping, name or task record is not copied to
  // the builder at all (the builder would find it in its own table, at a hash per sample).
  const uint64_t key = writer_.last_chain_key();
  if (key == RecordEncoder::kNoChainKey) return builder_.OnSample(r);
  if (key >> 32 != shown_chunk_) {
    shown_chunk_ = key >> 32;
    shown_.clear();
  }
  const size_t id = key & 0xffffffff;
  if (id >= shown_.size()) shown_.resize(id + 1);
  Shown& shown = shown_[id];
  if (shown.epoch == epoch_ && shown.pid == r.pid && shown.ip == r.ip) return;
  shown = {epoch_, r.ip, r.pid};
  builder_.OnSample(r);
}

Status FinishWithSymbols(ProfileWriter& writer, SymbolTableBuilder& builder,
                         const FinishInfo& info) {
  TPROF_RETURN_IF_ERROR(WriteSymbolSection(writer, builder.Finish()));
  return writer.Finish(info);
}

}  // namespace tprof
