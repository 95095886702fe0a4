#include "core/format/profile_reader.h"

#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/base/file_bytes.h"
#include "core/format/chunk.h"
#include "core/format/chunk_decode_thread.h"
#include "core/format/format_spec.h"
#include "core/format/profile_json.h"
#include "core/format/record_codec.h"
#include "core/model/record_batch.h"
#include "core/model/unwind_statistics_json.h"

namespace tprof {

namespace {

std::string ChunkWhere(uint64_t offset) { return "chunk at offset " + std::to_string(offset); }

// Walks the chunks of a file in order, verifying framing and checksums. The callback gets each
// chunk's header, offset and stored payload; it may stop the walk by returning false. A chunk
// whose magic or checksum is wrong ends the walk as the file's end would: the chunks before it
// are good, and `truncation` says where the damage starts.
// With `verify_only`, only the checksums of chunks of that kind are checked: a caller that
// reads those alone (the symbols section, before the records) leaves the others' to the walk
// that reads them, rather than hashing every records chunk twice.
struct ChunkWalk {
  bool complete = false;
  uint64_t chunks = 0;
  uint64_t end_of_good_data = 0;  // offset just past the last verified chunk (or footer)
  std::string truncation;         // empty unless the file ends early (or is damaged)
  bool damaged = false;           // a chunk's magic or checksum is wrong (not the file's end)
};

using ChunkCallback =
    std::function<Result<bool>(const ChunkHeader&, uint64_t offset, std::string_view stored)>;

Result<ChunkWalk> WalkChunks(std::string_view bytes, const ChunkCallback& callback,
                             std::optional<format::ChunkKind> verify_only = std::nullopt) {
  ChunkWalk walk;
  const auto* base = reinterpret_cast<const uint8_t*>(bytes.data());
  uint64_t offset = format::kFileHeaderSize;
  walk.end_of_good_data = offset;
  while (offset < bytes.size()) {
    ChunkHeader header;
    size_t remaining = bytes.size() - offset;
    switch (ParseChunkHeader(base + offset, remaining, &header)) {
      case ChunkHeaderStatus::kTruncated:
        walk.truncation = "the file ends inside the header of the " + ChunkWhere(offset);
        return walk;
      case ChunkHeaderStatus::kBadMagic:
        // A crash can leave a zero-filled tail (the size was extended, the data never landed).
        if (std::all_of(bytes.begin() + static_cast<std::ptrdiff_t>(offset), bytes.end(),
                        [](char c) { return c == 0; })) {
          walk.truncation = "the file ends in " + std::to_string(remaining) +
                            " zero bytes from offset " + std::to_string(offset);
          return walk;
        }
        // Damage (a bad sector, a stray write): what came before is read, the rest is lost.
        walk.truncation = ChunkWhere(offset) + ": bad chunk magic (the file is damaged from here)";
        walk.damaged = true;
        return walk;
      case ChunkHeaderStatus::kOk:
        break;
    }
    if (header.stored_size > remaining - format::kChunkHeaderSize) {
      walk.truncation = "the file ends inside the " + ChunkWhere(offset) + " (" +
                        std::to_string(remaining - format::kChunkHeaderSize) + " of " +
                        std::to_string(header.stored_size) + " payload bytes present)";
      return walk;
    }
    std::string_view stored(bytes.data() + offset + format::kChunkHeaderSize, header.stored_size);
    if ((!verify_only || header.kind == *verify_only) &&
        !ChunkChecksumMatches(base + offset, stored, header.checksum)) {
      walk.truncation = ChunkWhere(offset) + ": checksum mismatch (the file is damaged from here)";
      walk.damaged = true;
      return walk;
    }
    ++walk.chunks;
    uint64_t next = offset + format::kChunkHeaderSize + header.stored_size;
    auto keep_going = callback(header, offset, stored);
    if (!keep_going.ok()) return keep_going.error().WithContext(ChunkWhere(offset));
    walk.end_of_good_data = next;
    if (header.kind == format::ChunkKind::kTrailer) {
      if (bytes.size() - next < format::kFooterSize) {
        walk.truncation = "the file ends inside its footer";
        return walk;
      }
      uint64_t footer_offset;
      std::memcpy(&footer_offset, bytes.data() + next, 8);
      if (std::memcmp(bytes.data() + next + 8, format::kFooterMagic.data(), 8) != 0 ||
          footer_offset != offset)
        return Error("footer at offset " + std::to_string(next) + " is damaged");
      if (bytes.size() != next + format::kFooterSize)
        return Error("unexpected " + std::to_string(bytes.size() - next - format::kFooterSize) +
                     " bytes after the footer at offset " + std::to_string(next));
      walk.complete = true;
      walk.end_of_good_data = bytes.size();
      return walk;
    }
    if (!keep_going.value()) return walk;
    offset = next;
  }
  walk.truncation = "the file has no trailer (the recording did not finish)";
  return walk;
}

Result<nlohmann::json> ParseJsonChunk(ChunkDecompressor& decompressor, const ChunkHeader& header,
                                      std::string_view stored) {
  auto raw = decompressor.Decompress(header, stored);
  if (!raw.ok()) return raw.error();
  auto json = nlohmann::json::parse(raw.value(), nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return Error("malformed JSON");
  return json;
}

}  // namespace

bool ProfileReader::LooksLikeTprof(std::string_view first_bytes) {
  return first_bytes.substr(0, format::kFileMagic.size()) == format::kFileMagic;
}

Result<ProfileReader> ProfileReader::OpenFile(const std::string& path) {
  auto bytes = FileBytes::Read(path);
  if (!bytes.ok()) return bytes.error();
  ProfileReader reader;
  reader.file_ = std::move(bytes).value();
  reader.bytes_ = reader.file_->view();
  Status status = reader.ReadHeader();
  if (!status.ok()) return status.error().WithContext(path);
  return reader;
}

Result<ProfileReader> ProfileReader::OpenBytes(std::string_view bytes) {
  ProfileReader reader;
  reader.bytes_ = bytes;
  Status status = reader.ReadHeader();
  if (!status.ok()) return status.error();
  return reader;
}

Status ProfileReader::ReadHeader() {
  if (bytes_.size() < format::kFileMagic.size() || !LooksLikeTprof(bytes_))
    return Error("not a tprof profile (bad magic)");
  if (bytes_.size() < format::kFileHeaderSize) return Error("file header is truncated");
  uint32_t checksum;
  std::memcpy(&major_, bytes_.data() + 8, 2);
  std::memcpy(&minor_, bytes_.data() + 10, 2);
  std::memcpy(&checksum, bytes_.data() + 20, 4);
#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION  // fuzz builds let mutations past the checksum
  if (XXH32(bytes_.data(), 20, 0) != checksum) return Error("file header is corrupt");
#endif
  if (major_ > format::kMajorVersion)
    return Error("format version " + std::to_string(major_) + "." + std::to_string(minor_) +
                 " is newer than this tprof reads (" + std::to_string(format::kMajorVersion) +
                 ".x); upgrade tprof");
  if (major_ < 1) return Error("format version 0 is not a released format");

  ChunkDecompressor decompressor;
  bool have_metadata = false;
  bool have_events = false;
  auto walk = WalkChunks(
      bytes_, [&](const ChunkHeader& header, uint64_t, std::string_view stored) -> Result<bool> {
        if (header.kind == format::ChunkKind::kMetadata && !have_metadata) {
          auto json = ParseJsonChunk(decompressor, header, stored);
          if (!json.ok()) return json.error().WithContext("metadata");
          auto metadata = MetadataFromJson(json.value());
          if (!metadata.ok()) return metadata.error();
          metadata_ = std::move(metadata).value();
          have_metadata = true;
        } else if (header.kind == format::ChunkKind::kEvents && !have_events) {
          auto json = ParseJsonChunk(decompressor, header, stored);
          if (!json.ok()) return json.error().WithContext("events");
          auto events = EventsFromJson(json.value());
          if (!events.ok()) return events.error();
          events_ = std::move(events).value();
          have_events = true;
        }
        return !(have_metadata && have_events);
      });
  if (!walk.ok()) return walk.error();
  // Without what the records mean there is nothing to read.
  if (walk->damaged && !(have_metadata && have_events)) return Error(walk->truncation);

  // The duration is only known at the end: take it from the trailer, found through the footer.
  if (bytes_.size() >= format::kFileHeaderSize + format::kFooterSize &&
      bytes_.substr(bytes_.size() - 8) == format::kFooterMagic) {
    uint64_t trailer_offset;
    std::memcpy(&trailer_offset, bytes_.data() + bytes_.size() - format::kFooterSize, 8);
    ChunkHeader header;
    const auto* base = reinterpret_cast<const uint8_t*>(bytes_.data());
    if (trailer_offset < bytes_.size() &&
        ParseChunkHeader(base + trailer_offset, bytes_.size() - trailer_offset, &header) ==
            ChunkHeaderStatus::kOk &&
        header.kind == format::ChunkKind::kTrailer &&
        header.stored_size <= bytes_.size() - trailer_offset - format::kChunkHeaderSize) {
      std::string_view stored(bytes_.data() + trailer_offset + format::kChunkHeaderSize,
                              header.stored_size);
      if (ChunkChecksumMatches(base + trailer_offset, stored, header.checksum)) {
        auto json = ParseJsonChunk(decompressor, header, stored);
        if (json.ok() && json->is_object()) {
          auto it = json->find("duration_ns");
          if (it != json->end() && it->is_number_unsigned()) metadata_.duration_ns = *it;
          if (auto u = json->find("unwinding"); u != json->end())
            recorded_unwinding_ = UnwindStatisticsFromJson(*u);
        }
      }
    }
  }
  return Status::Ok();
}

Result<ReadSummary> ProfileReader::ReadRecords(RecordVisitor& visitor, Visiting visiting) const {
  ReadSummary summary;
  summary.bytes_total = bytes_.size();
  ChunkDecompressor decompressor;
  struct CountingVisitor : RecordVisitor {
    RecordVisitor& inner;
    uint64_t samples = 0;
    explicit CountingVisitor(RecordVisitor& v) : inner(v) {}
    void OnSample(const Sample& s) override {
      ++samples;
      inner.OnSample(s);
    }
    void OnMmap(const MmapRecord& r) override { inner.OnMmap(r); }
    void OnComm(const CommRecord& r) override { inner.OnComm(r); }
    void OnTask(const TaskRecord& r) override { inner.OnTask(r); }
    void OnLost(const LostRecord& r) override { inner.OnLost(r); }
    void OnThrottle(const ThrottleRecord& r) override { inner.OnThrottle(r); }
    void OnSampleAhead(const Sample& s) override { inner.OnSampleAhead(s); }
    bool takes_sample_hints() const override { return inner.takes_sample_hints(); }
    bool has_own_threads() const override { return inner.has_own_threads(); }
    bool reads_callers() const override { return inner.reads_callers(); }
    bool takes_deferred_callchains() const override { return inner.takes_deferred_callchains(); }
  } counting(visitor);

  // The mapped file's pages already read are given back some megabytes at a time: a long
  // recording's post-pass reads its file front to back, and otherwise held all of it resident
  // by the end (30 s of recording: 18 MB of file pages at the peak; 8 minutes: 21 MB).
  uint64_t released = 0;
  const auto release_before = [&](uint64_t offset) {
    constexpr uint64_t kStep = uint64_t{4} << 20;
    if (!file_ || offset < released + kStep) return;
    file_->Release(bytes_.data() + released, bytes_.data() + offset);
    released = offset;
  };
  Result<ChunkWalk> walk = ChunkWalk{};
  if (visiting == Visiting::kBesideDecoding && visitor.has_own_threads()) {
    // This thread verifies and inflates while another decodes the chunks before into the
    // visitor, whose own threads take the third share. Records before a malformed one still
    // reach the visitor, as they would decoding in line, and the first failure in file order is
    // the one reported.
    ChunkDecodeThread decoding(counting);
    walk = WalkChunks(
        bytes_,
        [&](const ChunkHeader& header, uint64_t offset, std::string_view stored) -> Result<bool> {
          if (header.kind != format::ChunkKind::kRecords) return true;
          if (decoding.failed()) return false;
          release_before(offset);
          auto raw = decompressor.DecompressInto(header, stored, decoding.Buffer());
          if (!raw.ok()) return raw.error();
          decoding.Decode(offset, header.record_count, raw.value());
          return true;
        });
    ChunkDecodeThread::Outcome decoded = decoding.Finish();
    if (decoded.error) return decoded.error->WithContext(ChunkWhere(decoded.failed_offset));
    summary.records_read = decoded.records;
  } else {
    // Beside decoding, the visitor works through the records before on a thread of its own,
    // handed over in batches.
    RecordDecoder decoder;
    std::optional<BackgroundReplay> replay;
    if (visiting == Visiting::kBesideDecoding) replay.emplace(counting);
    RecordVisitor& decoded_to = replay ? static_cast<RecordVisitor&>(*replay) : counting;
    walk = WalkChunks(
        bytes_,
        [&](const ChunkHeader& header, uint64_t offset, std::string_view stored) -> Result<bool> {
          if (header.kind != format::ChunkKind::kRecords)
            return true;  // other kinds read elsewhere
          release_before(offset);
          auto raw = decompressor.Decompress(header, stored);
          if (!raw.ok()) return raw.error();
          auto decoded = decoder.DecodeChunk(raw.value(), header.record_count, decoded_to);
          if (!decoded.ok()) return decoded.error();
          summary.records_read += decoded.value();
          return true;
        });
    if (replay) replay->Finish();
  }
  if (!walk.ok()) return walk.error();
  summary.complete = walk->complete;
  summary.chunks_read = walk->chunks;
  summary.samples_read = counting.samples;
  if (!walk->complete) {
    summary.bytes_lost = bytes_.size() - walk->end_of_good_data;
    summary.warning = "profile is incomplete: " + walk->truncation + "; read " +
                      std::to_string(walk->chunks) + " complete chunks (" +
                      std::to_string(counting.samples) + " samples), lost the last " +
                      std::to_string(summary.bytes_lost) + " bytes from offset " +
                      std::to_string(walk->end_of_good_data);
  }
  return summary;
}

bool ProfileReader::HasChunkOfKind(uint16_t kind) const {
  bool found = false;
  auto walk = WalkChunks(
      bytes_,
      [&](const ChunkHeader& header, uint64_t, std::string_view) -> Result<bool> {
        found = static_cast<uint16_t>(header.kind) == kind;
        return !found;
      },
      static_cast<format::ChunkKind>(kind));
  return walk.ok() && found;
}

Result<std::vector<std::string>> ProfileReader::ReadChunksOfKind(uint16_t kind) const {
  std::vector<std::string> payloads;
  ChunkDecompressor decompressor;
  auto walk = WalkChunks(
      bytes_,
      [&](const ChunkHeader& header, uint64_t, std::string_view stored) -> Result<bool> {
        if (static_cast<uint16_t>(header.kind) != kind) return true;
        // Straight into the payload the caller keeps: a symbols section is megabytes, and a
        // copy of it would be on the path before any other work starts.
        std::string& payload = payloads.emplace_back();
        auto raw = decompressor.DecompressInto(header, stored, payload);
        if (!raw.ok()) return raw.error();
        if (raw->data() != payload.data()) payload.assign(*raw);  // stored uncompressed
        return true;
      },
      static_cast<format::ChunkKind>(kind));
  if (!walk.ok()) return walk.error();
  // A section read in part would pass for whole (symbols missing without a word).
  if (walk->damaged) return Error(walk->truncation);
  return payloads;
}

}  // namespace tprof
