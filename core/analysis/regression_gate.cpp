#include "core/analysis/regression_gate.h"

#include <fnmatch.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <regex>

#include "core/model/event_selection.h"
#include "core/model/event_unit.h"

namespace tprof {
namespace {

constexpr const char* kShape =
    "expected 'total[.EVENT] OP N%', 'func(PATTERN)[.EVENT] OP N%|Npt|N' or "
    "'share(PATTERN)[.EVENT] OP Npt', OP one of > >= < <=";

bool IsMetric(const std::string& event) { return event == "ipc" || event == "cpi"; }
// The parts of the cost split (cost_split.h).
bool IsSplitPart(const std::string& event) { return event == "work" || event == "efficiency"; }

std::string FormatNumber(double v, const char* unit) {
  char buf[64];
  if (std::isinf(v))
    std::snprintf(buf, sizeof buf, "%sinf%s", v > 0 ? "+" : "-", unit);
  else if (unit[0] == '\0')
    std::snprintf(buf, sizeof buf, "%+.6g", v);
  else
    std::snprintf(buf, sizeof buf, "%+.2f%s", v, unit);
  return buf;
}

const char* UnitSuffix(Threshold::Unit unit) {
  switch (unit) {
    case Threshold::Unit::kPercent:
      return "%";
    case Threshold::Unit::kPoints:
      return "pt";
    case Threshold::Unit::kRaw:
      return "";
  }
  return "";
}

bool Crosses(double observed, const Threshold& t) {
  switch (t.op) {
    case Threshold::Op::kGreater:
      return observed > t.value;
    case Threshold::Op::kGreaterEqual:
      return observed >= t.value;
    case Threshold::Op::kLess:
      return observed < t.value;
    case Threshold::Op::kLessEqual:
      return observed <= t.value;
  }
  return false;
}

// How far past the threshold (positive: crossed), in the direction the operator looks.
double Excess(double observed, const Threshold& t) {
  bool upward = t.op == Threshold::Op::kGreater || t.op == Threshold::Op::kGreaterEqual;
  return upward ? observed - t.value : t.value - observed;
}

bool NameMatches(const std::string& pattern, const std::string& function) {
  if (::fnmatch(pattern.c_str(), function.c_str(), 0) == 0) return true;
  size_t paren = function.find('(');
  if (paren == std::string::npos || paren == 0) return false;
  return ::fnmatch(pattern.c_str(), function.substr(0, paren).c_str(), 0) == 0;
}

struct Candidate {
  GateFinding finding;
  Significance significance = Significance::kNotAssessed;
  // Where `observed` may truly lie, when a bias widens it (finding.bias says why): a subject
  // that may cross is held to have crossed.
  std::optional<std::pair<double, double>> may_lie;
};

// The time units a clock's threshold takes, in nanoseconds (what the clocks' periods count).
constexpr std::pair<const char*, double> kTimeUnits[] = {
    {"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};

// A raw threshold on a clock shows its values in the unit it was written in, not in ns.
double TimeUnitDivisor(const std::string& unit) {
  for (const auto& [name, nanoseconds] : kTimeUnits)
    if (unit == name) return nanoseconds;
  return 1;
}

// `clock_values`: the subjects' old and new values are nanoseconds (a clock, off-CPU or wall
// time, or a cost split over one), shown in ms unless the threshold was written in a time unit.
void Judge(GateCheck& check, std::vector<Candidate> candidates, bool clock_values = false) {
  const Threshold& t = check.threshold;
  check.matched = candidates.size();
  std::optional<GateFinding> closest;
  for (Candidate& c : candidates) {
    if (c.significance == Significance::kNotSignificant) {
      ++check.not_significant;
      continue;
    }
    if (Crosses(c.finding.observed, t)) {
      c.finding.bias.clear();
      check.crossed.push_back(c.finding);
    } else if (c.may_lie && (Crosses(c.may_lie->first, t) || Crosses(c.may_lie->second, t))) {
      check.crossed.push_back(c.finding);
    } else if (!closest || Excess(c.finding.observed, t) > Excess(closest->observed, t))
      closest = c.finding;
  }
  std::sort(check.crossed.begin(), check.crossed.end(),
            [&](const GateFinding& a, const GateFinding& b) {
              return Excess(a.observed, t) > Excess(b.observed, t);
            });
  check.tripped = !check.crossed.empty();
  const char* unit = t.time_unit.empty() ? UnitSuffix(t.unit) : t.time_unit.c_str();
  auto describe = [&](const GateFinding& f) {
    char values[128];
    std::string s;
    if (!t.time_unit.empty()) {
      const double d = TimeUnitDivisor(t.time_unit);
      std::snprintf(values, sizeof values, " (old %.3f%s, new %.3f%s", f.old_value / d, unit,
                    f.new_value / d, unit);
      s = f.subject + " " + FormatNumber(f.observed / d, unit) + values;
    } else if (clock_values) {
      std::snprintf(values, sizeof values, " (old %.3fms, new %.3fms", f.old_value / 1e6,
                    f.new_value / 1e6);
      s = f.subject + " " + FormatNumber(f.observed, unit) + values;
    } else {
      std::snprintf(values, sizeof values, " (old %.6g, new %.6g", f.old_value, f.new_value);
      s = f.subject + " " + FormatNumber(f.observed, unit) + values;
    }
    if (f.p_value) {
      char p[32];
      std::snprintf(p, sizeof p, ", p=%.3g", *f.p_value);
      s += p;
    }
    if (!f.bias.empty()) s += "; may cross, failed closed: " + f.bias;
    return s + ")";
  };
  std::string line = "'" + t.text + "': ";
  if (check.tripped) {
    line += "TRIPPED by " + describe(check.crossed.front());
    if (check.crossed.size() > 1)
      line += " and " + std::to_string(check.crossed.size() - 1) + " more";
  } else if (check.matched == 0) {
    line += "ok: matched no function";
  } else if (closest) {
    check.closest = closest;
    line += "ok: nearest " + describe(*closest);
  } else {
    line += "ok";
  }
  if (check.not_significant)
    line += "; " + std::to_string(check.not_significant) + " change(s) not significant, ignored";
  check.explanation = line;
}

std::optional<double> RelativePercent(const RatioPair& r) {
  if (!r.old_value || !r.new_value || *r.old_value == 0) return std::nullopt;
  return 100.0 * (*r.new_value - *r.old_value) / *r.old_value;
}

}  // namespace

const char* const kThresholdSyntaxHelp =
    "Regression gate (--fail-if, repeatable; exit status 3 when any threshold trips):\n"
    "  total[.EVENT] OP N%          the event's total: 100 * delta / old total (or N raw units)\n"
    "  func(PATTERN)[.EVENT] OP N%  any matching function: 100 * delta / its own old value\n"
    "  func(PATTERN)[.EVENT] OP Npt   ... or 100 * delta / old total (points), or N raw units\n"
    "  N raw units: a count for counted events; for cpu-clock and task-clock a time, with its\n"
    "  unit (ns us ms s: 'func(parse) > +5ms'), as a bare number would read as ns.\n"
    "  share(PATTERN)[.EVENT] OP Npt  any matching function's share: new share - old share\n"
    "  OP is > >= < <=; N is signed ('> +5%', '< -10%'); EVENT defaults to the first event and\n"
    "  may be ipc or cpi (in % or raw) when both sides have cycles and instructions (a value\n"
    "  that may lie outside its interval or has none fails closed; one missing on a side is\n"
    "  not judged, said, and fails closed where nothing is left to judge), or\n"
    "  work or efficiency, the two parts of a function's cost change (% of its old cost, or\n"
    "  raw): more work at the old cost per unit, and the change of that cost. In recordings\n"
    "  made with --off-cpu, wall is each function's on-CPU clock time plus its off-CPU time.\n"
    "  PATTERN is a shell glob over function names, with or without their parameter list.\n"
    "  A new function counts as +inf %, a gone one as -100 %. With several runs per side only\n"
    "  significant changes trip. Examples:\n"
    "    --fail-if 'total.cpu-clock > +5%'  --fail-if 'func(parse_*) > +10%'\n"
    "    --fail-if 'share(*) > +2pt'  --fail-if 'total.wall > +50ms'";

Result<Threshold> ParseThreshold(std::string_view text) {
  Threshold t;
  t.text = std::string(text);
  std::smatch m;
  std::string s(text);
  // The operator is the last one followed by a number, so that function names may hold '<'.
  std::string subject;
  {
    // Any run of operator characters and any word after the number, so that a wrong one is named
    // ('>>', '5x') rather than taken for part of the subject.
    static const std::regex kTail(
        R"(\s*([<>=!]+)\s*([+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z%]*)\s*$)");
    if (!std::regex_search(s, m, kTail)) return Error("threshold '" + t.text + "': " + kShape);
    subject = s.substr(0, static_cast<size_t>(m.position(0)));
    const std::string op = m[1].str();
    if (op != ">" && op != ">=" && op != "<" && op != "<=")
      return Error("threshold '" + t.text + "': unknown operator '" + op +
                   "' (OP is one of > >= < <=)");
    t.op = op == ">"    ? Threshold::Op::kGreater
           : op == ">=" ? Threshold::Op::kGreaterEqual
           : op == "<"  ? Threshold::Op::kLess
                        : Threshold::Op::kLessEqual;
    t.value = std::stod(m[2].str());
    const std::string unit = m[3].str();
    t.unit = unit == "%"    ? Threshold::Unit::kPercent
             : unit == "pt" ? Threshold::Unit::kPoints
                            : Threshold::Unit::kRaw;
    for (const auto& [name, nanoseconds] : kTimeUnits)
      if (unit == name) {
        t.time_unit = name;
        t.value *= nanoseconds;
      }
    if (t.unit == Threshold::Unit::kRaw && !unit.empty() && t.time_unit.empty())
      return Error("threshold '" + t.text + "': unknown unit '" + unit + "' after " + m[2].str() +
                   " (% or pt; ns, us, ms or s for cpu-clock and task-clock; nothing for counts)");
  }
  while (!subject.empty() && std::isspace(static_cast<unsigned char>(subject.front())))
    subject.erase(0, 1);
  while (!subject.empty() && std::isspace(static_cast<unsigned char>(subject.back())))
    subject.pop_back();
  // 'total > > 5%': the tail took the last '>', leaving one behind.
  if (!subject.empty() && std::string_view("<>=!").find(subject.back()) != std::string_view::npos) {
    size_t start = subject.find_last_not_of("<>=! ");
    start = start == std::string::npos ? 0 : start + 1;
    std::string op = subject.substr(start) + m[1].str();
    op.erase(std::remove(op.begin(), op.end(), ' '), op.end());
    return Error("threshold '" + t.text + "': unknown operator '" + op +
                 "' (OP is one of > >= < <=)");
  }
  std::string rest;  // "" or ".EVENT"
  if (subject.rfind("total", 0) == 0) {
    t.subject = Threshold::Subject::kTotal;
    rest = subject.substr(5);
  } else if (subject.rfind("func(", 0) == 0 || subject.rfind("share(", 0) == 0) {
    t.subject = subject[0] == 'f' ? Threshold::Subject::kFunction : Threshold::Subject::kShare;
    size_t open = subject.find('(');
    size_t close = subject.rfind(')');
    if (close == std::string::npos)
      return Error("threshold '" + t.text + "': '" + subject + "' is missing its ')'");
    if (close <= open + 1)
      return Error("threshold '" + t.text + "': " + subject.substr(0, open) +
                   "(...) needs a function name or pattern");
    t.pattern = subject.substr(open + 1, close - open - 1);
    rest = subject.substr(close + 1);
  } else {
    return Error("threshold '" + t.text + "': unknown subject '" + subject + "'; " + kShape);
  }
  if (!rest.empty()) {
    if (rest[0] != '.' || rest.size() == 1)
      return Error("threshold '" + t.text + "': after the subject expected '.EVENT', got '" + rest +
                   "'");
    t.event = rest.substr(1);
  }
  // Units each subject takes (see the header).
  auto refuse = [&](const char* why) -> Error {
    return Error("threshold '" + t.text + "': " + why);
  };
  if (!t.time_unit.empty() && (IsMetric(t.event) || t.subject == Threshold::Subject::kShare))
    return refuse(
        "a time unit is for a clock's change (cpu-clock, task-clock), not a ratio or "
        "share");
  if (IsSplitPart(t.event)) {
    if (t.subject == Threshold::Subject::kShare)
      return refuse("share() takes events, not work/efficiency");
    if (t.unit == Threshold::Unit::kPoints)
      return refuse("work/efficiency thresholds are in % (of the old cost) or raw");
  } else if (IsMetric(t.event)) {
    if (t.subject == Threshold::Subject::kShare) return refuse("share() takes events, not ipc/cpi");
    if (t.unit == Threshold::Unit::kPoints) return refuse("ipc/cpi thresholds are in % or raw");
  } else if (t.subject == Threshold::Subject::kTotal && t.unit == Threshold::Unit::kPoints) {
    return refuse("a total's change is in % (of the old total) or raw units, not pt");
  } else if (t.subject == Threshold::Subject::kShare && t.unit != Threshold::Unit::kPoints) {
    return refuse("a share's change is in points: write e.g. '> +2pt'");
  }
  return t;
}

bool GateVerdict::tripped() const {
  return std::any_of(checks.begin(), checks.end(), [](const GateCheck& c) { return c.tripped; });
}

Result<GateVerdict> EvaluateGate(const ProfileDiff& diff,
                                 const std::vector<Threshold>& thresholds) {
  GateVerdict verdict;
  for (const Threshold& t : thresholds) {
    GateCheck check;
    check.threshold = t;
    std::vector<Candidate> candidates;
    if (IsSplitPart(t.event)) {
      if (!diff.split)
        return Error::BadRequest(
            "threshold '" + t.text +
            "': work/efficiency need the cost and work events (cycles and instructions, or "
            "--split COST/WORK) sampled on both sides");
      const bool clock_cost = UnitOfEvent(diff.split->cost_event) == EventUnit::kNanoseconds;
      if (t.unit == Threshold::Unit::kRaw && clock_cost && t.time_unit.empty())
        return Error::BadRequest("threshold '" + t.text + "': the cost, " + diff.split->cost_event +
                                 ", counts time: give the number a unit (ms, us, ns, s), or %");
      if (!t.time_unit.empty() && !clock_cost)
        return Error::BadRequest("threshold '" + t.text + "': the cost, " + diff.split->cost_event +
                                 ", counts events, not time");
      const bool work = t.event == "work";
      auto add = [&](const std::string& subject, const CostSplit& s) {
        const SplitPart& part = work ? s.work : s.efficiency;
        Candidate c;
        c.finding.subject = subject;
        c.finding.old_value = s.old_cost;
        c.finding.new_value = s.old_cost + part.value;
        c.finding.observed = t.unit == Threshold::Unit::kPercent
                                 ? part.percent.value_or(std::numeric_limits<double>::infinity())
                                 : part.value;
        // With repeated runs, a part whose 95 % interval holds zero is not a change.
        if (part.half_width)
          c.significance = std::fabs(part.value) > *part.half_width ? Significance::kSignificant
                                                                    : Significance::kNotSignificant;
        candidates.push_back(std::move(c));
      };
      if (t.subject == Threshold::Subject::kTotal) {
        add("total." + t.event, diff.split->total);
      } else {
        for (const CostSplit& s : diff.split->functions)
          if (NameMatches(t.pattern, s.key.function))
            add("func(" + s.key.function + ")." + t.event, s);
      }
      Judge(check, std::move(candidates), clock_cost);
      verdict.checks.push_back(std::move(check));
      continue;
    }
    if (IsMetric(t.event)) {
      if (!diff.metrics)
        return Error("threshold '" + t.text +
                     "': ipc/cpi need a cycles and an instructions event on both sides, sampled "
                     "on their own or read in a group");
      const bool ipc = t.event == "ipc";
      const double old_reach = diff.metrics->old_lost_reach,
                   new_reach = diff.metrics->new_lost_reach;
      size_t without_value = 0, old_zero = 0;
      auto add = [&](const std::string& subject, const RatioPair& r) {
        if (!r.old_value || !r.new_value) {
          ++without_value;
          return;
        }
        // A change in percent of an old IPC of 0 (no instruction sampled there) has no value.
        if (t.unit == Threshold::Unit::kPercent && !RelativePercent(r)) {
          ++old_zero;
          return;
        }
        Candidate c;
        c.finding.subject = subject;
        c.finding.old_value = *r.old_value;
        c.finding.new_value = *r.new_value;
        c.finding.observed =
            t.unit == Threshold::Unit::kPercent ? *RelativePercent(r) : *r.new_value - *r.old_value;
        if (!r.old_bias.empty() || !r.new_bias.empty()) {
          // A value with a reason it may lie outside its interval (a window bias, the two
          // methods apart) has no bound on how far: it may cross whatever the threshold.
          c.may_lie = {-std::numeric_limits<double>::infinity(),
                       std::numeric_limits<double>::infinity()};
          c.finding.bias = !r.old_bias.empty() ? "old " + r.old_bias : "new " + r.new_bias;
        } else if (!r.old_half_width || !r.new_half_width) {
          // Nor has a value without an interval (a single window).
          c.may_lie = {-std::numeric_limits<double>::infinity(),
                       std::numeric_limits<double>::infinity()};
          c.finding.bias = std::string(!r.old_half_width ? "old" : "new") +
                           " value has no interval (" +
                           (diff.metrics->from_windows ? "fewer than two windows"
                                                       : "no sample count to bound it") +
                           ")";
        } else if (old_reach > 0 || new_reach > 0) {
          // Each side's ratio anywhere in value * (1 +- its reach): the change at its extremes.
          const double o = *r.old_value, n = *r.new_value;
          const double old_low = o * (1 - old_reach), old_high = o * (1 + old_reach);
          const double new_low = n * (1 - new_reach), new_high = n * (1 + new_reach);
          if (t.unit == Threshold::Unit::kPercent && old_low > 0)
            c.may_lie = {100 * (new_low / old_high - 1), 100 * (new_high / old_low - 1)};
          else if (t.unit != Threshold::Unit::kPercent)
            c.may_lie = {new_low - old_high, new_high - old_low};
          else
            c.may_lie = {-std::numeric_limits<double>::infinity(),
                         std::numeric_limits<double>::infinity()};
          c.finding.bias = diff.metrics->lost_reason;
        }
        candidates.push_back(std::move(c));
      };
      if (t.subject == Threshold::Subject::kTotal) {
        add("total." + t.event, ipc ? diff.metrics->total_ipc : diff.metrics->total_cpi);
      } else {
        for (const FunctionRatios& f : diff.metrics->functions)
          if (NameMatches(t.pattern, f.key.function))
            add("func(" + f.key.function + ")." + t.event, ipc ? f.ipc : f.cpi);
      }
      const bool judged_any = !candidates.empty();
      Judge(check, std::move(candidates));
      if (without_value > 0 || old_zero > 0) {
        // A function with no value on a side (no cycles there; from group windows: no window
        // credited to it), or an old value of 0 under a threshold in percent, is not judged:
        // said, and where it leaves nothing judged, failed closed.
        std::string unjudged;
        if (without_value > 0)
          unjudged = std::to_string(without_value) + " matching value(s) missing on a side (" +
                     (diff.metrics->from_windows ? "no group window credited there"
                      : ipc                      ? "no cycles sampled there"
                                                 : "no instructions sampled there") +
                     ")";
        if (old_zero > 0)
          unjudged += (unjudged.empty() ? "" : ", ") + std::to_string(old_zero) +
                      " of 0 on the old side (a change in percent of 0 has no value)";
        if (!judged_any) {
          check.tripped = true;
          check.explanation =
              "'" + t.text + "': TRIPPED, failed closed: " + unjudged + ", none to judge";
        } else {
          check.explanation += "; not judged: " + unjudged;
        }
      }
      verdict.checks.push_back(std::move(check));
      continue;
    }
    const EventDiff* event = diff.events.empty() ? nullptr : &diff.events.front();
    if (!t.event.empty()) {
      std::vector<std::string> names;
      for (const EventDiff& e : diff.events) names.push_back(e.name);
      auto selected = SelectEvent(names, t.event);
      if (!selected.ok()) {
        for (const std::string& read_only : diff.read_only_events)
          if (read_only.rfind(t.event + " (", 0) == 0)
            return Error::BadRequest(
                "threshold '" + t.text + "': " + read_only +
                " is not sampled on its own, so it has no count per function; its group's "
                "windows give ipc and cpi (func(PATTERN).ipc)");
        return selected.error().WithContext("threshold '" + t.text + "'");
      }
      event = &diff.events[*selected];
    }
    if (!event) return Error::BadRequest("threshold '" + t.text + "': the diff has no events");
    // A clock counts ns: a bare number would read as ns, or be mistaken for percent.
    const bool clock = UnitOfEvent(event->name) == EventUnit::kNanoseconds;
    if (t.unit == Threshold::Unit::kRaw && clock && t.time_unit.empty())
      return Error::BadRequest("threshold '" + t.text + "': " + event->name +
                               " counts time: give the number a unit (ms, us, ns, s), or % or pt");
    if (!t.time_unit.empty() && !clock)
      return Error::BadRequest("threshold '" + t.text + "': " + event->name +
                               " counts events, not time: drop the unit '" + t.time_unit + "'");
    if (t.subject == Threshold::Subject::kTotal) {
      Candidate c;
      c.finding.subject = "total." + event->name;
      c.finding.old_value = event->old_total;
      c.finding.new_value = event->new_total;
      c.finding.observed =
          t.unit == Threshold::Unit::kPercent ? event->delta_pct.value_or(0) : event->delta;
      if (event->total_runs.test) c.finding.p_value = event->total_runs.test->p_value;
      c.significance = event->total_runs.significance;
      candidates.push_back(std::move(c));
    } else {
      for (const FunctionDiff& f : event->functions) {
        if (!NameMatches(t.pattern, f.key.function)) continue;
        Candidate c;
        const bool share = t.subject == Threshold::Subject::kShare;
        c.finding.subject =
            std::string(share ? "share(" : "func(") + f.key.function + ")." + event->name;
        c.finding.old_value = share ? f.old_share : f.old_value;
        c.finding.new_value = share ? f.new_share : f.new_value;
        if (share)
          c.finding.observed = f.new_share - f.old_share;
        else if (t.unit == Threshold::Unit::kPercent)
          c.finding.observed = f.delta_pct.value_or(std::numeric_limits<double>::infinity());
        else if (t.unit == Threshold::Unit::kPoints)
          c.finding.observed = f.delta_pt;
        else
          c.finding.observed = f.delta;
        if (f.runs.test) c.finding.p_value = f.runs.test->p_value;
        c.significance = f.runs.significance;
        candidates.push_back(std::move(c));
      }
    }
    Judge(check, std::move(candidates), clock && t.subject != Threshold::Subject::kShare);
    verdict.checks.push_back(std::move(check));
  }
  return verdict;
}

}  // namespace tprof
