// The workload of bench/long_run.sh.
//   long_run_workload steady SECONDS THREADS  THREADS threads, each computing about 1 ms in
//                                             three functions then sleeping 9 ms, for SECONDS
//   long_run_workload churn THREADS           starts and ends THREADS threads, 50 alive at a
//                                             time, each computing about 2 ms then exiting
// Prints what it did (threads started, rounds) so the report can be held against it.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double Now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static volatile unsigned long sink;

// Three functions of known shares (1:2:3 of the compute), noinline so each is a row.
__attribute__((noinline)) static void SpinFor(double seconds) {
  const double end = Now() + seconds;
  unsigned long x = 1;
  while (Now() < end)
    for (int i = 0; i < 2000; ++i) x = x * 6364136223846793005ul + 1442695040888963407ul;
  sink += x;
}
// The increment after each call keeps the call from becoming a jump (no frame of their own).
__attribute__((noinline)) static void long_run_one(double s) { SpinFor(s), ++sink; }
__attribute__((noinline)) static void long_run_two(double s) { SpinFor(2 * s), ++sink; }
__attribute__((noinline)) static void long_run_three(double s) { SpinFor(3 * s), ++sink; }

static double g_seconds;
static atomic_ulong g_rounds;

static void* Steady(void* arg) {
  (void)arg;
  const double end = Now() + g_seconds;
  const struct timespec pause = {0, 9 * 1000 * 1000};
  while (Now() < end) {
    long_run_one(1e-3 / 6);
    long_run_two(1e-3 / 6);
    long_run_three(1e-3 / 6);
    atomic_fetch_add(&g_rounds, 1);
    nanosleep(&pause, NULL);
  }
  return NULL;
}

static void* Brief(void* arg) {
  (void)arg;
  long_run_one(2e-3 / 6);
  long_run_two(2e-3 / 6);
  long_run_three(2e-3 / 6);
  return NULL;
}

int main(int argc, char** argv) {
  if (argc >= 4 && strcmp(argv[1], "steady") == 0) {
    g_seconds = atof(argv[2]);
    const int n = atoi(argv[3]);
    pthread_t* threads = calloc((size_t)n, sizeof *threads);
    for (int i = 0; i < n; ++i) pthread_create(&threads[i], NULL, Steady, NULL);
    for (int i = 0; i < n; ++i) pthread_join(threads[i], NULL);
    printf("steady: %d threads, %lu rounds\n", n, (unsigned long)atomic_load(&g_rounds));
    free(threads);
    return 0;
  }
  if (argc >= 3 && strcmp(argv[1], "churn") == 0) {
    const int n = atoi(argv[2]);
    enum { kAlive = 50 };
    pthread_t wave[kAlive];
    int started = 0;
    while (started < n) {
      int k = 0;
      for (; k < kAlive && started < n; ++k, ++started) pthread_create(&wave[k], NULL, Brief, NULL);
      for (int i = 0; i < k; ++i) pthread_join(wave[i], NULL);
    }
    printf("churn: %d threads started and ended\n", started);
    return 0;
  }
  fprintf(stderr, "usage: %s steady SECONDS THREADS | churn THREADS\n", argv[0]);
  return 2;
}
