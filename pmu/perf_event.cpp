#include "pmu/perf_event.h"

#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>

#include "core/model/event_selection.h"
#include "core/model/kernel_entry_credit.h"

namespace tprof {

namespace {
// PERF_FORMAT_LOST is newer than some distribution headers.
constexpr uint64_t kFormatLost = 1u << 4;
}  // namespace

uint64_t UserRegisterMask() {
#if defined(__x86_64__)
  // PERF_REG_X86_AX .. PERF_REG_X86_R15, skipping DS/ES/FS/GS (not valid on x86-64).
  return ((1ull << 24) - 1) & ~((1ull << 12) | (1ull << 13) | (1ull << 14) | (1ull << 15));
#elif defined(__aarch64__)
  return (1ull << 33) - 1;  // x0..x30, sp, pc
#else
  return 0;
#endif
}

uint64_t UserPcRegisterMask() {
#if defined(__x86_64__)
  return UserPcRegisterBit("x86_64");
#elif defined(__aarch64__)
  return UserPcRegisterBit("aarch64");
#else
  return 0;
#endif
}

std::vector<PlannedEvent> PlanEvents(const std::vector<EventGroup>& groups,
                                     const SamplingOptions& options) {
  std::vector<PlannedEvent> planned;
  for (size_t g = 0; g < groups.size(); ++g) {
    const EventGroup& group = groups[g];
    const size_t leader_index = planned.size();
    for (size_t m = 0; m < group.events.size(); ++m) {
      const EventSpec& spec = group.events[m];
      perf_event_attr attr{};
      attr.size = sizeof(attr);
      attr.type = spec.type;
      attr.config = spec.config;
      attr.config1 = spec.config1;
      attr.config2 = spec.config2;
      const bool leader = m == 0;
      const bool samples = leader || !group.leader_sampling;
      if (samples) {
        if (spec.period) {
          attr.sample_period = spec.period;
        } else if (options.use_frequency || group.second_method) {
          attr.freq = 1;
          attr.sample_freq = options.frequency;
        } else {
          attr.sample_period = options.period;
        }
      }
      attr.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                         PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
      switch (options.call_graph) {
        case CallGraphMode::kNone:
          // The user pc at kernel entry, so that a sample in the kernel (a page fault, a system
          // call) can be credited to the user function that entered it (KernelEntryCredit).
          if (!options.user_only && !spec.exclude_kernel && UserPcRegisterMask()) {
            attr.sample_type |= PERF_SAMPLE_REGS_USER;
            attr.sample_regs_user = UserPcRegisterMask();
          }
          break;
        case CallGraphMode::kFramePointer:
          attr.sample_type |= PERF_SAMPLE_CALLCHAIN;
          // The chain's user part as the kernel walks it, and beside it the registers and the
          // stack's top, from which the frames it skips are found (UnwindUserStack).
          if (options.fp_stack_size && !options.kernel_only && !spec.exclude_user &&
              UserRegisterMask()) {
            attr.sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
            attr.sample_regs_user = UserRegisterMask();
            attr.sample_stack_user = options.fp_stack_size;
          }
          break;
        case CallGraphMode::kDwarf:
          // Kernel frames come from the kernel's own unwinder; user frames from the stack copy.
          attr.sample_type |=
              PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
          attr.exclude_callchain_user = 1;
          attr.sample_regs_user = UserRegisterMask();
          attr.sample_stack_user = options.dwarf_stack_size;
          break;
        case CallGraphMode::kLbr:
          attr.sample_type |= PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_BRANCH_STACK;
          attr.branch_sample_type = PERF_SAMPLE_BRANCH_USER | PERF_SAMPLE_BRANCH_CALL_STACK;
          break;
      }
      if (options.branch_sample_type) {
        attr.sample_type |= PERF_SAMPLE_BRANCH_STACK;
        attr.branch_sample_type |= options.branch_sample_type;
      }
      if (group.is_group()) attr.read_format = PERF_FORMAT_ID;
      if (group.leader_sampling && leader) {
        attr.sample_type |= PERF_SAMPLE_READ;
        attr.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED |
                           PERF_FORMAT_TOTAL_TIME_RUNNING | (options.read_lost ? kFormatLost : 0);
      }
      attr.exclude_user = spec.exclude_user || options.kernel_only;
      attr.exclude_kernel = spec.exclude_kernel || options.user_only;
      attr.exclude_hv = spec.exclude_hv || options.user_only || options.kernel_only;
      attr.precise_ip = spec.precise_ip;
      attr.disabled = leader ? 1 : 0;  // members follow their leader
      attr.enable_on_exec = leader && options.enable_on_exec;
      attr.inherit = options.inherit;
      if (planned.empty()) {
        attr.mmap = 1;
        attr.mmap2 = 1;
        attr.build_id = 1;
        attr.comm = 1;
        attr.comm_exec = 1;
        attr.task = 1;
      }
      attr.sample_id_all = 1;
      // Timestamps on CLOCK_MONOTONIC, so they line up with the metadata's start time.
      attr.use_clockid = 1;
      attr.clockid = CLOCK_MONOTONIC;
      attr.watermark = 1;

      PlannedEvent p;
      if (options.burst_long && samples && !group.second_method) {
        // The long period between windows; the window itself is the short period.
        attr.freq = 0;
        attr.sample_period = options.burst_long;
        p.hf_sample_period = options.burst_short;
        p.hf_sample_rand = options.burst_jitter_bits;
      }
      p.attr = attr;
      p.group = g;
      p.leader = leader;
      EventDesc& d = p.desc;
      d.name = spec.name;
      d.type = attr.type;
      d.config = attr.config;
      d.config1 = attr.config1;
      d.config2 = attr.config2;
      d.use_frequency = attr.freq;
      d.period_or_frequency = attr.sample_period;  // union with sample_freq
      d.sample_type = attr.sample_type;
      d.read_format = attr.read_format;
      d.branch_sample_type = attr.branch_sample_type;
      d.sample_regs_user = attr.sample_regs_user;
      d.sample_stack_user = attr.sample_stack_user;
      d.exclude_callchain_user = attr.exclude_callchain_user;
      d.hf_sample_period = p.hf_sample_period;
      d.exclude_user = attr.exclude_user;
      d.exclude_kernel = attr.exclude_kernel;
      d.precise_ip = attr.precise_ip;
      if (group.is_group()) {
        d.group_leader = static_cast<int32_t>(leader_index);
        if (leader)
          for (size_t k = 0; k < group.events.size(); ++k)
            d.group_members.push_back(static_cast<uint32_t>(leader_index + k));
      }
      planned.push_back(std::move(p));
    }
  }
  return planned;
}

Status ParseCallGraph(const std::string& text, SamplingOptions& s) {
  const size_t comma = text.find(',');
  const std::string mode = text.substr(0, comma);
  auto stack_size = [&](uint32_t* size, bool zero_allowed) -> Status {
    if (comma == std::string::npos) return Status::Ok();
    char* end = nullptr;
    const char* digits = text.c_str() + comma + 1;
    const unsigned long value = std::strtoul(digits, &end, 0);
    if (*digits == '\0' || *end != '\0' || (value < 8 && !(zero_allowed && value == 0)) ||
        value > 65528 || value % 8 != 0)
      return Error("--call-graph " + mode + ",SIZE: SIZE must be a multiple of 8 up to 65528" +
                   (zero_allowed ? " (0: no stack copy)" : ""));
    *size = static_cast<uint32_t>(value);
    return Status::Ok();
  };
  if (mode == "fp") {
    s.call_graph = CallGraphMode::kFramePointer;
    return stack_size(&s.fp_stack_size, true);
  }
  if (mode == "lbr") {
    s.call_graph = CallGraphMode::kLbr;
    return Status::Ok();
  }
  if (mode == "dwarf") {
    s.call_graph = CallGraphMode::kDwarf;
    return stack_size(&s.dwarf_stack_size, false);
  }
  return Error("unknown --call-graph mode '" + mode + "' (known: fp, dwarf, lbr)");
}

Status ParseBurst(const std::string& text, SamplingOptions& s) {
  unsigned long long long_period = 0, short_period = 0, jitter = 0;
  const int n = std::sscanf(text.c_str(), "%llu,%llu,%llu", &long_period, &short_period, &jitter);
  if (n < 2 || short_period == 0 || long_period <= short_period || short_period > UINT32_MAX ||
      jitter > 15)
    return Error("--burst LONG,SHORT[,JITTER_BITS]: LONG > SHORT > 0, JITTER_BITS at most 15");
  s.burst_long = long_period;
  s.burst_short = static_cast<uint32_t>(short_period);
  s.burst_jitter_bits = static_cast<uint32_t>(jitter);
  return Status::Ok();
}

Result<uint64_t> ParseBranchFilter(const std::string& text) {
  static constexpr struct {
    const char* name;
    uint64_t bits;
  } kFilters[] = {
      {"any", PERF_SAMPLE_BRANCH_ANY},
      {"any_call", PERF_SAMPLE_BRANCH_ANY_CALL},
      {"any_ret", PERF_SAMPLE_BRANCH_ANY_RETURN},
      {"ind_call", PERF_SAMPLE_BRANCH_IND_CALL},
      {"ind_jmp", PERF_SAMPLE_BRANCH_IND_JUMP},
      {"call", PERF_SAMPLE_BRANCH_CALL},
      {"cond", PERF_SAMPLE_BRANCH_COND},
      {"call_stack", PERF_SAMPLE_BRANCH_CALL_STACK},
      {"abort_tx", PERF_SAMPLE_BRANCH_ABORT_TX},
      {"in_tx", PERF_SAMPLE_BRANCH_IN_TX},
      {"no_tx", PERF_SAMPLE_BRANCH_NO_TX},
      {"save_type", PERF_SAMPLE_BRANCH_TYPE_SAVE},
      {"no_cycles", PERF_SAMPLE_BRANCH_NO_CYCLES},
      {"no_flags", PERF_SAMPLE_BRANCH_NO_FLAGS},
      {"u", PERF_SAMPLE_BRANCH_USER},
      {"k", PERF_SAMPLE_BRANCH_KERNEL},
      {"hv", PERF_SAMPLE_BRANCH_HV},
  };
  uint64_t bits = 0;
  std::stringstream in(text);
  std::string word;
  while (std::getline(in, word, ',')) {
    bool found = false;
    for (const auto& f : kFilters)
      if (word == f.name) {
        bits |= f.bits;
        found = true;
      }
    if (!found) {
      std::vector<std::string> names;
      for (const auto& f : kFilters) names.push_back(f.name);
      std::string hint = ClosestMatch(word, names);
      return Error("unknown branch filter '" + word + "'" +
                   (hint.empty() ? "" : "; did you mean '" + hint + "'?") +
                   " (known: any, any_call, any_ret, ind_call, ind_jmp, call, cond, call_stack, "
                   "save_type, u, k, hv, ...)");
    }
  }
  // Privilege-only filters sample every branch type at that level, as perf does.
  const uint64_t privilege =
      PERF_SAMPLE_BRANCH_USER | PERF_SAMPLE_BRANCH_KERNEL | PERF_SAMPLE_BRANCH_HV;
  if ((bits & ~privilege) == 0) bits |= PERF_SAMPLE_BRANCH_ANY;
  return bits;
}

PerfEventFd& PerfEventFd::operator=(PerfEventFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

PerfEventFd::~PerfEventFd() {
  if (fd_ >= 0) ::close(fd_);
}

Result<uint64_t> PerfEventFd::ReadId() const {
  uint64_t id = 0;
  if (::ioctl(fd_, PERF_EVENT_IOC_ID, &id) != 0)
    return Error(std::string("PERF_EVENT_IOC_ID: ") + std::strerror(errno));
  return id;
}

Result<PerfEventFd> OpenPerfEvent(perf_event_attr& attr, int pid, int cpu, int group_fd,
                                  const std::string& event_name, int* error_number) {
  long fd = ::syscall(SYS_perf_event_open, &attr, pid, cpu, group_fd, PERF_FLAG_FD_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    if (error_number) *error_number = err;
    return Error(ExplainOpenError(err, event_name, &attr));
  }
  if (error_number) *error_number = 0;
  return PerfEventFd(static_cast<int>(fd));
}

BurstAttr EncodeBurstAttr(const perf_event_attr& base, uint32_t hf_sample_period,
                          uint32_t hf_sample_rand_bits) {
  BurstAttr out;
  static_assert(sizeof(perf_event_attr) <= 136, "the burst fields follow the attribute");
  std::memcpy(out.bytes, &base, sizeof base);
  uint32_t size = kAttrSizeWithBurst;
  std::memcpy(out.bytes + offsetof(perf_event_attr, size), &size, sizeof size);
  std::memcpy(out.bytes + 136, &hf_sample_period, 4);
  uint32_t random = hf_sample_rand_bits & 0xf;
  std::memcpy(out.bytes + 140, &random, 4);
  return out;
}

Result<PerfEventFd> OpenPerfEvent(const PlannedEvent& event, int pid, int cpu, int group_fd,
                                  int* error_number) {
  if (!event.hf_sample_period) {
    perf_event_attr attr = event.attr;
    return OpenPerfEvent(attr, pid, cpu, group_fd, event.desc.name, error_number);
  }
  BurstAttr burst = EncodeBurstAttr(event.attr, event.hf_sample_period, event.hf_sample_rand);
  long fd = ::syscall(SYS_perf_event_open, burst.bytes, pid, cpu, group_fd, PERF_FLAG_FD_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    if (error_number) *error_number = err;
    if (err == E2BIG)
      return Error("cannot open event '" + event.desc.name +
                   "': this kernel has no burst sampling (hf_sample_period; E2BIG)");
    return Error(ExplainOpenError(err, event.desc.name, &event.attr));
  }
  if (error_number) *error_number = 0;
  return PerfEventFd(static_cast<int>(fd));
}

Result<PerfEventFd> OpenPerfEvent(perf_event_attr& attr, int pid, int cpu, int group_fd,
                                  const std::string& event_name) {
  return OpenPerfEvent(attr, pid, cpu, group_fd, event_name, nullptr);
}

std::string ParanoidSetting() {
  std::string paranoid = "?";
  std::ifstream in("/proc/sys/kernel/perf_event_paranoid");
  in >> paranoid;
  return "kernel.perf_event_paranoid is " + paranoid;
}

bool MayFallBackToUserSpace(const std::string& name) {
  return name.find(':') == std::string::npos && name != "context-switches";
}

std::string UserSpaceOnlyNote(const std::string& verb, const std::string& doing,
                              const std::vector<std::string>& names, const std::string& left_out) {
  std::vector<std::string> once;
  for (const std::string& name : names)
    if (std::find(once.begin(), once.end(), name) == once.end()) once.push_back(name);
  return "this user may not " + verb + " the kernel (" + ParanoidSetting() + "): " + doing +
         " user space only (" + EventNameList(once) + "); " + left_out;
}

std::string ExplainOpenError(int error_number, const std::string& event_name,
                             const perf_event_attr* attr) {
  std::string prefix = "cannot open event '" + event_name + "': ";
  switch (error_number) {
    case ENOENT:
    case ENODEV:
      return prefix +
             "this machine has no hardware PMU that counts it (ENOENT; typical of a virtual "
             "machine); software events such as cpu-clock and task-clock still work";
    case EACCES:
    case EPERM: {
      return prefix + "permission denied (" + std::strerror(error_number) + "); " +
             ParanoidSetting() +
             ": run as root, or lower it with 'sysctl kernel.perf_event_paranoid=1' (or -1 for "
             "system-wide and kernel profiling)";
    }
    case EOPNOTSUPP:
      if (attr && (attr->sample_type & PERF_SAMPLE_BRANCH_STACK))
        return prefix +
               "this machine cannot record branch stacks (EOPNOTSUPP: no LBR/BRBE, e.g. a virtual "
               "machine); drop -b/-j/--call-graph lbr";
      return prefix +
             "the PMU cannot sample this event (EOPNOTSUPP: no sampling interrupt); count it "
             "instead";
    case EINVAL: {
      std::string what = "an attribute";
      if (attr) {
        if (attr->precise_ip)
          what = "the precise modifier (:p) level";
        else if (attr->freq)
          what = "the sampling frequency (see kernel.perf_event_max_sample_rate)";
        else if (attr->sample_type & PERF_SAMPLE_READ)
          what = "the group read format";
      }
      return prefix + "the kernel refused " + what + " (EINVAL)";
    }
    case EMFILE:
      return prefix + "too many open files (EMFILE); raise 'ulimit -n'";
    case ESRCH:
      return prefix + "the target process does not exist (ESRCH)";
    case E2BIG:
      return prefix + "this kernel does not know the attribute size tprof uses (E2BIG)";
    case EBUSY:
      return prefix + "the PMU is in use by another tool (EBUSY)";
    default:
      return prefix + std::strerror(error_number);
  }
}

}  // namespace tprof
