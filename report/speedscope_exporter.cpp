#include "report/speedscope_exporter.h"

#include <map>
#include <nlohmann/json.hpp>

#include "core/analysis/function_attribution.h"
#include "core/base/version.h"
#include "core/base/visible_text.h"
#include "report/pprof_exporter.h"

namespace tprof {

std::string ExportSpeedscope(const Metadata& metadata, const StackProfile& profile) {
  using nlohmann::json;
  // Frames are shared by name and file: the call sites of one function are one frame, as
  // speedscope's own importers do.
  json frames = json::array();
  std::map<std::pair<std::string, std::string>, size_t> frame_index;
  auto frame_of = [&](const std::string& name, const std::string& file) {
    auto [it, inserted] = frame_index.try_emplace({name, file}, frames.size());
    if (inserted) {
      json frame = {{"name", name}};
      if (!file.empty()) frame["file"] = file;
      frames.push_back(std::move(frame));
    }
    return it->second;
  };
  // The functions of each location, outermost first (inlined callers before their inlinees),
  // named as every other view names them.
  const FunctionAttribution attribution(InlineMode::kInnermost);
  std::vector<std::vector<size_t>> location_frames(profile.locations.size());
  for (size_t i = 0; i < profile.locations.size(); ++i) {
    const ResolvedFrame& resolved = profile.locations[i].frame;
    for (uint32_t level = attribution.Depth(resolved); level-- > 0;) {
      const std::string* file =
          level < resolved.frames.size() ? &resolved.frames[level].file : nullptr;
      location_frames[i].push_back(frame_of(attribution.Name(resolved, level),
                                            file && !file->empty() ? *file : resolved.module));
    }
  }

  json profiles = json::array();
  std::vector<size_t> stack_frames;
  for (size_t e = 0; e < profile.events.size(); ++e) {
    if (profile.total_samples[e] == 0) continue;  // e.g. members of a leader-sampled group
    json samples = json::array(), weights = json::array();
    for (const Stack& stack : profile.stacks) {
      if (stack.samples[e] == 0) continue;
      stack_frames.clear();
      for (auto l = stack.locations.rbegin(); l != stack.locations.rend(); ++l)
        for (size_t f : location_frames[*l]) stack_frames.push_back(f);
      samples.push_back(stack_frames);
      weights.push_back(stack.period[e]);
    }
    std::string unit = PeriodUnit(profile.events[e]) == "nanoseconds" ? "nanoseconds" : "none";
    profiles.push_back({{"type", "sampled"},
                        {"name", profile.events[e].name},
                        {"unit", unit},
                        {"startValue", 0},
                        {"endValue", profile.total_period[e]},
                        {"samples", std::move(samples)},
                        {"weights", std::move(weights)}});
  }
  std::string name;
  for (const std::string& arg : metadata.command_line) name += (name.empty() ? "" : " ") + arg;
  json file = {{"$schema", "https://www.speedscope.app/file-format-schema.json"},
               {"exporter", std::string("tprof ") + kVersion},
               {"name", name.empty() ? metadata.source : name},
               {"activeProfileIndex", 0},
               {"shared", {{"frames", std::move(frames)}}},
               {"profiles", std::move(profiles)}};
  // Names are bytes: those that are not UTF-8 are shown as every output shows them.
  return DumpVisibleJson(file) + "\n";
}

}  // namespace tprof
