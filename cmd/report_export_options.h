// The options of `tprof report`'s exports (views/report_exports.h): folded stacks, pprof,
// speedscope, annotate.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "views/report_exports.h"

namespace tprof {

void AddReportExportOptions(CLI::App& app, ReportExportRequest& options);

// The folded-style options that go only together: what is wrong with the request, if anything.
std::optional<std::string> FoldedStyleMisuse(const ReportExportRequest& options);

}  // namespace tprof
