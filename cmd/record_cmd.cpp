// tprof record: samples a command, running processes or the whole system into a .tprof profile.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <system_error>

#include "cmd/cli_support.h"
#include "core/analysis/short_stack_census.h"
#include "core/format/output_file.h"
#include "core/format/profile_reader.h"
#include "core/format/profile_writer.h"
#include "core/format/symbol_section.h"
#include "core/format/unwind_pass.h"
#include "core/metrics/metric_table.h"
#include "core/model/metric_expression.h"
#include "pmu/host_info.h"
#include "pmu/recorder.h"
#include "symbolize/dwarf_unwinder.h"
#include "symbolize/symbolizer.h"
#include "views/opened_profile.h"
#include "views/unwind_summary.h"

namespace tprof {
namespace {

constexpr const char* kDefaultOutput = "profile.tprof";

constexpr const char* kRecordDescription =
    "Sample a command with all its threads and child processes, running processes (-p),\n"
    "threads (-t) or every CPU (-a).\n"
    "  tprof record [-e EVENTS] [-F HZ | -c PERIOD] [-g | --call-graph MODE] [-b | -j FILTER]\n"
    "               [-o FILE] -- ./prog args\n"
    "Examples:\n"
    "  tprof record -g -o prof.tprof -- ./prog args     call stacks (frame pointers, mended "
    "by\n"
    "                                                   CFI where a library has none)\n"
    "  tprof record --call-graph dwarf -- ./prog        stacks through code without frame "
    "pointers\n"
    "  tprof record -e task-clock,page-faults -- ./prog two events, each sampled on its own\n"
    "  tprof record -M l1 -- ./prog                     the CPU's metric table per function\n"
    "  tprof record --off-cpu -g -- ./prog              where threads wait, and why\n"
    "  tprof record -p 1234 --duration 10               a running process for 10 s\n"
    "\n"
    "Without -e, samples 'cycles'. Where the PMU cannot count cycles (a VM), 'cycles' (the\n"
    "default, or a lone -e cycles) falls back to 'task-clock' ('cpu-clock' with -a) and says\n"
    "so; any other event that cannot be opened is an error naming the kernel's reason.\n"
    "Events: generic names (cycles, instructions, branches, branch-misses, cache-references,\n"
    "cache-misses, stalled-cycles-frontend/backend, ref-cycles, cpu-clock, task-clock,\n"
    "page-faults, context-switches, cpu-migrations, ...), raw rNNNN, pmu/term=value,.../,\n"
    "vendor names known to libpfm4 (INST_RETIRED:ANY_P), modifiers :u :k :h :p :pp :ppp,\n"
    "groups {a,b} and leader-sampled groups {a,b}:S whose every sample reads all members\n"
    "(each member also sampled on its own at -F's rate, whatever -c or --burst sets, unless\n"
    "--no-member-samples).";

class RecordCommand : public Subcommand {
 public:
  const char* name() const override { return "record"; }
  const char* summary() const override {
    return "Sample a command (or processes, or the system) into a .tprof profile";
  }

  void Setup(CLI::App& app) override {
    app_ = &app;
    app.description(kRecordDescription);
    SetupEventOptions(app);
    SetupSamplingOptions(app);
    SetupTargetOptions(app);
  }

  // -e, -M, groups' member samples, --cpu, --burst.
  void SetupEventOptions(CLI::App& app) {
    // One value an -e: a list of values would take the "--" after it, and the command's own
    // options after it for tprof's ("-e task-clock -- sh -c true" read -c as --count).
    auto* events = app.add_option("-e,--event", events_,
                                  "Events to sample (repeatable; comma lists and groups)")
                       ->allow_extra_args(false);
    app.add_option("-M,--metrics", metrics_,
                   "Per-function metrics: 'ipc', or levels/groups of the CPU's metric table "
                   "(l1, ...): samples the table's cycles event with the metrics' events read in "
                   "every sample, and each event also sampled on its own where the PMU has "
                   "counters to spare; tprof report credits counter windows per function and "
                   "holds them against the sampled values")
        ->excludes(events);
    app.add_flag("--no-member-samples", no_member_samples_,
                 "Do not also sample a leader-sampled group's members on their own (by default "
                 "they are, so that report can check the group's per-function values against a "
                 "second method: 'methods disagree')");
    app.add_option("--cpu", cpu_, "Metric table for -M (default: detected; see 'tprof list cpus')");
    app.add_option("--burst", burst_,
                   "LONG,SHORT[,JITTER_BITS]: a SHORT-event counting window after every LONG "
                   "events (hf_sample_period); where the kernel lacks it, samples every SHORT "
                   "events and filters windows the same way");
  }

