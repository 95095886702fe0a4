#include "pmu/event_spec.h"

#include <linux/perf_event.h>
#include <perfmon/pfmlib_perf_event.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/base/shared_library.h"
#include "core/model/event_selection.h"
#include "core/model/event_unit.h"

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
    {"idle-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND},
    {"stalled-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND},
    {"idle-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND},
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

constexpr const char* kSysfsPmus = "/sys/bus/event_source/devices/";

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

std::vector<std::string> Split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, separator)) parts.push_back(part);
  if (!text.empty() && text.back() == separator) parts.push_back("");
  return parts;
}

bool ParseNumber(const std::string& text, uint64_t* value) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  *value = std::strtoull(text.c_str(), &end, 0);
  return errno == 0 && end && *end == '\0';
}

std::string ReadSysfsLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// Applies modifier letters (the part after ':') to an event.
Status ApplyModifiers(const std::string& modifiers, const std::string& text, EventSpec* spec,
                      bool* leader_sampling) {
  bool u = false, k = false, h = false;
  for (char m : modifiers) {
    switch (m) {
      case 'u':
        u = true;
        break;
      case 'k':
        k = true;
        break;
      case 'h':
        h = true;
        break;
      case 'p':
        ++spec->precise_ip;
        break;
      case 'S':
        if (!leader_sampling)
          return Error("event '" + text + "': modifier 'S' applies to a group: {a,b}:S");
        *leader_sampling = true;
        break;
      default:
        return Error("event '" + text + "': unknown modifier '" + std::string(1, m) +
                     "' (known: u, k, h, p, pp, ppp, and S on groups)");
    }
  }
  if (spec->precise_ip > 3) return Error("event '" + text + "': at most three 'p' modifiers");
  if (u || k || h) {
    spec->exclude_user = !u;
    spec->exclude_kernel = !k;
    spec->exclude_hv = !h;
  }
  return Status::Ok();
}

bool IsModifierToken(const std::string& token) {
  return !token.empty() && token.find_first_not_of("ukhpS") == std::string::npos;
}

// Sets the bits that a sysfs format file ("config:0-7,21" or "config1:0-15") describes.
Status ApplyFormatTerm(const std::string& pmu, const std::string& term, uint64_t value,
                       EventSpec* spec) {
  std::string format = ReadSysfsLine(std::string(kSysfsPmus) + pmu + "/format/" + term);
  if (format.empty()) return Error("PMU '" + pmu + "' has no term '" + term + "'");
  size_t colon = format.find(':');
  std::string field = format.substr(0, colon);
  uint64_t* target = field == "config"    ? &spec->config
                     : field == "config1" ? &spec->config1
                     : field == "config2" ? &spec->config2
                                          : nullptr;
  if (!target || colon == std::string::npos)
    return Error("PMU '" + pmu + "' term '" + term + "' has an unsupported format: " + format);
  uint64_t remaining = value;
  for (const std::string& range : Split(format.substr(colon + 1), ',')) {
    size_t dash = range.find('-');
    unsigned lo = static_cast<unsigned>(std::stoul(range.substr(0, dash)));
    unsigned hi =
        dash == std::string::npos ? lo : static_cast<unsigned>(std::stoul(range.substr(dash + 1)));
    if (hi < lo || hi > 63) return Error("bad format range '" + range + "'");
    unsigned width = hi - lo + 1;
    uint64_t mask = width == 64 ? ~0ull : ((1ull << width) - 1);
    *target |= (remaining & mask) << lo;
    remaining = width == 64 ? 0 : remaining >> width;
  }
  if (remaining != 0)
    return Error("value " + std::to_string(value) + " does not fit term '" + term + "' of PMU '" +
                 pmu + "'");
  return Status::Ok();
}

