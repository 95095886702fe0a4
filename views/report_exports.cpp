#include "views/report_exports.h"

#include <fstream>
#include <memory>

#include "core/analysis/annotation.h"
#include "core/analysis/call_tree.h"
#include "core/analysis/instruction_profile.h"
#include "core/analysis/stack_profile.h"
#include "core/base/visible_text.h"
#include "core/model/event_selection.h"
#include "report/annotate_report.h"
#include "report/folded_stacks.h"
#include "report/pprof_exporter.h"
#include "report/speedscope_exporter.h"
#include "report/stackcollapse_folded.h"

namespace tprof {
namespace {

Status WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Error(path + ": cannot create the file");
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) return Error(path + ": write failed");
  return {};
}

}  // namespace

Result<ViewOutcome> WriteReportExports(const ReportExportRequest& options, const std::string& input,
                                       ProfileSource& source, FrameResolver& resolver,
                                       const ModuleOpener& open_module, std::ostream& out,
                                       const ViewMessages& messages) {
  const std::vector<EventDesc>& events = source.events();
  RecordTee fan_out;  // one read serves every output

  size_t folded_event = 0;
  std::unique_ptr<CallTreeBuilder> tree;
  std::unique_ptr<StackcollapseFolder> stackcollapse;
  const bool stackcollapse_style = options.folded_style == "stackcollapse";
  if (options.folded) {
    if (!options.event.empty()) {
      auto selected = SelectEvent(events, options.event);
      if (!selected.ok()) return selected.error().WithContext(input);
      folded_event = *selected;
    } else if (events.size() > 1) {
      messages.Note("folding event '" + events[0].name + "'; --event chooses another");
    }
  }
  if (options.folded && stackcollapse_style) {
    StackcollapseOptions sc;
    if (options.folded_prefix == "pid") sc.root = StackcollapseOptions::Root::kPid;
    if (options.folded_prefix == "tid") sc.root = StackcollapseOptions::Root::kTid;
    sc.mark_kernel = options.folded_marks == "kernel" || options.folded_marks == "all";
    sc.mark_jit = options.folded_marks == "jit" || options.folded_marks == "all";
    sc.addresses = options.folded_addrs;
    sc.event = static_cast<uint32_t>(folded_event);
    sc.pids_unknown = source.metadata().pids_unknown;
    sc.expand_inlined = !options.no_inline;
    stackcollapse = std::make_unique<StackcollapseFolder>(
        resolver, dynamic_cast<const NamedFrameTable*>(source.embedded_frames()), sc);
    fan_out.Add(*stackcollapse);
  } else if (options.folded) {
    CallTreeOptions tree_options;
    tree_options.expand_inlined = !options.no_inline;
    if (options.folded_prefix == "comm") tree_options.roots = CallTreeOptions::Roots::kProcess;
    if (options.folded_prefix == "pid") tree_options.roots = CallTreeOptions::Roots::kPid;
    if (options.folded_prefix == "tid") tree_options.roots = CallTreeOptions::Roots::kThread;
    tree = std::make_unique<CallTreeBuilder>(events, resolver, tree_options);
    fan_out.Add(*tree);
  }
  std::unique_ptr<StackProfileBuilder> stacks;
  if (!options.pprof_path.empty() || !options.speedscope_path.empty()) {
    stacks = std::make_unique<StackProfileBuilder>(events, resolver);
    fan_out.Add(*stacks);
  }
  std::unique_ptr<InstructionProfileBuilder> instructions;
  if (!options.annotate.empty()) {
    instructions = std::make_unique<InstructionProfileBuilder>(
        events, resolver, options.annotate,
        options.no_inline ? InlineMode::kPhysical : InlineMode::kInnermost);
    fan_out.Add(*instructions);
  }

  auto summary = source.ReadRecords(fan_out);
  if (!summary.ok()) return Error(input + ": " + summary.error().message());
  messages.InputWarning(input, summary->warning);

  if (tree) {
    FoldedOptions folded_options;
    folded_options.event = folded_event;
    folded_options.annotate = !options.no_marks;
    VisibleTextStream visible(out);  // names are bytes (core/base/visible_text.h)
    WriteFolded(tree->root(), folded_options, visible);
  }
  // The drop-in for stackcollapse-perf.pl passes bytes through as the script does.
  if (stackcollapse) stackcollapse->Render(out);
  if (stacks) {
    StackProfile profile = stacks->Finish();
    if (!options.pprof_path.empty()) {
      auto bytes = ExportPprof(source.metadata(), profile);
      if (!bytes.ok()) return bytes.error();
      Status written = WriteFile(options.pprof_path, *bytes);
      if (!written.ok()) return written.error();
      messages.Summary("wrote pprof profile " + options.pprof_path + ": " +
                       std::to_string(profile.stacks.size()) + " stacks, " +
                       std::to_string(profile.locations.size()) + " locations");
    }
    if (!options.speedscope_path.empty()) {
      Status written =
          WriteFile(options.speedscope_path, ExportSpeedscope(source.metadata(), profile));
      if (!written.ok()) return written.error();
      messages.Summary("wrote speedscope profile " + options.speedscope_path + ": " +
                       std::to_string(profile.stacks.size()) + " stacks");
    }
  }
  if (instructions) {
    InstructionProfile profile = instructions->Finish();
    if (profile.functions.empty())
      return Error(input + ": no sample fell in a function named '" + options.annotate + "'");
    // Gathered first (each binary's listing, then the samples placed on it), then formatted.
    SourceLines sources;
    std::vector<FunctionAnnotation> annotations;
    for (const FunctionSamples& function : profile.functions) {
      CodeListing listing;
      if (!function.file_offsets) {
        listing.unavailable = "no file behind these addresses (kernel or anonymous memory)";
      } else {
        std::vector<uint64_t> offsets;
        for (const auto& [offset, period] : function.period_by_offset) offsets.push_back(offset);
        const bool inlined = !function.inlined_into.empty();
        listing = ListFunction(open_module(function.module, function.build_id),
                               {inlined ? function.inlined_into_mangled : function.mangled,
                                inlined ? function.inlined_into : function.function},
                               offsets, sources);
      }
      annotations.push_back(AnnotateFunction(function, profile.events.size(), std::move(listing)));
    }
    VisibleTextStream visible(out);
    RenderAnnotation(profile, annotations, visible);
  }
  return ViewOutcome{summary->complete};
}

}  // namespace tprof
