/* Workload for the outermost-frame tests of --call-graph dwarf unwinding, built by the test
 * without frame pointers, static: new threads started both ways glibc starts them, so that a
 * recording of the clone system calls' returns holds stacks that end in each clone wrapper.
 * `threads N` starts N threads with pthread_create (glibc's __clone3, falling back to __clone
 * where the kernel lacks clone3) and N tasks with clone() (glibc's __clone); each spins briefly
 * and returns. It prints how many of each it started. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

volatile uint64_t g_sink;

static void Spin(void) {
  for (int i = 0; i < 2000000; ++i) g_sink += (uint64_t)i * 2654435761u;
}

static void* ThreadMain(void* arg) {
  Spin();
  return arg;
}

/* Runs as a task of its own sharing the memory: touches no thread-local state. */
static int CloneMain(void* arg) {
  (void)arg;
  Spin();
  return 0;
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 4;
  int threads = 0, clones = 0;
  for (int i = 0; i < n; ++i) {
    pthread_t thread;
    if (pthread_create(&thread, NULL, ThreadMain, NULL) != 0) continue;
    pthread_join(thread, NULL);
    ++threads;
  }
  enum { kStackSize = 256 * 1024 };
  char* stack = malloc(kStackSize);
  for (int i = 0; i < n && stack; ++i) {
    int pid = clone(CloneMain, stack + kStackSize, CLONE_VM | SIGCHLD, NULL);
    if (pid <= 0 || waitpid(pid, NULL, 0) != pid) continue;
    ++clones;
  }
  free(stack);
  printf("threads %d clones %d\n", threads, clones);
  return 0;
}
