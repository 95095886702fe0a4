#include "core/source/profile_source.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <future>
#include <unordered_map>

#include "absl/container/flat_hash_map.h"
#include "core/base/file_bytes.h"
#include "core/format/format_spec.h"
#include "core/format/profile_reader.h"
#include "core/format/symbol_section.h"
#include "core/perfdata/folded_parser.h"
#include "core/perfdata/perf_data_reader.h"
#include "core/perfdata/perf_script_parser.h"

namespace tprof {
namespace {

class TprofSource : public ProfileSource {
 public:
  TprofSource(std::shared_ptr<const FileBytes> bytes, ProfileReader reader, SourceOptions options)
      : bytes_(std::move(bytes)), reader_(std::move(reader)) {
    // A damaged symbols chunk only costs the names: the live symbolizer can still answer. The
    // section is read on a thread of its own while the records are (it takes a large profile
    // tens of ms); the first lookup waits for it. embedded_, declared last, is destroyed
    // first, and its future waits for the thread: reader_ outlives the thread's reading.
    if (reader_.HasChunkOfKind(static_cast<uint16_t>(format::ChunkKind::kSymbols)))
      embedded_ = std::make_unique<EmbeddedSymbolResolver>(
          std::async(std::launch::async,
                     [this] {
                       auto table = ReadSymbolSection(reader_);
                       return table.ok() ? std::move(table).value() : SymbolTable();
                     }),
          options.symbol_fallback);
  }
  // The symbols section's thread reads reader_ through `this`.
  TprofSource(const TprofSource&) = delete;
  TprofSource& operator=(const TprofSource&) = delete;

  FrameResolver* embedded_frames() override { return embedded_.get(); }
  ProfileFormat format() const override { return ProfileFormat::kTprof; }
  const Metadata& metadata() const override { return reader_.metadata(); }
  const std::vector<EventDesc>& events() const override { return reader_.events(); }
  Result<SourceSummary> ReadRecords(RecordVisitor& visitor) override {
    auto read = reader_.ReadRecords(visitor);
    if (!read.ok()) return read.error();
    SourceSummary s;
    s.complete = read->complete;
    s.records = read->records_read;
    s.samples = read->samples_read;
    s.warning = read->warning;
    // Stacks unwound when recorded (--call-graph dwarf) say how far they were walked, as a
    // perf.data file's do when they are unwound on reading.
    if (reader_.recorded_unwinding()) s.unwinding = *reader_.recorded_unwinding();
    return s;
  }

 private:
  std::shared_ptr<const FileBytes> bytes_;
  ProfileReader reader_;
  std::unique_ptr<EmbeddedSymbolResolver> embedded_;
};

class PerfDataSource : public ProfileSource {
 public:
  PerfDataSource(std::shared_ptr<const FileBytes> bytes, PerfDataReader reader,
                 SourceOptions options)
      : bytes_(std::move(bytes)), reader_(std::move(reader)), options_(options) {}
  ProfileFormat format() const override { return ProfileFormat::kPerfData; }
  const Metadata& metadata() const override { return reader_.metadata(); }
  const std::vector<EventDesc>& events() const override { return reader_.events(); }
  Result<SourceSummary> ReadRecords(RecordVisitor& visitor) override {
    auto read = reader_.ReadRecords(visitor, options_.unwinder, bytes_.get());
    if (!read.ok()) return read.error();
    SourceSummary s;
    s.records = read->records;
    s.samples = read->samples;
    s.unwinding = read->unwinding;
    if (read->unknown_id_samples)
      s.warning = std::to_string(read->unknown_id_samples) +
                  " samples name an event id the file does not describe; skipped, as perf does";
    if (read->lbr_unstitched)
      s.warning += (s.warning.empty() ? "" : "; ") + std::to_string(read->lbr_unstitched) + " of " +
                   std::to_string(read->lbr_unstitched + read->lbr_stitched) +
                   " --call-graph lbr samples in user code had no call-stack entries: their "
                   "stacks are the sampled function alone";
    if (read->off_cpu_unended)
      s.warning += (s.warning.empty() ? "" : "; ") + std::to_string(read->off_cpu_unended) +
                   " of simpleperf's " +
                   std::to_string(read->off_cpu_intervals + read->off_cpu_unended) +
                   " switch-outs have no later sample of their thread to end them (a thread's "
                   "last); their off-CPU time is not counted, as simpleperf does not count it";
    if (!read->damage.empty()) {
      // Read as far as the records go: the rows are those of every sample before the damage.
      s.complete = false;
      std::string cut = "read up to the damage: " + read->damage + "; " +
                        std::to_string(read->records) + " records (" +
                        std::to_string(read->samples) + " samples) before it, " +
                        std::to_string(read->bytes_not_read) + " bytes of data after it not read";
      if (reader_.declared_data_end())
        cut +=
            "; the file ends inside its data section, so the sections after the data (event "
            "names, build ids, the command line) are missing";
      s.warning += (s.warning.empty() ? "" : "; ") + cut;
    }
    if (read->unknown_type_records)
      s.warning += (s.warning.empty() ? "" : "; ") + std::to_string(read->unknown_type_records) +
                   " records of types this tprof does not know (a newer kernel's, or damage: the "
                   "first at byte offset " +
                   std::to_string(read->first_unknown_type_offset) + ") skipped";
    if (reader_.features_cut_at()) {
      s.complete = false;
      s.warning +=
          (s.warning.empty() ? "" : "; ") +
          std::string("the file ends among the feature sections after its data (at byte ") +
          std::to_string(reader_.features_cut_at()) +
          "): every sample was read, but some of what they describe (event names, "
          "build ids, the command line) is missing";
    }
    if (read->aux_records && !read->aux_trace_records) {
      // The trace was announced but its data is not in the file (simpleperf's ETM recordings
      // whose AUX data was not kept): say so rather than show an empty profile.
      const std::string missing =
          "the file announces " + std::to_string(read->aux_records) +
          " buffers of hardware trace (PERF_RECORD_AUX: Arm CoreSight ETM, Intel PT, Arm SPE) "
          "but holds none of their data (no AUXTRACE records); it found " +
          std::to_string(read->samples) + " samples";
      if (read->samples == 0) return Error(missing);
      s.warning += (s.warning.empty() ? "" : "; ") + missing + ", which are what it shows";
    }
    if (read->aux_trace_records) {
      const std::string trace =
          "the file holds " + std::to_string(read->aux_trace_bytes) +
          " bytes of hardware trace (AUX area data, such as Arm CoreSight ETM or Intel PT) in " +
          std::to_string(read->aux_trace_records) +
          " records, which tprof does not decode; it found " + std::to_string(read->samples) +
          " samples";
      // Nothing else to show: an answer made of no rows would look like an empty program.
      if (read->samples == 0) return Error(trace);
      s.warning += (s.warning.empty() ? "" : "; ") + trace + ", which are what it shows";
    }
    return s;
  }
  std::string RecordedBuildId(const std::string& path) const override {
    const auto& ids = reader_.features().build_ids;
    auto it = ids.find(path);
    return it == ids.end() ? "" : it->second;
  }