  // -F or -c, and what each sample records: callchains, branch stacks.
  void SetupSamplingOptions(CLI::App& app) {
    auto* freq = app.add_option("-F,--freq", frequency_text_,
                                "Samples per second per thread (default 4000, as perf); 'max': "
                                "the kernel's limit, kernel.perf_event_max_sample_rate");
    auto* count = app.add_option("-c,--count", period_, "Sample every PERIOD events instead");
    freq->excludes(count);
    auto* fp =
        app.add_flag("-g", frame_pointers_,
                     "Record frame-pointer callchains, mended where a leaf has no frame pointer "
                     "(--call-graph fp)");
    app.add_option("--call-graph", call_graph_,
                   "Callchain mode: fp[,STACK_BYTES] (default 1024: the user stack copied to "
                   "mend frame-pointer chains with CFI; 0: the kernel's chains as they are), "
                   "dwarf[,STACK_BYTES] (default 8192), lbr")
        ->excludes(fp);
    auto* any_branch =
        app.add_flag("-b,--branch-any", branch_any_, "Record branch stacks of every taken branch");
    app.add_option("-j,--branch-filter", branch_filter_,
                   "Record branch stacks with a filter: any, any_call, any_ret, ind_call, call, "
                   "cond, call_stack, save_type, u, k, hv (comma-separated)")
        ->excludes(any_branch);
  }

  // What is recorded (a command, -p, -t, -a; --off-cpu and the privilege modes), for how long,
  // and where to.
  void SetupTargetOptions(CLI::App& app) {
    auto* off_cpu = app.add_flag(
        "--off-cpu", off_cpu_,
        "Also record where the threads wait: every switch off the CPU with its stack, and its "
        "return, as the 'off-cpu' event (nanoseconds blocked, beside the sampled events)");
    auto* user = app.add_flag("--user-only", user_only_, "Sample user space only");
    app.add_flag("--kernel-only", kernel_only_, "Sample the kernel only")->excludes(user);
    app.add_flag(
        "--keep-stacks", keep_stacks_,
        "With --call-graph dwarf or -g: keep the raw register and stack copies in the profile");
    app.add_option("-m,--mmap-pages", mmap_pages_,
                   "Ring buffer data pages per CPU, a power of two (default 128)");
    app.add_option("-o,--output", output_,
                   std::string("Output file (default ") + kDefaultOutput +
                       "); '-' writes the finished profile to standard output (the command's "
                       "own output then goes to standard error)");
    auto* pids = app.add_option("-p,--pid", pids_, "Record running processes: PID[,PID...]");
    auto* tids = app.add_option("-t,--tid", tids_, "Record running threads: TID[,TID...]");
    auto* all = app.add_flag("-a,--all-cpus", system_wide_,
                             "Record every CPU (system-wide; with -- ./prog, while it runs)");
    pids->excludes(tids)->excludes(all);
    all->excludes(off_cpu);  // a CPU's switches are between any threads: not this recording's
    tids->excludes(all);
    app.add_flag("-q,--quiet", quiet_,
                 "No notices (the event fallback, notes) and no summary; warnings and errors "
                 "still print");
    app.add_option("--duration", duration_, "Stop after SECONDS (a launched command gets SIGTERM)");
    app.add_option("command", command_, "The command to profile, after --");
    app.prefix_command();
  }

