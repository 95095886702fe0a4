// What this machine's core PMU offers, found out by trying it: whether it counts at all, and how
// many general-purpose counters a group may hold. Top-down needs both before it schedules a table.
#pragma once

#include <cstdint>
#include <string>

#include "core/base/error.h"

namespace tprof {

// One try at counting cycles: an error that says plainly when the machine has no hardware PMU
// (a virtual machine), the kernel's reason otherwise.
Status ProbeCorePmu();

// How many of `raw_code` (a general-purpose event, named `name`) one group can count at once,
// as perf and Arm's tool learn it: a group bigger than the PMU opens but never runs. 0 when
// not even one counts.
uint32_t CountGeneralCounters(uint64_t raw_code, const std::string& name);

}  // namespace tprof
