#include "symbolize/dwarf_unwinder.h"

#include <dwarf.h>
#include <elf.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "core/base/build_id.h"
#include "core/base/file_paths.h"
#include "core/model/frame_resolver.h"
#include "symbolize/debug_file.h"
#include "symbolize/vdso_image.h"

namespace tprof {
namespace {

// x86-64: DWARF registers rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp, r8..r15, rip (the return
// address column) in perf_regs numbering (PERF_REG_X86_*).
constexpr int kX86_64PerfOfDwarf[] = {0, 3, 2, 1, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23, 8};
// arm64: DWARF x0..x30 and sp are perf's 0..31; the pc (perf 32) is passed on its own.
constexpr int kArm64PerfOfDwarf[] = {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10,
                                     11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
                                     22, 23, 24, 25, 26, 27, 28, 29, 30, 31};

}  // namespace

// How the recorded architecture's perf registers map to its DWARF registers.
struct DwarfUnwinder::RegisterSet {
  uint16_t elf_machine;  // e_machine of the binaries it runs
  std::span<const int> perf_of_dwarf;
  int perf_pc, perf_sp;
  int perf_fp;      // the frame pointer: its frame record holds the caller's fp and return address
  int perf_result;  // the register a system call returns its result in
  // The link register, where a call leaves its return address (arm64's x30): a leaf that saves
  // nothing returns through it. -1 where calls push the return address on the stack (x86-64).
  int perf_link;

