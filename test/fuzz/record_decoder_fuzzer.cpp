// libFuzzer target for the record decoder alone: arbitrary bytes as one records chunk's raw
// payload, so mutations exercise varints, stack references and length prefixes directly. Decoded
// twice, for a visitor that reads whole callchains and for one that reads only their leaves
// (RecordVisitor::reads_callers), which skips the rest: both must stop at the same record with
// the same outcome.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "core/format/record_codec.h"

namespace {

struct Counting : tprof::RecordVisitor {
  explicit Counting(bool callers) : callers(callers) {}
  void OnSample(const tprof::Sample&) override { ++samples; }
  bool reads_callers() const override { return callers; }
  bool callers;
  uint64_t samples = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Counting whole(true), leaf(false);
  auto a = tprof::RecordDecoder().DecodeChunk(data, size, whole);
  auto b = tprof::RecordDecoder().DecodeChunk(data, size, leaf);
  if (a.ok() != b.ok() || whole.samples != leaf.samples || (a.ok() && a.value() != b.value()))
    std::abort();
  return 0;
}
