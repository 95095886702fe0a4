// One copy of each distinct resolved frame. Most addresses of a function resolve alike (the
// same name and, without line tables, the same everything; with them, one frame per line), so
// a table of every sampled address holds far fewer frames than addresses: this is what keeps
// the symbol step after a recording, and a report over a million callchain addresses, small.
#pragma once

#include <cstddef>
#include <deque>

#include "absl/container/flat_hash_set.h"
#include "core/model/frame_resolver.h"

namespace tprof {

class FrameInterner {
 public:
  FrameInterner() = default;
  // Movable, not copyable: callers keep the pointers Intern returns.
  FrameInterner(FrameInterner&&) = default;
  FrameInterner& operator=(FrameInterner&&) = default;
  FrameInterner(const FrameInterner&) = delete;
  FrameInterner& operator=(const FrameInterner&) = delete;

  // The held frame equal to `frame`, added if there is none; valid as long as the interner.
  const ResolvedFrame* Intern(ResolvedFrame frame);
  size_t size() const { return frames_.size(); }

 private:
  struct Hash {
    size_t operator()(const ResolvedFrame* frame) const;
  };
  struct Eq {
    bool operator()(const ResolvedFrame* a, const ResolvedFrame* b) const { return *a == *b; }
  };
  std::deque<ResolvedFrame> frames_;  // never moves its elements
  absl::flat_hash_set<const ResolvedFrame*, Hash, Eq> index_;
};

}  // namespace tprof