  int Run() override {
    if (int status = CheckArgumentsBeforeCommand(*app_, command_); status != kExitOk) return status;
    auto options = BuildOptions();
    if (!options.ok()) return Usage(options.error().message());
    // The command runs on its own (launch) or beside a system-wide recording (-a -- ./prog).
    const bool launch = !command_.empty();
    Output output;
    if (int status = PrepareOutput(&output); status != kExitOk) return status;
    const std::optional<ScratchDirectory>& spool = output.spool;
    const std::string& stream_name = output.stream_name;
    auto workload = Launch(launch, /*stdout_to_stderr=*/spool.has_value());
    if (!workload.ok()) return ReportError(name(), workload.error());
    const pid_t pid = *workload ? (*workload)->pid() : -1;
    std::unique_ptr<Recorder> recorder;
    auto events = OpenRecorder(&options.value(), pid, &recorder);
    if (!events.ok()) return ReportError(name(), events.error());

    const SamplingOptions& sampling = options->sampling;
    const bool stack_copies = RecordsStackCopies(sampling, events.value());
    const std::string recorded = stack_copies ? written_ + ".stacks" : written_;
    auto writer = ProfileWriter::CreateFile(recorded, RecordingMetadata(), events.value());
    if (!writer.ok()) return ReportError(name(), writer.error());
    const std::string incomplete = spool ? "; nothing was written to " + stream_name
                                         : "; the profile is incomplete (" + recorded + ".partial)";

    // -g's copies that the pass after the workload would not need are dropped as they are
    // written (--keep-stacks keeps them all, as asked).
    auto trimming_unwinder = std::make_unique<DwarfUnwinder>();
    auto trimmer = std::make_unique<StackCopyTrimmer>(*trimming_unwinder);
    if (stack_copies && sampling.call_graph == CallGraphMode::kFramePointer && !keep_stacks_)
      recorder->TrimStackCopies(trimmer.get());
    auto stats = recorder->Run(*writer.value(), workload->get());
    const uint64_t checked_while_recording = trimmer->trimmed();
    if (!stats.ok() && *workload && !(*workload)->started()) {
      // The command never ran (not found, not executable): there is no profile, incomplete or
      // not, and a .partial file would say there were one.
      writer.value().reset();
      if (!spool) ::unlink((recorded + ".partial").c_str());
      return ReportError(name(), stats.error().message() + "; nothing was recorded");
    }
    if (!stats.ok()) return ReportError(name(), stats.error().message() + incomplete);
    // The ring buffers and events go before the symbol step, where the recorder's memory peaks,
    // and so do the trimmer's binaries (the pass after the workload opens its own).
    recorder.reset();
    trimmer.reset();
    trimming_unwinder.reset();
    Symbolizer symbolizer;
    // Timed so the summary shows what symbolizing (and DWARF unwinding) adds after the workload.
    const uint64_t finish_start_ns = MonotonicNowNs();
    auto bytes = FinishProfile(*writer.value(), symbolizer, recorded, stack_copies,
                               stats->wall_time_ns, checked_while_recording, incomplete);
    if (!bytes.ok()) return ReportError(name(), bytes.error());
    if (Status copied = CopyToStream(output); !copied.ok())
      return ReportError(name(), copied.error());
    if (!quiet_)
      PrintSummary(events.value(), stats.value(), *bytes, stack_copies,
                   MonotonicNowNs() - finish_start_ns);
    PrintWarnings(stats.value());
    if (options->sampling.call_graph == CallGraphMode::kFramePointer && !quiet_) PrintStackHint();
    return launch ? WorkloadExitCode(stats->wait_status) : kExitOk;
  }

 private:
  // The command to profile, forked and waiting to exec until the recorder starts it (none for
  // -p, -t and -a alone).
  Result<std::unique_ptr<Workload>> Launch(bool launch, bool stdout_to_stderr) const {
    if (!launch) return std::unique_ptr<Workload>();
    auto created = Workload::Create(command_, stdout_to_stderr);
    if (!created.ok()) return created.error();
    return std::make_unique<Workload>(std::move(created).value());
  }

  Metadata RecordingMetadata() const {
    Metadata metadata;
    FillHostMetadata(&metadata);
    metadata.command_line = command_;
    metadata.start_time_unix_ns = RealtimeNowNs();
    metadata.start_timestamp = MonotonicNowNs();
    return metadata;
  }

  // DWARF mode (and -g, which mends its chains) records stack copies to a side file first and
  // unwinds them once the workload has ended, so unwinding costs the workload nothing; only the
  // addresses are kept.
  static bool RecordsStackCopies(const SamplingOptions& sampling,
                                 const std::vector<EventDesc>& events) {
    return sampling.call_graph == CallGraphMode::kDwarf ||
           (sampling.call_graph == CallGraphMode::kFramePointer &&
            std::any_of(events.begin(), events.end(),
                        [](const EventDesc& e) { return e.sample_stack_user != 0; }));
  }

