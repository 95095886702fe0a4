#include "symbolize/vdso_image.h"

#include <elf.h>
#include <sys/auxv.h>

#include <cstring>

namespace tprof {

std::string_view RunningVdsoImage() {
  auto base = reinterpret_cast<const char*>(getauxval(AT_SYSINFO_EHDR));
  if (!base) return {};
  Elf64_Ehdr ehdr;
  std::memcpy(&ehdr, base, sizeof ehdr);
  if (std::memcmp(ehdr.e_ident, ELFMAG, SELFMAG) != 0 || ehdr.e_ident[EI_CLASS] != ELFCLASS64)
    return {};
  // The section headers come last in the vdso image.
  return {base, ehdr.e_shoff + size_t{ehdr.e_shnum} * ehdr.e_shentsize};
}

}  // namespace tprof
