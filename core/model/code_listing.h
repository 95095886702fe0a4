// What a binary says about one function's code: its range and instructions, each with its source
// line, in the binary's own address layout. symbolize/ reads it (ListFunction); analyses that
// place samples on instructions (annotate) take it as data, so that they need no binary.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tprof {

struct ListedInstruction {
  uint64_t address = 0;
  std::string mnemonic;  // "mov"; "(bad)" for bytes that do not decode
  std::string operands;  // "rax, qword ptr [rbp - 8]"
  std::string file;      // source of the instruction; empty when unknown
  uint32_t line = 0;
  std::string source_text;  // that line's text without its indentation; empty when unreadable
};

struct CodeListing {
  uint64_t start = 0, end = 0;  // [start, end): the function's symbol
  std::vector<ListedInstruction> instructions;
  // Sampled file offsets as addresses in the binary, for those a loadable segment maps.
  std::map<uint64_t, uint64_t> address_of_offset;
  // Why there are no instructions (no file, no binary, no symbol, a disassembler error); empty
  // when there are.
  std::string unavailable;
};

}  // namespace tprof
