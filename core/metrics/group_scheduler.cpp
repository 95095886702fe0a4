#include "core/metrics/group_scheduler.h"

#include <algorithm>

#include "core/model/metric_expression.h"

namespace tprof {
namespace {

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

size_t GeneralCounters(const MetricTable& table, const std::vector<std::string>& events) {
  return static_cast<size_t>(std::count_if(events.begin(), events.end(), [&](const std::string& e) {
    return !Contains(table.fixed_events, e);
  }));
}

}  // namespace

Result<std::vector<ScheduledGroup>> ScheduleGroups(const MetricTable& table,
                                                   const std::vector<const Metric*>& metrics,
                                                   uint32_t general_counters) {
  std::vector<ScheduledGroup> groups;
  for (const Metric* metric : metrics) {
    auto expression = MetricExpression::Parse(metric->formula);
    if (!expression.ok()) return expression.error().WithContext("metric " + metric->name);
    std::vector<std::string> needed;
    for (const std::string& v : expression->variables())
      if (v != "#slots") needed.push_back(v);
    if (GeneralCounters(table, needed) > general_counters)
      return Error(
          "metric " + metric->name + " needs " + std::to_string(GeneralCounters(table, needed)) +
          " general-purpose counters at once; this CPU has " + std::to_string(general_counters));
    // Join the group that already holds most of these events and still fits; else start one.
    ScheduledGroup* best = nullptr;
    size_t best_overlap = 0;
    for (ScheduledGroup& g : groups) {
      std::vector<std::string> merged = g.events;
      size_t overlap = 0;
      for (const std::string& e : needed) {
        if (Contains(merged, e))
          ++overlap;
        else
          merged.push_back(e);
      }
      if (GeneralCounters(table, merged) <= general_counters && (!best || overlap > best_overlap)) {
        best = &g;
        best_overlap = overlap;
      }
    }
    if (!best) {
      groups.emplace_back();
      best = &groups.back();
    }
    for (const std::string& e : needed)
      if (!Contains(best->events, e)) best->events.push_back(e);
    best->metrics.push_back(metric);
  }
  if (table.fixed_leads) {
    // The first fixed event (Intel's slots) must lead: the kernel refuses topdown-* otherwise.
    for (ScheduledGroup& g : groups)
      for (const std::string& fixed : table.fixed_events) {
        auto it = std::find(g.events.begin(), g.events.end(), fixed);
        if (it != g.events.end()) {
          std::rotate(g.events.begin(), it, it + 1);
          break;
        }
      }
  }
  return groups;
}

}  // namespace tprof
