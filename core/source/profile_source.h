// "Open any profile": the one seam through which every subcommand reads its input. The format
// is recognised by content, not by name — a .tprof file, a perf.data file or stream (either byte
// order), `perf script` text, or folded stacks — and each is offered the same way: metadata,
// events, then records into a RecordVisitor. Nothing downstream knows where a profile came from.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/error.h"
#include "core/model/frame_resolver.h"
#include "core/model/kernel_entry_credit.h"
#include "core/model/profile.h"
#include "core/model/user_stack_unwinder.h"

namespace tprof {

enum class ProfileFormat { kTprof, kPerfData, kPerfScript, kFolded };

const char* ProfileFormatName(ProfileFormat format);

// Recognises the format from the first bytes (a few KiB are enough); an error says what the
// bytes look like instead.
Result<ProfileFormat> SniffProfileFormat(std::string_view head);

struct SourceSummary {
  bool complete = true;  // false: the input was cut short and only part of it was read
  uint64_t records = 0;
  uint64_t samples = 0;
  // Samples with stack copies, by how far SourceOptions::unwinder walked them (perf.data).
  UnwindStatistics unwinding;
  std::string warning;  // one line, when there is something the user should know
  // Set when kernel samples were credited to the user code that entered the kernel.
  std::optional<KernelCreditStatistics> kernel_credit;
};

struct SourceOptions {
  // For perf.data with --call-graph dwarf: turns user stack copies into frames.
  UserStackUnwinder* unwinder = nullptr;
  // For .tprof files with embedded symbols: resolves what the embedded table lacks (a live
  // symbolizer). Null: such addresses read "[module+0xoffset]".
  FrameResolver* symbol_fallback = nullptr;
};

class ProfileSource {
 public:
  virtual ~ProfileSource() = default;

  // Opens a file ("-" reads standard input, e.g. `perf record -o - | tprof report -i -`).
  static Result<std::unique_ptr<ProfileSource>> OpenFile(const std::string& path,
                                                         SourceOptions options = {});
  // Opens bytes held in memory; the source keeps its own copy.
  static Result<std::unique_ptr<ProfileSource>> OpenBytes(std::string bytes,
                                                          SourceOptions options = {});

  virtual ProfileFormat format() const = 0;
  virtual const Metadata& metadata() const = 0;
  virtual const std::vector<EventDesc>& events() const = 0;
  // Streams every record to the visitor, in time order.
  virtual Result<SourceSummary> ReadRecords(RecordVisitor& visitor) = 0;
  // Text inputs arrive with names rather than addresses: their samples carry made-up addresses
  // that this resolver names; .tprof files with embedded symbols name their addresses from
  // them. Null when the addresses are real and need a symbolizer.
  virtual FrameResolver* embedded_frames() { return nullptr; }
  // The build-id (raw bytes) the input lists up front for a recorded file (perf.data's
  // BUILD_ID feature: "[kernel.kallsyms]", "/usr/lib/libc.so.6", ...); "" when it lists none.
  virtual std::string RecordedBuildId(const std::string& /*path*/) const { return ""; }
};

// A source seen through another: forwards everything to `inner`; a subclass overrides what it
// adds (reading through a filter, reporting on a read).
class ForwardingSource : public ProfileSource {
 public:
  explicit ForwardingSource(ProfileSource& inner) : inner_(inner) {}
  ProfileFormat format() const override { return inner_.format(); }
  const Metadata& metadata() const override { return inner_.metadata(); }
  const std::vector<EventDesc>& events() const override { return inner_.events(); }
  Result<SourceSummary> ReadRecords(RecordVisitor& visitor) override {
    return inner_.ReadRecords(visitor);
  }
  FrameResolver* embedded_frames() override { return inner_.embedded_frames(); }
  std::string RecordedBuildId(const std::string& path) const override {
    return inner_.RecordedBuildId(path);
  }

 protected:
  ProfileSource& inner() { return inner_; }

 private:
  ProfileSource& inner_;
};

}  // namespace tprof
