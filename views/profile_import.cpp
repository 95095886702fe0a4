#include "views/profile_import.h"

#include <unistd.h>

#include <algorithm>
#include <optional>

#include "core/format/output_file.h"
#include "core/format/profile_writer.h"
#include "core/format/symbol_section.h"
#include "core/source/profile_source.h"
#include "symbolize/binary_locator.h"
#include "symbolize/dwarf_unwinder.h"
#include "symbolize/elf_symbols.h"
#include "symbolize/symbolizer.h"

namespace tprof {
namespace {

// Copies the records (see RecordCopier); mappings of binaries found locally point at the local
// copy, so the profile symbolizes on this machine.
class RelocatingCopier : public RecordCopier {
 public:
  RelocatingCopier(ProfileWriter& writer, BinaryLocator& locator, SymbolTableBuilder& symbols)
      : RecordCopier(writer, symbols), locator_(locator) {}

  void OnMmap(const MmapRecord& r) override {
    if (locator_.active()) {
      const std::string& local = locator_.Locate(r.filename, r.build_id);
      if (!local.empty()) {
        MmapRecord copy = r;
        copy.filename = local;
        copy.build_id.clear();  // the locator checked it, allowing for old padded ids
        ++relocated_;
        return RecordCopier::OnMmap(copy);
      }
    }
    RecordCopier::OnMmap(r);
  }

  uint64_t relocated() const { return relocated_; }

 private:
  BinaryLocator& locator_;
  uint64_t relocated_ = 0;
};

// Removes PATH.partial unless the import completed: unlike a recording cut short, a failed
// import's input is still there to convert again, so the part written is of no use.
class PartialOutputRemover {
 public:
  explicit PartialOutputRemover(std::string partial) : partial_(std::move(partial)) {}
  ~PartialOutputRemover() {
    if (!completed_) ::unlink(partial_.c_str());
  }
  void Completed() { completed_ = true; }

 private:
  std::string partial_;
  bool completed_ = false;
};

// Where the profile is written: the output, or a private file copied to it once complete.
struct Output {
  std::optional<ScratchDirectory> spool;
  std::optional<StreamOutput> stream;
  std::string written;
};

Result<Output> PrepareOutput(const std::string& path) {
  // A device, FIFO or socket is written through once the profile is complete (record does the
  // same); a link's target is written, the link stays (ResolveOutputTarget).
  auto target = ResolveOutputTarget(path);
  if (!target.ok()) return target.error();
  Output out;
  out.written = target->path;
  if (target->kind == OutputTarget::Kind::kStream) {
    auto opened = StreamOutput::Open(target->path);
    if (!opened.ok()) return opened.error();
    out.stream.emplace(std::move(opened).value());
    auto created = ScratchDirectory::Create("tprof-import-");
    if (!created.ok()) return created.error();
    out.spool.emplace(std::move(created).value());
    out.written = out.spool->path() + "/profile.tprof";
  }
  return out;
}

void PreloadKernelSymbolsIfSampled(ProfileSource& source, Symbolizer& symbolizer) {
  const auto& events = source.events();
  if (std::any_of(events.begin(), events.end(),
                  [](const EventDesc& e) { return !e.exclude_kernel; }))
    symbolizer.PreloadKernelSymbols(source.RecordedBuildId("[kernel.kallsyms]"));
}

// Text inputs carry names, not addresses: .tprof cannot hold them yet.
Status Convertible(const std::string& input, ProfileFormat format) {
  if (format == ProfileFormat::kPerfScript || format == ProfileFormat::kFolded)
    return Error(input + ": " + ProfileFormatName(format) +
                 " carries function names, which .tprof cannot hold yet; "
                 "use 'tprof report " +
                 input + "' directly");
  return Status::Ok();
}

// --symfs and --binary, a local copy matched by the build-id its ELF notes give.
BinarySearchOptions LocatorOptions(const ImportRequest& request) {
  return {request.symfs, request.binaries, [](const std::string& path) {
            auto symbols = ElfSymbols::Load(path);
            return symbols.ok() ? symbols->build_id() : std::string();
          }};
}

}  // namespace

Status ImportProfile(const ImportRequest& request, const ViewMessages& messages) {
  const std::string& input = request.input;
  BinaryLocator locator(LocatorOptions(request));
  // --call-graph dwarf recordings: user stacks are unwound while the records are read, with
  // the binaries found as the symbols are.
  DwarfUnwinderOptions unwind_options;
  unwind_options.symfs = request.symfs;
  unwind_options.locate = [&locator](const std::string& recorded, const std::string& build_id) {
    return locator.Locate(recorded, build_id);
  };
  DwarfUnwinder unwinder(unwind_options);
  SourceOptions source_options;
  source_options.unwinder = &unwinder;
  auto source = ProfileSource::OpenFile(input, source_options);
  if (!source.ok()) return source.error();
  ProfileFormat format = (*source)->format();
  if (Status convertible = Convertible(input, format); !convertible.ok())
    return convertible.error();
  Metadata metadata = (*source)->metadata();
  auto output = PrepareOutput(request.output);
  if (!output.ok()) return output.error();
  std::optional<StreamOutput>& stream = output->stream;
  const std::string& written = output->written;
  PartialOutputRemover remover(written + ".partial");  // after the writer closes it
  WriterOptions writer_options;
  writer_options.background_compression = true;  // overlaps with reading the records
  auto writer = ProfileWriter::CreateFile(written, metadata, (*source)->events(), writer_options);
  if (!writer.ok()) return writer.error();
  // Sampled addresses are symbolized on another thread while the records are copied (the
  // symbols are embedded so the profile travels); kernel symbols load on a third when the
  // events may have sampled the kernel.
  SymbolizerOptions symbolizer_options;
  symbolizer_options.symfs = request.symfs;
  symbolizer_options.on_note = messages.symbol_note;
  Symbolizer symbolizer(symbolizer_options);
  PreloadKernelSymbolsIfSampled(**source, symbolizer);
  SymbolTableBuilder symbols(symbolizer, SymbolTableBuilder::ResolveOn::kWorkerThread);
  RelocatingCopier copier(**writer, locator, symbols);
  auto summary = (*source)->ReadRecords(copier);
  if (!summary.ok()) return summary.error().WithContext(input);
  // A profile made of part of its input would read as whole: import converts whole inputs
  // only, and leaves nothing behind (the partial file goes with the remover).
  if (!summary->complete)
    return Error(input + ": incomplete: " + summary->warning +
                 "; import converts whole files only ('tprof report " + input +
                 "' shows what can be read)");
  if (!copier.status().ok()) return copier.status().error();
  Status finished = FinishWithSymbols(
      **writer, symbols,
      {metadata.duration_ns, copier.last_time(),
       summary->unwinding.samples ? std::optional(summary->unwinding) : std::nullopt});
  if (!finished.ok()) return finished.error();
  remover.Completed();
  if (stream) {
    Status copied = stream->CopyFrom(written);
    if (!copied.ok()) return copied.error();
  }
  messages.InputWarning(input, summary->warning);
  messages.Summary(std::to_string(summary->samples) + " samples, " +
                   std::to_string(summary->records) + " records from " + ProfileFormatName(format) +
                   " " + input + "; " + std::to_string(copier.relocated()) +
                   " mappings pointed at local binaries; wrote " + request.output);
  for (const std::string& line : DescribeUnwinding(summary->unwinding))
    messages.Notice(input + ": unwinding: " + line);
  return Status::Ok();
}

}  // namespace tprof
