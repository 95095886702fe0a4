// Record chunks decoded into a visitor on a thread of their own, while the thread that reads
// the file verifies and inflates the next ones.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/base/circulating_slots.h"
#include "core/base/error.h"
#include "core/format/record_codec.h"
#include "core/model/profile.h"

namespace tprof {

// Chunks go across whole, as the encoded bytes they are: the decoding thread reads them in
// order, which the hardware prefetches, and the records themselves are never copied between
// threads (decoded records crossing in batches cost a copy in and a cache miss out each). A few
// buffers circulate, so when the visitor falls behind the reader waits and memory stays
// bounded. The visitor is used by the decoding thread alone until Finish returns.
class ChunkDecodeThread {
 public:
  explicit ChunkDecodeThread(RecordVisitor& visitor, size_t buffers = 3);
  ChunkDecodeThread(const ChunkDecodeThread&) = delete;
  ChunkDecodeThread& operator=(const ChunkDecodeThread&) = delete;
  ~ChunkDecodeThread() { Finish(); }

  // A buffer to inflate the next chunk into; waits for one to be free.
  std::string& Buffer();
  // Queues the chunk at `offset` of the file, `records` long by its header, whose payload is
  // `payload`: in the buffer Buffer() gave, or bytes that outlive Finish (a stored chunk, which
  // takes a buffer too, unused, so that as few chunks wait as there are buffers).
  void Decode(uint64_t offset, uint64_t records, std::string_view payload);
  // The first chunk that failed to decode stops the rest: the reader can stop reading.
  bool failed();

  struct Outcome {
    uint64_t records = 0;        // decoded from the chunks before any failure
    std::optional<Error> error;  // the first chunk's that failed to decode
    uint64_t failed_offset = 0;  // that chunk's offset in the file
  };
  // Waits until every queued chunk is decoded. Idempotent; no chunks may follow.
  Outcome Finish();

 private:
  struct Chunk {
    std::string buffer;  // where the payload was inflated, unless it was stored
    uint64_t offset = 0;
    uint64_t records = 0;
    std::string_view payload;
  };
  void DecodeOne(const Chunk& chunk);

  RecordVisitor& visitor_;
  RecordDecoder decoder_;            // the decoding thread's
  Outcome outcome_;                  // the decoding thread's until Finish returns
  std::atomic<bool> failed_{false};  // outcome_.error is set
  CirculatingSlots<Chunk> chunks_;   // last: its thread decodes into visitor_
};

}  // namespace tprof
