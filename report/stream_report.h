// Rendering of hot streams and basic blocks (`tprof stream`) and of their comparison between two
// profiles (`tprof diff --stream`), as text (perf diff --stream's side-by-side layout) or JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "core/analysis/hot_streams.h"
#include "core/analysis/stream_matcher.h"

namespace tprof {

struct StreamReportOptions {
  size_t top = 10;
  bool blocks = false;  // the hot basic blocks rather than the streams
};

// "function file:line" (basic blocks: "function file:line-end"), file by base name; without a
// line, "function @0xoffset" ("@0xstart-0xend").
std::string FormatEntry(const StreamEntry& entry);

void RenderStreams(const StreamProfile& profile, const StreamReportOptions& options,
                   std::ostream& out);
nlohmann::json StreamsJson(const StreamProfile& profile, const StreamReportOptions& options);

void RenderStreamComparison(const StreamProfile& old_profile, const StreamProfile& new_profile,
                            const StreamComparison& comparison, std::ostream& out);
nlohmann::json StreamComparisonJson(const StreamProfile& old_profile,
                                    const StreamProfile& new_profile,
                                    const StreamComparison& comparison);

void RenderBlockComparison(const StreamProfile& old_profile, const StreamProfile& new_profile,
                           const BlockComparison& comparison, std::ostream& out);
nlohmann::json BlockComparisonJson(const StreamProfile& old_profile,
                                   const StreamProfile& new_profile,
                                   const BlockComparison& comparison);

}  // namespace tprof
