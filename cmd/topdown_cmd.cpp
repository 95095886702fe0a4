// tprof topdown: registered so that help and usage are complete; the engine lands with issue #8.
#include "cmd/cli_support.h"

namespace tprof {
namespace {

class TopdownCommand : public Subcommand {
 public:
  const char* name() const override { return "topdown"; }
  const char* summary() const override { return "Top-down microarchitecture analysis"; }

  void Setup(CLI::App& app) override {
    app.description(
        "Top-down microarchitecture analysis.\n  tprof topdown -M l1 -- ./prog args\nNot "
        "implemented yet: this build says so and exits 1.");
    app.allow_extras();
    app.prefix_command();
  }

  int Run() override { return ReportError(name(), "not implemented yet in this build"); }
};

}  // namespace

std::unique_ptr<Subcommand> MakeTopdownCommand() { return std::make_unique<TopdownCommand>(); }

}  // namespace tprof