// "pmu/term=value,term,.../" as perf accepts it; named events of the PMU expand to their terms.
Status ApplyPmuTerms(const std::string& pmu, const std::string& terms, EventSpec* spec, int depth) {
  if (depth > 4) return Error("PMU event aliases nest too deeply");
  for (const std::string& item : Split(terms, ',')) {
    if (item.empty()) continue;
    size_t eq = item.find('=');
    std::string key = item.substr(0, eq);
    std::string value_text = eq == std::string::npos ? "" : item.substr(eq + 1);
    uint64_t value = 1;
    if (key == "name") {
      spec->name = value_text;
      continue;
    }
    if (eq != std::string::npos && !ParseNumber(value_text, &value))
      return Error("term '" + item + "': '" + value_text + "' is not a number");
    if (key == "config")
      spec->config = value;
    else if (key == "config1")
      spec->config1 = value;
    else if (key == "config2")
      spec->config2 = value;
    else if (key == "period")
      spec->period = value;
    else if (eq == std::string::npos) {
      // A bare word is a named event of this PMU (sysfs events/NAME holds its terms).
      std::string alias = ReadSysfsLine(std::string(kSysfsPmus) + pmu + "/events/" + key);
      if (alias.empty()) {
        Status s = ApplyFormatTerm(pmu, key, 1, spec);
        if (!s.ok()) return Error("PMU '" + pmu + "' has no event or term '" + key + "'");
      } else {
        TPROF_RETURN_IF_ERROR(ApplyPmuTerms(pmu, alias, spec, depth + 1));
      }
    } else {
      TPROF_RETURN_IF_ERROR(ApplyFormatTerm(pmu, key, value, spec));
    }
  }
  return Status::Ok();
}

// libpfm4's functions, from the library loaded on first use (see core/base/shared_library.h).
struct Libpfm {
  decltype(&pfm_initialize) initialize;
  decltype(&pfm_strerror) strerror;
  decltype(&pfm_get_os_event_encoding) get_os_event_encoding;
};

Result<Libpfm> LoadLibpfm() {
  auto library = SharedLibrary::Open(TPROF_LIBPFM_SONAME);
  if (!library.ok()) return library.error();
  Libpfm pfm{};
  TPROF_RETURN_IF_ERROR(library->Bind("pfm_initialize", &pfm.initialize));
  TPROF_RETURN_IF_ERROR(library->Bind("pfm_strerror", &pfm.strerror));
  TPROF_RETURN_IF_ERROR(library->Bind("pfm_get_os_event_encoding", &pfm.get_os_event_encoding));
  return pfm;
}

