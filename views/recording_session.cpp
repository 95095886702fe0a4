#include "views/recording_session.h"

#include <linux/perf_event.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <system_error>

#include "core/analysis/short_stack_census.h"
#include "core/format/output_file.h"
#include "core/format/profile_writer.h"
#include "core/format/symbol_section.h"
#include "core/format/unwind_pass.h"
#include "core/metrics/metric_table.h"
#include "core/model/metric_expression.h"
#include "pmu/host_info.h"
#include "symbolize/dwarf_unwinder.h"
#include "symbolize/symbolizer.h"
#include "views/opened_profile.h"

namespace tprof {
namespace {

// A notice stays on one line however the kernel's reason was worded.
std::string OneLine(std::string text) {
  while (!text.empty() && text.back() == '\n') text.pop_back();
  for (char& c : text)
    if (c == '\n') c = ' ';
  return text;
}

// Throttled time as a share of the time the counters existed (wall time per instance).
double ThrottledPercent(const RecordStats& stats) {
  double available = static_cast<double>(stats.wall_time_ns) *
                     static_cast<double>(std::max<uint64_t>(stats.counter_instances, 1));
  return available > 0 ? 100.0 * static_cast<double>(stats.throttled_ns) / available : 0.0;
}

// DWARF mode (and -g, which mends its chains) records stack copies to a side file first and
// unwinds them once the workload has ended, so unwinding costs the workload nothing; only the
// addresses are kept.
bool RecordsStackCopies(const SamplingOptions& sampling, const std::vector<EventDesc>& events) {
  return sampling.call_graph == CallGraphMode::kDwarf ||
         (sampling.call_graph == CallGraphMode::kFramePointer &&
          std::any_of(events.begin(), events.end(),
                      [](const EventDesc& e) { return e.sample_stack_user != 0; }));
}

class RecordingSession {
 public:
  RecordingSession(const RecordRequest& request, const ViewMessages& messages)
      : request_(request), messages_(messages), options_(request.options) {}

  Result<RecordOutcome> Run();

 private:
  Status PrepareOutput();
  Result<std::unique_ptr<Workload>> Launch() const;
  Metadata RecordingMetadata() const;
  Result<std::vector<EventDesc>> OpenRecorder(pid_t pid, std::unique_ptr<Recorder>* recorder);
  Result<uint64_t> FinishProfile(ProfileWriter& writer, Symbolizer& symbolizer,
                                 const std::string& recorded, bool stack_copies,
                                 uint64_t wall_time_ns, uint64_t checked_while_recording,
                                 const std::string& incomplete);
  Result<uint64_t> UnwindAndEmbed(const std::string& stacks, FrameResolver& symbolizer,
                                  uint64_t checked_while_recording) const;
  Status CopyToStream() const;
  void SaySummary(const std::vector<EventDesc>& events, const RecordStats& stats, uint64_t bytes,
                  bool unwound, uint64_t finish_ns) const;
  void SayWarnings(const RecordStats& stats) const;
  void SayStackHint() const;
  void Notice(const std::string& text) const { messages_.Notice(text); }
  void Note(const std::string& text) const {
    if (!request_.quiet) messages_.Note(text);
  }
  // The output as the user named it.
  std::string OutputName() const {
    return request_.output == "-" ? "standard output" : request_.output;
  }

