// Renders evaluated metrics: a text table, JSON or CSV.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "core/metrics/metric_table.h"
#include "core/metrics/topdown_evaluator.h"

namespace tprof {

enum class TopdownFormat { kText, kJson, kCsv };

void RenderTopdown(const MetricTable& table, const std::string& input_description,
                   const std::vector<MetricResult>& results, TopdownFormat format,
                   std::ostream& out);

// perf stat -I's form: every interval's metrics stamped with the seconds since counting began.
// Text and CSV: one header, then one row per metric and interval with the time in the first
// column. JSON: one object per interval and line (JSON Lines, as perf stat -j -I writes):
// {"interval": seconds, "cpu", "input", "metrics": [...]} (metrics as RenderTopdown's). The summary
// over the whole run, when asked for, follows: text as RenderTopdown's table, CSV as rows with an
// empty time, JSON as one more line with "interval": null and "summary": true.
class TopdownIntervalWriter {
 public:
  TopdownIntervalWriter(const MetricTable& table, std::string input_description,
                        TopdownFormat format, std::ostream& out)
      : table_(table), description_(std::move(input_description)), format_(format), out_(out) {}
  void Interval(double seconds, const std::vector<MetricResult>& results);
  void Summary(const std::vector<MetricResult>& results);

 private:
  void Header();
  const MetricTable& table_;
  std::string description_;
  TopdownFormat format_;
  std::ostream& out_;
  bool header_written_ = false;
};

}  // namespace tprof
