#include "report/topdown_report.h"

#include <cstdio>
#include <nlohmann/json.hpp>

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
      for (const MetricResult& r : results) {
        nlohmann::json m = {{"metric", r.metric->name},
                            {"unit", r.metric->unit},
                            {"formula", r.metric->formula},
                            {"events", r.events},
                            {"running_percent", r.running_percent}};
        m["value"] = r.value ? nlohmann::json(*r.value) : nlohmann::json(nullptr);
        if (!r.note.empty()) m["note"] = r.note;
        metrics.push_back(std::move(m));
      }
      json["metrics"] = std::move(metrics);
      out << json.dump(2) << '\n';
      return;
    }
    case TopdownFormat::kCsv:
      out << "metric,value,unit,running_percent,events\n";
      for (const MetricResult& r : results)
        out << r.metric->name << ',' << (r.value ? FormatValue(r) : "") << ',' << r.metric->unit
            << ',' << r.running_percent << ',' << Join(r.events, ";") << '\n';
      return;
    case TopdownFormat::kText: {
      out << "# tprof topdown: " << table.title << " (" << table.name << ")\n";
      out << "# formulas: " << table.source << '\n';
      out << "# counts: " << input_description << '\n';
      char line[512];
      std::snprintf(line, sizeof line, "%-26s %10s %-8s %8s  %s\n", "metric", "value", "unit",
                    "running", "events");
      out << line;
      for (const MetricResult& r : results) {
        char running[32];
        std::snprintf(running, sizeof running, "%.2f%%", r.running_percent);
        std::snprintf(line, sizeof line, "%-26s %10s %-8s %8s  %s%s\n", r.metric->name.c_str(),
                      FormatValue(r).c_str(), r.metric->unit.c_str(), r.value ? running : "",
                      Join(r.events, ",").c_str(),
                      r.note.empty() ? "" : ("  (" + r.note + ")").c_str());
        out << line;
      }
      return;
    }
  }
}

}  // namespace tprof
