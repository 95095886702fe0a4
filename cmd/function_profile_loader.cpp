#include "cmd/function_profile_loader.h"

#include "cmd/opened_profile.h"

namespace tprof {

Result<LoadedFunctionProfile> LoadFunctionProfile(const std::string& path,
                                                  const ProfileLoadOptions& options) {
  auto opened = OpenedProfile::Open(path, {options.symfs, options.binaries, nullptr, "diff"});
  if (!opened.ok()) return opened.error();
  ProfileSource& source = (*opened)->source();
  FunctionProfileBuilder builder(source.events(), (*opened)->resolver(), options.inline_mode);
  auto summary = source.ReadRecords(builder);
  if (!summary.ok()) return summary.error().WithContext(path);
  LoadedFunctionProfile loaded;
  loaded.metadata = source.metadata();
  loaded.profile = builder.Finish();
  loaded.warning = summary->warning;
  if (!summary->complete)
    loaded.incomplete = summary->warning.empty() ? "the file was cut short" : summary->warning;
  else if (summary->samples == 0)
    loaded.incomplete = "it holds no samples";
  return loaded;
}

}  // namespace tprof
