#include "core/perfdata/perf_data_reader.h"

#include <linux/perf_event.h>
#include <zstd.h>

#include <algorithm>
#include <bit>
#include <deque>
#include <memory>

#include "core/base/version.h"
#include "core/model/event_unit.h"
#include "core/model/off_cpu_tracker.h"
#include "core/perfdata/next_sample_off_cpu.h"
#include "core/perfdata/perf_data_swap.h"
#include "core/perfdata/summed_off_cpu_times.h"
#include "core/perfdata/switch_record_off_cpu.h"

namespace tprof {
namespace {

namespace pd = perf_data;

// simpleperf's --trace-offcpu and perf's switch recordings both name the tracepoint so.
bool IsSchedSwitchTracepoint(const EventDesc& e) {
  return e.type == PERF_TYPE_TRACEPOINT && e.name.starts_with("sched:sched_switch");
}

// One COMPRESSED record expands to at most the ring buffer perf compressed from (megabytes);
// anything far larger is a corrupt or hostile input, not a profile.
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
constexpr size_t kMaxDecompressedPerRecord = 8u << 20;
#else
constexpr size_t kMaxDecompressedPerRecord = 512u << 20;
#endif

// EVENT_UPDATE payload types (tools/lib/perf/include/perf/event.h).
constexpr uint64_t kEventUpdateName = 2;

std::string At(uint64_t offset) { return "at byte offset " + std::to_string(offset); }

// Bytes that follow a record outside its declared size: perf streams tracing data and AUX
// buffers after their announcing record.
uint64_t TrailingPayload(const pd::RecordHeader& h, const uint8_t* body, size_t size,
                         pd::ByteOrder order) {
  // perf's record announces the tracing data that follows it; simpleperf's holds it.
  if (h.type == pd::kHeaderTracingData && size >= 4)
    return size >= 4 + uint64_t{order.U32(body)} ? 0 : (order.U32(body) + 7ull) & ~7ull;
  if (h.type == pd::kAuxtrace && size >= 8) return order.U64(body);
  return 0;
}

// True, with the header, when the record at `pos` in [pos, end) is sound (the hot path).
inline bool SoundHeader(const uint8_t* base, uint64_t pos, uint64_t end, pd::ByteOrder order,
                        pd::RecordHeader* h) {
  if (end - pos < pd::kRecordHeaderSize) return false;
  *h = pd::ReadRecordHeader(base + pos, order);
  return h->size >= pd::kRecordHeaderSize && h->size <= end - pos;
}

// Why SoundHeader said no.
Error HeaderError(const uint8_t* base, uint64_t pos, uint64_t end, pd::ByteOrder order) {
  if (end - pos < pd::kRecordHeaderSize)
    return Error(At(pos) + ": truncated record header (" + std::to_string(end - pos) +
                 " bytes left)");
  pd::RecordHeader h = pd::ReadRecordHeader(base + pos, order);
  if (h.size < pd::kRecordHeaderSize)
    return Error(At(pos) + ": record of type " + std::to_string(h.type) + " has size " +
                 std::to_string(h.size) + ", smaller than its own header");
  return Error(At(pos) + ": record of type " + std::to_string(h.type) + " and size " +
               std::to_string(h.size) + " runs past the end of the data (" +
               std::to_string(end - pos) + " bytes left)");
}

PerfRecordLayout LayoutOf(const PerfAttr& a) {
  PerfRecordLayout l;
  l.sample_type = a.sample_type;
  l.read_format = a.read_format;
  l.sample_id_all = a.sample_id_all();
  l.branch_hw_index = a.branch_sample_type & pd::kBranchHwIndex;
  l.regs_user_count = static_cast<uint32_t>(std::popcount(a.sample_regs_user));
  l.regs_intr_count = static_cast<uint32_t>(std::popcount(a.sample_regs_intr));
  return l;
}

// perf's modifiers for a name it has to make up: ":u", ":k", ":pp".
std::string ModifierSuffix(const PerfAttr& a) {
  std::string mods;
  bool no_user = a.flags & pd::attr::kFlagExcludeUser;
  bool no_kernel = a.flags & pd::attr::kFlagExcludeKernel;
  if (no_user != no_kernel) mods += no_user ? "k" : "u";
  mods.append((a.flags >> pd::attr::kPreciseIpShift) & 3, 'p');
  return mods.empty() ? mods : ":" + mods;
}

}  // namespace

// Delivers the records of one reader to a visitor, in perf's order.
class PerfDataRecordPump {
 public:
  // `switches`: where switch records go (--switch-events recordings read as off-CPU time);
  // null: they are skipped.
  // `file`: see PerfDataReader::ReadRecords.
  PerfDataRecordPump(const PerfDataReader& reader, RecordVisitor& visitor,
                     UserStackUnwinder* unwinder, const FileBytes* file,
                     SwitchRecordOffCpu* switches = nullptr)
      : r_(reader), visitor_(visitor), unwinder_(unwinder), file_(file), switches_(switches) {}

