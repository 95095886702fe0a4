#include "core/analysis/cost_split.h"

#include <algorithm>
#include <cmath>

#include "core/analysis/derived_metrics.h"

namespace tprof {
namespace {

// The index of `wanted` among a run's events: by name, else as a formula names events
// (modifiers, PMU wrappers and perf's aliases aside: cycles finds cpu-cycles:u).
std::optional<size_t> Find(const std::vector<std::string>& events, const std::string& wanted) {
  for (size_t e = 0; e < events.size(); ++e)
    if (events[e] == wanted) return e;
  const std::string base = FormulaEventName(wanted);
  for (size_t e = 0; e < events.size(); ++e)
    if (FormulaEventName(events[e]) == base) return e;
  return std::nullopt;
}

// Per run of one side: (cost, work) of `key` (the totals when null).
std::vector<std::pair<double, double>> PerRun(const std::vector<FunctionTotals>& side,
                                              const std::vector<std::pair<size_t, size_t>>& index,
                                              const FunctionKey* key) {
  std::vector<std::pair<double, double>> runs;
  for (size_t r = 0; r < side.size(); ++r) {
    const auto [c, w] = index[r];
    if (!key) {
      runs.emplace_back(side[r].totals[c], side[r].totals[w]);
      continue;
    }
    auto it = side[r].self.find(*key);
    if (it == side[r].self.end())
      runs.emplace_back(0, 0);
    else
      runs.emplace_back(it->second[c], it->second[w]);
  }
  return runs;
}

// Mean (cost, work) and the covariance of that mean (the runs' sample covariance / runs).
struct SideMean {
  double cost = 0, work = 0;
  double covariance[2][2] = {{0, 0}, {0, 0}};
};

SideMean MeanOf(const std::vector<std::pair<double, double>>& runs) {
  SideMean m;
  const double n = static_cast<double>(runs.size());
  for (const auto& [c, w] : runs) {
    m.cost += c / n;
    m.work += w / n;
  }
  if (runs.size() < 2) return m;
  for (const auto& [c, w] : runs) {
    const double d[2] = {c - m.cost, w - m.work};
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j) m.covariance[i][j] += d[i] * d[j] / ((n - 1) * n);
  }
  return m;
}

std::optional<CostSplit> Split(const std::vector<std::pair<double, double>>& old_runs,
                               const std::vector<std::pair<double, double>>& new_runs) {
  const SideMean o = MeanOf(old_runs), n = MeanOf(new_runs);
  if (o.work == 0) return std::nullopt;
  CostSplit s;
  s.old_cost = o.cost;
  s.new_cost = n.cost;
  s.old_work = o.work;
  s.new_work = n.work;
  // x = (C0, W0, C1, W1).
  const std::vector<double> x = {o.cost, o.work, n.cost, n.work};
  auto work = [](const std::vector<double>& v) -> std::optional<double> {
    if (v[1] == 0) return std::nullopt;
    return (v[3] - v[1]) * v[0] / v[1];
  };
  auto efficiency = [](const std::vector<double>& v) -> std::optional<double> {
    if (v[1] == 0) return std::nullopt;
    return v[2] - v[3] * v[0] / v[1];
  };
  std::vector<double> covariance;  // 4 x 4, the sides independent
  if (old_runs.size() >= 2 && new_runs.size() >= 2) {
    covariance.assign(16, 0);
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j) {
        covariance[static_cast<size_t>(i * 4 + j)] = o.covariance[i][j];
        covariance[static_cast<size_t>((i + 2) * 4 + (j + 2))] = n.covariance[i][j];
      }
  }
  const double t = StudentT975(std::min(old_runs.size(), new_runs.size()) - 1);
  auto part = [&](const auto& formula) {
    MetricValue v = ValueWithInterval(formula, x, covariance, t);
    SplitPart p;
    p.value = v.value.value_or(0);
    if (o.cost != 0) p.percent = 100 * p.value / o.cost;
    p.half_width = v.half_width;
    return p;
  };
  s.work = part(work);
  s.efficiency = part(efficiency);
  return s;
}

}  // namespace

std::optional<CostSplitDiff> SplitCost(const std::vector<FunctionTotals>& old_side,
                                       const std::vector<FunctionTotals>& new_side,
                                       const std::string& cost_event,
                                       const std::string& work_event) {
  if (old_side.empty() || new_side.empty()) return std::nullopt;
  CostSplitDiff diff;
  diff.cost_event = cost_event.empty() ? "cycles" : cost_event;
  diff.work_event = work_event.empty() ? "instructions" : work_event;
  auto index = [&](const std::vector<FunctionTotals>& side)
      -> std::optional<std::vector<std::pair<size_t, size_t>>> {
    std::vector<std::pair<size_t, size_t>> out;
    for (const FunctionTotals& run : side) {
      auto c = Find(run.events, diff.cost_event), w = Find(run.events, diff.work_event);
      if (!c || !w || run.totals[*c] == 0 || run.totals[*w] == 0) return std::nullopt;
      out.emplace_back(*c, *w);
    }
    return out;
  };
  auto old_index = index(old_side), new_index = index(new_side);
  if (!old_index || !new_index) return std::nullopt;
  auto total = Split(PerRun(old_side, *old_index, nullptr), PerRun(new_side, *new_index, nullptr));
  if (!total) return std::nullopt;
  diff.total = *total;
  std::vector<FunctionKey> keys;
  for (const FunctionTotals& run : old_side)
    for (const auto& [key, values] : run.self) keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  for (const FunctionKey& key : keys) {
    auto split = Split(PerRun(old_side, *old_index, &key), PerRun(new_side, *new_index, &key));
    if (!split) continue;
    split->key = key;
    diff.functions.push_back(std::move(*split));
  }
  std::sort(diff.functions.begin(), diff.functions.end(),
            [](const CostSplit& a, const CostSplit& b) {
              const double da = std::fabs(a.new_cost - a.old_cost);
              const double db = std::fabs(b.new_cost - b.old_cost);
              if (da != db) return da > db;
              return a.key < b.key;
            });
  return diff;
}

Result<std::pair<std::string, std::string>> ParseSplitEvents(const std::string& text) {
  const size_t slash = text.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == text.size() ||
      text.find('/', slash + 1) != std::string::npos)
    return Error::BadRequest("--split '" + text +
                             "': write COST/WORK, e.g. cycles/instructions or "
                             "task-clock/page-faults");
  return std::make_pair(text.substr(0, slash), text.substr(slash + 1));
}

}  // namespace tprof
