#include "views/report_table.h"

#include <algorithm>
#include <optional>

#include "core/analysis/call_relations.h"
#include "core/analysis/derived_metrics.h"
#include "core/analysis/off_cpu_reasons.h"
#include "core/analysis/short_stack_census.h"
#include "core/base/visible_text.h"
#include "core/metrics/recorded_metrics.h"
#include "report/csv_report.h"
#include "report/json_report.h"
#include "report/text_report.h"

namespace tprof {
namespace {

// Stack copies that stand for the user frames (--call-graph dwarf), not ones that only mend
// a frame-pointer chain (-g).
bool RecordedStackCopies(const std::vector<EventDesc>& events) {
  for (const EventDesc& e : events)
    if (e.sample_stack_user && e.exclude_callchain_user) return true;
  return false;
}

Result<ViewOutcome> WriteCallRelations(const ReportTableRequest& request, OpenedProfile& opened,
                                       std::ostream& out, const ViewMessages& messages) {
  ProfileSource& source = opened.source();
  const std::string& function = request.callers.empty() ? request.callees : request.callers;
  auto builder =
      CallRelationsBuilder::Create(source.events(), opened.resolver(), function, request.filter,
                                   source.metadata().start_timestamp, request.inline_mode);
  if (!builder.ok()) return Error::BadRequest(builder.error().message());
  auto summary = source.ReadRecords(**builder);
  if (!summary.ok()) return summary.error().WithContext(request.input);
  messages.InputWarning(request.input, summary->warning);
  CallRelations relations = (*builder)->Finish();
  VisibleTextStream visible(out);  // names are bytes (core/base/visible_text.h)
  if (request.format == TableFormat::kJson)
    RenderCallRelationsJson(relations, visible);
  else if (request.format == TableFormat::kCsv)
    RenderCallRelationsCsv(relations, visible);
  else
    RenderCallRelations(relations, !request.callers.empty(), !request.callees.empty(), visible);
  return ViewOutcome{summary->complete};
}

}  // namespace

Result<ViewOutcome> WriteReportTable(const ReportTableRequest& request, OpenedProfile& opened,
                                     std::ostream& out, const ViewMessages& messages) {
  if (!request.callers.empty() || !request.callees.empty())
    return WriteCallRelations(request, opened, out, messages);
  ProfileSource& source = opened.source();
  FrameResolver& resolver = opened.resolver();
  auto builder = ReportTableBuilder::Create(source.events(), resolver, request.sort, request.filter,
                                            source.metadata().start_timestamp, request.inline_mode);
  if (!builder.ok()) return Error::BadRequest(builder.error().message());
  auto summary = source.ReadRecords(**builder);
  if (!summary.ok()) return summary.error().WithContext(request.input);
  // A damaged file that gave no samples has no answer to show: an empty table would read as
  // "nothing matched the filters".
  if (!summary->complete && summary->samples == 0)
    return Error(request.input + ": no samples could be read: " + summary->warning);
  messages.InputWarning(request.input, summary->warning);
  ReportTable table = (*builder)->Finish();
  const bool time_given = request.filter.time_start || request.filter.time_end;
  if (time_given && std::all_of(table.total_samples.begin(), table.total_samples.end(),
                                [](uint64_t n) { return n == 0; }))
    return ViewOutcome{summary->complete, /*time_range_empty=*/true};
  // Why threads were off the CPU is in the kernel frames that the table credits away: read
  // from the input as recorded.
  std::optional<OffCpuReasons> off_cpu;
  const OffCpuReasons* classified_off_cpu = opened.classified_off_cpu();
  if (const int event = OffCpuEventIndex(source.events()); event >= 0 && !classified_off_cpu) {
    off_cpu.emplace(resolver, static_cast<size_t>(event));
    auto read = opened.recorded_source().ReadRecords(*off_cpu);
    if (!read.ok()) return read.error().WithContext(request.input);
  }
  auto recorded =
      MatchRecordedMetricTable(table.events, source.metadata().cpu, BuiltinMetricTables());
  auto metrics =
      DerivedMetrics::Plan(table, recorded ? recorded->formulas : std::vector<MetricFormula>{},
                           recorded ? recorded->table->name : "", request.user_metrics);
  if (!metrics.ok()) return metrics.error();
  ReportTableView view;
  view.metadata = &source.metadata();
  view.table = &table;
  view.metrics = &metrics.value();
  view.input = request.input;
  view.metric_table = recorded ? recorded->how : "";
  view.filter = request.filter;
  view.filter_summary = request.filter_summary;
  // A DWARF-unwound profile's short stacks have other causes than missing frame pointers.
  if (!RecordedStackCopies(source.events()))
    view.stack_hint = ShortStackHint(table.short_stacks).value_or("");
  view.children = request.children;
  view.percent_limit = request.percent_limit;
  view.max_rows = request.max_rows;
  view.unwinding = summary->unwinding;
  view.kernel_credit = summary->kernel_credit;
  view.kernel_rows = request.kernel_rows;
  view.latency = request.latency;
  view.full_header = request.full_header;
  view.off_cpu = off_cpu ? &*off_cpu : classified_off_cpu;
  VisibleTextStream visible(out);  // names are bytes (core/base/visible_text.h)
  if (request.format == TableFormat::kJson)
    RenderReportJson(view, visible);
  else if (request.format == TableFormat::kCsv)
    RenderReportCsv(view, visible);
  else
    RenderReportTable(view, visible);
  return ViewOutcome{summary->complete};
}

}  // namespace tprof
