// Renders evaluated metrics: a text table, JSON or CSV.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "pmu/metric_table.h"
#include "pmu/topdown_evaluator.h"

namespace tprof {

enum class TopdownFormat { kText, kJson, kCsv };

void RenderTopdown(const MetricTable& table, const std::string& input_description,
                   const std::vector<MetricResult>& results, TopdownFormat format,
                   std::ostream& out);

}  // namespace tprof
