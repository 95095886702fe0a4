#include "core/perfdata/perf_data_swap.h"

#include <linux/perf_event.h>

#include <cstring>

#include "core/perfdata/perf_data_format.h"

namespace tprof {
namespace {

// Swaps fixed-width fields in place, front to back; stops at the end of the body.
class SwapCursor {
 public:
  SwapCursor(uint8_t* data, size_t size) : data_(data), size_(size) {}
  template <typename T>
  T Swap() {
    if (sizeof(T) > size_ - pos_) {
      pos_ = size_;
      ok_ = false;
      return 0;
    }
    T v;
    std::memcpy(&v, data_ + pos_, sizeof v);
    v = perf_data::Swap(v);
    std::memcpy(data_ + pos_, &v, sizeof v);
    pos_ += sizeof v;
    return v;
  }
  uint64_t U64() { return Swap<uint64_t>(); }
  void U32Pair() {
    Swap<uint32_t>();
    Swap<uint32_t>();
  }
  void U64s(uint64_t n) {
    for (uint64_t i = 0; i < n && ok_; ++i) U64();
  }
  void Skip(uint64_t n) {
    if (n > size_ - pos_) {
      pos_ = size_;
      ok_ = false;
    } else {
      pos_ += n;
    }
  }
  uint8_t* here() { return data_ + pos_; }
  size_t pos() const { return pos_; }
  size_t remaining() const { return size_ - pos_; }
  bool ok() const { return ok_; }

