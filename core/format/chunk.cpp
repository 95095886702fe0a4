#include "core/format/chunk.h"

#include <xxhash.h>
#include <zstd.h>

#include <bit>
#include <cstring>

namespace tprof {

static_assert(std::endian::native == std::endian::little,
              "the .tprof codec writes little-endian integers with memcpy");

namespace {

template <typename T>
void Store(char* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}
template <typename T>
T Load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

constexpr size_t kChecksumOffset = 24;

uint64_t ComputeChecksum(const void* header_bytes, std::string_view stored_payload) {
  uint64_t seed = XXH3_64bits(header_bytes, kChecksumOffset);
  return XXH3_64bits_withSeed(stored_payload.data(), stored_payload.size(), seed);
}

}  // namespace

std::string EncodeChunkHeader(const ChunkHeader& h, std::string_view stored_payload) {
  std::string out(format::kChunkHeaderSize, '\0');
  char* p = out.data();
  std::memcpy(p, format::kChunkMagic.data(), 4);
  Store<uint16_t>(p + 4, static_cast<uint16_t>(h.kind));
  Store<uint8_t>(p + 6, static_cast<uint8_t>(h.compression));
  Store<uint32_t>(p + 8, h.stored_size);
  Store<uint32_t>(p + 12, h.raw_size);
  Store<uint32_t>(p + 16, h.record_count);
  Store<uint64_t>(p + kChecksumOffset, ComputeChecksum(p, stored_payload));
  return out;
}

ChunkHeaderStatus ParseChunkHeader(const uint8_t* data, size_t size, ChunkHeader* h) {
  if (size < format::kChunkHeaderSize) return ChunkHeaderStatus::kTruncated;
  if (std::memcmp(data, format::kChunkMagic.data(), 4) != 0) return ChunkHeaderStatus::kBadMagic;
  h->kind = static_cast<format::ChunkKind>(Load<uint16_t>(data + 4));
  h->compression = static_cast<format::Compression>(Load<uint8_t>(data + 6));
  h->stored_size = Load<uint32_t>(data + 8);
  h->raw_size = Load<uint32_t>(data + 12);
  h->record_count = Load<uint32_t>(data + 16);
  h->checksum = Load<uint64_t>(data + kChecksumOffset);
  return ChunkHeaderStatus::kOk;
}

bool ChunkChecksumMatches(const uint8_t* header_bytes, std::string_view stored_payload,
                          uint64_t expected) {
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
  // Fuzz builds accept any checksum so that mutations reach the decoders behind it.
  (void)header_bytes, (void)stored_payload, (void)expected;
  return true;
#endif
  return ComputeChecksum(header_bytes, stored_payload) == expected;
}

struct ChunkCompressor::State {
  ZSTD_CCtx* context = ZSTD_createCCtx();
};

ChunkCompressor::ChunkCompressor(int level) : state_(new State), level_(level) {}
ChunkCompressor::~ChunkCompressor() {
  ZSTD_freeCCtx(state_->context);
  delete state_;
}

std::string_view ChunkCompressor::Compress(std::string_view raw, format::Compression* compression) {
  buffer_.resize(ZSTD_compressBound(raw.size()));
  size_t n = ZSTD_compressCCtx(state_->context, buffer_.data(), buffer_.size(), raw.data(),
                               raw.size(), level_);
  if (ZSTD_isError(n) || n >= raw.size()) {
    *compression = format::Compression::kNone;
    return raw;
  }
  *compression = format::Compression::kZstd;
  return std::string_view(buffer_.data(), n);
}

struct ChunkDecompressor::State {
  ZSTD_DCtx* context = ZSTD_createDCtx();
};

ChunkDecompressor::ChunkDecompressor() : state_(new State) {}
ChunkDecompressor::~ChunkDecompressor() {
  ZSTD_freeDCtx(state_->context);
  delete state_;
}

Result<std::string_view> ChunkDecompressor::DecompressInto(const ChunkHeader& header,
                                                           std::string_view stored,
                                                           std::string& buffer) {
  switch (header.compression) {
    case format::Compression::kNone:
      if (stored.size() != header.raw_size) return Error("stored and raw sizes differ");
      return stored;
    case format::Compression::kZstd: {
      if (header.raw_size > format::kMaxChunkRawSize)
        return Error("raw size " + std::to_string(header.raw_size) + " exceeds the format's limit");
      buffer.resize(header.raw_size);
      size_t n = ZSTD_decompressDCtx(state_->context, buffer.data(), buffer.size(), stored.data(),
                                     stored.size());
      if (ZSTD_isError(n)) return Error(std::string("zstd: ") + ZSTD_getErrorName(n));
      if (n != header.raw_size) return Error("decompressed size differs from the header");
      return std::string_view(buffer.data(), n);
    }
  }
  return Error("unknown compression " + std::to_string(static_cast<int>(header.compression)));
}

}  // namespace tprof
