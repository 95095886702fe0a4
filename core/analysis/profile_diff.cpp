#include "core/analysis/profile_diff.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <set>

#include "core/analysis/cost_split.h"
#include "core/analysis/derived_metrics.h"
#include "core/analysis/group_windows_by_time.h"
#include "core/analysis/off_cpu_reasons.h"
#include "core/base/file_paths.h"
#include "core/model/event_unit.h"

namespace tprof {
namespace {

// A module's file name; "[kernel.kallsyms]", "[vdso]" and the like are names, not paths.
std::string ModuleFileName(const std::string& path) {
  if (path.empty() || path.front() == '[') return path;
  return BaseName(path);
}

// "cycles:u" -> "cycles": the event a name counts, whatever its modifiers.

// Which event of one run stands for each paired event.
struct EventPairing {
  std::vector<std::string> names;                         // as shown
  std::vector<std::vector<size_t>> old_index, new_index;  // [run][paired event] -> run's event
  std::vector<std::string> unpaired;
  std::string note;
};

std::optional<size_t> IndexOf(const std::vector<std::string>& names, const std::string& name) {
  auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end()) return std::nullopt;
  return static_cast<size_t>(it - names.begin());
}

Result<EventPairing> PairEvents(const std::vector<FunctionTotals>& old_side,
                                const std::vector<FunctionTotals>& new_side) {
  EventPairing pairing;
  std::vector<const FunctionTotals*> all;
  for (const FunctionTotals& t : old_side) all.push_back(&t);
  for (const FunctionTotals& t : new_side) all.push_back(&t);
  std::set<std::string> seen;
  for (const FunctionTotals* run : all)
    for (const std::string& name : run->events) {
      if (!seen.insert(name).second) continue;
      bool everywhere = std::all_of(all.begin(), all.end(), [&](const FunctionTotals* r) {
        return IndexOf(r->events, name).has_value();
      });
      (everywhere ? pairing.names : pairing.unpaired).push_back(name);
    }
  auto index_runs = [&](const std::vector<FunctionTotals>& side,
                        std::vector<std::vector<size_t>>& out) {
    for (const FunctionTotals& run : side) {
      std::vector<size_t> indexes;
      for (const std::string& name : pairing.names) indexes.push_back(*IndexOf(run.events, name));
      out.push_back(std::move(indexes));
    }
  };
  if (pairing.names.empty()) {
    // Two lone events of different names (cpu-clock against task-clock, or a folded file's
    // "samples"): compare them, and say so.
    auto lone = [](const std::vector<FunctionTotals>& side) -> std::optional<std::string> {
      for (const FunctionTotals& run : side)
        if (run.events.size() != 1 || run.events[0] != side.front().events[0]) return std::nullopt;
      return side.front().events[0];
    };
    std::optional<std::string> old_name = lone(old_side), new_name = lone(new_side);
    if (!old_name || !new_name) {
      auto list = [](const std::vector<FunctionTotals>& side) {
        std::string s;
        for (const std::string& n : side.front().events) s += (s.empty() ? "" : ", ") + n;
        return s.empty() ? std::string("none") : s;
      };
      return Error("the two sides have no event in common (old: " + list(old_side) +
                   "; new: " + list(new_side) + ")");
    }
    pairing.names.push_back(*old_name + " vs " + *new_name);
    pairing.unpaired.clear();
    pairing.note = "compared the only event of each side: old " + *old_name + ", new " + *new_name;
    for (size_t r = 0; r < old_side.size(); ++r) pairing.old_index.push_back({0});
    for (size_t r = 0; r < new_side.size(); ++r) pairing.new_index.push_back({0});
    return pairing;
  }
  index_runs(old_side, pairing.old_index);
  index_runs(new_side, pairing.new_index);
  return pairing;
}

// Per run and paired event: the factor every value of that run and event is multiplied by.
Result<std::vector<std::vector<double>>> ScaleFactors(
    const std::vector<FunctionTotals>& side, const std::vector<std::vector<size_t>>& index,
    const std::vector<FunctionTotals>& old_side, const std::vector<std::vector<size_t>>& old_index,
    const EventPairing& pairing, const ProfileDiffOptions& options) {
  const size_t events = pairing.names.size();
  std::vector<std::vector<double>> factors(side.size(), std::vector<double>(events, 1.0));
  if (options.normalize == Normalization::kNone) return factors;
  std::optional<size_t> fixed;
  if (options.normalize == Normalization::kEvent) {
    fixed = IndexOf(pairing.names, options.normalize_event);
    if (!fixed)
      return Error("--normalize " + options.normalize_event +
                   ": not an event of both sides (they share: " +
                   [&] {
                     std::string s;
                     for (const std::string& n : pairing.names) s += (s.empty() ? "" : ", ") + n;
                     return s;
                   }() +
                   ")");
  }
  for (size_t e = 0; e < events; ++e) {
    const size_t by = fixed ? *fixed : e;
    double reference = 0;
    for (size_t r = 0; r < old_side.size(); ++r) reference += old_side[r].totals[old_index[r][by]];
    reference /= static_cast<double>(old_side.size());
    if (reference == 0) continue;  // the old side has none of it: nothing to scale to
    for (size_t r = 0; r < side.size(); ++r) {
      const double total = side[r].totals[index[r][by]];
      if (total == 0) {
        if (fixed)
          return Error("--normalize " + options.normalize_event + ": a run has no samples of it");
        continue;  // nothing of this event in this run: nothing to scale
      }
      factors[r][e] = reference / total;
    }
  }
  return factors;
}

void FillStatistics(RunStatistics& stats, const ProfileDiffOptions& options,
                    std::optional<double> delta_pct) {
  stats.old_cv = CoefficientOfVariation(stats.old_runs);
  stats.new_cv = CoefficientOfVariation(stats.new_runs);
  if (stats.old_runs.size() < 2 || stats.new_runs.size() < 2) return;
  stats.test = MannWhitneyU(stats.old_runs, stats.new_runs);
  const double effect = delta_pct ? std::fabs(*delta_pct) : std::numeric_limits<double>::infinity();
  stats.significance = stats.test->p_value < options.alpha && effect >= options.min_effect_percent
                           ? Significance::kSignificant
                           : Significance::kNotSignificant;
}

// new - old, with the rounding of scaled sums (normalization) that leaves "-0.0000001" for
// equal values made exactly 0.
double Difference(double new_value, double old_value) {
  const double delta = new_value - old_value;
  const double scale = std::max(std::fabs(new_value), std::fabs(old_value));
  return std::fabs(delta) <= 1e-12 * scale ? 0.0 : delta;
}

std::optional<double> Percent(double part, double whole) {
  if (whole == 0) return std::nullopt;
  return 100.0 * part / whole;
}

// Modifiers, PMU wrappers and perf's aliases aside (cpu-cycles:u, cpu_core/cycles/).
bool IsCycles(const std::string& name) { return FormulaEventName(name) == "cycles"; }
bool IsInstructions(const std::string& name) { return FormulaEventName(name) == "instructions"; }

// One side's counts of the instructions and the cycles event (in that order) over all its runs,
// for a function or the total, with the samples they were summed from and each event's mean
// period over the side.
struct SampledSums {
  std::vector<double> counts;
  std::vector<uint64_t> samples;
  std::vector<double> mean_periods;
  bool samples_known = true;  // false where a run's totals were made without sample counts
};

SampledSums SumSide(const std::vector<FunctionTotals>& side,
                    const std::vector<std::vector<size_t>>& index, size_t instructions,
                    size_t cycles, const FunctionKey* key) {
  SampledSums sums{{0, 0}, {0, 0}, {0, 0}};
  std::vector<double> samples(2, 0), total_samples(2, 0), totals(2, 0);
  for (size_t r = 0; r < side.size(); ++r) {
    const FunctionTotals& run = side[r];
    sums.samples_known &= run.self_samples.size() == run.self.size();
    const size_t events[2] = {index[r][instructions], index[r][cycles]};
    auto self = key ? run.self.find(*key) : run.self.end();
    auto self_samples = key ? run.self_samples.find(*key) : run.self_samples.end();
    for (size_t k = 0; k < 2; ++k) {
      const size_t e = events[k];
      const bool has_samples = e < run.samples.size();
      sums.samples_known &= has_samples;
      if (has_samples) {
        totals[k] += run.totals[e];
        total_samples[k] += run.samples[e];
      }
      if (!key) {
        sums.counts[k] += run.totals[e];
        if (has_samples) samples[k] += run.samples[e];
        continue;
      }
      if (self == run.self.end()) continue;
      sums.counts[k] += self->second[e];
      if (self_samples != run.self_samples.end()) samples[k] += self_samples->second[e];
    }
  }
  for (size_t k = 0; k < 2; ++k) {
    sums.samples[k] = static_cast<uint64_t>(std::llround(samples[k]));
    sums.mean_periods[k] = total_samples[k] > 0 ? totals[k] / total_samples[k] : 0.0;
  }
  return sums;
}

// counts[num] / counts[den], n/a at a zero denominator.
std::function<std::optional<double>(const std::vector<double>&)> RatioOf(size_t num, size_t den) {
  return [num, den](const std::vector<double>& c) -> std::optional<double> {
    if (c[den] == 0) return std::nullopt;
    return c[num] / c[den];
  };
}

// One side of `pair` from `value`: a value without an interval is low-confidence, no value is
// n/a (and neither confident nor not), and the reason rides only on a value.
void SetSide(RatioPair* pair, bool is_old, const MetricValue& value, const std::string& bias) {
  (is_old ? pair->old_value : pair->new_value) = value.value;
  (is_old ? pair->old_half_width : pair->new_half_width) = value.half_width;
  (is_old ? pair->old_low_confidence : pair->new_low_confidence) =
      value.value && value.low_confidence;
  (is_old ? pair->old_bias : pair->new_bias) = value.value ? bias : std::string();
}

// A side's IPC and CPI from sampled periods, with the intervals `tprof report` gives its [s]
// columns: each event's count a Poisson count in its samples (exact bounds for few, a bound for
// none), the two sampled independently; no interval where the samples are unknown.
void SampledRatioValues(const SampledSums& sums, bool is_old, RatioPair* ipc, RatioPair* cpi) {
  const std::vector<double> covariance =
      sums.samples_known ? PoissonCovariance(sums.counts, sums.samples, sums.mean_periods)
                         : std::vector<double>{};
  SetSide(ipc, is_old, ValueWithInterval(RatioOf(0, 1), sums.counts, covariance, kNormal975), "");
  SetSide(cpi, is_old, ValueWithInterval(RatioOf(1, 0), sums.counts, covariance, kNormal975), "");
}

// IPC and CPI from the raw (never normalized) sums over all runs of each side: normalizing
// scales the two events differently and would change the ratio.
std::optional<DerivedMetricsDiff> DeriveMetrics(const std::vector<FunctionTotals>& old_side,
                                                const std::vector<FunctionTotals>& new_side,
                                                const EventPairing& pairing,
                                                const std::vector<EventDiff>& events) {
  std::optional<size_t> cycles, instructions;
  for (size_t e = 0; e < pairing.names.size(); ++e) {
    if (!cycles && IsCycles(pairing.names[e])) cycles = e;
    if (!instructions && IsInstructions(pairing.names[e])) instructions = e;
  }
  if (!cycles || !instructions) return std::nullopt;
  auto side_sums = [&](bool is_old, const FunctionKey* key) {
    return SumSide(is_old ? old_side : new_side, is_old ? pairing.old_index : pairing.new_index,
                   *instructions, *cycles, key);
  };
  for (const bool is_old : {true, false})
    for (const double count : side_sums(is_old, nullptr).counts)
      if (count == 0)
        return std::nullopt;  // e.g. instructions only read in the cycles leader's samples
  DerivedMetricsDiff m;
  m.cycles_event = pairing.names[*cycles];
  m.instructions_event = pairing.names[*instructions];
  auto ratios = [&](const FunctionKey* key, RatioPair* ipc, RatioPair* cpi) {
    for (const bool is_old : {true, false})
      SampledRatioValues(side_sums(is_old, key), is_old, ipc, cpi);
  };
  ratios(nullptr, &m.total_ipc, &m.total_cpi);
  auto lost_reach = [&](const std::vector<FunctionTotals>& side,
                        const std::vector<std::vector<size_t>>& index, uint64_t* lost) {
    double reach = 0;
    for (size_t r = 0; r < side.size(); ++r) {
      if (side[r].lost == 0) continue;
      *lost += side[r].lost;
      for (size_t e : {*cycles, *instructions}) {
        const size_t i = index[r][e];
        const double kept = i < side[r].samples.size() ? side[r].samples[i] : 0;
        const double lost_samples = static_cast<double>(side[r].lost);
        reach = std::max(reach, lost_samples / (kept + lost_samples));
      }
    }
    return reach;
  };
  uint64_t old_lost = 0, new_lost = 0;
  m.old_lost_reach = lost_reach(old_side, pairing.old_index, &old_lost);
  m.new_lost_reach = lost_reach(new_side, pairing.new_index, &new_lost);
  if (old_lost || new_lost) {
    char text[240];
    std::snprintf(text, sizeof text,
                  "samples lost: the kernel lost %llu samples on the old side and %llu on the new "
                  "(full ring buffers), which may all have been %s's or %s's: IPC and CPI may be "
                  "off by up to %.1f %% (old) and %.1f %% (new)",
                  static_cast<unsigned long long>(old_lost),
                  static_cast<unsigned long long>(new_lost), m.cycles_event.c_str(),
                  m.instructions_event.c_str(), 100 * m.old_lost_reach, 100 * m.new_lost_reach);
    m.lost_reason = text;
  }
  // Where the two events were also read in a group, the report holds each function's sampled
  // value against the windows' (`methods disagree`): the first run's reason per side.
  auto sampled_reason = [](const std::vector<FunctionTotals>& side, const FunctionKey& key) {
    for (const FunctionTotals& run : side) {
      if (!run.window_ratios) continue;
      auto it = run.window_ratios->functions.find(key);
      if (it != run.window_ratios->functions.end() && !it->second.sampled_bias.empty())
        return it->second.sampled_bias;
    }
    return std::string();
  };
  // The cycles event's functions, then those with instructions and no cycles on either side
  // (a short function whose few samples were all of instructions: its CPI is 0, with the bound
  // of no cycles sample, and its IPC n/a).
  std::set<FunctionKey> listed;
  for (const size_t e : {*cycles, *instructions})
    for (const FunctionDiff& f : events[e].functions) {
      if (!listed.insert(f.key).second) continue;
      FunctionRatios row;
      row.key = f.key;
      ratios(&f.key, &row.ipc, &row.cpi);
      for (RatioPair* pair : {&row.ipc, &row.cpi}) {
        if (pair->old_value) pair->old_bias = sampled_reason(old_side, f.key);
        if (pair->new_value) pair->new_bias = sampled_reason(new_side, f.key);
      }
      m.functions.push_back(std::move(row));
    }
  return m;
}

// IPC[g] and CPI[g] of one side's pooled windows, with their intervals as `tprof report` gives
// them (the ratio estimator's variance, Student's t, the edge bounds widening it).
void WindowRatioValues(const WindowRatioSums& sums, bool is_old, RatioPair* ipc, RatioPair* cpi) {
  const std::vector<double> deltas = {sums.instructions, sums.cycles};
  const std::vector<double> products = {sums.instructions_squared, sums.cross, sums.cross,
                                        sums.cycles_squared};
  const std::vector<double> covariance =
      WindowCovariance(deltas, products, sums.windows, std::vector<size_t>{0, 1});
  const double quantile = StudentT975(sums.windows > 0 ? sums.windows - 1 : 0);
  const std::vector<double> bounds = {sums.instructions_bound, sums.cycles_bound};
  if (sums.windows == 0) {
    SetSide(ipc, is_old, MetricValue{}, sums.bias);
    SetSide(cpi, is_old, MetricValue{}, sums.bias);
    return;
  }
  SetSide(ipc, is_old, ValueWithInterval(RatioOf(0, 1), deltas, covariance, quantile, bounds),
          sums.bias);
  SetSide(cpi, is_old, ValueWithInterval(RatioOf(1, 0), deltas, covariance, quantile, bounds),
          sums.bias);
}

// IPC and CPI from the group windows of every run of each side, pooled per side, where no side
// sampled the two events on their own but every run read them in a group.
std::optional<DerivedMetricsDiff> DeriveWindowMetrics(const std::vector<FunctionTotals>& old_side,
                                                      const std::vector<FunctionTotals>& new_side,
                                                      const std::vector<EventDiff>& events) {
  auto pool = [](const std::vector<FunctionTotals>& side) -> std::optional<WindowRatios> {
    WindowRatios pooled;
    for (const FunctionTotals& run : side) {
      if (!run.window_ratios) return std::nullopt;
      if (pooled.cycles_event.empty()) {
        pooled.cycles_event = run.window_ratios->cycles_event;
        pooled.instructions_event = run.window_ratios->instructions_event;
        pooled.leader = run.window_ratios->leader;
      }
      for (const auto& [key, sums] : run.window_ratios->functions) pooled.functions[key].Add(sums);
      pooled.total.Add(run.window_ratios->total);
    }
    return pooled;
  };
  std::optional<WindowRatios> old_pool = pool(old_side), new_pool = pool(new_side);
  if (!old_pool || !new_pool || old_pool->total.windows == 0 || new_pool->total.windows == 0)
    return std::nullopt;
  DerivedMetricsDiff m;
  m.from_windows = true;
  m.cycles_event = old_pool->cycles_event;
  m.instructions_event = old_pool->instructions_event;
  m.leader = old_pool->leader;
  WindowRatioValues(old_pool->total, true, &m.total_ipc, &m.total_cpi);
  WindowRatioValues(new_pool->total, false, &m.total_ipc, &m.total_cpi);
  // In the order of the first event's functions (the leader's, usually), then those it lacks.
  std::set<FunctionKey> listed;
  auto add = [&](const FunctionKey& key) {
    if (!listed.insert(key).second) return;
    // A function with samples and no window credited on either side is listed too: n/a, which
    // a gate term naming it must say rather than pass over.
    auto o = old_pool->functions.find(key);
    auto n = new_pool->functions.find(key);
    FunctionRatios row;
    row.key = key;
    WindowRatioValues(o == old_pool->functions.end() ? WindowRatioSums{} : o->second, true,
                      &row.ipc, &row.cpi);
    WindowRatioValues(n == new_pool->functions.end() ? WindowRatioSums{} : n->second, false,
                      &row.ipc, &row.cpi);
    m.functions.push_back(std::move(row));
  };
  if (!events.empty())
    for (const FunctionDiff& f : events.front().functions) add(f.key);
  for (const auto& [key, sums] : old_pool->functions) add(key);
  for (const auto& [key, sums] : new_pool->functions) add(key);
  return m;
}

void MergeInto(DiffCallNode& out, const CallNode* old_node, const CallNode* new_node,
               size_t events) {
  const CallNode& some = old_node ? *old_node : *new_node;
  out.name = some.name;
  out.module = some.module;
  out.kind = some.kind;
  auto copy = [events](const CallNode* node, const EventCounts CallNode::*field) {
    std::vector<uint64_t> v(events, 0);
    if (node)
      for (size_t e = 0; e < events && e < (node->*field).size(); ++e) v[e] = (node->*field)[e];
    return v;
  };
  out.old_self = copy(old_node, &CallNode::self);
  out.new_self = copy(new_node, &CallNode::self);
  out.old_total = copy(old_node, &CallNode::total);
  out.new_total = copy(new_node, &CallNode::total);
  auto same = [](const CallNode& a, const CallNode& b) {
    return a.kind == b.kind && a.module == b.module && a.name == b.name;
  };
  std::vector<const CallNode*> new_matched;
  if (old_node) {
    for (const auto& child : old_node->children) {
      const CallNode* partner = nullptr;
      if (new_node)
        for (const auto& candidate : new_node->children)
          if (same(*child, *candidate)) partner = candidate.get();
      if (partner) new_matched.push_back(partner);
      auto merged = std::make_unique<DiffCallNode>();
      MergeInto(*merged, child.get(), partner, events);
      out.children.push_back(std::move(merged));
    }
  }
  if (new_node) {
    for (const auto& child : new_node->children) {
      if (std::find(new_matched.begin(), new_matched.end(), child.get()) != new_matched.end())
        continue;
      auto merged = std::make_unique<DiffCallNode>();
      MergeInto(*merged, nullptr, child.get(), events);
      out.children.push_back(std::move(merged));
    }
  }
}

}  // namespace

