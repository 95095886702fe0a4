/* Workload for the --call-graph dwarf import tests, built by the test without frame pointers
 * (static and PIE): main -> heavy -> spin and main -> light -> spin, heavy doing three times the
 * work of light, so spin has all the self time, heavy about 3/4 and light 1/4 of it as callers,
 * and main, __libc_start_main and _start every sample. `split SECONDS` runs for that much CPU
 * time. -DVARIANT=N makes a different build of the same program.
 *
 * The CPU-time shares are only near 3/4 and 1/4: how many clock samples land in each depends on
 * the timer and the machine's load. So that the callers' shares can be checked exactly, spin also
 * writes to fresh pages: 3 per call under heavy and 1 under light, each the first touch of an
 * anonymous page (one minor fault each), so with page faults sampled at period 1, exactly 3/4 of
 * spin's fault samples have heavy as the caller. main prints how many pages each touched, and
 * how many minor faults the kernel counted during each one's calls (getrusage around every
 * call): the design's count plus whatever the kernel adds (a stack or code page touched for the
 * first time, fault-around), which the tests bound the fault samples by. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#ifndef VARIANT
#define VARIANT 1
#endif

volatile uint64_t g_sink;

static double CpuSeconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Fresh pages, handed out once each. Huge pages are off so that every page faults on its own. */
struct PagePool {
  volatile char* next;
  volatile char* end;
  long page;
};
static struct PagePool g_pool;

static void OpenPool(size_t bytes) {
  g_pool.page = sysconf(_SC_PAGESIZE);
  void* p =
      mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    perror("mmap");
    exit(1);
  }
  madvise(p, bytes, MADV_NOHUGEPAGE);
  g_pool.next = (volatile char*)p;
  g_pool.end = (volatile char*)p + bytes;
}

static long MinorFaults(void) {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

/* Each function keeps locals on the stack, so every frame is a real one with CFI. */
__attribute__((noinline)) uint64_t spin(uint64_t seed, int rounds, int pages) {
  volatile uint64_t local[4] = {seed, seed + 1, seed + 2, seed + VARIANT};
  for (int p = 0; p < pages; ++p) {
    *g_pool.next = (char)seed;
    g_pool.next += g_pool.page;
  }
  uint64_t h = seed;
  for (int i = 0; i < rounds; ++i) h = (h ^ local[i & 3]) * 1099511628211ULL;
  return h;
}

__attribute__((noinline)) uint64_t heavy(uint64_t seed, int pages) {
  volatile uint64_t pad[8] = {0};
  pad[seed & 7] = seed;
  return spin(seed + pad[1], 300000, pages) + 1;
}

__attribute__((noinline)) uint64_t light(uint64_t seed, int pages) {
  volatile uint64_t pad[16] = {0};
  pad[seed & 15] = seed;
  return spin(seed + pad[2], 100000, pages) + 2;
}

/* Prints the CPU seconds each of heavy and light took (3/4 and 1/4 by design; a loaded machine
 * can make it otherwise) and the pages each touched (exactly 3 to 1). */
int main(int argc, char** argv) {
  OpenPool((size_t)256 << 20);
  double now = CpuSeconds();
  const double end = now + (argc > 1 ? atof(argv[1]) : 1.0);
  double heavy_seconds = 0, light_seconds = 0;
  long heavy_pages = 0, light_pages = 0, heavy_faults = 0, light_faults = 0;
  uint64_t acc = 0;
  while (now < end) {
    /* A whole round's pages or none, so that the pool running out keeps the 3:1. */
    const int room = g_pool.end - g_pool.next >= 4 * g_pool.page;
    const long faults0 = MinorFaults();
    acc += heavy(acc, room ? 3 : 0);
    const long faults1 = MinorFaults();
    const double mid = CpuSeconds();
    heavy_seconds += mid - now;
    const long faults2 = MinorFaults();
    acc += light(acc, room ? 1 : 0);
    const long faults3 = MinorFaults();
    heavy_faults += faults1 - faults0;
    light_faults += faults3 - faults2;
    now = CpuSeconds();
    light_seconds += now - mid;
    heavy_pages += room ? 3 : 0;
    light_pages += room ? 1 : 0;
  }
  g_sink = acc;
  printf("%llu heavy %.6f light %.6f pages heavy %ld light %ld faults heavy %ld light %ld\n",
         (unsigned long long)acc, heavy_seconds, light_seconds, heavy_pages, light_pages,
         heavy_faults, light_faults);
  return 0;
}
