#include "report/csv_report.h"

#include <cstdio>
#include <string>
#include <vector>

#include "report/text_report.h"

namespace tprof {
namespace {

std::string Field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string quoted = "\"";
  for (char c : s) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

// Whole numbers (counter deltas) exactly, fractions to 10 significant digits.
std::string Number(double v) {
  char buf[64];
  if (v == static_cast<double>(static_cast<long long>(v)) && v < 9e15 && v > -9e15)
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
  else
    std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

void WriteCsvLine(const std::vector<std::string>& fields, std::ostream& out) {
  for (size_t i = 0; i < fields.size(); ++i) out << (i ? "," : "") << Field(fields[i]);
  out << '\n';
}

}  // namespace

void RenderReportCsv(const ReportTableView& view, std::ostream& out) {
  const ReportTable& table = *view.table;
  const auto& metrics = view.metrics->columns();
  std::vector<std::string> header;
  for (SortKey k : table.sort) header.push_back(SortKeyName(k));
  for (size_t e = 0; e < table.events.size(); ++e) {
    if (!table.IsSampled(e)) continue;
    const std::string& n = table.events[e].name;
    for (const char* f : {"self_percent", "self_samples", "self_period", "total_percent",
                          "total_samples", "total_period"})
      header.push_back(n + ":" + f);
  }
  for (const ReadGroup& g : table.groups) {
    const std::string& leader = table.events[g.leader].name;
    for (uint32_t m : g.members) header.push_back("delta:" + table.events[m].name);
    header.push_back(leader + ":windows_credited");
    header.push_back(leader + ":windows_discarded");
  }
  for (const MetricColumn& c : metrics) {
    std::string name = c.name + (c.source == MetricSource::kSampledPeriods ? "[s]" : "[g]");
    header.push_back(name);
    header.push_back(name + ":low_confidence");
    header.push_back(name + ":ci95_low");
    header.push_back(name + ":ci95_high");
    header.push_back(name + ":bias");  // empty, or the reason the value may lie outside it
  }
  WriteCsvLine(header, out);
  for (const ReportRow* row : VisibleRows(view)) {
    std::vector<std::string> f = row->keys;
    for (size_t e = 0; e < table.events.size(); ++e) {
      if (!table.IsSampled(e)) continue;
      f.push_back(Number(Percent(row->self_period[e], table.total_period[e])));
      f.push_back(std::to_string(row->self_samples[e]));
      f.push_back(std::to_string(row->self_period[e]));
      f.push_back(Number(Percent(row->total_period[e], table.total_period[e])));
      f.push_back(std::to_string(row->total_samples[e]));
      f.push_back(std::to_string(row->total_period[e]));
    }
    for (size_t g = 0; g < table.groups.size(); ++g) {
      for (double d : row->groups[g].deltas) f.push_back(Number(d));
      f.push_back(std::to_string(row->groups[g].windows_credited));
      f.push_back(std::to_string(row->groups[g].windows_discarded));
    }
    for (size_t c = 0; c < metrics.size(); ++c) {
      MetricValue v = view.metrics->Evaluate(c, table, *row, view.children);
      f.push_back(v.value ? Number(*v.value) : "");
      f.push_back(v.low_confidence ? "1" : "0");
      const bool interval = v.value && v.half_width;
      f.push_back(interval ? Number(*v.value - *v.half_width) : "");
      f.push_back(interval ? Number(*v.value + *v.half_width) : "");
      f.push_back(v.bias ? v.bias->reason : "");
    }
    WriteCsvLine(f, out);
  }
}

void RenderTimelineCsv(const TimelineView& view, std::ostream& out) {
  std::vector<std::string> header = {"start_s", "end_s",  "event",   "function", "module",
                                     "command", "period", "samples", "percent"};
  for (size_t m = 0; m < view.metric_names.size(); ++m) {
    const std::string name = TimelineMetricTitle(view, m);
    header.push_back(name);
    header.push_back(name + ":ci95_low");
    header.push_back(name + ":ci95_high");
    header.push_back(name + ":bias");
  }
  WriteCsvLine(header, out);
  const std::string& ranking = view.events[view.ranking_event].name;
  for (const TimelinePoint& point : view.points) {
    const std::string start = Number(static_cast<double>(point.start_ns) / 1e9),
                      end = Number(static_cast<double>(point.end_ns) / 1e9);
    for (size_t e = 0; e < view.events.size(); ++e) {
      std::vector<std::string> f = {start,
                                    end,
                                    view.events[e].name,
                                    "",
                                    "",
                                    "",
                                    Number(static_cast<double>(point.period[e])),
                                    Number(static_cast<double>(point.samples[e])),
                                    point.period[e] ? "100" : "0"};
      for (const MetricValue& v : point.metrics) {
        f.push_back(v.value ? Number(*v.value) : "");
        f.push_back(v.value && v.half_width ? Number(*v.value - *v.half_width) : "");
        f.push_back(v.value && v.half_width ? Number(*v.value + *v.half_width) : "");
        f.push_back(v.bias ? v.bias->reason : "");
      }
      WriteCsvLine(f, out);
    }
    for (const TimelineFunction& function : point.top)
      WriteCsvLine({start, end, ranking, function.function, function.module, function.command,
                    Number(static_cast<double>(function.period)),
                    Number(static_cast<double>(function.samples)), Number(function.percent)},
                   out);
  }
}

void RenderCallRelationsCsv(const CallRelations& relations, std::ostream& out) {
  WriteCsvLine({"relation", "event", "function", "module", "period", "samples", "percent"}, out);
  for (size_t e = 0; e < relations.events.size(); ++e) {
    const uint64_t through = relations.through_period[e];
    for (const auto& [kind, list] :
         {std::pair{"caller", &relations.callers}, std::pair{"callee", &relations.callees}})
      for (const Neighbour& n : *list)
        if (n.samples[e])
          WriteCsvLine(
              {kind, relations.events[e].name, n.function, n.module, std::to_string(n.period[e]),
               std::to_string(n.samples[e]), Number(Percent(n.period[e], through))},
              out);
  }
}

}  // namespace tprof
