#include "core/model/unwind_statistics_json.h"

#include <string>

namespace tprof {

nlohmann::json UnwindStatisticsJson(const UnwindStatistics& stats) {
  if (stats.samples == 0) return nullptr;
  nlohmann::json stopped = nlohmann::json::array();
  for (size_t i = 0; i < kUnwindEndCount; ++i) {
    const UnwindStatistics::Stopped& s = stats.stopped[i];
    if (s.samples == 0) continue;
    stopped.push_back({{"cause", UnwindEndName(static_cast<UnwindEnd>(i))},
                       {"samples", s.samples},
                       {"leaf_only", s.leaf_only},
                       {"module", s.module}});
  }
  return {{"samples", stats.samples},
          {"complete", stats.complete},
          {"user_frames", stats.user_frames},
          {"stopped", stopped}};
}

std::optional<UnwindStatistics> UnwindStatisticsFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return std::nullopt;
  UnwindStatistics stats;
  auto number = [&](const nlohmann::json& from, const char* key) -> uint64_t {
    auto it = from.find(key);
    return it != from.end() && it->is_number_unsigned() ? it->get<uint64_t>() : 0;
  };
  stats.samples = number(j, "samples");
  stats.complete = number(j, "complete");
  stats.user_frames = number(j, "user_frames");
  if (stats.samples == 0 || stats.complete > stats.samples) return std::nullopt;
  auto stopped = j.find("stopped");
  if (stopped != j.end() && stopped->is_array())
    for (const nlohmann::json& s : *stopped) {
      if (!s.is_object() || !s.contains("cause") || !s["cause"].is_string()) continue;
      const std::string cause = s["cause"];
      for (size_t i = 0; i < kUnwindEndCount; ++i)
        if (cause == UnwindEndName(static_cast<UnwindEnd>(i))) {
          stats.stopped[i].samples = number(s, "samples");
          stats.stopped[i].leaf_only = number(s, "leaf_only");
          if (s.contains("module") && s["module"].is_string())
            stats.stopped[i].module = s["module"];
        }
    }
  return stats;
}

}  // namespace tprof
