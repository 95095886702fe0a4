#include "views/topdown.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

#include "core/format/saved_counts.h"
#include "core/metrics/group_scheduler.h"
#include "core/metrics/topdown_evaluator.h"
#include "core/source/counter_report_source.h"
#include "pmu/pmu_probe.h"

namespace tprof {
namespace {

// The built-in tables that evaluate at least one selected metric from `counts`, those that
// evaluate most first: what --cpu could have named.
std::string TablesThatFit(const std::string& selection, const CounterReport& counts) {
  std::vector<std::pair<size_t, std::string>> fits;
  for (const MetricTable& t : BuiltinMetricTables()) {
    auto selected = t.Select(selection);
    if (!selected.ok()) continue;
    auto results = EvaluateMetrics(t, selected.value(), counts);
    if (!results.ok()) continue;
    const size_t evaluated = static_cast<size_t>(
        std::count_if(results->begin(), results->end(),
                      [](const MetricResult& r) { return r.value.has_value(); }));
    if (evaluated) fits.emplace_back(evaluated, t.name);
  }
  if (fits.empty()) return "no built-in table fits them ('tprof list cpus')";
  std::stable_sort(fits.begin(), fits.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string names;
  for (const auto& [evaluated, table_name] : fits)
    names += (names.empty() ? "" : ", ") + table_name;
  return "tables that fit them: " + names + " (--cpu NAME)";
}

// Each scheduled group's events, with their raw codes from the table.
std::vector<std::vector<CountedEvent>> CountedGroups(const MetricTable& table,
                                                     const std::vector<ScheduledGroup>& schedule) {
  std::vector<std::vector<CountedEvent>> groups;
  for (const ScheduledGroup& g : schedule) {
    std::vector<CountedEvent> events;
    for (const std::string& e : g.events)
      events.push_back({e, PERF_TYPE_RAW, table.FindEvent(e)->code});
    groups.push_back(std::move(events));
  }
  return groups;
}

// The general-purpose counters one group may hold, tried with the table's first event that
// is not fixed.
uint32_t GeneralCountersFor(const MetricTable& table) {
  for (const MetricEvent& e : table.events)
    if (std::find(table.fixed_events.begin(), table.fixed_events.end(), e.name) ==
        table.fixed_events.end())
      return CountGeneralCounters(e.code, e.name);
  return 0;
}

std::string EndNote(CountingEnd end, uint64_t elapsed_ns) {
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.2f s", static_cast<double>(elapsed_ns) * 1e-9);
  switch (end) {
    case CountingEnd::kTargetExited:
      return std::string(", ") + seconds;
    case CountingEnd::kDuration:
      return std::string(", ") + seconds + " (--duration)";
    case CountingEnd::kInterrupted:
      return std::string(", ") + seconds + " (interrupted)";
  }
  return "";
}

}  // namespace

Status WriteSavedTopdown(const SavedTopdownRequest& request, std::ostream& out) {
  const MetricTable& table = *request.table;
  std::ifstream in(request.input);
  if (!in) return Error("cannot read " + request.input + ": " + std::strerror(errno));
  std::stringstream text;
  text << in.rdbuf();
  auto counts = ParseCounterReport(text.str());
  if (!counts.ok()) return counts.error().WithContext(request.input);
  auto results = EvaluateMetrics(table, request.selected, counts.value());
  if (!results.ok()) return results.error();
  if (std::none_of(results->begin(), results->end(),
                   [](const MetricResult& r) { return r.value.has_value(); }))
    return Error(request.input + ": none of the " + table.name +
                 " table's metrics can be evaluated from these counts (its events were not "
                 "counted); " +
                 TablesThatFit(request.selection, counts.value()));
  RenderTopdown(table, counts->format + " " + request.input, results.value(), request.format, out);
  return Status::Ok();
}

Status WriteLiveTopdown(const LiveTopdownRequest& request, std::ostream& out,
                        const ViewMessages& messages) {
  const MetricTable& table = *request.table;
  const uint32_t counters = GeneralCountersFor(table);
  auto schedule = ScheduleGroups(table, request.selected, counters);
  if (!schedule.ok()) return schedule.error();
  const std::vector<std::vector<CountedEvent>> groups = CountedGroups(table, *schedule);
  const CountingRunOptions& run = request.run;
  const std::string groups_note = " in " + std::to_string(groups.size()) + " groups of at most " +
                                  std::to_string(counters) + " general-purpose counters";
  // With -I every interval is evaluated on its own deltas as it ends.
  std::optional<TopdownIntervalWriter> writer;
  auto print_interval = [&](double seconds, const CounterReport& delta) -> Status {
    auto results = EvaluateMetrics(table, request.selected, delta);
    if (!results.ok()) return results.error();
    writer->Interval(seconds, results.value());
    return Status::Ok();
  };
  if (run.interval_ns) {
    const std::string target = run.system_wide    ? "every CPU"
                               : run.pids.empty() ? "the command"
                                                  : "every thread of pid " + request.pids;
    writer.emplace(table, "counted live on " + target + groups_note, request.format, out);
  }
  auto counted = RunCounting(groups, run, print_interval);
  if (!counted.ok()) return counted.error();
  for (const std::string& note : counted->notes) messages.Note(note);
  const std::string description = "counted live on " + counted->target +
                                  (counted->user_space_only ? " (user space only)" : "") +
                                  groups_note + EndNote(counted->end, counted->elapsed_ns);
  if (!request.output.empty()) {
    std::ofstream saved(request.output);
    saved << SaveTprofCounts(counted->total);
    if (!saved) return Error("cannot write " + request.output);
  }
  if (run.interval_ns && !request.summary) return Status::Ok();  // as perf stat -I: intervals
  auto results = EvaluateMetrics(table, request.selected, counted->total);
  if (!results.ok()) return results.error();
  if (writer)
    writer->Summary(results.value());
  else
    RenderTopdown(table, description, results.value(), request.format, out);
  return Status::Ok();
}

}  // namespace tprof
