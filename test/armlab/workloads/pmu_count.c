// The arm lab's independent counter: runs a command and counts its cycles and instructions with
// perf_event_open directly (no tprof code), user and kernel separately, inherited by its threads.
// Prints one line per event: "NAME COUNT ENABLED_NS RUNNING_NS".
//   pmu_count -- ./prog args
#include <linux/perf_event.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

struct counter {
  const char* name;
  uint64_t config;
  int exclude_user, exclude_kernel;
  int fd;
};

int main(int argc, char** argv) {
  int first = 1;
  if (argc > first && strcmp(argv[first], "--") == 0) ++first;
  if (first >= argc) {
    fprintf(stderr, "usage: pmu_count -- COMMAND [ARGS]\n");
    return 2;
  }
  int go[2];
  if (pipe(go) != 0) return 1;
  pid_t child = fork();
  if (child == 0) {
    char c;
    close(go[1]);
    if (read(go[0], &c, 1) != 1) _exit(127);
    execvp(argv[first], argv + first);
    _exit(127);
  }
  struct counter counters[] = {
      {"cycles:u", PERF_COUNT_HW_CPU_CYCLES, 0, 1, -1},
      {"instructions:u", PERF_COUNT_HW_INSTRUCTIONS, 0, 1, -1},
      {"cycles:k", PERF_COUNT_HW_CPU_CYCLES, 1, 0, -1},
      {"instructions:k", PERF_COUNT_HW_INSTRUCTIONS, 1, 0, -1},
  };
  for (size_t i = 0; i < sizeof counters / sizeof counters[0]; ++i) {
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_HARDWARE;
    attr.config = counters[i].config;
    attr.disabled = 1;
    attr.enable_on_exec = 1;
    attr.inherit = 1;
    attr.exclude_user = counters[i].exclude_user;
    attr.exclude_kernel = counters[i].exclude_kernel;
    attr.exclude_hv = 1;
    attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
    counters[i].fd = (int)syscall(SYS_perf_event_open, &attr, child, -1, -1, 0);
    if (counters[i].fd < 0) {
      perror(counters[i].name);
      kill(child, SIGKILL);
      return 1;
    }
  }
  close(go[0]);
  if (write(go[1], "g", 1) != 1) return 1;
  close(go[1]);
  int status = 0;
  waitpid(child, &status, 0);
  for (size_t i = 0; i < sizeof counters / sizeof counters[0]; ++i) {
    uint64_t v[3] = {0, 0, 0};
    if (read(counters[i].fd, v, sizeof v) != sizeof v) return 1;
    printf("%s %llu %llu %llu\n", counters[i].name, (unsigned long long)v[0],
           (unsigned long long)v[1], (unsigned long long)v[2]);
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
