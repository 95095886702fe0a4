#include "views/opened_profile.h"

#include <algorithm>
#include <string_view>

#include "core/analysis/latency_weights.h"
#include "core/analysis/off_cpu_reasons.h"
#include "core/model/kernel_entry_credit.h"
#include "symbolize/elf_symbols.h"

namespace tprof {
namespace {

DwarfUnwinderOptions UnwinderOptions(const ProfileOpenOptions& options, BinaryLocator& locator) {
  DwarfUnwinderOptions unwind;
  unwind.symfs = options.symfs;
  unwind.locate = [&locator](const std::string& recorded, const std::string& build_id) {
    return locator.Locate(recorded, build_id);
  };
  return unwind;
}

// Passes everything through; says the unwinding statistics of the first read that has any.
class UnwindReportingSource : public ForwardingSource {
 public:
  UnwindReportingSource(ProfileSource& inner, const ViewMessages& messages, std::string input)
      : ForwardingSource(inner), messages_(messages), input_(std::move(input)) {}
  Result<SourceSummary> ReadRecords(RecordVisitor& visitor) override {
    auto summary = inner().ReadRecords(visitor);
    if (summary.ok() && !reported_ && summary->unwinding.samples) {
      for (const std::string& line : DescribeUnwinding(summary->unwinding))
        messages_.Notice(input_ + ": unwinding: " + line);
      reported_ = true;
    }
    return summary;
  }

 private:
  const ViewMessages& messages_;
  std::string input_;
  bool reported_ = false;
};

// Reads through KernelEntryCredit, and says in the summary how many samples it credited.
class KernelCreditingSource : public ForwardingSource {
 public:
  using ForwardingSource::ForwardingSource;
  Result<SourceSummary> ReadRecords(RecordVisitor& visitor) override {
    KernelEntryCredit credit(inner().events(), inner().metadata().architecture, visitor);
    auto summary = inner().ReadRecords(credit);
    if (summary.ok()) summary->kernel_credit = credit.statistics();
    return summary;
  }
};

// Reads twice: first when each thread ran (its off-CPU intervals), then every record with the
// on-CPU samples weighted by 1 / (threads of their process running then). The first pass is
// made once, on the first read.
class LatencyWeightedSource : public ForwardingSource {
 public:
  LatencyWeightedSource(ProfileSource& inner, uint32_t off_cpu_event)
      : ForwardingSource(inner), off_cpu_event_(off_cpu_event), running_(off_cpu_event) {}
  Result<SourceSummary> ReadRecords(RecordVisitor& visitor) override {
    if (!counted_) {
      auto first = inner().ReadRecords(running_);
      if (!first.ok()) return first.error();
      running_.Finish();
      counted_ = true;
    }
    LatencyWeighting weighting(running_, inner().events(), off_cpu_event_, visitor);
    return inner().ReadRecords(weighting);
  }

 private:
  uint32_t off_cpu_event_;
  RunningThreads running_;
  bool counted_ = false;
};

// The off-cpu event split by reason (OffCpuReasonSplitter), the reasons present found by a first
// pass over the profile when it is opened.
class OffCpuReasonSource : public ForwardingSource {
 public:
  static Result<std::unique_ptr<OffCpuReasonSource>> Open(ProfileSource& inner,
                                                          FrameResolver& resolver,
                                                          const std::string& path) {
    const int off_cpu = OffCpuEventIndex(inner.events());
    if (off_cpu < 0)
      return Error::BadRequest(
          "--off-cpu-reasons splits the off-cpu event by why each thread waited: " + path +
          " has no off-cpu event (record with --off-cpu)");
    auto reasons = std::make_unique<OffCpuReasons>(resolver, static_cast<size_t>(off_cpu));
    auto read = inner.ReadRecords(*reasons);
    if (!read.ok()) return read.error().WithContext(path);
    OffCpuReasonEvents split =
        AppendOffCpuReasonEvents(inner.events(), static_cast<size_t>(off_cpu), reasons->Shares());
    return std::unique_ptr<OffCpuReasonSource>(new OffCpuReasonSource(
        inner, resolver, static_cast<size_t>(off_cpu), std::move(split), std::move(reasons)));
  }
  const std::vector<EventDesc>& events() const override { return split_.events; }
  // The whole profile's reasons, as the first pass found them.
  const OffCpuReasons& classified() const { return *classified_; }
  Result<SourceSummary> ReadRecords(RecordVisitor& visitor) override {
    OffCpuReasonSplitter splitter(resolver_, off_cpu_event_, split_.event_of_reason, visitor);
    return inner().ReadRecords(splitter);
  }

