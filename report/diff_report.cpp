#include "report/diff_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "report/event_units.h"
#include "report/printf.h"

namespace tprof {

const char* const kDiffColumnHelp =
    "Old      the function's self period in OLD: the sum of its samples' periods (the mean over\n"
    "         runs when a side has several runs)\n"
    "New      the same in NEW\n"
    "Delta    New - Old\n"
    "Delta%   100 * Delta / Old: the change relative to the function's own old value\n"
    "DeltaPt  100 * Delta / the event's old total: points of the old total (rows add up to the\n"
    "         total's Delta%)\n"
    "Status   gone: only in OLD (New is 0); new: only in NEW (Old is 0, no Delta%)\n"
    "Rows are sorted by |Delta|. With several runs per side: p is the two-sided Mann-Whitney U\n"
    "p-value of the per-run values, CV-old/CV-new each side's coefficient of variation\n"
    "(stddev / mean of the runs), Sig '*' a significant change (p < alpha and |Delta%| at least\n"
    "the minimum effect).";

const char* const kDiffNormalizeHelp =
    "none   (default) raw period sums: a uniform slowdown shows as growth of every function\n"
    "       and of the total\n"
    "total  each run scaled so that each event's total equals the old mean total: shows shifts\n"
    "       in the mix, and HIDES a uniform slowdown (everything 2x slower shows no change)\n"
    "EVENT  each run scaled by (old mean total of EVENT) / (the run's total of EVENT): e.g.\n"
    "       cycles per instruction retired; hides whatever changes EVENT's total too";

namespace {

std::string OptionalPercent(const std::optional<double>& v, int width) {
  if (!v) return Printf("%*s", width, "-");
  return Printf("%+*.2f%%", width - 1, *v);
}

std::string NormalizeName(const ProfileDiffOptions& o) {
  switch (o.normalize) {
    case Normalization::kNone:
      return "none";
    case Normalization::kTotal:
      return "total";
    case Normalization::kEvent:
      return o.normalize_event;
  }
  return "";
}

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : " ") + x;
  return s;
}

// "work_alpha [prog]"; modules that are already bracketed ("[kernel.kallsyms]") stay as they are.
std::string Label(const FunctionKey& key) {
  if (key.module.empty()) return key.function;  // matched by name alone
  if (!key.module.empty() && key.module.front() == '[') return key.function + " " + key.module;
  return key.function + " [" + key.module + "]";
}

bool Assessed(const ProfileDiff& diff) { return diff.old_runs >= 2 && diff.new_runs >= 2; }

void RenderEvent(const ProfileDiff& diff, const EventDiff& event, const DiffReportOptions& options,
                 std::ostream& out) {
  const bool stats = Assessed(diff);
  // Time events in ms (or s), counts as they are: one unit for the whole table, in its header.
  const ValueScale scale =
      ScaleForEvent(event.name, std::max(std::fabs(event.old_total), std::fabs(event.new_total)));
  const bool counts = UnitOfEvent(event.name) == EventUnit::kCount;
  const std::string unit = counts ? "" : " " + scale.unit;
  out << "#\n# event: " << event.name << ": old total " << FormatScaled(scale, event.old_total)
      << unit << ", new total " << FormatScaled(scale, event.new_total) << unit << ", delta "
      << FormatScaled(scale, event.delta, true) << unit << " ("
      << OptionalPercent(event.delta_pct, 1) << " of the old total)"
      << (counts ? "; values are counts of " + event.name : "; values are " + scale.unit) << '\n';
  if (stats) {
    const RunStatistics& t = event.total_runs;
    out << Printf("# total over runs: CV-old %.2f%%, CV-new %.2f%%, p %.3g, %s\n", 100 * t.old_cv,
                  100 * t.new_cv, t.test ? t.test->p_value : 1.0, SignificanceName(t.significance));
  }
  const std::string suffix = counts ? "" : " (" + scale.unit + ")";
  std::string header =
      Printf("# %15s %15s %15s %9s %9s  %-6s", ("Old" + suffix).c_str(), ("New" + suffix).c_str(),
             ("Delta" + suffix).c_str(), "Delta%", "DeltaPt", "Status");
  if (stats) header += Printf(" %8s %3s %7s %7s", "p", "Sig", "CV-old", "CV-new");
  out << header << "  Function [module]\n";
  size_t shown = 0;
  for (const FunctionDiff& f : event.functions) {
    if (options.max_rows && shown >= options.max_rows) {
      out << "# ... " << event.functions.size() - shown
          << " more, smaller changes (--limit N; --limit 0 shows every function)\n";
      break;
    }
    std::string line =
        Printf("  %15s %15s %15s %9s %+8.2fpt  %-6s", FormatScaled(scale, f.old_value).c_str(),
               FormatScaled(scale, f.new_value).c_str(), FormatScaled(scale, f.delta, true).c_str(),
               OptionalPercent(f.delta_pct, 9).c_str(), f.delta_pt, FunctionStatusName(f.status));
    if (stats)
      line += Printf(" %8.3g %3s %6.1f%% %6.1f%%", f.runs.test ? f.runs.test->p_value : 1.0,
                     f.runs.significance == Significance::kSignificant ? "*" : "",
                     100 * f.runs.old_cv, 100 * f.runs.new_cv);
    out << line << "  " << Label(f.key) << '\n';
    ++shown;
  }
}

