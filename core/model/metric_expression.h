// Arithmetic over event counts, as metric formulas are written in perf's and Arm's metric
// tables: numbers, event names, + - * /, parentheses, and max/min/abs. A formula whose value
// cannot be known (a zero denominator, an event that was not counted) evaluates to nothing, shown
// as n/a, never inf or nan.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/base/error.h"

namespace tprof {

class MetricExpression {
 public:
  // Event names are letters, digits and _ . # :; a '-' inside a name is written '\-' (as perf
  // does: topdown\-fe\-bound), since a bare '-' is subtraction.
  static Result<MetricExpression> Parse(std::string_view text);

  using Lookup = std::function<std::optional<double>(const std::string& name)>;
  std::optional<double> Evaluate(const Lookup& lookup) const;

  // The names the formula reads, each once, in order of first use.
  const std::vector<std::string>& variables() const { return variables_; }
  const std::string& text() const { return text_; }

  struct Node;

 private:
  std::shared_ptr<const Node> root_;
  std::vector<std::string> variables_;
  std::string text_;
};

// A named metric as metric tables define it: what core/metrics' tables give and core/analysis's
// derived metrics evaluate, so it sits here, below both.
struct MetricFormula {
  std::string name;     // "IPC", "frontend_bound", ...
  std::string formula;  // MetricExpression syntax over event names
  std::string unit;     // "ratio", "%", "MPKI", ...
  // Constants a formula may name (a metric table's "#slots").
  std::vector<std::pair<std::string, double>> constants;
};

}  // namespace tprof
