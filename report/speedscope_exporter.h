// speedscope's file format (https://www.speedscope.app/file-format-schema.json) from a stack
// profile: one "sampled" profile per event that has samples, every distinct stack once with its
// summed period as weight, frames shared between the profiles. Inlined calls are frames of their
// own. Open the file at speedscope.app or with the `speedscope` command.
#pragma once

#include <string>

#include "core/analysis/stack_profile.h"
#include "core/model/profile.h"

namespace tprof {

std::string ExportSpeedscope(const Metadata& metadata, const StackProfile& profile);

}  // namespace tprof
