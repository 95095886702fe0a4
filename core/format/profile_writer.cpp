#include "core/format/profile_writer.h"

#include <xxhash.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "core/base/visible_text.h"
#include "core/format/profile_json.h"
#include "core/model/unwind_statistics_json.h"

namespace tprof {
namespace {

// Command lines, host names and event names are bytes, not always UTF-8: what JSON cannot hold
// is stored as every output shows it (core/base/visible_text.h) rather than thrown on.
std::string DumpJson(nlohmann::json json) { return DumpVisibleJson(json); }

}  // namespace

ProfileWriter::ProfileWriter(std::unique_ptr<ByteSink> sink, WriterOptions options)
    : sink_(std::move(sink)), options_(options), compressor_(options.zstd_level) {
  if (options_.background_compression)
    background_ = std::make_unique<BackgroundBatches<PendingChunk>>(
        [this](std::vector<PendingChunk>& chunks) {
          for (PendingChunk& chunk : chunks) {
            if (!background_status_.ok()) return;
            background_status_ = StoreChunk(chunk.kind, chunk.raw, chunk.records);
            if (chunk.kind == format::ChunkKind::kRecords) {
              std::lock_guard lock(spare_mutex_);
              spare_ = std::move(chunk.raw);
            }
            if (!background_status_.ok()) background_failed_ = true;
          }
        },
        /*batch_size=*/1);
}

ProfileWriter::~ProfileWriter() = default;  // background_ goes first: it uses the members

Result<std::unique_ptr<ProfileWriter>> ProfileWriter::Create(std::unique_ptr<ByteSink> sink,
                                                             const Metadata& metadata,
                                                             const std::vector<EventDesc>& events,
                                                             WriterOptions options) {
  std::unique_ptr<ProfileWriter> writer(new ProfileWriter(std::move(sink), options));
  std::string header(format::kFileHeaderSize, '\0');
  std::memcpy(header.data(), format::kFileMagic.data(), format::kFileMagic.size());
  uint16_t major = format::kMajorVersion;
  uint16_t minor =
      options.minor_version_override ? options.minor_version_override : format::kMinorVersion;
  std::memcpy(header.data() + 8, &major, 2);
  std::memcpy(header.data() + 10, &minor, 2);
  uint32_t checksum = XXH32(header.data(), 20, 0);
  std::memcpy(header.data() + 20, &checksum, 4);
  TPROF_RETURN_IF_ERROR(writer->sink_->Write(header));
  writer->offset_ = header.size();

  std::string meta = DumpJson(MetadataToJson(metadata));
  TPROF_RETURN_IF_ERROR(writer->WriteChunk(format::ChunkKind::kMetadata, std::move(meta), 0));
  std::string events_json = DumpJson(EventsToJson(events));
  TPROF_RETURN_IF_ERROR(writer->WriteChunk(format::ChunkKind::kEvents, std::move(events_json), 0));
  writer->samples_per_event_.assign(events.size(), 0);
  return writer;
}

Result<std::unique_ptr<ProfileWriter>> ProfileWriter::CreateFile(
    const std::string& path, const Metadata& metadata, const std::vector<EventDesc>& events,
    WriterOptions options) {
  auto sink = PartialFileSink::Create(path);
  if (!sink.ok()) return sink.error();
  return Create(std::move(sink).value(), metadata, events, options);
}

void ProfileWriter::CountRecord(const Sample& s) {
  ++sample_count_;
  if (s.event < samples_per_event_.size()) ++samples_per_event_[s.event];
}

Status ProfileWriter::WriteRaw(uint32_t kind, uint64_t time, const std::string& body) {
  encoder_.EncodeRaw(kind, time, body);
  return MaybeFlush();
}

Status ProfileWriter::WriteOpaqueChunk(uint16_t kind, std::string_view payload) {
  TPROF_RETURN_IF_ERROR(Flush());
  return WriteChunk(static_cast<format::ChunkKind>(kind), std::string(payload), 0);
}

Status ProfileWriter::WriteChunk(format::ChunkKind kind, std::string raw, uint32_t record_count) {
  if (!background_) return StoreChunk(kind, raw, record_count);
  if (background_failed_) return DrainBackground();  // the error itself, once
  background_->Add({kind, std::move(raw), record_count});
  return Status::Ok();
}

Status ProfileWriter::DrainBackground() {
  if (!background_) return Status::Ok();
  background_->Finish();
  background_.reset();
  return background_status_;
}

Status ProfileWriter::StoreChunk(format::ChunkKind kind, std::string_view raw,
                                 uint32_t record_count) {
  if (failed_) return Error("an earlier write failed");
  if (raw.size() > format::kMaxChunkRawSize) return Error("chunk too large");
  ChunkHeader header;
  header.kind = kind;
  header.raw_size = static_cast<uint32_t>(raw.size());
  header.record_count = record_count;
  std::string_view stored = compressor_.Compress(raw, &header.compression);
  header.stored_size = static_cast<uint32_t>(stored.size());
  std::string header_bytes = EncodeChunkHeader(header, stored);
  index_.push_back({offset_, static_cast<uint16_t>(kind), record_count});
  Status status = sink_->Write(header_bytes);
  if (status.ok()) status = sink_->Write(stored);
  if (!status.ok()) {
    failed_ = true;
    return status;
  }
  offset_ += header_bytes.size() + stored.size();
  return Status::Ok();
}

Status ProfileWriter::Flush() {
  if (encoder_.size() == 0) return Status::Ok();
  record_total_ += encoder_.record_count();
  const uint32_t records = encoder_.record_count();
  if (background_) {
    // The buffer of an earlier chunk, already written: a new one costs a page fault per 4 KiB.
    std::string spare;
    {
      std::lock_guard lock(spare_mutex_);
      spare = std::move(spare_);
    }
    return WriteChunk(format::ChunkKind::kRecords, encoder_.TakeBytes(std::move(spare)), records);
  }
  Status status = StoreChunk(format::ChunkKind::kRecords, encoder_.bytes(), records);
  encoder_.Reset();
  return status;
}

Status ProfileWriter::Finish(const FinishInfo& info) {
  if (finished_) return Error("profile already finished");
  TPROF_RETURN_IF_ERROR(Flush());
  TPROF_RETURN_IF_ERROR(DrainBackground());  // the index below needs every chunk's offset
  nlohmann::json trailer;
  trailer["duration_ns"] = info.duration_ns;
  trailer["end_timestamp"] = info.end_timestamp;
  trailer["record_count"] = record_total_;
  trailer["sample_count"] = sample_count_;
  trailer["samples_per_event"] = samples_per_event_;
  if (info.unwinding && !info.unwinding->empty())
    trailer["unwinding"] = UnwindStatisticsJson(*info.unwinding);
  nlohmann::json chunks = nlohmann::json::array();
  for (const ChunkIndexEntry& e : index_) chunks.push_back({e.offset, e.kind, e.records});
  trailer["chunks"] = std::move(chunks);
  uint64_t trailer_offset = offset_;
  TPROF_RETURN_IF_ERROR(StoreChunk(format::ChunkKind::kTrailer, DumpJson(trailer), 0));
  std::string footer(format::kFooterSize, '\0');
  std::memcpy(footer.data(), &trailer_offset, 8);
  std::memcpy(footer.data() + 8, format::kFooterMagic.data(), 8);
  TPROF_RETURN_IF_ERROR(sink_->Write(footer));
  offset_ += footer.size();
  TPROF_RETURN_IF_ERROR(sink_->Commit());
  finished_ = true;
  return Status::Ok();
}

}  // namespace tprof
