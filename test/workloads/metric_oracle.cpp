// The oracle of per-function metrics: three functions with designed, different page-fault counts
// (every iteration touches fresh pages: one fault each), and each function's CPU time counted by
// the workload itself around every call (its own perf_event_open group of task-clock and
// page-faults on this thread), so that a test can hold tprof's per-function numbers against
// them. A test passes only if each function's windows are
// credited to that function: the rates differ by design.
//   faults_heavy: 4 fresh pages per iteration, faults_light: 1, compute: none; every iteration
//   also runs the same 20,000 steps of arithmetic.
//
//   metric_oracle ROUNDS ITERATIONS TRUTH.json [spread|entry|exit [turns|random|nested]]
// Where a call's faults happen: spread (the default: a function's pages are touched one
// iteration at a time), entry (all its pages first, then the arithmetic: as a function that
// allocates and fills its buffers first) or exit (the arithmetic first). Same faults, same time.
// Each round calls the three functions, ITERATIONS iterations each (500: calls of tens of
// milliseconds; 1: calls of some 25-80 us, the short-function case; a fraction below 1 is one
// iteration of that share of the arithmetic, with its pages: calls of 10 us). In which order:
// turns (the default: in turn), random (a shuffle per round, the same every run), or nested
// (main calls `caller`, which does a quarter of their work itself, touching 2 pages an
// iteration, and then calls the three in turn: a caller whose own work is small against its
// callees'). TRUTH.json gets, per function, the calls, the designed faults and what the group
// counted during them:
//   {"faults_heavy": {"calls": N, "designed-faults": N, "task-clock": NS, "page-faults": N,
//                     "instructions": N or null}, ...}
// and, when nested, "caller" with its own (self) counts, and "caller (inclusive)" with those of
// its whole calls; "steal-ns": how much more the rounds' task-clock counted than the thread's
// CPU time (the host's steal, which the clock counts as the thread's and the scheduler does not,
// to the nanosecond where the kernel accounts steal; 0 where it does not).
// "instructions" (user and kernel, a counter of its own) is null where the machine has no PMU;
// in the arm lab it is exact, and so is each function's faults per kilo-instruction.
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
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

// One iteration: `pages` first touches (one minor fault each) and `steps` steps of arithmetic.
// Inlined into each function so that every sample of an iteration falls in its caller.
constexpr long kSteps = 20000;

__attribute__((always_inline)) inline void Iteration(Region& region, int pages, long steps) {
  for (int p = 0; p < pages; ++p) region.memory[region.next++ * region.page] = 1;
  uint64_t x = g_sink | 1;
  for (long i = 0; i < steps; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    // Every step is done: clang would otherwise run this loop some eight times faster than g++
    // (it is a linear recurrence), and a function's calls would then be too short for the
    // group windows that credit its faults.
    asm volatile("" : "+r"(x));
  }
  g_sink = x;
}

// A call's iterations: whole ones, and a last of `fraction` of the steps (0: none).
struct Iterations {
  long whole = 0;
  double fraction = 0;
  long count() const { return whole + (fraction > 0 ? 1 : 0); }
  long steps(long i) const { return i < whole ? kSteps : static_cast<long>(fraction * kSteps); }
};

// A call of `iterations` touching `pages` fresh pages in each, placed as the region says.
__attribute__((always_inline)) inline void Call(Region& region, const Iterations& iterations,
                                                int pages) {
  const long n = iterations.count();
  if (region.placement == Placement::kSpread) {
    for (long i = 0; i < n; ++i) Iteration(region, pages, iterations.steps(i));
    return;
  }
  if (region.placement == Placement::kEntry)
    for (long i = 0; i < n * pages; ++i) region.memory[region.next++ * region.page] = 1;
  for (long i = 0; i < n; ++i) Iteration(region, 0, iterations.steps(i));
  if (region.placement == Placement::kExit)
    for (long i = 0; i < n * pages; ++i) region.memory[region.next++ * region.page] = 1;
}

__attribute__((noinline)) void faults_heavy(Region& region, const Iterations& iterations) {
  Call(region, iterations, 4);
}

__attribute__((noinline)) void faults_light(Region& region, const Iterations& iterations) {
  Call(region, iterations, 1);
}

__attribute__((noinline)) void compute(Region& region, const Iterations& iterations) {
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
  uint64_t calls = 0, designed_faults = 0, task_clock = 0, page_faults = 0, instructions = 0;
};

// A hardware instruction counter on this thread, user and kernel; -1 without a PMU.
int OpenInstructionCounter() {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_HARDWARE;
  attr.config = PERF_COUNT_HW_INSTRUCTIONS;
  return static_cast<int>(syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0));
}

// The thread's CPU time as the scheduler accounts it: with paravirtual steal accounting
// (CONFIG_PARAVIRT_TIME_ACCOUNTING) it leaves out the time the host took the vCPU away, which
// task-clock counts as the thread's.
uint64_t ThreadCpuNs() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1000000000ULL + static_cast<uint64_t>(now.tv_nsec);
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

