#include "core/analysis/clock_rhythm.h"

#include <linux/perf_event.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>

namespace tprof {
namespace {

// Lags looked at: a loop of up to this many periods (3.2 ms at 20 kHz, 16 ms at 4 kHz).
constexpr uint32_t kMaxLag = 64;
// Pairs of samples a thread needs at a lag before its shares there are read (at 200 the share's
// own noise is some ±0.07).
constexpr uint64_t kMinPairs = 200;
// In step: the row repeats `lag` apart at least this often ...
constexpr double kMinSameAtLag = 0.5;
// ... and this much more often than from one sample to the next. (Measured with a 20 kHz clock on
// three functions called in turn: calls of 80 us, 0.84 nine apart against 0.62 one apart, and
// 0.78 two apart against 0.01 with calls of 25 us; calls of 1 ms and 5 ms, 0.95 and 0.98 one
// apart, no lag higher; the same calls in a shuffled order, 0.62 one apart and no lag above
// 0.34.)
constexpr double kMinExcess = 0.1;
// A row's periods with other rows' work in them are read from this many on; their share that
// ends in the row again is held against the row's share of the samples, and apart by more than
// this (and three standard errors) the samples keep to the loop's phase. (Measured on three
// functions of 10 us called in turn, a 20 kHz clock, whose rates came out 5-18 % off: 47 %, 43 %
// and 44 % against shares of 33 %, 28 % and 23 %; a free phase gives the share within noise.)
constexpr uint64_t kMinSpannedPeriods = 30;
// A row's entries, seen in the other events' samples, are read from this many on.
constexpr uint64_t kMinShortCallEntries = 30;
// A row whose calls are a period long or longer holds the clock for two periods running in about
// (length - period) / length of its samples; below this share of them (calls under some 1.05
// periods on average) its calls are read as shorter than the period. (Seen: a 5-9 us call
// between 100 us ones, every one of its 500-1,100 samples at 20 kHz after one elsewhere, its
// faults per ms 10-90 % high, in 8 of 19 recordings beyond a confident interval.)
constexpr double kMinClockEntryShare = 0.95;
constexpr double kMinLockedExcess = 0.08;

bool IsTimerClock(const EventDesc& event) {
  return event.type == PERF_TYPE_SOFTWARE &&
         (event.config == PERF_COUNT_SW_CPU_CLOCK || event.config == PERF_COUNT_SW_TASK_CLOCK);
}

}  // namespace

ClockRhythm::ClockRhythm(const std::vector<EventDesc>& events, size_t max_samples)
    : max_samples_(max_samples) {
  watched_.assign(events.size(), false);
  periods_.assign(events.size(), 0);
  // A value read from the clock's samples needs another event's beside them (a rate per time):
  // with the clock alone there is nothing to flag, and its samples are not kept.
  size_t sampled = 0;
  for (size_t e = 0; e < events.size(); ++e)
    sampled += events[e].group_leader < 0 || events[e].group_leader == static_cast<int32_t>(e);
  if (sampled < 2) return;
  for (size_t e = 0; e < events.size(); ++e) {
    const EventDesc& event = events[e];
    // A read-only member takes no samples; a group's leader does.
    if (!IsTimerClock(event) || event.period_or_frequency == 0) continue;
    if (event.group_leader >= 0 && event.group_leader != static_cast<int32_t>(e)) continue;
    watched_[e] = true;
    watched_events_.push_back(static_cast<uint32_t>(e));
    watches_any_ = true;
    periods_[e] =
        event.use_frequency ? 1000000000ULL / event.period_or_frequency : event.period_or_frequency;
  }
}

ClockRhythm::Run& ClockRhythm::RunOf(const Sample& sample) {
  auto [it, inserted] =
      run_index_.try_emplace(std::make_tuple(sample.pid, sample.tid, sample.event), runs_.size());
  if (inserted) runs_.push_back({sample.event, Run{}});
  return runs_[it->second].second;
}

void ClockRhythm::Add(const Sample& sample, uint32_t stack) {
  if (!Watches(sample.event) || kept_ >= max_samples_) return;
  Run& run = RunOf(sample);
  // Each sample a period after the last while the thread runs; a gap (the thread was switched
  // out, the timer restarted) or a step back breaks the run.
  const uint64_t period = sample.period ? sample.period : periods_[sample.event];
  if (run.started &&
      (sample.time < run.last_time || sample.time - run.last_time > period + period / 2))
    Push(run, kBreak, 0);
  run.started = true;
  run.last_time = sample.time;
  Push(run, stack, sample.time);
  ++kept_;
}

void ClockRhythm::Push(Run& run, uint32_t entry, uint64_t time) {
  run.stacks.push_back(entry);
  run.times.push_back(time);
}

void ClockRhythm::Break(const Sample& sample) {
  if (!Watches(sample.event) || kept_ >= max_samples_) return;
  Run& run = RunOf(sample);
  if (!run.stacks.empty() && run.stacks.back() != kBreak) Push(run, kBreak, 0);
}

void ClockRhythm::AddOther(const Sample& sample, uint32_t stack) {
  if (!watches_any_ || Watches(sample.event) || kept_ >= max_samples_) return;
  for (uint32_t clock : watched_events_) {
    auto it = run_index_.find(std::make_tuple(sample.pid, sample.tid, clock));
    if (it == run_index_.end()) continue;
    runs_[it->second].second.others.push_back({sample.time, stack, sample.event});
    ++kept_;
  }
}

ClockRhythm::Result ClockRhythm::FindWith(
    const std::function<uint64_t(uint32_t)>& row_of_stack) const {
  Result result;
  std::vector<int> finding_of_event(watched_.size(), -1);
  const auto finding_for = [&](uint32_t event) -> size_t {
    if (finding_of_event[event] < 0) {
      finding_of_event[event] = static_cast<int>(result.findings.size());
      ClockRhythmFinding finding;
      finding.event = event;
      finding.period_ns = periods_[event];
      result.findings.push_back(finding);
      result.stacks.emplace_back();
      result.steps.emplace_back();
      result.other_steps.emplace_back();
      result.clock_steps.emplace_back();
    }
    return static_cast<size_t>(finding_of_event[event]);
  };
  // Per event, the in-step thread with the most samples: the one the finding describes; and
  // per (event, other event), the pairs the other stepped over.
  std::vector<uint64_t> best_samples(watched_.size(), 0);
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> stepped_by;
  std::vector<uint64_t> rows;
  for (const auto& [event, run] : runs_) {
    // Rows, with the breaks kept (as UINT64_MAX).
    rows.clear();
    for (uint32_t stack : run.stacks)
      rows.push_back(stack == kBreak ? UINT64_MAX : row_of_stack(stack));
    uint64_t seen = 0;
    for (uint64_t r : rows) seen += r != UINT64_MAX;

    // A period between two of the clock's samples with another event's sample in another row
    // than the first's: that row's work ran in it, so the first row's call ended within it.
    // Where the clock's phase is free, the next sample then lands in the first row about as
    // often as that row's share of the samples (a function calling a short helper over and
    // over: 90 % of the time, 90 % of its periods with the helper in them end in it again);
    // far more or far less often, the samples keep to the loop's phase, and each period that
    // ended in the row again was credited to it whole with the others' work inside.
    std::vector<Run::Other> others = run.others;
    std::sort(others.begin(), others.end(),
              [](const Run::Other& a, const Run::Other& b) { return a.time < b.time; });
    // Where the other events' samples show the thread going from one stack to another: the rows
    // of the second that the first lacks were entered between them, a call begun.
    if (others.size() > 1) {
      auto& steps = result.other_steps[finding_for(event)];
      for (size_t k = 1; k < others.size(); ++k)
        if (others[k].stack != others[k - 1].stack) ++steps[{others[k - 1].stack, others[k].stack}];
    }
    struct RowPeriods {
      uint64_t samples = 0;  // the clock's in the row
      uint64_t spanned = 0;  // periods from the row with another row's work in them
      uint64_t again = 0;    // ... that ended in the row again
    };
    absl::flat_hash_map<uint64_t, RowPeriods> row_periods;
    std::vector<std::pair<size_t, bool>> pairs_from;  // (entry i, spanned) per unbroken period
    for (size_t i = 1; i < rows.size(); ++i) {
      if (rows[i] == UINT64_MAX || rows[i - 1] == UINT64_MAX) continue;
      bool spanned = false;
      auto k = std::upper_bound(
          others.begin(), others.end(), run.times[i - 1],
          [](uint64_t time, const Run::Other& other) { return time < other.time; });
      for (; k != others.end() && k->time < run.times[i]; ++k)
        if (row_of_stack(k->stack) != rows[i - 1]) {
          spanned = true;
          if (rows[i] == rows[i - 1]) ++stepped_by[{event, k->event}];
          break;
        }
      if (spanned) {
        RowPeriods& p = row_periods[rows[i - 1]];
        ++p.spanned;
        p.again += rows[i] == rows[i - 1];
      }
      pairs_from.push_back({i, spanned});
    }
    for (uint64_t r : rows)
      if (r != UINT64_MAX) ++row_periods[r].samples;
    const auto locked = [&](uint64_t row) {
      const RowPeriods& p = row_periods[row];
      if (p.spanned < kMinSpannedPeriods || seen == 0) return false;
      const double share = static_cast<double>(p.samples) / static_cast<double>(seen);
      const double again = static_cast<double>(p.again) / static_cast<double>(p.spanned);
      const double noise = 3 * std::sqrt(share * (1 - share) / static_cast<double>(p.spanned));
      return std::abs(again - share) > std::max(kMinLockedExcess, noise);
    };
    uint64_t stepped_pairs = 0;
    for (const auto& [i, spanned] : pairs_from)
      stepped_pairs += spanned && rows[i] == rows[i - 1] && locked(rows[i]);
    if (stepped_pairs > 0) {
      const size_t f = finding_for(event);
      for (const auto& [i, spanned] : pairs_from) {
        if (spanned && locked(rows[i - 1])) {
          StackCounts& from = result.stacks[f][run.stacks[i - 1]];
          ++from.spanned;
          from.again += rows[i] == rows[i - 1];
        }
        if (rows[i] == rows[i - 1] && spanned && locked(rows[i]))
          ++result.stacks[f][run.stacks[i]].stepped;
      }
    }

    uint64_t pairs[kMaxLag + 1] = {}, same[kMaxLag + 1] = {};
    for (size_t i = 0; i < rows.size(); ++i) {
      if (rows[i] == UINT64_MAX) continue;
      for (uint32_t lag = 1; lag <= kMaxLag && i + lag < rows.size(); ++lag) {
        const uint64_t other = rows[i + lag];
        if (other == UINT64_MAX) break;  // the run breaks before it
        ++pairs[lag];
        same[lag] += other == rows[i];
      }
    }
    const auto share = [&](uint32_t lag) {
      return pairs[lag] ? static_cast<double>(same[lag]) / static_cast<double>(pairs[lag]) : 0.0;
    };
    uint32_t best_lag = 0;
    for (uint32_t lag = 2; lag <= kMaxLag; ++lag) {
      if (pairs[lag] < kMinPairs || pairs[1] < kMinPairs) continue;
      if (share(lag) >= kMinSameAtLag && share(lag) - share(1) >= kMinExcess &&
          (best_lag == 0 || share(lag) > share(best_lag)))
        best_lag = lag;
    }
    if (best_lag == 0) continue;
    const size_t f = finding_for(event);
    ClockRhythmFinding& finding = result.findings[f];
    ++finding.threads;
    finding.samples_in_step += seen;
    if (seen > best_samples[event]) {
      best_samples[event] = seen;
      finding.lag = best_lag;
      finding.same_at_lag = share(best_lag);
      finding.same_next = share(1);
    }
    for (size_t i = 0; i < run.stacks.size(); ++i) {
      const uint32_t stack = run.stacks[i];
      if (stack == kBreak) continue;
      ++result.stacks[f][stack].in_step;
      if (i + 1 < run.stacks.size() && run.stacks[i + 1] != kBreak && run.stacks[i + 1] != stack)
        ++result.steps[f][{stack, run.stacks[i + 1]}];
    }
  }
  for (ClockRhythmFinding& finding : result.findings) {
    uint64_t most = 0;
    for (const auto& [key, n] : stepped_by)
      if (key.first == finding.event && n > most) {
        most = n;
        finding.stepped_by = static_cast<int32_t>(key.second);
      }
  }
  // Every sample looked at, per stack, for the events found: a row's share in step.
  for (const auto& [event, run] : runs_) {
    if (finding_of_event[event] < 0) continue;
    const size_t f = static_cast<size_t>(finding_of_event[event]);
    // Where the clock's own samples show the thread going from one stack to another, a period
    // apart, the rows of the second that the first lacks were entered between them: counted on
    // every thread, as the samples that followed another are, whether or not another event
    // sampled it.
    auto& steps = result.clock_steps[f];
    for (size_t i = 0; i < run.stacks.size(); ++i) {
      const uint32_t stack = run.stacks[i];
      if (stack == kBreak) continue;
      StackCounts& counts = result.stacks[f][stack];
      ++counts.seen;
      ++result.findings[f].samples_seen;
      if (i == 0 || run.stacks[i - 1] == kBreak) continue;
      ++counts.followed;
      if (run.stacks[i - 1] != stack) ++steps[{run.stacks[i - 1], stack}];
    }
  }
  return result;
}

std::optional<double> ClockSteppingReach(const ClockRhythmCount& count) {
  if (count.self_stepped == 0 || count.self_seen == 0) return std::nullopt;
  return static_cast<double>(count.self_stepped) / static_cast<double>(count.self_seen);
}

bool ClockStepsOverMostCalls(const ClockRhythmCount& count, bool inclusive) {
  const uint64_t entries = count.entries(inclusive);
  const uint64_t seen = count.seen(inclusive);
  return entries >= kMinShortCallEntries && entries > seen;
}

std::string ClockShortCallsReason(const ClockRhythmFinding& finding, const ClockRhythmCount& count,
                                  bool inclusive, const std::vector<EventDesc>& events) {
  const uint64_t entries = count.entries(inclusive);
  const uint64_t seen = count.seen(inclusive);
  const std::string clock = finding.event < events.size() ? events[finding.event].name : "?";
  char text[700];
  std::snprintf(text, sizeof text,
                "clock steps over calls: the other events' samples show this row entered %llu "
                "times, more than the %llu samples of %s it holds: its calls are on average "
                "shorter than the clock's period (%.0f us), and a clock of fixed period can fall "
                "in step with a loop of such calls, landing in it far more or less often than "
                "its share of the time (seen: 10 us calls 12-40 %% off at 9-20 kHz); record the "
                "clock at a period shorter than the calls (-F), or read the rate from a group",
                static_cast<unsigned long long>(entries), static_cast<unsigned long long>(seen),
                clock.c_str(), static_cast<double>(finding.period_ns) / 1e3);
  return text;
}

bool ClockNeverHeldTwoPeriods(const ClockRhythmCount& count, bool inclusive) {
  const uint64_t entries = count.clock_entries(inclusive);
  return entries >= kMinShortCallEntries &&
         static_cast<double>(entries) >=
             kMinClockEntryShare * static_cast<double>(count.followed(inclusive));
}

std::string ClockIsolatedCallsReason(const ClockRhythmFinding& finding,
                                     const ClockRhythmCount& count, bool inclusive,
                                     const std::vector<EventDesc>& events) {
  const uint64_t entries = count.clock_entries(inclusive);
  const uint64_t followed = count.followed(inclusive);
  const std::string clock = finding.event < events.size() ? events[finding.event].name : "?";
  char text[800];
  std::snprintf(text, sizeof text,
                "clock steps over calls: of the %llu samples of %s this row holds that came a "
                "period (%.0f us) after another on the thread, %llu came after one outside it, "
                "so it seldom held the clock for two periods running: its calls are shorter than "
                "the period, and a clock of fixed "
                "period can fall in step with a loop of such calls, landing in them far more or "
                "less often than their share of the time (seen: a 5-9 us call between 100 us "
                "ones, its rate 10-90 %% high at 20 kHz); record the clock at a period shorter "
                "than the calls (-F), or count the time around the calls themselves",
                static_cast<unsigned long long>(followed), clock.c_str(),
                static_cast<double>(finding.period_ns) / 1e3,
                static_cast<unsigned long long>(entries));
  return text;
}

std::optional<double> ClockCallEdgeReach(const ClockRhythmCount& count, bool inclusive) {
  const uint64_t entries = count.entries(inclusive);
  const uint64_t seen = count.seen(inclusive);
  if (entries < kMinShortCallEntries || seen == 0) return std::nullopt;
  return std::min(1.0,
                  kStretchEdgeShare * static_cast<double>(entries) / static_cast<double>(seen));
}

std::string ClockCallEdgeReason(const ClockRhythmFinding& finding, const ClockRhythmCount& count,
                                bool inclusive, double reach,
                                const std::vector<EventDesc>& events) {
  const uint64_t entries = count.entries(inclusive);
  const uint64_t seen = count.seen(inclusive);
  const std::string clock = finding.event < events.size() ? events[finding.event].name : "?";
  const double period_us = static_cast<double>(finding.period_ns) / 1e3;
  char text[700];
  std::snprintf(text, sizeof text,
                "clock steps over calls: the other events' samples show this row entered %llu "
                "times against the %llu samples of %s it holds: calls of about %.1f of the "
                "clock's periods (%.0f us) on average, and a clock of fixed period can keep to a "
                "loop's phase, moving each call's count by part of a sample the same way each "
                "time: its count may be off by a quarter period a call, %.0f %% (seen: calls of "
                "1.1 periods 8 %% off, of 1.8 periods 1-4 %%); record the clock at a period "
                "several times shorter than the calls (-F), or read the rate from a group",
                static_cast<unsigned long long>(entries), static_cast<unsigned long long>(seen),
                clock.c_str(), static_cast<double>(seen) / static_cast<double>(entries), period_us,
                100 * reach);
  return text;
}

std::string ClockSteppingReason(const ClockRhythmFinding& finding, const ClockRhythmCount& count,
                                double reach, const std::vector<EventDesc>& events) {
  const std::string clock = finding.event < events.size() ? events[finding.event].name : "?";
  const std::string other =
      finding.stepped_by >= 0 && static_cast<size_t>(finding.stepped_by) < events.size()
          ? events[static_cast<size_t>(finding.stepped_by)].name
          : "another event";
  const double again = count.self_spanned ? static_cast<double>(count.self_again) /
                                                static_cast<double>(count.self_spanned)
                                          : 0.0;
  const double share = finding.samples_seen ? static_cast<double>(count.self_seen) /
                                                  static_cast<double>(finding.samples_seen)
                                            : 0.0;
  char text[900];
  std::snprintf(text, sizeof text,
                "clock steps over calls: of this row's %llu samples of %s, %llu followed one in "
                "the row a period (%.0f us) before with a sample of %s in another function "
                "between them: calls shorter than the clock's period, and the clock keeps to "
                "their loop's phase (%.0f %% of this row's periods with another function's work "
                "in them ended in it again, where a free phase gives its share of the samples, "
                "%.0f %%), so those periods were credited whole to the row with the others' work "
                "inside; its count may be off by them, %.0f %%; record the clock at a rate (-F) "
                "whose period does not divide the loop",
                static_cast<unsigned long long>(count.self_seen), clock.c_str(),
                static_cast<unsigned long long>(count.self_stepped),
                static_cast<double>(finding.period_ns) / 1e3, other.c_str(), 100 * again,
                100 * share, 100 * reach);
  return text;
}

std::optional<double> ClockRhythmReach(const ClockRhythmFinding& finding,
                                       const ClockRhythmCount& count, bool inclusive) {
  if (!finding.in_step()) return std::nullopt;
  const uint64_t seen = count.seen(inclusive);
  const uint64_t in_step = inclusive ? count.total_in_step : count.self_in_step;
  const uint64_t exits = inclusive ? count.total_exits : count.self_exits;
  if (seen == 0 || in_step == 0 ||
      static_cast<double>(in_step) < kMinInStepShare * static_cast<double>(seen) ||
      2 * finding.lag * exits < in_step)
    return std::nullopt;
  return kStretchEdgeShare * static_cast<double>(exits) / static_cast<double>(in_step);
}

std::string ClockRhythmReason(const ClockRhythmFinding& finding, const ClockRhythmCount& count,
                              bool inclusive, double reach, const std::string& event_name) {
  const uint64_t seen = count.seen(inclusive);
  const uint64_t in_step = inclusive ? count.total_in_step : count.self_in_step;
  const uint64_t exits = inclusive ? count.total_exits : count.self_exits;
  char text[720];
  std::snprintf(text, sizeof text,
                "clock in step with a loop: on %llu thread%s the rows %s's samples land in "
                "repeat every %u samples (%.0f %% of samples %u apart lie in the same one, %.0f "
                "%% of those 1 apart), a loop of about %.0f us; %.0f %% of this row's samples "
                "are theirs, and the loop leaves it after %.1f of them on average: a clock of "
                "fixed period can fall in step with such a loop (a sample's own cost lengthens "
                "the call it lands in), and its count here may then be %.0f %% off, beyond the "
                "interval; compare a recording at a rate (-F) whose period does not divide the "
                "loop",
                static_cast<unsigned long long>(finding.threads), finding.threads == 1 ? "" : "s",
                event_name.c_str(), finding.lag, 100 * finding.same_at_lag, finding.lag,
                100 * finding.same_next,
                static_cast<double>(finding.lag) * static_cast<double>(finding.period_ns) / 1e3,
                100.0 * static_cast<double>(in_step) / static_cast<double>(seen),
                exits ? static_cast<double>(in_step) / static_cast<double>(exits) : 0.0,
                100 * reach);
  return text;
}

}  // namespace tprof
