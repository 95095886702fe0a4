// An arm64 call chain with hand-written CFI, for unwinding an arm64 stack copy on any host:
// _start -> main -> mid -> leaf, each caller's return address saved in its callee's frame
// (leaf keeps it in x30). The test lays out the registers and stack of a sample taken at
// leaf_pc by these rules: mid's frame is 48 bytes with x30 at +40, main's 32 with x30 at +24.
// mid also calls bare_leaf, which has no CFI (as the arm64 vDSO's clock and PLT stubs): its
// return address is in x30 alone. bare_caller has no CFI either and has made a call, so that x30
// points back into itself, which is no caller.
  .text
  .globl _start, main, mid, leaf, leaf_pc, mid_ret, main_ret, start_ret
  .globl bare_leaf_pc, mid_ret2, bare_caller_ret, bare_caller_pc

  .type _start, %function
_start:
  .cfi_startproc
  .cfi_undefined x30
  bl main
start_ret:
  b start_ret
  .cfi_endproc
  .size _start, .-_start

  .type main, %function
main:
  .cfi_startproc
  sub sp, sp, #32
  .cfi_def_cfa_offset 32
  str x30, [sp, #24]
  .cfi_offset 30, -8
  bl mid
main_ret:
  ldr x30, [sp, #24]
  add sp, sp, #32
  .cfi_def_cfa_offset 0
  ret
  .cfi_endproc
  .size main, .-main

  .type mid, %function
mid:
  .cfi_startproc
  sub sp, sp, #48
  .cfi_def_cfa_offset 48
  str x30, [sp, #40]
  .cfi_offset 30, -8
  bl leaf
mid_ret:
  bl bare_leaf
mid_ret2:
  ldr x30, [sp, #40]
  add sp, sp, #48
  .cfi_def_cfa_offset 0
  ret
  .cfi_endproc
  .size mid, .-mid

  .type leaf, %function
leaf:
  .cfi_startproc
  nop
leaf_pc:
  nop
  ret
  .cfi_endproc
  .size leaf, .-leaf

  .type bare_leaf, %function
bare_leaf:
  nop
bare_leaf_pc:
  nop
  ret
  .size bare_leaf, .-bare_leaf

  .type bare_caller, %function
bare_caller:
  bl bare_leaf
bare_caller_ret:
  nop
bare_caller_pc:
  ret
  .size bare_caller, .-bare_caller
