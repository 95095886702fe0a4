#include "cmd/report_exports.h"

#include <fstream>
#include <iostream>
#include <memory>

#include "cmd/cli_support.h"
#include "core/call_tree.h"
#include "core/instruction_profile.h"
#include "core/stack_profile.h"
#include "report/pprof_exporter.h"
#include "report/speedscope_exporter.h"

namespace tprof {
namespace {

// Hands every record to several builders, so that one read serves every output.
class FanOutVisitor : public RecordVisitor {
 public:
  void Add(RecordVisitor* visitor) { visitors_.push_back(visitor); }
  void OnSample(const Sample& r) override {
    for (RecordVisitor* v : visitors_) v->OnSample(r);
  }
  void OnMmap(const MmapRecord& r) override {
    for (RecordVisitor* v : visitors_) v->OnMmap(r);
  }
  void OnComm(const CommRecord& r) override {
    for (RecordVisitor* v : visitors_) v->OnComm(r);
  }
  void OnTask(const TaskRecord& r) override {
    for (RecordVisitor* v : visitors_) v->OnTask(r);
  }
  void OnLost(const LostRecord& r) override {
    for (RecordVisitor* v : visitors_) v->OnLost(r);
  }
  void OnThrottle(const ThrottleRecord& r) override {
    for (RecordVisitor* v : visitors_) v->OnThrottle(r);
  }

 private:
  std::vector<RecordVisitor*> visitors_;
};

Status WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Error(path + ": cannot create the file");
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) return Error(path + ": write failed");
  return {};
}

// The index of the event named `name` (exactly, or without its modifiers), or -1.
int FindEvent(const std::vector<EventDesc>& events, const std::string& name) {
  for (size_t pass = 0; pass < 2; ++pass)
    for (size_t e = 0; e < events.size(); ++e) {
      const std::string& n = events[e].name;
      if (pass == 0 ? n == name : n.substr(0, n.find(':')) == name) return static_cast<int>(e);
    }
  return -1;
}

}  // namespace

void AddReportExportOptions(CLI::App& app, ReportExportOptions& options) {
  app.add_flag("--folded", options.folded,
               "Print folded stacks (FlameGraph's format: root first, ';'-separated, count last; "
               "kernel frames end in _[k], inlined ones in _[i]) instead of the table");
  app.add_option("--event", options.event,
                 "The event --folded counts and --flamegraph sizes frames by (default: the "
                 "first; cycles with --color ipc/cpi/stall)");
  app.add_option("--folded-prefix", options.folded_prefix,
                 "Root each folded stack at its process name, name-PID or name-PID/TID")
      ->check(CLI::IsMember({"none", "comm", "pid", "tid"}));
  app.add_flag("--no-marks", options.no_marks, "Folded stacks without the _[k] and _[i] marks");
  app.add_flag("--no-inline", options.no_inline,
               "Inlined calls are not functions of their own: table rows, --children, "
               "--callers/--callees, --annotate and folded stacks count them toward the "
               "out-of-line function they were inlined into");
  app.add_option("--pprof", options.pprof_path,
                 "Write a gzipped pprof profile (profile.proto) to this file");
  app.add_option("--speedscope", options.speedscope_path,
                 "Write a speedscope JSON profile to this file");
  app.add_option("--annotate", options.annotate,
                 "Show this function's instructions with their sample shares and source lines "
                 "(full or unqualified name, without parameters)");
}

int RunReportExports(const ReportExportOptions& options, const std::string& input,
                     ProfileSource& source, FrameResolver& resolver,
                     const ModuleOpener& open_module) {
  const char* kCommand = "report";
  const std::vector<EventDesc>& events = source.events();
  FanOutVisitor fan_out;

  size_t folded_event = 0;
  std::unique_ptr<CallTreeBuilder> tree;
  if (options.folded) {
    if (!options.event.empty()) {
      int e = FindEvent(events, options.event);
      if (e < 0) {
        std::string names;
        for (const EventDesc& event : events) names += (names.empty() ? "" : ", ") + event.name;
        std::cerr << "tprof report: " << input << " has no event '" << options.event
                  << "' (it has: " << names << ")\n";
        return kExitUsage;
      }
      folded_event = static_cast<size_t>(e);
    } else if (events.size() > 1) {
      std::cerr << "tprof report: note: folding event '" << events[0].name
                << "'; --event chooses another\n";
    }
    CallTreeOptions tree_options;
    tree_options.expand_inlined = !options.no_inline;
    if (options.folded_prefix == "comm") tree_options.roots = CallTreeOptions::Roots::kProcess;
    if (options.folded_prefix == "pid") tree_options.roots = CallTreeOptions::Roots::kPid;
    if (options.folded_prefix == "tid") tree_options.roots = CallTreeOptions::Roots::kThread;
    tree = std::make_unique<CallTreeBuilder>(events, resolver, tree_options);
    fan_out.Add(tree.get());
  }
  std::unique_ptr<StackProfileBuilder> stacks;
  if (!options.pprof_path.empty() || !options.speedscope_path.empty()) {
    stacks = std::make_unique<StackProfileBuilder>(events, resolver);
    fan_out.Add(stacks.get());
  }
  std::unique_ptr<InstructionProfileBuilder> instructions;
  if (!options.annotate.empty()) {
    instructions = std::make_unique<InstructionProfileBuilder>(
        events, resolver, options.annotate,
        options.no_inline ? InlineMode::kPhysical : InlineMode::kInnermost);
    fan_out.Add(instructions.get());
  }

  auto summary = source.ReadRecords(fan_out);
  if (!summary.ok()) return ReportError(kCommand, input + ": " + summary.error().message());
  if (!summary->warning.empty())
    std::cerr << "tprof report: warning: " << input << ": " << summary->warning << '\n';

  if (tree) {
    FoldedOptions folded_options;
    folded_options.event = folded_event;
    folded_options.annotate = !options.no_marks;
    std::cout << RenderFolded(tree->root(), folded_options);
  }
  if (stacks) {
    StackProfile profile = stacks->Finish();
    if (!options.pprof_path.empty()) {
      auto bytes = ExportPprof(source.metadata(), profile);
      if (!bytes.ok()) return ReportError(kCommand, bytes.error().message());
      Status written = WriteFile(options.pprof_path, *bytes);
      if (!written.ok()) return ReportError(kCommand, written.error().message());
      std::cerr << "[ tprof report: wrote pprof profile " << options.pprof_path << ": "
                << profile.stacks.size() << " stacks, " << profile.locations.size()
                << " locations ]\n";
    }
    if (!options.speedscope_path.empty()) {
      Status written =
          WriteFile(options.speedscope_path, ExportSpeedscope(source.metadata(), profile));
      if (!written.ok()) return ReportError(kCommand, written.error().message());
      std::cerr << "[ tprof report: wrote speedscope profile " << options.speedscope_path << ": "
                << profile.stacks.size() << " stacks ]\n";
    }
  }
  if (instructions) {
    InstructionProfile profile = instructions->Finish();
    Status rendered = RenderAnnotation(profile, options.annotate, open_module, std::cout);
    if (!rendered.ok()) return ReportError(kCommand, input + ": " + rendered.error().message());
  }
  return kExitOk;
}

}  // namespace tprof
