// Workload for LeafFramesTest.ASignalHandlersLeafIsWholeOrCountedAsKept: a program built with
// frame pointers that spends its CPU time in main;spin, where a SIGPROF handler interrupts it
// every 4 ms of its CPU time (the kernel's tick may make it longer) and memsets a buffer for
// about as long (libc's memset keeps no frame pointer). A complete stack of a memset sample
// reads main;spin;__restore_rt;on_prof;in_handler;memset: the handler's frame
// sits above the kernel's signal frame (the saved registers and vector state, over 1 KiB on
// x86-64 with AVX), which a small stack copy does not reach through.
//   signal_leaf [CPU_MS]   (default 600)
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#if defined(__clang__)
#define PHASE __attribute__((noinline))
#else
#define PHASE __attribute__((noinline, noclone))
#endif

enum { kBufferBytes = 64 << 10 };

static char* g_buffer;
static volatile uint64_t g_sink;

PHASE void in_handler(void) {
  for (int i = 0; i < 2000; ++i) memset(g_buffer, i, kBufferBytes);
  g_sink = g_sink + 1;  // no tail call: in_handler's frame stays on every memset stack
}

static void on_prof(int signal) {
  (void)signal;
  in_handler();
  g_sink = g_sink + 1;
}

static uint64_t CpuNs(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

PHASE void spin(long cpu_ms) {
  const uint64_t end = CpuNs() + (uint64_t)cpu_ms * 1000000u;
  while (CpuNs() < end)
    for (int i = 0; i < 10000; ++i) g_sink = g_sink + (uint64_t)i;
}

int main(int argc, char** argv) {
  const long cpu_ms = argc > 1 ? atol(argv[1]) : 600;
  g_buffer = malloc(kBufferBytes);
  if (!g_buffer) return 1;
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = on_prof;
  sigaction(SIGPROF, &action, NULL);
  struct itimerval every = {{0, 4000}, {0, 4000}};
  setitimer(ITIMER_PROF, &every, NULL);
  spin(cpu_ms);
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_PROF, &off, NULL);
  free(g_buffer);
  g_sink = g_sink + 1;
  return 0;
}
