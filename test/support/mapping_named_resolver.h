// A resolver that names every frame after the file mapped at its address: code mapped anew at an
// address gets another name there, which lets a test see whether a remapping was noticed.
#pragma once

#include "core/model/frame_resolver.h"

namespace tprof::testing {

class MappingNamedResolver : public FrameResolver {
 public:
  ResolvedFrame Resolve(const Mapping* mapping, uint64_t) override {
    ResolvedFrame r;
    r.module = mapping ? mapping->filename : "[unknown]";
    r.function = mapping ? "in_" + mapping->filename : "?";
    return r;
  }
};

}  // namespace tprof::testing
