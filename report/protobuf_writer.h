// The protobuf wire format, write side only: enough for pprof's profile.proto (varints,
// length-delimited strings and messages, packed repeated varints). Fields follow proto3: a
// scalar equal to zero is not written; strings and messages are written even when empty.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tprof {

class ProtobufWriter {
 public:
  // A varint field (int64, uint64, bool); zero is the default and is left out.
  void Varint(uint32_t field, uint64_t value) {
    if (value == 0) return;
    PutVarint(uint64_t{field} << 3 | kWireVarint);
    PutVarint(value);
  }
  // A length-delimited field: a string, bytes, or an encoded message.
  void Bytes(uint32_t field, std::string_view bytes) {
    PutVarint(uint64_t{field} << 3 | kWireLengthDelimited);
    PutVarint(bytes.size());
    out_.append(bytes);
  }
  void Message(uint32_t field, const ProtobufWriter& message) { Bytes(field, message.out_); }
  // A packed repeated varint field; nothing when empty.
  template <typename Container>
  void PackedVarints(uint32_t field, const Container& values) {
    if (values.empty()) return;
    ProtobufWriter packed;
    for (auto v : values) packed.PutVarint(static_cast<uint64_t>(v));
    Bytes(field, packed.out_);
  }

  const std::string& bytes() const { return out_; }
  std::string Take() { return std::move(out_); }
  void Clear() { out_.clear(); }

 private:
  static constexpr uint32_t kWireVarint = 0;
  static constexpr uint32_t kWireLengthDelimited = 2;

  void PutVarint(uint64_t v) {
    while (v >= 0x80) {
      out_.push_back(static_cast<char>(v | 0x80));
      v >>= 7;
    }
    out_.push_back(static_cast<char>(v));
  }

  std::string out_;
};

}  // namespace tprof
