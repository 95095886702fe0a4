// libFuzzer target for WithSectionsInflated (symbolize/debug_file.h), which rewrites debug files
// found on disk before libdw reads them: any bytes give back a descriptor, never a crash or an
// allocation the bytes merely claim, and what it rewrote has no compressed section left.
#include <gelf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>

#include "symbolize/debug_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  int fd = ::memfd_create("fuzz-elf", MFD_CLOEXEC);
  if (fd < 0) return 0;
  if (::write(fd, data, size) != static_cast<ssize_t>(size)) {
    ::close(fd);
    return 0;
  }
  int result = tprof::WithSectionsInflated(fd);
  if (result != fd) {
    // A rewritten file: every section must be readable where its header says.
    elf_version(EV_CURRENT);
    if (Elf* elf = elf_begin(result, ELF_C_READ_MMAP, nullptr)) {
      for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf, scn));) {
        GElf_Shdr shdr;
        if (!gelf_getshdr(scn, &shdr)) continue;
        // Every compressed section with contents was inflated.
        if ((shdr.sh_flags & SHF_COMPRESSED) && shdr.sh_type != SHT_NOBITS) __builtin_trap();
        (void)elf_getdata(scn, nullptr);
      }
      elf_end(elf);
    }
  }
  ::close(result);
  return 0;
}
