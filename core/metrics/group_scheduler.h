// Places the events of the selected metrics into groups that fit the PMU: each metric's events
// share one group (a metric is evaluated inside the group that measured it), no group needs more
// general-purpose counters than the CPU has, and fixed-function events ride along for free.
#pragma once

#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/metrics/metric_table.h"

namespace tprof {

struct ScheduledGroup {
  std::vector<std::string> events;  // leader first
  std::vector<const Metric*> metrics;
};

Result<std::vector<ScheduledGroup>> ScheduleGroups(const MetricTable& table,
                                                   const std::vector<const Metric*>& metrics,
                                                   uint32_t general_counters);

}  // namespace tprof
