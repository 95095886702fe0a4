// libFuzzer target for the folded-stacks parser: any text gives samples or an error.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/perfdata/folded_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)tprof::LooksLikeFolded(text);
  auto profile = tprof::ParseFolded(text);
  if (!profile.ok()) return 0;
  uint64_t sum = 0;
  for (const tprof::Sample& s : profile->samples) {
    for (uint64_t frame : s.callchain) sum += profile->frames.Resolve(nullptr, frame).module.size();
    sum += s.period + s.event;
  }
  volatile uint64_t sink = sum;  // keeps the reads
  (void)sink;
  return 0;
}
