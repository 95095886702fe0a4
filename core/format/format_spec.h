// Layout constants of the .tprof file format, version 1. docs/format.md is the specification;
// this header is its only encoding in code.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tprof::format {

inline constexpr uint16_t kMajorVersion = 1;
inline constexpr uint16_t kMinorVersion = 0;

// PNG-style magic: the high byte catches 7-bit transfers, \r\n catches newline translation.
inline constexpr std::string_view kFileMagic{"\x89TPROF\r\n", 8};
inline constexpr size_t kFileHeaderSize = 24;

inline constexpr std::string_view kChunkMagic{"TPCK", 4};
inline constexpr size_t kChunkHeaderSize = 32;
// A chunk larger than this is treated as corrupt rather than allocated.
inline constexpr uint32_t kMaxChunkRawSize = 64u << 20;

inline constexpr std::string_view kFooterMagic{"TPROFEND", 8};
inline constexpr size_t kFooterSize = 16;

enum class ChunkKind : uint16_t {
  kMetadata = 1,      // JSON object
  kEvents = 2,        // JSON array of event descriptors
  kRecords = 3,       // binary records, see RecordKind
  kSymbols = 16,      // embedded symbols (core/format/symbol_section.h); 1.0 readers skip it
  kTrailer = 0x7fff,  // JSON index; always the last chunk of a finished file
};

enum class Compression : uint8_t { kNone = 0, kZstd = 1 };

enum class RecordKind : uint32_t {
  kSample = 1,
  kMmap = 2,
  kComm = 3,
  kTask = 4,
  kLost = 5,
  kThrottle = 6,
};

// Bits of a sample record's field mask.
inline constexpr uint64_t kSampleHasGroupRead = 1 << 0;
inline constexpr uint64_t kSampleHasCallchain = 1 << 1;
inline constexpr uint64_t kSampleHasBranches = 1 << 2;
inline constexpr uint64_t kSampleHasUserStack = 1 << 3;

}  // namespace tprof::format
