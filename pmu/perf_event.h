// perf_event_open: attribute construction, opening, and errors explained in plain words.
#pragma once

#include <linux/perf_event.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/model/profile.h"
#include "pmu/event_spec.h"

namespace tprof {

enum class CallGraphMode { kNone, kFramePointer, kDwarf, kLbr };

// What -g copies of the user stack: enough for libc's and the vDSO's leaf frames (system call
// wrappers, memset, clock_gettime) and the frame of the function that called them.
inline constexpr uint32_t kDefaultFramePointerStackSize = 1024;

struct SamplingOptions {
  bool use_frequency = true;
  uint64_t frequency = 4000;  // Hz per thread, perf's default
  uint64_t period = 0;
  CallGraphMode call_graph = CallGraphMode::kNone;
  uint32_t dwarf_stack_size = 8192;  // bytes of user stack copied per sample
  // Bytes of user stack copied beside a frame-pointer chain (with the user registers), walked
  // with CFI to put in the frames a leaf without a frame pointer makes the chain skip; 0: none.
  uint32_t fp_stack_size = kDefaultFramePointerStackSize;
  uint64_t branch_sample_type = 0;  // -b / -j; 0: no branch stack
  bool user_only = false;
  bool kernel_only = false;
  bool inherit = true;         // follow threads and child processes created later
  bool enable_on_exec = true;  // launched workloads: count from exec
  bool read_lost = true;       // PERF_FORMAT_LOST in group reads (Linux 6.0+)
  // Burst sampling: a short counting window (hf_sample_period events) at the end of each long
  // period, for per-function metrics. 0: off.
  uint64_t burst_long = 0;
  uint32_t burst_short = 0;
  uint32_t burst_jitter_bits = 0;  // randomizes the long period by up to 2^bits events
};

// perf_event_attr with the proposed high-frequency sampling fields (Arm's burst sampling patch;
// not in mainline kernels): size 144, after config3 at offset 128 comes hf_sample_period (u32,
// offset 136) and hf_sample_rand (4 bits at offset 140). A kernel without the fields refuses the
// larger size with E2BIG.
inline constexpr uint32_t kAttrSizeWithBurst = 144;
struct BurstAttr {
  unsigned char bytes[kAttrSizeWithBurst] = {};
};
BurstAttr EncodeBurstAttr(const perf_event_attr& base, uint32_t hf_sample_period,
                          uint32_t hf_sample_rand_bits);

// The user registers copied for DWARF unwinding: all general-purpose registers of this
// architecture, as perf does.
uint64_t UserRegisterMask();
// The user pc alone, sampled without a call graph: it names the user function of a kernel sample.
uint64_t UserPcRegisterMask();

// One event ready to open: its attribute and how the profile describes it.
struct PlannedEvent {
  perf_event_attr attr;
  uint32_t hf_sample_period = 0;  // burst window on a sampling leader; 0: none
  uint32_t hf_sample_rand = 0;
  EventDesc desc;
  size_t group = 0;    // index of its group
  bool leader = true;  // opened with group_fd -1; members are opened in their leader's group
};

// Attributes for every event of every group. Samples carry ip, tid, time, cpu, period and the
// event id, plus what the options ask for (callchain, user stack, branch stack); a leader-sampled
// group's leader reads all members in each sample. Only the first event produces side-band
// records (mmap2 with build-ids, comm, task), which the others would duplicate.
std::vector<PlannedEvent> PlanEvents(const std::vector<EventGroup>& groups,
                                     const SamplingOptions& options);

// Parses a -j filter list ("any,u", "call,ind_call") into branch_sample_type bits.
Result<uint64_t> ParseBranchFilter(const std::string& text);

// Parses --call-graph MODE[,SIZE] (fp, dwarf or lbr; SIZE as perf takes it, a multiple of 8 up
// to 65528 bytes of stack, 0 only for fp) into `sampling`.
Status ParseCallGraph(const std::string& text, SamplingOptions& sampling);

// Parses --burst LONG,SHORT[,JITTER_BITS] into `sampling`.
Status ParseBurst(const std::string& text, SamplingOptions& sampling);

// Owns a perf event file descriptor.
class PerfEventFd {
 public:
  PerfEventFd() = default;
  explicit PerfEventFd(int fd) : fd_(fd) {}
  PerfEventFd(PerfEventFd&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  PerfEventFd& operator=(PerfEventFd&& other) noexcept;
  PerfEventFd(const PerfEventFd&) = delete;
  PerfEventFd& operator=(const PerfEventFd&) = delete;
  ~PerfEventFd();

  int get() const { return fd_; }
  Result<uint64_t> ReadId() const;

 private:
  int fd_ = -1;
};

Result<PerfEventFd> OpenPerfEvent(perf_event_attr& attr, int pid, int cpu, int group_fd,
                                  const std::string& event_name);
// The errno of the last failed OpenPerfEvent is in the message; this keeps it for callers that
// decide on fallbacks.
Result<PerfEventFd> OpenPerfEvent(perf_event_attr& attr, int pid, int cpu, int group_fd,
                                  const std::string& event_name, int* error_number);

// Opens a planned event, with the burst fields when it has them.
Result<PerfEventFd> OpenPerfEvent(const PlannedEvent& event, int pid, int cpu, int group_fd,
                                  int* error_number);

// The kernel's reason for refusing an event, in words a user can act on.
// "kernel.perf_event_paranoid is N" (N "?" where it cannot be read): what decides what a user who
// is not root may sample.
std::string ParanoidSetting();

// Where the kernel refuses an event for privilege (perf_event_paranoid 2), whether it may be
// taken in user space only instead: not one the user asked for in a mode (":k" stays refused,
// and is said so), and not context-switches, which is about the kernel.
bool MayFallBackToUserSpace(const std::string& name);

// The one line saying the kernel is left out, for record ("sample", "sampling") and counting
// ("count", "counting"): "this user may not VERB the kernel (SETTING): DOING user space only
// (NAMES); LEFT_OUT". A name given twice (a member also sampled on its own) is named once.
std::string UserSpaceOnlyNote(const std::string& verb, const std::string& doing,
                              const std::vector<std::string>& names, const std::string& left_out);

std::string ExplainOpenError(int error_number, const std::string& event_name,
                             const perf_event_attr* attr = nullptr);

}  // namespace tprof
