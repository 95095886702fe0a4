// Reads a .tprof file. A finished file is verified chunk by chunk; a file cut short (a killed
// recording, a truncated copy) or damaged (a chunk whose checksum or framing is wrong) is read
// up to its last good chunk and the loss is reported, naming the offset; damage in the header
// or metadata, without which nothing can be read, is an error.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/error.h"
#include "core/model/profile.h"
#include "core/model/user_stack_unwinder.h"

namespace tprof {

struct ReadSummary {
  bool complete = false;  // the trailer and footer were found and verified
  uint64_t chunks_read = 0;
  uint64_t records_read = 0;
  uint64_t samples_read = 0;
  uint64_t bytes_total = 0;
  uint64_t bytes_lost = 0;  // bytes after the last complete chunk of an incomplete file
  // Set when the file is incomplete: what was lost, in one line.
  std::string warning;
};

class FileBytes;

class ProfileReader {
 public:
  // Maps the file and reads its header, metadata and events.
  static Result<ProfileReader> OpenFile(const std::string& path);
  // Reads from memory the caller keeps alive for the reader's lifetime.
  static Result<ProfileReader> OpenBytes(std::string_view bytes);

  // True when the content starts with the .tprof magic.
  static bool LooksLikeTprof(std::string_view first_bytes);

  const Metadata& metadata() const { return metadata_; }
  // The trailer's unwinding statistics (a --call-graph dwarf recording); nullopt without.
  const std::optional<UnwindStatistics>& recorded_unwinding() const { return recorded_unwinding_; }
  const std::vector<EventDesc>& events() const { return events_; }
  uint16_t major_version() const { return major_; }
  uint16_t minor_version() const { return minor_; }

  // Where the visitor runs while the records are decoded.
  enum class Visiting {
    kBesideDecoding,  // visited on a thread of its own while this one decodes (or, for a
                      // visitor with threads of its own, decoded and visited on one while this
                      // one verifies and inflates): faster
    kOnThisThread,    // one thread and one chunk in memory: for a recorder's steps after the
                      // workload, whose peak memory is the recorder's
  };
  // Streams every record to the visitor in file order. The visitor's results may be read once
  // this returns.
  Result<ReadSummary> ReadRecords(RecordVisitor& visitor,
                                  Visiting visiting = Visiting::kBesideDecoding) const;

  // The decompressed payloads of every verified chunk of `kind`, in file order (sections this
  // reader does not interpret itself, e.g. embedded symbols). Chunks after a truncation are
  // not reached; a damaged chunk of `kind`, or damaged framing, is an error. The checksums of
  // other kinds' chunks are not checked here: reading them (ReadRecords) checks its own.
  Result<std::vector<std::string>> ReadChunksOfKind(uint16_t kind) const;
  // Whether the file has a chunk of `kind` (checked, but not decompressed) before any damage
  // or truncation: a look at the chunks' headers.
  bool HasChunkOfKind(uint16_t kind) const;

 private:
  ProfileReader() = default;
  Status ReadHeader();

  std::shared_ptr<const FileBytes> file_;  // null when reading the caller's bytes
  std::string_view bytes_;
  uint16_t major_ = 0;
  uint16_t minor_ = 0;
  Metadata metadata_;
  std::optional<UnwindStatistics> recorded_unwinding_;
  std::vector<EventDesc> events_;
};

}  // namespace tprof
