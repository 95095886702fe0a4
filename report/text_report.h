// Plain-text rendering of a function profile, perf-report style.
#pragma once

#include <ostream>

#include "core/analysis/call_relations.h"
#include "core/analysis/function_profile.h"
#include "core/analysis/timeline.h"
#include "core/model/profile.h"
#include "report/report_table_view.h"

namespace tprof {

struct TextReportOptions {
  double percent_limit = 0.0;  // hide rows whose self share is below this, in percent
  size_t max_rows = 0;         // 0: no limit
};

void RenderFunctionTable(const Metadata& metadata, const FunctionProfile& profile,
                         const TextReportOptions& options, std::ostream& out);

// The `tprof report` table: one row per sort key value, per sampled event Self% (and Total%
// with --children) and sample counts, group-read deltas, derived metrics, and a legend.
void RenderReportTable(const ReportTableView& view, std::ostream& out);

// `tprof report --timeline`: one block per interval, its samples, metric values and top
// functions.
void RenderTimeline(const TimelineView& view, std::ostream& out);
// A timeline's metric m as the text and CSV name it: "[g]" marks one from a group's windows.
std::string TimelineMetricTitle(const TimelineView& view, size_t m);

// `tprof report --callers/--callees FUNC`.
void RenderCallRelations(const CallRelations& relations, bool callers, bool callees,
                         std::ostream& out);

}  // namespace tprof