  const RecordRequest& request_;
  const ViewMessages& messages_;
  RecordOptions options_;
  std::string written_;  // the file recorded into: the output, or a private one for a stream
  // Where the output is a stream: the private directory recorded into, the stream's name
  // ("standard output" or its path), and the stream (empty for standard output).
  std::optional<ScratchDirectory> spool_;
  std::string stream_name_;
  std::optional<StreamOutput> stream_;
};

Result<RecordOutcome> RecordingSession::Run() {
  if (Status prepared = PrepareOutput(); !prepared.ok()) return prepared.error();
  auto workload = Launch();
  if (!workload.ok()) return workload.error();
  const pid_t pid = *workload ? (*workload)->pid() : -1;
  std::unique_ptr<Recorder> recorder;
  auto events = OpenRecorder(pid, &recorder);
  if (!events.ok()) return events.error();

  const bool stack_copies = RecordsStackCopies(options_.sampling, events.value());
  const std::string recorded = stack_copies ? written_ + ".stacks" : written_;
  auto writer = ProfileWriter::CreateFile(recorded, RecordingMetadata(), events.value());
  if (!writer.ok()) return writer.error();
  const std::string incomplete = spool_ ? "; nothing was written to " + stream_name_
                                        : "; the profile is incomplete (" + recorded + ".partial)";

  // -g's copies that the pass after the workload would not need are dropped as they are
  // written (--keep-stacks keeps them all, as asked).
  auto trimming_unwinder = std::make_unique<DwarfUnwinder>();
  auto trimmer = std::make_unique<StackCopyTrimmer>(*trimming_unwinder);
  if (stack_copies && options_.sampling.call_graph == CallGraphMode::kFramePointer &&
      !request_.keep_stacks)
    recorder->TrimStackCopies(trimmer.get());
  auto stats = recorder->Run(*writer.value(), workload->get());
  const uint64_t checked_while_recording = trimmer->trimmed();
  if (!stats.ok() && *workload && !(*workload)->started()) {
    // The command never ran (not found, not executable): there is no profile, incomplete or
    // not, and a .partial file would say there were one.
    writer.value().reset();
    if (!spool_) ::unlink((recorded + ".partial").c_str());
    return Error(stats.error().message() + "; nothing was recorded");
  }
  if (!stats.ok()) return Error(stats.error().message() + incomplete);
  // The ring buffers and events go before the symbol step, where the recorder's memory peaks,
  // and so do the trimmer's binaries (the pass after the workload opens its own).
  recorder.reset();
  trimmer.reset();
  trimming_unwinder.reset();
  SymbolizerOptions symbolizer_options;
  symbolizer_options.on_note = messages_.symbol_note;
  Symbolizer symbolizer(symbolizer_options);
  // Timed so the summary shows what symbolizing (and DWARF unwinding) adds after the workload.
  const uint64_t finish_start_ns = MonotonicNowNs();
  auto bytes = FinishProfile(*writer.value(), symbolizer, recorded, stack_copies,
                             stats->wall_time_ns, checked_while_recording, incomplete);
  if (!bytes.ok()) return bytes.error();
  if (Status copied = CopyToStream(); !copied.ok()) return copied.error();
  if (!request_.quiet)
    SaySummary(events.value(), stats.value(), *bytes, stack_copies,
               MonotonicNowNs() - finish_start_ns);
  SayWarnings(stats.value());
  if (options_.sampling.call_graph == CallGraphMode::kFramePointer && !request_.quiet)
    SayStackHint();
  return RecordOutcome{!request_.command.empty(), stats->wait_status};
}

// Where the recording goes: a stream (standard output, or an output that is a device, FIFO or
// socket, ResolveOutputTarget) is recorded into a private directory, the symbol and unwinding
// passes read the file back, and it is copied to the stream once complete.
Status RecordingSession::PrepareOutput() {
  if (request_.output == "-") {
    stream_name_ = "standard output";
  } else {
    auto target = ResolveOutputTarget(request_.output);
    if (!target.ok()) return target.error();
    if (target->kind == OutputTarget::Kind::kStream) {
      auto opened = StreamOutput::Open(target->path);
      if (!opened.ok()) return opened.error();
      stream_.emplace(std::move(opened).value());
      stream_name_ = target->path;
    } else {
      written_ = target->path;  // a link's target: the link stays
    }
  }
  if (!stream_name_.empty()) {
    auto created = ScratchDirectory::Create("tprof-record-");
    if (!created.ok()) return created.error();
    spool_.emplace(std::move(created).value());
    written_ = spool_->path() + "/profile.tprof";
  }
  return Status::Ok();
}

// The command to profile, forked and waiting to exec until the recorder starts it (none for
// -p, -t and -a alone). Its standard output goes to standard error where the profile is
// written to standard output.
Result<std::unique_ptr<Workload>> RecordingSession::Launch() const {
  if (request_.command.empty()) return std::unique_ptr<Workload>();
  auto created = Workload::Create(request_.command, /*stdout_to_stderr=*/spool_.has_value());
  if (!created.ok()) return created.error();
  return std::make_unique<Workload>(std::move(created).value());
}

Metadata RecordingSession::RecordingMetadata() const {
  Metadata metadata;
  FillHostMetadata(&metadata);
  metadata.command_line = request_.command;
  metadata.start_time_unix_ns = RealtimeNowNs();
  metadata.start_timestamp = MonotonicNowNs();
  return metadata;
}

// The recorder with its events open, for `pid` (-1: the targets in the options).
Result<std::vector<EventDesc>> RecordingSession::OpenRecorder(pid_t pid,
                                                              std::unique_ptr<Recorder>* recorder) {
  *recorder = std::make_unique<Recorder>(options_);
  auto events = (*recorder)->Open(pid);
  if (!events.ok() && request_.cycles_may_fall_back) {
    std::string fallback =
        options_.target.kind == RecordTarget::Kind::kSystemWide ? "cpu-clock" : "task-clock";
    const EventSpec& cycles = options_.groups[0].events[0];
    if (cycles.exclude_kernel && !cycles.exclude_user) fallback += ":u";
    if (cycles.exclude_user && !cycles.exclude_kernel) fallback += ":k";
    if (!request_.quiet)
      Notice(OneLine(events.error().message()) + "; sampling '" + fallback +
             "' instead (-q: quiet)");
    options_.groups = ParseEventList(fallback).value();
    *recorder = std::make_unique<Recorder>(options_);
    events = (*recorder)->Open(pid);
  }
  if (!events.ok()) return events;
  for (const std::string& note : request_.planning_notes) Note(note);
  for (const std::string& note : (*recorder)->notes()) Note(note);
  if ((*recorder)->burst_mode() == "kernel" && !request_.quiet)
    Notice("burst sampling: kernel mode (hf_sample_period)");
  return events;
}

// The recorded file finished: symbols embedded, or the stack copies unwound and embedded.
// Returns the profile's size; an error says the profile is incomplete (`incomplete`).
Result<uint64_t> RecordingSession::FinishProfile(ProfileWriter& writer, Symbolizer& symbolizer,
                                                 const std::string& recorded, bool stack_copies,
                                                 uint64_t wall_time_ns,
                                                 uint64_t checked_while_recording,
                                                 const std::string& incomplete) {
  Status finished = stack_copies ? writer.Finish({wall_time_ns, MonotonicNowNs(), {}})
                                 : EmbedSymbolsAndFinish(writer, recorded, symbolizer,
                                                         {wall_time_ns, MonotonicNowNs(), {}});
  if (!finished.ok()) return Error(finished.error().message() + incomplete);
  if (!stack_copies) return writer.bytes_written();
  return UnwindAndEmbed(recorded, symbolizer, checked_while_recording);
}

// DWARF mode: unwinds OUTPUT.stacks into OUTPUT with embedded symbols; returns its size.
Result<uint64_t> RecordingSession::UnwindAndEmbed(const std::string& stacks,
                                                  FrameResolver& symbolizer,
                                                  uint64_t checked_while_recording) const {
  DwarfUnwinder unwinder;
  const std::string unwound = written_ + ".unwound";
  auto stats =
      UnwindProfile(stacks, unwound, unwinder, request_.keep_stacks, checked_while_recording);
  if (!stats.ok()) return stats.error().WithContext("unwinding " + stacks);
  auto embedded = EmbedSymbols(unwound, written_, symbolizer);
  std::remove(unwound.c_str());
  std::remove((unwound + ".old").c_str());
  if (!embedded.ok()) return embedded.error();
  std::remove(stacks.c_str());
  std::remove((stacks + ".old").c_str());
  // Stacks cut short are a warning, which -q keeps to its first line (the counts); complete
  // ones are part of the summary, which -q drops.
  const std::vector<std::string> lines = DescribeUnwinding(stats.value());
  if (!request_.quiet) {
    for (const std::string& line : lines) Notice(OutputName() + ": unwinding: " + line);
  } else if (stats->incomplete() && !lines.empty()) {
    // -g's chains the walk could not confirm are as the kernel recorded them, not cut short:
    // that is for the summary and the report's header, which -q keeps quiet.
    Notice(OutputName() + ": unwinding: " + lines.front() + " (without -q: why)");
  }
  if (request_.keep_stacks && !request_.quiet) Notice("stack copies kept in " + OutputName());
  struct stat st {};
  ::stat(written_.c_str(), &st);
  return static_cast<uint64_t>(st.st_size);
}

// A stream's finished profile copied to it.
Status RecordingSession::CopyToStream() const {
  if (!spool_) return Status::Ok();
  // A reader that stops early (`| head`) is an error to report, not a signal to die of.
  ::signal(SIGPIPE, SIG_IGN);
  return stream_ ? stream_->CopyFrom(written_) : CopyFileTo(written_, STDOUT_FILENO, stream_name_);
}

void RecordingSession::SaySummary(const std::vector<EventDesc>& events, const RecordStats& stats,
                                  uint64_t bytes, bool unwound, uint64_t finish_ns) const {
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
  // The event list and the output's name have no bound: they are put around the numbers.
  char counts[200], timing[300];
  std::snprintf(counts, sizeof counts,
                " samples; %llu lost (%.2f%%); throttled %llu times (%.2f%% of the time); wrote "
                "%.1f KiB to ",
                static_cast<unsigned long long>(stats.lost_samples), percent(stats.lost_samples),
                static_cast<unsigned long long>(stats.throttle_events), ThrottledPercent(stats),
                static_cast<double>(bytes) / 1024.0);
  std::snprintf(
      timing, sizeof timing,
      " in %.2f s (symbols %s in %.2f s); recorder CPU %.3f s while recording, %.2f us per "
      "sample%s",
      static_cast<double>(stats.wall_time_ns) / 1e9, unwound ? "unwound and embedded" : "embedded",
      static_cast<double>(finish_ns) / 1e9, static_cast<double>(stats.recorder_cpu_ns) / 1e9,
      samples ? static_cast<double>(stats.recorder_cpu_ns) / 1e3 / static_cast<double>(samples)
              : 0.0,
      stats.interrupted        ? "; interrupted"
      : stats.duration_reached ? "; --duration reached"
                               : "");
  messages_.Summary(per_event + counts + OutputName() + timing);
}

void RecordingSession::SayWarnings(const RecordStats& stats) const {
  if (stats.lost_samples) Notice("samples were lost: raise -m (ring buffer pages) or lower -F");
  if (stats.throttle_events)
    Notice("the kernel throttled sampling: lower -F or raise kernel.perf_event_max_sample_rate");
}

// Frame-pointer stacks that stop after a frame or two: said once, with the remedy. Reads the
// profile just written (its embedded symbols name the modules). Best effort: the profile is
// complete by now, and a read-back that fails, even for a thread the system would not start
// (std::system_error), must not turn a recording that succeeded into a failure.
void RecordingSession::SayStackHint() const {
  try {
    auto opened = OpenedProfile::Open(written_, {{}, {}, nullptr, messages_});
    if (!opened.ok()) return;
    ShortStackCensus census((*opened)->resolver());
    if (!(*opened)->source().ReadRecords(census).ok()) return;
    if (auto hint = ShortStackHint(census.Counts())) Note(*hint);
  } catch (const std::system_error&) {
  }
}

}  // namespace

Result<std::vector<EventGroup>> MetricTableGroups(const std::string& metrics,
                                                  const std::string& cpu) {
  if (metrics == "ipc") return ParseEventList("{cycles,instructions}:S");
  auto table = cpu.empty() ? TableForCpu(DetectCpu(), BuiltinMetricTables())
                           : FindMetricTable(cpu, BuiltinMetricTables());
  if (!table.ok()) return table.error();
  auto selected = table.value()->Select(metrics);
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

Result<RecordOutcome> RecordProfile(const RecordRequest& request, const ViewMessages& messages) {
  return RecordingSession(request, messages).Run();
}

}  // namespace tprof
