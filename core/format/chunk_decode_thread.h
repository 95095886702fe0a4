// Record chunks decoded into a visitor on a thread of their own, while the thread that reads
// the file verifies and inflates the next ones.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/base/error.h"
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
  // `payload`: in the buffer Buffer() gave, or bytes that outlive Finish (a stored chunk).
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
    std::string* buffer;
    uint64_t offset;
    uint64_t records;
    std::string_view payload;
  };
  void Work();

  RecordVisitor& visitor_;
  std::vector<std::string> buffers_;
  std::string* filling_ = nullptr;  // the reader's; not shared
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::string*> free_;  // guarded by mutex_
  std::deque<Chunk> queue_;        // guarded by mutex_
  bool done_ = false;              // guarded by mutex_
  Outcome outcome_;                // the decoding thread's until it is joined
  bool failed_ = false;            // guarded by mutex_: outcome_.error is set
  std::thread thread_;
};

}  // namespace tprof