  // The recorded file finished: symbols embedded, or the stack copies unwound and embedded.
  // Returns the profile's size; an error says the profile is incomplete (`incomplete`).
  Result<uint64_t> FinishProfile(ProfileWriter& writer, Symbolizer& symbolizer,
                                 const std::string& recorded, bool stack_copies,
                                 uint64_t wall_time_ns, uint64_t checked_while_recording,
                                 const std::string& incomplete) {
    Status finished = stack_copies ? writer.Finish({wall_time_ns, MonotonicNowNs(), {}})
                                   : EmbedSymbolsAndFinish(writer, recorded, symbolizer,
                                                           {wall_time_ns, MonotonicNowNs(), {}});
    if (!finished.ok()) return Error(finished.error().message() + incomplete);
    if (!stack_copies) return writer.bytes_written();
    return UnwindAndEmbed(recorded, symbolizer, checked_while_recording);
  }

  // The recorder with its events open, for `pid` (-1: the targets in `options`); 'cycles' that
  // the PMU cannot count falls back to a software clock, said unless -q.
  Result<std::vector<EventDesc>> OpenRecorder(RecordOptions* options, pid_t pid,
                                              std::unique_ptr<Recorder>* recorder) {
    *recorder = std::make_unique<Recorder>(*options);
    auto events = (*recorder)->Open(pid);
    if (!events.ok() && AsksOnlyForCycles()) {
      // 'cycles' means "where the time goes"; where the PMU cannot count it, a software clock
      // answers the same question (perf does the same). Other events are never substituted.
      std::string fallback =
          options->target.kind == RecordTarget::Kind::kSystemWide ? "cpu-clock" : "task-clock";
      const EventSpec& cycles = options->groups[0].events[0];
      if (cycles.exclude_kernel && !cycles.exclude_user) fallback += ":u";
      if (cycles.exclude_user && !cycles.exclude_kernel) fallback += ":k";
      if (!quiet_)
        std::cerr << "tprof record: " << OneLine(events.error().message()) << "; sampling '"
                  << fallback << "' instead (-q: quiet)\n";
      options->groups = ParseEventList(fallback).value();
      *recorder = std::make_unique<Recorder>(*options);
      events = (*recorder)->Open(pid);
    }
    if (!events.ok()) return events;
    for (const std::string& note : planning_notes_)
      if (!quiet_) Note(name(), note);
    for (const std::string& note : (*recorder)->notes())
      if (!quiet_) Note(name(), note);
    if ((*recorder)->burst_mode() == "kernel" && !quiet_)
      std::cerr << "tprof record: burst sampling: kernel mode (hf_sample_period)\n";
    return events;
  }

  // Where the recording goes (-o - and an output that is a device, FIFO or socket,
  // ResolveOutputTarget: recorded into a private directory, the symbol and unwinding passes read
  // the file back, and copied to the stream once complete, so a reader never sees half a
  // profile and the device stays a device); sets written_.
  struct Output {
    std::optional<ScratchDirectory> spool;
    std::string stream_name;             // "standard output" or the stream's path
    std::optional<StreamOutput> stream;  // empty for standard output
  };
  int PrepareOutput(Output* out) {
    if (output_ == "-") {
      if (::isatty(STDOUT_FILENO))
        return Usage(
            "-o -: standard output is a terminal; redirect it to a file or pipe it to "
            "'tprof report -i -'");
      out->stream_name = "standard output";
    } else {
      auto target = ResolveOutputTarget(output_);
      if (!target.ok()) return ReportError(name(), target.error());
      if (target->kind == OutputTarget::Kind::kStream) {
        auto opened = StreamOutput::Open(target->path);
        if (!opened.ok()) return ReportError(name(), opened.error());
        out->stream.emplace(std::move(opened).value());
        out->stream_name = target->path;
      } else {
        written_ = target->path;  // a link's target: the link stays
      }
    }
    if (!out->stream_name.empty()) {
      auto created = ScratchDirectory::Create("tprof-record-");
      if (!created.ok()) return ReportError(name(), created.error());
      out->spool.emplace(std::move(created).value());
      written_ = out->spool->path() + "/profile.tprof";
    }

    return kExitOk;
  }

