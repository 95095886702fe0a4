// libFuzzer target for the perf script text parser: any text gives samples or an error.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/perfdata/perf_script_parser.h"
#include "core/source/profile_source.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)tprof::LooksLikePerfScript(text);
  auto profile = tprof::ParsePerfScript(text);
  if (!profile.ok()) return 0;
  uint64_t sum = 0;
  for (const tprof::Sample& s : profile->samples) {
    for (uint64_t frame : s.callchain) {
      sum += profile->frames.Resolve(nullptr, frame).function.size();
      if (const tprof::PrintedFrame* printed = profile->frames.Printed(frame))
        sum += printed->module_path.size() + printed->symbol.size();
    }
    sum += s.period + s.event;
  }
  // The source that parses as it replays: the same samples, handed on one at a time.
  auto source = tprof::ProfileSource::OpenBytes(std::string(text));
  if (source.ok()) {
    struct Count : tprof::RecordVisitor {
      uint64_t samples = 0;
      void OnSample(const tprof::Sample&) override { ++samples; }
    } count;
    auto summary = (*source)->ReadRecords(count);
    if (summary.ok() && (*source)->format() == tprof::ProfileFormat::kPerfScript &&
        count.samples != profile->samples.size())
      __builtin_trap();  // the two readings of one text disagree
  }
  volatile uint64_t sink = sum;  // keeps the reads
  (void)sink;
  return 0;
}
