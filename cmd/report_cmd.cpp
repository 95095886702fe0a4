// tprof report: the functions of a profile by self share.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>

#include "cmd/cli_support.h"
#include "core/call_tree.h"
#include "core/frame_ratio.h"
#include "core/function_profile.h"
#include "core/perf_data_symfs.h"
#include "core/profile_source.h"
#include "report/flamegraph_html.h"
#include "report/text_report.h"
#include "symbolize/dwarf_unwinder.h"
#include "symbolize/elf_symbols.h"
#include "symbolize/symbolizer.h"

namespace tprof {
namespace {

enum class FlameColor { kName, kIpc, kCpi, kStall };

// Feeds one pass over the records to two consumers.
class TeeVisitor : public RecordVisitor {
 public:
  TeeVisitor(RecordVisitor& a, RecordVisitor& b) : a_(a), b_(b) {}
  void OnSample(const Sample& s) override { a_.OnSample(s), b_.OnSample(s); }
  void OnMmap(const MmapRecord& r) override { a_.OnMmap(r), b_.OnMmap(r); }
  void OnComm(const CommRecord& r) override { a_.OnComm(r), b_.OnComm(r); }
  void OnTask(const TaskRecord& r) override { a_.OnTask(r), b_.OnTask(r); }
  void OnLost(const LostRecord& r) override { a_.OnLost(r), b_.OnLost(r); }
  void OnThrottle(const ThrottleRecord& r) override { a_.OnThrottle(r), b_.OnThrottle(r); }

 private:
  RecordVisitor& a_;
  RecordVisitor& b_;
};

class ReportCommand : public Subcommand {
 public:
  const char* name() const override { return "report"; }
  const char* summary() const override { return "Show the functions of a profile by self share"; }

  void Setup(CLI::App& app) override {
    app.description(
        "Show where the samples of a profile fall, by function.\n"
        "  tprof report [-i FILE] [--percent-limit P] [--limit N]\n"
        "  tprof report [-i FILE] --flamegraph OUT.html [--event NAME] [--color MODE]\n"
        "FILE may be a .tprof profile, a perf.data file or stream ('-' reads standard input),\n"
        "`perf script` output or folded stacks; the format is recognised by content.\n"
        "--flamegraph writes one self-contained HTML page (no network needed): click to zoom,\n"
        "search by regular expression, tooltips with counts and shares, icicle layout.\n"
        "--color name (default): a stable colour per function name. ipc / cpi: each frame by\n"
        "its own instructions per cycle (or cycles per instruction) on a fixed 0-4 scale, from\n"
        "independently sampled cycles and instructions (perf record -e cycles,instructions -c N);\n"
        "stall: stall cycles (stalled-cycles-backend/frontend, STALL_BACKEND/FRONTEND) against\n"
        "cycles, 0-100 %. Frames with fewer than --color-min-samples samples of either event\n"
        "are grey.");
    app.add_option("-i,--input", input_, "Profile to read (default profile.tprof)");
    app.add_option("input_file", input_, "Profile to read (same as -i)");
    app.add_option("--percent-limit", options_.percent_limit, "Hide functions below this self %");
    app.add_option("--limit", options_.max_rows, "Show at most N functions per event");
    app.add_option("--symfs", symfs_, "Look for recorded binaries under this directory");
    app.add_option("--binary", binaries_,
                   "A local copy of a recorded binary (matched by build-id, else by name)");
    app.add_option("--flamegraph", flamegraph_,
                   "Write an interactive flame graph (self-contained HTML) to this file "
                   "instead of the table");
    app.add_option("--event", event_,
                   "Event whose period sizes the flame graph's frames (default: the first; "
                   "cycles with --color ipc/cpi/stall)");
    app.add_option("--color", color_name_, "Flame graph colours: name (default), ipc, cpi or stall")
        ->transform(CLI::IsMember({"name", "ipc", "cpi", "stall"}, CLI::ignore_case));
    app.add_option("--color-min-samples", min_samples_,
                   "With --color ipc/cpi/stall: frames with fewer samples of either event "
                   "are grey (default 10)");
    app.add_option("--flame-roots", roots_name_,
                   "Flame graph roots: none (default), process, pid or thread")
        ->transform(CLI::IsMember({"none", "process", "pid", "thread"}, CLI::ignore_case));
    app.add_flag("--icicle", icicle_, "Flame graph: start with the roots at the top");
  }

  int Run() override {
    // --call-graph dwarf recordings: user stacks are unwound while the records are read.
    DwarfUnwinderOptions unwind_options;
    unwind_options.symfs = symfs_;
    DwarfUnwinder unwinder(unwind_options);
    SymbolizerOptions symbolizer_options;
    symbolizer_options.symfs = symfs_;
    Symbolizer symbolizer(symbolizer_options);
    BinaryLocator locator({symfs_, binaries_, [](const std::string& path) {
                             auto symbols = ElfSymbols::Load(path);
                             return symbols.ok() ? symbols->build_id() : std::string();
                           }});
    LocatingResolver located(symbolizer, locator);
    FrameResolver* live = locator.active() ? static_cast<FrameResolver*>(&located) : &symbolizer;
    SourceOptions source_options;
    source_options.unwinder = &unwinder;
    source_options.symbol_fallback = live;  // for addresses a profile's embedded symbols lack
    auto source = ProfileSource::OpenFile(input_, source_options);
    if (!source.ok()) return ReportError(name(), source.error().message());
    // Embedded symbols (or a text input's names) first: they name what was recorded even where
    // the binaries are gone or rebuilt.
    FrameResolver* resolver = (*source)->embedded_frames();
    if (!resolver) resolver = live;
    if (!flamegraph_.empty()) return WriteFlameGraph(**source, *resolver);
    FunctionProfileBuilder builder((*source)->events(), *resolver);
    auto summary = (*source)->ReadRecords(builder);
    if (!summary.ok()) return ReportError(name(), input_ + ": " + summary.error().message());
    if (!summary->warning.empty())
      std::cerr << "tprof report: warning: " << input_ << ": " << summary->warning << '\n';
    FunctionProfile profile = builder.Finish();
    RenderFunctionTable((*source)->metadata(), profile, options_, std::cout);
    return kExitOk;
  }

