// The seam between analysis and symbolization: analyses ask for the function that holds an
// address; symbolize/ answers from ELF and DWARF, embedded symbol sections, or not at all.
#pragma once

#include <cstdint>
#include <cstring>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/address_space.h"

namespace tprof {

// One function active at an address. Code inlined into other code gives several of these for a
// single address: the innermost inlined function first, then each function it was inlined into,
// ending with the function that was compiled out of line.
struct SourceFrame {
  std::string function;  // demangled
  std::string mangled;   // as in the binary; empty when the name is not mangled
  std::string file;      // source file; empty when unknown
  uint32_t line = 0;     // 0 when unknown
  uint32_t column = 0;   // 0 when unknown
  // True when this function was inlined into the next frame of the chain; the next frame's
  // file:line is then the call site of this inlined call.
  bool inlined = false;

  bool operator==(const SourceFrame&) const = default;
};

struct ResolvedFrame {
  // The out-of-line function holding the address (its symbol), demangled; "[module+0xoffset]"
  // when unknown. Aggregation by function uses this name.
  std::string function;
  std::string mangled;   // the symbol as in the binary; empty when unknown or not mangled
  std::string module;    // file name of the mapping, "[kernel.kallsyms]", "[vdso]", "[unknown]"
  std::string build_id;  // raw bytes of the module's build-id; empty when unknown
  // Source-level frames at the address, innermost first (see SourceFrame). Empty when nothing
  // is known beyond the symbol; one frame without file when only the symbol table is known.
  std::vector<SourceFrame> frames;
  bool resolved = false;

  // The source location of the address itself (the innermost frame's), or empty/0.
  const std::string& file() const {
    static const std::string kNone;
    return frames.empty() ? kNone : frames.front().file;
  }
  uint32_t line() const { return frames.empty() ? 0 : frames.front().line; }

  bool operator==(const ResolvedFrame&) const = default;
};

class FrameResolver {
 public:
  virtual ~FrameResolver() = default;
  // `mapping` is null when no recorded mapping holds the address.
  virtual ResolvedFrame Resolve(const Mapping* mapping, uint64_t address) = 0;
  // The same, for resolvers that need the process (JIT code named by /tmp/perf-PID.map); by
  // default the process does not matter.
  virtual ResolvedFrame ResolveInProcess(uint32_t pid, const Mapping* mapping, uint64_t address) {
    (void)pid;
    return Resolve(mapping, address);
  }
  // The frame when the resolver already holds it for as long as the resolver lives (an embedded
  // symbol table), else null: callers that cache frames then keep a pointer rather than a copy
  // of every name.
  virtual const ResolvedFrame* FindHeld(uint32_t pid, const Mapping* mapping, uint64_t address) {
    (void)pid, (void)mapping, (void)address;
    return nullptr;
  }
  // FindHeld for many addresses at once, answered in `frame`: a resolver whose lookups wait for
  // memory overlaps them (an embedded symbol table; a new stack's addresses are mostly new).
  struct HeldQuery {
    uint32_t pid;
    const Mapping* mapping;
    uint64_t address;
    const ResolvedFrame* frame = nullptr;
  };
  virtual void FindHeldMany(std::span<HeldQuery> queries) {
    for (HeldQuery& q : queries) q.frame = FindHeld(q.pid, q.mapping, q.address);
  }
  // Lets go of what the resolver holds for the modules it has opened (their symbols, DWARF and
  // per-address memo), for a caller that is done with them; later calls open them again.
  // Pointers from FindHeld are invalid afterwards.
  virtual void ReleaseModules() {}
};

// One resolver shared by visitors on different threads (a report resolves its stacks on a
// thread of its own, beside visitors that resolve on the reading thread), one call at a time.
// Frames from FindHeld need no lock once returned: the resolver holds them as long as it lives.
class SynchronizedFrameResolver : public FrameResolver {
 public:
  explicit SynchronizedFrameResolver(FrameResolver& inner) : inner_(inner) {}
  ResolvedFrame Resolve(const Mapping* mapping, uint64_t address) override {
    std::lock_guard lock(mutex_);
    return inner_.Resolve(mapping, address);
  }
  ResolvedFrame ResolveInProcess(uint32_t pid, const Mapping* mapping, uint64_t address) override {
    std::lock_guard lock(mutex_);
    return inner_.ResolveInProcess(pid, mapping, address);
  }
  const ResolvedFrame* FindHeld(uint32_t pid, const Mapping* mapping, uint64_t address) override {
    std::lock_guard lock(mutex_);
    return inner_.FindHeld(pid, mapping, address);
  }
  void FindHeldMany(std::span<HeldQuery> queries) override {
    std::lock_guard lock(mutex_);
    inner_.FindHeldMany(queries);
  }
  void ReleaseModules() override {
    std::lock_guard lock(mutex_);
    inner_.ReleaseModules();
  }

 private:
  FrameResolver& inner_;
  std::mutex mutex_;
};

// Kernel text lives in the upper half of the address space on every 64-bit Linux architecture.
inline bool IsKernelAddress(uint64_t address) { return address >> 63; }

// `name` begins with the literal `prefix`: a length test and a compare of known length, inlined
// (string_view::starts_with(const char*) was an out-of-line call of some 60 instructions here,
// and the tests below are asked per address).
template <size_t N>
inline bool HasPrefix(std::string_view name, const char (&prefix)[N]) {
  return name.size() >= N - 1 && std::memcmp(name.data(), prefix, N - 1) == 0;
}

// Mappings with no file behind them (anonymous memory, memfd, heap): JIT code lives there.
// Asked per address by the symbolizers, so it dispatches on the first character: a file's path
// is answered after three prefix tests, a name that starts with neither '/' nor '[' after one.
inline bool IsFilelessMapping(std::string_view name) {
  if (name.empty()) return true;
  switch (name.front()) {
    case '/':
      return HasPrefix(name, "//anon") || HasPrefix(name, "/memfd:") ||
             HasPrefix(name, "/dev/zero");
    case '[':
      return HasPrefix(name, "[anon") || name == "[heap]" || HasPrefix(name, "[stack") ||
             HasPrefix(name, "[jit");
    default:
      return false;
  }
}

inline bool IsKernelMappingName(std::string_view name) {
  return HasPrefix(name, "[kernel") || HasPrefix(name, "[guest.kernel");
}

// Kernel text: an address in the kernel's half, or in a mapping the kernel names as its own.
inline bool IsKernelCode(const Mapping* mapping, uint64_t address) {
  return IsKernelAddress(address) || (mapping && IsKernelMappingName(mapping->filename));
}

// Whether the frame at `address` is the same whichever process asks for it: kernel code, and code
// in a file. Code without a file (JIT code) is named per process, and a frame cache keyed by
// mapping lets the first process to ask name it for all that share the mapping (a forked
// child): only the others may be looked up ahead of the samples' order.
inline bool NamedAlikeInEveryProcess(const Mapping* mapping, uint64_t address) {
  return IsKernelCode(mapping, address) || (mapping && !IsFilelessMapping(mapping->filename));
}

}  // namespace tprof