const char* FunctionStatusName(FunctionStatus status) {
  switch (status) {
    case FunctionStatus::kBoth:
      return "";
    case FunctionStatus::kGone:
      return "gone";
    case FunctionStatus::kNew:
      return "new";
  }
  return "";
}

const char* SignificanceName(Significance significance) {
  switch (significance) {
    case Significance::kNotAssessed:
      return "not-assessed";
    case Significance::kSignificant:
      return "significant";
    case Significance::kNotSignificant:
      return "not-significant";
  }
  return "";
}

FunctionTotals SumByFunction(const FunctionProfile& profile, bool match_module) {
  FunctionTotals t;
  // Events a leader's samples read have no samples of their own: a self period of 0 everywhere
  // would read as "none counted" (the group's windows carry their counts: window_ratios).
  std::vector<size_t> kept;
  for (size_t e = 0; e < profile.events.size(); ++e) {
    const EventDesc& event = profile.events[e];
    if (!IsReadOnlyMember(profile.events, e, profile.total_samples)) {
      kept.push_back(e);
      continue;
    }
    t.read_only_events.push_back(event.name + " (read in the samples of " +
                                 profile.events[static_cast<size_t>(event.group_leader)].name +
                                 ")");
  }
  const size_t events = kept.size();
  for (size_t e : kept) t.events.push_back(profile.events[e].name);
  // A member also sampled on its own (record's default beside a group) is compared by those
  // samples: not a read-only event.
  std::erase_if(t.read_only_events, [&](const std::string& entry) {
    return std::any_of(t.events.begin(), t.events.end(),
                       [&](const std::string& name) { return entry.rfind(name + " (", 0) == 0; });
  });
  t.totals.assign(events, 0.0);
  t.samples.assign(events, 0.0);
  for (size_t k = 0; k < events; ++k) {
    const size_t e = kept[k];
    if (e < profile.total_period.size()) t.totals[k] = static_cast<double>(profile.total_period[e]);
    if (e < profile.total_samples.size())
      t.samples[k] = static_cast<double>(profile.total_samples[e]);
  }
  t.lost = profile.lost;
  for (const FunctionRow& row : profile.rows) {
    const FunctionKey key{match_module ? ModuleFileName(row.module) : std::string(), row.function};
    std::vector<double>& self = t.self.try_emplace(key, events, 0.0).first->second;
    std::vector<double>& samples = t.self_samples.try_emplace(key, events, 0.0).first->second;
    for (size_t k = 0; k < events; ++k) {
      if (kept[k] < row.self_period.size())
        self[k] += static_cast<double>(row.self_period[kept[k]]);
      if (kept[k] < row.self_samples.size())
        samples[k] += static_cast<double>(row.self_samples[kept[k]]);
    }
  }
  // An off-CPU recording's wall time, one more event: what a thread's waits and its work cost
  // the clock together, so that a gate can hold a function to it.
  if (const std::optional<WallTimeEvents> wall = FindWallTimeEvents(profile.events)) {
    auto position = [&](size_t e) {
      return static_cast<size_t>(std::find(kept.begin(), kept.end(), e) - kept.begin());
    };
    const size_t on_cpu = position(wall->on_cpu), off_cpu = position(wall->off_cpu);
    if (on_cpu < events && off_cpu < events) {
      t.events.emplace_back(kWallTimeEventName);
      t.totals.push_back(t.totals[on_cpu] + t.totals[off_cpu]);
      for (auto* per_function : {&t.self, &t.self_samples})
        for (auto& [key, values] : *per_function)
          values.push_back(values[on_cpu] + values[off_cpu]);
      t.samples.push_back(t.samples[on_cpu] + t.samples[off_cpu]);
    }
  }
  return t;
}

