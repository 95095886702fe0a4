#include "core/analysis/short_stack_census.h"

#include <array>
#include <string>
#include <string_view>

namespace tprof {
namespace {

// Where a thread's or process's user stack begins: glibc's, musl's and bionic's start routines
// and the clone wrappers that start threads. These are built without frame pointers, so every
// complete frame-pointer stack ends in one of them.
bool IsStartRoutineName(std::string_view name) {
  static constexpr std::array<std::string_view, 12> kNames = {"_start",
                                                              "__libc_start_main",
                                                              "__libc_start_call_main",
                                                              "start_thread",
                                                              "__clone",
                                                              "__clone3",
                                                              "clone",
                                                              "clone3",
                                                              "__start_thread",
                                                              "__pthread_start",
                                                              "thread_start",
                                                              "__libc_start_main_impl"};
  for (std::string_view n : kNames)
    if (name == n) return true;
  return false;
}

bool IsSystemPath(std::string_view path) {
  for (std::string_view dir : {"/lib/", "/lib32/", "/lib64/", "/usr/lib/", "/usr/lib32/",
                               "/usr/lib64/", "/usr/libexec/", "/system/", "/apex/", "/vendor/"})
    if (path.starts_with(dir)) return true;
  return path == "[vdso]" || path == "[vsyscall]";
}

}  // namespace

bool ShortStackCensus::IsStartRoutine(uint32_t pid, const Mapping* mapping, uint64_t address) {
  // Start routines are few and the same addresses recur: each is resolved once.
  const uint64_t key = address ^ (uint64_t{pid} << 48);
  auto [it, inserted] = start_routine_by_address_.try_emplace(key, false);
  if (inserted)
    it->second = IsStartRoutineName(resolver_.ResolveInProcess(pid, mapping, address).function);
  return it->second;
}

ShortStackCensus::Shape ShortStackCensus::ShapeOf(const Sample& sample, const AddressSpace& space) {
  if (sample.callchain.empty()) return kNotUser;  // no callchain recorded: nothing was cut short
  uint32_t user_frames = 0;
  std::array<uint64_t, 2> frames{};
  ForEachFrameAddress(sample, [&](uint64_t address, bool kernel) {
    if (!kernel) {
      if (user_frames < frames.size()) frames[user_frames] = address;
      ++user_frames;
    }
    return user_frames <= 2;  // past two frames the stack is not short: stop looking
  });
  if (user_frames == 0) return kNotUser;
  if (user_frames > 2) return kComplete;
  const uint64_t outermost = frames[user_frames - 1];
  const Mapping* outer_mapping = space.Find(sample.pid, outermost);
  if (IsStartRoutine(sample.pid, outer_mapping, outermost)) return kComplete;  // reached the root
  // The module the walk stopped in: the outermost frame's, or the one before it when the
  // outermost address is in no mapping (read from a register that held no frame pointer).
  const Mapping* mapping = outer_mapping;
  if (!mapping && user_frames == 2) mapping = space.Find(sample.pid, frames[0]);
  std::string module;
  bool system = false;
  if (mapping) {
    module = mapping->filename.substr(mapping->filename.rfind('/') + 1);
    system = IsSystemPath(mapping->filename);
  } else {
    module = resolver_.ResolveInProcess(sample.pid, nullptr, outermost).module;
  }
  if (module.empty()) module = "[unknown]";
  auto [it, inserted] =
      shape_of_module_.try_emplace(module, kFirstShort + static_cast<Shape>(modules_.size()));
  if (inserted) modules_.push_back({module, system, 0});
  return it->second;
}

void ShortStackCensus::Count(Shape shape, uint64_t samples) {
  if (shape == kNotUser) return;
  user_stacks_ += samples;
  if (shape >= kFirstShort) modules_[shape - kFirstShort].short_stacks += samples;
}

ShortStackCounts ShortStackCensus::Counts() const {
  ShortStackCounts counts;
  counts.user_stacks = user_stacks_;
  for (const StopModule& module : modules_) {
    if (module.short_stacks == 0) continue;
    counts.short_stacks += module.short_stacks;
    counts.by_module[module.name] = module.short_stacks;
    if (module.system) counts.system_modules.insert(module.name);
  }
  return counts;
}

std::optional<std::string> ShortStackHint(const ShortStackCounts& counts) {
  const uint64_t all = counts.user_stacks, few = counts.short_stacks;
  if (all < 50 || 2 * few < all) return std::nullopt;
  std::string module = "[unknown]";
  uint64_t most = 0;
  for (const auto& [name, n] : counts.by_module)
    if (n > most) module = name, most = n;
  auto percent = [](uint64_t part, uint64_t whole) {
    return std::to_string((200 * part + whole) / (2 * whole));  // rounded
  };
  std::string hint = percent(few, all) + "% of user stacks stop after one or two frames, most (" +
                     percent(most, few) + "%) in " + module;
  if (counts.system_modules.count(module))
    return hint +
           ", a system library built without frame pointers: -g's frame-pointer walk cannot "
           "pass it to the code that called it; --call-graph dwarf unwinds through it";
  return hint +
         ": code built without frame pointers ends -g's frame-pointer walk; rebuild it with "
         "-fno-omit-frame-pointer, or record with --call-graph dwarf";
}

}  // namespace tprof
