// What the text, JSON and CSV renderings of a report table share: the choice and order of the
// rows shown (--children, --percent-limit, --limit) and the legend's wording, so that the three
// outputs always show the same rows with the same totals.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/analysis/call_relations.h"
#include "core/analysis/derived_metrics.h"
#include "core/analysis/off_cpu_reasons.h"
#include "core/analysis/report_table.h"
#include "core/model/kernel_entry_credit.h"
#include "core/model/profile.h"
#include "core/model/user_stack_unwinder.h"

namespace tprof {

struct ReportTableView {
  const Metadata* metadata = nullptr;
  const ReportTable* table = nullptr;
  const DerivedMetrics* metrics = nullptr;
  std::string input;           // the file read
  std::string metric_table;    // how a metric table was recognised; empty: none
  std::string filter_summary;  // the filters given, one line; empty: none
  std::string stack_hint;      // why stacks are short (ShortStackHint), one line; empty: none
  SampleFilter filter;
  bool children = false;       // show Total% and order by it
  double percent_limit = 0.0;  // hide rows whose share of every event is below this
  size_t max_rows = 0;         // 0: no limit
  // How the stack copies of a --call-graph dwarf recording were unwound; no samples when the
  // input had none.
  UnwindStatistics unwinding;
  // How samples taken in the kernel were shown: credited to the user function that entered the
  // kernel (set: how many), or as kernel rows (nullopt; kernel_rows: the user asked for them).
  std::optional<KernelCreditStatistics> kernel_credit;
  bool kernel_rows = false;
  // tprof record --off-cpu: why the threads were off the CPU; null when the profile has no
  // off-cpu event.
  const OffCpuReasons* off_cpu = nullptr;
  // The latency view: on-CPU samples weighted by 1 / (threads of their process running then).
  bool latency = false;
  // Every note of the header on its own line, and what each column means (report -v); else the
  // compact header: what was recorded and the notes that change how to read the table.
  bool full_header = false;
};

// One line on the off-CPU time and its reasons; empty without an off-cpu event.
std::string OffCpuLine(const ReportTableView& view);

// One line on how kernel samples are shown; empty when the profile has none and nothing was asked.
std::string KernelWorkLine(const ReportTableView& view);

// The rows to show, ordered by the first sampled event's self (or, with children, total)
// period.
// `beyond_limit`, when given, gets the number of rows --limit left out.
std::vector<const ReportRow*> VisibleRows(const ReportTableView& view,
                                          size_t* beyond_limit = nullptr);

double Percent(uint64_t part, uint64_t whole);

// The low-confidence rule, as the legend and --help state it.
std::string LowConfidenceRule();

// Schema version of --json output (docs/report-schema.md).
inline constexpr int kReportSchemaVersion = 1;

}  // namespace tprof
