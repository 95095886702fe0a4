#include "core/model/address_space.h"

#include <vector>

namespace tprof {
namespace {

// perf gives kernel mappings pid -1.
constexpr uint32_t kKernelPid = static_cast<uint32_t>(-1);

const std::shared_ptr<const Mapping>* FindIn(
    const std::map<uint64_t, std::shared_ptr<const Mapping>>& maps, uint64_t address) {
  auto it = maps.upper_bound(address);
  if (it == maps.begin()) return nullptr;
  --it;
  return address < it->second->end ? &it->second : nullptr;
}

}  // namespace

void AddressSpace::OnMmap(const MmapRecord& r) {
  last_generation_.reset();
  if (!r.executable || r.length == 0) return;
  auto mapping = std::make_shared<Mapping>();
  mapping->start = r.start;
  mapping->end = r.start + r.length;
  mapping->page_offset = r.page_offset;
  mapping->filename = r.filename;
  mapping->build_id = r.build_id;
  auto& maps = r.pid == kKernelPid ? kernel_.maps : GetProcess(r.pid).maps;
  // A new mapping replaces the part of an older one it overlaps, as mmap(MAP_FIXED) does; the
  // parts before and after it stay (as perf keeps them). The kernel reports a shared object's
  // whole reserved span and not the unmapping of its tail, into which arm64 puts the vdso: ld.so
  // was lost whole when the vdso replaced all of it.
  auto it = maps.lower_bound(r.start);
  if (it != maps.begin()) {
    auto prev = std::prev(it);
    if (prev->second->end > r.start) it = prev;
  }
  std::vector<std::shared_ptr<const Mapping>> remainders;
  while (it != maps.end() && it->second->start < mapping->end) {
    const Mapping& old = *it->second;
    if (old.start < mapping->start) {
      auto before = std::make_shared<Mapping>(old);
      before->end = mapping->start;
      remainders.push_back(std::move(before));
    }
    if (old.end > mapping->end) {
      auto after = std::make_shared<Mapping>(old);
      after->start = mapping->end;
      after->page_offset = old.page_offset + (mapping->end - old.start);
      remainders.push_back(std::move(after));
    }
    it = maps.erase(it);
  }
  for (auto& remainder : remainders) maps[remainder->start] = std::move(remainder);
  maps[r.start] = std::move(mapping);
  (r.pid == kKernelPid ? kernel_ : GetProcess(r.pid)).generation = ++changes_;
}

void AddressSpace::OnComm(const CommRecord& r) {
  last_generation_.reset();
  thread_names_[r.tid] = r.comm;
  if (r.exec && r.pid == r.tid) {
    Process& process = GetProcess(r.pid);
    process.maps.clear();
    process.generation = ++changes_;
  }
}

void AddressSpace::OnTask(const TaskRecord& r) {
  last_generation_.reset();
  if (r.is_exit) return;
  if (r.pid != r.ppid) {
    // A new process starts with a copy of its parent's maps and name.
    if (auto it = processes_.find(r.ppid); it != processes_.end()) {
      const Process& parent = it->second;  // references survive the rehash below; `it` may not
      Process& child = processes_[r.pid];
      child = parent;
      child.generation = ++changes_;
    }
  }
  if (auto it = thread_names_.find(r.ptid);
      it != thread_names_.end() && !thread_names_.count(r.tid))
    thread_names_[r.tid] = it->second;
}

const std::shared_ptr<const Mapping>* AddressSpace::FindOwner(uint32_t pid,
                                                              uint64_t address) const {
  if (auto it = processes_.find(pid); it != processes_.end())
    if (const auto* m = FindIn(it->second.maps, address)) return m;
  return FindIn(kernel_.maps, address);
}

const Mapping* AddressSpace::Find(uint32_t pid, uint64_t address) const {
  const auto* owner = FindOwner(pid, address);
  return owner ? owner->get() : nullptr;
}

std::shared_ptr<const Mapping> AddressSpace::FindShared(uint32_t pid, uint64_t address) const {
  const auto* owner = FindOwner(pid, address);
  return owner ? *owner : nullptr;
}

AddressSpace::Generation AddressSpace::GenerationOf(uint32_t pid) const {
  if (last_generation_ && last_pid_ == pid) return *last_generation_;
  auto it = processes_.find(pid);
  last_pid_ = pid;
  last_generation_ =
      Generation{it == processes_.end() ? 0 : it->second.generation, kernel_.generation};
  return *last_generation_;
}

std::string AddressSpace::ThreadName(uint32_t pid, uint32_t tid) const {
  if (auto it = thread_names_.find(tid); it != thread_names_.end()) return it->second;
  if (auto it = thread_names_.find(pid); it != thread_names_.end()) return it->second;
  // Built piecewise: `"[" + to_string + "]"` trips GCC 12's false -Wrestrict (GCC bug 105329).
  std::string name = std::to_string(pid);
  name.insert(name.begin(), '[');
  name.push_back(']');
  return name;
}

}  // namespace tprof
