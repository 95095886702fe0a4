// tprof stream: registered so that help and usage are complete; the engine lands with issue #7.
#include "cmd/cli_support.h"

namespace tprof {
namespace {

class StreamCommand : public Subcommand {
 public:
  const char* name() const override { return "stream"; }
  const char* summary() const override { return "Show the hot call/branch streams of a profile"; }

  void Setup(CLI::App& app) override {
    app.description(
        "Show the hot call/branch streams of a profile.\n  tprof stream [FILE]\nNot implemented "
        "yet: this build says so and exits 1.");
    app.allow_extras();
    app.prefix_command();
  }

  int Run() override { return ReportError(name(), "not implemented yet in this build"); }
};

}  // namespace

std::unique_ptr<Subcommand> MakeStreamCommand() { return std::make_unique<StreamCommand>(); }

}  // namespace tprof
