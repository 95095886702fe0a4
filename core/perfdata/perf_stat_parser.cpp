#include "core/perfdata/perf_stat_parser.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>

namespace tprof {
namespace {

std::optional<double> ParseValue(const std::string& text) {
  if (text.empty() || text[0] == '<') return std::nullopt;  // <not counted>, <not supported>
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// Appends a row, starting a new group when the run time or running percentage changes.
void AddRow(CounterReport* report, CounterValue value, uint64_t run_time, double percent) {
  if (report->groups.empty() || report->groups.back().run_time != run_time ||
      report->groups.back().running_percent != percent) {
    CounterGroup group;
    group.run_time = run_time;
    group.running_percent = percent;
    report->groups.push_back(group);
  }
  report->groups.back().counters.push_back(std::move(value));
}

}  // namespace

Result<CounterReport> ParsePerfStatCsv(std::string_view text) {
  CounterReport report;
  report.format = "perf stat CSV";
  std::istringstream lines{std::string(text)};
  std::string line;
  size_t number = 0;
  while (std::getline(lines, line)) {
    ++number;
    if (line.empty() || line[0] == '#') continue;
    // An event spelled with its PMU's terms keeps its commas: perf prints
    // "cpu/de_no_dispatch_per_slot.no_ops_from_frontend,cmask=0x6/" as it is in the event
    // field, so a field that opens a "pmu/" runs to the field that closes it.
    std::vector<std::string> fields;
    std::stringstream in(line);
    std::string field;
    bool open_pmu = false;
    while (std::getline(in, field, ',')) {
      if (open_pmu)
        fields.back() += "," + field;
      else
        fields.push_back(field);
      if (std::count(field.begin(), field.end(), '/') % 2 == 1) open_pmu = !open_pmu;
    }
    // value,unit,event,run_time,percentage[,metric_value,metric_unit]
    if (fields.size() < 5)
      return Error("line " + std::to_string(number) + ": expected 'value,unit,event,run time," +
                   "percentage' (perf stat -x,), got '" + line + "'");
    CounterValue value{fields[2], ParseValue(fields[0])};
    uint64_t run_time = std::strtoull(fields[3].c_str(), nullptr, 10);
    double percent = std::strtod(fields[4].c_str(), nullptr);
    if (run_time == 0) value.value.reset();  // a group that never ran
    AddRow(&report, std::move(value), run_time, percent);
  }
  if (report.groups.empty()) return Error("no counter rows (is this perf stat -x, output?)");
  return report;
}

Result<CounterReport> ParsePerfStatJson(std::string_view text) {
  CounterReport report;
  report.format = "perf stat JSON";
  std::istringstream lines{std::string(text)};
  std::string line;
  size_t number = 0;
  while (std::getline(lines, line)) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto row = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (row.is_discarded() || !row.is_object())
      return Error("line " + std::to_string(number) + ": not a JSON object");
    if (!row.contains("event")) continue;  // summary lines
    try {
      CounterValue value;
      value.event = row.at("event").get<std::string>();
      const auto& v = row.at("counter-value");
      value.value =
          v.is_string() ? ParseValue(v.get<std::string>()) : std::optional<double>(v.get<double>());
      uint64_t run_time = row.value("event-runtime", uint64_t{0});
      double percent = row.value("pcnt-running", 100.0);
      if (run_time == 0) value.value.reset();
      AddRow(&report, std::move(value), run_time, percent);
    } catch (const nlohmann::json::exception& e) {
      return Error("line " + std::to_string(number) + ": " + e.what());
    }
  }
  if (report.groups.empty()) return Error("no counter rows (is this perf stat -j output?)");
  return report;
}

}  // namespace tprof
