// Per-row hardware metrics of a report table (IPC, CPI, miss rates, MPKI, and the formulas of a
// CPU's metric table), from one of two sources, never mixed within one value:
//  - sampled periods: each event sampled on its own (`-e cycles,instructions -c N`); an event's
//    count in a row is the sum of the periods of its samples there.
//  - group deltas: a leader-sampled group (PERF_SAMPLE_READ); an event's count in a row is the
//    sum of its deltas over the windows credited to the row (both ends in the row).
// Every value has a 95 % interval estimated from the data (see MetricValue), and a value whose
// interval is wide is marked low-confidence (see kMaxConfidentRelativeHalfWidth).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/analysis/clock_rhythm.h"
#include "core/analysis/report_table.h"
#include "core/analysis/window_bias.h"
#include "core/base/error.h"
#include "core/model/metric_expression.h"

namespace tprof {

// A value whose 95 % interval reaches further than this share of it on either side (or whose
// interval cannot be estimated) is low-confidence.
inline constexpr double kMaxConfidentRelativeHalfWidth = 0.10;

// The normal distribution's 97.5 % quantile: a 95 % interval is value +- kNormal975 * its
// standard error when the counts are large (Poisson sample counts).
inline constexpr double kNormal975 = 1.959964;

// IPC, CPI, branch-miss and cache-miss rates, and MPKI figures over perf's generic event names.
const std::vector<MetricFormula>& GenericMetricFormulas();

// The name a formula uses for a recorded event: modifiers (":u", ":pp") and a PMU wrapper
// ("cpu_core/cycles/") dropped, perf's aliases folded (cpu-cycles -> cycles,
// branch-instructions -> branches).
std::string FormulaEventName(const std::string& recorded);

// A metric the user names (`report --metric 'NAME = EXPRESSION'`): the expression is over the
// recorded events as perf spells them (page-faults, not page\-faults: a '-' inside a recorded
// event's name is that name; subtraction needs spaces around it), with MetricExpression's
// operators. Evaluated per row like the CPU tables' formulas.
Result<MetricFormula> ParseUserMetric(const std::string& text,
                                      const std::vector<EventDesc>& events);

enum class MetricSource { kSampledPeriods, kGroupDeltas };
const char* MetricSourceName(MetricSource source);  // "sampled periods", "group deltas"

// One metric column: a formula that the table's events can feed from one source.
struct MetricColumn {
  std::string name;
  std::string unit;
  std::string formula;
  MetricSource source = MetricSource::kSampledPeriods;
  int group = -1;                    // index into ReportTable::groups for group deltas
  std::vector<size_t> events;        // the events the formula reads (sampled periods)
  std::vector<size_t> member_slots;  // their positions in the group (group deltas)
  std::string origin;                // "generic" or the metric table's name
};

// A formula's value with its 95 % interval, value ± half_width, by the delta method: the
// variance of the counts it reads, propagated through the formula's gradient.
//  - group deltas: the counts are sums over a row's n credited windows, whose covariance is
//    estimated from the windows' spread (n times the sample covariance of one window's deltas:
//    for a ratio such as IPC, the classical ratio estimator's variance), with Student's t
//    quantile for n - 1 degrees of freedom (few windows give a wide interval).
//  - sampled periods: each event's count S from n samples is a Poisson count of samples times
//    the period, variance S^2 / n, the events independent.
// The interval covers sampling noise and, for group deltas, what the call edges were seen to hold
// where too little to flag (GroupCredit::member_bound): not skid, multiplexing or a PMU's errata.
struct MetricValue {
  std::optional<double> value;       // empty: n/a (a zero denominator)
  std::optional<double> half_width;  // empty: not estimable (fewer than 2 windows or 1 sample)
  bool low_confidence = false;       // no interval, or wider than kMaxConfidentRelativeHalfWidth
  // The reason the value may lie outside its interval, when one was found in the recording: for
  // group deltas a bias of the window method for an event the formula reads (window_bias.h), or
  // disagreement with the same formula sampled; for sampled periods, samples the kernel lost.
  std::optional<WindowBias> bias;
};

// The formula's value at `counts` with its interval, value ± quantile * standard error, given
// the counts' covariance (`covariance`, counts.size() squared, row-major; empty when unknown).
// `evaluate` computes the formula. `bias_bounds` (per count, or empty) are how far each count
// may be off beyond its noise, bounded but not estimated: the interval is widened by what they
// can move the value (the gradient's size times the bound, summed).
MetricValue ValueWithInterval(
    const std::function<std::optional<double>(const std::vector<double>&)>& evaluate,
    const std::vector<double>& counts, const std::vector<double>& covariance, double quantile,
    const std::vector<double>& bias_bounds = {});

// Sampled periods: the covariance of counts summed from samples, `samples[i]` of them for count
// i. Each count is Poisson in its samples, its standard error reaching the exact 97.5 % bound of
// the count (counts[i] * PoissonRelativeReach(samples[i]) / 1.96: about counts[i] /
// sqrt(samples[i]) for many samples, more for few); the events are sampled independently. A
// count without a sample reaches PoissonUpper975(0) samples of its `mean_periods` entry (the
// event's mean period over the profile); empty when that is unknown.
std::vector<double> PoissonCovariance(const std::vector<double>& counts,
                                      const std::vector<uint64_t>& samples,
                                      const std::vector<double>& mean_periods = {});

// Group deltas: the covariance of the sums over `windows` windows of the members at `slots`
// (`deltas` and `products` as FunctionCounters has them): `windows` times the sample covariance
// of one window's deltas, each member's variance at least its sum's as a Poisson count. Empty
// below two windows.
std::vector<double> WindowCovariance(const std::vector<double>& deltas,
                                     const std::vector<double>& products, uint64_t windows,
                                     const std::vector<size_t>& slots);

// The 97.5 % quantile of Student's t distribution with `degrees` degrees of freedom (1.96 for
// the normal distribution as degrees grow).
double StudentT975(uint64_t degrees);

class DerivedMetrics {
 public:
  // Every formula whose events the table has, from each source that has them all. `extra` are
  // a metric table's formulas (matched to the recording by the caller), tagged with `origin`;
  // `user` the user's own (ParseUserMetric), tagged "user".
  static Result<DerivedMetrics> Plan(const ReportTable& table,
                                     const std::vector<MetricFormula>& extra,
                                     const std::string& origin,
                                     const std::vector<MetricFormula>& user = {});