 private:
  std::shared_ptr<const FileBytes> bytes_;
  PerfDataReader reader_;
  SourceOptions options_;
};

class TextSource : public ProfileSource {
 public:
  TextSource(ProfileFormat format, TextProfile profile)
      : format_(format), profile_(std::move(profile)) {}
  ProfileFormat format() const override { return format_; }
  const Metadata& metadata() const override { return profile_.metadata; }
  const std::vector<EventDesc>& events() const override { return profile_.events; }
  Result<SourceSummary> ReadRecords(RecordVisitor& visitor) override {
    // Names come with each sample in text; a comm record is sent whenever a thread's changes.
    std::unordered_map<uint32_t, uint32_t> current;
    SourceSummary s;
    for (size_t i = 0; i < profile_.samples.size(); ++i) {
      const Sample& sample = profile_.samples[i];
      uint32_t comm = profile_.sample_comm[i];
      auto [it, inserted] = current.try_emplace(sample.tid, comm);
      if (inserted || it->second != comm) {
        it->second = comm;
        CommRecord c;
        c.time = sample.time;
        c.pid = sample.pid;
        c.tid = sample.tid;
        c.comm = profile_.comms[comm];
        visitor.OnComm(c);
        ++s.records;
      }
      visitor.OnSample(sample);
      ++s.records;
      ++s.samples;
    }
    if (profile_.skipped_lines)
      s.warning = std::to_string(profile_.skipped_lines) + " lines were not part of a sample";
    return s;
  }
  FrameResolver* embedded_frames() override { return &profile_.frames; }

