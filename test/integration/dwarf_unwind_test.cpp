// DWARF unwinding of real stack copies: the test samples a program built with
// -fomit-frame-pointer (main -> top -> mid -> leaf) through perf_event_open with
// PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER, takes its mappings from /proc/PID/maps, and
// checks that the unwinder gives complete stacks.
#include <asm/perf_regs.h>
#include <gtest/gtest.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

#include "core/model/address_space.h"
#include "core/perfdata/perf_record_parser.h"
#include "symbolize/dwarf_unwinder.h"
#include "symbolize/symbolizer.h"

namespace tprof {
namespace {

constexpr uint64_t kRegsMask =
    ((1ull << PERF_REG_X86_64_MAX) - 1) & ~((1ull << PERF_REG_X86_DS) | (1ull << PERF_REG_X86_ES) |
                                            (1ull << PERF_REG_X86_FS) | (1ull << PERF_REG_X86_GS));
constexpr uint64_t kSampleType =
    PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;

struct Capture {
  uint32_t pid = 0;
  AddressSpace space;
  std::vector<MmapRecord> mmaps;
  std::vector<ParsedPerfSample> samples;
  std::vector<std::string> raw;  // the records the samples point into
};

void ReadMaps(uint32_t pid, Capture* capture) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/maps");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string range, perms, offset, dev, inode, path;
    fields >> range >> perms >> offset >> dev >> inode;
    std::getline(fields >> std::ws, path);
    if (perms.size() < 3 || perms[2] != 'x') continue;
    MmapRecord r;
    r.pid = r.tid = pid;
    r.start = std::stoull(range.substr(0, range.find('-')), nullptr, 16);
    r.length = std::stoull(range.substr(range.find('-') + 1), nullptr, 16) - r.start;
    r.page_offset = std::stoull(offset, nullptr, 16);
    r.filename = path;
    capture->space.OnMmap(r);
    capture->mmaps.push_back(r);
  }
}

