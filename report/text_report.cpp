#include "report/text_report.h"

#include <linux/perf_event.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace tprof {
namespace {

std::string Format(const char* format, auto... args) {
  char buf[512];
  std::snprintf(buf, sizeof buf, format, args...);
  return buf;
}

}  // namespace

void RenderFunctionTable(const Metadata& metadata, const FunctionProfile& profile,
                         const TextReportOptions& options, std::ostream& out) {
  out << "# tprof report\n";
  if (!metadata.command_line.empty()) {
    out << "# command:";
    for (const std::string& arg : metadata.command_line) out << ' ' << arg;
    out << '\n';
  }
  out << "# host: " << metadata.hostname << ", " << metadata.architecture << ", "
      << (metadata.cpu.model_name.empty() ? metadata.cpu.vendor : metadata.cpu.model_name)
      << ", kernel " << metadata.kernel_release << '\n';
  if (metadata.duration_ns)
    out << Format("# duration: %.3f s\n", static_cast<double>(metadata.duration_ns) / 1e9);
  if (profile.lost) out << "# lost samples: " << profile.lost << '\n';
  for (size_t e = 0; e < profile.events.size(); ++e) {
    const EventDesc& event = profile.events[e];
    if (event.group_leader >= 0 && event.group_leader != static_cast<int32_t>(e) &&
        (profile.events[static_cast<size_t>(event.group_leader)].sample_type & PERF_SAMPLE_READ)) {
      // A member of a leader-sampled group: its counts travel in the leader's samples.
      out << "#\n# event: " << event.name << ", read in every sample of "
          << profile.events[static_cast<size_t>(event.group_leader)].name << " (group member)\n";
      continue;
    }
    const uint64_t total = profile.total_period[e];
    out << "#\n# event: " << profile.events[e].name << ", " << profile.total_samples[e]
        << " samples, total period " << total << '\n';
    out << "# Self% is the function's share of the event's total period (sum of sample periods)\n";
    out << Format("# %8s %10s  %-16s %-24s %s\n", "Self%", "Samples", "Command", "Module",
                  "Function");
    if (total == 0) continue;
    std::vector<const FunctionRow*> rows;
    for (const FunctionRow& row : profile.rows)
      if (row.self_samples[e] != 0) rows.push_back(&row);
    std::stable_sort(rows.begin(), rows.end(), [e](const FunctionRow* a, const FunctionRow* b) {
      return a->self_period[e] > b->self_period[e];
    });
    size_t shown = 0;
    for (const FunctionRow* row_ptr : rows) {
      const FunctionRow& row = *row_ptr;
      double percent = 100.0 * static_cast<double>(row.self_period[e]) / static_cast<double>(total);
      if (percent < options.percent_limit) continue;
      if (options.max_rows && shown >= options.max_rows) break;
      out << Format("  %7.2f%% %10llu  %-16s %-24s %s\n", percent,
                    static_cast<unsigned long long>(row.self_samples[e]), row.command.c_str(),
                    row.module.c_str(), row.function.c_str());
      ++shown;
    }
  }
}

}  // namespace tprof
