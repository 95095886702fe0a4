// LEB128 varints and zigzag encoding used by the .tprof record codec. Most fields of a profile
// record are small (deltas, indexes, counts), so they cost one or two bytes instead of eight.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tprof {

inline uint64_t ZigZagEncode(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
inline int64_t ZigZagDecode(uint64_t v) {
  return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
}

// Writes a varint at `p`, into space the caller made beforehand (at most 10 bytes), and returns
// the end: hot encoders size a record once instead of growing the buffer per field.
inline char* PutVarintAt(char* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<char>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<char>(v);
  return p;
}
inline constexpr size_t kMaxVarintBytes = 10;

// Appends bytes to a growable buffer. Kept minimal because it sits on the write hot path.
class ByteWriter {
 public:
  explicit ByteWriter(std::string& out) : out_(out) {}

  void PutVarint(uint64_t v) {
    char buf[10];
    size_t n = 0;
    while (v >= 0x80) {
      buf[n++] = static_cast<char>(v | 0x80);
      v >>= 7;
    }
    buf[n++] = static_cast<char>(v);
    out_.append(buf, n);
  }
  void PutSigned(int64_t v) { PutVarint(ZigZagEncode(v)); }
  void PutBytes(std::string_view bytes) {
    PutVarint(bytes.size());
    out_.append(bytes);
  }
  void PutRaw(std::string_view bytes) { out_.append(bytes); }

 private:
  std::string& out_;
};

// Reads from a byte range; every read is bounds-checked and a failed read sticks, so decoders
// can read a whole record and check ok() once at the end.
class ByteReader {
 public:
  ByteReader(const uint8_t* data, size_t size) : pos_(data), end_(data + size) {}
  explicit ByteReader(std::string_view s)
      : ByteReader(reinterpret_cast<const uint8_t*>(s.data()), s.size()) {}

  uint64_t GetVarint() {
    uint64_t result = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= end_) return Fail();
      uint8_t byte = *pos_++;
      result |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if (!(byte & 0x80)) return result;
    }
    return Fail();
  }
  int64_t GetSigned() { return ZigZagDecode(GetVarint()); }
  // Returns a varint-length-prefixed byte string; empty on failure.
  std::string_view GetBytes() {
    uint64_t n = GetVarint();
    if (!ok_ || n > remaining()) {
      Fail();
      return {};
    }
    std::string_view s(reinterpret_cast<const char*>(pos_), n);
    pos_ += n;
    return s;
  }
  // Reads a count that bounds a following array of at least min_bytes_each bytes per element, so
  // a corrupt count cannot make the caller allocate gigabytes.
  uint64_t GetCount(size_t min_bytes_each) {
    uint64_t n = GetVarint();
    if (ok_ && n > remaining() / (min_bytes_each ? min_bytes_each : 1)) Fail();
    return ok_ ? n : 0;
  }
  void Skip(size_t n) {
    if (n > remaining()) {
      Fail();
      return;
    }
    pos_ += n;
  }

  bool ok() const { return ok_; }
  size_t remaining() const { return static_cast<size_t>(end_ - pos_); }
  const uint8_t* position() const { return pos_; }

 private:
  uint64_t Fail() {
    ok_ = false;
    pos_ = end_;
    return 0;
  }

  const uint8_t* pos_;
  const uint8_t* end_;
  bool ok_ = true;
};

}  // namespace tprof
