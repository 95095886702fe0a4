#include "core/format/chunk_decode_thread.h"

namespace tprof {

ChunkDecodeThread::ChunkDecodeThread(RecordVisitor& visitor, size_t buffers)
    : visitor_(visitor), chunks_(buffers, [this](Chunk& chunk) { DecodeOne(chunk); }) {}

std::string& ChunkDecodeThread::Buffer() { return chunks_.Filling().buffer; }

void ChunkDecodeThread::Decode(uint64_t offset, uint64_t records, std::string_view payload) {
  Chunk& chunk = chunks_.Filling();
  chunk.offset = offset;
  chunk.records = records;
  chunk.payload = payload;
  chunks_.HandOver();
}

bool ChunkDecodeThread::failed() { return failed_.load(std::memory_order_acquire); }

ChunkDecodeThread::Outcome ChunkDecodeThread::Finish() {
  chunks_.Finish();
  return outcome_;
}

void ChunkDecodeThread::DecodeOne(const Chunk& chunk) {
  if (outcome_.error) return;  // the first failure stops the rest
  auto decoded = decoder_.DecodeChunk(chunk.payload, chunk.records, visitor_);
  if (decoded.ok()) {
    outcome_.records += decoded.value();
    return;
  }
  outcome_.error = decoded.error();
  outcome_.failed_offset = chunk.offset;
  failed_.store(true, std::memory_order_release);
}

}  // namespace tprof
