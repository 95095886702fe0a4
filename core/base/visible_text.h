// Names reach tprof as bytes: a thread name, a path, a symbol or an event name may hold any byte
// but NUL, and not every one is UTF-8. The one rule for every output that is text (the table,
// CSV, JSON, speedscope, the flame graph page): a byte that is not part of a well-formed UTF-8
// sequence is shown as the four characters \xHH (two upper-case hex digits), every other byte as
// it is. JSON and the page then stay valid UTF-8, every output shows the same name the same way,
// and names that differ in their bytes still differ when shown (except a name that already
// holds the text \xHH, which reads the same as the byte). The profile model and the matching
// of names across profiles (diff, streams) keep the bytes; pprof, whose strings are bytes, too.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <streambuf>
#include <string>
#include <string_view>

namespace tprof {

// Whether `bytes` is well-formed UTF-8 (Unicode's table 3-7: no overlong forms, no surrogates,
// nothing above U+10FFFF).
bool IsWellFormedUtf8(std::string_view bytes);

// `bytes` with every byte outside a well-formed sequence written \xHH.
std::string VisibleText(std::string_view bytes);

// Rewrites every string and object key in `json` (nlohmann::json or ordered_json) by
// VisibleText.
template <typename Json>
void MakeJsonTextVisible(Json& json) {
  if (json.is_string()) {
    auto& text = json.template get_ref<std::string&>();
    if (!IsWellFormedUtf8(text)) text = VisibleText(text);
  } else if (json.is_array()) {
    for (Json& element : json) MakeJsonTextVisible(element);
  } else if (json.is_object()) {
    // Keys cannot be changed in place: an object with a key to rewrite is rebuilt, in order.
    bool keys_visible = true;
    for (auto it = json.begin(); it != json.end(); ++it) {
      keys_visible &= IsWellFormedUtf8(it.key());
      MakeJsonTextVisible(it.value());
    }
    if (!keys_visible) {
      Json rebuilt = Json::object();
      for (auto it = json.begin(); it != json.end(); ++it)
        rebuilt[VisibleText(it.key())] = std::move(it.value());
      json = std::move(rebuilt);
    }
  }
}

// `json` as text (nlohmann's dump with `indent`), its strings first made visible: never throws
// for a name's bytes.
template <typename Json>
std::string DumpVisibleJson(Json& json, int indent = -1) {
  MakeJsonTextVisible(json);
  return json.dump(indent);
}

// A stream that writes text to another with VisibleText's rule: for the renderers that write
// a table, CSV, folded stacks or a diff to a terminal or pipe. A sequence cut between two writes
// is held until the next; what is left is written (and flushed) on flush and destruction.
class VisibleTextStreambuf : public std::streambuf {
 public:
  explicit VisibleTextStreambuf(std::ostream& sink) : sink_(sink) {}
  ~VisibleTextStreambuf() override { Drain(true); }

 protected:
  int_type overflow(int_type c) override;
  std::streamsize xsputn(const char* data, std::streamsize size) override;
  int sync() override;

 private:
  // Writes what is pending up to a sequence that may still be completed (all of it when
  // `everything`).
  void Drain(bool everything);

  std::ostream& sink_;
  std::string pending_;
};

class VisibleTextStream : public std::ostream {
 public:
  explicit VisibleTextStream(std::ostream& sink) : std::ostream(nullptr), buffer_(sink) {
    rdbuf(&buffer_);
  }
  ~VisibleTextStream() override { flush(); }

 private:
  VisibleTextStreambuf buffer_;
};

}  // namespace tprof
