// libFuzzer target for the record decoder alone: arbitrary bytes as one records chunk's raw
// payload, so mutations exercise varints, stack references and length prefixes directly. Decoded
// three times: for a visitor that reads whole callchains, for one that reads only their leaves
// (RecordVisitor::reads_callers), which skips the rest, and for one that takes them deferred
// (RecordVisitor::takes_deferred_callchains) and completes each: all must stop at the same
// record with the same outcome, and the completed chains must be the whole ones.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "core/format/record_codec.h"

namespace {

struct Counting : tprof::RecordVisitor {
  Counting(bool callers, bool deferred) : callers(callers), deferred(deferred) {}
  void OnSample(const tprof::Sample& s) override {
    ++samples;
    if (!callers) return;
    whole = s;
    tprof::CompleteCallchain(whole);
    for (uint64_t frame : whole.callchain) chains = chains * 1099511628211ull + frame;
    chains = chains * 1099511628211ull + whole.callchain.size();
  }
  bool reads_callers() const override { return callers; }
  bool takes_deferred_callchains() const override { return deferred; }
  bool callers, deferred;
  uint64_t samples = 0;
  uint64_t chains = 0;  // a running hash of every callchain, completed
  tprof::Sample whole;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Counting whole(true, false), leaf(false, false), deferred(true, true);
  auto a = tprof::RecordDecoder().DecodeChunk(data, size, whole);
  auto b = tprof::RecordDecoder().DecodeChunk(data, size, leaf);
  auto c = tprof::RecordDecoder().DecodeChunk(data, size, deferred);
  if (a.ok() != b.ok() || whole.samples != leaf.samples || (a.ok() && a.value() != b.value()))
    std::abort();
  if (a.ok() != c.ok() || whole.samples != deferred.samples || whole.chains != deferred.chains ||
      (a.ok() && a.value() != c.value()))
    std::abort();
  return 0;
}
