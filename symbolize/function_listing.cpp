#include "symbolize/function_listing.h"

#include <fstream>

#include "symbolize/disassembler.h"
#include "symbolize/dwarf_module.h"

namespace tprof {

const std::string* SourceLines::Line(const std::string& file, uint32_t line) {
  auto [it, inserted] = files_.try_emplace(file);
  if (inserted) {
    std::ifstream in(file);
    for (std::string text; std::getline(in, text);) it->second.push_back(text);
  }
  if (line == 0 || line > it->second.size()) return nullptr;
  return &it->second[line - 1];
}

CodeListing ListFunction(DwarfModule* module, const std::vector<std::string>& names,
                         const std::vector<uint64_t>& sampled_offsets, SourceLines& sources) {
  CodeListing listing;
  if (!module) {
    listing.unavailable =
        "the binary was not found or its build-id differs (try --symfs or --binary)";
    return listing;
  }
  bool found = false;
  for (const std::string& name : names)
    if (!name.empty() && module->FindFunction(name, &listing.start, &listing.end)) {
      found = true;
      break;
    }
  if (!found) {
    listing.unavailable = "the binary has no symbol for it";
    return listing;
  }
  auto decoded = DisassembleRange(*module, listing.start, listing.end);
  if (!decoded.ok()) {
    listing.unavailable = decoded.error().message();
    return listing;
  }
  for (Instruction& insn : decoded.value()) {
    ListedInstruction listed{insn.address,
                             std::move(insn.mnemonic),
                             std::move(insn.operands),
                             std::move(insn.file),
                             insn.line,
                             {}};
    if (!listed.file.empty())
      if (const std::string* text = sources.Line(listed.file, listed.line)) {
        const size_t first = text->find_first_not_of(" \t");
        if (first != std::string::npos) listed.source_text = text->substr(first);
      }
    listing.instructions.push_back(std::move(listed));
  }
  for (uint64_t offset : sampled_offsets) {
    uint64_t address = 0;
    if (module->FileOffsetToAddress(offset, &address)) listing.address_of_offset[offset] = address;
  }
  return listing;
}

}  // namespace tprof
