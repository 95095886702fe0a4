#include "core/metrics/topdown_evaluator.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>

#include "core/model/metric_expression.h"

namespace tprof {

namespace {

// Which raw-code layout a table's events use: Arm's event numbers, or x86's PERFEVTSEL fields
// (AMD also puts event bits 8-11 in config bits 32-35).
enum class Encoding { kArm, kIntel, kAmd };

Encoding EncodingOf(const MetricTable& table) {
  if (table.x86_vendor == "AuthenticAMD") return Encoding::kAmd;
  if (table.x86_vendor.empty()) return Encoding::kArm;
  return Encoding::kIntel;
}

// The code of "pmu/event=...,umask=...,cmask=.../" terms, over `code` (a named event's, when
// the terms refine it: "cpu/de_no_dispatch_per_slot.no_ops_from_frontend,cmask=0x6/").
uint64_t ApplyTerms(Encoding encoding, uint64_t code,
                    const std::map<std::string, uint64_t>& terms) {
  auto set = [&](uint64_t value, int shift, uint64_t mask) {
    code = (code & ~(mask << shift)) | ((value & mask) << shift);
  };
  for (const auto& [key, value] : terms) {
    if (encoding == Encoding::kArm) {
      if (key == "event") code = value;
      continue;
    }
    if (key == "event") {
      set(value, 0, 0xff);
      if (encoding == Encoding::kAmd) set(value >> 8, 32, 0xf);
    } else if (key == "umask") {
      set(value, 8, 0xff);
    } else if (key == "edge") {
      set(value, 18, 1);
    } else if (key == "inv") {
      set(value, 23, 1);
    } else if (key == "cmask") {
      set(value, 24, 0xff);
    }
  }
  return code;
}

// perf's generic hardware event names, as each vendor's PMU counts them.
std::optional<uint64_t> GenericCode(Encoding encoding, const std::string& name) {
  std::string lower;
  for (char c : name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "cycles" || lower == "cpu-cycles" || lower == "cpu_cycles")
    return encoding == Encoding::kArm ? 0x11 : encoding == Encoding::kAmd ? 0x76 : 0x3c;
  if (lower == "instructions" || lower == "inst_retired")
    return encoding == Encoding::kArm ? 0x08 : 0xc0;
  return std::nullopt;
}

std::optional<uint64_t> HexCode(const std::string& text, size_t prefix) {
  if (text.size() <= prefix ||
      !std::all_of(text.begin() + static_cast<std::ptrdiff_t>(prefix), text.end(),
                   [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); }))
    return std::nullopt;
  return std::strtoull(text.c_str() + prefix, nullptr, 16);
}

}  // namespace

std::string CanonicalEventName(const MetricTable& table, const std::string& printed) {
  const Encoding encoding = EncodingOf(table);
  // "pmu/terms/modifiers", or "name:modifiers".
  std::string base;
  std::map<std::string, uint64_t> terms;
  if (size_t slash = printed.find('/'); slash != std::string::npos) {
    size_t close = printed.rfind('/');
    std::string inner =
        close > slash ? printed.substr(slash + 1, close - slash - 1) : printed.substr(slash + 1);
    size_t at = 0;
    while (at <= inner.size()) {
      size_t comma = inner.find(',', at);
      std::string part = inner.substr(at, comma == std::string::npos ? comma : comma - at);
      if (size_t eq = part.find('='); eq != std::string::npos)
        terms[part.substr(0, eq)] = std::strtoull(part.c_str() + eq + 1, nullptr, 0);
      else if (base.empty())
        base = part;
      if (comma == std::string::npos) break;
      at = comma + 1;
    }
  } else {
    base = printed.substr(0, printed.find(':'));
  }

  const MetricEvent* event = nullptr;
  std::optional<uint64_t> code;
  if (base.empty() && terms.count("event")) {
    code = ApplyTerms(encoding, 0, terms);
  } else if (auto raw = base.starts_with('r') ? HexCode(base, 1) : std::nullopt) {
    code = raw;
  } else if (auto hex = base.starts_with("0x") ? HexCode(base, 2) : std::nullopt) {
    code = hex;
  } else if ((event = table.FindEvent(base))) {
    if (!terms.empty()) code = ApplyTerms(encoding, event->code, terms);
  } else if (auto generic = GenericCode(encoding, base)) {
    code = ApplyTerms(encoding, *generic, terms);
  }
  if (code) {
    const MetricEvent* by_code = table.FindEventByCode(*code);
    return by_code ? by_code->name : base.empty() ? printed : base;
  }
  return event ? event->name : base;
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