 private:
  ProfileFormat format_;
  TextProfile profile_;
};

// perf script text read as it is replayed, a sample at a time: the text is scanned once for
// what a report needs before its first sample (the events, the CPUs, whether pids are known),
// then parsed on each replay, so that memory grows with the distinct frames, not the text
// (`perf script` prints some 4 KB a sample with a callchain).
class PerfScriptSource : public ProfileSource {
 public:
  PerfScriptSource(std::shared_ptr<const FileBytes> bytes, PerfScriptScan scan)
      : bytes_(std::move(bytes)), scan_(std::move(scan)), metadata_(scan_.ToMetadata()) {}
  ProfileFormat format() const override { return ProfileFormat::kPerfScript; }
  const Metadata& metadata() const override { return metadata_; }
  const std::vector<EventDesc>& events() const override { return scan_.events; }
  Result<SourceSummary> ReadRecords(RecordVisitor& visitor) override {
    // Names come with each sample in text; a comm record is sent whenever a thread's changes.
    class Replay : public PerfScriptSampleSink {
     public:
      explicit Replay(RecordVisitor& visitor) : visitor_(visitor) {}
      void OnSample(Sample& sample, std::string_view comm) override {
        auto [it, inserted] = current_.try_emplace(sample.tid, comm);
        if (inserted || it->second != comm) {
          it->second.assign(comm);
          CommRecord c;
          c.time = sample.time;
          c.pid = sample.pid;
          c.tid = sample.tid;
          c.comm = std::string(comm);
          visitor_.OnComm(c);
          ++summary.records;
        }
        visitor_.OnSample(sample);
        ++summary.records;
        ++summary.samples;
      }
      SourceSummary summary;

     private:
      RecordVisitor& visitor_;
      absl::flat_hash_map<uint32_t, std::string> current_;
    };
    Replay replay(visitor);
    PerfScriptParser parser(&frames_);
    auto scan = parser.Parse(bytes_->view(), &replay, bytes_.get());
    if (!scan.ok()) return scan.error();
    if (scan->skipped_lines)
      replay.summary.warning =
          std::to_string(scan->skipped_lines) + " lines were not part of a sample";
    if (!scan->cut.empty()) {
      replay.summary.complete = false;
      replay.summary.warning += (replay.summary.warning.empty() ? "" : "; ") + scan->cut;
    }
    if (!scan->unended.empty())
      replay.summary.warning += (replay.summary.warning.empty() ? "" : "; ") + scan->unended;
    return replay.summary;
  }
  FrameResolver* embedded_frames() override { return &frames_; }

 private:
  std::shared_ptr<const FileBytes> bytes_;
  PerfScriptScan scan_;
  Metadata metadata_;
  NamedFrameTable frames_;
};

Result<std::unique_ptr<ProfileSource>> OpenInput(std::shared_ptr<const FileBytes> bytes,
                                                 SourceOptions options) {
  std::string_view view = bytes->view();
  auto format = SniffProfileFormat(view.substr(0, 1 << 14));
  if (!format.ok()) return format.error();
  switch (*format) {
    case ProfileFormat::kTprof: {
      auto reader = ProfileReader::OpenBytes(view);
      if (!reader.ok()) return reader.error();
      return std::unique_ptr<ProfileSource>(
          new TprofSource(std::move(bytes), std::move(reader).value(), options));
    }
    case ProfileFormat::kPerfData: {
      auto reader = PerfDataReader::Open(view);
      if (!reader.ok()) return reader.error();
      return std::unique_ptr<ProfileSource>(
          new PerfDataSource(std::move(bytes), std::move(reader).value(), options));
    }
    case ProfileFormat::kPerfScript: {
      auto scan = PerfScriptParser(nullptr).Parse(view, nullptr, bytes.get());
      if (!scan.ok()) return scan.error();
      return std::unique_ptr<ProfileSource>(
          new PerfScriptSource(std::move(bytes), std::move(scan).value()));
    }
    case ProfileFormat::kFolded: {
      auto profile = ParseFolded(view);
      if (!profile.ok()) return profile.error();
      return std::unique_ptr<ProfileSource>(
          new TextSource(ProfileFormat::kFolded, std::move(profile).value()));
    }
  }
  return Error("unknown format");
}

}  // namespace

const char* ProfileFormatName(ProfileFormat format) {
  switch (format) {
    case ProfileFormat::kTprof:
      return ".tprof";
    case ProfileFormat::kPerfData:
      return "perf.data";
    case ProfileFormat::kPerfScript:
      return "perf script text";
    case ProfileFormat::kFolded:
      return "folded stacks";
  }
  return "?";
}

Result<ProfileFormat> SniffProfileFormat(std::string_view head) {
  if (ProfileReader::LooksLikeTprof(head)) return ProfileFormat::kTprof;
  if (PerfDataReader::LooksLikePerfData(head)) return ProfileFormat::kPerfData;
  if (head.empty()) return Error("empty input");
  if (head.find('\0') != std::string_view::npos)
    return Error("not a tprof profile or a perf.data file (unrecognised binary content)");
  if (LooksLikeFolded(head)) return ProfileFormat::kFolded;
  if (LooksLikePerfScript(head)) return ProfileFormat::kPerfScript;
  return Error("not a tprof profile, perf.data file, perf script text or folded stacks");
}

Result<std::unique_ptr<ProfileSource>> ProfileSource::OpenFile(const std::string& path,
                                                               SourceOptions options) {
  auto bytes = FileBytes::Read(path);
  if (!bytes.ok()) return bytes.error();
  auto source = OpenInput(std::move(bytes).value(), options);
  if (!source.ok()) return source.error().WithContext(path);
  return source;
}

Result<std::unique_ptr<ProfileSource>> ProfileSource::OpenBytes(std::string bytes,
                                                                SourceOptions options) {
  return OpenInput(FileBytes::FromString(std::move(bytes)), options);
}

}  // namespace tprof
