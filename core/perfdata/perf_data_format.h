// The perf.data layout as perf(1) writes it (tools/perf/util/header.h, perf_event.h): file and
// pipe headers, perf's own record types, feature numbers, perf_event_attr offsets by ABI version.
// Only what the importer needs; the kernel's record types come from <linux/perf_event.h>.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace tprof::perf_data {

// "PERFILE2" read as a little-endian u64; a byte-swapped file reads as its reverse.
inline constexpr uint64_t kMagic = 0x32454c4946524550ULL;
inline constexpr uint64_t kMagicSwapped = 0x50455246494c4532ULL;
inline constexpr size_t kPipeHeaderSize = 16;  // magic, size
inline constexpr size_t kFileHeaderMinSize = 104;
inline constexpr size_t kRecordHeaderSize = 8;  // u32 type, u16 misc, u16 size

// Records perf(1) itself writes (tools/lib/perf/include/perf/event.h).
enum UserRecord : uint32_t {
  kUserRecordStart = 64,
  kHeaderAttr = 64,
  kHeaderEventType = 65,
  kHeaderTracingData = 66,
  kHeaderBuildId = 67,
  kFinishedRound = 68,
  kIdIndex = 69,
  kAuxtraceInfo = 70,
  kAuxtrace = 71,
  kAuxtraceError = 72,
  kThreadMap = 73,
  kCpuMap = 74,
  kStatConfig = 75,
  kStat = 76,
  kStatRound = 77,
  kEventUpdate = 78,
  kTimeConv = 79,
  kHeaderFeature = 80,
  kCompressed = 81,
  kFinishedInit = 82,
  kCompressed2 = 83,
};

// Feature bits of the file header (HEADER_*).
enum Feature : uint32_t {
  kFeatTracingData = 1,
  kFeatBuildId = 2,
  kFeatHostname = 3,
  kFeatOsRelease = 4,
  kFeatVersion = 5,
  kFeatArch = 6,
  kFeatNrCpus = 7,
  kFeatCpuDesc = 8,
  kFeatCpuId = 9,
  kFeatTotalMem = 10,
  kFeatCmdline = 11,
  kFeatEventDesc = 12,
  kFeatGroupDesc = 17,
  kFeatSampleTime = 21,
  // simpleperf's own features start at 128: its META_INFO is NUL-separated keys and values.
  kFeatSimpleperfMetaInfo = 129,
  kFeatBits = 256,
};

// perf_event_attr field offsets; fields past an attribute's size read as zero.
namespace attr {
inline constexpr size_t kType = 0;
inline constexpr size_t kSize = 4;
inline constexpr size_t kConfig = 8;
inline constexpr size_t kSamplePeriod = 16;
inline constexpr size_t kSampleType = 24;
inline constexpr size_t kReadFormat = 32;
inline constexpr size_t kFlags = 40;
inline constexpr size_t kConfig1 = 56;
inline constexpr size_t kConfig2 = 64;
inline constexpr size_t kBranchSampleType = 72;
inline constexpr size_t kSampleRegsUser = 80;
inline constexpr size_t kSampleStackUser = 88;
inline constexpr size_t kSampleRegsIntr = 96;
inline constexpr size_t kSizeVer0 = 64;  // the first ABI; size 0 in a file means this
// Bits of the flags word.
inline constexpr uint64_t kFlagFreq = 1ull << 10;
inline constexpr uint64_t kFlagExcludeUser = 1ull << 4;
inline constexpr uint64_t kFlagExcludeKernel = 1ull << 5;
inline constexpr uint64_t kFlagExcludeCallchainUser = 1ull << 22;
inline constexpr uint64_t kFlagSampleIdAll = 1ull << 18;
inline constexpr uint64_t kFlagContextSwitch = 1ull << 26;  // PERF_RECORD_SWITCH records
inline constexpr int kPreciseIpShift = 15;
}  // namespace attr

inline constexpr uint64_t kFormatLost = 1u << 4;        // PERF_FORMAT_LOST (kernel 6.0)
inline constexpr uint64_t kBranchHwIndex = 1u << 17;    // PERF_SAMPLE_BRANCH_HW_INDEX
inline constexpr uint16_t kMiscBuildIdSize = 1u << 15;  // PERF_RECORD_MISC_BUILD_ID_SIZE

inline uint16_t Swap(uint16_t v) { return __builtin_bswap16(v); }
inline uint32_t Swap(uint32_t v) { return __builtin_bswap32(v); }
inline uint64_t Swap(uint64_t v) { return __builtin_bswap64(v); }

// Reads fixed-width integers in the file's byte order. Callers check bounds first.
class ByteOrder {
 public:
  explicit ByteOrder(bool swapped = false) : swapped_(swapped) {}
  bool swapped() const { return swapped_; }
  template <typename T>
  T Read(const uint8_t* p) const {
    T v;
    std::memcpy(&v, p, sizeof v);
    return swapped_ ? Swap(v) : v;
  }
  uint16_t U16(const uint8_t* p) const { return Read<uint16_t>(p); }
  uint32_t U32(const uint8_t* p) const { return Read<uint32_t>(p); }
  uint64_t U64(const uint8_t* p) const { return Read<uint64_t>(p); }

 private:
  bool swapped_;
};

struct RecordHeader {
  uint32_t type = 0;
  uint16_t misc = 0;
  uint16_t size = 0;
};

inline RecordHeader ReadRecordHeader(const uint8_t* p, ByteOrder order) {
  return {order.U32(p), order.U16(p + 4), order.U16(p + 6)};
}

}  // namespace tprof::perf_data
