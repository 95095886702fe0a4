#include "core/model/kernel_entry_credit.h"

#include <linux/perf_event.h>

#include <algorithm>
#include <bit>

#include "core/model/event_unit.h"

namespace tprof {

uint64_t UserPcRegisterBit(const std::string& architecture) {
  // perf_regs numbering: PERF_REG_X86_IP and PERF_REG_ARM64_PC.
  if (architecture == "x86_64" || architecture == "amd64") return 1ull << 8;
  if (architecture == "aarch64" || architecture == "arm64") return 1ull << 32;
  return 0;
}

std::optional<size_t> UserPcIndex(const std::string& architecture, uint64_t regs_mask) {
  const uint64_t bit = UserPcRegisterBit(architecture);
  if (!bit || !(regs_mask & bit)) return std::nullopt;
  // Registers are copied in the order of their bits.
  return static_cast<size_t>(std::popcount(regs_mask & (bit - 1)));
}

bool RecordsUserContext(const std::vector<EventDesc>& events, const std::string& architecture) {
  bool any = false;
  for (size_t e = 0; e < events.size(); ++e) {
    const EventDesc& event = events[e];
    // A member of a leader-sampled group takes no samples of its own.
    if (event.group_leader >= 0 && static_cast<size_t>(event.group_leader) != e &&
        static_cast<size_t>(event.group_leader) < events.size() &&
        (events[static_cast<size_t>(event.group_leader)].sample_type & PERF_SAMPLE_READ))
      continue;
    if (!(event.sample_type & PERF_SAMPLE_CALLCHAIN) &&
        !UserPcIndex(architecture, event.sample_regs_user))
      return false;
    any = true;
  }
  return any;
}

KernelEntryCredit::KernelEntryCredit(const std::vector<EventDesc>& events,
                                     const std::string& architecture, RecordVisitor& downstream)
    : ForwardingVisitor(downstream) {
  for (const EventDesc& e : events) {
    pc_index_.push_back(UserPcIndex(architecture, e.sample_regs_user));
    counted_.push_back(!IsOffCpuReasonEvent(e.config));
  }
}

void KernelEntryCredit::OnSample(const Sample& sample) {
  KernelCreditStatistics& stats =
      sample.event < counted_.size() && !counted_[sample.event] ? uncounted_ : stats_;
  ++stats.samples;
  const SplitStack stack = SplitLeaf(sample);
  if (!stack.has_leaf || !stack.leaf_kernel) {
    next().OnSample(sample);
    return;
  }
  ++stats.kernel_samples;
  // With a callchain, its user part: the pc at kernel entry, then the user callers.
  const auto user = std::find(sample.callchain.begin(), sample.callchain.end(), kContextUser);
  if (user != sample.callchain.end() && user + 1 != sample.callchain.end() &&
      !IsContextMarker(user[1])) {
    credited_ = sample;
    CompleteCallchain(credited_);  // the user part is all callers, past the leaf's context
    credited_.ip = user[1];
    credited_.callchain.erase(credited_.callchain.begin(),
                              credited_.callchain.begin() + (user - sample.callchain.begin()));
    ++stats.from_callchain;
    next().OnSample(credited_);
    return;
  }
  // Without one (or with a kernel-only chain, as a DWARF stack copy that did not unwind leaves),
  // the user pc among the sampled registers; kernel threads have no user registers (abi 0).
  const std::optional<size_t> pc =
      sample.event < pc_index_.size() ? pc_index_[sample.event] : std::nullopt;
  if (pc && sample.user_regs_abi && *pc < sample.user_regs.size() && sample.user_regs[*pc]) {
    credited_ = sample;
    credited_.ip = sample.user_regs[*pc];
    credited_.callchain.clear();
    if (!sample.callchain.empty()) credited_.callchain = {kContextUser, credited_.ip};
    ++stats.from_registers;
    next().OnSample(credited_);
    return;
  }
  ++stats.without_user_context;
  next().OnSample(sample);
}

}  // namespace tprof