  Result<PerfDataReadSummary> Run() {
    // perf names the idle thread before any record does.
    CommRecord idle;
    idle.comm = "swapper";
    visitor_.OnComm(idle);
    if (unwinder_) {
      unwinder_->OnArchitecture(r_.metadata_.architecture);
      unwinder_->OnComm(idle);
    }
    const uint8_t* base = reinterpret_cast<const uint8_t*>(r_.bytes_.data());
    uint64_t pos = r_.data_begin_;
    round_start_ = released_ = r_.data_begin_;
    // Read as far as the records go: a record the file's end cuts off, or a header that makes
    // no sense, ends the reading there, and the summary says where and how much is left.
    const uint64_t declared_end = r_.truncated_ ? r_.declared_data_end_ : r_.data_end_;
    while (pos < r_.data_end_) {
      pd::RecordHeader h;
      if (!SoundHeader(base, pos, r_.data_end_, r_.order_, &h)) {
        StopAt(pos, HeaderError(base, pos, r_.data_end_, r_.order_).message(), declared_end);
        break;
      }
      const uint8_t* body = base + pos + pd::kRecordHeaderSize;
      size_t size = h.size - pd::kRecordHeaderSize;
      uint64_t extra = TrailingPayload(h, body, size, r_.order_);
      if (extra > r_.data_end_ - pos - h.size) {
        StopAt(pos, At(pos) + ": record payload runs past the end of the data", declared_end);
        break;
      }
      TPROF_RETURN_IF_ERROR(OnRecord(h, base + pos, pos, kMappedBuffer, /*nested=*/false));
      pos += h.size + extra;
    }
    if (summary_.damage.empty() && r_.truncated_)  // cut exactly between two records
      StopAt(pos, At(pos) + ": the file ends inside its data section", declared_end);
    TPROF_RETURN_IF_ERROR(Flush(UINT64_MAX));
    if (!carry_.empty() && summary_.damage.empty())
      return Error(At(carry_offset_) + ": compressed data ends inside a record (" +
                   std::to_string(carry_.size()) + " bytes left over)");
    return summary_;
  }

 private:
  static constexpr uint32_t kMappedBuffer = UINT32_MAX;

  void StopAt(uint64_t pos, std::string why, uint64_t declared_end) {
    summary_.damage = std::move(why);
    summary_.damage_offset = pos;
    summary_.bytes_not_read = declared_end > pos ? declared_end - pos : 0;
  }

  // Gives back the file's pages before `offset`, some megabytes at a time (a call per round
  // would be a system call per few kilobytes).
  void ReleaseBefore(uint64_t offset) {
    constexpr uint64_t kStep = uint64_t{16} << 20;
    if (!file_ || offset < released_ + kStep) return;
    file_->Release(r_.bytes_.data() + released_, r_.bytes_.data() + offset);
    released_ = offset;
  }

  struct Pending {
    uint64_t time;
    uint64_t seq;
    const uint8_t* record;
    uint64_t offset;
    uint32_t buffer;  // decompressed buffer that holds the record, kMappedBuffer: the input
  };

  Status OnRecord(const pd::RecordHeader& h, const uint8_t* record, uint64_t offset,
                  uint32_t buffer, bool nested) {
    const uint8_t* body = record + pd::kRecordHeaderSize;
    size_t size = h.size - pd::kRecordHeaderSize;
    if (h.type >= pd::kUserRecordStart) {
      switch (h.type) {
        case pd::kFinishedRound:
          // perf's ordered_events: deliver what is older than the previous round's newest
          // record; later records of this round may still be older than some not yet seen.
          TPROF_RETURN_IF_ERROR(Flush(next_flush_));
          next_flush_ = max_time_;
          // Every record before this round is delivered now (their times are at most the
          // flush's): their pages of the file can go.
          if (buffer == kMappedBuffer) {
            ReleaseBefore(round_start_);
            round_start_ = offset + h.size;
          }
          return Status::Ok();
        case pd::kCompressed:
        case pd::kCompressed2: {
          if (nested) return Error(At(offset) + ": compressed record inside compressed data");
          const uint8_t* data = body;
          size_t data_size = size;
          if (h.type == pd::kCompressed2) {
            if (size < 8) return Error(At(offset) + ": truncated COMPRESSED2 record");
            uint64_t declared = r_.order_.U64(body);
            if (declared > size - 8)
              return Error(At(offset) + ": COMPRESSED2 record declares " +
                           std::to_string(declared) + " bytes of data but holds " +
                           std::to_string(size - 8));
            data = body + 8;
            data_size = declared;
          }
          ++summary_.compressed_records;
          return Decompress(data, data_size, offset);
        }
        case pd::kAuxtrace:
          // Hardware trace (Arm CoreSight ETM/ETE, Intel PT, Arm SPE) that perf decodes with
          // a decoder per tracer; tprof does not, and says how much it left.
          ++summary_.aux_trace_records;
          if (size >= 8) summary_.aux_trace_bytes += r_.order_.U64(body);
          return Status::Ok();
        default:
          return Status::Ok();  // headers, features, ids: already read by Open()
      }
    }
    uint64_t time = r_.RecordTime(h.type, body, size);
    if (time == 0 || time == UINT64_MAX) return Deliver(record, offset);
    max_time_ = std::max(max_time_, time);
    pending_.push_back({time, seq_++, record, offset, buffer});
    return Status::Ok();
  }

  Status Decompress(const uint8_t* data, size_t size, uint64_t offset) {
    if (!dctx_) dctx_.reset(ZSTD_createDCtx());
    if (!dctx_) return Error("cannot create a zstd decompression context");
    auto buffer = std::make_unique<std::string>(std::move(carry_));
    carry_.clear();
    const size_t carried = buffer->size();
    ZSTD_inBuffer in{data, size, 0};
    while (true) {
      if (buffer->size() - carried >= kMaxDecompressedPerRecord)
        return Error(At(offset) + ": compressed record expands beyond " +
                     std::to_string(kMaxDecompressedPerRecord >> 20) + " MiB");
      size_t used = buffer->size();
      size_t grow = std::max<size_t>(size * 4, 1 << 16);
      grow = std::min(grow, kMaxDecompressedPerRecord - (used - carried));
      buffer->resize(used + grow);
      ZSTD_outBuffer out{buffer->data() + used, grow, 0};
      size_t ret = ZSTD_decompressStream(dctx_.get(), &out, &in);
      buffer->resize(used + out.pos);
      if (ZSTD_isError(ret))
        return Error(At(offset) + ": compressed record: " + ZSTD_getErrorName(ret));
      // Done when the input is consumed and zstd had room to spare (nothing left to flush).
      if (in.pos == in.size && out.pos < grow) break;
    }
    // Records may straddle compressed records: complete ones are handled, the rest carried.
    const uint8_t* base = reinterpret_cast<const uint8_t*>(buffer->data());
    uint32_t id = first_buffer_id_ + static_cast<uint32_t>(buffers_.size());
    std::string* kept = buffer.get();
    buffers_.push_back(std::move(buffer));
    uint64_t pos = 0, end = kept->size();
    while (end - pos >= pd::kRecordHeaderSize) {
      pd::RecordHeader h = pd::ReadRecordHeader(base + pos, r_.order_);
      if (h.size < pd::kRecordHeaderSize)
        return Error(At(offset) + ": compressed record: inner record at byte " +
                     std::to_string(pos) + " has size " + std::to_string(h.size));
      if (h.size > end - pos) break;
      TPROF_RETURN_IF_ERROR(OnRecord(h, base + pos, offset, id, /*nested=*/true));
      pos += h.size;
    }
    carry_.assign(kept->data() + pos, end - pos);
    carry_offset_ = offset;
    return Status::Ok();
  }

