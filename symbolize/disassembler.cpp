#include "symbolize/disassembler.h"

#include <capstone/capstone.h>
#include <elf.h>

#include <utility>

#include "core/base/shared_library.h"
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

// capstone's functions, from the library loaded on first use (see core/base/shared_library.h).
struct Disassembler::Capstone {
  decltype(&cs_open) open;
  decltype(&cs_option) option;
  decltype(&cs_close) close;
  decltype(&cs_strerror) strerror;
  decltype(&cs_malloc) malloc;
  decltype(&cs_free) free;
  decltype(&cs_disasm_iter) disasm_iter;
};

namespace {

Result<Disassembler::Capstone> LoadCapstone() {
  auto library = SharedLibrary::Open(TPROF_CAPSTONE_SONAME);
  if (!library.ok()) return library.error();
  Disassembler::Capstone api{};
  TPROF_RETURN_IF_ERROR(library->Bind("cs_open", &api.open));
  TPROF_RETURN_IF_ERROR(library->Bind("cs_option", &api.option));
  TPROF_RETURN_IF_ERROR(library->Bind("cs_close", &api.close));
  TPROF_RETURN_IF_ERROR(library->Bind("cs_strerror", &api.strerror));
  TPROF_RETURN_IF_ERROR(library->Bind("cs_malloc", &api.malloc));
  TPROF_RETURN_IF_ERROR(library->Bind("cs_free", &api.free));
  TPROF_RETURN_IF_ERROR(library->Bind("cs_disasm_iter", &api.disasm_iter));
  return api;
}

}  // namespace

Result<Disassembler> Disassembler::Create(Architecture architecture) {
  // Loaded once for the process: the functions never change once found.
  static const Result<Capstone> loaded = LoadCapstone();
  if (!loaded.ok()) return loaded.error();
  const Capstone* api = &loaded.value();
  csh handle = 0;
  cs_err err = architecture == Architecture::kX86_64
                   ? api->open(CS_ARCH_X86, CS_MODE_64, &handle)
                   : api->open(CS_ARCH_ARM64, CS_MODE_ARM, &handle);
  if (err != CS_ERR_OK) return Error(std::string("capstone: ") + api->strerror(err));
  if (architecture == Architecture::kX86_64)
    api->option(handle, CS_OPT_SYNTAX, CS_OPT_SYNTAX_INTEL);
  return Disassembler(api, handle, architecture);
}

void Disassembler::Close() {
  if (!handle_) return;
  csh handle = std::exchange(handle_, 0);
  api_->close(&handle);
}

Disassembler::~Disassembler() { Close(); }

Disassembler::Disassembler(Disassembler&& other) noexcept
    : api_(other.api_),
      handle_(std::exchange(other.handle_, 0)),
      architecture_(other.architecture_) {}

Disassembler& Disassembler::operator=(Disassembler&& other) noexcept {
  if (this != &other) {
    Close();
    api_ = other.api_;
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
  cs_insn* insn = api_->malloc(handle_);
  const size_t bad_size = architecture_ == Architecture::kAArch64 ? 4 : 1;
  while (left > 0) {
    if (api_->disasm_iter(handle_, &bytes, &left, &at, insn)) {
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
  api_->free(insn, 1);
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
