// The oracle of per-function metrics: three functions with designed, different page-fault counts
// (every iteration touches fresh pages: one fault each), and each function's CPU time counted by
// the workload itself around every call (its own perf_event_open group of task-clock and
// page-faults on this thread), so that a test can hold tprof's per-function numbers against
// them. A test passes only if each function's windows are
// credited to that function: the rates differ by design.
//   faults_heavy: 4 fresh pages per iteration, faults_light: 1, compute: none; every iteration
//   also runs the same 20,000 steps of arithmetic.
//
//   metric_oracle ROUNDS ITERATIONS TRUTH.json [spread|entry|exit]
// Where a call's faults happen: spread (the default: a function's pages are touched one
// iteration at a time), entry (all its pages first, then the arithmetic: as a function that
// allocates and fills its buffers first) or exit (the arithmetic first). Same faults, same time.
// Each round calls the three functions in turn, ITERATIONS iterations each (500: calls of tens of
// milliseconds; 1: calls of some 25-80 us, the short-function case). TRUTH.json gets, per
// function, the calls, the designed faults and what the group counted during them:
//   {"faults_heavy": {"calls": N, "designed-faults": N, "task-clock": NS, "page-faults": N,
//                     "instructions": N or null}, ...}
// "instructions" (user and kernel, a counter of its own) is null where the machine has no PMU;
// in the arm lab it is exact, and so is each function's faults per kilo-instruction.
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

volatile uint64_t g_sink;

// Fresh pages for one round of calls; main hands them back to the kernel between rounds, outside
// the functions, so that the functions call nothing (their counts are their own, as a profile's
// rows are).
enum class Placement { kSpread, kEntry, kExit };

struct Region {
  char* memory = nullptr;
  long page = 4096;
  long next = 0;
  Placement placement = Placement::kSpread;
};

// One iteration: `pages` first touches (one minor fault each) and 20,000 steps of arithmetic.
// Inlined into each function so that every sample of an iteration falls in its caller.
__attribute__((always_inline)) inline void Iteration(Region& region, int pages) {
  for (int p = 0; p < pages; ++p) region.memory[region.next++ * region.page] = 1;
  uint64_t x = g_sink | 1;
  for (int i = 0; i < 20000; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    // Every step is done: clang would otherwise run this loop some eight times faster than g++
    // (it is a linear recurrence), and a function's calls would then be too short for the
    // group windows that credit its faults.
    asm volatile("" : "+r"(x));
  }
  g_sink = x;
}

// A call of `iterations` iterations touching `pages` fresh pages in each, placed as the region
// says.
__attribute__((always_inline)) inline void Call(Region& region, long iterations, int pages) {
  if (region.placement == Placement::kSpread) {
    for (long i = 0; i < iterations; ++i) Iteration(region, pages);
    return;
  }
  if (region.placement == Placement::kEntry)
    for (long i = 0; i < iterations * pages; ++i) region.memory[region.next++ * region.page] = 1;
  for (long i = 0; i < iterations; ++i) Iteration(region, 0);
  if (region.placement == Placement::kExit)
    for (long i = 0; i < iterations * pages; ++i) region.memory[region.next++ * region.page] = 1;
}

__attribute__((noinline)) void faults_heavy(Region& region, long iterations) {
  Call(region, iterations, 4);
}

__attribute__((noinline)) void faults_light(Region& region, long iterations) {
  Call(region, iterations, 1);
}

__attribute__((noinline)) void compute(Region& region, long iterations) {
  Call(region, iterations, 0);
}

// The leader is opened disabled and enabled once the group is whole, as perf and tprof's
// recorder do: a member added to a group already counting on a running task is not scheduled
// until the task is switched out and in again, so page-faults opened beside a counting
// task-clock missed the first 0 to 20,000 faults (measured on this kernel, 6.18; opened this way
// it misses none).
int OpenCounter(uint64_t config, int group) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = config;
  attr.read_format = PERF_FORMAT_GROUP;
  attr.disabled = group == -1;
  return static_cast<int>(syscall(SYS_perf_event_open, &attr, 0, -1, group, 0));
}

struct Counts {
  uint64_t calls = 0, task_clock = 0, page_faults = 0, instructions = 0;
};

// A hardware instruction counter on this thread, user and kernel; -1 without a PMU.
int OpenInstructionCounter() {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_HARDWARE;
  attr.config = PERF_COUNT_HW_INSTRUCTIONS;
  return static_cast<int>(syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0));
}

