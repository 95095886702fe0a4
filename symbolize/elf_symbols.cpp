#include "symbolize/elf_symbols.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

namespace tprof {
namespace {

struct ElfCloser {
  void operator()(Elf* e) const { elf_end(e); }
};

void ReadSymbolTable(Elf* elf, Elf_Scn* section, const GElf_Shdr& header,
                     std::vector<ElfSymbol>* out) {
  Elf_Data* data = elf_getdata(section, nullptr);
  if (!data || header.sh_entsize == 0) return;
  size_t count = header.sh_size / header.sh_entsize;
  for (size_t i = 0; i < count; ++i) {
    GElf_Sym sym;
    if (!gelf_getsym(data, static_cast<int>(i), &sym)) break;
    if (GELF_ST_TYPE(sym.st_info) != STT_FUNC && GELF_ST_TYPE(sym.st_info) != STT_GNU_IFUNC)
      continue;
    if (sym.st_shndx == SHN_UNDEF || sym.st_value == 0) continue;
    const char* name = elf_strptr(elf, header.sh_link, sym.st_name);
    if (!name || !*name) continue;
    out->push_back({sym.st_value, sym.st_size, name});
  }
}

}  // namespace

Result<ElfSymbols> ElfSymbols::Load(const std::string& path) {
  elf_version(EV_CURRENT);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error("cannot open " + path + ": " + std::strerror(errno));
  std::unique_ptr<Elf, ElfCloser> elf(elf_begin(fd, ELF_C_READ_MMAP, nullptr));
  if (!elf || elf_kind(elf.get()) != ELF_K_ELF) {
    ::close(fd);
    return Error(path + " is not an ELF file");
  }
  ElfSymbols result;
  size_t phnum = 0;
  elf_getphdrnum(elf.get(), &phnum);
  for (size_t i = 0; i < phnum; ++i) {
    GElf_Phdr ph;
    if (gelf_getphdr(elf.get(), static_cast<int>(i), &ph) && ph.p_type == PT_LOAD)
      result.segments_.push_back({ph.p_offset, ph.p_vaddr, ph.p_filesz});
  }
  std::vector<ElfSymbol> symtab, dynsym;
  Elf_Scn* section = nullptr;
  while ((section = elf_nextscn(elf.get(), section)) != nullptr) {
    GElf_Shdr header;
    if (!gelf_getshdr(section, &header)) continue;
    if (header.sh_type == SHT_SYMTAB)
      ReadSymbolTable(elf.get(), section, header, &symtab);
    else if (header.sh_type == SHT_DYNSYM)
      ReadSymbolTable(elf.get(), section, header, &dynsym);
    else if (header.sh_type == SHT_NOTE) {
      Elf_Data* data = elf_getdata(section, nullptr);
      size_t offset = 0, name_offset, desc_offset;
      GElf_Nhdr note;
      while (data && (offset = gelf_getnote(data, offset, &note, &name_offset, &desc_offset)) > 0) {
        if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 &&
            std::memcmp(static_cast<char*>(data->d_buf) + name_offset, "GNU", 4) == 0)
          result.build_id_.assign(static_cast<char*>(data->d_buf) + desc_offset, note.n_descsz);
      }
    }
  }
  ::close(fd);
  result.symbols_ = symtab.empty() ? std::move(dynsym) : std::move(symtab);
  auto& syms = result.symbols_;
  std::sort(syms.begin(), syms.end(), [](const ElfSymbol& a, const ElfSymbol& b) {
    return a.address != b.address ? a.address < b.address : a.size > b.size;
  });
  // Aliases share an address; keep the first (the sized, usually global, one).
  syms.erase(
      std::unique(syms.begin(), syms.end(),
                  [](const ElfSymbol& a, const ElfSymbol& b) { return a.address == b.address; }),
      syms.end());
  return result;
}

bool ElfSymbols::FileOffsetToAddress(uint64_t file_offset, uint64_t* address) const {
  for (const LoadSegment& s : segments_) {
    if (file_offset >= s.offset && file_offset < s.offset + s.filesz) {
      *address = file_offset - s.offset + s.vaddr;
      return true;
    }
  }
  return false;
}

const ElfSymbol* ElfSymbols::FindByAddress(uint64_t address) const {
  auto it = std::upper_bound(symbols_.begin(), symbols_.end(), address,
                             [](uint64_t a, const ElfSymbol& s) { return a < s.address; });
  if (it == symbols_.begin()) return nullptr;
  --it;
  // A symbol without a size covers up to the next symbol.
  uint64_t end = it->size ? it->address + it->size
                          : (std::next(it) != symbols_.end() ? std::next(it)->address : UINT64_MAX);
  return address < end ? &*it : nullptr;
}

const ElfSymbol* ElfSymbols::FindByFileOffset(uint64_t file_offset) const {
  uint64_t address;
  if (!FileOffsetToAddress(file_offset, &address)) return nullptr;
  return FindByAddress(address);
}

}  // namespace tprof
