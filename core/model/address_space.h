// Processes as the records describe them: names, parents and memory maps over time. Answers
// "which mapping held this address in this process" for the analyses.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/model/profile.h"

namespace tprof {

struct Mapping {
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t page_offset = 0;
  std::string filename;
  std::string build_id;
  // File offset of an address inside this mapping.
  uint64_t FileOffset(uint64_t address) const { return address - start + page_offset; }
};

class AddressSpace {
 public:
  void OnMmap(const MmapRecord& record);
  void OnComm(const CommRecord& record);
  void OnTask(const TaskRecord& record);

  // The mapping that holds `address` in process `pid`, or the kernel's, or nullptr.
  const Mapping* Find(uint32_t pid, uint64_t address) const;
  // The same mapping, shared: it stays valid after the process replaces or drops it.
  std::shared_ptr<const Mapping> FindShared(uint32_t pid, uint64_t address) const;
  // The latest name of a thread (falls back to its process's name, then "[pid]").
  std::string ThreadName(uint32_t pid, uint32_t tid) const;
  // Changes whenever what Find(pid, ...) can answer changes (a mapping of the process or of
  // the kernel added or replaced, exec, fork): lets callers cache per-address results per
  // generation.
  struct Generation {
    uint64_t process = 0;
    uint64_t kernel = 0;
    bool operator==(const Generation&) const = default;
  };
  Generation GenerationOf(uint32_t pid) const;

 private:
  struct Process {
    std::map<uint64_t, std::shared_ptr<const Mapping>> maps;  // by start address
    uint64_t generation = 0;
  };
  Process& GetProcess(uint32_t pid) { return processes_[pid]; }
  const std::shared_ptr<const Mapping>* FindOwner(uint32_t pid, uint64_t address) const;

  std::unordered_map<uint32_t, Process> processes_;
  std::unordered_map<uint32_t, std::string> thread_names_;
  Process kernel_;        // pid -1 mappings (kernel and modules)
  uint64_t changes_ = 0;  // the last generation handed out
  // GenerationOf's last answer: it is asked once or twice per sample, nearly always of the
  // process it was asked of before. Forgotten at every change (OnMmap, OnComm, OnTask). Mutable
  // in a const lookup: an address space belongs to one visitor, used on one thread.
  mutable uint32_t last_pid_ = 0;
  mutable std::optional<Generation> last_generation_;
};

// A record visitor that keeps the processes' address spaces and thread names current, for
// analyses that resolve sample addresses. Subclasses override OnSample, and OnThreadsChanged when
// they cache anything per thread.
class ProcessTrackingVisitor : public RecordVisitor {
 public:
  void OnMmap(const MmapRecord& r) override { space_.OnMmap(r); }
  void OnComm(const CommRecord& r) override {
    space_.OnComm(r);
    OnThreadsChanged();
  }
  void OnTask(const TaskRecord& r) override {
    space_.OnTask(r);
    OnThreadsChanged();
  }

 protected:
  // A thread's name may have changed (comm, exec, fork).
  virtual void OnThreadsChanged() {}
  AddressSpace& space() { return space_; }
  const AddressSpace& space() const { return space_; }

 private:
  AddressSpace space_;
};

}  // namespace tprof