  // -o - or a stream: the finished profile copied to it.
  Status CopyToStream(Output& output) const {
    if (!output.spool) return Status::Ok();
    // A reader that stops early (`| head`) is an error to report, not a signal to die of.
    ::signal(SIGPIPE, SIG_IGN);
    return output.stream ? output.stream->CopyFrom(written_)
                         : CopyFileTo(written_, STDOUT_FILENO, output.stream_name);
  }

  // -F (samples a second, or 'max') or -c.
  Status SetRate(SamplingOptions* sampling) {
    SamplingOptions& s = *sampling;
    if (period_) {
      s.use_frequency = false;
      s.period = period_;
      // The group members sampled on their own as a second method (PlanMemberSampling) keep a
      // rate: 4 kHz, or the kernel's limit where lower (it refuses a rate above the limit, and
      // lowers the limit by itself where sampling interrupts take long, as on busy VMs).
      if (auto limit = ReadMaxSampleRate(); limit.ok() && limit.value() > 0)
        s.frequency = std::min<uint64_t>(s.frequency, limit.value());
    } else {
      uint64_t frequency = 4000;
      if (frequency_text_ == "max") {
        auto limit = ReadMaxSampleRate();
        if (!limit.ok()) return limit.error();
        frequency = limit.value();
      } else if (!frequency_text_.empty()) {
        char* end = nullptr;
        frequency = std::strtoull(frequency_text_.c_str(), &end, 10);
        if (*end != '\0' || frequency_text_[0] == '-')
          return Error("-F takes samples per second or 'max', not '" + frequency_text_ + "'");
      }
      if (frequency == 0) return Error("-F must be at least 1");
      s.frequency = frequency;
    }
    return Status::Ok();
  }

  // -g and --call-graph MODE[,SIZE].
  Status SetCallGraph(SamplingOptions* sampling) {
    SamplingOptions& s = *sampling;
    if (frame_pointers_) s.call_graph = CallGraphMode::kFramePointer;
    if (!call_graph_.empty()) {
      std::string mode = call_graph_.substr(0, call_graph_.find(','));
      const size_t comma = call_graph_.find(',');
      // SIZE after the mode, as perf takes it: a multiple of 8 up to 65528 (0 only for fp).
      auto stack_size = [&](uint32_t* size, bool zero_allowed) -> Status {
        if (comma == std::string::npos) return Status::Ok();
        char* end = nullptr;
        const char* text = call_graph_.c_str() + comma + 1;
        unsigned long value = std::strtoul(text, &end, 0);
        if (*text == '\0' || *end != '\0' || (value < 8 && !(zero_allowed && value == 0)) ||
            value > 65528 || value % 8 != 0)
          return Error("--call-graph " + mode + ",SIZE: SIZE must be a multiple of 8 up to 65528" +
                       (zero_allowed ? " (0: no stack copy)" : ""));
        *size = static_cast<uint32_t>(value);
        return Status::Ok();
      };
      Status sized = Status::Ok();
      if (mode == "fp") {
        s.call_graph = CallGraphMode::kFramePointer;
        sized = stack_size(&s.fp_stack_size, true);
      } else if (mode == "lbr") {
        s.call_graph = CallGraphMode::kLbr;
      } else if (mode == "dwarf") {
        s.call_graph = CallGraphMode::kDwarf;
        sized = stack_size(&s.dwarf_stack_size, false);
      } else {
        return Error("unknown --call-graph mode '" + mode + "' (known: fp, dwarf, lbr)");
      }
      return sized;
    }
    return Status::Ok();
  }

  // --burst LONG,SHORT[,JITTER_BITS].
  Status SetBurst(SamplingOptions* sampling) {
    if (burst_.empty()) return Status::Ok();
    SamplingOptions& s = *sampling;
    unsigned long long long_period = 0, short_period = 0, jitter = 0;
    int n = std::sscanf(burst_.c_str(), "%llu,%llu,%llu", &long_period, &short_period, &jitter);
    if (n < 2 || short_period == 0 || long_period <= short_period || short_period > UINT32_MAX ||
        jitter > 15)
      return Error("--burst LONG,SHORT[,JITTER_BITS]: LONG > SHORT > 0, JITTER_BITS at most 15");
    s.burst_long = long_period;
    s.burst_short = static_cast<uint32_t>(short_period);
    s.burst_jitter_bits = static_cast<uint32_t>(jitter);
    return Status::Ok();
  }

