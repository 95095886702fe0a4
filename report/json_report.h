// `tprof report --json`: the report table or the callers/callees view as one JSON document,
// schema in docs/report-schema.md (versioned by "schema_version").
#pragma once

#include <ostream>

#include "core/analysis/call_relations.h"
#include "core/analysis/timeline.h"
#include "report/report_table_view.h"

namespace tprof {

void RenderReportJson(const ReportTableView& view, std::ostream& out);
void RenderCallRelationsJson(const CallRelations& relations, std::ostream& out);
void RenderTimelineJson(const TimelineView& view, std::ostream& out);

}  // namespace tprof
