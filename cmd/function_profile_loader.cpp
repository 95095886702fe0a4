#include "cmd/function_profile_loader.h"

#include "core/perf_data_symfs.h"
#include "core/profile_source.h"
#include "symbolize/dwarf_unwinder.h"
#include "symbolize/elf_symbols.h"
#include "symbolize/symbolizer.h"

namespace tprof {

Result<LoadedFunctionProfile> LoadFunctionProfile(const std::string& path,
                                                  const ProfileLoadOptions& options) {
  DwarfUnwinderOptions unwind_options;
  unwind_options.symfs = options.symfs;
  DwarfUnwinder unwinder(unwind_options);
  SymbolizerOptions symbolizer_options;
  symbolizer_options.symfs = options.symfs;
  Symbolizer symbolizer(symbolizer_options);
  BinaryLocator locator({options.symfs, options.binaries, [](const std::string& binary) {
                           auto symbols = ElfSymbols::Load(binary);
                           return symbols.ok() ? symbols->build_id() : std::string();
                         }});
  LocatingResolver located(symbolizer, locator);
  FrameResolver* live = locator.active() ? static_cast<FrameResolver*>(&located) : &symbolizer;
  SourceOptions source_options;
  source_options.unwinder = &unwinder;
  source_options.symbol_fallback = live;
  auto source = ProfileSource::OpenFile(path, source_options);
  if (!source.ok()) return source.error();
  FrameResolver* resolver = (*source)->embedded_frames();
  if (!resolver) resolver = live;
  FunctionProfileBuilder builder((*source)->events(), *resolver);
  auto summary = (*source)->ReadRecords(builder);
  if (!summary.ok()) return summary.error().WithContext(path);
  LoadedFunctionProfile loaded;
  loaded.metadata = (*source)->metadata();
  loaded.profile = builder.Finish();
  loaded.warning = summary->warning;
  return loaded;
}

}  // namespace tprof