  // The DWARF number of perf register `perf`; -1 when DWARF has none.
  int DwarfOf(int perf) const {
    for (size_t dwarf = 0; dwarf < perf_of_dwarf.size(); ++dwarf)
      if (perf_of_dwarf[dwarf] == perf) return static_cast<int>(dwarf);
    return -1;
  }
};

namespace {

constexpr uint16_t kHostMachine =
#if defined(__aarch64__)
    EM_AARCH64;
#else
    EM_X86_64;
#endif

// One sample's registers and stack, read by libdwfl's callbacks during an unwind.
struct SampleState {
  pid_t tid = 0;
  const std::span<const int>* perf_of_dwarf = nullptr;
  uint64_t regs_by_perf_number[64] = {};
  uint64_t present = 0;  // bit n: perf register n is known
  uint64_t pc = 0;
  std::string_view stack;
  uint64_t sp = 0;
  bool read_past_copy = false;  // the walk wanted a word above the copied bytes
  // One word above the copy that is known all the same: the return address the kernel's
  // frame-pointer walk read from the sampled frame pointer's frame record (record -g). A caller
  // whose frame is larger than the copy keeps its return address there, so the walk can reach
  // the chain through it; 0: none.
  uint64_t frame_record_return_at = 0;
  uint64_t frame_record_return = 0;
};

pid_t NextThread(Dwfl*, void* arg, void** thread_arg) {
  if (*thread_arg) return 0;  // one thread per sample
  *thread_arg = arg;
  return static_cast<SampleState*>(arg)->tid;
}

bool GetThread(Dwfl*, pid_t, void* arg, void** thread_arg) {
  *thread_arg = arg;
  return true;
}

bool MemoryRead(Dwfl*, Dwarf_Addr address, Dwarf_Word* result, void* arg) {
  SampleState& state = *static_cast<SampleState*>(arg);
  // Only the copied stack is readable; anything else ends the walk at that frame.
  if (address < state.sp || address - state.sp + 8 > state.stack.size()) {
    if (address == state.frame_record_return_at && state.frame_record_return_at) {
      *result = state.frame_record_return;
      return true;
    }
    // Above the copy, but where the stack goes on: the copy was too short for this frame.
    if (address >= state.sp && address - state.sp < (uint64_t{1} << 24))
      state.read_past_copy = true;
    return false;
  }
  std::memcpy(result, state.stack.data() + (address - state.sp), 8);
  return true;
}

bool SetInitialRegisters(Dwfl_Thread* thread, void* arg) {
  const SampleState& state = *static_cast<const SampleState*>(arg);
  const std::span<const int>& perf_of_dwarf = *state.perf_of_dwarf;
  for (size_t dwarf = 0; dwarf < perf_of_dwarf.size(); ++dwarf) {
    int perf = perf_of_dwarf[dwarf];
    if (!(state.present & (uint64_t{1} << perf))) continue;
    Dwarf_Word value = state.regs_by_perf_number[perf];
    if (!dwfl_thread_state_registers(thread, static_cast<int>(dwarf), 1, &value)) return false;
  }
  dwfl_thread_state_register_pc(thread, state.pc);
  return true;
}

const Dwfl_Thread_Callbacks kThreadCallbacks = {
    NextThread, GetThread, MemoryRead, SetInitialRegisters, nullptr, nullptr,
};

// The CFI's frame state at `address`, from its module's .eh_frame or else .debug_frame; null
// when neither covers it.
struct FreeFrame {
  void operator()(Dwarf_Frame* frame) const { std::free(frame); }
};
std::unique_ptr<Dwarf_Frame, FreeFrame> CfiFrameAt(Dwfl* dwfl, uint64_t address) {
  Dwfl_Module* module = dwfl_addrmodule(dwfl, address);
  if (!module) return nullptr;
  for (int debug = 0; debug < 2; ++debug) {
    Dwarf_Addr bias = 0;
    Dwarf_CFI* cfi =
        debug ? dwfl_module_dwarf_cfi(module, &bias) : dwfl_module_eh_cfi(module, &bias);
    Dwarf_Frame* frame = nullptr;
    if (cfi && dwarf_cfi_addrframe(cfi, address - bias, &frame) == 0)
      return std::unique_ptr<Dwarf_Frame, FreeFrame>(frame);
  }
  return nullptr;
}

// True when the module holding `address` has CFI (.eh_frame or .debug_frame) covering it.
bool HasCfiFor(Dwfl* dwfl, uint64_t address) { return CfiFrameAt(dwfl, address) != nullptr; }

// True when `a` and `b` lie in the same function of the symbol table (false when either lies
// in none, such as a PLT stub).
bool SameFunction(Dwfl* dwfl, uint64_t a, uint64_t b) {
  auto start_of = [dwfl](uint64_t address) -> std::optional<uint64_t> {
    Dwfl_Module* module = dwfl_addrmodule(dwfl, address);
    if (!module) return std::nullopt;
    GElf_Off offset = 0;
    GElf_Sym symbol;
    if (!dwfl_module_addrinfo(module, address, &offset, &symbol, nullptr, nullptr, nullptr))
      return std::nullopt;
    return address - offset;
  };
  const std::optional<uint64_t> start_a = start_of(a);
  return start_a && start_a == start_of(b);
}

struct FrameCollector {
  Dwfl* dwfl;
  SampleState* state;
  std::vector<uint64_t>* frames;
  size_t first;  // frames before this one are not the sample's
  size_t max_frames;
  std::optional<UnwindEnd> end;  // set when the collector itself ended the walk
  bool outside = false;          // the last frame is in no binary of the session
  int sp_dwarf = -1;             // the stack pointer's DWARF register number
  // The previous frame's stack pointer, when known: a frame whose pc and stack pointer both
  // repeat its callee's went in circles; the same pc on a moved stack is recursion.
  std::optional<Dwarf_Word> previous_sp;
};

int CollectFrame(Dwfl_Frame* frame, void* arg) {
  auto& collector = *static_cast<FrameCollector*>(arg);
  std::vector<uint64_t>& frames = *collector.frames;
  // libdwfl takes an unreadable return address for the end of the stack; only the reads made
  // while unwinding the last frame delivered tell whether the copy ended it. They start here:
  // asked whether a frame is an activation, dwfl_frame_pc unwinds it.
  collector.state->read_past_copy = false;
  Dwarf_Addr pc;
  bool activation;
  if (!dwfl_frame_pc(frame, &pc, &activation)) return DWARF_CB_OK;  // libdwfl says why next
  // A zero return address marks the outermost frame on arm64 (x30 cleared in _start).
  if (pc == 0) {
    collector.end = UnwindEnd::kOutermostFrame;
    return DWARF_CB_ABORT;
  }
  // A frame that repeats its callee, stack pointer and all, means the CFI went in circles. A
  // function that calls itself repeats its return address with the stack pointer moved on: that
  // is recursion, and the walk goes on (it stopped at the third 'rec' before). Where the stack
  // pointer is unknown, three equal pcs in a row still end the walk.
  std::optional<Dwarf_Word> sp;
  Dwarf_Word sp_value = 0;
  if (collector.sp_dwarf >= 0 &&
      dwfl_frame_reg(frame, static_cast<unsigned>(collector.sp_dwarf), &sp_value) == 0)
    sp = sp_value;
  const bool repeats_pc = frames.size() >= collector.first + 1 && frames.back() == pc;
  const bool cycle =
      sp && collector.previous_sp
          ? repeats_pc && *sp == *collector.previous_sp
          : repeats_pc && frames.size() >= collector.first + 2 && frames[frames.size() - 2] == pc;
  if (cycle) {
    collector.end = UnwindEnd::kUnwinderError;
    return DWARF_CB_ABORT;
  }
  collector.previous_sp = sp;
  frames.push_back(pc);
  if (frames.size() - collector.first >= collector.max_frames) {
    collector.end = UnwindEnd::kFrameLimit;
    return DWARF_CB_ABORT;
  }
  // The walk goes on only from frames whose binary's CFI covers them: from anywhere else libdwfl
  // falls back to guessing from the frame pointer, which code built without one does not keep,
  // and the guesses would show as callers. A return address points after its call.
  const uint64_t address = pc - (activation ? 0 : 1);
  if (!dwfl_addrmodule(collector.dwfl, address)) {
    collector.outside = true;
    return DWARF_CB_ABORT;
  }
  if (!HasCfiFor(collector.dwfl, address)) {
    collector.end = UnwindEnd::kNoCfi;
    return DWARF_CB_ABORT;
  }
  return DWARF_CB_OK;
}

// True when the CFI at `address` computes the frame from the frame pointer (DWARF register
// `fp`), CFA = fp + K, with the return address saved at fp + 8, the second word of the frame
// record {caller's fp, return address} that the kernel's frame-pointer walk reads: x86-64's
// push rbp; mov rbp, rsp (K = 16), arm64's stp x29, x30, [sp, #-K]!; mov x29, sp.
bool FrameRecordHoldsReturnAddress(Dwfl* dwfl, uint64_t address, int fp) {
  auto frame = CfiFrameAt(dwfl, address);
  if (!frame) return false;
  Dwarf_Op* cfa = nullptr;
  size_t cfa_ops = 0;
  const int ra = dwarf_frame_info(frame.get(), nullptr, nullptr, nullptr);
  if (ra < 0 || dwarf_frame_cfa(frame.get(), &cfa, &cfa_ops) != 0 || cfa_ops != 1 ||
      cfa[0].atom != DW_OP_bregx || cfa[0].number != static_cast<Dwarf_Word>(fp))
    return false;
  const auto k = static_cast<int64_t>(cfa[0].number2);
  Dwarf_Op ops_mem[3];
  Dwarf_Op* saved = nullptr;
  size_t saved_ops = 0;
  return dwarf_frame_register(frame.get(), ra, ops_mem, &saved, &saved_ops) == 0 &&
         saved_ops == 2 && saved[0].atom == DW_OP_call_frame_cfa &&
         saved[1].atom == DW_OP_plus_uconst && static_cast<int64_t>(saved[1].number) == 8 - k;
}

bool IsFileless(const std::string& filename) {
  return filename.empty() || (filename[0] != '/' && filename != "[vdso]");
}

// Functions a thread's stack begins in, by the names glibc, musl and bionic give them on x86-64
// and arm64. Their hand-written code often has no CFI (musl's, glibc's x86-64 clone wrappers
// after the system call), so a walk can stop in one for want of it with no frame left to find.
enum class FirstFrameKind : uint8_t {
  kNone,
  // Entered by the kernel on a fresh stack: a program's _start and the dynamic linker's (glibc's
  // _start and _dl_start_user, musl's _dlstart, bionic's __dl__start).
  kEntry,
  // glibc's __clone and __clone3 (by every name its symbol tables give them: clone3 and the
  // __GI_ aliases; clone is a weak alias, and musl's clone a C function that calls __clone), musl's
  // __clone, bionic's __bionic_clone: both the new thread's first frame and a call in its parent.
  // glibc's arm64 clone's child part, thread_start, is not here: its CFI ends every walk, and
  // many programs name their own thread functions so.
  kCloneWrapper,
};

FirstFrameKind FirstFrameKindOf(std::string_view function) {
  static constexpr std::string_view kEntries[] = {"_start", "_dl_start_user", "_dlstart",
                                                  "__dl__start"};
  static constexpr std::string_view kCloneWrappers[] = {
      "__clone", "__GI___clone", "__clone3", "clone3", "__GI___clone3", "__bionic_clone"};
  if (std::find(std::begin(kEntries), std::end(kEntries), function) != std::end(kEntries))
    return FirstFrameKind::kEntry;
  if (std::find(std::begin(kCloneWrappers), std::end(kCloneWrappers), function) !=
      std::end(kCloneWrappers))
    return FirstFrameKind::kCloneWrapper;
  return FirstFrameKind::kNone;
}

// Where the binaries of a session hold those functions, read from each one's symbol table once:
// libdwfl's own address lookup scans the whole table each time.
class FirstFrameIndex {
 public:
  FirstFrameKind KindAt(Dwfl* dwfl, uint64_t address) {
    Dwfl_Module* module = dwfl_addrmodule(dwfl, address);
    if (!module) return FirstFrameKind::kNone;
    auto it = ranges_.find(module);
    if (it == ranges_.end()) it = ranges_.emplace(module, Read(module)).first;
    for (const Range& range : it->second)
      if (address >= range.low && address < range.high) return range.kind;
    return FirstFrameKind::kNone;
  }

