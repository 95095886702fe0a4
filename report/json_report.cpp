#include "report/json_report.h"

#include <nlohmann/json.hpp>

#include "core/base/visible_text.h"
#include "core/model/unwind_statistics_json.h"

namespace tprof {
namespace {

nlohmann::json Value(const MetricValue& v) {
  return v.value ? nlohmann::json(*v.value) : nlohmann::json(nullptr);
}

// [low, high]: the value's 95 % interval; null where it cannot be estimated.
nlohmann::json Interval(const MetricValue& v) {
  if (!v.value || !v.half_width) return nullptr;
  return nlohmann::json::array({*v.value - *v.half_width, *v.value + *v.half_width});
}

nlohmann::json OptionalSeconds(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace

void RenderReportJson(const ReportTableView& view, std::ostream& out) {
  const ReportTable& table = *view.table;
  const Metadata& m = *view.metadata;
  nlohmann::json j;
  j["schema"] = "tprof-report";
  j["schema_version"] = kReportSchemaVersion;
  j["view"] = "table";
  j["input"] = view.input;
  j["metadata"] = {{"command_line", m.command_line},
                   {"hostname", m.hostname},
                   {"architecture", m.architecture},
                   {"cpu", m.cpu.model_name.empty() ? m.cpu.vendor : m.cpu.model_name},
                   {"kernel_release", m.kernel_release},
                   {"duration_ns", m.duration_ns},
                   {"source", m.source}};
  nlohmann::json sort = nlohmann::json::array();
  for (SortKey k : table.sort) sort.push_back(SortKeyName(k));
  j["sort"] = sort;
  j["functions"] = InlineModeName(table.inline_mode);
  j["children"] = view.children;
  j["has_callchains"] = table.has_callchains;
  j["filters"] = {{"comm", view.filter.comms},
                  {"pid", view.filter.pids},
                  {"tid", view.filter.tids},
                  {"dso", view.filter.dsos},
                  {"symbol", view.filter.symbol_pattern},
                  {"time_start_s", OptionalSeconds(view.filter.time_start)},
                  {"time_end_s", OptionalSeconds(view.filter.time_end)},
                  {"percent_limit", view.percent_limit},
                  {"limit", view.max_rows}};
  j["start_timestamp"] = table.start_timestamp;
  j["lost"] = table.lost;
  j["throttles"] = table.throttles;  // per event, as "events"
  j["samples_outside_time"] = table.samples_outside_time;
  j["unwinding"] = UnwindStatisticsJson(view.unwinding);
  if (view.kernel_credit) {
    const KernelCreditStatistics& k = *view.kernel_credit;
    j["kernel_work"] = {{"shown_as", "user function"},
                        {"samples", k.samples},
                        {"kernel_samples", k.kernel_samples},
                        {"credited", k.credited()},
                        {"without_user_context", k.without_user_context}};
  } else {
    j["kernel_work"] = {{"shown_as", "kernel functions"}};
  }
  if (view.off_cpu) {
    nlohmann::json reasons = nlohmann::json::array();
    for (const OffCpuShare& share : view.off_cpu->Shares())
      reasons.push_back({{"reason", OffCpuReasonName(share.reason)},
                         {"ns", share.ns},
                         {"intervals", share.intervals}});
    j["off_cpu"] = {{"ns", view.off_cpu->total_ns()},
                    {"intervals", view.off_cpu->intervals()},
                    {"summed", view.metadata && view.metadata->off_cpu_summed},
                    {"reasons", reasons}};
  }
  j["latency"] = view.latency;
  nlohmann::json events = nlohmann::json::array();
  for (size_t e = 0; e < table.events.size(); ++e) {
    const EventDesc& d = table.events[e];
    events.push_back({{"index", e},
                      {"name", d.name},
                      {"sampled", table.IsSampled(e)},
                      {"group_leader", d.group_leader >= 0 ? nlohmann::json(d.group_leader)
                                                           : nlohmann::json(nullptr)},
                      {"samples", table.total_samples[e]},
                      {"period", table.total_period[e]}});
  }
  j["events"] = events;
  nlohmann::json groups = nlohmann::json::array();
  for (const ReadGroup& g : table.groups) {
    nlohmann::json members = nlohmann::json::array();
    nlohmann::json read_totals = nlohmann::json::object();
    for (size_t m = 0; m < g.members.size() && m < g.read_totals.size(); ++m)
      read_totals[table.events[g.members[m]].name] = g.read_totals[m];
    for (uint32_t idx : g.members) members.push_back(table.events[idx].name);
    nlohmann::json clock_left_out = nullptr;
    if (const auto reads = ClockLeftOutOfReads(table, g))
      clock_left_out = {{"ns", reads->left_out},
                        {"cause", reads->one_mode ? "other mode" : "missed ticks"},
                        {"beyond_lateness", reads->BeyondLateness()},
                        {"read_across_interrupts_ns", g.leader_read_across_interrupts}};
    groups.push_back({{"leader", g.leader},
                      {"members", members},
                      {"windows_credited", g.windows_credited},
                      {"windows_discarded", g.windows_discarded},
                      {"discarded_percent", g.discarded_percent},
                      {"short_window", g.short_window},
                      {"long_periods", g.long_periods},
                      {"read_totals", read_totals},
                      {"clock_left_out", clock_left_out}});
  }
  j["groups"] = groups;
  j["metric_table"] =
      view.metric_table.empty() ? nlohmann::json(nullptr) : nlohmann::json(view.metric_table);
  j["max_confident_relative_half_width"] = kMaxConfidentRelativeHalfWidth;
  j["low_confidence_rule"] = LowConfidenceRule();
  nlohmann::json metrics = nlohmann::json::array();
  for (size_t c = 0; c < view.metrics->columns().size(); ++c) {
    const MetricColumn& col = view.metrics->columns()[c];
    MetricValue overall = view.metrics->EvaluateTotal(c, table);
    metrics.push_back(
        {{"name", col.name},
         {"unit", col.unit},
         {"formula", col.formula},
         {"source", MetricSourceName(col.source)},
         {"group", col.group >= 0 ? nlohmann::json(col.group) : nlohmann::json(nullptr)},
         {"origin", col.origin},
         {"overall", Value(overall)},
         {"overall_ci95", Interval(overall)},
         {"overall_low_confidence", overall.low_confidence}});
  }
  j["metrics"] = metrics;
  nlohmann::json rows = nlohmann::json::array();
  size_t beyond_limit = 0;
  const std::vector<const ReportRow*> visible = VisibleRows(view, &beyond_limit);
  j["rows_beyond_limit"] = beyond_limit;
  for (const ReportRow* row : visible) {
    nlohmann::json r;
    nlohmann::json keys = nlohmann::json::object();
    for (size_t k = 0; k < table.sort.size(); ++k) keys[SortKeyName(table.sort[k])] = row->keys[k];
    r["keys"] = keys;
    nlohmann::json per_event = nlohmann::json::array();
    for (size_t e = 0; e < table.events.size(); ++e) {
      if (!table.IsSampled(e)) continue;
      per_event.push_back(
          {{"event", e},
           {"self_period", row->self_period[e]},
           {"self_samples", row->self_samples[e]},
           {"self_percent", Percent(row->self_period[e], table.total_period[e])},
           {"total_period", row->total_period[e]},
           {"total_samples", row->total_samples[e]},
           {"total_percent", Percent(row->total_period[e], table.total_period[e])}});
    }
    r["events"] = per_event;
    nlohmann::json row_groups = nlohmann::json::array();
    for (size_t g = 0; g < table.groups.size(); ++g) {
      const GroupCredit& credit = row->groups[g];
      nlohmann::json deltas = nlohmann::json::object();
      for (size_t i = 0; i < table.groups[g].members.size(); ++i)
        deltas[table.events[table.groups[g].members[i]].name] = credit.deltas[i];
      row_groups.push_back({{"windows_credited", credit.windows_credited},
                            {"windows_discarded", credit.windows_discarded},
                            {"deltas", deltas}});
    }
    r["groups"] = row_groups;
    nlohmann::json values = nlohmann::json::array();
    for (size_t c = 0; c < view.metrics->columns().size(); ++c) {
      MetricValue v = view.metrics->Evaluate(c, table, *row, view.children);
      nlohmann::json bias = nullptr;  // the window method's bias found for this value, if any
      if (v.bias) bias = {{"kind", WindowBiasKindName(v.bias->kind)}, {"reason", v.bias->reason}};
      values.push_back({{"value", Value(v)},
                        {"ci95", Interval(v)},
                        {"low_confidence", v.low_confidence},
                        {"bias", bias}});
    }
    r["metrics"] = values;
    rows.push_back(std::move(r));
  }
  j["rows"] = rows;
  out << DumpVisibleJson(j, 1) << '\n';
}

void RenderTimelineJson(const TimelineView& view, std::ostream& out) {
  nlohmann::json j;
  j["schema"] = "tprof-report";
  j["schema_version"] = kReportSchemaVersion;
  j["view"] = "timeline";
  j["interval_s"] = static_cast<double>(view.interval_ns) / 1e9;
  j["ranking_event"] = view.events[view.ranking_event].name;
  nlohmann::json events = nlohmann::json::array();
  for (const EventDesc& e : view.events) events.push_back(e.name);
  j["events"] = events;
  nlohmann::json metrics = nlohmann::json::array();
  for (size_t m = 0; m < view.metric_names.size(); ++m)
    metrics.push_back({{"name", view.metric_names[m]},
                       {"unit", view.metric_units[m]},
                       {"source", MetricSourceName(view.metric_sources[m])}});
  j["metrics"] = metrics;
  nlohmann::json intervals = nlohmann::json::array();
  for (const TimelinePoint& point : view.points) {
    nlohmann::json top = nlohmann::json::array();
    for (const TimelineFunction& f : point.top)
      top.push_back({{"function", f.function},
                     {"module", f.module},
                     {"command", f.command},
                     {"period", f.period},
                     {"samples", f.samples},
                     {"percent", f.percent}});
    nlohmann::json values = nlohmann::json::array();
    for (const MetricValue& v : point.metrics) {
      nlohmann::json bias = nullptr;
      if (v.bias) bias = {{"kind", WindowBiasKindName(v.bias->kind)}, {"reason", v.bias->reason}};
      values.push_back({{"value", Value(v)},
                        {"ci95", Interval(v)},
                        {"low_confidence", v.low_confidence},
                        {"bias", bias}});
    }
    nlohmann::json groups = nlohmann::json::array();
    for (size_t g = 0; g < view.groups.size(); ++g) {
      const ReadGroup& group = view.groups[g];
      nlohmann::json deltas = nlohmann::json::object();
      const WindowSums* sums = g < point.windows.size() ? &point.windows[g] : nullptr;
      for (size_t m = 0; m < group.members.size(); ++m)
        deltas[view.events[group.members[m]].name] =
            sums && m < sums->deltas.size() ? sums->deltas[m] : 0.0;
      groups.push_back({{"leader", view.events[group.leader].name},
                        {"windows", sums ? sums->windows : 0},
                        {"deltas", deltas}});
    }
    intervals.push_back({{"start_s", static_cast<double>(point.start_ns) / 1e9},
                         {"end_s", static_cast<double>(point.end_ns) / 1e9},
                         {"period", point.period},
                         {"samples", point.samples},
                         {"metrics", values},
                         {"groups", groups},
                         {"functions", top}});
  }
  j["intervals"] = intervals;
  j["samples_beyond"] = view.samples_beyond;
  out << DumpVisibleJson(j, 2) << '\n';
}

void RenderCallRelationsJson(const CallRelations& relations, std::ostream& out) {
  nlohmann::json j;
  j["schema"] = "tprof-report";
  j["schema_version"] = kReportSchemaVersion;
  j["view"] = "call_relations";
  j["function"] = relations.wanted;
  j["matched"] = relations.matched;
  j["has_callchains"] = relations.has_callchains;
  nlohmann::json events = nlohmann::json::array();
  for (size_t e = 0; e < relations.events.size(); ++e) {
    const uint64_t through = relations.through_period[e];
    auto list = [&](const std::vector<Neighbour>& neighbours) {
      nlohmann::json a = nlohmann::json::array();
      for (const Neighbour& n : neighbours)
        if (n.samples[e])
          a.push_back({{"function", n.function},
                       {"module", n.module},
                       {"period", n.period[e]},
                       {"samples", n.samples[e]},
                       {"percent", Percent(n.period[e], through)}});
      return a;
    };
    events.push_back({{"name", relations.events[e].name},
                      {"total_period", relations.total_period[e]},
                      {"through_period", through},
                      {"through_samples", relations.through_samples[e]},
                      {"self_period", relations.self_period[e]},
                      {"no_caller_period", relations.no_caller_period[e]},
                      {"callers", list(relations.callers)},
                      {"callees", list(relations.callees)}});
  }
  j["events"] = events;
  out << DumpVisibleJson(j, 1) << '\n';
}

}  // namespace tprof