 private:
  OffCpuReasonSource(ProfileSource& inner, FrameResolver& resolver, size_t off_cpu_event,
                     OffCpuReasonEvents split, std::unique_ptr<OffCpuReasons> classified)
      : ForwardingSource(inner),
        resolver_(resolver),
        off_cpu_event_(off_cpu_event),
        split_(std::move(split)),
        classified_(std::move(classified)) {}
  FrameResolver& resolver_;
  size_t off_cpu_event_;
  OffCpuReasonEvents split_;
  std::unique_ptr<OffCpuReasons> classified_;
};

SymbolizerOptions SymbolizerOptionsFor(const ProfileOpenOptions& options, ModuleNotes& notes) {
  SymbolizerOptions symbolizer;
  symbolizer.symfs = options.symfs;
  if (options.on_note)
    symbolizer.on_note = options.on_note;
  else
    symbolizer.on_note = [&notes](const std::string& note) { notes.Add(note); };
  return symbolizer;
}

constexpr std::string_view kMissingPrefix = "no usable file for ";

std::string BuildIdOfFile(const std::string& path) {
  auto symbols = ElfSymbols::Load(path);
  return symbols.ok() ? symbols->build_id() : std::string();
}

}  // namespace

void ModuleNotes::Add(const std::string& note) {
  if (!verbose_ && note.starts_with(kMissingPrefix)) {
    const size_t end = note.find(';');
    missing_.push_back(note.substr(kMissingPrefix.size(), end - kMissingPrefix.size()));
    return;
  }
  if (say_) say_(note);
}

void ModuleNotes::Flush() {
  if (missing_.empty()) return;
  // By name: the order modules are first looked up in is the order of a report's work, which
  // batches and threads change, not anything the user asked for.
  std::sort(missing_.begin(), missing_.end());
  std::string names;
  const size_t shown = std::min<size_t>(missing_.size(), 3);
  for (size_t i = 0; i < shown; ++i) names += (i ? ", " : "") + missing_[i];
  if (missing_.size() > shown) names += " and " + std::to_string(missing_.size() - shown) + " more";
  if (say_)
    say_("no usable file for " + std::to_string(missing_.size()) +
         (missing_.size() == 1 ? " module (" : " modules (") + names +
         "); their addresses are shown as [module+0xoffset] (-v lists each)");
  missing_.clear();
}

OpenedProfile::OpenedProfile(const ProfileOpenOptions& options)
    : notes_(options.verbose, options.messages.symbol_note),
      locator_({options.symfs, options.binaries, BuildIdOfFile}),
      unwinder_(UnwinderOptions(options, locator_)),
      symbolizer_(SymbolizerOptionsFor(options, notes_)),
      located_(symbolizer_, locator_),
      shared_live_(locator_.active() ? static_cast<FrameResolver&>(located_) : symbolizer_) {}

FrameResolver& OpenedProfile::live_resolver() { return shared_live_; }

FrameResolver& OpenedProfile::resolver() {
  FrameResolver* embedded = source_->embedded_frames();
  if (!embedded) return live_resolver();
  if (!shared_embedded_) shared_embedded_ = std::make_unique<SynchronizedFrameResolver>(*embedded);
  return *shared_embedded_;
}

DwarfModule* OpenedProfile::OpenModule(const std::string& module, const std::string& build_id) {
  if (locator_.active()) {
    const std::string& local = locator_.Locate(module, build_id);
    if (!local.empty()) return symbolizer_.ModuleFor(local, "");
  }
  return symbolizer_.ModuleFor(module, build_id);
}

Result<std::unique_ptr<OpenedProfile>> OpenedProfile::Open(const std::string& path,
                                                           const ProfileOpenOptions& options) {
  std::unique_ptr<OpenedProfile> opened(new OpenedProfile(options));
  SourceOptions source_options;
  source_options.unwinder = &opened->unwinder_;
  source_options.symbol_fallback = &opened->live_resolver();  // what embedded symbols lack
  auto source = ProfileSource::OpenFile(path, source_options);
  if (!source.ok()) return source.error();
  opened->source_ = std::move(source).value();
  opened->messages_ = options.messages;
  opened->path_ = path;
  if (options.latency) {
    const int off_cpu = OffCpuEventIndex(opened->source_->events());
    const std::string why =
        "--latency weighs each sample by the threads of its process running with it, which "
        "only the switches tell: " +
        path;
    if (off_cpu < 0)
      return Error::BadRequest(why + " has no off-cpu event (record with --off-cpu)");
    if (opened->source_->metadata().off_cpu_summed)
      return Error::BadRequest(
          why +
          " holds each thread's off-CPU time summed per stack (perf record --off-cpu), not when "
          "it waited (record with tprof record --off-cpu, or perf record --switch-events -e "
          "context-switches -c 1 -g)");
    opened->latency_off_cpu_event_ = static_cast<uint32_t>(off_cpu);
  }
  if (options.off_cpu_reasons ||
      (options.off_cpu_reasons_when_present && OffCpuEventIndex(opened->source_->events()) >= 0)) {
    auto reasons = OffCpuReasonSource::Open(*opened->source_, opened->resolver(), path);
    if (!reasons.ok()) return reasons.error();
    opened->classified_off_cpu_ = &(*reasons)->classified();
    opened->reasons_ = std::move(reasons).value();
  }
  opened->ChainSources(options.credit_kernel_to_user);
  return opened;
}

void OpenedProfile::ChainSources(bool credit_kernel_to_user) {
  ProfileSource* read = reasons_ ? reasons_.get() : source_.get();
  crediting_.reset();
  if (credit_kernel_to_user) {
    crediting_ = std::make_unique<KernelCreditingSource>(*read);
    read = crediting_.get();
  }
  latency_.reset();
  if (latency_off_cpu_event_) {
    latency_ = std::make_unique<LatencyWeightedSource>(*read, *latency_off_cpu_event_);
    read = latency_.get();
  }
  reporting_ = std::make_unique<UnwindReportingSource>(*read, messages_, path_);
}

bool OpenedProfile::records_user_context() const {
  return RecordsUserContext(source_->events(), source_->metadata().architecture);
}

void OpenedProfile::CreditKernelWorkToUser() {
  if (!crediting_) ChainSources(true);
}

}  // namespace tprof