// The counters every call is measured by.
struct Meters {
  int group = -1;         // task-clock, page-faults
  int instructions = -1;  // -1 without a PMU
};

using Function = void (*)(Region&, const Iterations&);

// Calls `function` and adds what it counted to `counts`; false when the group cannot be read.
// Inlined: the reads belong to whoever calls, as a profile's rows would have them.
__attribute__((always_inline)) inline bool CallCounted(const Meters& meters, Function function,
                                                       Region& region, const Iterations& iterations,
                                                       int pages, Counts& counts) {
  uint64_t clock0, faults0, clock1, faults1;
  if (!ReadGroup(meters.group, &clock0, &faults0)) return false;
  const uint64_t instructions0 = ReadCounter(meters.instructions);
  function(region, iterations);
  const uint64_t instructions1 = ReadCounter(meters.instructions);
  if (!ReadGroup(meters.group, &clock1, &faults1)) return false;
  counts.instructions += instructions1 - instructions0;
  counts.calls += 1;
  counts.designed_faults += static_cast<uint64_t>(iterations.count() * pages);
  counts.task_clock += clock1 - clock0;
  counts.page_faults += faults1 - faults0;
  return true;
}

// An empty call, measured as the others are: what the reads around a call add to its clock (the
// end of the first read's system call and the start of the second's, which a profile credits to
// the read, not to the function).
__attribute__((noinline)) void nothing(Region&, const Iterations&) { asm volatile(""); }

constexpr Function kFunctions[] = {faults_heavy, faults_light, compute};
constexpr const char* kNames[] = {"faults_heavy", "faults_light", "compute"};
constexpr int kPagesPerIteration[] = {4, 1, 0};
constexpr int kCallerPagesPerIteration = 2;

// The nested schedule's caller: a quarter of a callee's work of its own (2 pages an iteration),
// placed as the region says, then the three in turn, each counted.
struct CallerState {
  const Meters* meters = nullptr;
  Iterations own;
  Counts* counts = nullptr;  // the three functions'
  bool ok = true;
};

__attribute__((noinline)) void caller(Region& region, const Iterations& iterations,
                                      CallerState& state) {
  Call(region, state.own, kCallerPagesPerIteration);
  for (int f = 0; f < 3; ++f)
    state.ok &= CallCounted(*state.meters, kFunctions[f], region, iterations, kPagesPerIteration[f],
                            state.counts[f]);
}

