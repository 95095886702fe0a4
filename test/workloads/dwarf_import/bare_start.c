/* Workload for the outermost-frame tests of --call-graph dwarf unwinding: a program with its own
 * entry code, as musl's and many freestanding programs' is: _start, written in assembly without
 * CFI, calls Work, which spins for some 0.3 s and returns; _start then exits. Every stack is
 * complete at _start although no CFI says so. x86-64 only; built by the test with -static
 * -nostdlib. */
#include <stdint.h>

volatile uint64_t g_sink;

__attribute__((noinline)) static void Spin(uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) g_sink += i;
}

/* Not a tail call: Work keeps a frame of its own under Spin. */
__attribute__((noinline, used)) void Work(void) {
  Spin(300000000);
  g_sink = 0;
}

__asm__(
    ".text\n"
    ".globl _start\n"
    ".type _start, @function\n"
    "_start:\n"
    "  xor %ebp, %ebp\n"
    "  and $-16, %rsp\n"
    "  call Work\n"
    "  mov $60, %eax\n" /* exit(0) */
    "  xor %edi, %edi\n"
    "  syscall\n"
    "  hlt\n"
    ".size _start, .-_start\n");