  const std::vector<MetricColumn>& columns() const { return columns_; }
  // `inclusive` (the table's --children view): sampled periods count the samples with the row
  // anywhere on the callchain (its callees', the kernel's work on its behalf, included); group
  // deltas stay the row's own credited windows.
  MetricValue Evaluate(size_t column, const ReportTable& table, const ReportRow& row,
                       bool inclusive = false) const;
  // The same over every sample (sampled periods) or every credited window (group deltas).
  MetricValue EvaluateTotal(size_t column, const ReportTable& table) const;
  // A sampled-periods column at counts gathered elsewhere (a flame graph's frame): per event of
  // columns()[column].events, the period and the number of samples.
  MetricValue EvaluateSampled(size_t column, const std::vector<uint64_t>& periods,
                              const std::vector<uint64_t>& samples) const;
  // A group-deltas column over windows gathered elsewhere (a timeline's interval): per member of
  // its group, leader first, the deltas' sums, and the sums of their products.
  MetricValue EvaluateWindows(size_t column, const std::vector<double>& deltas,
                              const std::vector<double>& products, uint64_t windows) const;
  // A sampled-periods value at `counts` (per event of the column) whose events include a timer
  // clock in step with a loop where its samples lie, or over calls shorter than its period
  // (ClockRhythm): per event, the finding and the row's or frame's counts (null where none). The
  // reason it may lie off beyond its interval, where the share of the clock's count that may be
  // off (ClockSteppingReach, the whole for calls shorter than the period, ClockCallEdgeReach,
  // ClockRhythmReach) moves it further than the interval reaches; empty otherwise. `inclusive`:
  // Total% counts.
  using ClockRhythmSlot = std::pair<const ClockRhythmFinding*, const ClockRhythmCount*>;
  std::optional<WindowBias> ClockRhythmBias(size_t column, const std::vector<double>& counts,
                                            const MetricValue& value,
                                            const std::vector<ClockRhythmSlot>& slots,
                                            const std::vector<EventDesc>& events,
                                            bool inclusive) const;
  // A sampled-periods value whose clock is sampled in one mode (task-clock:u, what a user who is
  // not root records) and whose formula reads work done in the other mode (page faults, context
  // switches: the kernel handles them): the clock's samples leave that time out. Where the clock
  // leads a read group (record adds one), its reads count the time: over `row`'s windows they
  // give the row's share; for a frame, an interval, a Total% row or a row without windows
  // (`row` null or no windows), the time the run's samples left out, all of which may be this
  // one's, bounds it. `left_out_here`: the time its reads counted beyond the samples of
  // `counts` where that is known (a timeline's interval). The reason, where counting that time
  // moves the value beyond its interval, or where the clock was not read at all. A clock in both
  // modes that reads itself (record has it read itself beside other events) is held the same way
  // to the ticks its timer missed, whatever the formula's other events.
  std::optional<WindowBias> ClockLeftOutBias(
      size_t column, const std::vector<double>& counts, const MetricValue& value,
      const ReportRow* row, bool inclusive,
      std::optional<double> left_out_here = std::nullopt) const;

