#include "views/report_timeline.h"

#include <algorithm>

#include "core/analysis/function_profile.h"
#include "core/analysis/timeline.h"
#include "core/base/visible_text.h"
#include "report/csv_report.h"
#include "report/json_report.h"
#include "report/text_report.h"

namespace tprof {

Result<ViewOutcome> WriteReportTimeline(const ReportTimelineRequest& request, OpenedProfile& opened,
                                        std::ostream& out, const ViewMessages& messages) {
  ProfileSource& source = opened.source();
  if (source.events().empty()) return Error(request.input + ": the profile has no events");
  const SampleFilter& filter = request.filter;
  const uint64_t interval_ns = request.interval_ns > 0
                                   ? request.interval_ns
                                   : DefaultTimelineIntervalNs(source.metadata().duration_ns);
  auto selector = SampleSelector::Create(filter, source.metadata().start_timestamp);
  if (!selector.ok()) return Error::BadRequest(selector.error().message());
  FunctionProfileBuilder builder(source.events(), opened.resolver(), request.inline_mode);
  // The intervals count from the range's start when --time gives one.
  const uint64_t range_start_ns =
      filter.time_start ? static_cast<uint64_t>(*filter.time_start * 1e9) : 0;
  builder.KeepTimeline(
      source.metadata().start_timestamp ? source.metadata().start_timestamp + range_start_ns : 0,
      interval_ns);
  SampleSelectingVisitor selecting(builder, std::move(selector).value());
  auto summary = source.ReadRecords(selecting);
  if (!summary.ok()) return summary.error().WithContext(request.input);
  if (!summary->complete && summary->samples == 0)
    return Error(request.input + ": no samples could be read: " + summary->warning);
  messages.InputWarning(request.input, summary->warning);
  ViewOutcome outcome{summary->complete};
  if ((filter.time_start || filter.time_end) && selecting.in_time() == 0) {
    outcome.time_range_empty = true;
    return outcome;
  }
  if (selecting.kept() == 0) {
    outcome.nothing_kept = true;
    return outcome;
  }
  FunctionProfile profile = builder.Finish();
  auto timeline = BuildTimeline(profile, request.ranking_event, request.top, request.user_metrics);
  if (!timeline.ok()) return timeline.error();
  // The intervals counted from the range's start, named in seconds from the profile's, the
  // last one ending where the range does.
  for (TimelinePoint& point : timeline->points) {
    point.start_ns += range_start_ns;
    point.end_ns += range_start_ns;
    if (filter.time_end)
      point.end_ns = std::min(point.end_ns, static_cast<uint64_t>(*filter.time_end * 1e9));
  }
  VisibleTextStream visible(out);  // names are bytes (core/base/visible_text.h)
  if (request.format == TableFormat::kJson)
    RenderTimelineJson(*timeline, visible);
  else if (request.format == TableFormat::kCsv)
    RenderTimelineCsv(*timeline, visible);
  else
    RenderTimeline(*timeline, visible);
  return outcome;
}

}  // namespace tprof
