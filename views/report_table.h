// `tprof report`'s table: the functions of a profile with their shares, intervals and derived
// metrics (text, --json or --csv), and --callers/--callees, one function's callers and callees.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "core/analysis/report_table.h"
#include "core/base/error.h"
#include "core/model/metric_expression.h"
#include "views/opened_profile.h"
#include "views/view_messages.h"

namespace tprof {

enum class TableFormat { kText, kJson, kCsv };

struct ReportTableRequest {
  std::string input;  // the profile's name, in messages and the header
  std::vector<SortKey> sort;
  // The filters, checked by the caller (SampleSelector::Create accepts them), and the line the
  // header shows for them; a --time range kept no sample: ViewOutcome::time_range_empty.
  SampleFilter filter;
  std::string filter_summary;
  InlineMode inline_mode = InlineMode::kInnermost;
  std::vector<MetricFormula> user_metrics;  // --metric, parsed over the profile's events
  TableFormat format = TableFormat::kText;
  // --callers / --callees: one function's (both set: the same function, both shown).
  std::string callers, callees;
  bool children = false;
  bool kernel_rows = false;
  bool latency = false;
  bool full_header = false;  // -v
  double percent_limit = 0;
  size_t max_rows = 0;
};

// Reads `opened` once into the table (or the call relations) and writes it on `out`.
Result<ViewOutcome> WriteReportTable(const ReportTableRequest& request, OpenedProfile& opened,
                                     std::ostream& out, const ViewMessages& messages);

}  // namespace tprof
