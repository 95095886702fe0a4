#include "report/topdown_report.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/base/visible_text.h"

namespace tprof {
namespace {

std::string Join(const std::vector<std::string>& items, const char* separator) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
}

std::string FormatValue(const MetricResult& r) {
  if (!r.value) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f", *r.value);
  return buf;
}

nlohmann::json MetricJson(const MetricResult& r) {
  nlohmann::json m = {{"metric", r.metric->name},
                      {"unit", r.metric->unit},
                      {"formula", r.metric->formula},
                      {"events", r.events},
                      {"running_percent", r.running_percent},
                      {"cross_group", r.cross_group}};
  m["value"] = r.value ? nlohmann::json(*r.value) : nlohmann::json(nullptr);
  if (!r.note.empty()) m["note"] = r.note;
  return m;
}

std::string CsvRow(const MetricResult& r) {
  std::ostringstream row;
  row << r.metric->name << ',' << (r.value ? FormatValue(r) : "") << ',' << r.metric->unit << ','
      << r.running_percent << ',' << Join(r.events, ";") << ',' << (r.cross_group ? 1 : 0);
  return row.str();
}

constexpr const char* kCsvColumns = "metric,value,unit,running_percent,events,cross_group";
// Under the text table when a value is marked.
constexpr const char* kCrossGroupNote =
    "# *: computed across groups (no one group counted all its events; each came from the group "
    "that counted it longest), so its counts cover different time slices";

// One text row: metric, value, unit, running share, events (and why a value is n/a).
std::string TextRow(const MetricResult& r) {
  char running[32];
  std::snprintf(running, sizeof running, "%.2f%%", r.running_percent);
  char line[512];
  const std::string value = FormatValue(r) + (r.value && r.cross_group ? "*" : "");
  std::snprintf(line, sizeof line, "%-26s %10s %-8s %8s  %s%s", r.metric->name.c_str(),
                value.c_str(), r.metric->unit.c_str(), r.value ? running : "",
                Join(r.events, ",").c_str(), r.note.empty() ? "" : ("  (" + r.note + ")").c_str());
  return line;
}

std::string TextHeaderRow() {
  char line[128];
  std::snprintf(line, sizeof line, "%-26s %10s %-8s %8s  %s", "metric", "value", "unit", "running",
                "events");
  return line;
}

}  // namespace

void RenderTopdown(const MetricTable& table, const std::string& input_description,
                   const std::vector<MetricResult>& results, TopdownFormat format,
                   std::ostream& out) {
  switch (format) {
    case TopdownFormat::kJson: {
      nlohmann::json json;
      json["cpu"] = table.name;
      json["formulas"] = table.source;
      json["input"] = input_description;
      nlohmann::json metrics = nlohmann::json::array();
      for (const MetricResult& r : results) metrics.push_back(MetricJson(r));
      json["metrics"] = std::move(metrics);
      out << DumpVisibleJson(json, 2) << '\n';
      return;
    }
    case TopdownFormat::kCsv:
      out << kCsvColumns << '\n';
      for (const MetricResult& r : results) out << CsvRow(r) << '\n';
      return;
    case TopdownFormat::kText: {
      out << "# tprof topdown: " << table.title << " (" << table.name << ")\n";
      out << "# formulas: " << table.source << '\n';
      out << "# counts: " << input_description << '\n';
      out << TextHeaderRow() << '\n';
      for (const MetricResult& r : results) out << TextRow(r) << '\n';
      if (std::any_of(results.begin(), results.end(),
                      [](const MetricResult& r) { return r.value && r.cross_group; }))
        out << kCrossGroupNote << '\n';
      return;
    }
  }
}

void TopdownIntervalWriter::Header() {
  if (header_written_) return;
  header_written_ = true;
  switch (format_) {
    case TopdownFormat::kJson:
      return;  // every line describes itself
    case TopdownFormat::kCsv:
      out_ << "time," << kCsvColumns << '\n';
      return;
    case TopdownFormat::kText:
      out_ << "# tprof topdown: " << table_.title << " (" << table_.name << ")\n";
      out_ << "# formulas: " << table_.source << '\n';
      out_ << "# counts: " << description_ << '\n';
      out_ << "#" << std::string(14, ' ') << "time " << TextHeaderRow() << '\n';
      return;
  }
}

void TopdownIntervalWriter::Interval(double seconds, const std::vector<MetricResult>& results) {
  Header();
  char time[32];
  switch (format_) {
    case TopdownFormat::kJson: {
      nlohmann::json json;
      json["interval"] = seconds;
      json["cpu"] = table_.name;
      json["input"] = description_;
      nlohmann::json metrics = nlohmann::json::array();
      for (const MetricResult& r : results) metrics.push_back(MetricJson(r));
      json["metrics"] = std::move(metrics);
      out_ << DumpVisibleJson(json) << '\n';
      break;
    }
    case TopdownFormat::kCsv:
      std::snprintf(time, sizeof time, "%.9f", seconds);
      for (const MetricResult& r : results) out_ << time << ',' << CsvRow(r) << '\n';
      break;
    case TopdownFormat::kText:
      std::snprintf(time, sizeof time, "%19.9f ", seconds);  // as perf stat -I stamps its lines
      for (const MetricResult& r : results) out_ << time << TextRow(r) << '\n';
      break;
  }
  out_.flush();  // a reader watching the output sees each interval when it ends
}

void TopdownIntervalWriter::Summary(const std::vector<MetricResult>& results) {
  Header();
  switch (format_) {
    case TopdownFormat::kJson: {
      nlohmann::json json;
      json["interval"] = nullptr;
      json["summary"] = true;
      json["cpu"] = table_.name;
      json["input"] = description_;
      nlohmann::json metrics = nlohmann::json::array();
      for (const MetricResult& r : results) metrics.push_back(MetricJson(r));
      json["metrics"] = std::move(metrics);
      out_ << DumpVisibleJson(json) << '\n';
      return;
    }
    case TopdownFormat::kCsv:
      for (const MetricResult& r : results) out_ << ',' << CsvRow(r) << '\n';
      return;
    case TopdownFormat::kText:
      out_ << '\n';
      RenderTopdown(table_, description_ + ", whole run", results, format_, out_);
      return;
  }
}

}  // namespace tprof
