// Kernel and kernel-module symbols from /proc/kallsyms, or a copy of it (perf keeps one per
// kernel build-id in its cache). Without root, or with
// kernel.kptr_restrict set, the kernel shows every address as 0: the table is then unusable
// and says why, so reports can say so instead of naming the wrong function.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tprof {

class KernelSymbols {
 public:
  struct Symbol {
    uint64_t address;
    std::string_view name;    // held by the table
    std::string_view module;  // "[kernel.kallsyms]" or "[MODULE]", held by the table
  };

  // Reads a kallsyms-format file; never fails: an unusable file gives an empty table with
  // unavailable_reason() set.
  static KernelSymbols Load(const std::string& path);

  bool available() const { return !entries_.empty(); }
  const std::string& unavailable_reason() const { return reason_; }
  // The symbol holding `address` (up to the next symbol), or nothing.
  std::optional<Symbol> Find(uint64_t address) const;
  size_t size() const { return entries_.size(); }

 private:
  // A hundred thousand symbols, held in 16 bytes each plus their names, not as the file's
  // text: the table lives through a recording's symbol step, whose peak memory is the
  // recorder's.
  struct Entry {
    uint64_t address;
    uint32_t name_at;    // into names_
    uint16_t name_size;  // kallsyms names are at most KSYM_NAME_LEN (512) bytes
    uint16_t module;     // into modules_
  };
  // Adds one kallsyms line; false when it is not a line of that format.
  bool AddLine(std::string_view line);

  std::vector<Entry> entries_;  // sorted by address
  std::string names_;
  std::vector<std::string> modules_;  // [0] is "[kernel.kallsyms]"
  uint16_t last_module_ = 0;          // the module of the last module symbol read
  bool any_nonzero_ = false;
  std::string reason_;
};

std::string RunningKernelBuildId(const std::string& notes_path = "/sys/kernel/notes");

}  // namespace tprof
