// libFuzzer target for the perf.data reader: any bytes must give a profile or an error naming an
// offset, never a crash, a hang or an unbounded allocation. Covers file and pipe mode, both byte
// orders, compressed records and the unwinder seam.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/perfdata/perf_data_reader.h"

namespace {

// Touches every field so the sanitizers see any read of uninitialized or freed memory.
struct TouchingVisitor : tprof::RecordVisitor {
  uint64_t sum = 0;
  void OnSample(const tprof::Sample& s) override {
    sum += s.time + s.ip + s.period + s.pid + s.tid + s.cpu + s.event + s.time_enabled;
    for (uint64_t v : s.counter_values) sum += v;
    for (uint64_t f : s.callchain) sum += f;
    for (const auto& b : s.branches) sum += b.from + b.to + b.flags;
  }
  void OnMmap(const tprof::MmapRecord& m) override {
    sum += m.start + m.filename.size() + m.build_id.size();
  }
  void OnComm(const tprof::CommRecord& c) override { sum += c.comm.size(); }
  void OnTask(const tprof::TaskRecord& t) override { sum += t.pid; }
  void OnLost(const tprof::LostRecord& l) override { sum += l.lost + l.event; }
  void OnThrottle(const tprof::ThrottleRecord& t) override { sum += t.time + t.event; }
};

// Reads the whole stack copy and claims two frames, so the seam is exercised too.
struct TouchingUnwinder : tprof::UserStackUnwinder {
  uint64_t sum = 0;
  void OnMmap(const tprof::MmapRecord& m) override { sum += m.length; }
  tprof::UnwindOutcome Unwind(const tprof::UserStackSample& s,
                              std::vector<uint64_t>* frames) override {
    for (char c : s.stack) sum += static_cast<uint8_t>(c);
    for (uint64_t r : s.regs) sum += r;
    frames->push_back(sum);
    frames->push_back(s.ip);
    // Every other sample stops early, so the statistics' per-cause paths are exercised too.
    if (sum & 1) return {tprof::UnwindEnd::kStackCopyTooShort, "fuzz"};
    return {};
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto reader = tprof::PerfDataReader::Open(bytes);
  if (!reader.ok()) return 0;
  TouchingVisitor visitor;
  TouchingUnwinder unwinder;
  auto summary = reader->ReadRecords(visitor, &unwinder);
  (void)summary;
  return 0;
}