uint64_t ReadCounter(int fd) {
  uint64_t value = 0;
  return fd >= 0 && read(fd, &value, sizeof value) == static_cast<ssize_t>(sizeof value) ? value
                                                                                         : 0;
}

// The group's two values: task-clock (ns), page-faults.
bool ReadGroup(int leader, uint64_t* clock, uint64_t* faults) {
  uint64_t values[3];  // nr, then the values in group order
  if (read(leader, values, sizeof values) != static_cast<ssize_t>(sizeof values)) return false;
  *clock = values[1];
  *faults = values[2];
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4 && argc != 5) {
    std::fprintf(stderr, "usage: metric_oracle ROUNDS ITERATIONS TRUTH.json [spread|entry|exit]\n");
    return 2;
  }
  Placement placement = Placement::kSpread;
  if (argc == 5) {
    const std::string where = argv[4];
    if (where == "entry")
      placement = Placement::kEntry;
    else if (where == "exit")
      placement = Placement::kExit;
    else if (where != "spread") {
      std::fprintf(stderr, "metric_oracle: placement '%s' is not spread, entry or exit\n", argv[4]);
      return 2;
    }
  }
  const long rounds = std::atol(argv[1]);
  const long iterations = std::atol(argv[2]);
  const int leader = OpenCounter(PERF_COUNT_SW_TASK_CLOCK, -1);
  const int member = leader >= 0 ? OpenCounter(PERF_COUNT_SW_PAGE_FAULTS, leader) : -1;
  if (leader < 0 || member < 0 || ioctl(leader, PERF_EVENT_IOC_ENABLE, 0) != 0) {
    std::perror("metric_oracle: perf_event_open");
    return 1;
  }
  const int instructions = OpenInstructionCounter();
  Region region;
  region.placement = placement;
  region.page = sysconf(_SC_PAGESIZE);
  const size_t region_bytes = static_cast<size_t>(5 * iterations * region.page);  // 4 + 1 a round
  region.memory = static_cast<char*>(
      mmap(nullptr, region_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  if (region.memory == MAP_FAILED) return 1;
  // One fault per page: no transparent huge pages, of any size, that would map several pages
  // on one fault as memory allows.
  madvise(region.memory, region_bytes, MADV_NOHUGEPAGE);

  using Function = void (*)(Region&, long);
  const Function functions[] = {faults_heavy, faults_light, compute};
  const char* names[] = {"faults_heavy", "faults_light", "compute"};
  const long pages_per_iteration[] = {4, 1, 0};
  Counts counts[3];
  for (long r = 0; r < rounds; ++r) {
    if (r > 0) {
      // The next touches fault again: the pages are handed back.
      madvise(region.memory, region_bytes, MADV_DONTNEED);
      region.next = 0;
    }
    for (int f = 0; f < 3; ++f) {
      uint64_t clock0, faults0, clock1, faults1;
      if (!ReadGroup(leader, &clock0, &faults0)) return 1;
      const uint64_t instructions0 = ReadCounter(instructions);
      functions[f](region, iterations);
      const uint64_t instructions1 = ReadCounter(instructions);
      if (!ReadGroup(leader, &clock1, &faults1)) return 1;
      counts[f].instructions += instructions1 - instructions0;
      counts[f].calls += 1;
      counts[f].task_clock += clock1 - clock0;
      counts[f].page_faults += faults1 - faults0;
    }
  }

  FILE* out = std::fopen(argv[3], "w");
  if (!out) {
    std::perror(argv[3]);
    return 1;
  }
  std::fprintf(out, "{");
  for (int f = 0; f < 3; ++f) {
    char instruction_count[32] = "null";
    if (instructions >= 0)
      std::snprintf(instruction_count, sizeof instruction_count, "%llu",
                    static_cast<unsigned long long>(counts[f].instructions));
    std::fprintf(
        out,
        "%s\"%s\": {\"calls\": %llu, \"designed-faults\": %llu, \"task-clock\": %llu, "
        "\"page-faults\": %llu, \"instructions\": %s}",
        f ? ", " : "", names[f], static_cast<unsigned long long>(counts[f].calls),
        static_cast<unsigned long long>(counts[f].calls * iterations * pages_per_iteration[f]),
        static_cast<unsigned long long>(counts[f].task_clock),
        static_cast<unsigned long long>(counts[f].page_faults), instruction_count);
  }
  std::fprintf(out, "}\n");
  return std::fclose(out) == 0 ? 0 : 1;
}