  Status Flush(uint64_t limit) {
    if (pending_.empty()) return Status::Ok();
    // What was left from earlier rounds is sorted already: sort the new tail and merge, so a
    // queue that keeps growing costs n log n overall, not per round.
    auto by_time = [](const Pending& a, const Pending& b) {
      return a.time != b.time ? a.time < b.time : a.seq < b.seq;
    };
    auto middle = pending_.begin() + static_cast<ptrdiff_t>(sorted_);
    SortRuns(middle, pending_.end(), by_time);
    if (middle != pending_.begin() && middle != pending_.end() && by_time(*middle, *(middle - 1)))
      std::inplace_merge(pending_.begin(), middle, pending_.end(), by_time);
    size_t n = 0;
    while (n < pending_.size() && pending_[n].time <= limit) {
      TPROF_RETURN_IF_ERROR(Deliver(pending_[n].record, pending_[n].offset));
      ++n;
    }
    pending_.erase(pending_.begin(), pending_.begin() + static_cast<ptrdiff_t>(n));
    sorted_ = pending_.size();
    ReleaseBuffers();
    return Status::Ok();
  }

  // Sorts [first, last). One CPU's records arrive in time order, so a round is a few ascending
  // runs, one per ring buffer perf drained: merging them costs n per run where a sort costs
  // n log n.
  template <typename It, typename Less>
  static void SortRuns(It first, It last, Less less) {
    constexpr size_t kMaxRuns = 16;
    std::vector<It> runs{first};
    for (It it = first; it != last && std::next(it) != last; ++it) {
      if (!less(*std::next(it), *it)) continue;
      if (runs.size() == kMaxRuns) return std::sort(first, last, less);
      runs.push_back(std::next(it));
    }
    runs.push_back(last);
    // Merge neighbours pairwise until one run is left.
    while (runs.size() > 2) {
      std::vector<It> merged;
      for (size_t i = 0; i + 1 < runs.size(); i += 2) {
        merged.push_back(runs[i]);
        if (i + 2 < runs.size()) std::inplace_merge(runs[i], runs[i + 1], runs[i + 2], less);
      }
      merged.push_back(last);
      runs = std::move(merged);
    }
  }

  // Frees decompressed buffers that no pending record points into any more.
  void ReleaseBuffers() {
    uint32_t oldest = first_buffer_id_ + static_cast<uint32_t>(buffers_.size());
    for (const Pending& p : pending_)
      if (p.buffer != kMappedBuffer) oldest = std::min(oldest, p.buffer);
    // The newest buffer stays: the caller may still be walking it.
    while (buffers_.size() > 1 && first_buffer_id_ < oldest) {
      buffers_.pop_front();
      ++first_buffer_id_;
    }
  }

  Status Deliver(const uint8_t* record, uint64_t offset) {
    pd::RecordHeader h = pd::ReadRecordHeader(record, r_.order_);
    const uint8_t* body = record + pd::kRecordHeaderSize;
    size_t size = h.size - pd::kRecordHeaderSize;
    // A kernel record type no kernel this build knows writes: a newer kernel's, or a damaged
    // header (a flipped byte turns a sample into one). Counted and said, never dropped silently;
    // checked before its body is byte-swapped or parsed, which its type cannot say how to do.
    if (h.type == 0 || (h.type >= PERF_RECORD_MAX && h.type < pd::kUserRecordStart)) {
      ++summary_.unknown_type_records;
      if (summary_.first_unknown_type_offset == 0) summary_.first_unknown_type_offset = offset;
      return Status::Ok();
    }
    int32_t event = h.type == PERF_RECORD_SAMPLE ? r_.EventOfSample(body, size) : 0;
    if (event < 0) {
      ++summary_.unknown_id_samples;
      return Status::Ok();
    }
    const PerfDataReader::EventInfo& info = r_.infos_[static_cast<size_t>(event)];
    if (r_.order_.swapped()) {
      scratch_.assign(body, body + size);
      SwapPerfRecordBody(h.type, h.misc, scratch_.data(), size,
                         h.type == PERF_RECORD_SAMPLE ? info.layout : r_.infos_[0].layout);
      body = scratch_.data();
    }
    ++summary_.records;
    if (h.type == PERF_RECORD_AUX) ++summary_.aux_records;
    if (h.type == PERF_RECORD_SAMPLE) return DeliverSample(info, event, body, size, offset);
    Status status = ParsePerfNonSample(h.type, h.misc, body, size, r_.infos_[0].layout, &other_);
    if (!status.ok()) return status.error().WithContext(At(offset));
    using Kind = ParsedPerfRecord::Kind;
    auto event_of = [&](uint64_t id) {
      int32_t e = r_.EventOfId(id);
      return static_cast<uint32_t>(e < 0 ? 0 : e);
    };
    switch (other_.kind) {
      case Kind::kMmap:
        if (other_.mmap.build_id.empty())
          if (auto it = r_.features_.build_ids.find(other_.mmap.filename);
              it != r_.features_.build_ids.end())
            other_.mmap.build_id = it->second;
        if (unwinder_) unwinder_->OnMmap(other_.mmap);
        visitor_.OnMmap(other_.mmap);
        break;
      case Kind::kComm:
        if (unwinder_) unwinder_->OnComm(other_.comm);
        visitor_.OnComm(other_.comm);
        break;
      case Kind::kTask:
        if (unwinder_) unwinder_->OnTask(other_.task);
        visitor_.OnTask(other_.task);
        break;
      case Kind::kLost:
      case Kind::kLostSamples:
        other_.lost.event = event_of(other_.id);
        visitor_.OnLost(other_.lost);
        break;
      case Kind::kThrottle:
        other_.throttle.event = event_of(other_.id);
        visitor_.OnThrottle(other_.throttle);
        break;
      case Kind::kSwitch:
        if (switches_ && other_.sample_id.has_time) {
          switches_->OnSwitch(other_.sample_id.tid, other_.sample_id.time, other_.switch_out);
          break;
        }
        [[fallthrough]];
      case Kind::kNone:
        --summary_.records;
        ++summary_.skipped_records;
        break;
    }
    return Status::Ok();
  }