// Vendor event names through libpfm4, for the PMU of this CPU. libpfm4 keeps its tables in
// process-wide state; pfm_initialize is idempotent, so calling it on each use is safe.
Result<EventSpec> EncodeWithLibpfm(const std::string& name) {
  static const Result<Libpfm> pfm = LoadLibpfm();  // loaded once: the functions never change
  if (!pfm.ok()) return pfm.error();
  int status = pfm->initialize();
  if (status != PFM_SUCCESS) return Error(std::string("libpfm4: ") + pfm->strerror(status));
  perf_event_attr attr{};
  pfm_perf_encode_arg_t arg{};
  arg.attr = &attr;
  arg.size = sizeof arg;
  status =
      pfm->get_os_event_encoding(name.c_str(), PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
  if (status != PFM_SUCCESS) return Error(pfm->strerror(status));
  EventSpec spec;
  spec.name = name;
  spec.type = attr.type;
  spec.config = attr.config;
  spec.config1 = attr.config1;
  spec.config2 = attr.config2;
  spec.exclude_user = attr.exclude_user;
  spec.exclude_kernel = attr.exclude_kernel;
  return spec;
}

Result<EventSpec> ParseOne(const std::string& text, bool* leader_sampling_out) {
  if (text.empty()) return Error("empty event name");
  EventSpec spec;
  spec.name = text;
  std::string modifiers;
  // PMU form: pmu/terms/[modifiers]
  if (size_t slash = text.find('/'); slash != std::string::npos) {
    size_t close = text.find('/', slash + 1);
    if (close == std::string::npos) return Error("event '" + text + "': missing the closing '/'");
    std::string pmu = text.substr(0, slash);
    std::string type_text = ReadSysfsLine(std::string(kSysfsPmus) + pmu + "/type");
    uint64_t type;
    if (!ParseNumber(type_text, &type))
      return Error("event '" + text + "': no PMU named '" + pmu + "' on this machine");
    spec.type = static_cast<uint32_t>(type);
    TPROF_RETURN_IF_ERROR(ApplyPmuTerms(pmu, text.substr(slash + 1, close - slash - 1), &spec, 0));
    std::string rest = text.substr(close + 1);
    if (!rest.empty() && rest[0] == ':') rest.erase(0, 1);
    TPROF_RETURN_IF_ERROR(ApplyModifiers(rest, text, &spec, leader_sampling_out));
    return spec;
  }
  // Split off trailing modifier tokens; what remains is the name (which may hold ':' for
  // libpfm4 unit masks, as in INST_RETIRED:ANY_P).
  std::vector<std::string> tokens = Split(text, ':');
  std::string base = tokens[0];
  size_t first_modifier = tokens.size();
  while (first_modifier > 1 && IsModifierToken(tokens[first_modifier - 1])) --first_modifier;
  for (size_t i = 1; i < first_modifier; ++i) base += ":" + tokens[i];
  for (size_t i = first_modifier; i < tokens.size(); ++i) modifiers += tokens[i];

  const GenericEvent* generic = nullptr;
  for (const GenericEvent& e : kGenericEvents)
    if (base == e.name) generic = &e;
  uint64_t raw;
  if (generic) {
    spec.type = generic->type;
    spec.config = generic->config;
  } else if (base.size() > 1 && base[0] == 'r' && ParseNumber("0x" + base.substr(1), &raw)) {
    spec.type = PERF_TYPE_RAW;
    spec.config = raw;
  } else {
    auto vendor = EncodeWithLibpfm(base);
    if (!vendor.ok()) {
      if (base.find(':') != std::string::npos && tokens.size() == 2)
        return Error("event '" + text + "': unknown modifier '" + tokens[1] +
                     "' (known: u, k, h, p, pp, ppp, and S on groups)");
      std::string hint = ClosestMatch(base, KnownEventNames());
      return Error("unknown event '" + base + "'" +
                   (hint.empty() ? "" : "; did you mean '" + hint + "'?") +
                   " (not a generic name, raw rNNNN code, pmu/terms/ form, or an event libpfm4 "
                   "knows for this CPU)");
    }
    EventSpec v = std::move(vendor).value();
    v.name = text;
    spec = v;
  }
  TPROF_RETURN_IF_ERROR(ApplyModifiers(modifiers, text, &spec, leader_sampling_out));
  return spec;
}

}  // namespace

bool EventSpec::is_hardware() const {
  return type != PERF_TYPE_SOFTWARE && type != PERF_TYPE_TRACEPOINT;
}

bool ReadClocksSampledAlone(std::vector<EventGroup>* groups) {
  if (groups->size() < 2) return false;
  bool changed = false;
  for (EventGroup& g : *groups) {
    if (g.is_group() || g.events.size() != 1) continue;
    const EventSpec& spec = g.events[0];
    if (!IsTimerClock(spec.type, spec.config)) continue;
    g.explicit_braces = true;
    g.leader_sampling = true;
    changed = true;
  }
  return changed;
}