void WindowRatioSums::Add(const WindowRatioSums& other) {
  instructions += other.instructions;
  cycles += other.cycles;
  instructions_squared += other.instructions_squared;
  cross += other.cross;
  cycles_squared += other.cycles_squared;
  windows += other.windows;
  instructions_bound += other.instructions_bound;
  cycles_bound += other.cycles_bound;
  if (bias.empty()) bias = other.bias;
  if (sampled_bias.empty()) sampled_bias = other.sampled_bias;
}

std::optional<WindowRatios> SumWindowRatios(const ReportTable& table, bool match_module) {
  // The first group that reads both, and where in it each is.
  std::optional<size_t> group;
  size_t instructions_slot = 0, cycles_slot = 0;
  for (size_t g = 0; g < table.groups.size() && !group; ++g) {
    std::optional<size_t> i, c;
    const std::vector<uint32_t>& members = table.groups[g].members;
    for (size_t slot = 0; slot < members.size(); ++slot) {
      const std::string name = FormulaEventName(table.events[members[slot]].name);
      if (name == "instructions" && !i) i = slot;
      if (name == "cycles" && !c) c = slot;
    }
    if (i && c) {
      group = g;
      instructions_slot = *i;
      cycles_slot = *c;
    }
  }
  if (!group) return std::nullopt;
  const ReadGroup& read_group = table.groups[*group];
  const size_t members = read_group.members.size();
  WindowRatios ratios;
  ratios.instructions_event = table.events[read_group.members[instructions_slot]].name;
  ratios.cycles_event = table.events[read_group.members[cycles_slot]].name;
  ratios.leader = table.events[read_group.leader].name;
  // The reasons report gives: its IPC[g] column over this group.
  std::optional<DerivedMetrics> metrics;
  std::optional<size_t> ipc_column, sampled_column;
  if (auto planned = DerivedMetrics::Plan(table, {}, ""); planned.ok()) {
    metrics = std::move(planned).value();
    for (size_t c = 0; c < metrics->columns().size(); ++c) {
      const MetricColumn& column = metrics->columns()[c];
      if (column.name != "IPC") continue;
      if (column.source == MetricSource::kGroupDeltas && column.group == static_cast<int>(*group))
        ipc_column = c;
      if (column.source == MetricSource::kSampledPeriods && !sampled_column) sampled_column = c;
    }
  }
  for (const ReportRow& row : table.rows) {
    if (*group >= row.groups.size()) continue;
    // The row's keys are (dso, sym).
    const std::string& module = row.keys.size() > 1 ? row.keys[0] : std::string();
    const FunctionKey key{match_module ? ModuleFileName(module) : std::string(), row.keys.back()};
    if (sampled_column) {
      const MetricValue value = metrics->Evaluate(*sampled_column, table, row);
      if (value.bias && value.bias->kind != WindowBiasKind::kSamplesLost) {
        WindowRatioSums reason;
        reason.sampled_bias = value.bias->reason;
        ratios.functions[key].Add(reason);
      }
    }
    const GroupCredit& credit = row.groups[*group];
    if (credit.windows_credited == 0 || credit.deltas.size() != members) continue;
    WindowRatioSums sums;
    sums.instructions = credit.deltas[instructions_slot];
    sums.cycles = credit.deltas[cycles_slot];
    sums.instructions_squared = credit.products[instructions_slot * members + instructions_slot];
    sums.cross = credit.products[instructions_slot * members + cycles_slot];
    sums.cycles_squared = credit.products[cycles_slot * members + cycles_slot];
    sums.windows = credit.windows_credited;
    auto bound = [&](size_t slot) {
      return slot < credit.member_bound.size() ? credit.member_bound[slot] * credit.deltas[0] : 0.0;
    };
    sums.instructions_bound = bound(instructions_slot);
    sums.cycles_bound = bound(cycles_slot);
    if (ipc_column) {
      const MetricValue value = metrics->Evaluate(*ipc_column, table, row);
      if (value.bias) sums.bias = value.bias->reason;
    }
    ratios.functions[key].Add(sums);
    // The report's total has no call edges to bound: neither has the diff's.
    WindowRatioSums whole = sums;
    whole.bias.clear();
    whole.instructions_bound = whole.cycles_bound = 0;
    ratios.total.Add(whole);
  }
  return ratios;
}