  // What is recorded: a launched command, -p, -t or -a.
  Status SetTarget(RecordTarget* target_out) {
    RecordTarget& target = *target_out;
    if (!pids_.empty()) {
      target.kind = RecordTarget::Kind::kProcesses;
      auto ids = ParseIdList(pids_, "pid");
      if (!ids.ok()) return ids.error();
      target.ids = ids.value();
    } else if (!tids_.empty()) {
      target.kind = RecordTarget::Kind::kThreads;
      auto ids = ParseIdList(tids_, "tid");
      if (!ids.ok()) return ids.error();
      target.ids = ids.value();
    } else if (system_wide_) {
      target.kind = RecordTarget::Kind::kSystemWide;
    }
    const bool launch = target.kind == RecordTarget::Kind::kLaunch;
    if (launch && command_.empty())
      return Error("no command to profile: tprof record [options] -- ./prog args (or -p, -t, -a)");
    // -a with a command records every CPU while the command runs (as perf record -a -- cmd).
    if (!launch && !system_wide_ && !command_.empty())
      return Error("give either a command or -p/-t, not both");
    return Status::Ok();
  }

  Result<RecordOptions> BuildOptions() {
    RecordOptions options;
    options.mmap_pages = mmap_pages_;
    options.duration_seconds = duration_;
    options.off_cpu = off_cpu_;
    if (duration_ < 0) return Error("--duration must be positive");
    if (off_cpu_ && !burst_.empty())
      return Error(
          "--off-cpu and --burst do not go together: the switches are sampled at period 1");
    SamplingOptions& s = options.sampling;
    if (Status rate = SetRate(&s); !rate.ok()) return rate.error();
    if (Status mode = SetCallGraph(&s); !mode.ok()) return mode.error();
    if (branch_any_) s.branch_sample_type = PERF_SAMPLE_BRANCH_ANY;
    if (!branch_filter_.empty()) {
      auto bits = ParseBranchFilter(branch_filter_);
      if (!bits.ok()) return bits.error();
      s.branch_sample_type = bits.value();
    }
    s.user_only = user_only_;
    s.kernel_only = kernel_only_;
    if (mmap_pages_ == 0 || (mmap_pages_ & (mmap_pages_ - 1)))
      return Error("-m must be a power of two, not " + std::to_string(mmap_pages_));

    if (!metrics_.empty()) {
      auto groups = MetricGroups();
      if (!groups.ok()) return groups.error();
      options.groups = std::move(groups).value();
    } else {
      std::string event_text;
      for (const std::string& e : events_) event_text += (event_text.empty() ? "" : ",") + e;
      auto groups = ParseEventList(event_text.empty() ? "cycles" : event_text);
      if (!groups.ok()) return groups.error();
      options.groups = std::move(groups).value();
    }
    if (Status burst = SetBurst(&s); !burst.ok()) return burst.error();
    if (!no_member_samples_) {
      MemberSampling members = PlanMemberSampling(options.groups);
      for (EventGroup& lone : members.added) options.groups.push_back(std::move(lone));
      planning_notes_ = std::move(members.notes);
    }

    if (Status target = SetTarget(&options.target); !target.ok()) return target.error();
    return options;
  }

