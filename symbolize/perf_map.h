// Symbols of JIT-compiled code from /tmp/perf-PID.map, the text file that JITs (V8, the JVM
// with perf-map-agent, LuaJIT, ...) write for perf: one "START SIZE NAME" line per function,
// START and SIZE in hex.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/base/error.h"

namespace tprof {

class PerfMap {
 public:
  struct Entry {
    uint64_t start;
    uint64_t size;
    std::string name;
  };

  static Result<PerfMap> Load(const std::string& path);

  // The entry holding `address`; later lines win when entries overlap (code was re-JITted).
  const Entry* Find(uint64_t address) const;
  size_t size() const { return entries_.size(); }

 private:
  std::vector<Entry> entries_;  // sorted by start
};

}  // namespace tprof
