// `tprof report --timeline`: the samples the filters keep, counted per interval of time, with
// each interval's top functions (text, --json or --csv).
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "core/analysis/report_table.h"
#include "core/base/error.h"
#include "core/model/metric_expression.h"
#include "views/opened_profile.h"
#include "views/report_table.h"
#include "views/view_messages.h"

namespace tprof {

struct ReportTimelineRequest {
  std::string input;  // the profile's name, in messages
  // Checked by the caller (SampleSelector::Create accepts it); rows are not filtered here.
  SampleFilter filter;
  InlineMode inline_mode = InlineMode::kInnermost;
  std::vector<MetricFormula> user_metrics;
  TableFormat format = TableFormat::kText;
  size_t ranking_event = 0;  // the event that orders each interval's functions
  uint64_t interval_ns = 0;  // 0: DefaultTimelineIntervalNs of the profile's length
  size_t top = 5;            // functions an interval; 0: every one
};

Result<ViewOutcome> WriteReportTimeline(const ReportTimelineRequest& request, OpenedProfile& opened,
                                        std::ostream& out, const ViewMessages& messages);

}  // namespace tprof
