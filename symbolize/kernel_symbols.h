// Kernel and kernel-module symbols from /proc/kallsyms. Without root, or with
// kernel.kptr_restrict set, the kernel shows every address as 0: the table is then unusable
// and says why, so reports can say so instead of naming the wrong function.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tprof {

class KernelSymbols {
 public:
  struct Symbol {
    uint64_t address;
    std::string name;
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
  // Module names, one per module rather than one per symbol. The strings live on the heap, so
  // the views above stay valid when the table moves.
  std::vector<std::unique_ptr<const std::string>> modules_;
  std::string reason_;
};

// The running kernel's build-id from /sys/kernel/notes (raw bytes), empty when unknown.
std::string RunningKernelBuildId(const std::string& notes_path = "/sys/kernel/notes");

}  // namespace tprof
