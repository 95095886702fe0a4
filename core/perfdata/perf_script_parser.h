// Reads the text `perf script` prints: the default fields and the common -F variants (with or
// without cpu, time, period and event name; "pid" or "pid/tid"; callchains one frame per line
// or a single ip/sym/dso on the sample line; "+0x" offsets, "[unknown]" symbols, srcline lines).
// Frames arrive named, so samples get made-up addresses resolved by TextProfile::frames.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/base/error.h"
#include "core/base/file_bytes.h"
#include "core/perfdata/text_profile.h"

namespace tprof {

// Kernel code as perf script names its module: [kernel.kallsyms] (and its .init.text form),
// a vmlinux file, a kernel module (*.ko, or "[name]" as perf prints loaded modules), or an
// [unknown] module at a kernel address. [vdso], [vsyscall], [heap], [stack], [anon...],
// [uprobes] and [jit...] are user space.
bool IsKernelModule(std::string_view module_path, uint64_t address, bool has_address);

// True when the text's first sample line looks like perf script output.
bool LooksLikePerfScript(std::string_view head);

// What the sample lines tell of the whole text.
struct PerfScriptScan {
  std::vector<EventDesc> events;  // in the order first seen, as the samples number them
  uint32_t max_cpu = 0;
  bool any_pid = false;  // some sample line printed "pid/tid" (else only tids are known)
  uint64_t samples = 0;
  uint64_t skipped_lines = 0;  // lines that were neither a sample nor part of one
  bool final_sample_unterminated = false;
  // The text ends inside a line (perf script ends every line): a sample cut there is left out,
  // and this says where. Empty when the text ends at a line's end.
  std::string cut;
  // The last sample's callchain has no empty line after it: read, but perhaps cut at a line's
  // end. Empty otherwise.
  std::string unended;
  Metadata ToMetadata() const;
};

// Where the parser hands each sample; the sample may be moved from.
class PerfScriptSampleSink {
 public:
  virtual ~PerfScriptSampleSink() = default;
  virtual void OnSample(Sample& sample, std::string_view comm) = 0;
};

// Reads perf script text front to back, a sample at a time, keeping nothing of a sample once it
// is handed on: memory grows with the distinct frames, not with the text. A first pass without
// frames or sink (a scan) reads the sample lines alone: the events, which a report needs before
// its first sample, in the order the second pass numbers them.
class PerfScriptParser {
 public:
  // `frames` names the frames (null: sample lines only).
  explicit PerfScriptParser(NamedFrameTable* frames) : frames_(frames) {}

  // Reads `text` whole, handing each sample to `sink` (null: a scan). Lines that belong to no
  // sample (warnings, srcline, other records) are counted and skipped; text with no sample at
  // all is an error naming the first bad line. `release` (may be null) holds `text` and takes
  // back the pages read.
  Result<PerfScriptScan> Parse(std::string_view text, PerfScriptSampleSink* sink,
                               const FileBytes* release = nullptr);

 private:
  static constexpr size_t kReleaseBytes = size_t{8} << 20;
  static constexpr size_t kMaxCachedFrames = size_t{1} << 20;
  struct ChainEntry {
    uint64_t address;
    bool kernel;
    bool marker;  // a context marker's line: no frame
  };
  NamedFrameTable* frames_;
  absl::flat_hash_map<std::string, ChainEntry> frame_cache_;
  std::string frame_key_;
  std::vector<ChainEntry> frames_read_;
  Sample sample_;
};

// Parses the whole text and keeps every sample (tests, the fuzzer, small inputs).
Result<TextProfile> ParsePerfScript(std::string_view text);

}  // namespace tprof
