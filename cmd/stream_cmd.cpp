// tprof stream: the hot call/branch streams (or basic blocks) of one profile.
#include <iostream>

#include "cmd/cli_support.h"
#include "core/base/visible_text.h"
#include "report/stream_report.h"
#include "views/stream_diff.h"

namespace tprof {
namespace {

class StreamCommand : public Subcommand {
 public:
  const char* name() const override { return "stream"; }
  const char* summary() const override { return "Show the hot call/branch streams of a profile"; }

  void Setup(CLI::App& app) override {
    app.description(
        "Show the hottest streams of a profile: chains of basic blocks from branch stacks\n"
        "(record -b) or of frames from callchains (record -g).\n"
        "  tprof stream [FILE] [-n N] [--depth D] [--blocks] [--json]\n"
        "Examples:\n"
        "  tprof stream prof.tprof                      the 10 hottest streams\n"
        "  tprof stream prof.tprof -n 3 --depth 4       the top 3, four entries each\n"
        "  tprof stream prof.tprof --blocks             the hottest basic blocks instead\n"
        "  tprof stream perf.data --time 0%-50% --json  the first half, as JSON\n"
        "\n"
        "Branch streams are most recent first, callchain streams leaf first; each entry is a\n"
        "function and its source file:line. Per stream: share of the event's period (hits),\n"
        "samples, and average cycles where the branch stacks count them. Compare two profiles'\n"
        "streams with `tprof diff --stream OLD NEW`.");
    AddProfileInputOptions(app, input_);
    app.add_option("-n,--top", report_.top, "Show the N hottest streams (default 10)")
        ->check(CLI::PositiveNumber);
    app.add_option("--depth", input_options_.streams.depth,
                   "Entries per stream at most (default 8)")
        ->check(CLI::PositiveNumber);
    app.add_option("--source", source_,
                   "Streams from 'branch' stacks, 'callchain's, or 'auto' (branch stacks where a "
                   "sample has one)")
        ->check(CLI::IsMember({"auto", "branch", "callchain"}));
    app.add_option("--event", input_options_.streams.event,
                   "The event whose samples count (default: the first with samples)");
    app.add_flag("--blocks", report_.blocks,
                 "Show the hottest basic blocks of the branch stacks (share of sampled cycles, "
                 "average cycles) instead");
    app.add_flag("--no-kernel", no_kernel_, "Leave kernel code out of the streams");
    AddTimeRangeOption(app, input_options_.time);
    AddMachineFormatOptions(app, json_, nullptr, "");
    AddSymbolOptions(app, input_options_.symfs, input_options_.binaries);
  }

  int Run() override {
    input_options_.streams.include_kernel = !no_kernel_;
    input_options_.streams.source = source_ == "branch"      ? HotStreamOptions::Source::kBranch
                                    : source_ == "callchain" ? HotStreamOptions::Source::kCallchain
                                                             : HotStreamOptions::Source::kAuto;
    bool complete = true;
    auto profile = LoadStreamProfile(input_, input_options_, CommandMessages(name()), &complete);
    if (!profile.ok()) return ReportError(name(), profile.error());
    if (report_.blocks && !profile->branch_samples)
      return ReportError(name(), input_ + ": --blocks needs branch stacks (record -b); none here");
    // Asked for branch streams, a profile without branch stacks has none to give: empty streams
    // would read as "nothing hot".
    if (source_ == "branch" && !profile->branch_samples)
      return ReportError(name(), input_ +
                                     ": --source branch needs branch stacks (record -b); none "
                                     "here (--source callchain uses the callchains)");
    if (json_) {
      nlohmann::json json = StreamsJson(*profile, report_);
      std::cout << DumpVisibleJson(json, 1) << '\n';
    } else {
      VisibleTextStream out(std::cout);  // names are bytes (core/base/visible_text.h)
      RenderStreams(*profile, report_, out);
    }
    return complete ? kExitOk : kExitIncomplete;
  }

 private:
  std::string input_ = "profile.tprof";
  std::string source_ = "auto";
  bool no_kernel_ = false;
  bool json_ = false;
  StreamInputOptions input_options_;
  StreamReportOptions report_;
};

}  // namespace

std::unique_ptr<Subcommand> MakeStreamCommand() { return std::make_unique<StreamCommand>(); }

}  // namespace tprof