 private:
  struct Compiled {
    MetricExpression expression;
    std::vector<std::pair<std::string, double>> constants;
  };
  MetricValue Compute(size_t column, const std::vector<double>& counts,
                      const std::vector<double>& covariance, double quantile,
                      const std::vector<double>& bias_bounds = {}) const;
  // Evaluate without the check against the other method.
  MetricValue EvaluateOwn(size_t column, const ReportTable& table, const ReportRow& row,
                          bool inclusive) const;

  std::vector<MetricColumn> columns_;
  std::vector<Compiled> compiled_;
  // Per column: the column of the same formula by the other method (group deltas for sampled
  // periods and the reverse), which Evaluate holds the value against; -1 when there is none.
  std::vector<int> other_method_;
  // Per column: for sampled periods, the slot among its events of a clock sampled in one mode
  // (IsClockSampledInOneMode) or of a timer clock that reads itself; -1 when none.
  std::vector<int> left_out_clock_slot_;
  // Per column with such a clock: what ClockLeftOutBias reads of it.
  struct LeftOutClock {
    size_t event = 0;
    std::string name;
    const char* left_out = "kernel";  // the mode its samples leave out
    double mean_period = 0;           // of its samples
    int group = -1;                   // the read group it leads; -1 when it is not read
    double left_out_time = 0;         // the run's: its reads' total less its samples' periods
    // The formula reads work done in the left-out mode (any work, for a clock in both modes: the
    // ticks its timer missed took every event's time).
    bool other_mode_work = false;
    bool one_mode = true;  // else both modes: it leaves out only the ticks its timer missed
  };
  std::vector<LeftOutClock> left_out_clock_;
};

// Samples the kernel lost (a full ring buffer) were some event's, which is not known: if all
// were one event's, its counts (in a row and overall) are short by up to lost / (its samples +
// lost), and a value computed from it moves by as much. Where that reaches beyond the value's
// interval, the bias (for a table's row, or a flame graph's frame coloured by a metric or a
// ratio). (Seen: page-faults sampled at every fault beside a 20 kHz clock on calls of 10 us: 651
// samples lost of 37,800, the rates 1-2 % high.) `used` are the events the value is computed
// from; `total_samples` and `events` are per event of the profile.
std::optional<WindowBias> LostSamplesBias(const std::vector<size_t>& used, uint64_t lost,
                                          const std::vector<uint64_t>& total_samples,
                                          const std::vector<EventDesc>& events,
                                          const MetricValue& value);

}  // namespace tprof
