// UnwindStatistics as JSON: in `tprof report --json` ("unwinding") and in the trailer of a
// .tprof recorded with --call-graph dwarf, so that its report tells how far stacks were walked
// as a perf.data file's does.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>

#include "core/model/user_stack_unwinder.h"

namespace tprof {

// null when no sample carried a stack copy.
nlohmann::json UnwindStatisticsJson(const UnwindStatistics& stats);
// nullopt when `j` is null or not statistics; unknown causes are skipped.
std::optional<UnwindStatistics> UnwindStatisticsFromJson(const nlohmann::json& j);

}  // namespace tprof