  // DWARF mode: unwinds OUTPUT.stacks into OUTPUT with embedded symbols; returns its size.
  Result<uint64_t> UnwindAndEmbed(const std::string& stacks, FrameResolver& symbolizer,
                                  uint64_t checked_while_recording) const {
    DwarfUnwinder unwinder;
    const std::string unwound = written_ + ".unwound";
    auto stats = UnwindProfile(stacks, unwound, unwinder, keep_stacks_, checked_while_recording);
    if (!stats.ok()) return stats.error().WithContext("unwinding " + stacks);
    auto embedded = EmbedSymbols(unwound, written_, symbolizer);
    std::remove(unwound.c_str());
    std::remove((unwound + ".old").c_str());
    if (!embedded.ok()) return embedded.error();
    std::remove(stacks.c_str());
    std::remove((stacks + ".old").c_str());
    // Stacks cut short are a warning, which -q keeps to its first line (the counts); complete
    // ones are part of the summary, which -q drops.
    if (!quiet_) {
      PrintUnwinding(name(), OutputName(), stats.value(), std::cerr);
    } else if (stats->incomplete()) {
      // -g's chains the walk could not confirm are as the kernel recorded them, not cut short:
      // that is for the summary and the report's header, which -q keeps quiet.
      const std::vector<std::string> lines = DescribeUnwinding(stats.value());
      if (!lines.empty())
        std::cerr << "tprof record: " << OutputName() << ": unwinding: " << lines.front()
                  << " (without -q: why)\n";
    }
    if (keep_stacks_ && !quiet_)
      std::fprintf(stderr, "tprof record: stack copies kept in %s\n", OutputName().c_str());
    struct stat st {};
    ::stat(written_.c_str(), &st);
    return static_cast<uint64_t>(st.st_size);
  }

  // -M: the metric table's cycles event leads, the selected metrics' events are read with it.
  Result<std::vector<EventGroup>> MetricGroups() const {
    if (metrics_ == "ipc") return ParseEventList("{cycles,instructions}:S");
    auto table = cpu_.empty() ? TableForCpu(DetectCpu(), BuiltinMetricTables())
                              : FindMetricTable(cpu_, BuiltinMetricTables());
    if (!table.ok()) return table.error();
    auto selected = table.value()->Select(metrics_);
    if (!selected.ok()) return selected.error();
    EventGroup group;
    group.explicit_braces = true;
    group.leader_sampling = true;
    std::vector<std::string> names = {table.value()->event_groups.at(0).at(0)};
    for (const Metric* m : selected.value()) {
      auto expression = MetricExpression::Parse(m->formula);
      if (!expression.ok()) return expression.error();
      for (const std::string& v : expression->variables())
        if (v != "#slots" && std::find(names.begin(), names.end(), v) == names.end())
          names.push_back(v);
    }
    for (const std::string& n : names) {
      EventSpec spec;
      spec.name = n;
      spec.type = PERF_TYPE_RAW;
      spec.config = table.value()->FindEvent(n)->code;
      group.events.push_back(spec);
    }
    return std::vector<EventGroup>{group};
  }

  // True for the default event and for a lone -e cycles (with privilege modifiers at most).
  bool AsksOnlyForCycles() const {
    if (!metrics_.empty()) return false;  // -M asks for its events explicitly
    if (events_.empty()) return true;
    if (events_.size() != 1) return false;
    size_t colon = events_[0].find(':');
    std::string base = events_[0].substr(0, colon);
    std::string modifiers = colon == std::string::npos ? "" : events_[0].substr(colon + 1);
    return (base == "cycles" || base == "cpu-cycles") &&
           modifiers.find_first_not_of("uk") == std::string::npos;
  }

  // A notice stays on one line however the kernel's reason was worded.
  static std::string OneLine(std::string text) {
    while (!text.empty() && text.back() == '\n') text.pop_back();
    for (char& c : text)
      if (c == '\n') c = ' ';
    return text;
  }

  // -F max: the highest rate the kernel allows, as perf reads it.
  static Result<uint64_t> ReadMaxSampleRate() {
    const char* path = "/proc/sys/kernel/perf_event_max_sample_rate";
    std::ifstream in(path);
    uint64_t rate = 0;
    if (!(in >> rate) || rate == 0) return Error(std::string("-F max: cannot read ") + path);
    return rate;
  }

  // The output as the user named it.
  std::string OutputName() const { return output_ == "-" ? "standard output" : output_; }

  int Usage(const std::string& message) { return UsageError(name(), message); }

