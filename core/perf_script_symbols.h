// Frames that arrive already named (perf script text, folded stacks) have no addresses a
// symbolizer could use. Each distinct (module, function) pair gets a made-up address here, the
// samples carry those addresses, and this table resolves them back: the rest of tprof sees
// ordinary samples and an ordinary FrameResolver.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/frame_resolver.h"

namespace tprof {

class NamedFrameTable : public FrameResolver {
 public:
  // Made-up addresses start here: low, user-space, and never 0.
  static constexpr uint64_t kBase = 0x10000;
  static constexpr uint64_t kStride = 16;

  // The address standing for this frame; the same pair always gets the same address.
  uint64_t Intern(std::string_view module, std::string_view function) {
    auto key = std::make_pair(std::string(module), std::string(function));
    auto it = index_.find(key);
    if (it != index_.end()) return it->second;
    uint64_t address = kBase + kStride * frames_.size();
    ResolvedFrame frame;
    frame.module = key.first.empty() ? "[unknown]" : key.first;
    frame.function = key.second.empty() ? "[unknown]" : key.second;
    frame.resolved = frame.function != "[unknown]";
    frames_.push_back(std::move(frame));
    index_.emplace(std::move(key), address);
    return address;
  }

  ResolvedFrame Resolve(const Mapping*, uint64_t address) override {
    // Callers of a callchain are resolved at their return address - 1 (the call instruction),
    // so an address just below a made-up one stands for it too.
    if (address >= kBase && (address - kBase) % kStride == kStride - 1) ++address;
    if (address >= kBase && (address - kBase) % kStride == 0 &&
        (address - kBase) / kStride < frames_.size())
      return frames_[(address - kBase) / kStride];
    ResolvedFrame unknown;
    unknown.module = unknown.function = "[unknown]";
    return unknown;
  }

  size_t size() const { return frames_.size(); }

 private:
  std::map<std::pair<std::string, std::string>, uint64_t> index_;
  std::vector<ResolvedFrame> frames_;
};

// A profile that was read whole from text: what a text source replays to a visitor.
struct TextProfile {
  Metadata metadata;
  std::vector<EventDesc> events;
  std::vector<Sample> samples;
  std::vector<std::string> comms;     // distinct process names
  std::vector<uint32_t> sample_comm;  // per sample: index into comms
  NamedFrameTable frames;
  uint64_t skipped_lines = 0;  // lines that were neither a sample nor part of one
};

}  // namespace tprof
