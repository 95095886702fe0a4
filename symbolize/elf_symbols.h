// The function symbols of one ELF file (.symtab, else .dynsym), looked up by file offset.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/base/error.h"

namespace tprof {

struct ElfSymbol {
  uint64_t address = 0;  // virtual address in the file's own layout
  uint64_t size = 0;
  std::string name;  // mangled, as in the file
};

class ElfSymbols {
 public:
  static Result<ElfSymbols> Load(const std::string& path);

  // The symbol containing the byte at `file_offset` of the file, or nullptr.
  const ElfSymbol* FindByFileOffset(uint64_t file_offset) const;
  const ElfSymbol* FindByAddress(uint64_t address) const;
  // Maps a file offset to the virtual address the ELF program headers give it.
  bool FileOffsetToAddress(uint64_t file_offset, uint64_t* address) const;
  const std::string& build_id() const { return build_id_; }
  size_t size() const { return symbols_.size(); }

 private:
  struct LoadSegment {
    uint64_t offset, vaddr, filesz;
  };
  std::vector<ElfSymbol> symbols_;  // sorted by address
  std::vector<LoadSegment> segments_;
  std::string build_id_;
};

}  // namespace tprof