Iterations ParseIterations(double iterations) {
  Iterations parsed;
  parsed.whole = static_cast<long>(iterations);
  parsed.fraction = iterations - static_cast<double>(parsed.whole);
  return parsed;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4 || argc > 6) {
    std::fprintf(stderr,
                 "usage: metric_oracle ROUNDS ITERATIONS TRUTH.json [spread|entry|exit "
                 "[turns|random|nested]]\n");
    return 2;
  }
  Placement placement = Placement::kSpread;
  if (argc >= 5) {
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
  const std::string schedule = argc == 6 ? argv[5] : "turns";
  if (schedule != "turns" && schedule != "random" && schedule != "nested") {
    std::fprintf(stderr, "metric_oracle: schedule '%s' is not turns, random or nested\n",
                 schedule.c_str());
    return 2;
  }
  const long rounds = std::atol(argv[1]);
  const double iteration_count = std::atof(argv[2]);
  if (rounds <= 0 || !(iteration_count > 0)) {
    std::fprintf(stderr, "metric_oracle: ROUNDS and ITERATIONS must be positive\n");
    return 2;
  }
  const Iterations iterations = ParseIterations(iteration_count);
  Meters meters;
  meters.group = OpenCounter(PERF_COUNT_SW_TASK_CLOCK, -1);
  const int member = meters.group >= 0 ? OpenCounter(PERF_COUNT_SW_PAGE_FAULTS, meters.group) : -1;
  if (meters.group < 0 || member < 0 || ioctl(meters.group, PERF_EVENT_IOC_ENABLE, 0) != 0) {
    std::perror("metric_oracle: perf_event_open");
    return 1;
  }
  meters.instructions = OpenInstructionCounter();
  Region region;
  region.placement = placement;
  region.page = sysconf(_SC_PAGESIZE);
  const Iterations own = ParseIterations(iteration_count / 4);
  // A round's pages: 4 + 1 an iteration, and the caller's own.
  const long pages_per_round = 5 * iterations.count() + kCallerPagesPerIteration * own.count();
  const size_t region_bytes = static_cast<size_t>(pages_per_round * region.page);
  region.memory = static_cast<char*>(
      mmap(nullptr, region_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  if (region.memory == MAP_FAILED) return 1;
  // One fault per page: no transparent huge pages, of any size, that would map several pages
  // on one fault as memory allows.
  madvise(region.memory, region_bytes, MADV_NOHUGEPAGE);

  Counts counts[3], caller_inclusive, reads;
  CallerState state{&meters, own, counts, true};
  uint64_t shuffle = 0x9e3779b97f4a7c15ULL;  // the same order every run
  // The reads' cost, measured before the rounds rather than in them: a fourth call in every
  // round would change the loop's rhythm, which the arm lab's tests of short calls depend on.
  for (int i = 0; i < 256; ++i)
    if (!CallCounted(meters, nothing, region, Iterations{}, 0, reads)) return 1;
  // The stolen time over the rounds: what task-clock counted beyond the thread's CPU time.
  uint64_t rounds_clock0 = 0, rounds_clock1 = 0, unused = 0;
  if (!ReadGroup(meters.group, &rounds_clock0, &unused)) return 1;
  const uint64_t rounds_cpu0 = ThreadCpuNs();
  for (long r = 0; r < rounds; ++r) {
    if (r > 0) {
      // The next touches fault again: the pages are handed back.
      madvise(region.memory, region_bytes, MADV_DONTNEED);
      region.next = 0;
    }
    if (schedule == "nested") {
      uint64_t clock0, faults0, clock1, faults1;
      if (!ReadGroup(meters.group, &clock0, &faults0)) return 1;
      caller(region, iterations, state);
      if (!ReadGroup(meters.group, &clock1, &faults1) || !state.ok) return 1;
      caller_inclusive.calls += 1;
      caller_inclusive.task_clock += clock1 - clock0;
      caller_inclusive.page_faults += faults1 - faults0;
      continue;
    }
    int order[3] = {0, 1, 2};
    if (schedule == "random")
      for (int i = 2; i > 0; --i) {
        shuffle = shuffle * 6364136223846793005ULL + 1442695040888963407ULL;
        std::swap(order[i], order[(shuffle >> 33) % static_cast<uint64_t>(i + 1)]);
      }
    for (int f : order)
      if (!CallCounted(meters, kFunctions[f], region, iterations, kPagesPerIteration[f], counts[f]))
        return 1;
  }

  const uint64_t rounds_cpu1 = ThreadCpuNs();
  if (!ReadGroup(meters.group, &rounds_clock1, &unused)) return 1;
  const uint64_t rounds_clock = rounds_clock1 - rounds_clock0;
  const uint64_t rounds_cpu = rounds_cpu1 - rounds_cpu0;
  const uint64_t steal_ns = rounds_clock > rounds_cpu ? rounds_clock - rounds_cpu : 0;

  FILE* out = std::fopen(argv[3], "w");
  if (!out) {
    std::perror(argv[3]);
    return 1;
  }
  // The caller's instructions are not counted (null).
  const auto print = [&](const char* name, const Counts& c, bool first, bool instructions = true) {
    char instruction_count[32] = "null";
    if (meters.instructions >= 0 && instructions)
      std::snprintf(instruction_count, sizeof instruction_count, "%llu",
                    static_cast<unsigned long long>(c.instructions));
    std::fprintf(out,
                 "%s\"%s\": {\"calls\": %llu, \"designed-faults\": %llu, \"task-clock\": %llu, "
                 "\"page-faults\": %llu, \"instructions\": %s}",
                 first ? "" : ", ", name, static_cast<unsigned long long>(c.calls),
                 static_cast<unsigned long long>(c.designed_faults),
                 static_cast<unsigned long long>(c.task_clock),
                 static_cast<unsigned long long>(c.page_faults), instruction_count);
  };
  std::fprintf(out, "{");
  // The reads' share of each call's clock, which calls of 10 us would otherwise be some 10 %
  // over (the functions' rows in a profile never hold it): the empty calls' mean.
  const uint64_t read_ns = reads.calls ? reads.task_clock / reads.calls : 0;
  Counts raw[3];
  for (int f = 0; f < 3; ++f) {
    raw[f] = counts[f];
    counts[f].task_clock -= std::min(counts[f].task_clock, counts[f].calls * read_ns);
  }
  for (int f = 0; f < 3; ++f) print(kNames[f], counts[f], f == 0);
  if (schedule == "nested") {
    // The caller's own: its whole calls less its callees' and the reads. A whole call holds
    // its own work, its six reads (one read's worth each) and the read's worth of main's two
    // around it; its callees' measured clocks hold three of those six. A profile credits the
    // reads to the read, under the caller when --children. (Without a PMU: with one, each
    // measured call also reads the instruction counter twice, and these counts are rougher.)
    Counts self = caller_inclusive;
    caller_inclusive.designed_faults =
        static_cast<uint64_t>(rounds * kCallerPagesPerIteration * own.count());
    self.designed_faults = caller_inclusive.designed_faults;
    for (int f = 0; f < 3; ++f) {
      self.task_clock -= raw[f].task_clock;
      self.page_faults -= raw[f].page_faults;
      caller_inclusive.designed_faults += counts[f].designed_faults;
    }
    self.task_clock -= std::min(self.task_clock, 4 * caller_inclusive.calls * read_ns);
    caller_inclusive.task_clock -=
        std::min(caller_inclusive.task_clock, caller_inclusive.calls * read_ns);
    print("caller", self, false, false);
    print("caller (inclusive)", caller_inclusive, false, false);
  }
  std::fprintf(out, ", \"steal-ns\": %llu}\n", static_cast<unsigned long long>(steal_ns));
  return std::fclose(out) == 0 ? 0 : 1;
}
