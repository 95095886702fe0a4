// Reads a function's CodeListing out of its binary: the symbol's range, the disassembly with
// source lines, and the text of those lines from the source files (read once each).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/model/code_listing.h"

namespace tprof {

class DwarfModule;

// Opens the binary that a module name and build-id stand for; null when none is usable.
using ModuleOpener =
    std::function<DwarfModule*(const std::string& module, const std::string& build_id)>;

// Lines of source files, read once each; none when a file cannot be read.
class SourceLines {
 public:
  // The line's text (1-based), or null.
  const std::string* Line(const std::string& file, uint32_t line);

 private:
  std::map<std::string, std::vector<std::string>> files_;
};

// The listing of the first of `names` (symbol names, mangled or not) that `module` defines, with
// `sampled_offsets` (file offsets) placed in its address layout. A null module, or none of the
// names found, gives a listing that says why it is empty.
CodeListing ListFunction(DwarfModule* module, const std::vector<std::string>& names,
                         const std::vector<uint64_t>& sampled_offsets, SourceLines& sources);

}  // namespace tprof
