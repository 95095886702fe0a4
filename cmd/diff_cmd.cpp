// tprof diff: registered so that help and usage are complete; the engine lands with issue #7.
#include "cmd/cli_support.h"
#include "cmd/stream_diff.h"  // streams branch: `tprof diff --stream`

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
    // --- streams branch (issue 7): `tprof diff --stream` hands over to cmd/stream_diff.cpp.
    // When merging with the function diff, register OLD NEW/--symfs/--binary/--json once and
    // pass shared=false here, copying those values into stream_options_ before the call.
    app.add_flag("--stream", stream_,
                 "Compare hot streams (branch or call chains) entry by entry, with source-line "
                 "mapping: tprof diff --stream OLD NEW [--before DIR --after DIR] "
                 "[--changed-func NAME]... [--blocks]");
    AddStreamDiffOptions(app, stream_options_, /*shared=*/true);
    // --- end streams branch
  }

  int Run() override {
    if (stream_) return RunStreamDiff(stream_options_);  // streams branch
    return ReportError(name(), "not implemented yet in this build");
  }

 private:
  bool stream_ = false;               // streams branch
  StreamDiffOptions stream_options_;  // streams branch
};

}  // namespace

std::unique_ptr<Subcommand> MakeDiffCommand() { return std::make_unique<DiffCommand>(); }

}  // namespace tprof
