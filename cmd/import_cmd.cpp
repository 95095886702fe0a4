// tprof import: converts a perf.data file or stream into a .tprof profile.
#include "cmd/cli_support.h"
#include "views/profile_import.h"

namespace tprof {
namespace {

class ImportCommand : public Subcommand {
 public:
  const char* name() const override { return "import"; }
  const char* summary() const override { return "Convert a perf.data file into a .tprof profile"; }

  void Setup(CLI::App& app) override {
    app.description(
        "Convert a Linux perf.data file (file or pipe mode, '-' for standard input) into a\n"
        ".tprof profile. Recorded binaries found under --symfs or given with --binary replace\n"
        "the recorded paths, so the profile symbolizes here.\n"
        "  tprof import perf.data -o out.tprof [--symfs DIR] [--binary FILE]\n"
        "Examples:\n"
        "  tprof import perf.data -o prof.tprof                     one file\n"
        "  perf record -o - -- ./prog | tprof import - -o p.tprof   from a pipe\n"
        "  tprof import perf.data --symfs /srv/sysroot -o p.tprof   binaries under a sysroot\n"
        "  tprof import perf.data --binary ./prog -o prof.tprof     a local copy of one binary");
    CLI::Option* input =
        app.add_option("-i,--input", input_, "perf.data file to convert (as perf's -i)");
    app.add_option("input_file", input_, "perf.data file to convert ('-': standard input)")
        ->excludes(input);
    app.add_option("-o,--output", output_, "Output file (default profile.tprof)");
    AddSymbolOptions(app, symfs_, binaries_);
  }

  int Run() override {
    Status imported = ImportProfile({input_, output_, symfs_, binaries_}, CommandMessages(name()));
    return imported.ok() ? kExitOk : ReportError(name(), imported.error());
  }

 private:
  std::string input_;
  std::string output_ = "profile.tprof";
  std::string symfs_;
  std::vector<std::string> binaries_;
};

}  // namespace

std::unique_ptr<Subcommand> MakeImportCommand() { return std::make_unique<ImportCommand>(); }

}  // namespace tprof
