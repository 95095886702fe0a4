#include "core/format/saved_counts.h"

#include <nlohmann/json.hpp>

namespace tprof {

Result<CounterReport> ParseTprofCounts(std::string_view text) {
  auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object() || !json.contains("tprof_counts"))
    return Error("not a tprof counts file");
  CounterReport report;
  report.format = "tprof counts";
  try {
    for (const auto& g : json.at("groups")) {
      CounterGroup group;
      group.run_time = g.value("run_time", uint64_t{0});
      group.running_percent = g.value("running_percent", 100.0);
      for (const auto& c : g.at("counters")) {
        CounterValue value;
        value.event = c.at("event").get<std::string>();
        if (c.contains("value") && c.at("value").is_number() && group.run_time > 0)
          value.value = c.at("value").get<double>();
        group.counters.push_back(std::move(value));
      }
      report.groups.push_back(std::move(group));
    }
  } catch (const nlohmann::json::exception& e) {
    return Error(std::string("tprof counts: ") + e.what());
  }
  return report;
}

std::string SaveTprofCounts(const CounterReport& report) {
  nlohmann::json groups = nlohmann::json::array();
  for (const CounterGroup& g : report.groups) {
    nlohmann::json counters = nlohmann::json::array();
    for (const CounterValue& c : g.counters) {
      nlohmann::json item = {{"event", c.event}};
      item["value"] = c.value ? nlohmann::json(*c.value) : nlohmann::json(nullptr);
      counters.push_back(std::move(item));
    }
    groups.push_back(
        {{"run_time", g.run_time}, {"running_percent", g.running_percent}, {"counters", counters}});
  }
  return nlohmann::json{{"tprof_counts", 1}, {"groups", groups}}.dump(2) + "\n";
}

}  // namespace tprof
