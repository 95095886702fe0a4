#include "core/analysis/short_stack_census.h"

#include <string>

namespace tprof {

void ShortStackCensus::OnSample(const Sample& sample) {
  if (sample.callchain.empty()) return;  // no callchain recorded: nothing was cut short
  uint32_t user_frames = 0;
  uint64_t outermost = 0;
  ForEachFrameAddress(sample, [&](uint64_t address, bool kernel) {
    if (!kernel) {
      ++user_frames;
      outermost = address;
    }
    return user_frames <= 2;  // past two frames the stack is not short: stop looking
  });
  if (user_frames == 0) return;
  ++user_stacks_;
  if (user_frames > 2) return;
  ++short_stacks_;
  const Mapping* mapping = space().Find(sample.pid, outermost);
  std::string module;
  if (mapping) {
    module = mapping->filename.substr(mapping->filename.rfind('/') + 1);
  } else {
    module = resolver_.ResolveInProcess(sample.pid, nullptr, outermost).module;
  }
  ++by_module_[module.empty() ? "[unknown]" : module];
}

std::optional<std::string> ShortStackHint(const ShortStackCensus& census) {
  const uint64_t all = census.user_stacks(), few = census.short_stacks();
  if (all < 50 || 2 * few < all) return std::nullopt;
  std::string module = "[unknown]";
  uint64_t most = 0;
  for (const auto& [name, n] : census.by_module())
    if (n > most) module = name, most = n;
  auto percent = [](uint64_t part, uint64_t whole) {
    return std::to_string((200 * part + whole) / (2 * whole));  // rounded
  };
  return percent(few, all) + "% of user stacks stop after one or two frames, most (" +
         percent(most, few) + "%) in " + module +
         ": code built without frame pointers ends -g's frame-pointer walk; --call-graph dwarf "
         "unwinds it";
}

}  // namespace tprof
