// Immutable text shared by every copy of it: a copy is a pointer and a count, not the text.
// A call tree holds its nodes' function and module names this way. On the 1M-sample benchmark
// profile the tree's 198,914 nodes named 3,148 distinct functions (0.93 MB of text), and a
// std::string per node held 58.7 MB of copies of them.
//
// The count is atomic, so copies may be made and dropped on any thread (a tree built on one
// thread is read and copied from on another); the text itself is never written after it is
// made. A SharedString owns its text: unlike a string_view, assigning a temporary to it cannot
// dangle.
#pragma once

#include <atomic>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "core/base/absl_view.h"

namespace tprof {

class SharedString {
 public:
  SharedString() = default;
  explicit SharedString(std::string_view text) {
    if (text.empty()) return;  // the empty text needs no allocation
    void* memory = ::operator new(sizeof(Rep) + text.size());
    rep_ = new (memory) Rep{{1}, text.size()};
    std::memcpy(rep_->chars(), text.data(), text.size());
  }
  SharedString(const SharedString& other) noexcept : rep_(other.rep_) {
    if (rep_) rep_->refs.fetch_add(1, std::memory_order_relaxed);
  }
  SharedString(SharedString&& other) noexcept : rep_(std::exchange(other.rep_, nullptr)) {}
  SharedString& operator=(SharedString other) noexcept {
    std::swap(rep_, other.rep_);
    return *this;
  }
  // A copy of the text (shared with nothing): `node.name = some_string_view` keeps working.
  SharedString& operator=(std::string_view text) { return *this = SharedString(text); }
  ~SharedString() {
    // acq_rel: the last owner must see every other owner's reads done before it frees.
    if (rep_ && rep_->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      rep_->~Rep();
      ::operator delete(rep_);
    }
  }

  std::string_view view() const {
    return rep_ ? std::string_view(rep_->chars(), rep_->size) : std::string_view();
  }
  operator std::string_view() const { return view(); }  // NOLINT: reads as the text it is
  std::string str() const { return std::string(view()); }
  const char* data() const { return view().data(); }
  size_t size() const { return rep_ ? rep_->size : 0; }
  bool empty() const { return rep_ == nullptr; }
  std::string_view::const_iterator begin() const { return view().begin(); }
  std::string_view::const_iterator end() const { return view().end(); }
  // Whether the two share one text (not only equal ones).
  bool SharesTextWith(const SharedString& other) const { return rep_ == other.rep_; }

  friend bool operator==(const SharedString& a, const SharedString& b) {
    return a.rep_ == b.rep_ || a.view() == b.view();
  }
  friend bool operator==(const SharedString& a, std::string_view b) { return a.view() == b; }
  friend std::strong_ordering operator<=>(const SharedString& a, const SharedString& b) {
    return a.view() <=> b.view();
  }
  friend std::strong_ordering operator<=>(const SharedString& a, std::string_view b) {
    return a.view() <=> b;
  }
  friend std::ostream& operator<<(std::ostream& out, const SharedString& s) {
    return out << s.view();
  }

 private:
  struct Rep {
    std::atomic<uint32_t> refs;
    size_t size;
    char* chars() { return reinterpret_cast<char*>(this + 1); }
  };
  Rep* rep_ = nullptr;
};

// One SharedString per distinct text: the texts handed out for equal views share one copy.
class SharedStringPool {
 public:
  const SharedString& Intern(std::string_view text) {
    auto it = by_text_.find(AbslView(text));
    if (it != by_text_.end()) return it->second;
    SharedString shared(text);
    // The key views the shared copy's own text, which never moves.
    const absl::string_view key = AbslView(shared.view());
    return by_text_.emplace(key, std::move(shared)).first->second;
  }
  size_t size() const { return by_text_.size(); }

 private:
  absl::flat_hash_map<absl::string_view, SharedString> by_text_;
};

}  // namespace tprof
