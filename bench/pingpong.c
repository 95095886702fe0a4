/* A switch-heavy workload for bench/off_cpu_overhead_vs_perf.sh: two processes pass a byte back
 * and forth over two pipes, so each blocks in read() once per round trip (two switches out per
 * round trip). `pingpong SECONDS` runs for that long and prints the round trips it made. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double Now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? atof(argv[1]) : 1.0;
  int ping[2], pong[2];
  if (pipe(ping) != 0 || pipe(pong) != 0) {
    perror("pipe");
    return 1;
  }
  pid_t child = fork();
  if (child < 0) {
    perror("fork");
    return 1;
  }
  char byte = 0;
  if (child == 0) {  // echoes every byte until the parent closes its end
    close(ping[1]);
    close(pong[0]);
    while (read(ping[0], &byte, 1) == 1)
      if (write(pong[1], &byte, 1) != 1) return 1;
    return 0;
  }
  close(ping[0]);
  close(pong[1]);
  const double end = Now() + seconds;
  long round_trips = 0;
  while ((round_trips & 1023) != 0 || Now() < end) {
    if (write(ping[1], &byte, 1) != 1 || read(pong[0], &byte, 1) != 1) {
      perror("pingpong");
      return 1;
    }
    ++round_trips;
  }
  close(ping[1]);
  waitpid(child, NULL, 0);
  printf("round trips %ld in %.3f s\n", round_trips, seconds);
  return 0;
}
