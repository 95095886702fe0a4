// A workload with known software-event counts: it touches PAGES fresh pages (one minor fault
// each), sleeps SLEEPS times (one voluntary context switch each), spinning between sleeps so that
// cpu-clock samples fall throughout, and spins at the end so the last sample follows all of it.
//   fault_switch PAGES SLEEPS
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>

namespace {

volatile uint64_t g_sink;

// Inlined, so that the spinning counts as part of the function that calls it. The clock is read
// every 20,000 steps (some 25 us): reading it is a system call behind the vdso's
// __vdso_clock_gettime, whose return address is where a user-only cpu-clock sample of the call
// lands; at every 1,000 steps a paravirtualized VM put 17% of the samples there, splitting the
// caller's windows.
__attribute__((always_inline)) inline void SpinMicroseconds(long us) {
  timespec start, now;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
  uint64_t x = 1;
  do {
    for (int i = 0; i < 20000; ++i) x = x * 6364136223846793005ULL + 1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  } while ((now.tv_sec - start.tv_sec) * 1000000L + (now.tv_nsec - start.tv_nsec) / 1000 < us);
  g_sink = x;
}

}  // namespace

// Faults in fresh pages, spinning a little between batches so that samples fall in here.
__attribute__((noinline)) int touch_pages(long pages) {
  long page = sysconf(_SC_PAGESIZE);
  auto* memory =
      static_cast<char*>(mmap(nullptr, static_cast<size_t>(pages * page), PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  if (memory == MAP_FAILED) return 1;
  for (long i = 0; i < pages; ++i) {
    memory[i * page] = 1;
    if (i % 64 == 0) SpinMicroseconds(50);
  }
  return 0;
}

__attribute__((noinline)) void sleep_and_spin(long sleeps) {
  for (long i = 0; i < sleeps; ++i) {
    usleep(100);
    SpinMicroseconds(1000);
  }
}

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  if (touch_pages(std::atol(argv[1])) != 0) return 1;
  sleep_and_spin(std::atol(argv[2]));
  SpinMicroseconds(100000);
  return 0;
}