  Status DeliverSample(const PerfDataReader::EventInfo& info, int32_t event, const uint8_t* body,
                       size_t size, uint64_t offset) {
    Status status = ParsePerfSample(body, size, info.layout, &parsed_);
    if (!status.ok()) return status.error().WithContext(At(offset));
    Sample& s = parsed_.sample;
    s.event = static_cast<uint32_t>(event);
    // Without PERF_SAMPLE_PERIOD every sample stands for the attribute's fixed period.
    if (!(info.layout.sample_type & PERF_SAMPLE_PERIOD) && !info.layout.off_cpu_in_raw)
      s.period = info.attr.sample_period;
    // Every sample with user registers and a stack copy is walked (or counted as not walked):
    // kernel threads' samples carry neither, and a copy of 0 bytes is too short to walk.
    if (unwinder_ && !parsed_.regs_user.empty() &&
        (info.layout.sample_type & PERF_SAMPLE_STACK_USER)) {
      UserStackSample u;
      u.pid = s.pid;
      u.tid = s.tid;
      u.ip = s.ip;
      u.regs_abi = parsed_.regs_user_abi;
      u.regs_mask = info.attr.sample_regs_user;
      u.regs = parsed_.regs_user;
      u.stack = parsed_.stack_user;
      UnwindUserStack(u, *unwinder_, &s, &summary_.unwinding);
    } else if (!parsed_.regs_user.empty() && !(info.layout.sample_type & PERF_SAMPLE_STACK_USER)) {
      // Registers alone (`perf record --user-regs=ip`): the user pc of a kernel sample, which
      // credits the kernel work to the user function (KernelEntryCredit).
      s.user_regs_abi = parsed_.regs_user_abi;
      s.user_regs.assign(parsed_.regs_user.begin(), parsed_.regs_user.end());
    }
    if (info.attr.branch_sample_type & PERF_SAMPLE_BRANCH_CALL_STACK) StitchLbrCallStack(s);
    ++summary_.samples;
    visitor_.OnSample(s);
    return Status::Ok();
  }

  // perf record --call-graph lbr: the kernel's callchain stops at the user context (its user
  // part is the sampled ip alone), and the branch stack holds the calls still open, newest first
  // (PERF_SAMPLE_BRANCH_CALL_STACK): call site in `from`, callee in `to`. The user stack is the
  // newest callee, then every call site, as perf's resolve_lbr_callchain_sample builds it. A
  // call site stands in the chain as a return address would (call site + 1: callers are looked
  // up one byte back). The entries are calls, not the taken-branch history that streams read,
  // so they leave the branch stack.
  void StitchLbrCallStack(Sample& s) {
    auto user = std::find(s.callchain.begin(), s.callchain.end(), kContextUser);
    if (user == s.callchain.end()) return;  // kernel only: nothing to stitch
    if (s.branches.empty()) {
      ++summary_.lbr_unstitched;
      return;
    }
    s.callchain.erase(user + 1, s.callchain.end());
    s.callchain.push_back(s.branches[0].to);
    for (const BranchEntry& call : s.branches) s.callchain.push_back(call.from + 1);
    s.branches.clear();
    ++summary_.lbr_stitched;
  }

