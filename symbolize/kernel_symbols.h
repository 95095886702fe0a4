// Kernel and kernel-module symbols from /proc/kallsyms, or a copy of it (perf keeps one per
// kernel build-id in its cache). Without root, or with
// kernel.kptr_restrict set, the kernel shows every address as 0: the table is then unusable
// and says why, so reports can say so instead of naming the wrong function.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tprof {

class FileBytes;

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

  bool available() const { return !symbols_.empty(); }
  const std::string& unavailable_reason() const { return reason_; }
  // The symbol holding `address` (up to the next symbol), or nullptr.
  const Symbol* Find(uint64_t address) const;
  size_t size() const { return symbols_.size(); }

 private:
  std::vector<Symbol> symbols_;  // sorted by address
  // The file's text, which the names point into: a hundred thousand symbols are not copied one
  // by one. On the heap, so the views stay valid when the table moves.
  std::shared_ptr<const FileBytes> text_;
  std::string reason_;
};

// The running kernel's build-id from /sys/kernel/notes (raw bytes), empty when unknown.
std::string RunningKernelBuildId(const std::string& notes_path = "/sys/kernel/notes");

}  // namespace tprof
