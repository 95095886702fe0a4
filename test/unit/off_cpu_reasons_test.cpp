#include "core/analysis/off_cpu_reasons.h"

#include <gtest/gtest.h>

#include "core/model/event_unit.h"

namespace tprof {
namespace {

// Kernel stacks of real switch-outs (innermost first), from x86-64 (Linux 6.18) and arm64 (the
// arm lab's 6.1) recordings.
TEST(OffCpuReasons, EachKernelStackNamesWhatTheThreadWaitedFor) {
  EXPECT_EQ(ReasonOfKernelFrames({"schedule", "do_nanosleep", "hrtimer_nanosleep", "common_nsleep",
                                  "__x64_sys_clock_nanosleep", "do_syscall_64",
                                  "entry_SYSCALL_64_after_hwframe"}),
            OffCpuReason::kSleep);
  EXPECT_EQ(ReasonOfKernelFrames(
                {"schedule", "irqentry_exit_to_user_mode", "asm_sysvec_apic_timer_interrupt"}),
            OffCpuReason::kPreempted);
  EXPECT_EQ(
      ReasonOfKernelFrames({"schedule", "schedule", "do_notify_resume", "el0_interrupt",
                            "__el0_irq_handler_common", "el0t_64_irq_handler", "el0t_64_irq"}),
      OffCpuReason::kPreempted);
  EXPECT_EQ(ReasonOfKernelFrames({"schedule", "futex_wait_queue", "__futex_wait", "futex_wait",
                                  "do_futex", "__x64_sys_futex"}),
            OffCpuReason::kLock);
  // A poll with a timeout waits for readiness, not for the timer.
  EXPECT_EQ(ReasonOfKernelFrames({"schedule", "schedule_hrtimeout_range_clock", "do_poll",
                                  "do_sys_poll", "__x64_sys_poll"}),
            OffCpuReason::kIoWait);
  EXPECT_EQ(ReasonOfKernelFrames({"schedule", "pipe_read", "vfs_read", "ksys_read"}),
            OffCpuReason::kIoWait);
  EXPECT_EQ(
      ReasonOfKernelFrames({"schedule", "io_schedule", "folio_wait_bit_common", "filemap_fault"}),
      OffCpuReason::kDiskIo);
  EXPECT_EQ(ReasonOfKernelFrames({"schedule", "do_wait", "kernel_wait4", "__do_sys_wait4"}),
            OffCpuReason::kChild);
  // Preempted inside a read: it was runnable, whatever it was reading.
  EXPECT_EQ(ReasonOfKernelFrames({"schedule", "preempt_schedule_irq", "pipe_read"}),
            OffCpuReason::kPreempted);
  EXPECT_EQ(ReasonOfKernelFrames({"schedule", "worker_thread"}), OffCpuReason::kOther);
  EXPECT_EQ(ReasonOfKernelFrames({}), OffCpuReason::kOther);
}

// Wall time pairs the off-cpu event with the clock recorded beside it, whichever comes first;
// a profile without either has none.
TEST(OffCpuReasons, WallTimeIsTheOffCpuEventAndAClock) {
  auto event = [](const std::string& name, uint64_t config = 0) {
    EventDesc e;
    e.name = name;
    e.config = config;
    return e;
  };
  const EventDesc off = event(std::string(kOffCpuEventName), kOffCpuEventConfig);
  auto found = FindWallTimeEvents({event("cycles"), off, event("task-clock")});
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->on_cpu, 2u);
  EXPECT_EQ(found->off_cpu, 1u);
  EXPECT_FALSE(FindWallTimeEvents({event("cycles"), off}).has_value());
  EXPECT_FALSE(FindWallTimeEvents({event("task-clock"), event("cpu-clock")}).has_value());
  // A user's event that is merely named off-cpu is not tprof's.
  EXPECT_FALSE(FindWallTimeEvents({event("task-clock"), event("off-cpu")}).has_value());
}

}  // namespace
}  // namespace tprof
