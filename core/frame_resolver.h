// The seam between analysis and symbolization: analyses ask for the function that holds an
// address; symbolize/ answers from ELF and DWARF, embedded symbol sections, or not at all.
#pragma once

#include <cstdint>
#include <string>

#include "core/address_space.h"

namespace tprof {

struct ResolvedFrame {
  std::string function;  // demangled; "[module+0xoffset]" when unknown
  std::string module;    // file name of the mapping, "[kernel]", "[unknown]"
  bool resolved = false;
};

class FrameResolver {
 public:
  virtual ~FrameResolver() = default;
  // `mapping` is null when no recorded mapping holds the address.
  virtual ResolvedFrame Resolve(const Mapping* mapping, uint64_t address) = 0;
};

// Kernel text lives in the upper half of the address space on every 64-bit Linux architecture.
inline bool IsKernelAddress(uint64_t address) { return address >> 63; }

}  // namespace tprof
