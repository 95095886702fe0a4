#include "symbolize/perf_map.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>

namespace tprof {

Result<PerfMap> PerfMap::Load(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Error("cannot read " + path);
  PerfMap map;
  std::string line;
  while (std::getline(in, line)) {
    const char* p = line.c_str();
    char* end = nullptr;
    uint64_t start = std::strtoull(p, &end, 16);
    if (end == p || *end != ' ') continue;
    p = end + 1;
    uint64_t size = std::strtoull(p, &end, 16);
    if (end == p || *end != ' ' || size == 0) continue;
    map.entries_.push_back({start, size, std::string(end + 1)});
  }
  // Stable: among entries at one start, the last line (the newest code) stays last.
  std::stable_sort(map.entries_.begin(), map.entries_.end(),
                   [](const Entry& a, const Entry& b) { return a.start < b.start; });
  return map;
}

const PerfMap::Entry* PerfMap::Find(uint64_t address) const {
  auto it = std::upper_bound(entries_.begin(), entries_.end(), address,
                             [](uint64_t a, const Entry& e) { return a < e.start; });
  // Look back past entries that do not reach the address (an older, shorter neighbour).
  for (int checked = 0; it != entries_.begin() && checked < 16; ++checked) {
    --it;
    if (address < it->start + it->size) return &*it;
  }
  return nullptr;
}

}  // namespace tprof
