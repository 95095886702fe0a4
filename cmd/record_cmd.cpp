// tprof record: samples a command, running processes or the whole system into a .tprof profile.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "cmd/cli_support.h"
#include "pmu/host_info.h"
#include "pmu/recorder.h"
#include "views/recording_session.h"

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
    if (output_ == "-" && ::isatty(STDOUT_FILENO))
      return Usage(
          "-o -: standard output is a terminal; redirect it to a file or pipe it to "
          "'tprof report -i -'");
    RecordRequest request;
    request.options = std::move(options).value();
    request.command = command_;
    request.output = output_;
    request.cycles_may_fall_back = AsksOnlyForCycles();
    request.keep_stacks = keep_stacks_;
    request.quiet = quiet_;
    request.planning_notes = planning_notes_;
    auto recorded = RecordProfile(request, CommandMessages(name()));
    if (!recorded.ok()) return ReportError(name(), recorded.error());
    return recorded->launched ? WorkloadExitCode(recorded->wait_status) : kExitOk;
  }

 private:
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
    if (frame_pointers_) s.call_graph = CallGraphMode::kFramePointer;
    if (!call_graph_.empty())
      if (Status mode = ParseCallGraph(call_graph_, s); !mode.ok()) return mode.error();
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
      auto groups = MetricTableGroups(metrics_, cpu_);
      if (!groups.ok()) return groups.error();
      options.groups = std::move(groups).value();
    } else {
      std::string event_text;
      for (const std::string& e : events_) event_text += (event_text.empty() ? "" : ",") + e;
      auto groups = ParseEventList(event_text.empty() ? "cycles" : event_text);
      if (!groups.ok()) return groups.error();
      options.groups = std::move(groups).value();
    }
    if (!burst_.empty())
      if (Status burst = ParseBurst(burst_, s); !burst.ok()) return burst.error();
    if (!no_member_samples_) {
      MemberSampling members = PlanMemberSampling(options.groups);
      for (EventGroup& lone : members.added) options.groups.push_back(std::move(lone));
      planning_notes_ = std::move(members.notes);
    }

    if (Status target = SetTarget(&options.target); !target.ok()) return target.error();
    return options;
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

  int Usage(const std::string& message) { return UsageError(name(), message); }

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
