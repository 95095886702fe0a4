#include "symbolize/kernel_symbols.h"

#include <elf.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

namespace tprof {

KernelSymbols KernelSymbols::Load(const std::string& path) {
  KernelSymbols table;
  std::ifstream in(path);
  if (!in) {
    table.reason_ = "cannot read " + path;
    return table;
  }
  std::string line;
  bool any_nonzero = false;
  size_t lines = 0;
  while (std::getline(in, line)) {
    ++lines;
    // "ffffffff81000000 T _text" or "ffffffffc0a01000 t fn\t[module]"
    char* end = nullptr;
    uint64_t address = std::strtoull(line.c_str(), &end, 16);
    if (end == line.c_str() || *end != ' ' || end[1] == '\0' || end[2] != ' ') continue;
    char type = end[1];
    if (address != 0) any_nonzero = true;
    // Text symbols only: data symbols would claim the addresses between functions.
    if (type != 't' && type != 'T' && type != 'w' && type != 'W') continue;
    std::string rest(end + 3);
    std::string module = "[kernel.kallsyms]";
    size_t tab = rest.find('\t');
    if (tab != std::string::npos) {
      module = rest.substr(tab + 1);
      rest.resize(tab);
    }
    if (address != 0) table.symbols_.push_back({address, std::move(rest), std::move(module)});
  }
  if (!any_nonzero) {
    table.symbols_.clear();
    table.reason_ = lines == 0 ? path + " is empty"
                               : path +
                                     " shows every address as 0 (kernel.kptr_restrict is set or "
                                     "tprof is not running as root)";
    return table;
  }
  std::stable_sort(table.symbols_.begin(), table.symbols_.end(),
                   [](const Symbol& a, const Symbol& b) { return a.address < b.address; });
  return table;
}

const KernelSymbols::Symbol* KernelSymbols::Find(uint64_t address) const {
  auto it = std::upper_bound(symbols_.begin(), symbols_.end(), address,
                             [](uint64_t a, const Symbol& s) { return a < s.address; });
  if (it == symbols_.begin()) return nullptr;
  --it;
  // Aliases share an address; the first one listed (usually the global name) is kept.
  while (it != symbols_.begin() && std::prev(it)->address == it->address) --it;
  // Past the last symbol of the kernel or a module nothing is known; 1 MiB is far more than
  // any one function.
  if (address - it->address > (1u << 20)) return nullptr;
  return &*it;
}

std::string RunningKernelBuildId(const std::string& notes_path) {
  std::ifstream in(notes_path, std::ios::binary);
  std::string notes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t offset = 0;
  while (offset + sizeof(Elf64_Nhdr) <= notes.size()) {
    Elf64_Nhdr header;
    std::memcpy(&header, notes.data() + offset, sizeof header);
    size_t name_at = offset + sizeof header;
    size_t desc_at = name_at + ((header.n_namesz + 3) & ~3u);
    size_t next = desc_at + ((header.n_descsz + 3) & ~3u);
    if (next > notes.size()) break;
    if (header.n_type == NT_GNU_BUILD_ID && header.n_namesz == 4 &&
        std::memcmp(notes.data() + name_at, "GNU", 4) == 0)
      return notes.substr(desc_at, header.n_descsz);
    offset = next;
  }
  return "";
}

}  // namespace tprof
