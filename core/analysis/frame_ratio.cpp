#include "core/analysis/frame_ratio.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <initializer_list>
#include <string_view>

#include "core/analysis/derived_metrics.h"
#include "core/analysis/significance.h"

namespace tprof {
namespace {

// perf_event_attr.type / config values of the generic hardware events (linux/perf_event.h).
constexpr uint32_t kTypeHardware = 0;
constexpr uint64_t kHwCpuCycles = 0;
constexpr uint64_t kHwInstructions = 1;
constexpr uint64_t kHwStalledCyclesFrontend = 7;
constexpr uint64_t kHwStalledCyclesBackend = 8;

// "cpu/cycles/u" -> "cycles", "INST_RETIRED.ANY:pp" -> "inst_retired.any",
// "armv8_pmuv3_0/stall_backend/" -> "stall_backend".
std::string CanonicalEventName(std::string_view name) {
  if (auto open = name.find('/'); open != std::string_view::npos) {
    auto close = name.find('/', open + 1);
    if (close != std::string_view::npos) name = name.substr(open + 1, close - open - 1);
  }
  // Drop perf's modifier suffix (":u", ":ppp", ":uk"), but keep libpfm4's "EVENT:UMASK".
  if (auto colon = name.rfind(':'); colon != std::string_view::npos) {
    std::string_view suffix = name.substr(colon + 1);
    if (!suffix.empty() && suffix.find_first_not_of("ukhpPGHISDW") == std::string_view::npos)
      name = name.substr(0, colon);
  }
  std::string out(name);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::replace(out.begin(), out.end(), ':', '.');  // INST_RETIRED:ANY == INST_RETIRED.ANY
  return out;
}

struct EventPattern {
  const char* what;  // for the error message
  uint64_t hardware_config;
  std::initializer_list<const char*> names;
};

const EventPattern kCycles{
    "cycles",
    kHwCpuCycles,
    {"cycles", "cpu-cycles", "cpu_cycles", "cpu_clk_unhalted", "cpu_clk_unhalted.thread",
     "cpu_clk_unhalted.thread_p", "cpu_clk_unhalted.core", "unhalted_core_cycles"}};
const EventPattern kInstructions{"instructions",
                                 kHwInstructions,
                                 {"instructions", "inst_retired", "inst_retired.any",
                                  "inst_retired.any_p", "instructions_retired"}};
const EventPattern kBackendStalls{"stall cycles (stalled-cycles-backend, STALL_BACKEND)",
                                  kHwStalledCyclesBackend,
                                  {"stalled-cycles-backend", "stall_backend", "idle-cycles-backend",
                                   "resource_stalls.any", "cycle_activity.stalls_total"}};
const EventPattern kFrontendStalls{
    "stall cycles (stalled-cycles-frontend, STALL_FRONTEND)",
    kHwStalledCyclesFrontend,
    {"stalled-cycles-frontend", "stall_frontend", "idle-cycles-frontend"}};

int FindEvent(const std::vector<EventDesc>& events, const EventPattern& pattern) {
  for (size_t i = 0; i < events.size(); ++i) {
    const EventDesc& e = events[i];
    // Hybrid PMUs put the PMU type in config's upper half.
    if (e.type == kTypeHardware && (e.config & 0xffffffffu) == pattern.hardware_config)
      return static_cast<int>(i);
    std::string name = CanonicalEventName(e.name);
    for (const char* candidate : pattern.names)
      if (name == candidate) return static_cast<int>(i);
  }
  return -1;
}

std::string EventList(const std::vector<EventDesc>& events) {
  std::string out;
  for (const EventDesc& e : events) out += (out.empty() ? "" : ", ") + e.name;
  return out.empty() ? "none" : out;
}

void SumSamples(const CallNode& node, size_t event,
                std::unordered_map<const CallNode*, uint64_t>& out, uint64_t& sum) {
  uint64_t total = node.self_samples.size() > event ? node.self_samples[event] : 0;
  for (const auto& child : node.children) SumSamples(*child, event, out, total);
  out[&node] = total;
  sum += total;
}

}  // namespace

Result<RatioEvents> FindRatioEvents(const std::vector<EventDesc>& events, FrameRatioKind kind) {
  RatioEvents found;
  found.kind = kind;
  int cycles = FindEvent(events, kCycles);
  int other = -1;
  const char* other_what = nullptr;
  if (kind == FrameRatioKind::kStall) {
    other = FindEvent(events, kBackendStalls);
    if (other < 0) other = FindEvent(events, kFrontendStalls);
    other_what = "stall cycles (stalled-cycles-backend/frontend or STALL_BACKEND/STALL_FRONTEND)";
  } else {
    other = FindEvent(events, kInstructions);
    other_what = "instructions";
  }
  if (cycles < 0 || other < 0) {
    std::string missing = cycles < 0 ? std::string("cycles") : "";
    if (other < 0) missing += (missing.empty() ? "" : " and ") + std::string(other_what);
    return Error::BadRequest(
        "the profile has no " + missing + " samples (its events: " + EventList(events) +
        "); record both, e.g. tprof record -e " +
        (kind == FrameRatioKind::kStall ? "cycles,stalled-cycles-backend" : "cycles,instructions") +
        " -c 100000");
  }
  if (kind == FrameRatioKind::kCpi || kind == FrameRatioKind::kStall) {
    found.numerator = static_cast<size_t>(kind == FrameRatioKind::kCpi ? cycles : other);
    found.denominator = static_cast<size_t>(kind == FrameRatioKind::kCpi ? other : cycles);
  } else {
    found.numerator = static_cast<size_t>(other);
    found.denominator = static_cast<size_t>(cycles);
  }
  return found;
}

std::unordered_map<const CallNode*, uint64_t> TotalSamples(const CallNode& root, size_t event) {
  std::unordered_map<const CallNode*, uint64_t> out;
  uint64_t sum = 0;
  SumSamples(root, event, out, sum);
  return out;
}

std::unordered_map<const CallNode*, FrameRatio> ComputeFrameRatios(
    const CallNode& root, const RatioEvents& ratio, const std::vector<EventDesc>& events,
    uint64_t min_samples, uint64_t lost) {
  auto numerator_samples = TotalSamples(root, ratio.numerator);
  auto denominator_samples = TotalSamples(root, ratio.denominator);
  // The samples kept per event, for the share lost samples may have been of each.
  std::vector<uint64_t> total_samples(events.size(), 0);
  total_samples[ratio.numerator] = numerator_samples[&root];
  total_samples[ratio.denominator] = denominator_samples[&root];
  const std::vector<size_t> used = {ratio.numerator, ratio.denominator};
  std::unordered_map<const CallNode*, FrameRatio> out;
  out.reserve(numerator_samples.size());
  for (const auto& [node, n_samples] : numerator_samples) {
    FrameRatio r;
    r.numerator = node->total.size() > ratio.numerator ? node->total[ratio.numerator] : 0;
    r.denominator = node->total.size() > ratio.denominator ? node->total[ratio.denominator] : 0;
    r.numerator_samples = n_samples;
    r.denominator_samples = denominator_samples[node];
    r.value =
        r.denominator ? static_cast<double>(r.numerator) / static_cast<double>(r.denominator) : 0.0;
    r.reliable = r.denominator > 0 && r.numerator_samples >= min_samples &&
                 r.denominator_samples >= min_samples;
    // As the table's sampled periods (DerivedMetrics): each count to its exact Poisson bound.
    if (r.numerator_samples > 0 && r.denominator_samples > 0)
      r.half_width = r.value * std::hypot(PoissonRelativeReach(r.numerator_samples),
                                          PoissonRelativeReach(r.denominator_samples));
    if (r.value > 0) {
      MetricValue value;
      value.value = r.value;
      value.half_width = r.half_width;
      if (auto bias = LostSamplesBias(used, lost, total_samples, events, value))
        r.bias = std::move(bias->reason);
    }
    out.emplace(node, r);
  }
  return out;
}

}  // namespace tprof
