// Resolves addresses to functions from the ELF symbol tables of the recorded mappings.
// One loaded table per file; a file that cannot be read, or whose build-id differs from the
// recorded one, resolves to "[module+0xoffset]" rather than to a wrong name.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "core/frame_resolver.h"
#include "symbolize/elf_symbols.h"

namespace tprof {

class ElfSymbolizer : public FrameResolver {
 public:
  ResolvedFrame Resolve(const Mapping* mapping, uint64_t address) override;

 private:
  const ElfSymbols* SymbolsFor(const Mapping& mapping);

  std::map<std::string, std::unique_ptr<ElfSymbols>> tables_;  // null: unusable file
};

}  // namespace tprof
