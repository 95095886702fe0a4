#include "core/format/chunk_decode_thread.h"

#include "core/format/record_codec.h"

namespace tprof {

ChunkDecodeThread::ChunkDecodeThread(RecordVisitor& visitor, size_t buffers)
    : visitor_(visitor), buffers_(buffers < 2 ? 2 : buffers) {
  for (std::string& b : buffers_) free_.push_back(&b);
  thread_ = std::thread([this] { Work(); });
}

std::string& ChunkDecodeThread::Buffer() {
  if (!filling_) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [this] { return !free_.empty(); });
    filling_ = free_.front();
    free_.pop_front();
  }
  return *filling_;
}

void ChunkDecodeThread::Decode(uint64_t offset, uint64_t records, std::string_view payload) {
  std::string* buffer = std::exchange(filling_, nullptr);
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(Chunk{buffer, offset, records, payload});
  }
  changed_.notify_all();
}

bool ChunkDecodeThread::failed() {
  std::lock_guard lock(mutex_);
  return failed_;
}

ChunkDecodeThread::Outcome ChunkDecodeThread::Finish() {
  if (thread_.joinable()) {
    {
      std::lock_guard lock(mutex_);
      if (filling_) free_.push_back(std::exchange(filling_, nullptr));
      done_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }
  return outcome_;
}

void ChunkDecodeThread::Work() {
  RecordDecoder decoder;
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return done_ || !queue_.empty(); });
    if (queue_.empty()) return;  // done, and nothing left
    const Chunk chunk = queue_.front();
    queue_.pop_front();
    const bool skip = failed_;
    lock.unlock();
    if (!skip) {
      auto decoded = decoder.DecodeChunk(chunk.payload, chunk.records, visitor_);
      if (decoded.ok()) {
        outcome_.records += decoded.value();
      } else {
        outcome_.error = decoded.error();
        outcome_.failed_offset = chunk.offset;
      }
      lock.lock();
      failed_ = outcome_.error.has_value();
    } else {
      lock.lock();
    }
    if (chunk.buffer) free_.push_back(chunk.buffer);
    changed_.notify_all();
  }
}

}  // namespace tprof
