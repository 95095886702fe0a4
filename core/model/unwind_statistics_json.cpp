#include "core/model/unwind_statistics_json.h"

#include <string>

namespace tprof {

namespace {

nlohmann::json ChainRepairJson(const ChainRepairStatistics& r) {
  nlohmann::json kept = nlohmann::json::array();
  size_t most = 0;
  for (size_t i = 0; i < kUnwindEndCount; ++i) {
    if (!r.kept_by_end[i]) continue;
    kept.push_back({{"cause", UnwindEndName(static_cast<UnwindEnd>(i))},
                    {"samples", r.kept_by_end[i]},
                    {"module", r.kept_module_by_end[i].module}});
    if (r.kept_by_end[i] > r.kept_by_end[most]) most = i;
  }
  // kept_module: the largest cause's module, as files before the per-cause modules had it.
  return {{"samples", r.samples},
          {"repaired", r.repaired},
          {"frames_added", r.frames_added},
          {"replaced", r.replaced},
          {"kept", kept},
          {"kept_module", r.kept_module_by_end[most].module}};
}

uint64_t Number(const nlohmann::json& from, const char* key) {
  auto it = from.find(key);
  return it != from.end() && it->is_number_unsigned() ? it->get<uint64_t>() : 0;
}

std::string Text(const nlohmann::json& from, const char* key) {
  auto it = from.find(key);
  return it != from.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// Calls `read(index, entry)` for each entry of the array `parent[key]` ({"cause": NAME, ...})
// whose cause names an UnwindEnd, `index` being that end's.
template <typename Read>
void ForEachCause(const nlohmann::json& parent, const char* key, Read read) {
  auto entries = parent.find(key);
  if (entries == parent.end() || !entries->is_array()) return;
  for (const nlohmann::json& entry : *entries) {
    if (!entry.is_object() || !entry.contains("cause") || !entry["cause"].is_string()) continue;
    const std::string cause = entry["cause"];
    for (size_t i = 0; i < kUnwindEndCount; ++i)
      if (cause == UnwindEndName(static_cast<UnwindEnd>(i))) read(i, entry);
  }
}

std::optional<ChainRepairStatistics> ChainRepairFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return std::nullopt;
  ChainRepairStatistics r;
  r.samples = Number(j, "samples");
  r.repaired = Number(j, "repaired");
  r.frames_added = Number(j, "frames_added");
  r.replaced = Number(j, "replaced");
  // Files written before the per-cause modules name one module for every cause.
  const std::string kept_module = Text(j, "kept_module");
  ForEachCause(j, "kept", [&](size_t i, const nlohmann::json& entry) {
    r.kept_by_end[i] = Number(entry, "samples");
    r.kept_module_by_end[i].module = entry.contains("module") ? Text(entry, "module") : kept_module;
  });
  // Counts that do not add up are a damaged trailer, not statistics to print (each is checked
  // against what is left before it is added, so that no sum wraps around).
  uint64_t left = r.samples;
  auto take = [&left](uint64_t part) {
    if (part > left) return false;
    left -= part;
    return true;
  };
  if (!take(r.repaired) || !take(r.replaced)) return std::nullopt;
  for (uint64_t part : r.kept_by_end)
    if (!take(part)) return std::nullopt;
  return r;
}

}  // namespace

nlohmann::json UnwindStatisticsJson(const UnwindStatistics& stats) {
  if (stats.empty()) return nullptr;
  nlohmann::json stopped = nlohmann::json::array();
  for (size_t i = 0; i < kUnwindEndCount; ++i) {
    const UnwindStatistics::Stopped& s = stats.stopped[i];
    if (s.samples == 0) continue;
    stopped.push_back({{"cause", UnwindEndName(static_cast<UnwindEnd>(i))},
                       {"samples", s.samples},
                       {"leaf_only", s.leaf_only},
                       {"module", s.named.module}});
  }
  nlohmann::json j = {{"samples", stats.samples},
                      {"complete", stats.complete},
                      {"user_frames", stats.user_frames},
                      {"stopped", stopped}};
  if (stats.chain_repair.samples) j["frame_pointer_repair"] = ChainRepairJson(stats.chain_repair);
  return j;
}

std::optional<UnwindStatistics> UnwindStatisticsFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return std::nullopt;
  UnwindStatistics stats;
  stats.samples = Number(j, "samples");
  stats.complete = Number(j, "complete");
  stats.user_frames = Number(j, "user_frames");
  if (auto repair = j.find("frame_pointer_repair"); repair != j.end())
    if (auto r = ChainRepairFromJson(*repair)) stats.chain_repair = *r;
  if (stats.empty() || stats.complete > stats.samples) return std::nullopt;
  ForEachCause(j, "stopped", [&](size_t i, const nlohmann::json& s) {
    stats.stopped[i].samples = Number(s, "samples");
    stats.stopped[i].leaf_only = Number(s, "leaf_only");
    stats.stopped[i].named.module = Text(s, "module");
  });
  return stats;
}

}  // namespace tprof
