#include "core/format/chunk_decode_thread.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "core/format/record_codec.h"
#include "test/support/record_generator.h"

namespace tprof {
namespace {

using namespace tprof::testing;

// Collects the records, and the threads they arrived on.
struct ThreadNotingVisitor : CollectingVisitor {
  std::set<std::thread::id> threads;
  void OnSample(const Sample& r) override {
    threads.insert(std::this_thread::get_id());
    CollectingVisitor::OnSample(r);
  }
};

struct EncodedChunk {
  std::string bytes;
  uint64_t records = 0;
};

// `chunks` chunks of random records (repeated callchains among them, so that chunks hold
// references to chains earlier in the chunk), and every record in order.
std::vector<EncodedChunk> EncodeChunks(uint32_t seed, int chunks, int records_each,
                                       std::vector<AnyRecord>* records) {
  RecordGenerator generator(seed);
  RecordEncoder encoder;
  std::vector<EncodedChunk> out;
  for (int c = 0; c < chunks; ++c) {
    for (int i = 0; i < records_each; ++i) {
      AnyRecord r = generator.Next();
      std::visit([&](const auto& record) { encoder.Encode(record); }, r);
      records->push_back(std::move(r));
    }
    out.push_back({encoder.bytes(), encoder.record_count()});
    encoder.Reset();
  }
  return out;
}

// Hands every chunk over as a reader does: inflated (here copied) into the buffer it is given.
void DecodeAll(ChunkDecodeThread& decoding, const std::vector<EncodedChunk>& chunks) {
  uint64_t offset = 0;
  for (const EncodedChunk& chunk : chunks) {
    if (decoding.failed()) break;
    std::string& buffer = decoding.Buffer();
    buffer = chunk.bytes;
    decoding.Decode(offset, chunk.records, buffer);
    offset += chunk.bytes.size();
  }
}

TEST(ChunkDecodeThread, EveryRecordInOrderOnOneOtherThreadThroughFewBuffers) {
  std::vector<AnyRecord> written;
  const std::vector<EncodedChunk> chunks = EncodeChunks(3, 40, 150, &written);
  ThreadNotingVisitor visitor;
  ChunkDecodeThread decoding(visitor, /*buffers=*/2);  // 40 chunks through 2 buffers
  DecodeAll(decoding, chunks);
  const ChunkDecodeThread::Outcome outcome = decoding.Finish();
  ASSERT_FALSE(outcome.error) << outcome.error->message();
  EXPECT_EQ(outcome.records, written.size());
  ASSERT_EQ(visitor.records.size(), written.size());
  for (size_t i = 0; i < written.size(); ++i) ASSERT_TRUE(visitor.records[i] == written[i]) << i;
  ASSERT_EQ(visitor.threads.size(), 1u);
  EXPECT_NE(*visitor.threads.begin(), std::this_thread::get_id());
}

TEST(ChunkDecodeThread, PayloadsOutsideItsBuffersAreDecodedToo) {
  std::vector<AnyRecord> written;
  const std::vector<EncodedChunk> chunks = EncodeChunks(4, 5, 100, &written);
  CollectingVisitor visitor;
  ChunkDecodeThread decoding(visitor);
  for (const EncodedChunk& chunk : chunks) decoding.Decode(0, chunk.records, chunk.bytes);
  const ChunkDecodeThread::Outcome outcome = decoding.Finish();
  ASSERT_FALSE(outcome.error);
  ASSERT_EQ(visitor.records.size(), written.size());
  for (size_t i = 0; i < written.size(); ++i) ASSERT_TRUE(visitor.records[i] == written[i]) << i;
}

// A malformed chunk stops the decoding there: the records before it arrive, none after, and the
// failure names that chunk's offset.
TEST(ChunkDecodeThread, AMalformedChunkStopsTheRestAndIsNamed) {
  std::vector<AnyRecord> written;
  std::vector<EncodedChunk> chunks = EncodeChunks(5, 8, 100, &written);
  chunks[3].bytes.resize(chunks[3].bytes.size() / 2);  // cut inside a record
  uint64_t offset_of_3 = 0;
  for (int c = 0; c < 3; ++c) offset_of_3 += chunks[c].bytes.size();
  CollectingVisitor visitor;
  ChunkDecodeThread decoding(visitor);
  DecodeAll(decoding, chunks);
  const ChunkDecodeThread::Outcome outcome = decoding.Finish();
  ASSERT_TRUE(outcome.error);
  EXPECT_EQ(outcome.failed_offset, offset_of_3);
  EXPECT_TRUE(decoding.failed());
  EXPECT_EQ(outcome.records, 300u);
  // The records of chunks 0-2, then the readable start of chunk 3 (as decoding in line gives).
  ASSERT_GE(visitor.records.size(), 300u);
  ASSERT_LT(visitor.records.size(), 400u);
  for (size_t i = 0; i < visitor.records.size(); ++i)
    ASSERT_TRUE(visitor.records[i] == written[i]) << i;
}

TEST(ChunkDecodeThread, ACountOtherThanTheHeadersIsAnError) {
  std::vector<AnyRecord> written;
  const std::vector<EncodedChunk> chunks = EncodeChunks(6, 2, 50, &written);
  CollectingVisitor visitor;
  ChunkDecodeThread decoding(visitor);
  decoding.Decode(0, chunks[0].records, chunks[0].bytes);
  decoding.Decode(chunks[0].bytes.size(), chunks[1].records + 1, chunks[1].bytes);
  const ChunkDecodeThread::Outcome outcome = decoding.Finish();
  ASSERT_TRUE(outcome.error);
  EXPECT_EQ(outcome.failed_offset, chunks[0].bytes.size());
  EXPECT_EQ(outcome.error->message(), "holds 50 records, its header says 51");
  EXPECT_EQ(outcome.records, 50u);
}

TEST(ChunkDecodeThread, DestroyedWithoutFinishDecodesWhatWasQueued) {
  std::vector<AnyRecord> written;
  const std::vector<EncodedChunk> chunks = EncodeChunks(7, 10, 100, &written);
  CollectingVisitor visitor;
  {
    ChunkDecodeThread decoding(visitor, 2);
    DecodeAll(decoding, chunks);
    decoding.Buffer();  // taken and never handed over: given back at the end
  }
  EXPECT_EQ(visitor.records.size(), written.size());
}

}  // namespace
}  // namespace tprof
