// Reads any profile tprof understands into a FunctionProfile, symbolized as `tprof report` does:
// embedded symbols (or a text input's names) first, then the binaries on this machine, local
// copies named with --binary, or a --symfs tree. Shared by the commands that compare profiles.
#pragma once

#include <string>
#include <vector>

#include "core/analysis/function_profile.h"
#include "core/base/error.h"
#include "core/model/profile.h"

namespace tprof {

struct ProfileLoadOptions {
  std::string symfs;
  std::vector<std::string> binaries;
  InlineMode inline_mode = InlineMode::kInnermost;
};

struct LoadedFunctionProfile {
  Metadata metadata;
  FunctionProfile profile;
  std::string warning;  // one line (e.g. the input was cut short); empty when none
  // Why the profile cannot stand for the run it recorded (cut short, no samples); empty when
  // it can. A gate over such a profile fails rather than judge it.
  std::string incomplete;
};

// Errors carry the path.
Result<LoadedFunctionProfile> LoadFunctionProfile(const std::string& path,
                                                  const ProfileLoadOptions& options);

}  // namespace tprof
