// Plain-text rendering of a function profile, perf-report style.
#pragma once

#include <ostream>

#include "core/function_profile.h"
#include "core/profile.h"

namespace tprof {

struct TextReportOptions {
  double percent_limit = 0.0;  // hide rows whose self share is below this, in percent
  size_t max_rows = 0;         // 0: no limit
};

void RenderFunctionTable(const Metadata& metadata, const FunctionProfile& profile,
                         const TextReportOptions& options, std::ostream& out);

}  // namespace tprof