Result<ProfileDiff> DiffProfiles(const std::vector<FunctionTotals>& old_side,
                                 const std::vector<FunctionTotals>& new_side,
                                 const ProfileDiffOptions& options) {
  if (old_side.empty() || new_side.empty()) return Error("each side needs at least one profile");
  auto pairing = PairEvents(old_side, new_side);
  if (!pairing.ok()) return pairing.error();
  auto old_scale =
      ScaleFactors(old_side, pairing->old_index, old_side, pairing->old_index, *pairing, options);
  if (!old_scale.ok()) return old_scale.error();
  auto new_scale =
      ScaleFactors(new_side, pairing->new_index, old_side, pairing->old_index, *pairing, options);
  if (!new_scale.ok()) return new_scale.error();

  ProfileDiff diff;
  diff.options = options;
  diff.old_runs = old_side.size();
  diff.new_runs = new_side.size();
  diff.unpaired_events = pairing->unpaired;
  for (const auto* side : {&old_side, &new_side})
    for (const FunctionTotals& run : *side)
      for (const std::string& name : run.read_only_events)
        if (std::find(diff.read_only_events.begin(), diff.read_only_events.end(), name) ==
            diff.read_only_events.end())
          diff.read_only_events.push_back(name);
  diff.note = pairing->note;
  diff.runs_needed = MinimumRunsPerSide(options.alpha);

  for (size_t e = 0; e < pairing->names.size(); ++e) {
    EventDiff event;
    event.name = pairing->names[e];
    // Per-run values of every function of this event, on either side.
    std::map<FunctionKey, RunStatistics> values;
    auto collect = [&](const std::vector<FunctionTotals>& side,
                       const std::vector<std::vector<size_t>>& index,
                       const std::vector<std::vector<double>>& scale, bool is_old) {
      for (size_t r = 0; r < side.size(); ++r) {
        const size_t i = index[r][e];
        const double factor = scale[r][e];
        (is_old ? event.total_runs.old_runs : event.total_runs.new_runs)
            .push_back(side[r].totals[i] * factor);
        for (const auto& [key, self] : side[r].self) {
          if (self[i] == 0) continue;
          RunStatistics& stats = values[key];
          std::vector<double>& runs = is_old ? stats.old_runs : stats.new_runs;
          runs.resize(side.size(), 0.0);  // runs without the function count 0
          runs[r] = self[i] * factor;
        }
      }
    };
    collect(old_side, pairing->old_index, *old_scale, true);
    collect(new_side, pairing->new_index, *new_scale, false);
    event.old_total = Mean(event.total_runs.old_runs);
    event.new_total = Mean(event.total_runs.new_runs);
    event.delta = Difference(event.new_total, event.old_total);
    event.delta_pct = Percent(event.delta, event.old_total);
    FillStatistics(event.total_runs, options, event.delta_pct);

    for (auto& [key, stats] : values) {
      stats.old_runs.resize(old_side.size(), 0.0);
      stats.new_runs.resize(new_side.size(), 0.0);
      FunctionDiff f;
      f.key = key;
      f.old_value = Mean(stats.old_runs);
      f.new_value = Mean(stats.new_runs);
      f.status = f.old_value == 0   ? FunctionStatus::kNew
                 : f.new_value == 0 ? FunctionStatus::kGone
                                    : FunctionStatus::kBoth;
      f.delta = Difference(f.new_value, f.old_value);
      f.delta_pct = Percent(f.delta, f.old_value);
      f.delta_pt = Percent(f.delta, event.old_total).value_or(0);
      f.old_share = Percent(f.old_value, event.old_total).value_or(0);
      f.new_share = Percent(f.new_value, event.new_total).value_or(0);
      f.runs = std::move(stats);
      FillStatistics(f.runs, options, f.delta_pct);
      event.functions.push_back(std::move(f));
    }
    std::sort(event.functions.begin(), event.functions.end(),
              [](const FunctionDiff& a, const FunctionDiff& b) {
                if (std::fabs(a.delta) != std::fabs(b.delta))
                  return std::fabs(a.delta) > std::fabs(b.delta);
                return a.key < b.key;
              });
    diff.events.push_back(std::move(event));
  }
  diff.metrics = DeriveMetrics(old_side, new_side, *pairing, diff.events);
  if (!diff.metrics) diff.metrics = DeriveWindowMetrics(old_side, new_side, diff.events);
  diff.split = SplitCost(old_side, new_side, options.split_cost, options.split_work);
  if (!diff.split && !options.split_cost.empty())
    return Error::BadRequest("--split " + options.split_cost + "/" + options.split_work +
                             ": both sides need samples of both events");
  return diff;
}

