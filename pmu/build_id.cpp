#include "pmu/build_id.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <cstring>

namespace tprof {

std::string ReadElfBuildId(const std::string& path) {
  if (path.empty() || path[0] != '/') return "";
  elf_version(EV_CURRENT);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string id;
  if (Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr)) {
    size_t phnum = 0;
    if (elf_kind(elf) == ELF_K_ELF && elf_getphdrnum(elf, &phnum) == 0) {
      for (size_t i = 0; i < phnum && id.empty(); ++i) {
        GElf_Phdr ph;
        if (!gelf_getphdr(elf, static_cast<int>(i), &ph) || ph.p_type != PT_NOTE) continue;
        Elf_Data* data =
            elf_getdata_rawchunk(elf, static_cast<int64_t>(ph.p_offset), ph.p_filesz, ELF_T_NHDR);
        size_t offset = 0, name_offset, desc_offset;
        GElf_Nhdr note;
        while (data &&
               (offset = gelf_getnote(data, offset, &note, &name_offset, &desc_offset)) > 0) {
          const char* base = static_cast<const char*>(data->d_buf);
          if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 &&
              std::memcmp(base + name_offset, "GNU", 4) == 0) {
            id.assign(base + desc_offset, note.n_descsz);
            break;
          }
        }
      }
    }
    elf_end(elf);
  }
  ::close(fd);
  return id;
}

const std::string& BuildIdCache::Get(const std::string& path) {
  auto it = ids_.find(path);
  if (it == ids_.end()) it = ids_.emplace(path, ReadElfBuildId(path)).first;
  return it->second;
}

}  // namespace tprof
