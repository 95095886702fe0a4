// Workload for the off-CPU tests: functions that block on a pipe, a mutex and the disk, and say
// how long they were off the CPU. A helper thread makes the waits: it writes to the pipe MS
// after wait_pipe starts reading, and holds the mutex for MS while wait_mutex asks for it; a
// round of wait_fsync writes 4 MiB to FILE and fsyncs it (no designed time: the disk's).
//   off_cpu_blocking MS ROUNDS FILE
// Prints per function, as the truth to hold a profile to:
//   FUNCTION designed_ms D measured_off_cpu_ns N
// where N sums, over the function's calls, wall time less the time the thread was on the CPU by
// its own task-clock counter: the time it spent off the CPU, waiting or runnable (what a
// profile's off-CPU intervals add up to). The task-clock counts the time the thread is switched
// in by the clock that stamps the switch records; the thread's CPU-time clock would not do: it
// leaves out time the hypervisor took the vCPU away and, with IRQ time accounting, interrupts,
// which the switch records count as on the CPU (on a slow CI host it made fsync's waits 28 and
// 39 % longer than any recording of them, in two runs).
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "task_clock.h"

static long g_ms;
static int g_rounds;
static int g_pipe[2];
static pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;
static sem_t g_start_pipe, g_mutex_held, g_start_mutex;
static int g_task_clock = -1;  // the main thread's task-clock counter

static uint64_t Now(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void Nap(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&t, &t) != 0) {
  }
}

// The helper's side of each round: sleep, then write; hold the mutex, sleep, then release.
static void* helper_thread(void* unused) {
  (void)unused;
  for (int i = 0; i < g_rounds; i++) {
    sem_wait(&g_start_pipe);
    Nap(g_ms);
    char byte = 1;
    if (write(g_pipe[1], &byte, 1) != 1) abort();
  }
  for (int i = 0; i < g_rounds; i++) {
    sem_wait(&g_start_mutex);
    pthread_mutex_lock(&g_mutex);
    sem_post(&g_mutex_held);
    Nap(g_ms);
    pthread_mutex_unlock(&g_mutex);
  }
  return 0;
}

__attribute__((noinline)) void wait_pipe(void) {
  char byte;
  if (read(g_pipe[0], &byte, 1) != 1) abort();
}

__attribute__((noinline)) void wait_mutex(void) {
  pthread_mutex_lock(&g_mutex);
  pthread_mutex_unlock(&g_mutex);
}

__attribute__((noinline)) void wait_fsync(int fd, const char* block, size_t size) {
  if (pwrite(fd, block, size, 0) != (ssize_t)size) abort();
  if (fsync(fd) != 0) abort();
}

static uint64_t TaskClock(void) {
  int ok = 1;
  const uint64_t ns = ReadTaskClock(g_task_clock, &ok);
  if (!ok) abort();
  return ns;
}

// Off-CPU nanoseconds of one call so far: wall time less this thread's time on the CPU.
struct Span {
  uint64_t wall, on_cpu;
};
static struct Span Begin(void) {
  struct Span s = {Now(CLOCK_MONOTONIC), TaskClock()};
  return s;
}
static uint64_t OffCpuSince(struct Span s) {
  uint64_t wall = Now(CLOCK_MONOTONIC) - s.wall, on_cpu = TaskClock() - s.on_cpu;
  return wall > on_cpu ? wall - on_cpu : 0;
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: off_cpu_blocking MS ROUNDS FILE\n");
    return 2;
  }
  g_ms = atol(argv[1]);
  g_rounds = atoi(argv[2]);
  g_task_clock = OpenTaskClock();
  if (g_task_clock < 0) {
    perror("perf_event_open task-clock");
    return 1;
  }
  if (pipe(g_pipe) != 0) return 1;
  sem_init(&g_start_pipe, 0, 0);
  sem_init(&g_mutex_held, 0, 0);
  sem_init(&g_start_mutex, 0, 0);
  pthread_t helper;
  if (pthread_create(&helper, 0, helper_thread, 0) != 0) return 1;

  uint64_t pipe_ns = 0, mutex_ns = 0, fsync_ns = 0;
  for (int i = 0; i < g_rounds; i++) {
    sem_post(&g_start_pipe);
    struct Span s = Begin();
    wait_pipe();
    pipe_ns += OffCpuSince(s);
  }
  for (int i = 0; i < g_rounds; i++) {
    sem_post(&g_start_mutex);
    sem_wait(&g_mutex_held);  // outside wait_mutex: the helper holds the mutex from here
    struct Span s = Begin();
    wait_mutex();
    mutex_ns += OffCpuSince(s);
  }
  int fd = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) {
    perror(argv[3]);
    return 1;
  }
  static char block[4 << 20];
  for (int i = 0; i < g_rounds; i++) {
    memset(block, i + 1, sizeof block);
    struct Span s = Begin();
    wait_fsync(fd, block, sizeof block);
    fsync_ns += OffCpuSince(s);
  }
  close(fd);
  unlink(argv[3]);
  pthread_join(helper, 0);
  printf("wait_pipe designed_ms %ld measured_off_cpu_ns %llu\n", g_ms * g_rounds,
         (unsigned long long)pipe_ns);
  printf("wait_mutex designed_ms %ld measured_off_cpu_ns %llu\n", g_ms * g_rounds,
         (unsigned long long)mutex_ns);
  printf("wait_fsync designed_ms 0 measured_off_cpu_ns %llu\n", (unsigned long long)fsync_ns);
  return 0;
}