// A ratio's cell: "0.426 ±0.083~!" (~ low confidence, ! a reason it may lie outside).
std::string RatioCell(const std::optional<double>& value, const std::optional<double>& half_width,
                      bool low_confidence, const std::string& bias) {
  if (!value) return Printf("%16s", "n/a");
  std::string cell = Printf("%.3f", *value);
  cell += half_width ? Printf(" \u00b1%.3f", *half_width) : std::string(" \u00b1?");
  cell += low_confidence ? "~" : " ";
  cell += bias.empty() ? " " : "!";
  // 16 columns, the ± two bytes and one column; a wider value still keeps a space before it.
  const size_t columns = cell.size() - 1;
  return std::string(columns < 16 ? 16 - columns : 1, ' ') + cell;
}

void RenderMetrics(const DerivedMetricsDiff& m, const DiffReportOptions& options,
                   std::ostream& out) {
  out << "#\n# derived metrics: IPC = " << m.instructions_event << " / " << m.cycles_event
      << ", CPI = " << m.cycles_event << " / " << m.instructions_event;
  if (m.from_windows) {
    out << " [g]: from the windows of the group led by " << m.leader
        << " credited to each function, pooled over each side's runs (as tprof report's [g] "
           "columns); \u00b1 95% interval, ~ low confidence, ! may lie outside it, why below; "
           "n/a: no window credited on that side\n";
  } else {
    out << " [s]: from each event's own samples, raw sums over each side's runs (never "
           "normalized; as tprof report's [s] columns); \u00b1 95% interval (each count Poisson "
           "in its samples), ~ low confidence, ! may lie outside it, why below; n/a: no cycles "
           "sampled on that side (instructions, for CPI)\n";
    if (!m.lost_reason.empty()) out << "# ! " << m.lost_reason << "\n";
  }
  auto cells = [](const RatioPair& r) {
    return RatioCell(r.old_value, r.old_half_width, r.old_low_confidence, r.old_bias) +
           RatioCell(r.new_value, r.new_half_width, r.new_low_confidence, r.new_bias);
  };
  out << "# " << Printf("%14s%16s%16s%16s", "IPC-old", "IPC-new", "CPI-old", "CPI-new")
      << "  Function [module]\n";
  out << cells(m.total_ipc) << cells(m.total_cpi) << "  [total]\n";
  std::vector<std::string> reasons;
  size_t shown = 0;
  for (const FunctionRatios& f : m.functions) {
    if (options.max_rows && shown++ >= options.max_rows) break;
    out << cells(f.ipc) << cells(f.cpi) << "  " << Label(f.key) << '\n';
    // IPC and CPI share a side's reason; CPI carries it alone where IPC is n/a (no cycles).
    const std::string& old_bias = f.ipc.old_bias.empty() ? f.cpi.old_bias : f.ipc.old_bias;
    const std::string& new_bias = f.ipc.new_bias.empty() ? f.cpi.new_bias : f.ipc.new_bias;
    if (!old_bias.empty()) reasons.push_back(Label(f.key) + ", old: " + old_bias);
    if (!new_bias.empty()) reasons.push_back(Label(f.key) + ", new: " + new_bias);
  }
  for (const std::string& reason : reasons) out << "# ! " << reason << '\n';
}

