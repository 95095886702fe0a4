#include "core/model/frame_interner.h"

#include "absl/hash/hash.h"

namespace tprof {

// Not every field: the mangled names follow the demangled ones and a module has one build-id,
// so hashing them too (long C++ names, twice) told frames apart no better. Eq compares all.
size_t FrameInterner::Hash::operator()(const ResolvedFrame* frame) const {
  size_t h = absl::HashOf(frame->function, frame->module, frame->resolved, frame->frames.size());
  for (const SourceFrame& f : frame->frames)
    h = absl::HashOf(h, f.function, f.file, f.line, f.column, f.inlined);
  return h;
}

const ResolvedFrame* FrameInterner::Intern(ResolvedFrame frame) {
  if (auto it = index_.find(&frame); it != index_.end()) return *it;
  const ResolvedFrame* held = &frames_.emplace_back(std::move(frame));
  index_.insert(held);
  return held;
}

}  // namespace tprof
