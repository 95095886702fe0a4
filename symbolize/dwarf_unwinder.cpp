#include "symbolize/dwarf_unwinder.h"

#include <elf.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <set>

#include "core/build_id.h"
#include "core/file_paths.h"
#include "core/frame_resolver.h"
#include "symbolize/debug_file.h"

namespace tprof {
namespace {

// DWARF register number -> perf_regs number, for the registers the CFI uses.
#if defined(__aarch64__)
constexpr int kDwarfRegCount = 32;  // x0..x30, sp; the pc is passed separately
constexpr int kPerfPc = 32;
constexpr int kPerfSp = 31;
int PerfRegOfDwarf(int dwarf) { return dwarf; }
#else
constexpr int kDwarfRegCount = 17;  // rax, rdx, rcx, rbx, rsi, rdi, rbp, rsp, r8..r15, rip
constexpr int kPerfPc = 8;          // PERF_REG_X86_IP
constexpr int kPerfSp = 7;          // PERF_REG_X86_SP
int PerfRegOfDwarf(int dwarf) {
  static constexpr int kMap[kDwarfRegCount] = {0,  3,  2,  1,  4,  5,  6,  7, 16,
                                               17, 18, 19, 20, 21, 22, 23, 8};
  return kMap[dwarf];
}
#endif

std::string_view OwnVdsoImage() {
  auto base = reinterpret_cast<const char*>(getauxval(AT_SYSINFO_EHDR));
  if (!base) return {};
  Elf64_Ehdr ehdr;
  std::memcpy(&ehdr, base, sizeof ehdr);
  if (std::memcmp(ehdr.e_ident, ELFMAG, SELFMAG) != 0 || ehdr.e_ident[EI_CLASS] != ELFCLASS64)
    return {};
  return {base, ehdr.e_shoff + size_t{ehdr.e_shnum} * ehdr.e_shentsize};
}

// One sample's registers and stack, read by libdwfl's callbacks during an unwind.
struct SampleState {
  pid_t tid = 0;
  uint64_t regs_by_perf_number[64] = {};
  uint64_t present = 0;  // bit n: perf register n is known
  std::string_view stack;
  uint64_t sp = 0;
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
  const SampleState& state = *static_cast<const SampleState*>(arg);
  // Only the copied stack is readable; anything else ends the walk at that frame.
  if (address < state.sp || address - state.sp + 8 > state.stack.size()) return false;
  std::memcpy(result, state.stack.data() + (address - state.sp), 8);
  return true;
}

bool SetInitialRegisters(Dwfl_Thread* thread, void* arg) {
  const SampleState& state = *static_cast<const SampleState*>(arg);
  for (int dwarf = 0; dwarf < kDwarfRegCount; ++dwarf) {
    int perf = PerfRegOfDwarf(dwarf);
    if (!(state.present & (uint64_t{1} << perf))) continue;
    Dwarf_Word value = state.regs_by_perf_number[perf];
    if (!dwfl_thread_state_registers(thread, dwarf, 1, &value)) return false;
  }
  dwfl_thread_state_register_pc(thread, state.regs_by_perf_number[kPerfPc]);
  return true;
}

const Dwfl_Thread_Callbacks kThreadCallbacks = {
    NextThread, GetThread, MemoryRead, SetInitialRegisters, nullptr, nullptr,
};

struct FrameCollector {
  std::vector<uint64_t>* frames;
  size_t max_frames;
};

int CollectFrame(Dwfl_Frame* frame, void* arg) {
  auto& collector = *static_cast<FrameCollector*>(arg);
  Dwarf_Addr pc;
  bool activation;
  if (!dwfl_frame_pc(frame, &pc, &activation) || pc == 0) return DWARF_CB_ABORT;
  // A frame that repeats its caller means the CFI went in circles.
  if (collector.frames->size() >= 2 && collector.frames->back() == pc &&
      (*collector.frames)[collector.frames->size() - 2] == pc)
    return DWARF_CB_ABORT;
  collector.frames->push_back(pc);
  return collector.frames->size() < collector.max_frames ? DWARF_CB_OK : DWARF_CB_ABORT;
}

}  // namespace

struct DwarfUnwinder::ElfLayout {
  std::string path;  // local file to open; empty for the vdso image
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

