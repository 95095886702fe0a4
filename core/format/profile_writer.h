// Writes a .tprof file: file header, metadata and event chunks, record chunks as records arrive,
// then a trailer with an index and a footer. Only Finish() makes the file complete.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/base/background_batches.h"
#include "core/base/error.h"
#include "core/format/chunk.h"
#include "core/format/output_file.h"
#include "core/format/record_codec.h"
#include "core/model/profile.h"
#include "core/model/user_stack_unwinder.h"

namespace tprof {

struct WriterOptions {
  // Raw bytes gathered before a records chunk is compressed and written. Larger chunks compress
  // better; smaller ones lose less when a recording is killed.
  size_t chunk_size = 1 << 20;
  int zstd_level = 1;
  // Compress and write chunks on a thread of the writer's own, so encoding the next records
  // overlaps with them (an import). A write error then surfaces at a later Write, Flush or Finish,
  // and bytes_written() is known only after Finish.
  bool background_compression = false;
  // For tests of forward compatibility only: the minor version written in the header.
  uint16_t minor_version_override = 0;
};

struct FinishInfo {
  uint64_t duration_ns = 0;
  uint64_t end_timestamp = 0;
  // How the stack copies were walked into callchains (record --call-graph dwarf), kept in the
  // trailer so that every later read can tell it.
  std::optional<UnwindStatistics> unwinding;
};

class ProfileWriter {
 public:
  // Writes the file header, the metadata and the events at once, so a file cut anywhere after
  // them still says what it is.
  static Result<std::unique_ptr<ProfileWriter>> Create(std::unique_ptr<ByteSink> sink,
                                                       const Metadata& metadata,
                                                       const std::vector<EventDesc>& events,
                                                       WriterOptions options = {});
  // Convenience: writes PATH.partial and renames it to PATH on Finish().
  static Result<std::unique_ptr<ProfileWriter>> CreateFile(const std::string& path,
                                                           const Metadata& metadata,
                                                           const std::vector<EventDesc>& events,
                                                           WriterOptions options = {});

  ~ProfileWriter();

  template <typename RecordT>
  Status Write(const RecordT& record) {
    encoder_.Encode(record);
    CountRecord(record);
    return MaybeFlush();
  }
  // Forward-compatibility tests only: a record or a chunk of a kind this version does not know.
  Status WriteRaw(uint32_t kind, uint64_t time, const std::string& body);
  Status WriteOpaqueChunk(uint16_t kind, std::string_view payload);
  // Writes any buffered records as a chunk now.
  Status Flush();
  // Writes the trailer and footer and commits the file under its final name.
  Status Finish(const FinishInfo& info);

  // See RecordEncoder::last_chain_key: lets a caller tell a repeated callchain without hashing
  // it again.
  uint64_t last_chain_key() const { return encoder_.last_chain_key(); }
  uint64_t bytes_written() const { return offset_; }  // see background_compression
  uint64_t sample_count() const { return sample_count_; }

 private:
  struct ChunkIndexEntry {
    uint64_t offset;
    uint16_t kind;
    uint32_t records;
  };

  struct PendingChunk {
    format::ChunkKind kind;
    std::string raw;
    uint32_t records;
  };

  ProfileWriter(std::unique_ptr<ByteSink> sink, WriterOptions options);
  // Compresses and writes a chunk, or queues it for the background thread.
  Status WriteChunk(format::ChunkKind kind, std::string raw, uint32_t record_count);
  Status StoreChunk(format::ChunkKind kind, std::string_view raw, uint32_t record_count);
  // Waits until the background thread has written every queued chunk; its first error.
  Status DrainBackground();
  Status MaybeFlush() { return encoder_.size() >= options_.chunk_size ? Flush() : Status::Ok(); }

  void CountRecord(const Sample& s);
  template <typename RecordT>
  void CountRecord(const RecordT&) {}

  std::unique_ptr<ByteSink> sink_;
  WriterOptions options_;
  RecordEncoder encoder_;
  ChunkCompressor compressor_;
  uint64_t offset_ = 0;
  uint64_t record_total_ = 0;
  uint64_t sample_count_ = 0;
  std::vector<uint64_t> samples_per_event_;
  std::vector<ChunkIndexEntry> index_;
  bool failed_ = false;
  bool finished_ = false;
  // Set while background_ runs: the background thread owns compressor_, sink_, offset_, index_,
  // failed_ and background_status_ until DrainBackground() joins it.
  std::atomic<bool> background_failed_ = false;
  Status background_status_;
  std::mutex spare_mutex_;
  std::string spare_;  // a written records chunk's buffer, for the encoder's next
  std::unique_ptr<BackgroundBatches<PendingChunk>> background_;
};

}  // namespace tprof
