// tprof diff: registered so that help and usage are complete; the engine lands with issue #7.
#include "cmd/cli_support.h"

namespace tprof {
namespace {

class DiffCommand : public Subcommand {
 public:
  const char* name() const override { return "diff"; }
  const char* summary() const override {
    return "Compare two profiles (function diff, stream diff, regression gate)";
  }

  void Setup(CLI::App& app) override {
    app.description(
        "Compare two profiles (function diff, stream diff, regression gate).\n  tprof diff OLD NEW "
        "[--stream] [--flamegraph out.html]\nNot implemented yet: this build says so and exits 1.");
    app.allow_extras();
    app.prefix_command();
  }

  int Run() override { return ReportError(name(), "not implemented yet in this build"); }
};

}  // namespace

std::unique_ptr<Subcommand> MakeDiffCommand() { return std::make_unique<DiffCommand>(); }

}  // namespace tprof
