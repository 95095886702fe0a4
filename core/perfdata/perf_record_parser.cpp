#include "core/perfdata/perf_record_parser.h"

#include <linux/perf_event.h>

#include <cstring>
#include <string>

namespace tprof {
namespace {

// Bounds-checked little reader over a record body; a failed read sticks.
class Cursor {
 public:
  Cursor(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  template <typename T>
  T Get() {
    T v{};
    if (!Has(sizeof(T))) return v;
    std::memcpy(&v, data_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  bool Has(size_t n) {
    if (!ok_ || n > size_ - pos_) {
      ok_ = false;
      return false;
    }
    return true;
  }
  void Skip(size_t n) {
    if (Has(n)) pos_ += n;
  }
  // Reads n u64 values, refusing counts that cannot fit in the remaining bytes.
  bool GetU64s(uint64_t n, std::vector<uint64_t>* out) {
    if (n > (size_ - pos_) / 8) {
      ok_ = false;
      return false;
    }
    out->resize(n);
    if (n) std::memcpy(out->data(), data_ + pos_, n * 8);
    pos_ += n * 8;
    return true;
  }
  std::string_view GetView(size_t n) {
    if (!Has(n)) return {};
    std::string_view v(reinterpret_cast<const char*>(data_ + pos_), n);
    pos_ += n;
    return v;
  }
  // A NUL-terminated string padded to 8 bytes inside a record.
  std::string GetPaddedString(size_t limit) {
    size_t avail = std::min(limit, size_ - pos_);
    const char* p = reinterpret_cast<const char*>(data_ + pos_);
    size_t len = strnlen(p, avail);
    std::string s(p, len);
    pos_ += avail;
    return s;
  }
  bool ok() const { return ok_; }
  size_t pos() const { return pos_; }
  size_t remaining() const { return size_ - pos_; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  bool ok_ = true;
};

bool ReadGroup(Cursor& c, uint64_t read_format, ParsedPerfSample* out) {
  Sample& s = out->sample;
  if (read_format & PERF_FORMAT_GROUP) {
    uint64_t nr = c.Get<uint64_t>();
    if (read_format & PERF_FORMAT_TOTAL_TIME_ENABLED) s.time_enabled = c.Get<uint64_t>();
    if (read_format & PERF_FORMAT_TOTAL_TIME_RUNNING) s.time_running = c.Get<uint64_t>();
    size_t per = 8 + ((read_format & PERF_FORMAT_ID) ? 8 : 0) +
                 ((read_format & (1u << 4) /* PERF_FORMAT_LOST */) ? 8 : 0);
    if (!c.ok() || nr > c.remaining() / per) return false;
    for (uint64_t i = 0; i < nr; ++i) {
      s.counter_values.push_back(c.Get<uint64_t>());
      if (read_format & PERF_FORMAT_ID) out->counter_ids.push_back(c.Get<uint64_t>());
      if (read_format & (1u << 4)) c.Get<uint64_t>();
    }
  } else {
    s.counter_values.push_back(c.Get<uint64_t>());
    if (read_format & PERF_FORMAT_TOTAL_TIME_ENABLED) s.time_enabled = c.Get<uint64_t>();
    if (read_format & PERF_FORMAT_TOTAL_TIME_RUNNING) s.time_running = c.Get<uint64_t>();
    if (read_format & PERF_FORMAT_ID) out->counter_ids.push_back(c.Get<uint64_t>());
    if (read_format & (1u << 4)) c.Get<uint64_t>();
  }
  return c.ok();
}

Status Malformed(const char* what) { return Error(std::string("malformed ") + what); }

}  // namespace

size_t SampleIdSize(uint64_t sample_type) {
  size_t n = 0;
  for (uint64_t bit : {PERF_SAMPLE_TID, PERF_SAMPLE_TIME, PERF_SAMPLE_ID, PERF_SAMPLE_STREAM_ID,
                       PERF_SAMPLE_CPU, PERF_SAMPLE_IDENTIFIER})
    if (sample_type & bit) n += 8;
  return n;
}

Status ParsePerfSample(const uint8_t* body, size_t size, const PerfRecordLayout& layout,
                       ParsedPerfSample* out) {
  const uint64_t st = layout.sample_type;
  Cursor c(body, size);
  Sample& s = out->sample;
  s.ClearKeepCapacity();
  out->counter_ids.clear();
  out->regs_user.clear();
  out->stack_user = {};
  out->id = 0;
  if (st & PERF_SAMPLE_IDENTIFIER) out->id = c.Get<uint64_t>();
  if (st & PERF_SAMPLE_IP) s.ip = c.Get<uint64_t>();
  if (st & PERF_SAMPLE_TID) {
    s.pid = c.Get<uint32_t>();
    s.tid = c.Get<uint32_t>();
  }
  if (st & PERF_SAMPLE_TIME) s.time = c.Get<uint64_t>();
  if (st & PERF_SAMPLE_ADDR) out->addr = c.Get<uint64_t>();
  if (st & PERF_SAMPLE_ID) out->id = c.Get<uint64_t>();
  if (st & PERF_SAMPLE_STREAM_ID) out->stream_id = c.Get<uint64_t>();
  if (st & PERF_SAMPLE_CPU) {
    s.cpu = c.Get<uint32_t>();
    c.Get<uint32_t>();
  }
  if (st & PERF_SAMPLE_PERIOD) s.period = c.Get<uint64_t>();
  if (st & PERF_SAMPLE_READ) {
    if (!ReadGroup(c, layout.read_format, out)) return Malformed("sample read values");
  }
  if (st & PERF_SAMPLE_CALLCHAIN) {
    uint64_t nr = c.Get<uint64_t>();
    if (!c.GetU64s(nr, &s.callchain)) return Malformed("sample callchain");
  }
  if (st & PERF_SAMPLE_RAW) {
    uint32_t raw_size = c.Get<uint32_t>();
    std::string_view raw = c.GetView(raw_size);
    if (layout.off_cpu_in_raw && c.ok()) {
      Cursor r(reinterpret_cast<const uint8_t*>(raw.data()), raw.size());
      // The thread word's halves differ by where the sample came from. Waits dumped during the
      // run by perf's BPF program (off_cpu_dump) hold the thread id low and the process id high
      // ((u64)tgid << 32 | pid, in the kernel's names); the sums perf writes after the run
      // (off_cpu_write, at made-up times past ~0 << 32) hold them as PERF_SAMPLE_TID does,
      // process low. Read each by its own layout.
      const uint64_t word = r.Get<uint64_t>();  // written as one u64 value by both
      const auto low = static_cast<uint32_t>(word), high = static_cast<uint32_t>(word >> 32);
      const bool summed_after_run = s.time >= (~0ull << 32);
      s.pid = summed_after_run ? low : high;
      s.tid = summed_after_run ? high : low;
      s.period = r.Get<uint64_t>();
      uint64_t nr = r.Get<uint64_t>();
      if (!r.ok() || !r.GetU64s(nr, &s.callchain)) return Malformed("off-CPU sample's BPF data");
      // ips[0] is the PERF_CONTEXT_USER marker; the first user address is the sample's ip.
      s.ip = nr > 1 ? s.callchain[1] : 0;
    }
  }
  if (st & PERF_SAMPLE_BRANCH_STACK) {
    uint64_t nr = c.Get<uint64_t>();
    if (layout.branch_hw_index) s.branch_hw_index = c.Get<uint64_t>();
    if (!c.ok() || nr > c.remaining() / 24) return Malformed("sample branch stack");
    s.branches.resize(nr);
    for (uint64_t i = 0; i < nr; ++i) {
      s.branches[i].from = c.Get<uint64_t>();
      s.branches[i].to = c.Get<uint64_t>();
      s.branches[i].flags = c.Get<uint64_t>();
    }
  }
  if (st & PERF_SAMPLE_REGS_USER) {
    out->regs_user_abi = c.Get<uint64_t>();
    if (out->regs_user_abi && !c.GetU64s(layout.regs_user_count, &out->regs_user))
      return Malformed("sample user registers");
  }
  if (st & PERF_SAMPLE_STACK_USER) {
    uint64_t stack_size = c.Get<uint64_t>();
    if (stack_size) {
      if (stack_size > c.remaining()) return Malformed("sample user stack");
      out->stack_user = c.GetView(stack_size);
      out->stack_user_dynamic_size = c.Get<uint64_t>();
      if (out->stack_user_dynamic_size < out->stack_user.size())
        out->stack_user = out->stack_user.substr(0, out->stack_user_dynamic_size);
    }
  }
  if (st & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT)) out->weight = c.Get<uint64_t>();
  if (st & PERF_SAMPLE_DATA_SRC) out->data_src = c.Get<uint64_t>();
  if (st & PERF_SAMPLE_TRANSACTION) out->transaction = c.Get<uint64_t>();
  if (st & PERF_SAMPLE_REGS_INTR) {
    uint64_t abi = c.Get<uint64_t>();
    if (abi) c.Skip(8ull * layout.regs_intr_count);
  }
  if (st & PERF_SAMPLE_PHYS_ADDR) out->phys_addr = c.Get<uint64_t>();
  // CGROUP, DATA_PAGE_SIZE, CODE_PAGE_SIZE and AUX follow; nothing the model keeps.
  if (!c.ok()) return Malformed("sample (shorter than its sample_type says)");
  return Status::Ok();
}

bool PeekSampleIdentifier(const uint8_t* body, size_t size, uint64_t sample_type, uint64_t* id) {
  if (!(sample_type & PERF_SAMPLE_IDENTIFIER) || size < 8) return false;
  std::memcpy(id, body, 8);
  return true;
}

bool PeekTrailingIdentifier(const uint8_t* body, size_t size, uint64_t sample_type, uint64_t* id) {
  if (!(sample_type & PERF_SAMPLE_IDENTIFIER) || size < 8) return false;
  std::memcpy(id, body + size - 8, 8);
  return true;
}

Status ParseTrailingSampleId(const uint8_t* body, size_t size, size_t fixed_size,
                             const PerfRecordLayout& layout, PerfSampleId* out) {
  if (!layout.sample_id_all) return Status::Ok();
  size_t id_size = SampleIdSize(layout.sample_type);
  if (size < fixed_size || size - fixed_size < id_size) return Malformed("sample_id block");
  Cursor c(body + size - id_size, id_size);
  const uint64_t st = layout.sample_type;
  if (st & PERF_SAMPLE_TID) {
    out->pid = c.Get<uint32_t>();
    out->tid = c.Get<uint32_t>();
  }
  if (st & PERF_SAMPLE_TIME) {
    out->time = c.Get<uint64_t>();
    out->has_time = true;
  }
  if (st & PERF_SAMPLE_ID) out->id = c.Get<uint64_t>();
  if (st & PERF_SAMPLE_STREAM_ID) c.Get<uint64_t>();
  if (st & PERF_SAMPLE_CPU) {
    out->cpu = c.Get<uint32_t>();
    c.Get<uint32_t>();
  }
  if (st & PERF_SAMPLE_IDENTIFIER) out->id = c.Get<uint64_t>();
  return Status::Ok();
}

Status ParsePerfNonSample(uint32_t type, uint16_t misc, const uint8_t* body, size_t size,
                          const PerfRecordLayout& layout, ParsedPerfRecord* out) {
  using Kind = ParsedPerfRecord::Kind;
  out->kind = Kind::kNone;
  out->id = 0;
  out->sample_id = {};
  Cursor c(body, size);
  size_t id_size = layout.sample_id_all ? SampleIdSize(layout.sample_type) : 0;
  size_t string_limit = size >= id_size ? size - id_size : 0;
  switch (type) {
    case PERF_RECORD_MMAP:
    case PERF_RECORD_MMAP2: {
      MmapRecord& m = out->mmap;
      m = MmapRecord{};
      m.pid = c.Get<uint32_t>();
      m.tid = c.Get<uint32_t>();
      m.start = c.Get<uint64_t>();
      m.length = c.Get<uint64_t>();
      m.page_offset = c.Get<uint64_t>();
      if (type == PERF_RECORD_MMAP2) {
        if (misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
          uint8_t build_id_size = c.Get<uint8_t>();
          c.Skip(3);
          std::string_view id = c.GetView(20);
          m.build_id = std::string(id.substr(0, std::min<size_t>(build_id_size, 20)));
        } else {
          c.Skip(4 + 4 + 8 + 8);  // maj, min, ino, ino_generation
        }
        m.prot = c.Get<uint32_t>();
        m.flags = c.Get<uint32_t>();
        m.executable = (m.prot & 0x4 /* PROT_EXEC */) != 0;
      } else {
        m.executable = !(misc & PERF_RECORD_MISC_MMAP_DATA);
      }
      if (!c.ok() || c.pos() > string_limit) return Malformed("mmap record");
      m.filename = c.GetPaddedString(string_limit - c.pos());
      out->kind = Kind::kMmap;
      break;
    }
    case PERF_RECORD_COMM: {
      CommRecord& r = out->comm;
      r = CommRecord{};
      r.pid = c.Get<uint32_t>();
      r.tid = c.Get<uint32_t>();
      if (!c.ok() || c.pos() > string_limit) return Malformed("comm record");
      r.comm = c.GetPaddedString(string_limit - c.pos());
      r.exec = (misc & PERF_RECORD_MISC_COMM_EXEC) != 0;
      out->kind = Kind::kComm;
      break;
    }
    case PERF_RECORD_FORK:
    case PERF_RECORD_EXIT: {
      TaskRecord& t = out->task;
      t = TaskRecord{};
      t.is_exit = type == PERF_RECORD_EXIT;
      t.pid = c.Get<uint32_t>();
      t.ppid = c.Get<uint32_t>();
      t.tid = c.Get<uint32_t>();
      t.ptid = c.Get<uint32_t>();
      t.time = c.Get<uint64_t>();
      if (!c.ok()) return Malformed("fork/exit record");
      out->kind = Kind::kTask;
      break;
    }
    case PERF_RECORD_LOST: {
      out->id = c.Get<uint64_t>();
      out->lost = LostRecord{};
      out->lost.lost = c.Get<uint64_t>();
      if (!c.ok()) return Malformed("lost record");
      out->kind = Kind::kLost;
      break;
    }
    case PERF_RECORD_LOST_SAMPLES: {
      out->lost = LostRecord{};
      out->lost.lost = c.Get<uint64_t>();
      out->lost.samples_only = true;
      if (!c.ok()) return Malformed("lost-samples record");
      out->kind = Kind::kLostSamples;
      break;
    }
    case PERF_RECORD_THROTTLE:
    case PERF_RECORD_UNTHROTTLE: {
      out->throttle = ThrottleRecord{};
      out->throttle.time = c.Get<uint64_t>();
      out->id = c.Get<uint64_t>();
      c.Get<uint64_t>();  // stream_id
      out->throttle.throttled = type == PERF_RECORD_THROTTLE;
      if (!c.ok()) return Malformed("throttle record");
      out->kind = Kind::kThrottle;
      break;
    }
    case PERF_RECORD_SWITCH:
    case PERF_RECORD_SWITCH_CPU_WIDE:
      // CPU-wide: the thread switched to or from (sample_id names the one on this side).
      if (type == PERF_RECORD_SWITCH_CPU_WIDE) c.Skip(8);
      if (!c.ok()) return Malformed("switch record");
      out->switch_out = (misc & PERF_RECORD_MISC_SWITCH_OUT) != 0;
      out->kind = Kind::kSwitch;
      break;
    default:
      return Status::Ok();
  }
  Status status = ParseTrailingSampleId(body, size, c.pos(), layout, &out->sample_id);
  if (!status.ok()) return status;
  if (!out->id) out->id = out->sample_id.id;
  if (out->sample_id.has_time) {
    uint64_t t = out->sample_id.time;
    switch (out->kind) {
      case Kind::kMmap:
        out->mmap.time = t;
        break;
      case Kind::kComm:
        out->comm.time = t;
        break;
      case Kind::kLost:
      case Kind::kLostSamples:
        out->lost.time = t;
        break;
      default:
        break;
    }
  }
  return Status::Ok();
}

}  // namespace tprof
