// tprof record: samples a command and writes a .tprof profile.
#include <sys/wait.h>

#include <cstdio>
#include <iostream>

#include "cmd/cli_support.h"
#include "core/profile_writer.h"
#include "pmu/host_info.h"
#include "pmu/recorder.h"

namespace tprof {
namespace {

constexpr const char* kDefaultOutput = "profile.tprof";

class RecordCommand : public Subcommand {
 public:
  const char* name() const override { return "record"; }
  const char* summary() const override { return "Sample a command and write a .tprof profile"; }

  void Setup(CLI::App& app) override {
    app.description(
        "Sample a command and all its threads and child processes.\n"
        "  tprof record [-e EVENTS] [-F HZ | -c PERIOD] [-g] [-o FILE] -- ./prog args\n"
        "Without -e, samples 'cycles'; where the PMU cannot count cycles (a VM), falls back to\n"
        "'task-clock' and says so. An event named with -e that cannot be opened is an error.");
    app.add_option("-e,--event", events_,
                   "Events to sample, comma-separated or repeated (default: cycles). Known: "
                   "cycles, instructions, branches, branch-misses, cache-references, "
                   "cache-misses, cpu-clock, task-clock, page-faults, context-switches, "
                   "cpu-migrations, ...; modifiers :u :k :p")
        ->delimiter(',');
    auto* freq =
        app.add_option("-F,--freq", frequency_, "Samples per second per thread (default 4000)");
    auto* count = app.add_option("-c,--count", period_, "Sample every PERIOD events instead");
    freq->excludes(count);
    app.add_flag("-g", callchain_, "Record frame-pointer callchains");
    app.add_option("-m,--mmap-pages", mmap_pages_,
                   "Ring buffer data pages per CPU, a power of two (default 128)");
    app.add_option("-o,--output", output_,
                   std::string("Output file (default ") + kDefaultOutput + ")");
    app.add_option("command", command_, "The command to profile, after --")->required();
    app.prefix_command();
  }

  int Run() override {
    std::vector<std::string> argv = command_;
    for (const std::string& extra : app_remaining_) argv.push_back(extra);
    RecordOptions options;
    options.mmap_pages = mmap_pages_;
    if (period_) {
      options.sampling.use_frequency = false;
      options.sampling.period = period_;
    } else {
      options.sampling.frequency = frequency_;
    }
    options.sampling.callchain = callchain_;
    const bool explicit_events = !events_.empty();
    std::vector<std::string> names = explicit_events ? events_ : std::vector<std::string>{"cycles"};
    for (const std::string& name : names) {
      auto spec = ParseEventSpec(name);
      if (!spec.ok()) return ReportUsage(spec.error().message());
      options.events.push_back(std::move(spec).value());
    }

    auto workload = Workload::Create(argv);
    if (!workload.ok()) return ReportError(name(), workload.error().message());
    auto recorder = std::make_unique<Recorder>(options);
    auto events = recorder->Attach(workload->pid());
    if (!events.ok() && !explicit_events) {
      // The default event is a convenience, not a request: fall back to a software clock.
      std::cerr << "tprof record: " << events.error().message()
                << "; sampling 'task-clock' instead\n";
      options.events = {ParseEventSpec("task-clock").value()};
      recorder = std::make_unique<Recorder>(options);
      events = recorder->Attach(workload->pid());
    }
    if (!events.ok()) return ReportError(name(), events.error().message());

    Metadata metadata;
    FillHostMetadata(&metadata);
    metadata.command_line = argv;
    metadata.start_time_unix_ns = RealtimeNowNs();
    metadata.start_timestamp = MonotonicNowNs();
    auto writer = ProfileWriter::CreateFile(output_, metadata, events.value());
    if (!writer.ok()) return ReportError(name(), writer.error().message());

    auto stats = recorder->Run(workload.value(), *writer.value());
    if (!stats.ok()) return ReportError(name(), stats.error().message());
    Status finished = writer.value()->Finish({stats->wall_time_ns, MonotonicNowNs()});
    if (!finished.ok())
      return ReportError(name(), finished.error().message() + " (the profile is incomplete)");
    PrintSummary(events.value(), stats.value(), writer.value()->bytes_written());
    return WorkloadExitCode(stats->wait_status);
  }

 private:
  int ReportUsage(const std::string& message) {
    std::cerr << "tprof record: " << message << '\n';
    return kExitUsage;
  }

  void PrintSummary(const std::vector<EventDesc>& events, const RecordStats& stats,
                    uint64_t bytes) const {
    uint64_t samples = 0;
    std::string per_event;
    for (size_t e = 0; e < events.size(); ++e) {
      samples += stats.samples_per_event[e];
      per_event +=
          (e ? ", " : "") + std::to_string(stats.samples_per_event[e]) + " " + events[e].name;
    }
    double lost_percent = samples + stats.lost_records
                              ? 100.0 * static_cast<double>(stats.lost_records) /
                                    static_cast<double>(samples + stats.lost_records)
                              : 0.0;
    std::fprintf(stderr,
                 "[ tprof record: %s samples; %llu lost (%.2f%%), %llu throttled; wrote %.1f KiB "
                 "to %s in %.2f s ]\n",
                 per_event.c_str(), static_cast<unsigned long long>(stats.lost_records),
                 lost_percent, static_cast<unsigned long long>(stats.throttle_records),
                 static_cast<double>(bytes) / 1024.0, output_.c_str(),
                 static_cast<double>(stats.wall_time_ns) / 1e9);
  }

  static int WorkloadExitCode(int wait_status) {
    if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
    if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
    return kExitOk;
  }

  std::vector<std::string> events_;
  uint64_t frequency_ = 4000;
  uint64_t period_ = 0;
  bool callchain_ = false;
  size_t mmap_pages_ = 128;
  std::string output_ = kDefaultOutput;
  std::vector<std::string> command_;
  std::vector<std::string> app_remaining_;
};

}  // namespace

std::unique_ptr<Subcommand> MakeRecordCommand() { return std::make_unique<RecordCommand>(); }

}  // namespace tprof
