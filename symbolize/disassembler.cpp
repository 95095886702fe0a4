#include "symbolize/disassembler.h"

#include <capstone/capstone.h>
#include <elf.h>

#include <utility>

#include "symbolize/dwarf_module.h"

namespace tprof {

Result<Architecture> ArchitectureOfMachine(uint16_t e_machine) {
  switch (e_machine) {
    case EM_X86_64:
      return Architecture::kX86_64;
    case EM_AARCH64:
      return Architecture::kAArch64;
    default:
      return Error("no disassembler for ELF machine " + std::to_string(e_machine));
  }
}

Result<Disassembler> Disassembler::Create(Architecture architecture) {
  csh handle = 0;
  cs_err err = architecture == Architecture::kX86_64 ? cs_open(CS_ARCH_X86, CS_MODE_64, &handle)
                                                     : cs_open(CS_ARCH_ARM64, CS_MODE_ARM, &handle);
  if (err != CS_ERR_OK) return Error(std::string("capstone: ") + cs_strerror(err));
  if (architecture == Architecture::kX86_64) cs_option(handle, CS_OPT_SYNTAX, CS_OPT_SYNTAX_INTEL);
  return Disassembler(handle, architecture);
}

Disassembler::~Disassembler() {
  if (handle_) {
    csh handle = handle_;
    cs_close(&handle);
  }
}

Disassembler::Disassembler(Disassembler&& other) noexcept
    : handle_(std::exchange(other.handle_, 0)), architecture_(other.architecture_) {}

Disassembler& Disassembler::operator=(Disassembler&& other) noexcept {
  if (this != &other) {
    if (handle_) {
      csh handle = handle_;
      cs_close(&handle);
    }
    handle_ = std::exchange(other.handle_, 0);
    architecture_ = other.architecture_;
  }
  return *this;
}

std::vector<Instruction> Disassembler::Decode(std::string_view code, uint64_t address) const {
  std::vector<Instruction> out;
  const auto* bytes = reinterpret_cast<const uint8_t*>(code.data());
  size_t left = code.size();
  uint64_t at = address;
  cs_insn* insn = cs_malloc(handle_);
  const size_t bad_size = architecture_ == Architecture::kAArch64 ? 4 : 1;
  while (left > 0) {
    if (cs_disasm_iter(handle_, &bytes, &left, &at, insn)) {
      Instruction decoded;
      decoded.address = insn->address;
      decoded.size = insn->size;
      decoded.mnemonic = insn->mnemonic;
      decoded.operands = insn->op_str;
      out.push_back(std::move(decoded));
      continue;
    }
    // Data in the code or a truncated instruction: say so and resynchronise after it.
    Instruction bad;
    bad.address = at;
    bad.size = static_cast<uint32_t>(std::min(bad_size, left));
    bad.mnemonic = "(bad)";
    out.push_back(bad);
    bytes += bad.size;
    left -= bad.size;
    at += bad.size;
  }
  cs_free(insn, 1);
  return out;
}

Result<std::vector<Instruction>> DisassembleRange(DwarfModule& module, uint64_t start,
                                                  uint64_t end) {
  if (end <= start) return std::vector<Instruction>{};
  auto architecture = ArchitectureOfMachine(module.machine());
  if (!architecture.ok()) return architecture.error();
  std::string_view code = module.CodeAt(start, end - start);
  if (code.empty()) return Error(module.path() + ": no code at the requested addresses");
  auto disassembler = Disassembler::Create(*architecture);
  if (!disassembler.ok()) return disassembler.error();
  std::vector<Instruction> instructions = disassembler->Decode(code, start);
  for (Instruction& instruction : instructions)
    module.LineAt(instruction.address, &instruction.file, &instruction.line);
  return instructions;
}

}  // namespace tprof
