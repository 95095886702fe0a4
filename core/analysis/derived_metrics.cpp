#include "core/analysis/derived_metrics.h"

#include <algorithm>

namespace tprof {

const std::vector<MetricFormula>& GenericMetricFormulas() {
  static const std::vector<MetricFormula> kFormulas = {
      {"IPC", "instructions / cycles", "ratio", {}},
      {"CPI", "cycles / instructions", "ratio", {}},
      {"branch-miss%", "100 * branch\\-misses / branches", "%", {}},
      {"cache-miss%", "100 * cache\\-misses / cache\\-references", "%", {}},
      {"branch-MPKI", "1000 * branch\\-misses / instructions", "MPKI", {}},
      {"cache-MPKI", "1000 * cache\\-misses / instructions", "MPKI", {}},
      {"L1D-MPKI", "1000 * L1\\-dcache\\-load\\-misses / instructions", "MPKI", {}},
      {"LLC-MPKI", "1000 * LLC\\-load\\-misses / instructions", "MPKI", {}},
  };
  return kFormulas;
}

std::string FormulaEventName(const std::string& recorded) {
  std::string name = recorded;
  // "cpu_core/cycles/" or "cpu/instructions/u": the event inside the PMU wrapper.
  size_t slash = name.find('/');
  if (slash != std::string::npos && name.find('/', slash + 1) != std::string::npos &&
      name.find('=') == std::string::npos) {
    size_t close = name.find('/', slash + 1);
    name = name.substr(slash + 1, close - slash - 1);
  }
  size_t colon = name.find(':');
  // Modifiers are lower-case letters after the last ':' ("cycles:upp"); vendor names such as
  // INST_RETIRED:ANY_P keep theirs.
  if (colon != std::string::npos) {
    std::string mods = name.substr(colon + 1);
    if (!mods.empty() && mods.find_first_not_of("ukhpPGHSDWe") == std::string::npos)
      name.resize(colon);
  }
  if (name == "cpu-cycles") return "cycles";
  if (name == "branch-instructions") return "branches";
  return name;
}

const char* MetricSourceName(MetricSource source) {
  return source == MetricSource::kSampledPeriods ? "sampled periods" : "group deltas";
}

Result<DerivedMetrics> DerivedMetrics::Plan(const ReportTable& table,
                                            const std::vector<MetricFormula>& extra,
                                            const std::string& origin) {
  DerivedMetrics plan;
  auto add = [&](const MetricFormula& f, const std::string& from) -> Result<bool> {
    auto expression = MetricExpression::Parse(f.formula);
    if (!expression.ok()) return expression.error().WithContext("metric " + f.name);
    auto is_constant = [&](const std::string& v) {
      return std::any_of(f.constants.begin(), f.constants.end(),
                         [&](const auto& c) { return c.first == v; });
    };
    // Sampled periods: every variable is an event that takes samples of its own.
    MetricColumn sampled{f.name, f.unit, f.formula, MetricSource::kSampledPeriods,
                         -1,     {},     {},        from};
    bool all = true;
    for (const std::string& v : expression->variables()) {
      if (is_constant(v)) continue;
      bool found = false;
      for (size_t e = 0; e < table.events.size() && !found; ++e)
        if (table.IsSampled(e) && table.total_samples[e] != 0 &&
            FormulaEventName(table.events[e].name) == v) {
          sampled.events.push_back(e);
          found = true;
        }
      all &= found;
    }
    if (all && !sampled.events.empty()) {
      plan.columns_.push_back(sampled);
      plan.compiled_.push_back({*expression, f.constants});
    }
    // Group deltas: every variable is a member of one read group.
    for (size_t g = 0; g < table.groups.size(); ++g) {
      MetricColumn grouped{
          f.name, f.unit, f.formula, MetricSource::kGroupDeltas, static_cast<int>(g), {}, {}, from};
      bool in_group = true;
      const auto& members = table.groups[g].members;
      for (const std::string& v : expression->variables()) {
        if (is_constant(v)) continue;
        auto it = std::find_if(members.begin(), members.end(), [&](uint32_t m) {
          return m < table.events.size() && FormulaEventName(table.events[m].name) == v;
        });
        if (it == members.end()) {
          in_group = false;
          break;
        }
        grouped.member_slots.push_back(static_cast<size_t>(it - members.begin()));
        grouped.events.push_back(*it);
      }
      if (in_group && !grouped.member_slots.empty()) {
        plan.columns_.push_back(grouped);
        plan.compiled_.push_back({*expression, f.constants});
      }
    }
    return true;
  };
  for (const MetricFormula& f : GenericMetricFormulas()) {
    auto r = add(f, "generic");
    if (!r.ok()) return r.error();
  }
  for (const MetricFormula& f : extra) {
    auto r = add(f, origin);
    if (!r.ok()) return r.error();
  }
  return plan;
}

MetricValue DerivedMetrics::Compute(size_t column, const std::vector<double>& counts,
                                    uint64_t confidence) const {
  const Compiled& compiled = compiled_[column];
  MetricValue result;
  // The formula's non-constant variables, in order, are the events the column reads.
  std::vector<std::pair<std::string, double>> values = compiled.constants;
  size_t next = 0;
  for (const std::string& v : compiled.expression.variables()) {
    bool constant = std::any_of(compiled.constants.begin(), compiled.constants.end(),
                                [&](const auto& cst) { return cst.first == v; });
    if (!constant && next < counts.size()) values.emplace_back(v, counts[next++]);
  }
  result.value =
      compiled.expression.Evaluate([&](const std::string& name) -> std::optional<double> {
        for (const auto& [variable, value] : values)
          if (variable == name) return value;
        return std::nullopt;
      });
  result.low_confidence = confidence < kMinConfidentCount;
  return result;
}

MetricValue DerivedMetrics::Evaluate(size_t column, const ReportTable& table,
                                     const ReportRow& row) const {
  const MetricColumn& c = columns_[column];
  std::vector<double> counts;
  uint64_t confidence = UINT64_MAX;
  if (c.source == MetricSource::kSampledPeriods) {
    for (size_t e : c.events) {
      counts.push_back(static_cast<double>(row.self_period[e]));
      confidence = std::min(confidence, row.self_samples[e]);
    }
  } else {
    const GroupCredit& credit = row.groups[static_cast<size_t>(c.group)];
    for (size_t slot : c.member_slots) counts.push_back(credit.deltas[slot]);
    confidence = credit.windows_credited;
  }
  (void)table;
  return Compute(column, counts, confidence);
}

MetricValue DerivedMetrics::EvaluateTotal(size_t column, const ReportTable& table) const {
  const MetricColumn& c = columns_[column];
  std::vector<double> counts;
  uint64_t confidence = UINT64_MAX;
  if (c.source == MetricSource::kSampledPeriods) {
    for (size_t e : c.events) {
      counts.push_back(static_cast<double>(table.total_period[e]));
      confidence = std::min(confidence, table.total_samples[e]);
    }
  } else {
    const size_t g = static_cast<size_t>(c.group);
    counts.assign(c.member_slots.size(), 0);
    confidence = 0;
    for (const ReportRow& row : table.rows) {
      for (size_t i = 0; i < c.member_slots.size(); ++i)
        counts[i] += row.groups[g].deltas[c.member_slots[i]];
      confidence += row.groups[g].windows_credited;
    }
  }
  return Compute(column, counts, confidence);
}

}  // namespace tprof
