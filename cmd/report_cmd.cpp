// tprof report: the functions of a profile by self share.
#include <iostream>

#include "cmd/cli_support.h"
#include "core/function_profile.h"
#include "core/profile_reader.h"
#include "report/text_report.h"
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
        "  tprof report [-i FILE] [--percent-limit P] [--limit N]");
    app.add_option("-i,--input", input_, "Profile to read (default profile.tprof)");
    app.add_option("input_file", input_, "Profile to read (same as -i)");
    app.add_option("--percent-limit", options_.percent_limit, "Hide functions below this self %");
    app.add_option("--limit", options_.max_rows, "Show at most N functions per event");
  }

  int Run() override {
    auto reader = ProfileReader::OpenFile(input_);
    if (!reader.ok()) return ReportError(name(), reader.error().message());
    ElfSymbolizer symbolizer;
    FunctionProfileBuilder builder(reader->events(), symbolizer);
    auto summary = reader->ReadRecords(builder);
    if (!summary.ok()) return ReportError(name(), input_ + ": " + summary.error().message());
    if (!summary->complete)
      std::cerr << "tprof report: warning: " << input_ << ": " << summary->warning << '\n';
    FunctionProfile profile = builder.Finish();
    RenderFunctionTable(reader->metadata(), profile, options_, std::cout);
    return kExitOk;
  }

 private:
  std::string input_ = "profile.tprof";
  TextReportOptions options_;
};

}  // namespace

std::unique_ptr<Subcommand> MakeReportCommand() { return std::make_unique<ReportCommand>(); }

}  // namespace tprof
