#include "core/metrics/recorded_metrics.h"

#include <linux/perf_event.h>

#include <algorithm>

#include "core/model/metric_expression.h"

namespace tprof {

std::optional<RecordedMetricTable> MatchRecordedMetricTable(
    const std::vector<EventDesc>& events, const CpuDescription& cpu,
    const std::vector<MetricTable>& tables) {
  auto for_cpu = TableForCpu(cpu, tables);
  const MetricTable* cpu_table = for_cpu.ok() ? for_cpu.value() : nullptr;
  std::optional<RecordedMetricTable> best;
  std::vector<std::string> equally_good;  // other tables that read the same events as well
  for (const EventDesc& leader : events) {
    if (!(leader.sample_type & PERF_SAMPLE_READ) || leader.group_members.size() < 2) continue;
    std::vector<std::string> names;
    for (uint32_t m : leader.group_members)
      if (m < events.size()) names.push_back(events[m].name);
    for (const MetricTable& table : tables) {
      // Every member must be one of the table's events, opened as its raw code (as record -M
      // opens them).
      bool all = std::all_of(names.begin(), names.end(), [&](const std::string& n) {
        const MetricEvent* e = table.FindEvent(n);
        if (!e) return false;
        auto it = std::find_if(events.begin(), events.end(),
                               [&](const EventDesc& d) { return d.name == n; });
        return it->type == PERF_TYPE_RAW && it->config == e->code;
      });
      if (!all) continue;
      RecordedMetricTable match;
      match.table = &table;
      for (const Metric& metric : table.metrics) {
        auto expression = MetricExpression::Parse(metric.formula);
        if (!expression.ok()) continue;
        bool readable = true;
        for (const std::string& v : expression->variables())
          readable &= v == "#slots" || std::find(names.begin(), names.end(), v) != names.end();
        if (!readable) continue;
        MetricFormula f{metric.name, metric.formula, metric.unit, {}};
        f.constants.emplace_back("#slots", static_cast<double>(table.slots));
        match.formulas.push_back(std::move(f));
      }
      if (match.formulas.empty()) continue;
      bool better = !best || match.formulas.size() > best->formulas.size() ||
                    (match.formulas.size() == best->formulas.size() && &table == cpu_table &&
                     best->table != cpu_table);
      if (best && match.formulas.size() == best->formulas.size()) {
        if (better)
          equally_good.push_back(best->table->name);
        else
          equally_good.push_back(table.name);
      } else if (better) {
        equally_good.clear();
      }
      if (better) best = std::move(match);
    }
  }
  if (best) {
    best->how = "metric table " + best->table->name +
                " (recognised by the recorded event names and codes: the profile does not name "
                "it";
    if (best->table == cpu_table)
      best->how += "; the recording CPU's table)";
    else if (!equally_good.empty())
      best->how += "; the events fit " + std::to_string(equally_good.size()) +
                   " other tables too and the recording CPU matches none: values may use the "
                   "wrong table's constants)";
    else
      best->how += ")";
  }
  return best;
}

}  // namespace tprof