 private:
  struct Range {
    uint64_t low, high;
    FirstFrameKind kind;
  };

  static std::vector<Range> Read(Dwfl_Module* module) {
    std::vector<Range> found;
    std::vector<uint64_t> starts;  // of every symbol: where one without a size ends
    const int count = dwfl_module_getsymtab(module);
    for (int i = 1; i < count; ++i) {
      GElf_Sym symbol{};
      GElf_Addr value = 0;
      const char* name =
          dwfl_module_getsym_info(module, i, &symbol, &value, nullptr, nullptr, nullptr);
      const int type = GELF_ST_TYPE(symbol.st_info);
      // arm64's mapping symbols ($x, $d) mark code and data inside functions.
      if (!name || name[0] == '$' || symbol.st_shndx == SHN_UNDEF ||
          (type != STT_FUNC && type != STT_NOTYPE))
        continue;
      starts.push_back(value);
      if (FirstFrameKind kind = FirstFrameKindOf(name); kind != FirstFrameKind::kNone)
        found.push_back({value, value + symbol.st_size, kind});
    }
    // musl's entry code and clone have no size: each reaches to the next symbol.
    std::sort(starts.begin(), starts.end());
    for (Range& range : found) {
      if (range.high > range.low) continue;
      auto next = std::upper_bound(starts.begin(), starts.end(), range.low);
      range.high = next == starts.end() ? range.low + 1 : *next;
    }
    return found;
  }

