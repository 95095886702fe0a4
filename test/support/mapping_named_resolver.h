// Resolvers that name every frame after the file mapped at its address: code mapped anew at an
// address gets another name there, which lets a test see whether a remapping was noticed.
#pragma once

#include <string>

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

// The same for code in a file; code without one (JIT code) is named after the process that asks
// (FrameResolver::ResolveInProcess), which lets a test see which process named it first.
class PidNamingResolver : public FrameResolver {
 public:
  ResolvedFrame Resolve(const Mapping* mapping, uint64_t address) override {
    return ResolveInProcess(0, mapping, address);
  }
  ResolvedFrame ResolveInProcess(uint32_t pid, const Mapping* mapping, uint64_t) override {
    ResolvedFrame r;
    r.function = mapping && !IsFilelessMapping(mapping->filename) ? "in_" + mapping->filename
                                                                  : "jit_of_" + std::to_string(pid);
    r.module = mapping ? mapping->filename : "[unknown]";
    r.resolved = true;
    return r;
  }
};

}  // namespace tprof::testing
