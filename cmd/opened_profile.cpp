#include "cmd/opened_profile.h"

#include "symbolize/elf_symbols.h"

namespace tprof {
namespace {

DwarfUnwinderOptions UnwinderOptions(const ProfileOpenOptions& options) {
  DwarfUnwinderOptions unwind;
  unwind.symfs = options.symfs;
  return unwind;
}

SymbolizerOptions SymbolizerOptionsFor(const ProfileOpenOptions& options) {
  SymbolizerOptions symbolizer;
  symbolizer.symfs = options.symfs;
  if (options.on_note) symbolizer.on_note = options.on_note;
  return symbolizer;
}

std::string BuildIdOfFile(const std::string& path) {
  auto symbols = ElfSymbols::Load(path);
  return symbols.ok() ? symbols->build_id() : std::string();
}

}  // namespace

OpenedProfile::OpenedProfile(const ProfileOpenOptions& options)
    : unwinder_(UnwinderOptions(options)),
      symbolizer_(SymbolizerOptionsFor(options)),
      locator_({options.symfs, options.binaries, BuildIdOfFile}),
      located_(symbolizer_, locator_) {}

FrameResolver& OpenedProfile::live_resolver() {
  return locator_.active() ? static_cast<FrameResolver&>(located_) : symbolizer_;
}

FrameResolver& OpenedProfile::resolver() {
  FrameResolver* embedded = source_->embedded_frames();
  return embedded ? *embedded : live_resolver();
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
  return opened;
}

}  // namespace tprof