DiffCallNode MergeCallTrees(const CallNode& old_root, const CallNode& new_root, size_t events) {
  DiffCallNode root;
  MergeInto(root, &old_root, &new_root, events);
  return root;
}

std::optional<ModuleRename> DetectModuleRename(const EventDiff& event) {
  ModuleRename rename;
  rename.rows = event.functions.size();
  std::map<std::string, std::string> new_module_by_name;  // the first new function's module
  for (const FunctionDiff& f : event.functions) {
    if (f.status == FunctionStatus::kBoth) continue;
    ++rename.gone_or_new;
    if (f.status == FunctionStatus::kNew) new_module_by_name.emplace(f.key.function, f.key.module);
  }
  std::map<std::pair<std::string, std::string>, size_t> moves;
  for (const FunctionDiff& f : event.functions) {
    if (f.status != FunctionStatus::kGone) continue;
    auto it = new_module_by_name.find(f.key.function);
    if (it == new_module_by_name.end()) continue;
    ++rename.paired;
    ++moves[{f.key.module, it->second}];
  }
  size_t most = 0;
  for (const auto& [modules, count] : moves)
    if (count > most) {
      most = count;
      rename.old_module = modules.first;
      rename.new_module = modules.second;
    }
  // Judged on the module itself, not on the whole table: the libraries and kernel functions both
  // sides share are rows too, and more of them on a busy machine (preemption, page faults). Most
  // of the old module's rows reappear by name in the new one, and at least three of them (or all,
  // for a module of fewer rows).
  size_t old_module_rows = 0;
  for (const FunctionDiff& f : event.functions)
    if (f.key.module == rename.old_module) ++old_module_rows;
  if (most == 0 || most * 2 < old_module_rows || most < std::min<size_t>(3, old_module_rows))
    return std::nullopt;
  return rename;
}

}  // namespace tprof
