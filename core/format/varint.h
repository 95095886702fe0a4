// LEB128 varints and zigzag encoding used by the .tprof record codec. Most fields of a profile
// record are small (deltas, indexes, counts), so they cost one or two bytes instead of eight.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
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
// Each byte's high bit in a word of eight: set in a varint's every byte but its last, so
// ~word & kVarintMoreBits marks the bytes of a word that end one (read a word at a time).
inline constexpr uint64_t kVarintMoreBits = 0x8080808080808080ull;

// The bytes ByteWriter::PutVarint writes for v.
constexpr size_t VarintSize(uint64_t v) {
  size_t n = 1;
  for (; v >= 0x80; v >>= 7) ++n;
  return n;
}

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
  ByteReader(const uint8_t* data, size_t size)
      : pos_(data), end_(data + size), readable_end_(end_) {}
  explicit ByteReader(std::string_view s)
      : ByteReader(reinterpret_cast<const uint8_t*>(s.data()), s.size()) {}
  // Reads `s`, which lies in memory readable up to `readable_end` (a record in its chunk): the
  // bytes after `s` may be loaded, never decoded.
  ByteReader(std::string_view s, const uint8_t* readable_end) : ByteReader(s) {
    if (readable_end > end_) readable_end_ = readable_end;
  }

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
  // GetVarint for runs of fields of several bytes whose length varies (a callchain's address
  // deltas): byte by byte, the branch on each byte's high bit mispredicted at every varint's
  // end, which was where decoding spent its time. Where eight bytes can be loaded, a varint of
  // up to eight is found and unpacked from one word without a branch per byte. (For a sample's
  // header, fields of one or two bytes, GetVarint is fewer instructions and no more
  // mispredictions.)
  uint64_t GetWideVarint() {
    if (std::endian::native != std::endian::little || readable_end_ - pos_ < 8) return GetVarint();
    uint64_t word;
    std::memcpy(&word, pos_, 8);
    const uint64_t ends = ~word & kVarintMoreBits;  // bytes that end a varint
    if (ends == 0) return GetVarint();              // nine or ten bytes
    const int bytes = std::countr_zero(ends) / 8 + 1;
    if (bytes > end_ - pos_) return Fail();  // its end is past the range's
    pos_ += bytes;
    uint64_t v = word & (~uint64_t{0} >> (64 - 8 * bytes)) & 0x7f7f7f7f7f7f7f7full;
    // The 7-bit groups packed: pairs into 14 bits, those into 28, those into 56.
    v = (v & 0x007f007f007f007full) | ((v & 0x7f007f007f007f00ull) >> 1);
    v = (v & 0x00003fff00003fffull) | ((v & 0x3fff00003fff0000ull) >> 2);
    return (v & 0x000000000fffffffull) | ((v & 0x0fffffff00000000ull) >> 4);
  }
  int64_t GetWideSigned() { return ZigZagDecode(GetWideVarint()); }
  // Reads `n` signed varints as deltas and stores their running sums (a callchain's addresses),
  // as n calls of GetSigned would.
  void GetDeltaSums(uint64_t* out, uint64_t n) {
    uint64_t sum = 0;
    for (uint64_t i = 0; i < n; ++i) {
      sum += static_cast<uint64_t>(GetWideSigned());
      out[i] = sum;
    }
  }
  // Steps over `n` varints as n calls of GetVarint read them, failing where they fail (at the
  // end of the bytes, or at a varint of more than 10 bytes). A varint ends at a byte without its
  // high bit, so whole words of bytes are counted at once: byte by byte, the branch on each
  // byte's bit mispredicted and skipping cost more than decoding.
  void SkipVarints(uint64_t n) {
    constexpr int kMaxBytes = 10;  // 10 x 7 bits: GetVarint's 64
    int run = 0;                   // bytes of the varint under way
    if constexpr (std::endian::native == std::endian::little) {
      while (n > 0 && end_ - pos_ >= 8) {
        uint64_t word;
        std::memcpy(&word, pos_, 8);
        const uint64_t ends = ~word & kVarintMoreBits;  // the high bit of each byte that ends one
        // One bit per byte, summed into the top byte by the multiply (std::popcount is a
        // library call on baseline x86-64).
        const uint64_t count = ((ends >> 7) * 0x0101010101010101ull) >> 56;
        if (count >= n) break;  // the last one ends in this word: the byte loop finds where
        if (!ends) {
          run += 8;
          if (run >= kMaxBytes) return void(Fail());  // its tenth byte is not its last
        } else {
          if (run + std::countr_zero(ends) / 8 + 1 > kMaxBytes) return void(Fail());
          run = std::countl_zero(ends) / 8;  // bytes after the word's last end
        }
        n -= count;
        pos_ += 8;
      }
    }
    while (n > 0) {
      if (pos_ >= end_ || run == kMaxBytes) return void(Fail());
      ++run;
      if (!(*pos_++ & 0x80)) {
        --n;
        run = 0;
      }
    }
  }
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
  const uint8_t* readable_end_;  // >= end_: loads may reach it, reads stop at end_
  bool ok_ = true;
};

}  // namespace tprof