// Runs `argv` under a sampling event and returns its samples and mappings; empty when
// perf_event_open is not allowed here.
Capture Record(const std::vector<std::string>& argv) {
  Capture capture;
  int go[2];
  EXPECT_EQ(::pipe(go), 0);
  pid_t child = ::fork();
  if (child == 0) {
    char c;
    ::close(go[1]);
    if (::read(go[0], &c, 1) != 1) ::_exit(127);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(go[0]);
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_TASK_CLOCK;
  attr.freq = 1;
  attr.sample_freq = 400;
  attr.sample_type = kSampleType;
  attr.sample_regs_user = kRegsMask;
  attr.sample_stack_user = 16384;
  attr.exclude_kernel = 1;
  attr.disabled = 1;
  attr.enable_on_exec = 1;
  int fd = static_cast<int>(::syscall(SYS_perf_event_open, &attr, child, -1, -1, 0));
  if (fd < 0) {
    ::close(go[1]);
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    return capture;
  }
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t data_size = 2048 * page;  // 8 MiB: ~500 samples of 16 KiB fit
  void* ring = ::mmap(nullptr, page + data_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  EXPECT_NE(ring, MAP_FAILED);
  ::write(go[1], "x", 1);
  ::close(go[1]);
  // The maps are read while the program still runs (after it exits, /proc/PID/maps of the
  // zombie is empty), once both the program's and libc's code are mapped. The dynamic loader
  // first reserves libc's whole extent read-only and maps its code segment over it afterwards:
  // a wait for the name alone could read the maps in between, under load, leaving every stack
  // without the libc frames that lead to its outermost frame.
  capture.pid = static_cast<uint32_t>(child);
  for (int i = 0; i < 10000; ++i) {
    Capture maps;
    ReadMaps(capture.pid, &maps);
    auto mapped = [&](const char* name) {
      return std::any_of(maps.mmaps.begin(), maps.mmaps.end(), [&](const MmapRecord& r) {
        return r.filename.find(name) != std::string::npos;
      });
    };
    if (mapped("unwind_nofp") && mapped("/libc.so")) {
      capture.space = std::move(maps.space);
      capture.mmaps = std::move(maps.mmaps);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_FALSE(capture.mmaps.empty()) << "the program's and libc's code were never both mapped";
  int status = 0;
  ::waitpid(child, &status, 0);

  auto* meta = static_cast<perf_event_mmap_page*>(ring);
  uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
  const char* data = static_cast<const char*>(ring) + page;
  PerfRecordLayout layout;
  layout.sample_type = kSampleType;
  layout.regs_user_count = static_cast<uint32_t>(std::popcount(kRegsMask));
  for (uint64_t at = meta->data_tail; at < head;) {
    perf_event_header header;
    for (size_t i = 0; i < sizeof header; ++i)
      reinterpret_cast<char*>(&header)[i] = data[(at + i) % data_size];
    std::string record(header.size, '\0');
    for (size_t i = 0; i < header.size; ++i) record[i] = data[(at + i) % data_size];
    at += header.size;
    if (header.type != PERF_RECORD_SAMPLE || header.size == 0) continue;
    capture.raw.push_back(std::move(record));
  }
  for (const std::string& record : capture.raw) {
    ParsedPerfSample sample;
    if (ParsePerfSample(reinterpret_cast<const uint8_t*>(record.data()) + sizeof(perf_event_header),
                        record.size() - sizeof(perf_event_header), layout, &sample)
            .ok())
      capture.samples.push_back(std::move(sample));
  }
  ::munmap(ring, page + data_size);
  ::close(fd);
  return capture;
}

TEST(DwarfUnwind, CompleteStacksWithoutFramePointers) {
  Capture capture = Record({NOFP_BINARY, "0.8"});
  // Software events with user stacks are open to root and to perf_event_paranoid <= 2.
  ASSERT_NE(capture.pid, 0u) << "perf_event_open refused a task-clock event";
  ASSERT_GT(capture.samples.size(), 50u);
  DwarfUnwinder unwinder;
  SymbolizerOptions options;
  options.on_note = [](const std::string& note) { std::cerr << "note: " << note << '\n'; };
  Symbolizer symbolizer(options);
  size_t in_leaf = 0, complete = 0;
  std::string example;
  for (const ParsedPerfSample& s : capture.samples) {
    auto chain = unwinder.Unwind(capture.space, capture.pid, kRegsMask, s.regs_user, s.stack_user);
    if (!chain.ok()) continue;
    std::vector<std::string> names;
    for (size_t i = 0; i < chain->size(); ++i) {
      uint64_t address = (*chain)[i] - (i > 0 ? 1 : 0);  // callers: the call instruction
      names.push_back(
          symbolizer.Resolve(capture.space.Find(capture.pid, address), address).function);
    }
    if (names.empty() || names[0] != "leaf") continue;
    ++in_leaf;
    std::string joined;
    for (const std::string& n : names) joined += (joined.empty() ? "" : " -> ") + n;
    if (names.size() >= 4 && names[1] == "mid" && names[2] == "top" && names[3] == "main") {
      ++complete;
      if (example.empty()) example = joined;
    } else if (in_leaf - complete <= 3) {
      std::cerr << "incomplete: " << joined << '\n';
    }
  }
  std::cerr << complete << " of " << in_leaf << " samples in leaf() unwound to main; e.g. "
            << example << "\n"
            << unwinder.stats().sessions << " session(s), " << unwinder.stats().modules_reported
            << " module(s) reported\n";
  ASSERT_GT(in_leaf, 20u);
  EXPECT_GE(complete, in_leaf * 95 / 100);
}

TEST(DwarfUnwind, ThroughTheUserStackUnwinderInterface) {
  Capture capture = Record({NOFP_BINARY, "0.3"});
  // Software events with user stacks are open to root and to perf_event_paranoid <= 2.
  ASSERT_NE(capture.pid, 0u) << "perf_event_open refused a task-clock event";
  ASSERT_FALSE(capture.samples.empty());
  DwarfUnwinder unwinder;
  UserStackSample sample;
  sample.pid = capture.pid;
  sample.regs_mask = kRegsMask;
  sample.regs = capture.samples[0].regs_user;
  sample.stack = capture.samples[0].stack_user;
  std::vector<uint64_t> frames;
  // No mappings known yet: the pc alone, in no known mapping.
  EXPECT_EQ(unwinder.Unwind(sample, &frames).end, UnwindEnd::kUnknownAddress);
  EXPECT_LE(frames.size(), 1u);
  for (const MmapRecord& r : capture.mmaps) unwinder.OnMmap(r);  // as UnwindPass does
  size_t unwound = 0, complete = 0;
  for (const ParsedPerfSample& s : capture.samples) {
    sample.ip = s.sample.ip;
    sample.regs = s.regs_user;
    sample.stack = s.stack_user;
    frames.clear();
    // Leaf first: the pc, then at least mid, top, main and libc's start code.
    UnwindOutcome outcome = unwinder.Unwind(sample, &frames);
    if (frames.size() >= 4) ++unwound;
    if (outcome.end == UnwindEnd::kOutermostFrame) ++complete;
  }
  EXPECT_GE(unwound, capture.samples.size() * 9 / 10);
  EXPECT_GE(complete, capture.samples.size() * 9 / 10);
}

TEST(DwarfUnwind, GarbageInputIsAnErrorOrAShortChain) {
  AddressSpace space;
  DwarfUnwinder unwinder;
  std::vector<uint64_t> regs(std::popcount(kRegsMask), 0);
  EXPECT_FALSE(unwinder.Unwind(space, 1, kRegsMask, regs, std::string(64, '\xff')).ok());
  EXPECT_FALSE(unwinder.Unwind(space, 1, 0, {}, {}).ok());
}

}  // namespace
}  // namespace tprof
