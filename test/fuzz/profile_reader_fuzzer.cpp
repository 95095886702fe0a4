// libFuzzer target for the .tprof reader: any bytes must give a profile, a warning or an error,
// never a crash, a hang or an unbounded allocation. Read twice, the second time by a visitor
// that takes deferred callchains (RecordVisitor::takes_deferred_callchains) and completes them:
// both must see the same records.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/format/profile_reader.h"

namespace {

// Touches every field so the sanitizers see any read of uninitialized or freed memory.
struct TouchingVisitor : tprof::RecordVisitor {
  explicit TouchingVisitor(bool deferred = false) : deferred(deferred) {}
  bool takes_deferred_callchains() const override { return deferred; }
  bool deferred;
  uint64_t sum = 0;
  tprof::Sample completed;
  void OnSample(const tprof::Sample& sample) override {
    completed = sample;
    tprof::CompleteCallchain(completed);
    const tprof::Sample& s = completed;
    sum += s.time + s.ip + s.period + s.pid + s.tid + s.cpu + s.event + s.time_enabled;
    for (uint64_t v : s.counter_values) sum += v;
    for (uint64_t f : s.callchain) sum = sum * 31 + f;
    for (const auto& b : s.branches) sum += b.from + b.to + b.flags;
  }
  void OnMmap(const tprof::MmapRecord& m) override {
    sum += m.start + m.filename.size() + m.build_id.size();
  }
  void OnComm(const tprof::CommRecord& c) override { sum += c.comm.size(); }
  void OnTask(const tprof::TaskRecord& t) override { sum += t.pid; }
  void OnLost(const tprof::LostRecord& l) override { sum += l.lost; }
  void OnThrottle(const tprof::ThrottleRecord& t) override { sum += t.time; }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto reader = tprof::ProfileReader::OpenBytes(bytes);
  if (!reader.ok()) return 0;
  TouchingVisitor visitor, deferring(/*deferred=*/true);
  auto summary = reader->ReadRecords(visitor);
  auto again = reader->ReadRecords(deferring);
  if (summary.ok() != again.ok() || visitor.sum != deferring.sum) std::abort();
  return 0;
}