MemberSampling PlanMemberSampling(const std::vector<EventGroup>& groups) {
  MemberSampling plan;
  auto sampled_alone = [&](const std::string& name) {
    for (const EventGroup& g : groups)
      if (!g.is_group() && g.events.size() == 1 && g.events[0].name == name) return true;
    for (const EventGroup& g : plan.added)
      if (g.events[0].name == name) return true;
    return false;
  };
  size_t hardware = 0;
  for (const EventGroup& g : groups)
    for (const EventSpec& e : g.events) hardware += e.is_hardware() ? 1 : 0;
  std::vector<std::string> over_budget;
  for (const EventGroup& g : groups) {
    if (!g.leader_sampling || g.events.size() < 2) continue;
    for (size_t i = 1; i < g.events.size(); ++i) {
      const EventSpec& member = g.events[i];
      if (sampled_alone(member.name)) continue;
      if (member.is_hardware()) {
        if (hardware + 1 > kMemberSamplingCounterBudget) {
          over_budget.push_back(member.name);
          continue;
        }
        ++hardware;
      }
      EventSpec alone = member;
      alone.period = 0;  // at -F's rate (second_method)
      EventGroup lone;
      lone.events.push_back(std::move(alone));
      lone.second_method = true;
      plan.added.push_back(std::move(lone));
    }
  }
  if (!over_budget.empty())
    plan.notes.push_back("not also sampled on their own: " + EventNameList(over_budget) +
                         " (the recording would use " +
                         std::to_string(hardware + over_budget.size()) +
                         " hardware counters, and a PMU short of them multiplexes the group); "
                         "report cannot check the group's per-function values of them against "
                         "a second method");
  return plan;
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

Result<EventSpec> ParseEventSpec(const std::string& text) { return ParseOne(text, nullptr); }

Result<std::vector<EventGroup>> ParseEventList(const std::string& text) {
  std::vector<EventGroup> groups;
  size_t i = 0;
  // Splits on commas outside braces and outside pmu/.../ terms.
  auto next_item = [&](char stop, size_t* end) {
    size_t j = i;
    bool in_terms = false;
    while (j < text.size() && (in_terms || (text[j] != ',' && text[j] != stop))) {
      if (text[j] == '/') in_terms = !in_terms;
      ++j;
    }
    *end = j;
    return text.substr(i, j - i);
  };
  while (i < text.size()) {
    EventGroup group;
    if (text[i] == '{') {
      group.explicit_braces = true;
      ++i;
      while (true) {
        size_t end;
        std::string item = next_item('}', &end);
        auto spec = ParseOne(item, nullptr);
        if (!spec.ok()) return spec.error();
        group.events.push_back(std::move(spec).value());
        i = end;
        if (i >= text.size()) return Error("group in '" + text + "' is missing its closing '}'");
        if (text[i] == '}') break;
        ++i;  // ','
      }
      ++i;  // '}'
      if (i < text.size() && text[i] == ':') {
        size_t end = text.find(',', i);
        if (end == std::string::npos) end = text.size();
        std::string modifiers = text.substr(i + 1, end - i - 1);
        // Group modifiers apply to every member; S makes the leader sample for all.
        for (EventSpec& spec : group.events) {
          std::string per_event;
          for (char m : modifiers)
            if (m != 'S') per_event += m;
          TPROF_RETURN_IF_ERROR(ApplyModifiers(per_event, spec.name, &spec, nullptr));
          spec.name += ":" + per_event;
          if (per_event.empty()) spec.name.pop_back();
        }
        if (modifiers.find('S') != std::string::npos) group.leader_sampling = true;
        std::string unknown = modifiers;
        unknown.erase(std::remove_if(unknown.begin(), unknown.end(),
                                     [](char c) { return std::strchr("ukhpS", c) != nullptr; }),
                      unknown.end());
        if (!unknown.empty())
          return Error("group modifier '" + unknown + "' is unknown (known: u, k, h, p, S)");
        i = end;
      }
    } else {
      size_t end;
      std::string item = next_item('\0', &end);
      auto spec = ParseOne(item, nullptr);
      if (!spec.ok()) return spec.error();
      group.events.push_back(std::move(spec).value());
      i = end;
    }
    groups.push_back(std::move(group));
    if (i < text.size()) {
      if (text[i] != ',')
        return Error("unexpected '" + std::string(1, text[i]) + "' in '" + text + "'");
      ++i;
      if (i == text.size()) return Error("trailing ',' in '" + text + "'");
    }
  }
  if (groups.empty()) return Error("no event given");
  return groups;
}

}  // namespace tprof
