// Workload for the leaf-frame tests (leaf_frames_test.cpp): a program built with frame pointers
// whose time is in libc (Debian's libc is built without them) and in the vDSO, each phase in a
// function of its own called from main, so that a complete stack reads main;PHASE;<libc...>.
//   libc_leaves [ON_CPU_MS [NAP_MS [ROUNDS]]]   (defaults 250 20 10)
// Off the CPU, each ROUNDS times for about NAP_MS:
//   nap_sleep   nanosleep;
//   pipe_read   read from a pipe a helper thread writes a byte to every NAP_MS;
//   futex_wait  pthread_cond_wait on a condition a helper thread signals every NAP_MS.
// On the CPU, each for ON_CPU_MS of this thread's CPU time (so that a loaded machine gives as
// many samples, only later):
//   big_memset  memset of a 64 MiB heap buffer, over and over;
//   big_memcpy  memcpy between two 64 MiB heap buffers;
//   time_loop   clock_gettime(CLOCK_MONOTONIC) in a tight loop (the vDSO).
// The helper threads are named "leaf_helper", so that a test can tell their stacks from the main
// thread's. The phases take no arguments (GCC makes no constprop clone of them, whose symbol
// would read nap_sleep.constprop.0) and are never inlined; each call of a phase, and each
// phase's last call (free, pthread_join), is followed by a volatile store, so that none is a
// tail call whose caller's frame would be gone from every stack by design.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(__clang__)
#define PHASE __attribute__((noinline))
#else
#define PHASE __attribute__((noinline, noclone))
#endif

enum { kBufferBytes = 64 << 20 };

static long g_on_cpu_ms = 250, g_nap_ms = 20;
static int g_rounds = 10;
static volatile uint64_t g_sink;
static volatile int g_phases_done;

static int g_pipe[2];
static pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cond = PTHREAD_COND_INITIALIZER;
// Signals not yet taken: a count, so that two signals given while the waiter was away (a loaded
// machine) are both taken; a flag kept one and left the waiter waiting for good once the
// signaller had ended (a CI run beside a parallel build timed out at 120 s there).
static int g_signalled;

static void Nap(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&t, &t) != 0) {
  }
}

// This thread's CPU time in ns (a system call: the on-CPU phases ask it once in a while).
__attribute__((noinline)) static uint64_t ThreadCpuNs(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void* Heap(size_t bytes) {
  void* p = malloc(bytes);
  if (!p) abort();
  return p;
}

static void StartHelper(pthread_t* thread, void* (*body)(void*)) {
  if (pthread_create(thread, 0, body, 0) != 0) abort();
  pthread_setname_np(*thread, "leaf_helper");
}

static void* PipeWriter(void* unused) {
  (void)unused;
  for (int i = 0; i < g_rounds; i++) {
    Nap(g_nap_ms);
    char byte = (char)i;
    if (write(g_pipe[1], &byte, 1) != 1) abort();
  }
  return 0;
}

static void* Signaller(void* unused) {
  (void)unused;
  for (int i = 0; i < g_rounds; i++) {
    Nap(g_nap_ms);
    pthread_mutex_lock(&g_mutex);
    g_signalled++;
    pthread_mutex_unlock(&g_mutex);
    // After the unlock: the waiter wakes to a free mutex, never to wait for it in
    // __lll_lock_wait, a stack only some runs would have.
    pthread_cond_signal(&g_cond);
  }
  return 0;
}

PHASE void nap_sleep(void) {
  for (int i = 0; i < g_rounds; i++) {
    struct timespec t = {g_nap_ms / 1000, (g_nap_ms % 1000) * 1000000L};
    while (nanosleep(&t, &t) != 0) {
    }
    g_sink += (uint64_t)i;
  }
}

PHASE void pipe_read(void) {
  pthread_t writer;
  StartHelper(&writer, PipeWriter);
  for (int i = 0; i < g_rounds; i++) {
    char byte;
    if (read(g_pipe[0], &byte, 1) != 1) abort();
    g_sink += (uint64_t)byte;
  }
  pthread_join(writer, 0);
  g_sink++;
}

PHASE void futex_wait(void) {
  pthread_t signaller;
  StartHelper(&signaller, Signaller);
  for (int i = 0; i < g_rounds; i++) {
    pthread_mutex_lock(&g_mutex);
    while (g_signalled == 0) pthread_cond_wait(&g_cond, &g_mutex);
    g_signalled--;
    pthread_mutex_unlock(&g_mutex);
    g_sink += (uint64_t)i;
  }
  pthread_join(signaller, 0);
  g_sink++;
}

PHASE void big_memset(void) {
  unsigned char* buffer = Heap(kBufferBytes);
  const uint64_t end = ThreadCpuNs() + (uint64_t)g_on_cpu_ms * 1000000ull;
  for (int i = 0; ThreadCpuNs() < end; i++) {
    memset(buffer, i, kBufferBytes);
    g_sink += buffer[(size_t)i * 4099 % kBufferBytes];
  }
  free(buffer);
  g_sink++;
}

PHASE void big_memcpy(void) {
  unsigned char* from = Heap(kBufferBytes);
  unsigned char* to = Heap(kBufferBytes);
  for (size_t i = 0; i < kBufferBytes; i += 4096) from[i] = (unsigned char)i;
  const uint64_t end = ThreadCpuNs() + (uint64_t)g_on_cpu_ms * 1000000ull;
  for (int i = 0; ThreadCpuNs() < end; i++) {
    memcpy(to, from, kBufferBytes);
    g_sink += to[(size_t)i * 4099 % kBufferBytes];
  }
  free(to);
  free(from);
  g_sink++;
}

// The CPU time is asked every 65536 calls (a few ms), so that its system call, a stack of its
// own, keeps a negligible share of the samples (0.3 to 0.4 % when it was asked every 4096).
PHASE void time_loop(void) {
  const uint64_t end = ThreadCpuNs() + (uint64_t)g_on_cpu_ms * 1000000ull;
  do {
    for (int i = 0; i < 65536; i++) {
      struct timespec t;
      clock_gettime(CLOCK_MONOTONIC, &t);
      g_sink += (uint64_t)t.tv_nsec;
    }
  } while (ThreadCpuNs() < end);
}

int main(int argc, char** argv) {
  if (argc > 4) {
    fprintf(stderr, "usage: libc_leaves [ON_CPU_MS [NAP_MS [ROUNDS]]]\n");
    return 2;
  }
  if (argc > 1) g_on_cpu_ms = atol(argv[1]);
  if (argc > 2) g_nap_ms = atol(argv[2]);
  if (argc > 3) g_rounds = atoi(argv[3]);
  if (pipe(g_pipe) != 0) return 1;
  nap_sleep();
  g_phases_done++;
  pipe_read();
  g_phases_done++;
  futex_wait();
  g_phases_done++;
  big_memset();
  g_phases_done++;
  big_memcpy();
  g_phases_done++;
  time_loop();
  g_phases_done++;
  return 0;
}
