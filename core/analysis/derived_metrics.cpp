#include "core/analysis/derived_metrics.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iterator>
#include <limits>

#include "core/analysis/significance.h"
#include "core/model/event_unit.h"

namespace tprof {
namespace {

// The fewest windows of its own from which a row's clock reads say how much time its samples
// left out (ClockLeftOutBias): below it, a stretch from a handful of windows is as likely off as
// the value it would correct.
constexpr uint64_t kClockWindowsForStretch = 20;

}  // namespace

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
      // tprof record --off-cpu: the share of a function's wall time spent waiting.
      {"off-CPU%", "100 * off\\-cpu / (task\\-clock + off\\-cpu)", "%", {}},
      {"off-CPU%", "100 * off\\-cpu / (cpu\\-clock + off\\-cpu)", "%", {}},
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
  } else if (const size_t last = name.rfind('/');
             slash != std::string::npos && slash > 0 && last > slash &&
             name.find_first_not_of("ukhpPGHSDWe", last + 1) == std::string::npos) {
    // "page-faults/period=1/", "cycles/period=1000/u": an event with perf's sampling terms. A
    // PMU's own encoding ("cpu/event=0x3c,umask=0/") names no event, and stays as it is.
    const std::string terms = "," + name.substr(slash + 1, last - slash - 1);
    bool encoding = false;
    for (const char* term : {",event=", ",config=", ",config1=", ",config2=", ",umask="})
      encoding |= terms.find(term) != std::string::npos;
    if (!encoding) name.resize(slash);
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

Result<MetricFormula> ParseUserMetric(const std::string& text,
                                      const std::vector<EventDesc>& events) {
  const size_t equals = text.find('=');
  auto trim = [](std::string s) {
    s.erase(0, s.find_first_not_of(" \t"));
    s.erase(s.find_last_not_of(" \t") + 1);
    return s;
  };
  if (equals == std::string::npos)
    return Error("--metric '" + text + "': write NAME = EXPRESSION, e.g. 'faults_per_ki = " +
                 "page-faults / instructions * 1000'");
  MetricFormula formula;
  formula.name = trim(text.substr(0, equals));
  std::string expression = trim(text.substr(equals + 1));
  if (formula.name.empty() || expression.empty())
    return Error("--metric '" + text + "': the name and the expression must not be empty");
  // The recorded events' names with a '-' in them are escaped for the parser, longest first
  // (so that "stalled-cycles-frontend" is not cut at "stalled-cycles"), where they stand as a
  // whole name.
  std::vector<std::string> dashed;
  for (const EventDesc& e : events) {
    std::string name = FormulaEventName(e.name);
    if (name.find('-') != std::string::npos) dashed.push_back(name);
  }
  std::sort(dashed.begin(), dashed.end(),
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  auto is_name_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '#' ||
           c == ':' || c == '\\';
  };
  std::string escaped;
  for (size_t i = 0; i < expression.size();) {
    bool matched = false;
    if (i == 0 || !is_name_char(expression[i - 1]))
      for (const std::string& name : dashed)
        if (expression.compare(i, name.size(), name) == 0 &&
            (i + name.size() == expression.size() ||
             (!is_name_char(expression[i + name.size()]) && expression[i + name.size()] != '-'))) {
          for (char c : name) {
            if (c == '-') escaped.push_back('\\');
            escaped.push_back(c);
          }
          i += name.size();
          matched = true;
          break;
        }
    if (!matched) escaped.push_back(expression[i++]);
  }
  auto parsed = MetricExpression::Parse(escaped);
  if (!parsed.ok()) return parsed.error().WithContext("--metric '" + text + "'");
  std::vector<std::string> names;
  for (const EventDesc& e : events) names.push_back(FormulaEventName(e.name));
  for (const std::string& v : parsed->variables())
    if (std::find(names.begin(), names.end(), v) == names.end()) {
      std::string known;
      for (const std::string& n : names) known += (known.empty() ? "" : ", ") + n;
      return Error("--metric '" + text + "': no recorded event '" + v + "' (recorded: " + known +
                   ")");
    }
  formula.formula = escaped;
  formula.unit = "user";
  return formula;
}

const char* MetricSourceName(MetricSource source) {
  return source == MetricSource::kSampledPeriods ? "sampled periods" : "group deltas";
}

namespace {

// Work a clock sampled in one mode leaves out of its samples: what the kernel handles (faults,
// switches, migrations, tracepoints), whatever the event's own modifiers, and any event counted
// in the mode the clock's samples leave out.
bool CountsWorkInLeftOutMode(const EventDesc& event, const EventDesc& clock) {
  if (event.type == PERF_TYPE_TRACEPOINT) return true;
  if (event.type == PERF_TYPE_SOFTWARE)
    return event.config == PERF_COUNT_SW_PAGE_FAULTS ||
           event.config == PERF_COUNT_SW_CONTEXT_SWITCHES ||
           event.config == PERF_COUNT_SW_CPU_MIGRATIONS ||
           event.config == PERF_COUNT_SW_PAGE_FAULTS_MIN ||
           event.config == PERF_COUNT_SW_PAGE_FAULTS_MAJ ||
           event.config == PERF_COUNT_SW_ALIGNMENT_FAULTS ||
           event.config == PERF_COUNT_SW_EMULATION_FAULTS;
  return clock.exclude_kernel ? !event.exclude_kernel : !event.exclude_user;
}

}  // namespace

Result<DerivedMetrics> DerivedMetrics::Plan(const ReportTable& table,
                                            const std::vector<MetricFormula>& extra,
                                            const std::string& origin,
                                            const std::vector<MetricFormula>& user) {
  DerivedMetrics plan;
  auto add = [&](const MetricFormula& f, const std::string& from) -> Result<bool> {
    auto expression = MetricExpression::Parse(f.formula);
    if (!expression.ok()) return expression.error().WithContext("metric " + f.name);
    auto is_constant = [&](const std::string& v) {
      return std::any_of(f.constants.begin(), f.constants.end(),
                         [&](const auto& c) { return c.first == v; });
    };
    // Sampled periods: every variable is an event that takes samples of its own. Not a burst
    // leader in the kernel's mode (hf_sample_period): its samples alternate a long and a short
    // period, each short one right after a long one and mostly in the same function, so they are
    // not independent samples of one mean period, as the interval assumes (about twice the
    // variance it would give, for 100,000/10,000).
    MetricColumn sampled{f.name, f.unit, f.formula, MetricSource::kSampledPeriods,
                         -1,     {},     {},        from};
    bool all = true;
    for (const std::string& v : expression->variables()) {
      if (is_constant(v)) continue;
      bool found = false;
      for (size_t e = 0; e < table.events.size() && !found; ++e)
        if (table.IsSampled(e) && table.total_samples[e] != 0 &&
            table.events[e].hf_sample_period == 0 && FormulaEventName(table.events[e].name) == v) {
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
  for (const MetricFormula& f : user) {
    auto r = add(f, "user");
    if (!r.ok()) return r.error();
  }
  // Sampled periods of a clock sampled in one mode measure less time than its group reads
  // (IsClockSampledInOneMode): Evaluate allows for that when it holds the two against each other.
  // A timer clock in both modes that reads itself may have missed ticks: ClockLeftOutBias.
  plan.left_out_clock_slot_.assign(plan.columns_.size(), -1);
  for (size_t c = 0; c < plan.columns_.size(); ++c) {
    if (plan.columns_[c].source != MetricSource::kSampledPeriods) continue;
    const std::vector<size_t>& events = plan.columns_[c].events;
    for (size_t slot = 0; slot < events.size(); ++slot) {
      const EventDesc& event = table.events[events[slot]];
      // In both modes, a clock has nothing left out to say unless it reads itself.
      const bool reads_itself =
          std::any_of(table.groups.begin(), table.groups.end(), [&](const ReadGroup& g) {
            return g.leader == events[slot] && g.members.size() == 1 && !g.read_totals.empty();
          });
      if (IsClockSampledInOneMode(event.type, event.config, event.exclude_user,
                                  event.exclude_kernel) ||
          (IsTimerClock(event.type, event.config) && reads_itself))
        plan.left_out_clock_slot_[c] = static_cast<int>(slot);
    }
  }
  plan.left_out_clock_.resize(plan.columns_.size());
  for (size_t c = 0; c < plan.columns_.size(); ++c) {
    if (plan.left_out_clock_slot_[c] < 0) continue;
    const std::vector<size_t>& events = plan.columns_[c].events;
    LeftOutClock& clock = plan.left_out_clock_[c];
    clock.event = events[static_cast<size_t>(plan.left_out_clock_slot_[c])];
    const EventDesc& desc = table.events[clock.event];
    clock.name = desc.name;
    clock.one_mode =
        IsClockSampledInOneMode(desc.type, desc.config, desc.exclude_user, desc.exclude_kernel);
    if (desc.exclude_user) clock.left_out = "user space";
    if (table.total_samples[clock.event])
      clock.mean_period = static_cast<double>(table.total_period[clock.event]) /
                          static_cast<double>(table.total_samples[clock.event]);
    for (size_t g = 0; g < table.groups.size(); ++g)
      if (table.groups[g].leader == clock.event && !table.groups[g].read_totals.empty()) {
        clock.group = static_cast<int>(g);
        if (const auto reads = ClockLeftOutOfReads(table, table.groups[g]);
            reads && reads->BeyondLateness())
          clock.left_out_time = reads->left_out;
      }
    for (size_t e : events)
      if (e != clock.event)
        clock.other_mode_work |= !clock.one_mode || CountsWorkInLeftOutMode(table.events[e], desc);
  }
  plan.other_method_.assign(plan.columns_.size(), -1);
  for (size_t g = 0; g < plan.columns_.size(); ++g) {
    if (plan.columns_[g].source != MetricSource::kGroupDeltas) continue;
    for (size_t c = 0; c < plan.columns_.size(); ++c)
      if (plan.columns_[c].source == MetricSource::kSampledPeriods &&
          plan.columns_[c].name == plan.columns_[g].name &&
          plan.columns_[c].formula == plan.columns_[g].formula) {
        plan.other_method_[g] = static_cast<int>(c);
        plan.other_method_[c] = static_cast<int>(g);
      }
  }
  return plan;
}

MetricValue ValueWithInterval(
    const std::function<std::optional<double>(const std::vector<double>&)>& evaluate,
    const std::vector<double>& counts, const std::vector<double>& covariance, double quantile,
    const std::vector<double>& bias_bounds) {
  MetricValue result;
  result.value = evaluate(counts);
  const size_t n = counts.size();
  if (result.value && covariance.size() == n * n) {
    // The gradient by central differences (one-sided where the formula is undefined beyond
    // the point, e.g. a denominator at zero).
    std::vector<double> gradient(n, 0);
    bool defined = true;
    for (size_t i = 0; i < n && defined; ++i) {
      const double h = std::max(std::abs(counts[i]), 1.0) * 1e-6;
      std::vector<double> up = counts, down = counts;
      up[i] += h;
      down[i] -= h;
      std::optional<double> fu = evaluate(up),
                            fd = counts[i] - h >= 0 ? evaluate(down) : std::nullopt;
      if (fu && fd)
        gradient[i] = (*fu - *fd) / (2 * h);
      else if (fu)
        gradient[i] = (*fu - *result.value) / h;
      else if (fd)
        gradient[i] = (*result.value - *fd) / h;
      else
        defined = false;
    }
    double variance = 0;
    for (size_t i = 0; i < n; ++i)
      for (size_t j = 0; j < n; ++j) variance += gradient[i] * covariance[i * n + j] * gradient[j];
    double bias = 0;
    for (size_t i = 0; i < n && i < bias_bounds.size(); ++i)
      bias += std::abs(gradient[i]) * bias_bounds[i];
    if (defined && std::isfinite(variance) && std::isfinite(bias))
      result.half_width = quantile * std::sqrt(std::max(variance, 0.0)) + bias;
  }
  result.low_confidence =
      !result.value || !result.half_width ||
      *result.half_width > kMaxConfidentRelativeHalfWidth * std::abs(*result.value);
  return result;
}

double StudentT975(uint64_t degrees) {
  // Tabulated; between entries, linear in 1 / degrees (exact to the third decimal).
  static constexpr std::pair<uint64_t, double> kTable[] = {
      {1, 12.706}, {2, 4.303},  {3, 3.182},  {4, 2.776},  {5, 2.571},  {6, 2.447},
      {7, 2.365},  {8, 2.306},  {9, 2.262},  {10, 2.228}, {12, 2.179}, {15, 2.131},
      {20, 2.086}, {25, 2.060}, {30, 2.042}, {40, 2.021}, {60, 2.000}, {120, 1.980}};
  if (degrees == 0) return std::numeric_limits<double>::infinity();
  if (degrees >= 120) {
    // Towards the normal quantile 1.960 at infinity, linear in 1 / degrees.
    return 1.960 + (1.980 - 1.960) * 120.0 / static_cast<double>(degrees);
  }
  for (size_t i = 0; i + 1 < std::size(kTable); ++i) {
    const auto [d0, t0] = kTable[i];
    const auto [d1, t1] = kTable[i + 1];
    if (degrees == d0) return t0;
    if (degrees < d1) {
      const double x = 1.0 / static_cast<double>(degrees), x0 = 1.0 / static_cast<double>(d0),
                   x1 = 1.0 / static_cast<double>(d1);
      return t0 + (t1 - t0) * (x - x0) / (x1 - x0);
    }
  }
  return 1.980;
}

namespace {

// The variance a count of `events` (a Poisson count) needs at least so that the normal
// interval reaches the exact 97.5 % upper bound of its mean: the normal approximation's
// sqrt(events) falls short of it for small counts (1.96 against 4.57 events for one), and is
// zero for none.
double PoissonVarianceFloor(double events) {
  const double k = std::max(std::round(events), 0.0);
  const double reach = PoissonUpper975(static_cast<uint64_t>(k)) - k;
  return reach * reach / (kNormal975 * kNormal975);
}

}  // namespace

std::vector<double> PoissonCovariance(const std::vector<double>& counts,
                                      const std::vector<uint64_t>& samples,
                                      const std::vector<double>& mean_periods) {
  const size_t n = counts.size();
  std::vector<double> covariance(n * n, 0);
  for (size_t i = 0; i < n; ++i) {
    // No sample: the count's exact bound is PoissonUpper975(0) samples of the event's mean
    // period over the whole profile (a row where a fault was never sampled still has a bound).
    if (samples[i] == 0 && (i >= mean_periods.size() || mean_periods[i] <= 0)) return {};
    const double error = samples[i] == 0
                             ? mean_periods[i] * PoissonUpper975(0) / kNormal975
                             : counts[i] * PoissonRelativeReach(samples[i]) / kNormal975;
    covariance[i * n + i] = error * error;
  }
  return covariance;
}

std::vector<double> WindowCovariance(const std::vector<double>& deltas,
                                     const std::vector<double>& products, uint64_t windows,
                                     const std::vector<size_t>& slots) {
  if (windows < 2) return {};
  const size_t members = deltas.size();
  const double w = static_cast<double>(windows);
  const size_t n = slots.size();
  std::vector<double> covariance(n * n, 0);
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < n; ++j) {
      const size_t a = slots[i], b = slots[j];
      const double sample_covariance =
          (products[a * members + b] - deltas[a] * deltas[b] / w) / (w - 1);
      covariance[i * n + j] = w * sample_covariance;
    }
  // A member that counted few events in these windows (a function's page faults, none at all in
  // the extreme) shows little spread from window to window, and its spread alone would give a
  // narrow interval, or none: each member's variance is at least its sum's as a Poisson count.
  // Raising the diagonal keeps the matrix a covariance.
  for (size_t i = 0; i < n; ++i)
    covariance[i * n + i] = std::max(covariance[i * n + i], PoissonVarianceFloor(deltas[slots[i]]));
  return covariance;
}

MetricValue DerivedMetrics::Compute(size_t column, const std::vector<double>& counts,
                                    const std::vector<double>& covariance, double quantile,
                                    const std::vector<double>& bias_bounds) const {
  const Compiled& compiled = compiled_[column];
  auto evaluate = [&](const std::vector<double>& at) -> std::optional<double> {
    // The formula's non-constant variables, in order, are the events the column reads.
    std::vector<std::pair<std::string, double>> values = compiled.constants;
    size_t next = 0;
    for (const std::string& v : compiled.expression.variables()) {
      bool constant = std::any_of(compiled.constants.begin(), compiled.constants.end(),
                                  [&](const auto& cst) { return cst.first == v; });
      if (!constant && next < at.size()) values.emplace_back(v, at[next++]);
    }
    return compiled.expression.Evaluate([&](const std::string& name) -> std::optional<double> {
      for (const auto& [variable, value] : values)
        if (variable == name) return value;
      return std::nullopt;
    });
  };
  return ValueWithInterval(evaluate, counts, covariance, quantile, bias_bounds);
}

std::optional<WindowBias> LostSamplesBias(const std::vector<size_t>& used, uint64_t lost,
                                          const std::vector<uint64_t>& total_samples,
                                          const std::vector<EventDesc>& events,
                                          const MetricValue& value) {
  if (lost == 0 || !value.value) return std::nullopt;
  double worst = 0;
  std::string event;
  for (size_t e : used) {
    const double share = static_cast<double>(lost) / static_cast<double>(total_samples[e] + lost);
    if (share > worst) {
      worst = share;
      event = events[e].name;
    }
  }
  const double moved = worst * std::abs(*value.value);
  if (value.half_width && moved <= *value.half_width) return std::nullopt;
  char text[240];
  std::snprintf(text, sizeof text,
                "samples lost: the kernel lost %llu samples (its ring buffer was full), which "
                "may all have been %s's: that count may be %.1f %% short, the value as much off",
                static_cast<unsigned long long>(lost), event.c_str(), 100 * worst);
  return WindowBias{WindowBiasKind::kSamplesLost,
                    std::string(text) + "; record with a larger -m or a lower rate"};
}

std::optional<WindowBias> DerivedMetrics::ClockRhythmBias(size_t column,
                                                          const std::vector<double>& counts,
                                                          const MetricValue& value,
                                                          const std::vector<ClockRhythmSlot>& slots,
                                                          const std::vector<EventDesc>& events,
                                                          bool inclusive) const {
  if (!value.value) return std::nullopt;
  const MetricColumn& c = columns_[column];
  for (size_t slot = 0; slot < slots.size() && slot < c.events.size(); ++slot) {
    const auto& [finding, count] = slots[slot];
    if (!finding || !count) continue;
    // Whether the count's being off by `reach` of it moves the value beyond its interval (not at
    // all for a count of no events over any time: a clock's count taken to nothing leaves no
    // value, and a value of 0 no other).
    const auto moves = [&](double reach) {
      double moved = 0;
      for (double scale : {1 - reach, 1 + reach}) {
        std::vector<double> scaled = counts;
        scaled[slot] *= scale;
        const std::optional<double> v = Compute(column, scaled, {}, kNormal975).value;
        if (v)
          moved = std::max(moved, std::abs(*v - *value.value));
        else if (*value.value != 0)
          moved = INFINITY;
      }
      return moved > 0 && (!value.half_width || moved > *value.half_width);
    };
    if (const auto reach = ClockSteppingReach(*count); reach && moves(*reach))
      return WindowBias{WindowBiasKind::kClockStepsOver,
                        ClockSteppingReason(*finding, *count, *reach, events)};
    // Calls shorter than the period: the clock's share of them has no bound but the whole.
    if (ClockStepsOverMostCalls(*count, inclusive) && moves(1.0))
      return WindowBias{WindowBiasKind::kClockStepsOver,
                        ClockShortCallsReason(*finding, *count, inclusive, events)};
    if (ClockNeverHeldTwoPeriods(*count, inclusive) && moves(1.0))
      return WindowBias{WindowBiasKind::kClockStepsOver,
                        ClockIsolatedCallsReason(*finding, *count, inclusive, events)};
    if (const auto reach = ClockCallEdgeReach(*count, inclusive); reach && moves(*reach))
      return WindowBias{WindowBiasKind::kClockStepsOver,
                        ClockCallEdgeReason(*finding, *count, inclusive, *reach, events)};
    if (const auto reach = ClockRhythmReach(*finding, *count, inclusive); reach && moves(*reach))
      return WindowBias{
          WindowBiasKind::kClockInStep,
          ClockRhythmReason(*finding, *count, inclusive, *reach, events[c.events[slot]].name)};
  }
  return std::nullopt;
}

std::optional<WindowBias> DerivedMetrics::ClockLeftOutBias(
    size_t column, const std::vector<double>& counts, const MetricValue& value,
    const ReportRow* row, bool inclusive, std::optional<double> left_out_here) const {
  const int slot = left_out_clock_slot_[column];
  if (slot < 0 || !value.value || !left_out_clock_[column].other_mode_work) return std::nullopt;
  const LeftOutClock& clock = left_out_clock_[column];
  const size_t s = static_cast<size_t>(slot);
  const std::string head =
      clock.one_mode
          ? "clock in one mode: " + clock.name + "'s samples leave out the time spent in the " +
                clock.left_out + " on this code's behalf"
          : "clock missed ticks: " + clock.name +
                "'s timer missed ticks that its count kept (interrupts that came late "
                "or not at all: a busy host holding the CPU)";
  const std::string advice =
      clock.one_mode
          ? "; record the clock in both modes (as root, or with perf_event_paranoid at 1 or below)"
          : "; record again on a quieter machine, or read the events in a group ({...}:S)";
  const WindowBiasKind kind =
      clock.one_mode ? WindowBiasKind::kClockInOneMode : WindowBiasKind::kClockMissedTicks;
  char text[320];
  if (left_out_here) {
    std::vector<double> with_time = counts;
    with_time[s] += *left_out_here;
    const std::optional<double> counted = Compute(column, with_time, {}, kNormal975).value;
    if (!counted || std::abs(*counted - *value.value) <= value.half_width.value_or(0))
      return std::nullopt;
    std::snprintf(text, sizeof text,
                  ", which the clock's reads count: %.4g ms here; with that time counted this "
                  "value is %.4g, so it reads %s",
                  *left_out_here / 1e6, *counted, *counted < *value.value ? "high" : "low");
    return WindowBias{kind, head + text + advice};
  }
  if (clock.group < 0) {
    // Not read: how much was left out is unknown, only which way it moves the value.
    std::vector<double> doubled = counts;
    doubled[s] *= 2;
    const std::optional<double> moved = Compute(column, doubled, {}, kNormal975).value;
    if (moved && *moved == *value.value) return std::nullopt;  // a count of no events
    return WindowBias{kind,
                      head +
                          ", which this recording did not read (tprof record reads such a clock "
                          "beside other events), so this value may read " +
                          (moved && *moved > *value.value ? "low" : "high") + advice};
  }
  // The row's own windows: a window between two of its samples that were delivered spans the
  // periods of those dropped between them, so its reads counted `stretch` times the time its
  // samples stand for. (Total% of a caller, a frame or an interval has no windows of its own.)
  // The windows across its call edges hold more: at most all of their left-out time was the
  // row's (a function whose faults come at its entry leaves its kernel time in the window from
  // the caller's last sample to its own first).
  // The row's windows stand for its time only where they span most of its samples: a function
  // whose calls hold a sample or two has its windows across its call edges, and the few it keeps
  // (2 or 13 windows over 111 samples, in recordings of short bursts of faults) say little of what
  // it left out, so the run's left-out time bounds it instead.
  std::optional<double> stretch;
  double edge_left_out = 0;
  uint64_t windows = 0, samples = 0;
  if (row && (!inclusive || row->total_period[clock.event] == row->self_period[clock.event]) &&
      clock.mean_period > 0) {
    const GroupCredit& credit = row->groups[static_cast<size_t>(clock.group)];
    windows = credit.windows_credited;
    samples = row->self_samples[clock.event];
    if (windows >= kClockWindowsForStretch && 2 * windows >= samples && !credit.deltas.empty()) {
      stretch =
          std::max(1.0, credit.deltas[0] / (static_cast<double>(windows) * clock.mean_period));
      edge_left_out =
          std::max(0.0, credit.edge_leader_delta -
                            static_cast<double>(credit.edge_windows) * clock.mean_period);
    }
  }
  std::vector<double> with_time = counts, with_edges = counts;
  if (stretch) {
    with_time[s] *= *stretch;
    with_edges[s] = with_time[s] + edge_left_out;
  } else {
    with_time[s] += clock.left_out_time;  // all the run left out: a bound
    with_edges = with_time;
  }
  const std::optional<double> explained = Compute(column, with_time, {}, kNormal975).value;
  const std::optional<double> at_most = Compute(column, with_edges, {}, kNormal975).value;
  if (!explained || !at_most) return std::nullopt;
  const double reach = value.half_width.value_or(0);
  if (std::abs(*explained - *value.value) <= reach && std::abs(*at_most - *value.value) <= reach)
    return std::nullopt;
  const char* direction = *at_most < *value.value ? "high" : "low";
  // The range where the edges' time could move the value at all (half a per cent), else the one
  // value the row's own windows give.
  if (stretch && std::abs(*at_most - *explained) > 0.005 * std::abs(*explained))
    std::snprintf(text, sizeof text,
                  ", which the clock's reads count: over %llu windows here %.2fx the time its "
                  "samples stand for, and %.3g ms more across its call edges; with that time "
                  "counted this value is %.4g to %.4g, so it reads %s",
                  static_cast<unsigned long long>(windows), *stretch, edge_left_out / 1e6,
                  std::min(*explained, *at_most), std::max(*explained, *at_most), direction);
  else if (stretch)
    std::snprintf(text, sizeof text,
                  ", which the clock's reads count: over %llu windows here %.2fx the time its "
                  "samples stand for; with that time counted this value is %.4g, so it reads %s",
                  static_cast<unsigned long long>(windows), *stretch, *explained, direction);
  else {
    // The run's bound: why the row's own windows could not say how much of it was here.
    char why[96] = "";
    if (windows > 0 && windows < kClockWindowsForStretch)
      std::snprintf(why, sizeof why, " (its %llu window%s too few to say)",
                    static_cast<unsigned long long>(windows), windows == 1 ? " is" : "s are");
    else if (windows > 0)
      std::snprintf(why, sizeof why, " (its %llu windows span too few of its %llu samples to say)",
                    static_cast<unsigned long long>(windows),
                    static_cast<unsigned long long>(samples));
    std::snprintf(text, sizeof text,
                  ", which the clock's reads count: %.4g ms over the run, how much of it here "
                  "unknown%s; with all of it counted this value would be %.4g, so it may read %s",
                  clock.left_out_time / 1e6, why, *explained, direction);
  }
  return WindowBias{kind, head + text + advice};
}

MetricValue DerivedMetrics::EvaluateOwn(size_t column, const ReportTable& table,
                                        const ReportRow& row, bool inclusive) const {
  const MetricColumn& c = columns_[column];
  std::vector<double> counts;
  if (c.source == MetricSource::kSampledPeriods) {
    std::vector<uint64_t> samples;
    std::vector<double> mean_periods;
    for (size_t e : c.events) {
      counts.push_back(static_cast<double>(inclusive ? row.total_period[e] : row.self_period[e]));
      samples.push_back(inclusive ? row.total_samples[e] : row.self_samples[e]);
      mean_periods.push_back(table.total_samples[e]
                                 ? static_cast<double>(table.total_period[e]) /
                                       static_cast<double>(table.total_samples[e])
                                 : 0.0);
    }
    MetricValue value =
        Compute(column, counts, PoissonCovariance(counts, samples, mean_periods), kNormal975);
    value.bias = LostSamplesBias(c.events, table.lost, table.total_samples, table.events, value);
    // (Where the same formula has group deltas, Evaluate holds the two against each other.)
    if (!value.bias && (other_method_[column] < 0 || inclusive))
      value.bias = ClockLeftOutBias(column, counts, value, &row, inclusive);
    if (!value.bias) {
      std::vector<ClockRhythmSlot> slots;
      for (size_t e : c.events)
        slots.push_back({table.ClockRhythmOf(static_cast<uint32_t>(e)),
                         row.ClockRhythmOf(static_cast<uint32_t>(e))});
      value.bias = ClockRhythmBias(column, counts, value, slots, table.events, inclusive);
    }
    return value;
  }
  const GroupCredit& credit = row.groups[static_cast<size_t>(c.group)];
  std::vector<double> bounds;  // the members' edge bounds as counts over the credited windows
  for (size_t slot : c.member_slots) {
    counts.push_back(credit.deltas[slot]);
    bounds.push_back(
        slot < credit.member_bound.size() ? credit.member_bound[slot] * credit.deltas[0] : 0.0);
  }
  (void)table;
  MetricValue value = Compute(
      column, counts,
      WindowCovariance(credit.deltas, credit.products, credit.windows_credited, c.member_slots),
      StudentT975(credit.windows_credited > 0 ? credit.windows_credited - 1 : 0), bounds);
  for (size_t slot : c.member_slots)
    if (slot < credit.member_bias.size() && !credit.member_bias[slot].empty() && !value.bias)
      value.bias = credit.member_bias[slot].front();
  return value;
}

MetricValue DerivedMetrics::Evaluate(size_t column, const ReportTable& table, const ReportRow& row,
                                     bool inclusive) const {
  MetricValue value = EvaluateOwn(column, table, row, inclusive);
  // The same formula by the other method: the events sampled on their own have no windows, so
  // neither bias of the window method and none from windows stepping over short calls; the
  // windows' ratios do not depend on how many clock samples land in a function, which a loop
  // in step with the clock's fixed period skews. Where the two lie apart beyond both intervals
  // one of them is off, and the data cannot say which: both values say so.
  const int other_column = other_method_[column];
  if (value.bias || inclusive || other_column < 0 || !value.value || !value.half_width)
    return value;
  const MetricValue other = EvaluateOwn(static_cast<size_t>(other_column), table, row, inclusive);
  if (!other.value || !other.half_width) return value;
  const bool grouped = columns_[column].source == MetricSource::kGroupDeltas;
  const MetricValue& by_windows = grouped ? value : other;
  const MetricValue& by_samples = grouped ? other : value;
  const size_t sampled_column = static_cast<size_t>(grouped ? other_column : column);
  double low = *by_samples.value - *by_samples.half_width,
         high = *by_samples.value + *by_samples.half_width;
  // A clock sampled in one mode leaves the time in the other out of its samples, while its count,
  // which the windows read, keeps it. How much, the group says when the clock leads it: a window
  // between two samples of the row that were delivered spans the periods of those dropped
  // between them, so the row's windows counted `stretch` times the time its delivered samples
  // stand for. The sampled value with that time counted is what the left-out time explains.
  // (Allowing any share let a window value far off stand: calls of 10 us read 98.7 ±1.3
  // faults/ms from the windows against a truth of 195, beside 318 sampled.)
  // (A clock in both modes leaves out only the ticks its timer missed, which ClockLeftOutBias
  // names on the sampled value.)
  const int clock_slot =
      left_out_clock_[sampled_column].one_mode ? left_out_clock_slot_[sampled_column] : -1;
  std::string clock_name;
  const char* left_out = "kernel";
  std::optional<double> explained;
  double stretch = 1;
  if (clock_slot >= 0) {
    const MetricColumn& c = columns_[sampled_column];
    const size_t clock_event = c.events[static_cast<size_t>(clock_slot)];
    const EventDesc& clock = table.events[clock_event];
    clock_name = clock.name;
    if (clock.exclude_user) left_out = "user space";
    const size_t group =
        static_cast<size_t>(columns_[grouped ? column : static_cast<size_t>(other_column)].group);
    const GroupCredit& credit = row.groups[group];
    if (table.groups[group].leader == clock_event && table.total_samples[clock_event] > 0 &&
        credit.windows_credited > 0 && !credit.deltas.empty()) {
      const double mean_period = static_cast<double>(table.total_period[clock_event]) /
                                 static_cast<double>(table.total_samples[clock_event]);
      stretch = std::max(
          1.0, credit.deltas[0] / (static_cast<double>(credit.windows_credited) * mean_period));
    }
    std::vector<double> counts;
    for (size_t e : c.events) counts.push_back(static_cast<double>(row.self_period[e]));
    counts[static_cast<size_t>(clock_slot)] *= stretch;
    explained = Compute(sampled_column, counts, {}, kNormal975).value;
  }
  const double windows_low = *by_windows.value - *by_windows.half_width,
               windows_high = *by_windows.value + *by_windows.half_width;
  const auto overlaps = [&](double a, double b) { return windows_low <= b && windows_high >= a; };
  if (overlaps(low, high)) return value;
  char text[160];
  // The explained value is the sampled one rescaled, and as uncertain relatively.
  const double explained_reach =
      explained && *by_samples.value != 0
          ? *by_samples.half_width * std::abs(*explained / *by_samples.value)
          : *by_samples.half_width;
  if (explained && overlaps(std::min(low, *explained - explained_reach),
                            std::max(high, *explained + explained_reach))) {
    // Apart only in the direction the clock's left-out time moves the sampled value: the
    // sampled value is the one that is off. (The clock's name may be long, a pmu/terms/ form:
    // it is not put through the fixed buffer.)
    if (grouped) return value;
    char stretch_text[32];
    std::snprintf(stretch_text, sizeof stretch_text, "%.2fx", stretch);
    std::snprintf(text, sizeof text,
                  "which its count keeps: the group's windows give %.4g \u00b1%.3g [g], and this "
                  "value reads %s",
                  *by_windows.value, *by_windows.half_width,
                  *explained < *by_samples.value ? "high" : "low");
    value.bias = WindowBias{WindowBiasKind::kClockInOneMode,
                            "clock in one mode: " + clock_name +
                                "'s samples leave out the time this function spends in the " +
                                left_out + " (its windows counted " + stretch_text +
                                " the time its samples stand for), " + text +
                                "; record the clock in both modes (as root, or with "
                                "perf_event_paranoid at 1 or below)"};
    return value;
  }
  std::snprintf(text, sizeof text, "methods disagree: %s give %.4g \u00b1%.3g %s",
                grouped ? "sampled on their own the events" : "the group's windows", *other.value,
                *other.half_width, grouped ? "[s]" : "[g]");
  value.bias = WindowBias{
      WindowBiasKind::kMethodsDisagree,
      std::string(text) +
          (clock_slot >= 0 ? ", beyond both intervals and beyond what the time " + clock_name +
                                 "'s samples leave out can explain"
                           : std::string(", beyond both intervals")) +
          ", so one of the two is off: the windows [g] may span other "
          "functions' calls (short calls stepped over without a sample, a loop in step with the "
          "sampling period); the clock's samples [s] may fall in step with a loop of short calls"};
  return value;
}

MetricValue DerivedMetrics::EvaluateSampled(size_t column, const std::vector<uint64_t>& periods,
                                            const std::vector<uint64_t>& samples) const {
  std::vector<double> counts(periods.begin(), periods.end());
  return Compute(column, counts, PoissonCovariance(counts, samples), kNormal975);
}

MetricValue DerivedMetrics::EvaluateTotal(size_t column, const ReportTable& table) const {
  const MetricColumn& c = columns_[column];
  std::vector<double> counts;
  if (c.source == MetricSource::kSampledPeriods) {
    std::vector<uint64_t> samples;
    for (size_t e : c.events) {
      counts.push_back(static_cast<double>(table.total_period[e]));
      samples.push_back(table.total_samples[e]);
    }
    MetricValue value = Compute(column, counts, PoissonCovariance(counts, samples), kNormal975);
    value.bias = LostSamplesBias(c.events, table.lost, table.total_samples, table.events, value);
    if (!value.bias) value.bias = ClockLeftOutBias(column, counts, value, nullptr, true);
    return value;
  }
  // Every row's credited windows together.
  const size_t g = static_cast<size_t>(c.group);
  const size_t members = table.groups[g].members.size();
  std::vector<double> deltas(members, 0), products(members * members, 0);
  uint64_t windows = 0;
  for (const ReportRow& row : table.rows) {
    const GroupCredit& credit = row.groups[g];
    for (size_t i = 0; i < members && i < credit.deltas.size(); ++i) deltas[i] += credit.deltas[i];
    for (size_t i = 0; i < products.size() && i < credit.products.size(); ++i)
      products[i] += credit.products[i];
    windows += credit.windows_credited;
  }
  return EvaluateWindows(column, deltas, products, windows);
}

MetricValue DerivedMetrics::EvaluateWindows(size_t column, const std::vector<double>& deltas,
                                            const std::vector<double>& products,
                                            uint64_t windows) const {
  const MetricColumn& c = columns_[column];
  std::vector<double> counts;
  for (size_t slot : c.member_slots) counts.push_back(slot < deltas.size() ? deltas[slot] : 0.0);
  if (deltas.empty()) return Compute(column, counts, {}, StudentT975(0));  // no window: no value
  return Compute(column, counts, WindowCovariance(deltas, products, windows, c.member_slots),
                 StudentT975(windows > 0 ? windows - 1 : 0));
}

}  // namespace tprof
