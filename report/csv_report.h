// `tprof report --csv`: one header line, then one line per row (RFC 4180 quoting, LF line ends);
// columns in docs/report-schema.md.
#pragma once

#include <ostream>

#include "core/analysis/call_relations.h"
#include "core/analysis/timeline.h"
#include "report/report_table_view.h"

namespace tprof {

void RenderReportCsv(const ReportTableView& view, std::ostream& out);
void RenderCallRelationsCsv(const CallRelations& relations, std::ostream& out);
// One line per interval and function (function empty: the interval's total, with its metrics).
void RenderTimelineCsv(const TimelineView& view, std::ostream& out);

}  // namespace tprof
