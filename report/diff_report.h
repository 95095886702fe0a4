// Rendering of a ProfileDiff and its gate verdict: a text table per event whose header states
// every column's formula, and JSON for CI (schema: docs/diff-schema.md).
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "core/analysis/function_attribution.h"
#include "core/analysis/profile_diff.h"
#include "core/analysis/regression_gate.h"

namespace tprof {

// A profile that cannot stand for its run: cut short, a .partial, no samples.
struct IncompleteInput {
  std::string side;  // "old" or "new"
  std::string file;
  std::string reason;
};

struct DiffReportInputs {
  std::vector<std::string> old_files, new_files;
  InlineMode functions = InlineMode::kInnermost;  // what a row is (--no-inline: physical)
  std::vector<IncompleteInput> incomplete;
  // The gate did not judge because of them (they were not allowed with --allow-incomplete).
  bool gate_withheld = false;
  // How kernel samples count: credited to user functions on both sides, or kernel rows (and
  // why), in one line.
  std::string kernel_work;
  bool kernel_credited = false;
  uint64_t kernel_samples_credited = 0;  // over every input
};

struct DiffReportOptions {
  size_t max_rows = 30;  // per event, the largest changes first; 0: every function
};

// The formulas of the columns, as the text header and `tprof diff --help` state them.
extern const char* const kDiffColumnHelp;
// What each --normalize mode does and what it hides.
extern const char* const kDiffNormalizeHelp;

void RenderDiffText(const ProfileDiff& diff, const GateVerdict& verdict,
                    const DiffReportInputs& inputs, const DiffReportOptions& options,
                    std::ostream& out);

// Keys in the order docs/diff-schema.md lists them.
nlohmann::ordered_json DiffToJson(const ProfileDiff& diff, const GateVerdict& verdict,
                                  const DiffReportInputs& inputs);

}  // namespace tprof