  void PrintSummary(const std::vector<EventDesc>& events, const RecordStats& stats, uint64_t bytes,
                    bool unwound, uint64_t finish_ns) const {
    uint64_t samples = 0;
    std::string per_event;
    for (size_t e = 0; e < events.size(); ++e) {
      samples += stats.samples_per_event[e];
      if (stats.samples_per_event[e] == 0 && events[e].group_leader >= 0 &&
          events[e].group_leader != static_cast<int32_t>(e))
        continue;  // a member read by its leader's samples
      per_event += (per_event.empty() ? "" : ", ") + std::to_string(stats.samples_per_event[e]) +
                   " " + events[e].name;
    }
    auto percent = [&](uint64_t n) {
      return samples + n ? 100.0 * static_cast<double>(n) / static_cast<double>(samples + n) : 0.0;
    };
    std::fprintf(
        stderr,
        "[ tprof record: %s samples; %llu lost (%.2f%%); throttled %llu times (%.2f%% "
        "of the time); wrote %.1f KiB to %s in %.2f s (symbols %s in %.2f s); recorder CPU "
        "%.3f s while recording, %.2f us per sample%s ]\n",
        per_event.c_str(), static_cast<unsigned long long>(stats.lost_samples),
        percent(stats.lost_samples), static_cast<unsigned long long>(stats.throttle_events),
        ThrottledPercent(stats), static_cast<double>(bytes) / 1024.0, OutputName().c_str(),
        static_cast<double>(stats.wall_time_ns) / 1e9,
        unwound ? "unwound and embedded" : "embedded", static_cast<double>(finish_ns) / 1e9,
        static_cast<double>(stats.recorder_cpu_ns) / 1e9,
        samples ? static_cast<double>(stats.recorder_cpu_ns) / 1e3 / static_cast<double>(samples)
                : 0.0,
        stats.interrupted        ? "; interrupted"
        : stats.duration_reached ? "; --duration reached"
                                 : "");
  }

  // Frame-pointer stacks that stop after a frame or two: said once, with the remedy. Reads the
  // profile just written (its embedded symbols name the modules). Best effort: the profile is
  // complete by now, and a read-back that fails, even for a thread the system would not start
  // (std::system_error), must not turn a recording that succeeded into a failure.
  void PrintStackHint() const {
    try {
      auto opened = OpenedProfile::Open(written_, {});
      if (!opened.ok()) return;
      ShortStackCensus census((*opened)->resolver());
      if (!(*opened)->source().ReadRecords(census).ok()) return;
      if (auto hint = ShortStackHint(census.Counts())) Note(name(), *hint);
    } catch (const std::system_error&) {
    }
  }

  static void PrintWarnings(const RecordStats& stats) {
    if (stats.lost_samples)
      std::fprintf(stderr,
                   "tprof record: samples were lost: raise -m (ring buffer pages) or lower -F\n");
    if (stats.throttle_events)
      std::fprintf(stderr,
                   "tprof record: the kernel throttled sampling: lower -F or raise "
                   "kernel.perf_event_max_sample_rate\n");
  }

  // Throttled time as a share of the time the counters existed (wall time per instance).
  static double ThrottledPercent(const RecordStats& stats) {
    double available = static_cast<double>(stats.wall_time_ns) *
                       static_cast<double>(std::max<uint64_t>(stats.counter_instances, 1));
    return available > 0 ? 100.0 * static_cast<double>(stats.throttled_ns) / available : 0.0;
  }

  static int WorkloadExitCode(int wait_status) {
    if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
    if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
    return kExitOk;
  }

  std::vector<std::string> events_;
  std::string metrics_;
  std::string cpu_;
  std::string burst_;
  bool no_member_samples_ = false;
  std::vector<std::string> planning_notes_;
  bool off_cpu_ = false;
  bool keep_stacks_ = false;
  std::string frequency_text_;  // -F: a number or "max"; empty: 4000
  uint64_t period_ = 0;
  bool frame_pointers_ = false;
  std::string call_graph_;
  bool branch_any_ = false;
  std::string branch_filter_;
  bool user_only_ = false;
  bool kernel_only_ = false;
  size_t mmap_pages_ = 128;
  std::string output_ = kDefaultOutput;
  std::string written_;  // the file recorded into: output_, or a private one for -o -
  std::string pids_;
  std::string tids_;
  bool system_wide_ = false;
  bool quiet_ = false;
  double duration_ = 0;
  std::vector<std::string> command_;
  const CLI::App* app_ = nullptr;
};

}  // namespace

std::unique_ptr<Subcommand> MakeRecordCommand() { return std::make_unique<RecordCommand>(); }

}  // namespace tprof
