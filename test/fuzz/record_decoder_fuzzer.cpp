// libFuzzer target for the record decoder alone: arbitrary bytes as one records chunk's raw
// payload, so mutations exercise varints, stack references and length prefixes directly.
#include <cstddef>
#include <cstdint>

#include "core/format/record_codec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tprof::RecordDecoder decoder;
  tprof::RecordVisitor ignore;
  (void)decoder.DecodeChunk(data, size, ignore);
  return 0;
}
