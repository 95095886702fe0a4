#include "core/base/visible_text.h"

namespace tprof {
namespace {

// The length of the well-formed UTF-8 sequence at `bytes[i]`, or 0 when none starts there.
size_t SequenceLength(std::string_view bytes, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(bytes[k]); };
  const unsigned char lead = byte(i);
  if (lead < 0x80) return 1;
  size_t length;
  unsigned char second_low = 0x80, second_high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) second_low = 0xA0;   // overlong
    if (lead == 0xED) second_high = 0x9F;  // surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) second_low = 0x90;   // overlong
    if (lead == 0xF4) second_high = 0x8F;  // above U+10FFFF
  } else {
    return 0;
  }
  if (i + length > bytes.size()) return 0;
  if (byte(i + 1) < second_low || byte(i + 1) > second_high) return 0;
  for (size_t k = 2; k < length; ++k)
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  return length;
}

}  // namespace

bool IsWellFormedUtf8(std::string_view bytes) {
  for (size_t i = 0; i < bytes.size();) {
    if (static_cast<unsigned char>(bytes[i]) < 0x80) {
      ++i;
      continue;
    }
    const size_t length = SequenceLength(bytes, i);
    if (length == 0) return false;
    i += length;
  }
  return true;
}

std::string VisibleText(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string visible;
  visible.reserve(bytes.size());
  for (size_t i = 0; i < bytes.size();) {
    const size_t length = SequenceLength(bytes, i);
    if (length > 0) {
      visible.append(bytes.substr(i, length));
      i += length;
      continue;
    }
    const auto byte = static_cast<unsigned char>(bytes[i++]);
    visible += "\\x";
    visible += kHex[byte >> 4];
    visible += kHex[byte & 0xF];
  }
  return visible;
}

VisibleTextStreambuf::int_type VisibleTextStreambuf::overflow(int_type c) {
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  pending_.push_back(traits_type::to_char_type(c));
  if (pending_.size() >= 1 << 16) Drain(false);
  return c;
}

std::streamsize VisibleTextStreambuf::xsputn(const char* data, std::streamsize size) {
  pending_.append(data, static_cast<size_t>(size));
  if (pending_.size() >= 1 << 16) Drain(false);
  return size;
}

int VisibleTextStreambuf::sync() {
  Drain(false);
  sink_.flush();
  return sink_ ? 0 : -1;
}

void VisibleTextStreambuf::Drain(bool everything) {
  size_t cut = pending_.size();
  if (!everything) {
    // A lead byte among the last three whose sequence runs past the end may be completed by
    // the next write: it waits.
    for (size_t back = 1; back <= 3 && back <= pending_.size(); ++back) {
      const auto byte = static_cast<unsigned char>(pending_[pending_.size() - back]);
      if (byte < 0x80) break;
      if (byte >= 0xC0) {
        const size_t length = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : 2;
        if (length > back) cut = pending_.size() - back;
        break;
      }
    }
  }
  const std::string_view ready(pending_.data(), cut);
  if (IsWellFormedUtf8(ready))
    sink_.write(ready.data(), static_cast<std::streamsize>(ready.size()));
  else
    sink_ << VisibleText(ready);
  pending_.erase(0, cut);
  if (everything) sink_.flush();
}

}  // namespace tprof
