// Names that are not UTF-8, as Linux allows them: a thread name set by prctl, a symbol whose
// name holds bytes 0xFF and 0xFE (an asm label), and, where the test gives one, a library at a
// path of its choosing (one with such bytes) whose function the program calls. The test runs the
// program from a directory whose name holds such a byte, so the binary's path does too. Every
// output of a profile of it must be valid in its format and show each name the same way
// (core/base/visible_text.h).
//   bad_bytes [LIBRARY]
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <sys/prctl.h>

volatile unsigned long g_sink;

__attribute__((noinline)) void spin_bad(long steps) __asm__("spin_\xff\xfe_bytes");
__attribute__((noinline)) void spin_bad(long steps) {
  unsigned long x = g_sink | 1;
  for (long i = 0; i < steps; ++i) {
    x = x * 6364136223846793005UL + 1442695040888963407UL;
    __asm__ volatile("" : "+r"(x));
  }
  g_sink = x;
}

int main(int argc, char** argv) {
  if (prctl(PR_SET_NAME, "w\xff\xfe\x80z") != 0) {
    perror("bad_bytes: prctl");
    return 1;
  }
  void (*lib_spin)(long) = NULL;
  if (argc > 1) {
    void* library = dlopen(argv[1], RTLD_NOW);
    if (library) lib_spin = (void (*)(long))dlsym(library, "lib_spin");
    if (!lib_spin) {
      fprintf(stderr, "bad_bytes: %s\n", dlerror());
      return 1;
    }
  }
  // Some 0.3 s: half in spin_bad, half in the library's function when there is one.
  for (int round = 0; round < 300; ++round) {
    spin_bad(400000);
    if (lib_spin) lib_spin(400000);
  }
  return 0;
}
