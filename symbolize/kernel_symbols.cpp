#include "symbolize/kernel_symbols.h"

#include <elf.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>

#include "core/base/file_bytes.h"

namespace tprof {

KernelSymbols KernelSymbols::Load(const std::string& path) {
  KernelSymbols table;
  auto text = FileBytes::Read(path);
  if (!text.ok()) {
    table.reason_ = text.error().message();
    return table;
  }
  static constexpr std::string_view kKernel = "[kernel.kallsyms]";
  bool any_nonzero = false;
  size_t lines = 0;
  std::string_view rest = (*text)->view();
  // About 40 bytes a line: one allocation instead of a dozen doublings of a 5 MB vector.
  table.symbols_.reserve(rest.size() / 32);
  while (!rest.empty()) {
    size_t newline = rest.find('\n');
    std::string_view line = rest.substr(0, newline);
    rest.remove_prefix(newline == std::string_view::npos ? rest.size() : newline + 1);
    ++lines;
    // "ffffffff81000000 T _text" or "ffffffffc0a01000 t fn\t[module]"
    uint64_t address = 0;
    auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), address, 16);
    const size_t at = static_cast<size_t>(end - line.data());
    if (ec != std::errc() || at + 3 > line.size() || line[at] != ' ' || line[at + 2] != ' ')
      continue;
    const char type = line[at + 1];
    if (address != 0) any_nonzero = true;
    // Text symbols only: data symbols would claim the addresses between functions.
    if (type != 't' && type != 'T' && type != 'w' && type != 'W') continue;
    if (address == 0) continue;
    std::string_view name = line.substr(at + 3);
    std::string_view module = kKernel;
    if (size_t tab = name.find('\t'); tab != std::string_view::npos) {
      module = name.substr(tab + 1);
      name = name.substr(0, tab);
    }
    table.symbols_.push_back({address, name, module});
  }
  table.text_ = std::move(text).value();
  if (!any_nonzero) {
    table.symbols_.clear();
    table.reason_ = lines == 0 ? path + " is empty"
                               : path +
                                     " shows every address as 0 (kernel.kptr_restrict is set or "
                                     "tprof is not running as root)";
    return table;
  }
  auto by_address = [](const Symbol& a, const Symbol& b) { return a.address < b.address; };
  // kallsyms lists the kernel in address order; modules may not be.
  if (!std::is_sorted(table.symbols_.begin(), table.symbols_.end(), by_address))
    std::stable_sort(table.symbols_.begin(), table.symbols_.end(), by_address);
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
  auto bytes = FileBytes::Read(notes_path);
  if (!bytes.ok()) return "";
  std::string_view notes = (*bytes)->view();
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
      return std::string(notes.substr(desc_at, header.n_descsz));
    offset = next;
  }
  return "";
}

}  // namespace tprof
