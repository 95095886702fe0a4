// Instructions of a module's code with their source lines, for annotate views: capstone decodes
// x86-64 and AArch64, the module's DWARF line table gives each instruction its file:line.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/error.h"

namespace tprof {

class DwarfModule;

enum class Architecture { kX86_64, kAArch64 };

// The architecture of an ELF e_machine value, or an error for one capstone is not set up for.
Result<Architecture> ArchitectureOfMachine(uint16_t e_machine);

struct Instruction {
  uint64_t address = 0;
  uint32_t size = 0;
  std::string mnemonic;  // "mov"; "(bad)" for bytes that do not decode
  std::string operands;  // "rax, qword ptr [rbp - 8]"
  std::string file;      // source of the instruction; empty when unknown
  uint32_t line = 0;
};

class Disassembler {
 public:
  static Result<Disassembler> Create(Architecture architecture);
  ~Disassembler();
  Disassembler(Disassembler&& other) noexcept;
  Disassembler& operator=(Disassembler&& other) noexcept;
  Disassembler(const Disassembler&) = delete;
  Disassembler& operator=(const Disassembler&) = delete;

  // Decodes `code`, which is loaded at `address`. A byte that does not decode becomes a one-byte
  // "(bad)" instruction (4 bytes on AArch64) and decoding goes on after it.
  std::vector<Instruction> Decode(std::string_view code, uint64_t address) const;

  struct Capstone;  // the library's functions, loaded on first use

 private:
  Disassembler(const Capstone* api, size_t handle, Architecture architecture)
      : api_(api), handle_(handle), architecture_(architecture) {}
  void Close();

  const Capstone* api_;
  size_t handle_ = 0;  // capstone's csh
  Architecture architecture_;
};

// The instructions of `module` in [start, end) (addresses in the file's own layout), each with
// its source line.
Result<std::vector<Instruction>> DisassembleRange(DwarfModule& module, uint64_t start,
                                                  uint64_t end);

}  // namespace tprof
