#include "views/function_diff.h"

#include <tuple>

#include "core/analysis/cost_split.h"
#include "core/base/visible_text.h"
#include "core/model/event_selection.h"

namespace tprof {

Result<FunctionDiffOutcome> WriteFunctionDiff(const FunctionDiffRequest& request, std::ostream& out,
                                              const ViewMessages& messages) {
  const std::vector<std::string>& old_files = request.old_files;
  const std::vector<std::string>& new_files = request.new_files;
  ProfileLoadOptions load_options = request.load;
  load_options.messages = messages;
  FunctionDiffOutcome outcome;
  std::vector<FunctionTotals> old_side, new_side;
  DiffReportInputs inputs;
  inputs.old_files = old_files;
  inputs.new_files = new_files;
  inputs.functions = load_options.inline_mode;
  // Every input is opened before any is read: kernel work is credited to user functions on
  // both sides or on neither, or a function would gain its kernel work on one side only.
  struct Named {
    const char* label;  // "old" or "new"
    std::vector<FunctionTotals>* side;
    std::string path;
    size_t run = 0;  // its place among its side's files
  };
  std::vector<Named> names;
  std::vector<ProfileToCompare> inputs_to_read;
  std::string without_user_context;
  for (auto [files, label, side] :
       {std::tuple{&old_files, "old", &old_side}, std::tuple{&new_files, "new", &new_side}})
    for (size_t run = 0; run < files->size(); ++run) {
      const std::string& path = (*files)[run];
      auto opened = ProfileToCompare::Open(path, load_options);
      if (!opened.ok()) return opened.error();
      if (side == &old_side)
        opened->LimitToTime("--old-time", request.old_time);
      else
        opened->LimitToTime("--new-time", request.new_time);
      if (without_user_context.empty() && !opened->records_user_context())
        without_user_context = path;
      names.push_back({label, side, path, run});
      inputs_to_read.push_back(std::move(opened).value());
    }
  load_options.credit_kernel_to_user = !request.kernel_rows && without_user_context.empty();
  inputs.kernel_work =
      request.kernel_rows ? "kernel functions are rows (--kernel-rows)"
      : load_options.credit_kernel_to_user
          ? "credited to the user function that entered the kernel, on both sides "
            "(--kernel-rows: kernel functions as rows)"
          : "kernel functions are rows on both sides: " + without_user_context +
                " records neither callchains nor the user pc, so its kernel samples cannot be "
                "credited to user functions (record with -g, or with tprof record)";
  inputs.kernel_credited = load_options.credit_kernel_to_user;
  std::vector<Result<LoadedFunctionProfile>> read =
      LoadSideBySide(std::move(inputs_to_read), load_options);
  for (size_t i = 0; i < read.size(); ++i) {
    const Named& input = names[i];
    Result<LoadedFunctionProfile>& loaded = read[i];
    if (!loaded.ok()) return loaded.error();
    // The output names each input with the range it was read in.
    if (!loaded->seconds.empty()) {
      std::vector<std::string>& files =
          input.side == &old_side ? inputs.old_files : inputs.new_files;
      const std::string range = input.side == &old_side ? "--old-time " + request.old_time
                                                        : "--new-time " + request.new_time;
      if (input.run < files.size())
        files[input.run] = input.path + " (" + range + ": " + loaded->seconds + ")";
    }
    messages.InputWarning(input.path, loaded->warning);
    if (!loaded->incomplete.empty())
      inputs.incomplete.push_back({input.label, input.path, loaded->incomplete});
    if (loaded->kernel_credit) inputs.kernel_samples_credited += loaded->kernel_credit->credited();
    input.side->push_back(SumByFunction(loaded->profile, !request.ignore_module));
    if (loaded->function_table)
      input.side->back().window_ratios =
          SumWindowRatios(*loaded->function_table, !request.ignore_module);
  }
  // A gate is for scripts, which do not read warnings: over an incomplete profile it fails
  // with a status of its own unless the user accepts such inputs.
  inputs.gate_withheld =
      !request.thresholds.empty() && !inputs.incomplete.empty() && !request.allow_incomplete;

  auto diff = DiffProfiles(old_side, new_side, request.diff);
  if (!diff.ok()) {
    // A --normalize event neither side has is the command line's fault.
    if (request.diff.normalize == Normalization::kEvent &&
        diff.error().message().rfind("--normalize", 0) == 0) {
      outcome.usage_error = diff.error().message();
      return outcome;
    }
    return diff.error();
  }
  auto verdict = EvaluateGate(*diff, request.thresholds);
  if (!verdict.ok()) {
    outcome.usage_error = "--fail-if " + verdict.error().message();
    return outcome;
  }
  // --event shows that event alone; the gate above judged each threshold's own event.
  if (!request.event.empty()) {
    std::vector<std::string> names;
    for (const EventDiff& event : diff->events) names.push_back(event.name);
    auto selected = SelectEvent(names, request.event);
    if (!selected.ok()) return selected.error().WithContext("the diff");
    EventDiff shown = std::move(diff->events[*selected]);
    diff->events = {std::move(shown)};
  }
  if (!request.ignore_module && !diff->events.empty())
    if (auto rename = DetectModuleRename(diff->events.front()))
      messages.Note(std::to_string(rename->gone_or_new) + " of " + std::to_string(rename->rows) +
                    " functions are gone or new, and " + std::to_string(rename->paired) +
                    " gone ones reappear under their name in another module (" +
                    rename->old_module + " -> " + rename->new_module +
                    "): renamed between builds? --ignore-module matches functions by name "
                    "alone");

  if (request.json) {
    nlohmann::ordered_json json = DiffToJson(*diff, *verdict, inputs);
    out << DumpVisibleJson(json, 2) << '\n';
  } else {
    VisibleTextStream visible(out);  // names are bytes (core/base/visible_text.h)
    RenderDiffText(*diff, *verdict, inputs, request.report, visible);
  }
  if (!inputs.incomplete.empty()) {
    const IncompleteInput& first = inputs.incomplete.front();
    const size_t more = inputs.incomplete.size() - 1;
    outcome.incomplete = first.side + " profile " + first.file + " is incomplete (" + first.reason +
                         ")" + (more ? " and " + std::to_string(more) + " more" : "");
  }
  outcome.gate_withheld = inputs.gate_withheld;
  for (const GateCheck& check : verdict->checks)
    if (check.tripped) outcome.regressions.push_back(check.explanation);
  return outcome;
}

}  // namespace tprof
