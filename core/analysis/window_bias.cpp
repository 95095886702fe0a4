#include "core/analysis/window_bias.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/analysis/derived_metrics.h"

namespace tprof {

const char* WindowBiasKindName(WindowBiasKind kind) {
  switch (kind) {
    case WindowBiasKind::kCallEdges:
      return "call edges";
    case WindowBiasKind::kCallMiddles:
      return "call middles";
    case WindowBiasKind::kSpansCalls:
      return "spans calls";
    case WindowBiasKind::kMethodsDisagree:
      return "methods disagree";
    case WindowBiasKind::kSamplesLost:
      return "samples lost";
    case WindowBiasKind::kClockInOneMode:
      return "clock in one mode";
    case WindowBiasKind::kClockMissedTicks:
      return "clock missed ticks";
    case WindowBiasKind::kClockInStep:
      return "clock in step";
    case WindowBiasKind::kClockStepsOver:
      return "clock steps over calls";
  }
  return "?";
}

std::optional<double> SpanShare(const SampleRuns& runs) {
  if (runs.windows_stay == 0) return std::nullopt;
  return std::min(
      1.0, static_cast<double>(runs.single_returns) / static_cast<double>(runs.windows_stay));
}

namespace {

// A member's count per unit of the leader over `windows` windows, with its 95 % interval.
struct Rate {
  double value = 0, low = 0, high = 0;
};

std::optional<Rate> MemberRate(const std::vector<double>& deltas,
                               const std::vector<double>& products, uint64_t windows,
                               size_t member) {
  if (windows < 2 || deltas.size() <= member || deltas[0] <= 0) return std::nullopt;
  const MetricValue v = ValueWithInterval(
      [](const std::vector<double>& c) -> std::optional<double> {
        if (c[1] <= 0) return std::nullopt;
        return c[0] / c[1];
      },
      {deltas[member], deltas[0]}, WindowCovariance(deltas, products, windows, {member, 0}),
      StudentT975(windows - 1));
  if (!v.value || !v.half_width) return std::nullopt;
  return Rate{*v.value, *v.value - *v.half_width, *v.value + *v.half_width};
}

std::string Number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", value);
  return text;
}

std::string Percent(double share) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f %%", 100 * share);
  return text;
}

void AddOnce(std::vector<WindowBias>& biases, WindowBias bias) {
  for (const WindowBias& b : biases)
    if (b.kind == bias.kind) return;  // the first (largest) of a kind says it
  biases.push_back(std::move(bias));
}

using CreditedRates = std::map<std::string, std::vector<std::optional<Rate>>>;

// The fewest credited windows whose longest says how long a window of the function's own work
// runs: below it, an edge window beyond it says little.
constexpr uint64_t kWindowsForLongest = 20;

// How much longer than any credited window of either function a window across their call edge
// must run to be a stall: windows across edges run a little longer than those inside calls
// where the code between calls enters the kernel (a clock in one mode skipping a sample or two
// more: 750 us against at most 500 us credited, under 250 us periods), which is no stall. At 1x
// a faulting function was flagged in 18 of 20 recordings of 1 ms calls.
constexpr double kStallBeyondLongest = 2;

