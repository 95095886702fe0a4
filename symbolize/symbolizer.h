// Resolves sampled addresses to functions, source lines and inline chains, from the recorded
// binaries' symbol tables and DWARF (through libdwfl), separate debug files (by build-id and
// .gnu_debuglink), the kernel's /proc/kallsyms, the vdso, and /tmp/perf-PID.map for JIT code.
//
// One open handle per module and one result per distinct address: symbolizing a profile costs
// one lookup per distinct address. A binary that cannot be found, or whose build-id differs
// from the recorded one, is not used (with a note): its addresses read "[module+0xoffset]",
// never a wrong name.
#pragma once

#include <absl/container/flat_hash_map.h>

#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/model/frame_interner.h"
#include "core/model/frame_resolver.h"
#include "symbolize/dwarf_module.h"
#include "symbolize/kernel_symbols.h"
#include "symbolize/perf_map.h"

namespace tprof {

// Where perf keeps its build-id cache: $PERF_BUILDID_DIR, else $HOME/.debug.
std::string DefaultBuildIdDir();

// The copy of a recorded file in a perf build-id cache: DIR/.build-id/xx/yyyy/elf (kallsyms for
// the kernel); "" when the cache has none.
std::string BuildIdCacheCopy(const std::string& build_id_dir, const std::string& recorded_path,
                             const std::string& build_id);

struct SymbolizerOptions {
  // Root under which recorded paths are looked up (perf's --symfs): /usr/bin/x is read from
  // SYMFS/usr/bin/x, else SYMFS/x. Empty: recorded paths are used as they are.
  std::string symfs;
  // Directories searched, by base name, for binaries not found at their recorded path.
  std::vector<std::string> search_path;
  // Roots of separate debug files: DIR/.build-id/xx/yyyy.debug and DIR/<binary dir>/<debuglink>.
  // Under --symfs they are looked up under the symfs root too.
  std::vector<std::string> debug_dirs = {"/usr/lib/debug"};
  // perf's build-id cache ($PERF_BUILDID_DIR, else ~/.debug; empty: not used). `perf record`
  // copies the kernel's symbols there under its build-id, and every binary it sampled: they
  // name the recorded kernel and binaries after a reboot or a rebuild, and reading the copy
  // costs a fraction of what the kernel takes to format /proc/kallsyms.
  std::string build_id_dir = DefaultBuildIdDir();
  std::string cache_dir = DefaultCacheDir();       // for inflated debug files (debug_file.h)
  std::string kallsyms = "/proc/kallsyms";         // used when the cache has no copy
  std::string kernel_notes = "/sys/kernel/notes";  // running kernel's build-id
  std::string perf_map_dir = "/tmp";               // where perf-PID.map files are
  bool use_vdso = true;  // resolve "[vdso]" from this process's vdso (same kernel)
  // Receives each note once (a build-id mismatch, unreadable kallsyms, ...). Unset: notes go to
  // standard error, prefixed "tprof: note: ".
  std::function<void(const std::string&)> on_note;
};

class Symbolizer : public FrameResolver {
 public:
  explicit Symbolizer(SymbolizerOptions options = {});
  ~Symbolizer() override;

  ResolvedFrame Resolve(const Mapping* mapping, uint64_t address) override;
  ResolvedFrame ResolveInProcess(uint32_t pid, const Mapping* mapping, uint64_t address) override;
  // A file's frame as the memo holds it, when that is what ResolveInProcess would return
  // (the memo's frame names the module and build-id of the mapping it was first resolved
  // for); null for kernel and JIT code, addresses no file resolves, and another mapping of a
  // module under another name. A report resolves each distinct address of a perf.data once,
  // and copies of the frames (names, inlined calls, files) were a third of its memory.
  const ResolvedFrame* FindHeld(uint32_t pid, const Mapping* mapping, uint64_t address) override;

  // The opened module standing for a recorded file (after symfs, search path and build-id
  // checks), or nullptr when none is usable. For disassembly and tests.
  DwarfModule* ModuleFor(const std::string& recorded_path, const std::string& build_id);