// "+12.3% ±4.5" (the part in % of the old cost, its interval in the same unit when runs give one).
std::string PartCell(const SplitPart& part, double old_cost) {
  if (!part.percent) return Printf("%14s", "n/a");
  std::string cell = Printf("%+.2f%%", *part.percent);
  if (part.half_width && old_cost != 0)
    cell += Printf(" \u00b1%.2f", 100 * *part.half_width / old_cost);
  return Printf("%16s", cell.c_str());
}

void RenderSplit(const CostSplitDiff& split, const DiffReportOptions& options, std::ostream& out) {
  out << "#\n# cost split: the change of " << split.cost_event << " = work (more or less "
      << split.work_event << " at the old " << split.cost_event << " per " << split.work_event
      << ") + efficiency (the change of " << split.cost_event << " per " << split.work_event
      << "); in % of the old " << split.cost_event
      << (split.total.work.half_width ? ", \u00b1 the 95% interval over the runs" : "") << '\n';
  out << "# " << Printf("%14s %14s %16s %16s", "old", "new", "work", "efficiency")
      << "  Function [module]\n";
  auto line = [&](const CostSplit& s, const std::string& label) {
    out << "  " << Printf("%14.6g %14.6g", s.old_cost, s.new_cost) << ' '
        << PartCell(s.work, s.old_cost) << ' ' << PartCell(s.efficiency, s.old_cost) << "  "
        << label << '\n';
  };
  line(split.total, "[total]");
  size_t shown = 0;
  for (const CostSplit& s : split.functions) {
    if (options.max_rows && shown++ >= options.max_rows) break;
    line(s, Label(s.key));
  }
}