 private:
  int WriteFlameGraph(ProfileSource& source, FrameResolver& resolver) {
    const std::vector<EventDesc>& events = source.events();
    if (events.empty()) return ReportError(name(), input_ + ": the profile has no events");
    const std::map<std::string, FlameColor> colors = {{"name", FlameColor::kName},
                                                      {"ipc", FlameColor::kIpc},
                                                      {"cpi", FlameColor::kCpi},
                                                      {"stall", FlameColor::kStall}};
    const std::map<std::string, CallTreeOptions::Roots> roots = {
        {"none", CallTreeOptions::Roots::kNone},
        {"process", CallTreeOptions::Roots::kProcess},
        {"pid", CallTreeOptions::Roots::kPid},
        {"thread", CallTreeOptions::Roots::kThread}};
    const FlameColor color = colors.at(color_name_);  // CLI11 checked the names
    std::optional<RatioEvents> ratio;
    if (color != FlameColor::kName) {
      const FrameRatioKind kind = color == FlameColor::kIpc   ? FrameRatioKind::kIpc
                                  : color == FlameColor::kCpi ? FrameRatioKind::kCpi
                                                              : FrameRatioKind::kStall;
      auto found = FindRatioEvents(events, kind);
      if (!found.ok()) return ReportError(name(), input_ + ": " + found.error().message());
      ratio = *found;
    }
    size_t event = 0;
    if (ratio) event = ratio->kind == FrameRatioKind::kCpi ? ratio->numerator : ratio->denominator;
    if (!event_.empty()) {
      std::string known;
      bool found = false;
      for (size_t i = 0; i < events.size() && !found; ++i) {
        if (events[i].name == event_) event = i, found = true;
        known += (known.empty() ? "" : ", ") + events[i].name;
      }
      if (!found)
        return ReportError(name(),
                           input_ + ": no event '" + event_ + "' (the profile has: " + known + ")");
    }

    CallTreeOptions tree_options;
    tree_options.roots = roots.at(roots_name_);
    CallTreeBuilder tree(events, resolver, tree_options);
    auto summary = source.ReadRecords(tree);
    if (!summary.ok()) return ReportError(name(), input_ + ": " + summary.error().message());
    if (!summary->warning.empty())
      std::cerr << "tprof report: warning: " << input_ << ": " << summary->warning << '\n';
    if (tree.root().total[event] == 0)
      return ReportError(name(), input_ + ": no samples of " + events[event].name);

    FlameGraphInput input;
    input.root = &tree.root();
    input.event = event;
    input.event_name = events[event].name;
    input.title = "tprof flame graph";
    input.icicle = icicle_;
    const Metadata& meta = source.metadata();
    std::string command;
    for (const std::string& word : meta.command_line)
      command += (command.empty() ? "" : " ") + word;
    input.subtitle = input_;
    if (!command.empty()) input.subtitle += " | " + command;
    if (!meta.hostname.empty()) input.subtitle += " | " + meta.hostname;
    if (!meta.cpu.model_name.empty()) input.subtitle += ", " + meta.cpu.model_name;
    if (ratio) {
      const std::string& num = events[ratio->numerator].name;
      const std::string& den = events[ratio->denominator].name;
      const uint64_t num_total = tree.root().total[ratio->numerator];
      const uint64_t den_total = tree.root().total[ratio->denominator];
      if (num_total == 0 || den_total == 0)
        return ReportError(name(),
                           input_ + ": no samples of " + (num_total ? den : num) +
                               "; --color needs both events sampled on their own (a group read on "
                               "its leader's samples, {a,b}:S, gives only the leader's)");
      ColorFramesByRatio(input, ComputeFrameRatios(tree.root(), *ratio, min_samples_), ratio->kind,
                         num, den, min_samples_);
    }

    std::ofstream out(flamegraph_, std::ios::binary | std::ios::trunc);
    if (!out) return ReportError(name(), flamegraph_ + ": cannot write: " + std::strerror(errno));
    RenderFlameGraphHtml(input, out);
    out.close();
    if (!out) return ReportError(name(), flamegraph_ + ": write failed");
    std::cerr << "tprof report: flame graph of " << input.event_name << " written to "
              << flamegraph_ << '\n';
    return kExitOk;
  }

  std::string input_ = "profile.tprof";
  std::string symfs_;
  std::vector<std::string> binaries_;
  TextReportOptions options_;
  std::string flamegraph_;
  std::string event_;
  std::string color_name_ = "name";
  uint64_t min_samples_ = 10;
  std::string roots_name_ = "none";
  bool icicle_ = false;
};

}  // namespace

std::unique_ptr<Subcommand> MakeReportCommand() { return std::make_unique<ReportCommand>(); }

}  // namespace tprof