// Stalls at call edges: a window from one function into another whose leader ran well beyond
// any window credited to either (the kernel or the host held the thread while a clock went on:
// one window of 13.75 ms among windows of 250 us, at the exit of a function whose calls were
// 1 ms) holds time that may be either function's and that no credited window holds. The rates'
// test of edges above cannot see it: one such window widens the pair's interval instead. Each
// function at an end gets the time beyond a window of the two's usual length, all of it with
// none of the events (the lowest its rates could be); where that moves a rate beyond its
// interval it is flagged, else the interval takes it.
void FlagStallsAtCallEdges(const WindowAttributor& attributor,
                           const std::vector<std::string>& member_names,
                           std::string (*row_name)(const std::string& key),
                           const CreditedRates& credited, WindowFindings& findings) {
  struct Stalls {
    double time = 0;     // beyond the usual windows, in the leader's unit
    double longest = 0;  // the longest such window
    double usual = 0;    // and the usual window beside it
    double credited_max = 0;
    uint64_t windows = 0;
    bool at_least = false;  // a pair's kept windows were all stalls: counts are lower bounds
    std::string where;      // the pair of the longest
  };
  std::map<std::string, Stalls> stalls;
  const auto& functions = attributor.functions();
  for (const auto& [pair, w] : attributor.edges()) {
    // A pair crossed a few times is no call edge that repeats: the one window from a program's
    // start-up code into its first call holds the set-up between them (main's, 0.75-1 ms of a
    // region mapped and a counter read 256 times, which flagged faults_heavy under load).
    if (w.windows < kWindowsForLongest) continue;
    const auto& [from, to] = pair;
    // Only an end with enough credited windows says how long its windows run; only such an end
    // is charged (its reason names the longest of them).
    double longest_credited = 0, usual = 0;
    std::vector<const std::string*> ends;
    for (const std::string* end : {&from, &to}) {
      const auto it = functions.find(*end);
      if (it == functions.end() || it->second.windows_credited < kWindowsForLongest) continue;
      longest_credited = std::max(longest_credited, it->second.longest_credited);
      usual += it->second.deltas[0] / static_cast<double>(it->second.windows_credited);
      ends.push_back(end);
    }
    if (ends.empty()) continue;
    usual /= static_cast<double>(ends.size());
    size_t beyond = 0;
    for (const std::vector<double>& window : w.longest) {
      if (window[0] <= kStallBeyondLongest * longest_credited) continue;
      ++beyond;
      for (const std::string* end : ends) {
        Stalls& s = stalls[*end];
        s.time += window[0] - usual;
        ++s.windows;
        if (window[0] > s.longest) {
          s.longest = window[0];
          s.usual = usual;
          s.credited_max = longest_credited;
          s.where = row_name(from) + " into " + row_name(to);
        }
      }
    }
    // Every window kept was a stall, and the pair had more: there may be more than counted.
    if (beyond == EdgeWindows::kLongestKept && w.windows > beyond)
      for (const std::string* end : ends) stalls[*end].at_least = true;
  }
  const size_t members = member_names.size();
  for (const auto& [function, s] : stalls) {
    const auto counters = functions.find(function);
    const auto rates = credited.find(function);
    if (counters == functions.end() || rates == credited.end() || counters->second.deltas[0] <= 0)
      continue;
    const double time = counters->second.deltas[0];
    for (size_t m = 1; m < members; ++m) {
      const std::optional<Rate>& r = rates->second[m];
      if (!r) continue;
      const double lowest = counters->second.deltas[m] / (time + s.time);
      const double moved = r->value - lowest;
      if (moved <= r->high - r->value) {
        auto& bound = findings.bounds[function];
        if (bound.size() < members) bound.resize(members);
        bound[m] = std::max(bound[m], moved);
        continue;
      }
      auto& per_member = findings.biases[function];
      if (per_member.size() < members) per_member.resize(members);
      AddOnce(per_member[m],
              {WindowBiasKind::kCallEdges,
               "time at call edges: " + std::string(s.at_least ? "at least " : "") +
                   std::to_string(s.windows) + " window" + (s.windows == 1 ? "" : "s") +
                   " across its call edges (the longest from " + s.where + ", discarded) ran " +
                   Number(s.longest) + " " + member_names[0] + ", " + Number(s.longest / s.usual) +
                   "x the usual window and over twice the longest credited beside it (" +
                   Number(s.credited_max) + "): " + Number(s.time) + " " + member_names[0] +
                   " that no credited window holds (a stall: the kernel or the host held the "
                   "thread) and that may be this function's; with it counted its " +
                   member_names[m] + " per " + member_names[0] + " would be " +
                   (s.at_least ? "at least " : "up to ") + Percent(moved / r->value) + " lower"});
    }
  }
}

}  // namespace

