// DWARF call-graph unwinding of `--call-graph dwarf` samples: from the copied user registers
// and stack bytes, libdwfl steps through the frames with the CFI of the mapped binaries
// (.eh_frame, .debug_frame, found with their debug files) and gives the return addresses.
//
// One libdwfl session per process, kept across samples: each binary's ELF and CFI is read once
// per process, not once per sample. A binary is looked for as a local copy named by the caller
// (--binary), at its recorded path (under --symfs when given), then in perf's build-id cache;
// one whose build-id differs from the recorded one is not used. The registers are read as the
// recorded architecture lays them out (x86-64 or arm64), whatever this machine is: libdwfl picks
// its unwinding backend from the binaries' ELF machine.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/error.h"
#include "core/model/address_space.h"
#include "core/model/user_stack_unwinder.h"
#include "symbolize/debug_file.h"
#include "symbolize/symbolizer.h"

namespace tprof {

struct DwarfUnwinderOptions {
  std::string symfs;  // root under which recorded paths are looked up; empty: as recorded
  // A local file standing for a recorded one (--binary, already checked against the build-id),
  // or "" when there is none; tried first. Unset: none.
  std::function<std::string(const std::string& recorded_path, const std::string& build_id)> locate;
  std::string build_id_dir = DefaultBuildIdDir();  // perf's build-id cache; empty: not used
  std::vector<std::string> debug_dirs = {"/usr/lib/debug"};  // for .debug_frame in debug files
  std::string cache_dir = DefaultCacheDir();  // for inflated debug files (debug_file.h)
  size_t max_frames = 256;                    // user frames per sample, the sampled pc included
};

struct DwarfUnwinderStats {
  uint64_t samples = 0;
  uint64_t frames = 0;            // frames returned, sampled pcs included
  uint64_t sessions = 0;          // libdwfl sessions created (one per process, more on re-maps)
  uint64_t modules_reported = 0;  // binaries reported to those sessions
};

class DwarfUnwinder : public UserStackUnwinder {
 public:
  explicit DwarfUnwinder(DwarfUnwinderOptions options = {});
  ~DwarfUnwinder() override;
  DwarfUnwinder(const DwarfUnwinder&) = delete;
  DwarfUnwinder& operator=(const DwarfUnwinder&) = delete;

  // The core operation. `regs` holds the registers named by `regs_mask` (sample_regs_user, in
  // the kernel's perf_regs numbering of the recorded architecture; for x86-64:
  // PERF_REG_X86_AX = 0 ... PERF_REG_X86_IP = 8, PERF_REG_X86_SP = 7, PERF_REG_X86_R8 = 16 ...
  // R15 = 23; for arm64: x0..x30 = 0..30, sp = 31, pc = 32), lowest bit first, as
  // PERF_SAMPLE_REGS_USER delivers them; `stack` is the PERF_SAMPLE_STACK_USER copy, which
  // starts at the stack pointer. The mappings of process `pid` come from `space`.
  // Appends the user callchain leaf first: the sampled pc, then return addresses (as found on
  // the stack, not adjusted); says where and why the walk ended. `frame_record_return`, when
  // not 0, is the word the kernel's frame-pointer walk read at the frame pointer + 8 (the
  // chain's second frame), read by the walk where the copy does not reach it.
  UnwindOutcome Walk(const AddressSpace& space, uint32_t pid, uint64_t regs_mask,
                     std::span<const uint64_t> regs, std::string_view stack,
                     std::vector<uint64_t>* frames, uint64_t frame_record_return = 0);
  // The same as a value: an error when the walk found not even the pc's binary.
  Result<std::vector<uint64_t>> Unwind(const AddressSpace& space, uint32_t pid, uint64_t regs_mask,
                                       std::span<const uint64_t> regs, std::string_view stack);

  // UserStackUnwinder (core/model/user_stack_unwinder.h), for UnwindPass / UnwindProfile and the
  // perf.data importer: tracks the mappings itself. An architecture it has no register layout
  // for leaves every sample at "no registers".
  void OnArchitecture(const std::string& machine) override;
  void OnMmap(const MmapRecord& record) override;
  void OnComm(const CommRecord& record) override;
  void OnTask(const TaskRecord& record) override { space_.OnTask(record); }
  UnwindOutcome Unwind(const UserStackSample& sample, std::vector<uint64_t>* frames) override;
  bool ChainKeepsFramePointers(const UserStackSample& sample,
                               std::span<const uint64_t> chain) override;

  const DwarfUnwinderStats& stats() const { return stats_; }
  // Notes about binaries that could not be used (missing, build-id mismatch), once each.
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  struct Process;
  struct ElfLayout;
  struct RegisterSet;

  static const RegisterSet* FindRegisterSet(const std::string& machine);
  Process& SessionFor(uint32_t pid);
  enum class ReportResult { kOk, kUnusable, kConflict };
  // Makes sure the mapping's binary is reported to the session. kConflict: another binary was
  // reported at those addresses before (a re-map), so the session must be rebuilt.
  ReportResult Report(Process& process, const Mapping& mapping);
  // The binary standing for a recorded file; its `unusable` says why there is none.
  const ElfLayout& LayoutOf(const std::string& recorded_path, const std::string& build_id);
  // Why a walk that failed after `frames` ended there.
  UnwindOutcome WhyStopped(const AddressSpace& space, uint32_t pid, Process& process,
                           const std::vector<uint64_t>& frames, size_t first);
  void Note(const std::string& message);

  DwarfUnwinderOptions options_;
  DebugFileSearch search_;
  char* debuginfo_path_ptr_ = nullptr;
  AddressSpace space_;  // for the UserStackUnwinder interface
  std::map<uint32_t, std::unique_ptr<Process>> processes_;
  std::map<std::string, std::unique_ptr<ElfLayout>> layouts_;  // by recorded path + build-id
  const RegisterSet* registers_;  // the recorded architecture's; null: unknown
  std::string vdso_image_;
  std::vector<std::string> notes_;
  DwarfUnwinderStats stats_;
};

}  // namespace tprof
