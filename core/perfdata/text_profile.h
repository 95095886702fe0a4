// What the text parsers (perf script output, folded stacks) give the text source.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/model/named_frames.h"
#include "core/model/profile.h"

namespace tprof {

// A profile that was read whole from text: what a text source replays to a visitor.
struct TextProfile {
  Metadata metadata;
  std::vector<EventDesc> events;
  std::vector<Sample> samples;
  std::vector<std::string> comms;     // distinct process names
  std::vector<uint32_t> sample_comm;  // per sample: index into comms
  NamedFrameTable frames;
  uint64_t skipped_lines = 0;  // lines that were neither a sample nor part of one
  std::string cut;             // where the text ends inside a sample (PerfScriptScan::cut)
};

}  // namespace tprof