nlohmann::ordered_json OptionalJson(const std::optional<double>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

// JSON has no infinity: an observed +inf% (a new function) is written as null.
nlohmann::ordered_json FiniteJson(double v) {
  return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json RunsJson(const RunStatistics& r) {
  return {
      {"old", r.old_runs},
      {"new", r.new_runs},
      {"old_cv", r.old_cv},
      {"new_cv", r.new_cv},
      {"p_value",
       r.test ? nlohmann::ordered_json(r.test->p_value) : nlohmann::ordered_json(nullptr)},
      {"u_old", r.test ? nlohmann::ordered_json(r.test->u_old) : nlohmann::ordered_json(nullptr)},
      {"significance", SignificanceName(r.significance)}};
}

nlohmann::ordered_json RatioJson(const RatioPair& r) {
  auto reason = [](const std::string& bias) {
    return bias.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(bias);
  };
  return {{"old", OptionalJson(r.old_value)},
          {"new", OptionalJson(r.new_value)},
          {"old_half_width", OptionalJson(r.old_half_width)},
          {"new_half_width", OptionalJson(r.new_half_width)},
          {"old_low_confidence", r.old_low_confidence},
          {"new_low_confidence", r.new_low_confidence},
          {"old_reason", reason(r.old_bias)},
          {"new_reason", reason(r.new_bias)}};
}

nlohmann::ordered_json FindingJson(const GateFinding& f) {
  return {
      {"subject", f.subject},
      {"observed", FiniteJson(f.observed)},
      {"old", f.old_value},
      {"new", f.new_value},
      {"p_value", OptionalJson(f.p_value)},
      {"bias", f.bias.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(f.bias)}};
}

}  // namespace

void RenderDiffText(const ProfileDiff& diff, const GateVerdict& verdict,
                    const DiffReportInputs& inputs, const DiffReportOptions& options,
                    std::ostream& out) {
  out << "# tprof diff\n";
  out << "# old: " << Join(inputs.old_files) << " (" << diff.old_runs << " run"
      << (diff.old_runs == 1 ? "" : "s") << ")\n";
  out << "# new: " << Join(inputs.new_files) << " (" << diff.new_runs << " run"
      << (diff.new_runs == 1 ? "" : "s") << ")\n";
  out << "# functions: " << InlineModeDescription(inputs.functions) << "\n";
  if (!inputs.kernel_work.empty()) {
    out << "# kernel work: " << inputs.kernel_work;
    if (inputs.kernel_credited)
      out << "; " << inputs.kernel_samples_credited << " samples credited";
    out << '\n';
  }
  out << "# normalize: " << NormalizeName(diff.options);
  switch (diff.options.normalize) {
    case Normalization::kNone:
      out << " (raw period sums: a uniform slowdown shows in every row and the total)\n";
      break;
    case Normalization::kTotal:
      out << " (each run scaled to the old mean total: a uniform slowdown is HIDDEN)\n";
      break;
    case Normalization::kEvent:
      out << " (each run scaled to the old mean total of " << diff.options.normalize_event << ")\n";
      break;
  }
  if (!diff.note.empty()) out << "# note: " << diff.note << '\n';
  if (!diff.unpaired_events.empty())
    out << "# not compared (missing from some run): " << Join(diff.unpaired_events) << '\n';
  if (!diff.read_only_events.empty())
    out << "# not compared per function, not sampled on their own: " << Join(diff.read_only_events)
        << (diff.metrics && diff.metrics->from_windows ? "; their windows give IPC[g] and CPI[g]"
                                                       : "")
        << '\n';
  if (Assessed(diff)) {
    out << Printf(
        "# significance: two-sided Mann-Whitney U per function, alpha %g, minimum effect %g%%; "
        "n >= %zu runs per side are needed to reach p < %g\n",
        diff.options.alpha, diff.options.min_effect_percent, diff.runs_needed, diff.options.alpha,
        diff.options.alpha);
    if (std::min(diff.old_runs, diff.new_runs) < diff.runs_needed)
      out << "# warning: too few runs for any change to be significant\n";
  } else {
    out << "# significance: not assessed (one run on a side; give several runs per side with "
           "--old/--new, at least "
        << diff.runs_needed << " each)\n";
  }
  // The glossary is in --help; every run gets a pointer to it, not the whole of it.
  out << "# columns: Old/New/Delta per function (sums of sample periods; ms for time events), "
         "Delta% of its old value, DeltaPt points of the old total; 'tprof diff --help' has "
         "every column's formula\n";
  for (const EventDiff& event : diff.events) RenderEvent(diff, event, options, out);
  if (diff.metrics) RenderMetrics(*diff.metrics, options, out);
  if (diff.split) RenderSplit(*diff.split, options, out);
  for (const IncompleteInput& in : inputs.incomplete)
    out << "# incomplete: " << in.side << " " << in.file << ": " << in.reason << '\n';
  if (!verdict.checks.empty()) {
    size_t tripped = 0;
    for (const GateCheck& c : verdict.checks) tripped += c.tripped;
    out << "#\n# gate: " << verdict.checks.size() << " threshold(s), " << tripped << " tripped"
        << (inputs.gate_withheld ? "; not judged: an input is incomplete (exit status 4)" : "")
        << '\n';
    for (const GateCheck& c : verdict.checks) out << "#   " << c.explanation << '\n';
  }
}

nlohmann::ordered_json DiffToJson(const ProfileDiff& diff, const GateVerdict& verdict,
                                  const DiffReportInputs& inputs) {
  nlohmann::ordered_json j;
  j["schema"] = "tprof-diff/1";
  j["old"] = {{"files", inputs.old_files}, {"runs", diff.old_runs}};
  j["new"] = {{"files", inputs.new_files}, {"runs", diff.new_runs}};
  j["normalize"] = NormalizeName(diff.options);
  j["functions"] = InlineModeName(inputs.functions);
  j["significance"] = {{"assessed", Assessed(diff)},
                       {"test", "mann-whitney-u two-sided"},
                       {"alpha", diff.options.alpha},
                       {"min_effect_percent", diff.options.min_effect_percent},
                       {"runs_needed", diff.runs_needed}};
  j["note"] = diff.note;
  j["unpaired_events"] = diff.unpaired_events;
  j["read_only_events"] = diff.read_only_events;
  nlohmann::ordered_json events = nlohmann::ordered_json::array();
  for (const EventDiff& e : diff.events) {
    nlohmann::ordered_json functions = nlohmann::ordered_json::array();
    for (const FunctionDiff& f : e.functions)
      functions.push_back(
          {{"function", f.key.function},
           {"module", f.key.module},
           {"status", f.status == FunctionStatus::kBoth ? "both" : FunctionStatusName(f.status)},
           {"old", f.old_value},
           {"new", f.new_value},
           {"delta", f.delta},
           {"delta_pct", OptionalJson(f.delta_pct)},
           {"delta_pt", f.delta_pt},
           {"old_share", f.old_share},
           {"new_share", f.new_share},
           {"runs", RunsJson(f.runs)}});
    events.push_back({{"name", e.name},
                      {"old_total", e.old_total},
                      {"new_total", e.new_total},
                      {"delta", e.delta},
                      {"delta_pct", OptionalJson(e.delta_pct)},
                      {"total_runs", RunsJson(e.total_runs)},
                      {"functions", std::move(functions)}});
  }
  j["events"] = std::move(events);
  if (diff.metrics) {
    nlohmann::ordered_json functions = nlohmann::ordered_json::array();
    for (const FunctionRatios& f : diff.metrics->functions)
      functions.push_back({{"function", f.key.function},
                           {"module", f.key.module},
                           {"ipc", RatioJson(f.ipc)},
                           {"cpi", RatioJson(f.cpi)}});
    j["metrics"] = {
        {"source", diff.metrics->from_windows ? "group deltas" : "sampled periods"},
        {"leader", diff.metrics->from_windows ? nlohmann::ordered_json(diff.metrics->leader)
                                              : nlohmann::ordered_json(nullptr)},
        {"cycles_event", diff.metrics->cycles_event},
        {"instructions_event", diff.metrics->instructions_event},
        {"total",
         {{"ipc", RatioJson(diff.metrics->total_ipc)},
          {"cpi", RatioJson(diff.metrics->total_cpi)}}},
        {"functions", std::move(functions)},
        {"lost_reach",
         {{"old", diff.metrics->old_lost_reach}, {"new", diff.metrics->new_lost_reach}}},
        {"bias", diff.metrics->lost_reason.empty()
                     ? nlohmann::ordered_json(nullptr)
                     : nlohmann::ordered_json(diff.metrics->lost_reason)}};
  } else {
    j["metrics"] = nullptr;
  }
  if (diff.split) {
    auto part = [](const SplitPart& p) {
      return nlohmann::ordered_json{{"value", p.value},
                                    {"percent", OptionalJson(p.percent)},
                                    {"half_width", OptionalJson(p.half_width)}};
    };
    auto split = [&](const CostSplit& s) {
      nlohmann::ordered_json j;
      if (!s.key.function.empty()) {
        j["function"] = s.key.function;
        j["module"] = s.key.module;
      }
      j["old_cost"] = s.old_cost;
      j["new_cost"] = s.new_cost;
      j["old_work"] = s.old_work;
      j["new_work"] = s.new_work;
      j["work"] = part(s.work);
      j["efficiency"] = part(s.efficiency);
      return j;
    };
    nlohmann::ordered_json functions = nlohmann::ordered_json::array();
    for (const CostSplit& s : diff.split->functions) functions.push_back(split(s));
    j["split"] = {{"cost_event", diff.split->cost_event},
                  {"work_event", diff.split->work_event},
                  {"total", split(diff.split->total)},
                  {"functions", std::move(functions)}};
  } else {
    j["split"] = nullptr;
  }
  nlohmann::ordered_json checks = nlohmann::ordered_json::array();
  for (const GateCheck& c : verdict.checks) {
    nlohmann::ordered_json crossed = nlohmann::ordered_json::array();
    for (const GateFinding& f : c.crossed) crossed.push_back(FindingJson(f));
    checks.push_back(
        {{"threshold", c.threshold.text},
         {"tripped", c.tripped},
         {"matched", c.matched},
         {"not_significant", c.not_significant},
         {"crossed", std::move(crossed)},
         {"closest", c.closest ? FindingJson(*c.closest) : nlohmann::ordered_json(nullptr)},
         {"explanation", c.explanation}});
  }
  nlohmann::ordered_json incomplete = nlohmann::ordered_json::array();
  for (const IncompleteInput& in : inputs.incomplete)
    incomplete.push_back({{"side", in.side}, {"file", in.file}, {"reason", in.reason}});
  j["incomplete"] = std::move(incomplete);
  j["kernel_work"] = {{"credited", inputs.kernel_credited},
                      {"samples_credited", inputs.kernel_samples_credited},
                      {"explanation", inputs.kernel_work}};
  j["gate"] = {{"tripped", verdict.tripped()},
               {"judged", !inputs.gate_withheld},
               {"checks", std::move(checks)}};
  return j;
}

}  // namespace tprof
