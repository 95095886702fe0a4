#include "pmu/topdown_evaluator.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "core/model/metric_expression.h"

namespace tprof {

std::string CanonicalEventName(const MetricTable& table, const std::string& printed) {
  std::string name = printed;
  if (size_t slash = name.find('/'); slash != std::string::npos) {
    size_t close = name.find('/', slash + 1);
    name =
        name.substr(slash + 1, close == std::string::npos ? std::string::npos : close - slash - 1);
    if (name.rfind("event=", 0) == 0) name = name.substr(6);
  }
  if (size_t colon = name.find(':'); colon != std::string::npos) name = name.substr(0, colon);
  if (name.size() > 1 && name[0] == 'r' && std::all_of(name.begin() + 1, name.end(), [](char c) {
        return std::isxdigit(static_cast<unsigned char>(c));
      })) {
    uint64_t code = std::strtoull(name.c_str() + 1, nullptr, 16);
    for (const MetricEvent& e : table.events)
      if (e.code == code) return e.name;
  }
  if (name.rfind("0x", 0) == 0) {
    uint64_t code = std::strtoull(name.c_str(), nullptr, 16);
    for (const MetricEvent& e : table.events)
      if (e.code == code) return e.name;
  }
  if (const MetricEvent* e = table.FindEvent(name)) return e->name;
  return name;
}

Result<std::vector<MetricResult>> EvaluateMetrics(const MetricTable& table,
                                                  const std::vector<const Metric*>& metrics,
                                                  const CounterReport& counts) {
  // Each group's counters under the table's names.
  std::vector<std::map<std::string, std::optional<double>>> groups;
  for (const CounterGroup& g : counts.groups) {
    std::map<std::string, std::optional<double>> values;
    for (const CounterValue& c : g.counters) values[CanonicalEventName(table, c.event)] = c.value;
    groups.push_back(std::move(values));
  }
  std::vector<MetricResult> results;
  for (const Metric* metric : metrics) {
    auto expression = MetricExpression::Parse(metric->formula);
    if (!expression.ok()) return expression.error().WithContext("metric " + metric->name);
    MetricResult result;
    result.metric = metric;
    for (const std::string& v : expression->variables())
      if (v != "#slots") result.events.push_back(v);
    // The first group that counted every event of the formula.
    const std::map<std::string, std::optional<double>>* measured = nullptr;
    for (size_t i = 0; i < groups.size() && !measured; ++i) {
      bool all = std::all_of(result.events.begin(), result.events.end(),
                             [&](const std::string& e) { return groups[i].count(e) != 0; });
      if (all) {
        measured = &groups[i];
        result.running_percent = counts.groups[i].running_percent;
        if (counts.groups[i].run_time == 0 && counts.format != "tprof counts")
          result.note = "the group never ran";
      }
    }
    // Else each event from the group that counted it longest (perf's rule for such metrics).
    std::map<std::string, std::optional<double>> pooled;
    if (!measured) {
      std::string missing;
      result.running_percent = 100;
      for (const std::string& e : result.events) {
        std::optional<size_t> best;
        for (size_t i = 0; i < groups.size(); ++i) {
          auto it = groups[i].find(e);
          if (it == groups[i].end() || !it->second || counts.groups[i].run_time == 0) continue;
          if (!best || counts.groups[i].running_percent > counts.groups[*best].running_percent)
            best = i;
        }
        if (!best) {
          missing += (missing.empty() ? "" : ", ") + e;
          continue;
        }
        pooled[e] = groups[*best].at(e);
        result.running_percent =
            std::min(result.running_percent, counts.groups[*best].running_percent);
      }
      if (!missing.empty()) {
        result.running_percent = 0;
        result.note = "not counted: " + missing;
      } else {
        measured = &pooled;
        result.cross_group = true;
      }
    }
    if (measured) {
      result.value = expression->Evaluate([&](const std::string& name) -> std::optional<double> {
        if (name == "#slots") return static_cast<double>(table.slots);
        auto it = measured->find(name);
        return it == measured->end() ? std::nullopt : it->second;
      });
      if (!result.value && result.note.empty()) result.note = "not counted, or a zero denominator";
    }
    results.push_back(std::move(result));
  }
  return results;
}

}  // namespace tprof
