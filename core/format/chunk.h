// Framing of one .tprof chunk: a fixed 32-byte header (kind, sizes, record count, checksum) and a
// payload that is usually zstd-compressed. The checksum covers the header and the stored payload,
// so any flipped bit is caught before a byte of the payload is interpreted.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/base/error.h"
#include "core/format/format_spec.h"

namespace tprof {

struct ChunkHeader {
  format::ChunkKind kind = format::ChunkKind::kRecords;
  format::Compression compression = format::Compression::kNone;
  uint32_t stored_size = 0;
  uint32_t raw_size = 0;
  uint32_t record_count = 0;
  uint64_t checksum = 0;
};

// Serializes a header; the checksum field is computed over it and the payload.
std::string EncodeChunkHeader(const ChunkHeader& header, std::string_view stored_payload);

enum class ChunkHeaderStatus { kOk, kTruncated, kBadMagic };
// Parses the fixed header at data[0..size). Does not verify the checksum.
ChunkHeaderStatus ParseChunkHeader(const uint8_t* data, size_t size, ChunkHeader* header);

bool ChunkChecksumMatches(const uint8_t* header_bytes, std::string_view stored_payload,
                          uint64_t expected);

// Compresses with zstd at the given level; keeps a context between calls because creating one
// costs more than compressing a small chunk.
class ChunkCompressor {
 public:
  explicit ChunkCompressor(int level);
  ~ChunkCompressor();
  ChunkCompressor(const ChunkCompressor&) = delete;
  ChunkCompressor& operator=(const ChunkCompressor&) = delete;
  // Returns the stored payload and sets *compression to what was used (kNone when compressing
  // does not make it smaller).
  std::string_view Compress(std::string_view raw, format::Compression* compression);

 private:
  struct State;
  State* state_;
  int level_;
  std::string buffer_;
};

class ChunkDecompressor {
 public:
  ChunkDecompressor();
  ~ChunkDecompressor();
  ChunkDecompressor(const ChunkDecompressor&) = delete;
  ChunkDecompressor& operator=(const ChunkDecompressor&) = delete;
  // Returns the raw payload (valid until the next call).
  Result<std::string_view> Decompress(const ChunkHeader& header, std::string_view stored) {
    return DecompressInto(header, stored, buffer_);
  }
  // Inflates into `buffer` (a stored payload is returned as it is, `buffer` untouched).
  Result<std::string_view> DecompressInto(const ChunkHeader& header, std::string_view stored,
                                          std::string& buffer);

 private:
  struct State;
  State* state_;
  std::string buffer_;
};

}  // namespace tprof