  std::map<Dwfl_Module*, std::vector<Range>> ranges_;
};

// True when frame `at` of a walk (the sampled pc when it is `first`, else a return address) is
// the first frame of its thread.
bool IsFirstFrame(FirstFrameIndex& index, Dwfl* dwfl, const SampleState& state, int perf_result,
                  const std::vector<uint64_t>& frames, size_t first, size_t at) {
  const bool sampled = at == first;
  // A return address points after its call, maybe past the function's end.
  switch (index.KindAt(dwfl, frames[at] - (sampled ? 0 : 1))) {
    case FirstFrameKind::kEntry:
      return true;
    case FirstFrameKind::kCloneWrapper:
      // Only the child calls out of a clone wrapper. At the sampled pc (after the system call,
      // where glibc's x86-64 wrappers have no CFI and its arm64 ones the parent's CFI), the child
      // is the one the call returned 0 to: the parent holds the new thread's id, or while in the
      // kernel -ENOSYS (x86-64) or its first argument (arm64). On entry, before the wrapper sets
      // it, the register may hold 0 in the parent too; a walk from there rarely stops early.
      return !sampled ||
             (((state.present >> perf_result) & 1) && state.regs_by_perf_number[perf_result] == 0);
    case FirstFrameKind::kNone:
      break;
  }
  return false;
}

// A walk that stopped early after its thread's first frame, or in it, found every frame there
// is: it ends there, at the outermost frame. Past it the walk took words above the first frame
// for return addresses (an unknown address, or arm64's child, unwound with its parent's CFI,
// into the parent's caller): they are dropped. A copy too short to unwind the first frame is
// complete too: the bytes the unwinder wanted hold no caller.
UnwindOutcome EndAtFirstFrame(FirstFrameIndex& index, Dwfl* dwfl, const SampleState& state,
                              int perf_result, std::vector<uint64_t>* frames, size_t first,
                              UnwindOutcome outcome) {
  if (outcome.end == UnwindEnd::kOutermostFrame || outcome.end == UnwindEnd::kFrameLimit)
    return outcome;
  for (size_t at = first; at < frames->size(); ++at) {
    if (!IsFirstFrame(index, dwfl, state, perf_result, *frames, first, at)) continue;
    frames->resize(at + 1);
    return {UnwindEnd::kOutermostFrame, ""};
  }
  return outcome;
}

}  // namespace

struct DwarfUnwinder::ElfLayout {
  // Why no file stands for the recorded one: kNoBinary, kBuildIdMismatch; kOutermostFrame when
  // one does.
  UnwindEnd unusable = UnwindEnd::kOutermostFrame;
  std::string path;  // local file to open; empty for the vdso image
  uint16_t machine = 0;
  struct Segment {
    uint64_t offset, vaddr, filesz, memsz;
  };
  std::vector<Segment> segments;
  uint64_t low = 0, high = 0;  // span of the loaded segments, file addresses
};

struct DwarfUnwinder::Process {
  Dwfl_Callbacks callbacks{};
  Dwfl* dwfl = nullptr;
  bool attached = false;
  struct Reported {
    uint64_t low, high;  // runtime address range of the whole module
    std::string key;     // recorded path + build-id
    uint64_t bias;
  };
  std::vector<Reported> reported;
  SampleState state;
  FirstFrameIndex first_frames;
  // ChainKeepsFramePointers' answers by address: a recording's samples repeat them. Ordered, so
  // that a new mapping's range can be forgotten (OnMmap).
  std::map<uint64_t, bool> frame_pointer_at;

