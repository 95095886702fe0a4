// The library bad_bytes loads from a path whose name is not UTF-8.
volatile unsigned long g_lib_sink;

__attribute__((noinline)) void lib_spin(long steps) {
  unsigned long x = g_lib_sink | 1;
  for (long i = 0; i < steps; ++i) {
    x = x * 2862933555777941757UL + 3037000493UL;
    __asm__ volatile("" : "+r"(x));
  }
  g_lib_sink = x;
}
