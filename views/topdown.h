// `tprof topdown`'s two pipelines once the table and its metrics are chosen: counts saved by tprof
// or perf stat evaluated, and a live count (the groups scheduled onto the PMU's counters, counted
// on the target, evaluated per interval and in total).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/metrics/metric_table.h"
#include "pmu/counting_run.h"
#include "report/topdown_report.h"
#include "views/view_messages.h"

namespace tprof {

struct SavedTopdownRequest {
  const MetricTable* table = nullptr;
  std::vector<const Metric*> selected;
  std::string selection;  // as given (-M): to find the built-in tables the counts would fit
  std::string input;      // the saved counts' path
  TopdownFormat format = TopdownFormat::kText;
};

// Counts that none of the table's metrics evaluate from (another CPU's) are an error naming the
// built-in tables they fit: a table of n/a would read as "nothing to see".
Status WriteSavedTopdown(const SavedTopdownRequest& request, std::ostream& out);

struct LiveTopdownRequest {
  const MetricTable* table = nullptr;
  std::vector<const Metric*> selected;
  CountingRunOptions run;  // the target, the duration and the interval (-I)
  std::string pids;        // -p as given, for the intervals' heading
  std::string output;      // the total counts saved here (--output); empty: not saved
  bool summary = false;    // with -I: the whole run's metrics too
  TopdownFormat format = TopdownFormat::kText;
};

// The counting run's notes go to messages.note.
Status WriteLiveTopdown(const LiveTopdownRequest& request, std::ostream& out,
                        const ViewMessages& messages);

}  // namespace tprof