  ~Process() {
    if (dwfl) dwfl_end(dwfl);
  }
};

DwarfUnwinder::DwarfUnwinder(DwarfUnwinderOptions options) : options_(std::move(options)) {
  search_ = {DebugSearchPath(options_.symfs, options_.debug_dirs), options_.cache_dir};
  debuginfo_path_ptr_ = search_.path.data();
  vdso_image_ = std::string(OwnVdsoImage());
}

DwarfUnwinder::~DwarfUnwinder() = default;

void DwarfUnwinder::Note(const std::string& message) {
  if (std::find(notes_.begin(), notes_.end(), message) == notes_.end()) notes_.push_back(message);
}

const DwarfUnwinder::ElfLayout* DwarfUnwinder::LayoutOf(const std::string& recorded_path,
                                                        const std::string& build_id) {
  std::string key = recorded_path + '\0' + build_id;
  auto it = layouts_.find(key);
  if (it != layouts_.end()) return it->second.get();
  auto layout = std::make_unique<ElfLayout>();
  bool usable = false;
  std::vector<std::string> candidates;
  std::string path = StripDeleted(recorded_path);
  if (recorded_path == "[vdso]") {
    candidates.push_back("");
  } else if (!path.empty() && path[0] == '/') {
    if (options_.symfs.empty()) {
      candidates.push_back(path);
    } else {
      candidates.push_back(options_.symfs + path);
      candidates.push_back(options_.symfs + "/" + BaseName(path));
    }
  }
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
    if (elf && elf_kind(elf) == ELF_K_ELF) {
      const void* id = nullptr;
      ssize_t id_size = dwelf_elf_gnu_build_id(elf, &id);
      std::string file_id =
          id_size > 0 ? std::string(static_cast<const char*>(id), static_cast<size_t>(id_size))
                      : std::string();
      if (!build_id.empty() && !file_id.empty() && !SameBuildId(build_id, file_id)) {
        Note((candidate.empty() ? recorded_path : candidate) + ": build-id " + BuildIdHex(file_id) +
             " differs from the recorded " + BuildIdHex(build_id) + "; not used for unwinding");
      } else {
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
        usable = !layout->segments.empty();
      }
    }
    if (elf) elf_end(elf);
    if (fd >= 0) ::close(fd);
    if (usable) break;
  }
  if (!usable) {
    if (!candidates.empty())
      Note("no usable file for " + recorded_path + "; stacks through it end there");
    layout.reset();
  }
  return layouts_.emplace(std::move(key), std::move(layout)).first->second.get();
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
  const ElfLayout* layout = LayoutOf(mapping.filename, mapping.build_id);
  if (!layout) return ReportResult::kUnusable;
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

Result<std::vector<uint64_t>> DwarfUnwinder::Unwind(const AddressSpace& space, uint32_t pid,
                                                    uint64_t regs_mask,
                                                    std::span<const uint64_t> regs,
                                                    std::string_view stack) {
  ++stats_.samples;
  SampleState state;
  state.tid = static_cast<pid_t>(pid);
  size_t index = 0;
  for (int bit = 0; bit < 64 && index < regs.size(); ++bit) {
    if (!(regs_mask & (uint64_t{1} << bit))) continue;
    state.regs_by_perf_number[bit] = regs[index++];
    state.present |= uint64_t{1} << bit;
  }
  if (!(state.present & (uint64_t{1} << kPerfPc)) || !(state.present & (uint64_t{1} << kPerfSp)))
    return Error("the sample has no copy of the pc and stack pointer");
  const uint64_t pc = state.regs_by_perf_number[kPerfPc];
  state.sp = state.regs_by_perf_number[kPerfSp];
  state.stack = stack;

  // Every binary the walk can enter holds the pc or a word on the stack (return addresses are
  // read from the stack), so those are reported to the session before the walk starts.
  std::vector<const Mapping*> needed;
  std::set<const Mapping*> seen;
  auto consider = [&](uint64_t address) {
    const Mapping* mapping = space.Find(pid, address);
    if (mapping && seen.insert(mapping).second) needed.push_back(mapping);
  };
  consider(pc);
  if (needed.empty()) return Error("no recorded mapping holds the pc");
  for (size_t at = 0; at + 8 <= stack.size(); at += 8) {
    uint64_t word;
    std::memcpy(&word, stack.data() + at, 8);
    if (word >= 4096 && !IsKernelAddress(word)) consider(word);
  }
  Process* process = &SessionFor(pid);
  for (size_t i = 0; i < needed.size(); ++i) {
    ReportResult result = Report(*process, *needed[i]);
    if (i == 0 && result == ReportResult::kUnusable)
      return Error("the binary of the pc cannot be read: " + needed[0]->filename);
    if (result != ReportResult::kConflict) continue;
    processes_.erase(pid);
    process = &SessionFor(pid);
    for (size_t j = 0; j <= i; ++j) Report(*process, *needed[j]);
  }
  process->state = state;
  if (!process->attached) {
    if (!dwfl_attach_state(process->dwfl, nullptr, static_cast<pid_t>(pid), &kThreadCallbacks,
                           &process->state))
      return Error(std::string("dwfl_attach_state: ") + dwfl_errmsg(-1));
    process->attached = true;
  }
  std::vector<uint64_t> frames;
  FrameCollector collector{&frames, options_.max_frames};
  // The end of the stack shows as an error on some architectures; the frames found count.
  dwfl_getthread_frames(process->dwfl, static_cast<pid_t>(pid), CollectFrame, &collector);
  if (frames.empty()) frames.push_back(pc);
  stats_.frames += frames.size();
  return frames;
}

bool DwarfUnwinder::Unwind(const UserStackSample& sample, std::vector<uint64_t>* frames) {
  auto chain = Unwind(space_, sample.pid, sample.regs_mask, sample.regs, sample.stack);
  if (!chain.ok()) return false;
  // The caller already has the sampled pc; it wants the callers.
  frames->insert(frames->end(), chain->begin() + 1, chain->end());
  return true;
}

}  // namespace tprof
