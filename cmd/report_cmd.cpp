// tprof report: the functions of a profile by self share.
#include <iostream>

#include "cmd/cli_support.h"
#include "cmd/report_exports.h"
#include "core/function_profile.h"
#include "core/perf_data_symfs.h"
#include "core/profile_source.h"
#include "report/text_report.h"
#include "symbolize/dwarf_unwinder.h"
#include "symbolize/elf_symbols.h"
#include "symbolize/symbolizer.h"

namespace tprof {
namespace {

class ReportCommand : public Subcommand {
 public:
  const char* name() const override { return "report"; }
  const char* summary() const override { return "Show the functions of a profile by self share"; }

  void Setup(CLI::App& app) override {
    app.description(
        "Show where the samples of a profile fall, by function.\n"
        "  tprof report [-i FILE] [--percent-limit P] [--limit N]\n"
        "FILE may be a .tprof profile, a perf.data file or stream ('-' reads standard input),\n"
        "`perf script` output or folded stacks; the format is recognised by content.\n"
        "  tprof report --folded [--event NAME] [--folded-prefix none|comm|pid|tid]\n"
        "               [--no-marks] [--no-inline]\n"
        "  tprof report --pprof out.pb.gz | --speedscope out.json | --annotate FUNCTION");
    app.add_option("-i,--input", input_, "Profile to read (default profile.tprof)");
    app.add_option("input_file", input_, "Profile to read (same as -i)");
    app.add_option("--percent-limit", options_.percent_limit, "Hide functions below this self %");
    app.add_option("--limit", options_.max_rows, "Show at most N functions per event");
    app.add_option("--symfs", symfs_, "Look for recorded binaries under this directory");
    app.add_option("--binary", binaries_,
                   "A local copy of a recorded binary (matched by build-id, else by name)");
    // ---- folded stacks, pprof/speedscope exports, annotate (cmd/report_exports.*) ----
    AddReportExportOptions(app, exports_);
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
    // ---- folded stacks, pprof/speedscope exports, annotate: instead of the table ----
    if (exports_.requested()) {
      ModuleOpener open_module = [&](const std::string& module, const std::string& build_id) {
        if (locator.active()) {
          const std::string& local = locator.Locate(module, build_id);
          if (!local.empty()) return symbolizer.ModuleFor(local, "");
        }
        return symbolizer.ModuleFor(module, build_id);
      };
      return RunReportExports(exports_, input_, **source, *resolver, open_module);
    }
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
  std::string input_ = "profile.tprof";
  std::string symfs_;
  std::vector<std::string> binaries_;
  TextReportOptions options_;
  ReportExportOptions exports_;  // folded stacks, exports, annotate
};

}  // namespace

std::unique_ptr<Subcommand> MakeReportCommand() { return std::make_unique<ReportCommand>(); }

}  // namespace tprof
