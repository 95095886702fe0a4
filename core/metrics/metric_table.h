// Metric tables: for one CPU, the events it counts top-down metrics with (name and raw code) and
// the metric formulas, grouped as the vendor or perf publishes them ("l1" for level 1).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/error.h"
#include "core/model/profile.h"

namespace tprof {

struct MetricEvent {
  std::string name;   // as the formulas name it, e.g. CPU_CYCLES
  uint64_t code = 0;  // raw PMU code (PERF_TYPE_RAW config)
  // Other names perf prints for it (the vendor's, e.g. TOPDOWN.SLOTS for slots); perf's
  // generic names (cycles, instructions) and raw spellings are recognised by their code.
  std::vector<std::string> aliases = {};
};

struct Metric {
  std::string name;
  std::string formula;              // core/model/metric_expression syntax
  std::string unit;                 // "%", "per 1k instructions", "ratio", ...
  std::vector<std::string> groups;  // metric groups it belongs to: "l1", "TLB", ...
};

struct MetricTable {
  std::string name;  // canonical: neoverse-n2, neoverse-n2-r0p3, ...
  std::string title;
  std::string source;  // where the formulas come from
  // Arm MIDR match: implementer, part number and the revision range (variant << 4 | revision).
  uint32_t midr_implementer = 0;
  uint32_t midr_part = 0;
  uint32_t min_revision = 0;
  uint32_t max_revision = 0xff;
  uint32_t slots = 0;
  std::vector<MetricEvent> events;
  std::vector<Metric> metrics;
  // How perf schedules the level-1 events into groups; each metric is measured inside one.
  std::vector<std::vector<std::string>> event_groups;
  // Events counted by fixed-function counters: they take no general-purpose counter. The first
  // of them in a group must lead it when `fixed_leads` (Intel's slots).
  std::vector<std::string> fixed_events;
  bool fixed_leads = false;
  // x86: CPUID family and models this table covers.
  uint32_t x86_family = 0;
  std::vector<uint32_t> x86_models;
  std::string x86_vendor;
  // Set when the CPU cannot measure the top-down levels at all: why, for -M l1/l2 to say so.
  std::string no_levels_reason;

  // By name or alias, case-insensitive.
  const MetricEvent* FindEvent(const std::string& name) const;
  const MetricEvent* FindEventByCode(uint64_t code) const;
  // The metrics selected by -M: levels ("l1") and group names, case-insensitive.
  Result<std::vector<const Metric*>> Select(const std::string& selection) const;
  std::vector<std::string> GroupNames() const;
};

const std::vector<MetricTable>& BuiltinMetricTables();

// Finds a table by name ("neoverse-n2", "neoverse-n2-r0p3", "n2") or by an Arm MIDR value
// ("0x410fd490"): the MIDR picks the revision-specific table.
Result<const MetricTable*> FindMetricTable(const std::string& name_or_midr,
                                           const std::vector<MetricTable>& tables);

// The table for a detected CPU: by MIDR on Arm, by CPUID vendor, family and model on x86.
Result<const MetricTable*> TableForCpu(const CpuDescription& cpu,
                                       const std::vector<MetricTable>& tables);

// Reads a metric table from JSON in the shape of Arm's telemetry specifications (the files Arm
// publishes per Neoverse core): product_configuration, events (with their codes), metrics (with
// their formulas and units), and groups of metrics. An Arm file's stage 1 of the top-down
// methodology becomes "l1". tprof's own tables (core/metrics/tables/, built in) add a "tprof"
// object: the table's name and source, the MIDR revisions or x86 CPUs it covers, and how its
// events are grouped onto counters. `origin` names the text in errors.
Result<MetricTable> ParseMetricTable(std::string_view text, const std::string& origin);
// ParseMetricTable of a file (`--spec FILE`).
Result<MetricTable> LoadArmTelemetrySpec(const std::string& path);

}  // namespace tprof
