// Varints as the record codec reads them: every length, with and without bytes after it, and
// damaged input failing as the format's definition says (a failure sticks and consumes the rest).
#include "core/format/varint.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace tprof {
namespace {

// The format's definition, byte by byte, independent of ByteReader.
struct Reference {
  bool ok;
  uint64_t value;
  size_t length;
};
Reference DecodeOne(const std::string& bytes, size_t at) {
  uint64_t value = 0;
  for (size_t i = 0; i < 10; ++i) {
    if (at + i >= bytes.size()) return {false, 0, 0};
    const auto byte = static_cast<uint8_t>(bytes[at + i]);
    value |= static_cast<uint64_t>(byte & 0x7f) << (7 * i);
    if (!(byte & 0x80)) return {true, value, i + 1};
  }
  return {false, 0, 0};
}

std::string Encode(uint64_t v) {  // LEB128, low groups first
  std::string out;
  do {
    const auto group = static_cast<uint8_t>(v & 0x7f);
    v >>= 7;
    out.push_back(static_cast<char>(group | (v ? 0x80 : 0)));
  } while (v);
  return out;
}

TEST(VarintTest, EveryLengthDecodesAtEveryDistanceFromTheEnd) {
  std::vector<uint64_t> values = {0, 1, 0x7f, 0x80, 0x3fff, 0x4000, UINT64_MAX, UINT64_MAX - 1};
  for (int bits = 1; bits <= 64; ++bits) {
    const uint64_t top = bits == 64 ? UINT64_MAX : (uint64_t{1} << bits) - 1;
    values.push_back(top);
    values.push_back(top >> 1 | uint64_t{1} << (bits - 1));  // only the top bit of the width
    values.push_back(top & 0x5555555555555555ull);
  }
  for (uint64_t v : values) {
    for (size_t padding = 0; padding <= 12; ++padding) {
      const std::string bytes = Encode(v) + std::string(padding, '\x01');
      ByteReader in(bytes);
      EXPECT_EQ(in.GetVarint(), v) << v << " with " << padding << " bytes after it";
      EXPECT_TRUE(in.ok());
      EXPECT_EQ(in.remaining(), padding) << v;
    }
  }
}

TEST(VarintTest, ASequenceReadsBackWhole) {
  std::mt19937_64 random(7);
  std::vector<uint64_t> values;
  std::string bytes;
  for (int i = 0; i < 5000; ++i) {
    const uint64_t v = random() >> (random() % 64);
    values.push_back(v);
    bytes += Encode(v);
  }
  ByteReader in(bytes);
  for (uint64_t v : values) ASSERT_EQ(in.GetVarint(), v);
  EXPECT_TRUE(in.ok());
  EXPECT_EQ(in.remaining(), 0u);
}

// Random bytes (continuation bits set often, so long and overlong varints are common) read as
// the definition reads them, until the first failure, which sticks and consumes the rest.
TEST(VarintTest, DamagedBytesReadAsTheDefinitionSays) {
  std::mt19937_64 random(11);
  for (int trial = 0; trial < 3000; ++trial) {
    std::string bytes(random() % 40, '\0');
    const int more = static_cast<int>(random() % 100);  // percent of bytes with "more" set
    for (char& c : bytes)
      c = static_cast<char>((random() & 0x7f) |
                            (static_cast<int>(random() % 100) < more ? 0x80 : 0));
    ByteReader in(bytes);
    size_t at = 0;
    for (;;) {
      const Reference expected = DecodeOne(bytes, at);
      const uint64_t got = in.GetVarint();
      if (!expected.ok) {
        EXPECT_FALSE(in.ok()) << "trial " << trial << " at " << at;
        EXPECT_EQ(got, 0u);
        EXPECT_EQ(in.remaining(), 0u);
        break;
      }
      ASSERT_TRUE(in.ok()) << "trial " << trial << " at " << at;
      ASSERT_EQ(got, expected.value) << "trial " << trial << " at " << at;
      at += expected.length;
      ASSERT_EQ(in.remaining(), bytes.size() - at);
      if (at == bytes.size()) break;
    }
  }
}

// Skipping n varints ends where n reads by the definition end, or fails where one of them fails:
// random bytes with runs of "more" bits of every length (a varint of 10 bytes is whole, of 11
// damaged), at every alignment of the words SkipVarints counts by.
TEST(VarintTest, SkippingEndsWhereReadingEnds) {
  std::mt19937_64 random(12);
  for (int trial = 0; trial < 20000; ++trial) {
    std::string bytes(random() % 64, '\0');
    const int more = static_cast<int>(random() % 101);
    for (char& c : bytes)
      c = static_cast<char>((random() & 0x7f) |
                            (static_cast<int>(random() % 100) < more ? 0x80 : 0));
    const size_t start = bytes.empty() ? 0 : random() % (bytes.size() + 1);
    const uint64_t n = random() % 12;
    // The definition: n varints from `start`.
    size_t at = start;
    bool ok = true;
    for (uint64_t i = 0; i < n && ok; ++i) {
      const Reference one = DecodeOne(bytes, at);
      ok = one.ok;
      at += one.length;
    }
    ByteReader in(bytes);
    in.Skip(start);
    in.SkipVarints(n);
    ASSERT_EQ(in.ok(), ok) << "trial " << trial << ": " << n << " from " << start;
    EXPECT_EQ(in.remaining(), ok ? bytes.size() - at : 0u) << "trial " << trial;
  }
}

// A callchain's deltas read at once (GetDeltaSums, which unpacks a varint from a loaded word)
// give the running sums n reads by the definition give, and fail where one of them fails: in
// bytes that lie inside a larger buffer, so that the words loaded reach past the range's end
// (where the bytes after it must be loaded, never decoded), and in a range that ends its buffer.
TEST(VarintTest, DeltaSumsReadAsTheDefinitionSays) {
  std::mt19937_64 random(13);
  for (int trial = 0; trial < 20000; ++trial) {
    std::string buffer;
    if (random() % 2) {  // real deltas: zigzag varints of every length
      for (int i = 0, count = static_cast<int>(random() % 12); i < count; ++i) {
        const uint64_t magnitude = random() >> (random() % 64);
        buffer += Encode(random() % 2 ? magnitude << 1 : (magnitude << 1) | 1);
      }
    }
    const int more = static_cast<int>(random() % 101);
    for (int i = 0, count = static_cast<int>(random() % 24); i < count; ++i)
      buffer.push_back(static_cast<char>((random() & 0x7f) |
                                         (static_cast<int>(random() % 100) < more ? 0x80 : 0)));
    const size_t start = buffer.empty() ? 0 : random() % (buffer.size() + 1);
    const size_t stop = start + random() % (buffer.size() - start + 1);
    const uint64_t n = random() % 14;
    // The definition, over [start, stop).
    const std::string range = buffer.substr(start, stop - start);
    std::vector<uint64_t> sums;
    size_t at = 0;
    bool ok = true;
    for (uint64_t i = 0, sum = 0; i < n && ok; ++i) {
      const Reference one = DecodeOne(range, at);
      ok = one.ok;
      at += one.length;
      sum += static_cast<uint64_t>(ZigZagDecode(one.value));
      sums.push_back(sum);
    }
    const auto* base = reinterpret_cast<const uint8_t*>(buffer.data());
    for (const bool readable_after : {false, true}) {
      ByteReader in(std::string_view(buffer).substr(start, stop - start),
                    readable_after ? base + buffer.size() : base + stop);
      std::vector<uint64_t> got(n, 0);
      in.GetDeltaSums(got.data(), n);
      ASSERT_EQ(in.ok(), ok) << "trial " << trial << ": " << n << " in [" << start << ", " << stop
                             << ") of " << buffer.size();
      if (!ok) {
        EXPECT_EQ(in.remaining(), 0u) << "trial " << trial;
        continue;
      }
      EXPECT_EQ(got, sums) << "trial " << trial;
      EXPECT_EQ(in.remaining(), range.size() - at) << "trial " << trial;
    }
  }
}

}  // namespace
}  // namespace tprof
