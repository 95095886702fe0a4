// The seam for `--call-graph dwarf` recordings: the importer hands each sample's user registers
// and stack copy to an unwinder (symbolize/ provides one that reads DWARF CFI) and appends the
// frames it finds to the sample's callchain. Without an unwinder such samples keep their leaf
// (the sampled ip) and whatever kernel callchain they had.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "core/profile.h"

namespace tprof {

struct UserStackSample {
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t ip = 0;
  uint64_t regs_abi = 0;   // PERF_SAMPLE_REGS_ABI_32 / _64
  uint64_t regs_mask = 0;  // the event's sample_regs_user: which registers `regs` holds, in order
  std::span<const uint64_t> regs;
  std::string_view stack;  // the copy of the user stack from the stack pointer up
};

class UserStackUnwinder {
 public:
  virtual ~UserStackUnwinder() = default;
  // Told about every mapping, in time order, before the samples that need it.
  virtual void OnMmap(const MmapRecord& record) = 0;
  virtual void OnComm(const CommRecord&) {}
  virtual void OnTask(const TaskRecord&) {}
  // Appends the user frames of one sample, leaf first, starting with the caller of the sampled
  // function. Returns false when it could not unwind at all.
  virtual bool Unwind(const UserStackSample& sample, std::vector<uint64_t>* frames) = 0;
};

}  // namespace tprof