  const PerfDataReader& r_;
  RecordVisitor& visitor_;
  UserStackUnwinder* unwinder_;
  const FileBytes* file_;
  SwitchRecordOffCpu* switches_;
  PerfDataReadSummary summary_;
  std::vector<Pending> pending_;
  size_t sorted_ = 0;  // pending_[0, sorted_) is in delivery order
  uint64_t next_flush_ = 0;
  uint64_t max_time_ = 0;
  // Where the current round of records began, and how much of the file before it was given
  // back (offsets into the reader's bytes).
  uint64_t round_start_ = 0;
  uint64_t released_ = 0;
  uint64_t seq_ = 0;
  std::deque<std::unique_ptr<std::string>> buffers_;
  uint32_t first_buffer_id_ = 0;
  std::string carry_;
  uint64_t carry_offset_ = 0;
  std::unique_ptr<ZSTD_DCtx, decltype(&ZSTD_freeDCtx)> dctx_{nullptr, &ZSTD_freeDCtx};
  ParsedPerfSample parsed_;
  ParsedPerfRecord other_;
  std::vector<uint8_t> scratch_;
};

bool PerfDataReader::LooksLikePerfData(std::string_view first_bytes) {
  if (first_bytes.size() < 8) return false;
  uint64_t magic;
  std::memcpy(&magic, first_bytes.data(), 8);
  return magic == pd::kMagic || magic == pd::kMagicSwapped;
}

Result<PerfDataReader> PerfDataReader::Open(std::string_view bytes) {
  if (!LooksLikePerfData(bytes)) return Error("not a perf.data file (no PERFILE2 magic)");
  if (bytes.size() < pd::kPipeHeaderSize) return Error(At(8) + ": truncated perf.data header");
  PerfDataReader reader;
  reader.bytes_ = bytes;
  uint64_t magic;
  std::memcpy(&magic, bytes.data(), 8);
  reader.order_ = pd::ByteOrder(magic == pd::kMagicSwapped);
  uint64_t header_size = reader.order_.U64(reinterpret_cast<const uint8_t*>(bytes.data()) + 8);
  reader.pipe_mode_ = header_size == pd::kPipeHeaderSize;
  TPROF_RETURN_IF_ERROR(reader.pipe_mode_ ? reader.ReadPipeHeader() : reader.ReadFileHeader());
  TPROF_RETURN_IF_ERROR(reader.ScanInBandHeaders());
  TPROF_RETURN_IF_ERROR(reader.Finalize());
  return reader;
}

Status PerfDataReader::ReadPipeHeader() {
  data_begin_ = pd::kPipeHeaderSize;
  data_end_ = bytes_.size();
  return Status::Ok();
}

Status PerfDataReader::ReadFileHeader() {
  const uint8_t* base = reinterpret_cast<const uint8_t*>(bytes_.data());
  const uint64_t file_size = bytes_.size();
  uint64_t header_size = order_.U64(base + 8);
  if (header_size < pd::kFileHeaderMinSize || file_size < pd::kFileHeaderMinSize)
    return Error(At(8) + ": perf.data header of " + std::to_string(header_size) +
                 " bytes in a file of " + std::to_string(file_size) + " (need 104)");
  uint64_t attr_entry_size = order_.U64(base + 16);
  uint64_t attrs_offset = order_.U64(base + 24), attrs_size = order_.U64(base + 32);
  uint64_t data_offset = order_.U64(base + 40), data_size = order_.U64(base + 48);
  auto in_file = [&](uint64_t off, uint64_t size) {
    return off <= file_size && size <= file_size - off;
  };
  // A file cut short ends inside its data section: what is there is read (Run() stops at the
  // record the end cuts), and the features, which follow the data, are lost.
  const uint64_t data_end = data_offset + data_size;
  if (data_offset > file_size || data_end < data_offset)
    return Error(At(40) + ": data section [" + std::to_string(data_offset) + ", +" +
                 std::to_string(data_size) + ") lies outside the " + std::to_string(file_size) +
                 "-byte file (truncated?)");
  truncated_ = data_end > file_size;
  declared_data_end_ = data_end;
  data_begin_ = data_offset;
  data_end_ = std::min(data_end, file_size);

  // Attributes: each entry is an attribute followed by the file section of its ids.
  if (attr_entry_size < pd::attr::kSizeVer0 + 16 || !in_file(attrs_offset, attrs_size))
    return Error(At(16) + ": bad attribute section (entry size " + std::to_string(attr_entry_size) +
                 ", " + std::to_string(attrs_size) + " bytes at offset " +
                 std::to_string(attrs_offset) + ")");
  // Counted rather than compared with an end offset: a huge entry size must not wrap around.
  const uint64_t attr_count = attrs_size / attr_entry_size;
  for (uint64_t i = 0; i < attr_count; ++i) {
    const uint64_t off = attrs_offset + i * attr_entry_size;
    std::string_view entry = bytes_.substr(off, attr_entry_size);
    // The ids section follows the attribute's own size, which may differ from the stride.
    uint64_t attr_size = PerfAttrSize(entry, order_);
    if (attr_size + 16 > attr_entry_size) attr_size = attr_entry_size - 16;
    uint64_t ids_offset = order_.U64(base + off + attr_size);
    uint64_t ids_size = order_.U64(base + off + attr_size + 8);
    if (!in_file(ids_offset, ids_size))
      return Error(At(off + attr_size) + ": event ids outside the file");
    std::vector<uint64_t> ids(ids_size / 8);
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = order_.U64(base + ids_offset + 8 * i);
    TPROF_RETURN_IF_ERROR(AddAttr(entry.substr(0, attr_size), ids));
  }

  // Feature sections: one {offset, size} per set bit, right after the data.
  if (truncated_) return Status::Ok();
  uint64_t table = data_end_;
  for (uint32_t feature = 0; feature < pd::kFeatBits; ++feature) {
    uint64_t word = order_.U64(base + 72 + 8 * (feature / 64));
    if (!(word >> (feature % 64) & 1)) continue;
    // A file cut among its feature sections keeps its samples whole: the features from the
    // cut on are missing, and the source says so.
    if (!in_file(table, 16)) {
      features_cut_at_ = table;
      break;
    }
    uint64_t off = order_.U64(base + table), size = order_.U64(base + table + 8);
    table += 16;
    if (!in_file(off, size)) {  // simpleperf writes the sections' bytes after the table
      features_cut_at_ = std::min(off, file_size);
      break;
    }
    Status status = ParsePerfFeature(feature, bytes_.substr(off, size), order_, &features_);
    if (!status.ok()) return status.error().WithContext(At(off));
  }
  return Status::Ok();
}

Status PerfDataReader::ScanInBandHeaders() {
  const uint8_t* base = reinterpret_cast<const uint8_t*>(bytes_.data());
  uint64_t pos = data_begin_;
  while (pos < data_end_) {
    pd::RecordHeader header;
    // Damage (or the file's end) before the first sample: reading the records stops there too
    // and says where; the headers before it are what there is.
    if (!SoundHeader(base, pos, data_end_, order_, &header)) break;
    // In file mode the attributes are in the header and perf writes ID_INDEX before any
    // sample: the scan can stop at the first one. Pipe mode may send headers at any point.
    if (!pipe_mode_ && header.type == PERF_RECORD_SAMPLE) break;
    const pd::RecordHeader* h = &header;
    const uint8_t* body = base + pos + pd::kRecordHeaderSize;
    size_t size = h->size - pd::kRecordHeaderSize;
    std::string_view body_view(reinterpret_cast<const char*>(body), size);
    switch (h->type) {
      case pd::kHeaderAttr: {
        uint32_t attr_size = PerfAttrSize(body_view, order_);
        if (attr_size > size || attr_size < 8)
          return Error(At(pos) + ": HEADER_ATTR record with attribute size " +
                       std::to_string(attr_size) + " in a " + std::to_string(size) + "-byte body");
        std::vector<uint64_t> ids((size - attr_size) / 8);
        for (size_t i = 0; i < ids.size(); ++i) ids[i] = order_.U64(body + attr_size + 8 * i);
        TPROF_RETURN_IF_ERROR(AddAttr(body_view.substr(0, attr_size), ids));
        break;
      }
      case pd::kHeaderFeature: {
        if (size < 8) return Error(At(pos) + ": truncated HEADER_FEATURE record");
        uint64_t feature = order_.U64(body);
        if (feature < pd::kFeatBits) {
          Status status = ParsePerfFeature(static_cast<uint32_t>(feature), body_view.substr(8),
                                           order_, &features_);
          if (!status.ok()) return status.error().WithContext(At(pos));
        }
        break;
      }
      case pd::kHeaderBuildId: {
        Status status = ParsePerfBuildIdEvent(h->misc, body_view, order_, &features_);
        if (!status.ok()) return status.error().WithContext(At(pos));
        break;
      }
      case pd::kHeaderTracingData: {
        if (size < 4) return Error(At(pos) + ": truncated HEADER_TRACING_DATA record");
        const uint64_t length = order_.U32(body);
        std::string_view data;
        if (size >= 4 + length) {
          data = body_view.substr(4, length);
        } else if (length <= data_end_ - pos - h->size) {
          data = std::string_view(reinterpret_cast<const char*>(base + pos + h->size), length);
        }
        ParseTracingData(data, &features_);
        break;
      }
      case pd::kEventUpdate: {
        if (size >= 16 && order_.U64(body) == kEventUpdateName) {
          std::string_view name = body_view.substr(16);
          names_by_id_[order_.U64(body + 8)] = std::string(name.substr(0, name.find('\0')));
        }
        break;
      }
      case pd::kIdIndex: {
        if (size < 8) return Error(At(pos) + ": truncated ID_INDEX record");
        uint64_t nr = order_.U64(body);
        if (nr > (size - 8) / 32)
          return Error(At(pos) + ": ID_INDEX record lists " + std::to_string(nr) + " ids in " +
                       std::to_string(size) + " bytes");
        for (uint64_t i = 0; i < nr; ++i) {
          uint64_t id = order_.U64(body + 8 + 32 * i);
          uint64_t idx = order_.U64(body + 16 + 32 * i);
          if (idx < infos_.size()) AddId(id, static_cast<uint32_t>(idx));
        }
        break;
      }
      default:
        break;
    }
    uint64_t extra = TrailingPayload(*h, body, size, order_);
    if (extra > data_end_ - pos - h->size)
      return Error(At(pos) + ": record payload runs past the end of the data");
    pos += h->size + extra;
  }
  return Status::Ok();
}

Status PerfDataReader::AddAttr(std::string_view attr_bytes, const std::vector<uint64_t>& ids) {
  // An attribute whose ids are all known already is a repeat (pipe mode sends each once, but
  // a concatenated stream may not).
  if (!ids.empty() &&
      std::all_of(ids.begin(), ids.end(), [&](uint64_t id) { return id_to_event_.count(id) > 0; }))
    return Status::Ok();
  if (infos_.size() >= 4096) return Error("more than 4096 event attributes");
  EventInfo info;
  info.attr = ParsePerfAttr(attr_bytes, order_);
  info.layout = LayoutOf(info.attr);
  uint32_t index = static_cast<uint32_t>(infos_.size());
  infos_.push_back(std::move(info));
  for (uint64_t id : ids) AddId(id, index);
  return Status::Ok();
}

void PerfDataReader::AddId(uint64_t id, uint32_t event) { id_to_event_.emplace(id, event); }

Status PerfDataReader::Finalize() {
  if (infos_.empty()) return Error("perf.data has no event attributes");
  // Names: EVENT_DESC lists the events in attribute order; EVENT_UPDATE names them by id.
  const auto& desc = features_.event_desc;
  for (size_t i = 0; i < infos_.size(); ++i) {
    EventInfo& info = infos_[i];
    if (desc.size() == infos_.size()) info.name = desc[i].name;
    for (const PerfEventDescEntry& d : desc)
      for (uint64_t id : d.ids)
        if (info.name.empty() && EventOfId(id) == static_cast<int32_t>(i)) info.name = d.name;
    if (info.name.empty())
      for (const auto& [id, name] : names_by_id_)
        if (EventOfId(id) == static_cast<int32_t>(i)) info.name = name;
    if (info.name.empty() && info.attr.type == PERF_TYPE_TRACEPOINT) {
      auto it = features_.tracepoint_names.find(info.attr.config);
      if (it != features_.tracepoint_names.end())
        info.name = it->second + ModifierSuffix(info.attr);
    }
    if (info.name.empty()) {
      const std::string name = SimpleperfEventName(features_, info.attr.type, info.attr.config);
      if (!name.empty()) info.name = name + ModifierSuffix(info.attr);
    }
  }
  for (size_t i = 0; i < infos_.size(); ++i) {
    const PerfAttr& a = infos_[i].attr;
    EventDesc e;
    e.name = infos_[i].name.empty() ? DefaultPerfEventName(a) + ModifierSuffix(a) : infos_[i].name;
    e.type = a.type;
    e.config = a.config;
    e.config1 = a.config1;
    e.config2 = a.config2;
    e.use_frequency = a.freq();
    e.period_or_frequency = a.sample_period;
    e.sample_type = a.sample_type;
    e.read_format = a.read_format;
    e.branch_sample_type = a.branch_sample_type;
    e.exclude_user = a.flags & pd::attr::kFlagExcludeUser;
    e.exclude_kernel = a.flags & pd::attr::kFlagExcludeKernel;
    e.exclude_callchain_user = a.flags & pd::attr::kFlagExcludeCallchainUser;
    e.precise_ip = static_cast<uint32_t>((a.flags >> pd::attr::kPreciseIpShift) & 3);
    // --call-graph dwarf: what each sample copied, so that readers know the stacks came from
    // copies (report's short-stack note is not for them).
    e.sample_regs_user = a.sample_regs_user;
    e.sample_stack_user = a.sample_stack_user;
    events_.push_back(std::move(e));
  }
  // simpleperf --trace-offcpu: its sched_switch samples are off-CPU intervals (NextSampleOffCpu),
  // read as tprof's own off-cpu event so that every view weighs them in time.
  auto trace_offcpu = features_.simpleperf_meta.find("trace_offcpu");
  if (trace_offcpu != features_.simpleperf_meta.end() && trace_offcpu->second == "true") {
    for (size_t i = 0; i < events_.size(); ++i) {
      EventDesc& e = events_[i];
      if (!IsSchedSwitchTracepoint(e)) continue;
      e = OffCpuEventDesc(e);
      e.type = PERF_TYPE_SOFTWARE;
      off_cpu_event_ = static_cast<int32_t>(i);
      break;
    }
  }
  // perf record --off-cpu (BPF, perf 5.19 on): after recording, one sample of "offcpu-time" per
  // thread and user stack, its period the thread's off-CPU nanoseconds there summed over the
  // run, stamped after every real record (SummedOffCpuTimes). Since perf's 2025 rework the
  // samples carry their thread, time and stack in their BPF output data (off_cpu_in_raw), and
  // waits longer than perf's --off-cpu-thresh come during the run as one sample each, stamped
  // when the thread ran again: each an interval, read as such.
  for (size_t i = 0; i < events_.size() && off_cpu_event_ < 0; ++i) {
    EventDesc& e = events_[i];
    if (e.type != PERF_TYPE_SOFTWARE || e.config != PERF_COUNT_SW_BPF_OUTPUT ||
        !e.name.starts_with(kPerfOffCpuEventName))
      continue;
    if (e.sample_type & PERF_SAMPLE_RAW) {
      infos_[i].layout.off_cpu_in_raw = true;
      // The stacks travel in the BPF data: the event has them though its attribute does not
      // say so (kernel crediting and the short-stack note look for PERF_SAMPLE_CALLCHAIN).
      e.sample_type |= PERF_SAMPLE_CALLCHAIN;
    }
    e = OffCpuEventDesc(e);
    summed_off_cpu_event_ = static_cast<int32_t>(i);
  }
  for (const PerfGroupDesc& g : features_.groups) {
    if (g.members < 2 || g.leader >= events_.size() || g.members > events_.size() - g.leader)
      continue;
    for (uint32_t k = 0; k < g.members; ++k) {
      events_[g.leader + k].group_leader = static_cast<int32_t>(g.leader);
      events_[g.leader].group_members.push_back(g.leader + k);
    }
  }
  FindSwitchEvent();

  // Where the id sits, from the first event's layout (perf requires them to agree).
  const uint64_t st = infos_[0].attr.sample_type;
  if (st & PERF_SAMPLE_IDENTIFIER) {
    id_pos_ = 0;
    is_pos_ = 1;
  } else if (st & PERF_SAMPLE_ID) {
    id_pos_ = 0;
    for (uint64_t bit : {PERF_SAMPLE_IP, PERF_SAMPLE_TID, PERF_SAMPLE_TIME, PERF_SAMPLE_ADDR})
      if (st & bit) ++id_pos_;
    is_pos_ = 1;
    for (uint64_t bit : {PERF_SAMPLE_CPU, PERF_SAMPLE_STREAM_ID})
      if (st & bit) ++is_pos_;
  }

  if (features_.groups.empty()) InferGroupsFromReads();
  ApplyPerfFeatures(features_, &metadata_);
  metadata_.off_cpu_summed = summed_off_cpu_event_ >= 0;
  metadata_.tprof_version = kVersion;
  if (pipe_mode_) metadata_.source += ", pipe mode";
  return Status::Ok();
}

void PerfDataReader::InferGroupsFromReads() {
  constexpr uint64_t kGroupRead = PERF_FORMAT_GROUP | PERF_FORMAT_ID;
  std::vector<bool> pending(infos_.size(), false);
  size_t left = 0;
  for (size_t i = 0; i < infos_.size(); ++i) {
    const PerfAttr& a = infos_[i].attr;
    pending[i] = (a.sample_type & PERF_SAMPLE_READ) && (a.read_format & kGroupRead) == kGroupRead;
    left += pending[i];
  }
  const uint8_t* base = reinterpret_cast<const uint8_t*>(bytes_.data());
  ParsedPerfSample parsed;
  // The first samples say it; a bounded look keeps opening a file cheap.
  uint64_t pos = data_begin_;
  for (int records = 0; left > 0 && records < 100000 && pos < data_end_; ++records) {
    pd::RecordHeader header;
    if (!SoundHeader(base, pos, data_end_, order_, &header)) return;
    const uint8_t* body = base + pos + pd::kRecordHeaderSize;
    const size_t size = header.size - pd::kRecordHeaderSize;
    if (header.type == PERF_RECORD_SAMPLE) {
      const int32_t event = EventOfSample(body, size);
      if (event >= 0 && pending[static_cast<size_t>(event)]) {
        const size_t leader = static_cast<size_t>(event);
        pending[leader] = false;
        --left;
        if (ParsePerfSample(body, size, infos_[leader].layout, &parsed).ok() &&
            parsed.counter_ids.size() >= 2 &&
            EventOfId(parsed.counter_ids[0]) == static_cast<int32_t>(leader) &&
            events_[leader].group_members.empty()) {
          std::vector<uint32_t> members;
          for (uint64_t id : parsed.counter_ids) {
            const int32_t member = EventOfId(id);
            if (member < 0 || events_[static_cast<size_t>(member)].group_leader >= 0) break;
            members.push_back(static_cast<uint32_t>(member));
          }
          if (members.size() == parsed.counter_ids.size()) {
            for (uint32_t m : members) events_[m].group_leader = static_cast<int32_t>(leader);
            events_[leader].group_members = std::move(members);
          }
        }
      }
    }
    const uint64_t extra = TrailingPayload(header, body, size, order_);
    if (extra > data_end_ - pos - header.size) return;  // Open's scan reports it
    pos += header.size + extra;
  }
}

int32_t PerfDataReader::EventOfId(uint64_t id) const {
  if (infos_.size() == 1 || id == 0) return 0;
  if (auto it = id_to_event_.find(id); it != id_to_event_.end())
    return static_cast<int32_t>(it->second);
  return infos_[0].attr.sample_id_all() ? -1 : 0;
}

int32_t PerfDataReader::EventOfSample(const uint8_t* body, size_t size) const {
  if (infos_.size() == 1 || id_pos_ < 0) return 0;
  size_t at = 8 * static_cast<size_t>(id_pos_);
  if (size < at + 8) return 0;  // the parser reports the short record
  return EventOfId(order_.U64(body + at));
}

void PerfDataReader::FindSwitchEvent() {
  namespace pd = perf_data;
  if (off_cpu_event_ >= 0) return;  // simpleperf's, read the other way
  bool switch_records = false;
  for (const EventInfo& info : infos_)
    switch_records |= (info.attr.flags & pd::attr::kFlagContextSwitch);
  if (!switch_records) return;
  for (size_t i = 0; i < events_.size(); ++i) {
    const EventDesc& e = events_[i];
    const bool tracepoint = IsSchedSwitchTracepoint(e);
    const bool every_switch = e.type == PERF_TYPE_SOFTWARE &&
                              e.config == PERF_COUNT_SW_CONTEXT_SWITCHES && !e.use_frequency &&
                              e.period_or_frequency == 1;
    if (!tracepoint && !every_switch) continue;
    switch_event_ = static_cast<int32_t>(i);
    switch_off_cpu_event_ = static_cast<int32_t>(events_.size());
    events_.push_back(OffCpuEventDesc(e));
    return;
  }
}

uint64_t PerfDataReader::RecordTime(uint32_t type, const uint8_t* body, size_t size) const {
  if (type == PERF_RECORD_SAMPLE) {
    int32_t event = EventOfSample(body, size);
    uint64_t st = infos_[event < 0 ? 0 : static_cast<size_t>(event)].attr.sample_type;
    if (!(st & PERF_SAMPLE_TIME)) return UINT64_MAX;
    size_t at = 0;
    for (uint64_t bit : {PERF_SAMPLE_IDENTIFIER, PERF_SAMPLE_IP, PERF_SAMPLE_TID})
      if (st & bit) at += 8;
    return size >= at + 8 ? order_.U64(body + at) : UINT64_MAX;
  }
  const PerfAttr& first = infos_[0].attr;
  if (!first.sample_id_all() || !(first.sample_type & PERF_SAMPLE_TIME)) return UINT64_MAX;
  size_t id_size = SampleIdSize(first.sample_type);
  if (size < id_size) return UINT64_MAX;
  size_t at = size - id_size + ((first.sample_type & PERF_SAMPLE_TID) ? 8 : 0);
  return order_.U64(body + at);
}

Result<PerfDataReadSummary> PerfDataReader::ReadRecords(RecordVisitor& visitor,
                                                        UserStackUnwinder* unwinder,
                                                        const FileBytes* file) const {
  if (switch_event_ >= 0) {
    SwitchRecordOffCpu off_cpu(visitor, static_cast<uint32_t>(switch_event_),
                               static_cast<uint32_t>(switch_off_cpu_event_));
    PerfDataRecordPump pump(*this, off_cpu, unwinder, file, &off_cpu);
    auto summary = pump.Run();
    if (!summary.ok()) return summary;
    off_cpu.Finish();
    summary->off_cpu_intervals = off_cpu.intervals();
    return summary;
  }
  if (summed_off_cpu_event_ >= 0) {
    SummedOffCpuTimes off_cpu(visitor, static_cast<uint32_t>(summed_off_cpu_event_));
    PerfDataRecordPump pump(*this, off_cpu, unwinder, file);
    return pump.Run();
  }
  if (off_cpu_event_ < 0) {
    PerfDataRecordPump pump(*this, visitor, unwinder, file);
    return pump.Run();
  }
  NextSampleOffCpu off_cpu(visitor, static_cast<uint32_t>(off_cpu_event_));
  PerfDataRecordPump pump(*this, off_cpu, unwinder, file);
  auto summary = pump.Run();
  if (!summary.ok()) return summary;
  summary->off_cpu_intervals = off_cpu.intervals();
  summary->off_cpu_unended = off_cpu.unended();
  return summary;
}

}  // namespace tprof
