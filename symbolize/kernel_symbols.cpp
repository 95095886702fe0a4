#include "symbolize/kernel_symbols.h"

#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>

#include "core/base/file_bytes.h"

namespace tprof {

bool KernelSymbols::AddLine(std::string_view line) {
  // "ffffffff81000000 T _text" or "ffffffffc0a01000 t fn\t[module]"
  uint64_t address = 0;
  auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), address, 16);
  const size_t at = static_cast<size_t>(end - line.data());
  if (ec != std::errc() || at + 3 > line.size() || line[at] != ' ' || line[at + 2] != ' ')
    return false;
  const char type = line[at + 1];
  if (address != 0) any_nonzero_ = true;
  // Text symbols only: data symbols would claim the addresses between functions.
  if (type != 't' && type != 'T' && type != 'w' && type != 'W') return true;
  if (address == 0) return true;
  std::string_view name = line.substr(at + 3);
  uint16_t module = 0;
  if (size_t tab = name.find('\t'); tab != std::string_view::npos) {
    const std::string_view module_name = name.substr(tab + 1);
    name = name.substr(0, tab);
    // Modules come in runs: the previous line's is the likely match.
    if (modules_[last_module_] != module_name) {
      auto it = std::find(modules_.begin(), modules_.end(), module_name);
      if (it == modules_.end()) {
        if (modules_.size() > UINT16_MAX) return true;
        it = modules_.insert(modules_.end(), std::string(module_name));
      }
      last_module_ = static_cast<uint16_t>(it - modules_.begin());
    }
    module = last_module_;
  }
  if (name.size() > UINT16_MAX || names_.size() > UINT32_MAX - name.size()) return true;
  entries_.push_back(
      {address, static_cast<uint32_t>(names_.size()), static_cast<uint16_t>(name.size()), module});
  names_ += name;
  return true;
}

KernelSymbols KernelSymbols::Load(const std::string& path) {
  KernelSymbols table;
  table.modules_.push_back("[kernel.kallsyms]");
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    table.reason_ = "cannot open " + path + ": " + std::strerror(errno);
    return table;
  }
  // Read in pieces, not whole: /proc/kallsyms has no size to allocate for, and its text is
  // several times the table made of it.
  size_t lines = 0;
  std::string buffer;
  std::vector<char> piece(1 << 16);
  for (;;) {
    const ssize_t n = ::read(fd, piece.data(), piece.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      table.reason_ = "cannot read " + path + ": " + std::strerror(errno);
      ::close(fd);
      table.entries_.clear();
      return table;
    }
    if (n > 0) buffer.append(piece.data(), static_cast<size_t>(n));
    size_t start = 0;
    for (size_t newline; (newline = buffer.find('\n', start)) != std::string::npos;
         start = newline + 1) {
      ++lines;
      table.AddLine(std::string_view(buffer).substr(start, newline - start));
    }
    buffer.erase(0, start);
    if (n == 0) break;
  }
  ::close(fd);
  if (!buffer.empty()) {
    ++lines;
    table.AddLine(buffer);
  }
  if (!table.any_nonzero_) {
    table.entries_.clear();
    table.reason_ = lines == 0 ? path + " is empty"
                               : path +
                                     " shows every address as 0 (kernel.kptr_restrict is set or "
                                     "tprof is not running as root)";
    return table;
  }
  auto by_address = [](const Entry& a, const Entry& b) { return a.address < b.address; };
  // kallsyms lists the kernel in address order; modules may not be.
  if (!std::is_sorted(table.entries_.begin(), table.entries_.end(), by_address))
    std::stable_sort(table.entries_.begin(), table.entries_.end(), by_address);
  table.entries_.shrink_to_fit();
  return table;
}

std::optional<KernelSymbols::Symbol> KernelSymbols::Find(uint64_t address) const {
  auto it = std::upper_bound(entries_.begin(), entries_.end(), address,
                             [](uint64_t a, const Entry& e) { return a < e.address; });
  if (it == entries_.begin()) return std::nullopt;
  --it;
  // Aliases share an address; the first one listed (usually the global name) is kept.
  while (it != entries_.begin() && std::prev(it)->address == it->address) --it;
  // Past the last symbol of the kernel or a module nothing is known; 1 MiB is far more than
  // any one function.
  if (address - it->address > (1u << 20)) return std::nullopt;
  return Symbol{it->address, std::string_view(names_).substr(it->name_at, it->name_size),
                modules_[it->module]};
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
