// A binary's code symbols as binutils list them (nm for the symbols, readelf for the segments that
// turn a file offset into an address), so that tests can name the function at an address without
// tprof's own symbolizer, whose answers they check.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "test/support/run_command.h"

namespace tprof::testing {

class NmSymbols {
 public:
  // Empty (and `error` set) when nm or readelf cannot read `binary`.
  explicit NmSymbols(const std::string& binary) {
    CommandResult nm = RunCommand({"/usr/bin/nm", "-S", "--defined-only", binary});
    CommandResult segments = RunCommand({"/usr/bin/readelf", "-lW", binary});
    if (nm.exit_code != 0 || segments.exit_code != 0) {
      error = nm.err + segments.err;
      return;
    }
    std::istringstream nm_lines(nm.out);
    for (std::string line; std::getline(nm_lines, line);) {
      char name[512], kind;
      unsigned long long start, size;
      // With a size: "START SIZE KIND NAME"; without (labels such as _init): no size.
      if (std::sscanf(line.c_str(), "%llx %llx %c %511s", &start, &size, &kind, name) == 4 &&
          (kind == 'T' || kind == 't' || kind == 'W' || kind == 'w'))
        symbols_.push_back({start, size, name});
    }
    std::sort(symbols_.begin(), symbols_.end(),
              [](const Symbol& a, const Symbol& b) { return a.start < b.start; });
    std::istringstream segment_lines(segments.out);
    for (std::string line; std::getline(segment_lines, line);) {
      unsigned long long offset, vaddr, paddr, filesz;
      if (std::sscanf(line.c_str(), " LOAD 0x%llx 0x%llx 0x%llx 0x%llx", &offset, &vaddr, &paddr,
                      &filesz) == 4)
        loads_.push_back({offset, vaddr, filesz});
    }
  }

  // The link-time address of the sized code symbol `name`; 0 when there is none.
  uint64_t Start(const std::string& name) const {
    for (const Symbol& s : symbols_)
      if (s.name == name) return s.start;
    return 0;
  }
  // The sized code symbol holding the link-time address `address`; empty when none does.
  std::string At(uint64_t address) const {
    for (const Symbol& s : symbols_)
      if (address >= s.start && address < s.start + s.size) return s.name;
    return "";
  }
  // The same for a file offset, through the loadable segment that maps it.
  std::string AtFileOffset(uint64_t offset) const {
    for (const Load& l : loads_)
      if (offset >= l.offset && offset < l.offset + l.size) return At(offset - l.offset + l.vaddr);
    return "";
  }

  std::string error;

 private:
  struct Symbol {
    uint64_t start, size;
    std::string name;
  };
  struct Load {
    uint64_t offset, vaddr, size;
  };
  std::vector<Symbol> symbols_;
  std::vector<Load> loads_;
};

}  // namespace tprof::testing