WindowFindings DetectWindowBias(const WindowAttributor& attributor,
                                const std::vector<std::string>& member_names,
                                std::string (*row_name)(const std::string& key)) {
  WindowFindings findings;
  WindowBiases& found = findings.biases;
  const auto& functions = attributor.functions();
  const size_t members = member_names.size();
  auto biases_of = [&](const std::string& function, size_t member) -> std::vector<WindowBias>& {
    auto& per_member = found[function];
    if (per_member.size() < members) per_member.resize(members);
    return per_member[member];
  };
  // Every function's and every edge's rate per member, once: the checks below compare each with
  // many others.
  std::map<std::string, std::vector<std::optional<Rate>>> credited;
  for (const auto& [function, counters] : functions)
    for (size_t m = 0; m < members; ++m)
      credited[function].push_back(
          MemberRate(counters.deltas, counters.products, counters.windows_credited, m));
  auto credited_rate = [&](const std::string& function, size_t member) -> std::optional<Rate> {
    auto it = credited.find(function);
    return it == credited.end() ? std::nullopt : it->second[member];
  };
  std::map<std::pair<std::string, std::string>, std::vector<std::optional<Rate>>> edge_rates;
  for (const auto& [pair, w] : attributor.edges())
    for (size_t m = 0; m < members; ++m)
      edge_rates[pair].push_back(MemberRate(w.deltas, w.products, w.windows, m));

  // Edges, the pairs with the most windows first so that a row's reason names its main one.
  std::vector<const std::pair<const std::pair<std::string, std::string>, EdgeWindows>*> edges;
  for (const auto& edge : attributor.edges()) edges.push_back(&edge);
  std::stable_sort(edges.begin(), edges.end(),
                   [](auto* a, auto* b) { return a->second.windows > b->second.windows; });
  for (size_t m = 1; m < members; ++m) {
    for (const auto* edge : edges) {
      const auto& [from, to] = edge->first;
      const EdgeWindows& w = edge->second;
      const std::optional<Rate>& pair = edge_rates.at(edge->first)[m];
      const std::optional<Rate> a = credited_rate(from, m), b = credited_rate(to, m);
      if (!pair || !a || !b) continue;
      // A window from one call into the next has the boundary at a uniformly random point of
      // it (the sampling does not know where calls end), so where events are spread through
      // calls as their credited windows show, such windows hold on average the mean of the two
      // rates. (Bounding them by the higher rate instead missed a function whose first
      // iteration faults: calls of 4 iterations under 50 us windows, the credited value 7 % low.)
      const double mid_low = (a->low + b->low) / 2, mid_high = (a->high + b->high) / 2;
      const bool excess = pair->low > mid_high;
      const bool deficit = pair->high < mid_low;
      if (!excess && !deficit) continue;
      const double per_window = w.deltas[0] / static_cast<double>(w.windows);
      const std::string what = std::to_string(w.windows) + " windows from " + row_name(from) +
                               " into " + row_name(to) + " (discarded) hold " +
                               Number(pair->value * per_window) + " " + member_names[m] +
                               " each, where the two functions' credited rates give " +
                               (excess ? "at most " + Number(mid_high * per_window)
                                       : "at least " + Number(mid_low * per_window));
      // Either function may be the one whose calls' edges (or middles) hold the events. Each is
      // flagged where all of the difference, over its whole time (the windows that end in it),
      // would move its value beyond its interval and by more than 5 % of the pair's larger rate:
      // the events' rhythm inside calls (faults at each iteration's start) makes edges differ a
      // little from the mean without moving a long call's value (calls of 40 iterations: 1 % at
      // most).
      const double difference = std::max(pair->low - mid_high, mid_low - pair->high) * per_window *
                                static_cast<double>(w.windows);
      for (const std::string* row : {&from, &to}) {
        const FunctionCounters& counters = functions.at(*row);
        const Rate& r = *(row == &from ? a : b);
        const double time =
            counters.deltas[0] / static_cast<double>(counters.windows_credited) *
            static_cast<double>(counters.windows_credited + counters.windows_discarded);
        // Fewer events at the edges than the rates give means some function has fewer than its
        // credited rate says, which cannot put a value below zero (a function that makes no such
        // events beside one whose events come in the rhythm of its loop is not flagged).
        const double moved = deficit ? std::min(difference / time, r.value) : difference / time;
        // 5 % of the larger rate of the two: a function that makes no such events is not
        // flagged for a sliver of its neighbour's rhythm (0.04 faults/ms beside 117).
        const double scale = std::max(a->value, b->value);
        if (moved <= std::max(r.high - r.value, 0.05 * scale)) {
          // Too little to flag, but seen: it goes into the interval, where a function at a
          // quarter of its neighbour's rate shows it as a wide value (~) rather than a confident
          // one 3.5 % off (faults in each of four iterations of 100 us calls under 50 us
          // windows: intervals of 2.5-4 % and edges that could move the values 4.6 % and 13 %).
          // The largest edge's, not the sum over edges, each of which gives all of its
          // difference to both functions.
          auto& bound = findings.bounds[*row];
          if (bound.size() < members) bound.resize(members);
          bound[m] = std::max(bound[m], moved);
          continue;
        }
        const std::string by = ": they could move its value by " + Number(moved) + " (" +
                               (r.value > 0 ? Percent(moved / r.value) : "of 0") + ")";
        AddOnce(biases_of(*row, m),
                {excess ? WindowBiasKind::kCallEdges : WindowBiasKind::kCallMiddles,
                 excess ? "events at call edges: " + what + by +
                              ": what calls do at their start or end is not in the credited "
                              "windows"
                        : "events in call middles: " + what + by +
                              ": the credited windows, inside calls, count more than whole "
                              "calls do"});
      }
    }
  }

  FlagStallsAtCallEdges(attributor, member_names, row_name, credited, findings);

  // Windows that span calls, seen directly: samples of a member taken on its own whose rows are
  // other functions, inside this function's credited windows. The events they stand for were
  // credited here; where taking them out would move the value beyond its interval, it is
  // flagged (a function that never faults read 2.0 +-0.12 faults/ms from windows stepping over
  // another's short calls, which its clock's samples, user space only, never landed in: the
  // faults' own samples did). Less than that goes into the interval.
  for (const auto& [function, counters] : functions) {
    if (counters.stepped_events.empty() || counters.windows_credited < 2) continue;
    for (size_t m = 1; m < members; ++m) {
      const std::optional<Rate> r = credited_rate(function, m);
      if (!r || counters.deltas[0] <= 0) continue;
      const double stepped = std::min(counters.stepped_events[m], counters.deltas[m]);
      if (stepped <= 0) continue;
      const double moved = stepped / counters.deltas[0];
      if (moved <= r->high - r->value) {
        auto& bound = findings.bounds[function];
        if (bound.size() < members) bound.resize(members);
        bound[m] = std::max(bound[m], moved);
        continue;
      }
      std::string where;
      for (const auto& [other, times] : counters.stepped_over)
        where += (where.empty() ? "" : ", ") + row_name(other);
      AddOnce(biases_of(function, m),
              {WindowBiasKind::kSpansCalls,
               "windows span calls: " + std::to_string(counters.stepped_samples) +
                   " samples taken on their own place events in other functions (" + where +
                   ") inside its credited windows, standing for " + Number(stepped) + " of its " +
                   Number(counters.deltas[m]) + " credited " + member_names[m] +
                   ": they could move its value by " + Number(moved) + " (" +
                   (r->value > 0 ? Percent(moved / r->value) : "of 0") +
                   "); its windows stepped over other functions' calls"});
    }
  }

  // Windows that span calls: flagged where most windows from the function leave it (its calls
  // are shorter than about two windows, so the few that stayed probably came back from another
  // call: seen with calls of 35 us under 250 us windows, 5 windows credited of 270, the value
  // 49 +-20 against a truth of 114), or where the estimated share of spanning windows, times how
  // far the rates of what lies between its samples are from its own, reaches beyond its interval.
  for (const auto& [function, runs] : attributor.runs()) {
    const bool mostly_leave = runs.windows_stay > 0 && 2 * runs.windows_stay < runs.windows_from;
    const std::optional<double> span = SpanShare(runs);
    if (!mostly_leave && (!span || *span <= kMaxSpanShare)) continue;
    for (size_t m = 1; m < members; ++m) {
      if (mostly_leave) {
        AddOnce(biases_of(function, m),
                {WindowBiasKind::kSpansCalls,
                 "windows span calls: " + std::to_string(runs.windows_from - runs.windows_stay) +
                     " of the " + std::to_string(runs.windows_from) +
                     " windows from it ended in another function: its calls are shorter than "
                     "about two windows, so the " +
                     std::to_string(runs.windows_stay) +
                     " that ended in it probably came back from another of its calls, the work "
                     "between counted as its own"});
        continue;
      }
      const std::optional<Rate> r = credited_rate(function, m);
      if (!r) continue;
      // How far the work stepped over may lie from this function's rate: that of the functions
      // seen between two of its samples (their credited rates, or where they credit no window of
      // their own, the windows into and out of them from this function).
      // Work stepped over at a higher rate raised the value, at a lower one lowered it; counts
      // are never negative, so a value can be too high by at most itself (a function whose
      // credited windows saw no event, next to functions that make many, is not flagged: what
      // it stepped over would have shown).
      double above = 0, below = 0;
      auto widen = [&](const std::optional<Rate>& o) {
        if (!o) return;
        if (o->value > r->value) above = std::max(above, o->value - r->value);
        if (o->value < r->value) below = std::max(below, r->value - o->value);
      };
      for (const auto& [other, times] : runs.returned_over) {
        widen(credited_rate(other, m));
        for (const auto& pair : {std::pair(function, other), std::pair(other, function)})
          if (auto it = edge_rates.find(pair); it != edge_rates.end()) widen(it->second[m]);
      }
      const double spread = std::max(above, below);
      if (std::max(std::min(*span * above, r->value), *span * below) <= r->high - r->value)
        continue;
      const FunctionCounters& counters = functions.at(function);
      const double per_window = counters.deltas[0] / static_cast<double>(counters.windows_credited);
      AddOnce(biases_of(function, m),
              {WindowBiasKind::kSpansCalls,
               "windows span calls: up to " + Percent(*span) +
                   " of its credited windows' time may be other functions' calls stepped over (" +
                   std::to_string(runs.single_returns) +
                   " times one sample of another function lay between two of its own, against " +
                   std::to_string(runs.windows_stay) +
                   " windows that stayed in it), where rates differ from its own by up to " +
                   Number(spread * per_window) + " " + member_names[m] + " a window"});
    }
  }
  return findings;
}

}  // namespace tprof