  // Starts reading kernel symbols on another thread, for callers that will likely need them
  // (an import with kernel samples), so reading them overlaps with reading the profile.
  // `recorded_build_id` (raw bytes, may be empty) is the recorded kernel's, when the input
  // lists it up front: its copy in the build-id cache is then read.
  void PreloadKernelSymbols(const std::string& recorded_build_id = "");

  // Every note given so far, in order.
  const std::vector<std::string>& notes() const { return notes_; }

  struct Stats {
    uint64_t lookups = 0;         // calls to Resolve
    uint64_t cache_hits = 0;      // answered from the per-address memo
    uint64_t modules_opened = 0;  // distinct modules opened
  };
  const Stats& stats() const { return stats_; }
  void ReleaseModules() override;

 private:
  struct ModuleEntry {
    std::unique_ptr<DwarfModule> module;  // null: no usable file
  };
  struct MemoKey {
    const void* module;
    uint64_t address;
    bool operator==(const MemoKey&) const = default;
    template <typename H>
    friend H AbslHashValue(H h, const MemoKey& k) {
      return H::combine(std::move(h), k.module, k.address);
    }
  };

  void Note(const std::string& message);
  ResolvedFrame ResolveKernel(const Mapping* mapping, uint64_t address);
  // The kernel symbols file for a recorded kernel build-id, and the build-id its symbols are
  // known to be of (empty: unknown).
  struct KernelSymbolsFile {
    std::string path;
    std::string build_id;
  };
  KernelSymbolsFile KernelSymbolsFor(const std::string& recorded_build_id) const;
  // The cache's copy of a recorded file ("[kernel.kallsyms]": its kallsyms), or "" if none.
  std::string CachedCopy(const std::string& recorded_path, const std::string& build_id) const;
  ResolvedFrame ResolveJit(uint32_t pid, const Mapping* mapping, uint64_t address);
  ResolvedFrame ResolveFile(const Mapping& mapping, uint64_t address);
  // The memo's frame of a file address, resolved and interned if new; null when the module is
  // not usable or does not map the offset. `*first`: it was new.
  const ResolvedFrame* MemoFrame(const Mapping& mapping, uint64_t address, bool* first);
  std::unique_ptr<DwarfModule> OpenModule(const std::string& recorded_path,
                                          const std::string& build_id);
  // The name frames give a recorded file's module (its base name, " (deleted)" taken off), kept
  // for the last path asked: each new address would build it twice over.
  const std::string& ModuleName(const std::string& recorded_path);
  // ModuleFor without its one-entry cache: modules_'s entry, opened the first time.
  DwarfModule* FindOrOpenModule(const std::string& recorded_path, const std::string& build_id);
  std::unique_ptr<DwarfModule> OpenVdso(const std::string& build_id);

  SymbolizerOptions options_;
  std::map<std::string, ModuleEntry> modules_;  // by recorded path + '\0' + build-id
  // Per address, the frame it resolved to; addresses that resolve alike share one. Looked up
  // once per new frame of every stack: a flat table, probed once (try_emplace) on a miss.
  absl::flat_hash_map<MemoKey, const ResolvedFrame*> memo_;
  // The module ModuleFor found last: consecutive lookups are mostly in one module, and its key
  // (path and build-id) would otherwise be built and looked up in modules_ every time.
  std::string last_module_path_, last_module_build_id_;
  DwarfModule* last_module_ = nullptr;
  std::string module_name_path_, module_name_;  // ModuleName's last
  bool last_module_valid_ = false;
  FrameInterner frames_;
  std::optional<KernelSymbols> kernel_;
  std::string kernel_build_id_;                // whose symbols kernel_ holds; empty: unknown
  std::future<KernelSymbols> kernel_loading_;  // valid after PreloadKernelSymbols
  bool kernel_usable_ = false;
  std::map<uint32_t, std::unique_ptr<PerfMap>> perf_maps_;  // null: none for that pid
  std::vector<std::string> notes_;
  Stats stats_;
};

// The symbolizer under its earlier name (it only read ELF symbol tables then).
using ElfSymbolizer = Symbolizer;

// "[module+0xoffset]", the name of an address nothing resolves.
std::string UnresolvedName(const std::string& module, uint64_t offset);

}  // namespace tprof
