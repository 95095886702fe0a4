#include "report/report_table_view.h"

#include <algorithm>

#include "report/printf.h"

namespace tprof {

double Percent(uint64_t part, uint64_t whole) {
  return whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

std::string OffCpuLine(const ReportTableView& view) {
  if (!view.off_cpu) return "";
  const OffCpuReasons& off = *view.off_cpu;
  // perf record --off-cpu's samples are sums per thread and stack, not intervals.
  const bool summed = view.metadata && view.metadata->off_cpu_summed;
  std::string line =
      Printf("off-cpu: %.3f ms %s %llu %s", static_cast<double>(off.total_ns()) / 1e6,
             summed ? "summed over" : "in", static_cast<unsigned long long>(off.intervals()),
             summed ? "stacks (perf record --off-cpu)" : "intervals");
  const char* separator = ": ";
  for (const OffCpuShare& share : off.Shares()) {
    line += Printf("%s%s %.3f ms (%.1f%%)", separator, OffCpuReasonName(share.reason),
                   static_cast<double>(share.ns) / 1e6, Percent(share.ns, off.total_ns()));
    separator = ", ";
  }
  return line;
}

std::string KernelWorkLine(const ReportTableView& view) {
  if (view.kernel_rows)
    return "kernel work: kernel functions are rows of their own (--kernel-rows)";
  if (!view.kernel_credit || view.kernel_credit->kernel_samples == 0) return "";
  const KernelCreditStatistics& k = *view.kernel_credit;
  std::string line =
      Printf("kernel work: %llu of %llu samples (%.1f%%) were in the kernel; ",
             static_cast<unsigned long long>(k.kernel_samples),
             static_cast<unsigned long long>(k.samples), Percent(k.kernel_samples, k.samples));
  if (k.credited())
    line += Printf("%llu credited to the user function that entered it (a fault, a system call)",
                   static_cast<unsigned long long>(k.credited()));
  if (k.without_user_context)
    line += Printf(
        "%s%llu shown as kernel functions (no user context: kernel threads, or "
        "recorded without a call graph or user registers)",
        k.credited() ? ", " : "", static_cast<unsigned long long>(k.without_user_context));
  return line + "; --kernel-rows shows kernel functions as rows";
}

std::string LowConfidenceRule() {
  return "\u00b1 is a value's 95% interval, from the spread of the row's credited windows "
         "(group deltas) or its sample counts (sampled periods, Poisson); a value is "
         "low-confidence (marked ~) when its interval reaches further than " +
         std::to_string(static_cast<int>(100 * kMaxConfidentRelativeHalfWidth)) +
         "% of it either side or cannot be estimated (\u00b1?: fewer than 2 credited windows, "
         "or an event without samples)";
}

std::vector<const ReportRow*> VisibleRows(const ReportTableView& view, size_t* beyond_limit) {
  const ReportTable& table = *view.table;
  const size_t order = table.FirstSampledEvent();
  std::vector<const ReportRow*> rows;
  for (const ReportRow& row : table.rows) {
    bool has_self = false, above = view.percent_limit <= 0;
    for (size_t e = 0; e < table.events.size(); ++e) {
      if (!table.IsSampled(e)) continue;
      has_self |= row.self_samples[e] != 0;
      uint64_t part = view.children ? row.total_period[e] : row.self_period[e];
      above |= Percent(part, table.total_period[e]) >= view.percent_limit;
    }
    // Without --children, rows that only appear inside callchains have nothing to show.
    if (!view.children && !has_self) continue;
    if (above) rows.push_back(&row);
  }
  if (view.children)
    std::stable_sort(rows.begin(), rows.end(), [order](const ReportRow* a, const ReportRow* b) {
      return a->total_period[order] > b->total_period[order];
    });
  if (beyond_limit) *beyond_limit = 0;
  if (view.max_rows && rows.size() > view.max_rows) {
    if (beyond_limit) *beyond_limit = rows.size() - view.max_rows;
    rows.resize(view.max_rows);
  }
  return rows;
}

}  // namespace tprof
