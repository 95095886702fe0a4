#include "pmu/event_spec.h"

#include <linux/perf_event.h>

#include <algorithm>
#include <sstream>

namespace tprof {
namespace {

struct GenericEvent {
  const char* name;
  uint32_t type;
  uint64_t config;
};

constexpr GenericEvent kGenericEvents[] = {
    {"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
    {"cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
    {"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
    {"cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES},
    {"cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES},
    {"branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
    {"branch-instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
    {"branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES},
    {"bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES},
    {"stalled-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND},
    {"stalled-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND},
    {"ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES},
    {"cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK},
    {"task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK},
    {"page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS},
    {"faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS},
    {"context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES},
    {"cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES},
    {"cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS},
    {"migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS},
    {"minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN},
    {"major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ},
    {"alignment-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS},
    {"emulation-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS},
    {"dummy", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY},
};

size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1] ? 1 : 0)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

}  // namespace

bool EventSpec::is_hardware() const {
  return type == PERF_TYPE_HARDWARE || type == PERF_TYPE_HW_CACHE || type == PERF_TYPE_RAW;
}

std::vector<std::string> KnownEventNames() {
  std::vector<std::string> names;
  for (const GenericEvent& e : kGenericEvents) names.push_back(e.name);
  return names;
}

std::string ClosestMatch(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_distance = std::max<size_t>(2, word.size() / 3) + 1;
  for (const std::string& c : candidates) {
    size_t d = EditDistance(word, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best;
}

Result<EventSpec> ParseEventSpec(const std::string& text) {
  EventSpec spec;
  spec.name = text;
  std::string base = text;
  std::string modifiers;
  if (size_t colon = text.find(':'); colon != std::string::npos) {
    base = text.substr(0, colon);
    modifiers = text.substr(colon + 1);
  }
  const GenericEvent* found = nullptr;
  for (const GenericEvent& e : kGenericEvents)
    if (base == e.name) found = &e;
  if (!found) {
    std::string hint = ClosestMatch(base, KnownEventNames());
    return Error("unknown event '" + base + "'" +
                 (hint.empty() ? "" : "; did you mean '" + hint + "'?") +
                 " ('tprof record --help' lists the events)");
  }
  spec.type = found->type;
  spec.config = found->config;
  bool saw_u = false, saw_k = false;
  for (char m : modifiers) {
    switch (m) {
      case 'u':
        saw_u = true;
        break;
      case 'k':
        saw_k = true;
        break;
      case 'p':
        ++spec.precise_ip;
        break;
      default:
        return Error("event '" + text + "': unknown modifier '" + std::string(1, m) +
                     "' (known: u, k, p, pp, ppp)");
    }
  }
  if (spec.precise_ip > 3) return Error("event '" + text + "': at most three 'p' modifiers");
  if (saw_u || saw_k) {
    spec.exclude_user = !saw_u;
    spec.exclude_kernel = !saw_k;
  }
  return spec;
}

Result<std::vector<EventSpec>> ParseEventList(const std::string& text) {
  std::vector<EventSpec> specs;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.empty()) return Error("empty event name in '" + text + "'");
    auto spec = ParseEventSpec(item);
    if (!spec.ok()) return spec.error();
    specs.push_back(std::move(spec).value());
  }
  if (specs.empty()) return Error("no event given");
  return specs;
}

}  // namespace tprof