 private:
  uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  bool ok_ = true;
};

void SwapSampleIdBlock(SwapCursor& c, uint64_t st) {
  if (st & PERF_SAMPLE_TID) c.U32Pair();
  if (st & PERF_SAMPLE_TIME) c.U64();
  if (st & PERF_SAMPLE_ID) c.U64();
  if (st & PERF_SAMPLE_STREAM_ID) c.U64();
  if (st & PERF_SAMPLE_CPU) c.U32Pair();
  if (st & PERF_SAMPLE_IDENTIFIER) c.U64();
}

void SwapReadValues(SwapCursor& c, uint64_t read_format) {
  uint64_t per_value = 1 + ((read_format & PERF_FORMAT_ID) ? 1 : 0) +
                       ((read_format & perf_data::kFormatLost) ? 1 : 0);
  uint64_t times = ((read_format & PERF_FORMAT_TOTAL_TIME_ENABLED) ? 1 : 0) +
                   ((read_format & PERF_FORMAT_TOTAL_TIME_RUNNING) ? 1 : 0);
  if (read_format & PERF_FORMAT_GROUP) {
    uint64_t nr = c.U64();
    c.U64s(times);
    if (nr > (1u << 16)) nr = 1u << 16;  // the parser rejects what does not fit
    c.U64s(nr * per_value);
  } else {
    c.U64s(per_value + times);
  }
}

void SwapSample(SwapCursor& c, const PerfRecordLayout& layout) {
  const uint64_t st = layout.sample_type;
  if (st & PERF_SAMPLE_IDENTIFIER) c.U64();
  if (st & PERF_SAMPLE_IP) c.U64();
  if (st & PERF_SAMPLE_TID) c.U32Pair();
  if (st & PERF_SAMPLE_TIME) c.U64();
  if (st & PERF_SAMPLE_ADDR) c.U64();
  if (st & PERF_SAMPLE_ID) c.U64();
  if (st & PERF_SAMPLE_STREAM_ID) c.U64();
  if (st & PERF_SAMPLE_CPU) c.U32Pair();
  if (st & PERF_SAMPLE_PERIOD) c.U64();
  if (st & PERF_SAMPLE_READ) SwapReadValues(c, layout.read_format);
  if (st & PERF_SAMPLE_CALLCHAIN) c.U64s(c.U64());
  if (st & PERF_SAMPLE_RAW) {
    const uint32_t raw_size = c.Swap<uint32_t>();
    if (layout.off_cpu_in_raw && raw_size <= c.remaining()) {
      // perf's off-CPU data: fields of the writer's byte order (perf_record_parser.h).
      SwapCursor raw(c.here(), raw_size);
      raw.U64();  // the thread word: one u64 value (perf_record_parser.cpp)
      raw.U64();
      raw.U64s(raw.U64());
      raw.U64();
    }
    c.Skip(raw_size);  // a tracepoint's payload is left as written
  }
  if (st & PERF_SAMPLE_BRANCH_STACK) {
    uint64_t nr = c.U64();
    if (layout.branch_hw_index) c.U64();
    for (uint64_t i = 0; i < nr && c.ok(); ++i) {
      c.U64();
      c.U64();
      uint8_t* flags_at = c.here();
      uint64_t flags = c.U64();
      if (c.ok()) {
        flags = SwapBranchFlags(flags);
        std::memcpy(flags_at, &flags, 8);
      }
    }
  }
  if (st & PERF_SAMPLE_REGS_USER) {
    if (c.U64()) c.U64s(layout.regs_user_count);
  }
  if (st & PERF_SAMPLE_STACK_USER) {
    uint64_t size = c.U64();
    if (size) {
      c.Skip(size);
      c.U64();  // dyn_size
    }
  }
  if (st & PERF_SAMPLE_WEIGHT_STRUCT) {
    c.Swap<uint32_t>();
    c.Swap<uint16_t>();
    c.Swap<uint16_t>();
  } else if (st & PERF_SAMPLE_WEIGHT) {
    c.U64();
  }
  if (st & PERF_SAMPLE_DATA_SRC) c.U64();
  if (st & PERF_SAMPLE_TRANSACTION) c.U64();
  if (st & PERF_SAMPLE_REGS_INTR) {
    if (c.U64()) c.U64s(layout.regs_intr_count);
  }
  if (st & PERF_SAMPLE_PHYS_ADDR) c.U64();
  if (st & PERF_SAMPLE_CGROUP) c.U64();
  if (st & PERF_SAMPLE_DATA_PAGE_SIZE) c.U64();
  if (st & PERF_SAMPLE_CODE_PAGE_SIZE) c.U64();
  if (st & PERF_SAMPLE_AUX) c.Skip(c.U64());
}

}  // namespace

uint64_t SwapBranchFlags(uint64_t be) {
  // perf_branch_entry: mispred:1 predicted:1 in_tx:1 abort:1 cycles:16 type:4 spec:2
  // new_type:4 priv:3 reserved:31, allocated from bit 0 on little-endian, bit 63 on big-endian.
  static constexpr int kWidths[] = {1, 1, 1, 1, 16, 4, 2, 4, 3};
  uint64_t le = 0;
  int start = 0;
  for (int width : kWidths) {
    uint64_t mask = (1ull << width) - 1;
    uint64_t value = (be >> (64 - start - width)) & mask;
    le |= value << start;
    start += width;
  }
  return le;
}

void SwapPerfRecordBody(uint32_t type, uint16_t misc, uint8_t* body, size_t size,
                        const PerfRecordLayout& layout) {
  SwapCursor c(body, size);
  if (type == PERF_RECORD_SAMPLE) {
    SwapSample(c, layout);
    return;
  }
  switch (type) {
    case PERF_RECORD_MMAP:
      c.U32Pair();
      c.U64s(3);
      break;
    case PERF_RECORD_MMAP2:
      c.U32Pair();
      c.U64s(3);
      if (misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
        c.Skip(24);  // size byte, padding, 20 id bytes
      } else {
        c.U32Pair();  // maj, min
        c.U64s(2);    // ino, ino_generation
      }
      c.U32Pair();  // prot, flags
      break;
    case PERF_RECORD_COMM:
      c.U32Pair();
      break;
    case PERF_RECORD_FORK:
    case PERF_RECORD_EXIT:
      c.U32Pair();
      c.U32Pair();
      c.U64();
      break;
    case PERF_RECORD_LOST:
      c.U64s(2);
      break;
    case PERF_RECORD_LOST_SAMPLES:
      c.U64();
      break;
    case PERF_RECORD_THROTTLE:
    case PERF_RECORD_UNTHROTTLE:
      c.U64s(3);
      break;
    default:
      return;  // not parsed; left as it is
  }
  // The sample_id block sits at the end, after the record's own fields and strings.
  if (!layout.sample_id_all) return;
  size_t id_size = SampleIdSize(layout.sample_type);
  if (size < id_size || size - id_size < c.pos()) return;
  SwapCursor tail(body + size - id_size, id_size);
  SwapSampleIdBlock(tail, layout.sample_type);
}

}  // namespace tprof