  ~Process() {
    if (dwfl) dwfl_end(dwfl);
  }
};

const DwarfUnwinder::RegisterSet* DwarfUnwinder::FindRegisterSet(const std::string& machine) {
  static const DwarfUnwinder::RegisterSet kX86_64{EM_X86_64, kX86_64PerfOfDwarf, 8, 7, 6, 0, -1};
  static const DwarfUnwinder::RegisterSet kArm64{EM_AARCH64, kArm64PerfOfDwarf, 32, 31, 29, 0, 30};
  if (machine == "x86_64" || machine == "amd64") return &kX86_64;
  if (machine == "aarch64" || machine == "arm64") return &kArm64;
  if (machine.empty()) return kHostMachine == EM_AARCH64 ? &kArm64 : &kX86_64;
  return nullptr;
}

DwarfUnwinder::DwarfUnwinder(DwarfUnwinderOptions options)
    : options_(std::move(options)), registers_(FindRegisterSet("")) {
  search_ = {DebugSearchPath(options_.symfs, options_.debug_dirs), options_.cache_dir};
  debuginfo_path_ptr_ = search_.path.data();
  vdso_image_ = std::string(RunningVdsoImage());
}

DwarfUnwinder::~DwarfUnwinder() = default;

void DwarfUnwinder::OnArchitecture(const std::string& machine) {
  registers_ = FindRegisterSet(machine);
  if (!registers_) Note("no register layout for " + machine + " recordings; stacks not unwound");
}

void DwarfUnwinder::Note(const std::string& message) {
  if (std::find(notes_.begin(), notes_.end(), message) == notes_.end()) notes_.push_back(message);
}

const DwarfUnwinder::ElfLayout& DwarfUnwinder::LayoutOf(const std::string& recorded_path,
                                                        const std::string& build_id) {
  std::string key = recorded_path + '\0' + build_id;
  auto it = layouts_.find(key);
  if (it != layouts_.end()) return *it->second;
  auto layout = std::make_unique<ElfLayout>();
  layout->unusable = UnwindEnd::kNoBinary;
  std::vector<std::string> candidates;
  std::string path = StripDeleted(recorded_path);
  if (recorded_path == "[vdso]") {
    candidates.push_back("");
  } else if (!path.empty() && path[0] == '/') {
    if (options_.locate) {
      if (std::string local = options_.locate(recorded_path, build_id); !local.empty())
        candidates.push_back(local);
    }
    if (options_.symfs.empty()) {
      candidates.push_back(path);
    } else {
      candidates.push_back(options_.symfs + path);
      candidates.push_back(options_.symfs + "/" + BaseName(path));
    }
    if (std::string cached = BuildIdCacheCopy(options_.build_id_dir, path, build_id);
        !cached.empty())
      candidates.push_back(cached);
  }
  const uint16_t machine = registers_ ? registers_->elf_machine : kHostMachine;
  for (const std::string& candidate : candidates) {
    int fd = -1;
    Elf* elf = nullptr;
    if (candidate.empty()) {
      if (vdso_image_.empty()) continue;
      elf = elf_memory(vdso_image_.data(), vdso_image_.size());
    } else {
      fd = ::open(candidate.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) continue;
      elf_version(EV_CURRENT);
      elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
    }
    GElf_Ehdr ehdr;
    if (elf && elf_kind(elf) == ELF_K_ELF && gelf_getehdr(elf, &ehdr)) {
      const void* id = nullptr;
      ssize_t id_size = dwelf_elf_gnu_build_id(elf, &id);
      std::string file_id =
          id_size > 0 ? std::string(static_cast<const char*>(id), static_cast<size_t>(id_size))
                      : std::string();
      const std::string shown = candidate.empty() ? recorded_path : candidate;
      if (!build_id.empty() && !file_id.empty() && !SameBuildId(build_id, file_id)) {
        Note(shown + ": build-id " + BuildIdHex(file_id) + " differs from the recorded " +
             BuildIdHex(build_id) + "; not used for unwinding");
        layout->unusable = UnwindEnd::kBuildIdMismatch;
      } else if (ehdr.e_machine != machine) {
        // This machine's vdso, or a file of the same name, for a recording made elsewhere.
        Note(shown + " is for another machine (ELF machine " + std::to_string(ehdr.e_machine) +
             "); not used for unwinding");
        layout->unusable = UnwindEnd::kBuildIdMismatch;
      } else {
        layout->segments.clear();
        size_t phnum = 0;
        elf_getphdrnum(elf, &phnum);
        bool first = true;
        for (size_t i = 0; i < phnum; ++i) {
          GElf_Phdr ph;
          if (!gelf_getphdr(elf, static_cast<int>(i), &ph) || ph.p_type != PT_LOAD) continue;
          layout->segments.push_back({ph.p_offset, ph.p_vaddr, ph.p_filesz, ph.p_memsz});
          layout->low = first ? ph.p_vaddr : std::min(layout->low, ph.p_vaddr);
          layout->high = std::max(layout->high, ph.p_vaddr + ph.p_memsz);
          first = false;
        }
        layout->path = candidate;
        layout->machine = ehdr.e_machine;
        if (!layout->segments.empty()) layout->unusable = UnwindEnd::kOutermostFrame;
      }
    }
    if (elf) elf_end(elf);
    if (fd >= 0) ::close(fd);
    if (layout->unusable == UnwindEnd::kOutermostFrame) break;
  }
  if (layout->unusable == UnwindEnd::kNoBinary && !candidates.empty())
    Note("no usable file for " + recorded_path + "; stacks through it end there");
  return *layouts_.emplace(std::move(key), std::move(layout)).first->second;
}
DwarfUnwinder::Process& DwarfUnwinder::SessionFor(uint32_t pid) {
  auto& process = processes_[pid];
  if (!process) {
    process = std::make_unique<Process>();
    process->callbacks.find_elf = dwfl_build_id_find_elf;
    process->callbacks.find_debuginfo = FindDebugFile;
    process->callbacks.debuginfo_path = &debuginfo_path_ptr_;
    process->dwfl = dwfl_begin(&process->callbacks);
    process->state.tid = static_cast<pid_t>(pid);
    ++stats_.sessions;
  }
  return *process;
}

DwarfUnwinder::ReportResult DwarfUnwinder::Report(Process& process, const Mapping& mapping) {
  const ElfLayout* layout = &LayoutOf(mapping.filename, mapping.build_id);
  if (layout->unusable != UnwindEnd::kOutermostFrame) return ReportResult::kUnusable;
  // The segment this mapping holds gives the load bias: runtime address - file address.
  const ElfLayout::Segment* segment = nullptr;
  for (const auto& s : layout->segments) {
    uint64_t aligned = s.offset & ~uint64_t{0xfff};
    if (mapping.page_offset >= aligned && mapping.page_offset < s.offset + s.filesz) {
      segment = &s;
      break;
    }
  }
  if (!segment) return ReportResult::kUnusable;
  uint64_t bias = mapping.start - mapping.page_offset + segment->offset - segment->vaddr;
  std::string key = mapping.filename + '\0' + mapping.build_id;
  uint64_t low = layout->low + bias, high = layout->high + bias;
  for (const auto& r : process.reported) {
    if (r.key == key && r.bias == bias) return ReportResult::kOk;  // already there
    // Something else was mapped here before (dlclose, exec): the session must start afresh.
    if (low < r.high && r.low < high) return ReportResult::kConflict;
  }
  int fd = -1;
  std::string path = layout->path;
  if (path.empty()) {  // the vdso image, through an anonymous file
    fd = ::memfd_create("tprof-vdso", MFD_CLOEXEC);
    if (fd < 0 || ::write(fd, vdso_image_.data(), vdso_image_.size()) !=
                      static_cast<ssize_t>(vdso_image_.size())) {
      if (fd >= 0) ::close(fd);
      return ReportResult::kUnusable;
    }
    path = "/proc/self/fd/" + std::to_string(fd);
  }
  dwfl_report_begin_add(process.dwfl);
  Dwfl_Module* module =
      dwfl_report_elf(process.dwfl, BaseName(mapping.filename).c_str(), path.c_str(), fd, bias,
                      /*add_p_vaddr=*/true);
  dwfl_report_end(process.dwfl, nullptr, nullptr);
  if (!module) return ReportResult::kUnusable;
  SetDebugFileSearch(module, &search_);
  ++stats_.modules_reported;
  process.reported.push_back({low, high, std::move(key), bias});
  return ReportResult::kOk;
}

UnwindOutcome DwarfUnwinder::Walk(const AddressSpace& space, uint32_t pid, uint64_t regs_mask,
                                  std::span<const uint64_t> regs, std::string_view stack,
                                  std::vector<uint64_t>* frames, uint64_t frame_record_return) {
  ++stats_.samples;
  if (!registers_) return {UnwindEnd::kNoRegisters, ""};
  SampleState state;
  state.tid = static_cast<pid_t>(pid);
  state.perf_of_dwarf = &registers_->perf_of_dwarf;
  size_t index = 0;
  for (int bit = 0; bit < 64 && index < regs.size(); ++bit) {
    if (!(regs_mask & (uint64_t{1} << bit))) continue;
    state.regs_by_perf_number[bit] = regs[index++];
    state.present |= uint64_t{1} << bit;
  }
  const uint64_t pc_bit = uint64_t{1} << registers_->perf_pc;
  const uint64_t sp_bit = uint64_t{1} << registers_->perf_sp;
  if (!(state.present & pc_bit) || !(state.present & sp_bit)) return {UnwindEnd::kNoRegisters, ""};
  const uint64_t pc = state.regs_by_perf_number[registers_->perf_pc];
  state.pc = pc;
  state.sp = state.regs_by_perf_number[registers_->perf_sp];
  state.stack = stack;
  if (frame_record_return && (state.present >> registers_->perf_fp) & 1) {
    // The frame record is {caller's frame pointer, return address} on both architectures.
    state.frame_record_return_at = state.regs_by_perf_number[registers_->perf_fp] + 8;
    state.frame_record_return = frame_record_return;
  }

  const size_t first = frames->size();
  // Every binary the walk can enter holds the pc or a word on the stack (return addresses are
  // read from the stack), so those are reported to the session before the walk starts.
  std::vector<const Mapping*> needed;
  std::set<const Mapping*> seen;
  auto consider = [&](uint64_t address) {
    const Mapping* mapping = space.Find(pid, address);
    if (mapping && !IsFileless(mapping->filename) && seen.insert(mapping).second)
      needed.push_back(mapping);
  };
  consider(pc);
  if (needed.empty()) {
    if (pc) frames->push_back(pc);
    const Mapping* mapping = space.Find(pid, pc);
    return {UnwindEnd::kUnknownAddress, mapping ? mapping->filename : ""};
  }
  frames->push_back(pc);
  // arm64's link register may hold the leaf's return address (see the fallback below).
  if (registers_->perf_link >= 0 && (state.present >> registers_->perf_link) & 1)
    consider(state.regs_by_perf_number[registers_->perf_link]);
  for (size_t at = 0; at + 8 <= stack.size(); at += 8) {
    uint64_t word;
    std::memcpy(&word, stack.data() + at, 8);
    if (word >= 4096 && !IsKernelAddress(word)) consider(word);
  }
  Process* process = &SessionFor(pid);
  for (size_t i = 0; i < needed.size(); ++i) {
    ReportResult result = Report(*process, *needed[i]);
    if (i == 0 && result == ReportResult::kUnusable) {
      const ElfLayout& layout = LayoutOf(needed[0]->filename, needed[0]->build_id);
      UnwindEnd end =
          layout.unusable == UnwindEnd::kOutermostFrame ? UnwindEnd::kNoBinary : layout.unusable;
      return {end, needed[0]->filename};
    }
    if (result != ReportResult::kConflict) continue;
    processes_.erase(pid);
    process = &SessionFor(pid);
    for (size_t j = 0; j <= i; ++j) Report(*process, *needed[j]);
  }
  process->state = state;
  if (!process->attached) {
    if (!dwfl_attach_state(process->dwfl, nullptr, static_cast<pid_t>(pid), &kThreadCallbacks,
                           &process->state)) {
      Note(std::string("dwfl_attach_state: ") + dwfl_errmsg(-1));
      return {UnwindEnd::kUnwinderError, needed[0]->filename};
    }
    process->attached = true;
  }
  frames->pop_back();  // the walk gives the pc again as its first frame
  // Walks from the state's pc, the frames after `from` (the walk gives its pc as its first).
  auto walk_from = [&](size_t from) {
    FrameCollector collector{
        .dwfl = process->dwfl,
        .state = &process->state,
        .frames = frames,
        .first = from,
        .max_frames = options_.max_frames - std::min(options_.max_frames, from - first),
        .end = std::nullopt,
        .outside = false,
        .sp_dwarf = registers_->DwarfOf(registers_->perf_sp),
        .previous_sp = std::nullopt};
    int walked =
        dwfl_getthread_frames(process->dwfl, static_cast<pid_t>(pid), CollectFrame, &collector);
    if (frames->size() == from) frames->push_back(process->state.pc);
    if (collector.end) {
      const Mapping* last = space.Find(pid, frames->back() - (frames->size() - first > 1 ? 1 : 0));
      return UnwindOutcome{*collector.end, last ? last->filename : ""};
    }
    if (walked == 0 && !collector.outside && !process->state.read_past_copy)
      return UnwindOutcome{UnwindEnd::kOutermostFrame, ""};
    return WhyStopped(space, pid, *process, *frames, first);
  };
  UnwindOutcome outcome = walk_from(first);
  // A leaf without CFI on arm64 (the vDSO's, a PLT stub, hand-written assembly) that has saved
  // nothing still holds its return address in the link register, as libdw's and libunwind's
  // arm64 fallbacks take it: the walk goes on from there, in the caller, if that has CFI. A
  // function that has called since would hold a return address into itself there, which is no
  // caller: such a walk is not taken.
  const int link = registers_->perf_link;
  if (outcome.end == UnwindEnd::kNoCfi && frames->size() - first == 1 && link >= 0 &&
      (state.present >> link) & 1) {
    const uint64_t return_address = state.regs_by_perf_number[link];
    const Mapping* leaf = space.Find(pid, pc);
    const Mapping* caller = space.Find(pid, return_address);
    const bool into_itself = caller == leaf && SameFunction(process->dwfl, pc, return_address);
    if (return_address > 4 && caller && !into_itself &&
        dwfl_addrmodule(process->dwfl, return_address - 4) &&
        HasCfiFor(process->dwfl, return_address - 4)) {
      process->state.pc = return_address;
      process->state.regs_by_perf_number[registers_->perf_pc] = return_address;
      process->state.read_past_copy = false;
      outcome = walk_from(first + 1);
      process->state.pc = pc;
      process->state.regs_by_perf_number[registers_->perf_pc] = pc;
    }
  }
  outcome = EndAtFirstFrame(process->first_frames, process->dwfl, process->state,
                            registers_->perf_result, frames, first, std::move(outcome));
  stats_.frames += frames->size() - first;
  return outcome;
}

UnwindOutcome DwarfUnwinder::WhyStopped(const AddressSpace& space, uint32_t pid, Process& process,
                                        const std::vector<uint64_t>& frames, size_t first) {
  // The frame the walk could not leave: a return address points after its call.
  const uint64_t address = frames.back() - (frames.size() - first > 1 ? 1 : 0);
  const Mapping* mapping = space.Find(pid, address);
  if (!mapping || IsFileless(mapping->filename))
    return {UnwindEnd::kUnknownAddress, mapping ? mapping->filename : ""};
  const ElfLayout& layout = LayoutOf(mapping->filename, mapping->build_id);
  if (layout.unusable != UnwindEnd::kOutermostFrame) return {layout.unusable, mapping->filename};
  if (process.state.read_past_copy) return {UnwindEnd::kStackCopyTooShort, mapping->filename};
  if (!HasCfiFor(process.dwfl, address)) return {UnwindEnd::kNoCfi, mapping->filename};
  return {UnwindEnd::kUnwinderError, mapping->filename};
}

Result<std::vector<uint64_t>> DwarfUnwinder::Unwind(const AddressSpace& space, uint32_t pid,
                                                    uint64_t regs_mask,
                                                    std::span<const uint64_t> regs,
                                                    std::string_view stack) {
  std::vector<uint64_t> frames;
  UnwindOutcome outcome = Walk(space, pid, regs_mask, regs, stack, &frames);
  const bool pc_binary_unknown =
      outcome.end == UnwindEnd::kNoRegisters || outcome.end == UnwindEnd::kUnknownAddress ||
      outcome.end == UnwindEnd::kNoBinary || outcome.end == UnwindEnd::kBuildIdMismatch;
  if (frames.size() <= 1 && pc_binary_unknown)
    return Error(std::string("not unwound: ") + UnwindEndName(outcome.end) +
                 (outcome.module.empty() ? "" : " (" + outcome.module + ")"));
  return frames;
}

void DwarfUnwinder::OnMmap(const MmapRecord& record) {
  space_.OnMmap(record);
  // Code mapped where other code was (dlclose then dlopen) has CFI of its own.
  if (auto it = processes_.find(record.pid); it != processes_.end()) {
    auto& known = it->second->frame_pointer_at;
    known.erase(known.lower_bound(record.start), known.lower_bound(record.start + record.length));
  }
}

void DwarfUnwinder::OnComm(const CommRecord& record) {
  space_.OnComm(record);
  // After an exec the process is another program, which a non-PIE binary loads at the same
  // addresses as the last: nothing the session knew of the old one holds.
  if (record.exec) processes_.erase(record.pid);
}

bool DwarfUnwinder::ChainKeepsFramePointers(const UserStackSample& sample,
                                            std::span<const uint64_t> chain) {
  if (!registers_ || chain.size() < 2) return false;
  const int fp_dwarf = registers_->DwarfOf(registers_->perf_fp);
  if (fp_dwarf < 0) return false;
  Process* process = &SessionFor(sample.pid);
  // Each function the chain passes through but the outermost, whose caller the chain need not
  // hold: at the pc, then at each call (a return address points after its call).
  for (size_t i = 0; i + 1 < chain.size(); ++i) {
    const uint64_t address = chain[i] - (i ? 1 : 0);
    auto known = process->frame_pointer_at.find(address);
    if (known == process->frame_pointer_at.end()) {
      const Mapping* mapping = space_.Find(sample.pid, address);
      if (!mapping || IsFileless(mapping->filename)) return false;
      // A conflict (something else mapped here before) is the walk's to sort out.
      if (Report(*process, *mapping) != ReportResult::kOk) return false;
      known = process->frame_pointer_at
                  .emplace(address, FrameRecordHoldsReturnAddress(process->dwfl, address, fp_dwarf))
                  .first;
    }
    if (!known->second) return false;
  }
  return true;
}

UnwindOutcome DwarfUnwinder::Unwind(const UserStackSample& sample, std::vector<uint64_t>* frames) {
  return Walk(space_, sample.pid, sample.regs_mask, sample.regs, sample.stack, frames,
              sample.frame_record_return);
}

}  // namespace tprof
