#include "core/model/user_stack_unwinder.h"

#include <algorithm>
#include <cstdio>

#include "core/model/frame_resolver.h"

namespace tprof {
namespace {

std::string Percent(uint64_t part, uint64_t whole) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%",
                whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0);
  return buf;
}

// What the user can do about a reason, with the module it concerns.
std::string Advice(UnwindEnd end, const std::string& module) {
  const std::string named = module.empty() ? "a binary" : module;
  switch (end) {
    case UnwindEnd::kNoBinary:
      return named + " was not found here; name it with --binary FILE or --symfs DIR";
    case UnwindEnd::kBuildIdMismatch:
      return "the file found for " + named +
             " is another build than the one recorded; give the recorded one with --binary";
    case UnwindEnd::kNoCfi:
      return named +
             " has no call frame information (.eh_frame, .debug_frame) for the code where the walk "
             "stopped";
    case UnwindEnd::kStackCopyTooShort:
      return "the next return address lies beyond the copied stack bytes; record with a larger "
             "--call-graph dwarf,SIZE";
    case UnwindEnd::kUnknownAddress:
      return "a pc outside every recorded mapping (JIT code, or a wrong return address)";
    case UnwindEnd::kNoRegisters:
      return "the copy lacks the pc or the stack pointer, or the recorded architecture's "
             "registers are unknown";
    case UnwindEnd::kUnwinderError:
      return "the call frame information of " + named + " could not be evaluated";
    case UnwindEnd::kOutermostFrame:
    case UnwindEnd::kFrameLimit:
      break;
  }
  return "";
}

}  // namespace

const char* UnwindEndName(UnwindEnd end) {
  switch (end) {
    case UnwindEnd::kOutermostFrame:
      return "outermost frame";
    case UnwindEnd::kFrameLimit:
      return "frame limit";
    case UnwindEnd::kNoRegisters:
      return "no registers";
    case UnwindEnd::kUnknownAddress:
      return "unknown address";
    case UnwindEnd::kNoBinary:
      return "no binary";
    case UnwindEnd::kBuildIdMismatch:
      return "build-id mismatch";
    case UnwindEnd::kNoCfi:
      return "no CFI";
    case UnwindEnd::kStackCopyTooShort:
      return "stack copy too short";
    case UnwindEnd::kUnwinderError:
      return "unwinder error";
  }
  return "?";
}

void UnwindStatistics::Add(const UnwindOutcome& outcome, size_t frames) {
  ++samples;
  user_frames += frames;
  if (outcome.end == UnwindEnd::kOutermostFrame || outcome.end == UnwindEnd::kFrameLimit) {
    ++complete;
    return;
  }
  Stopped& s = stopped[static_cast<size_t>(outcome.end)];
  ++s.samples;
  if (frames <= 1) ++s.leaf_only;
  if (s.module.empty()) s.module = outcome.module;
}

std::vector<std::string> DescribeUnwinding(const UnwindStatistics& stats) {
  std::vector<std::string> lines;
  if (stats.samples == 0) return lines;
  char average[32];
  std::snprintf(average, sizeof average, "%.1f",
                static_cast<double>(stats.user_frames) / static_cast<double>(stats.samples));
  lines.push_back(std::to_string(stats.complete) + " of " + std::to_string(stats.samples) +
                  " user stacks (" + Percent(stats.complete, stats.samples) +
                  ") unwound from their DWARF stack copies to the outermost frame, " + average +
                  " user frames on average");
  for (size_t i = 0; i < kUnwindEndCount; ++i) {
    const UnwindStatistics::Stopped& s = stats.stopped[i];
    if (s.samples == 0) continue;
    const UnwindEnd end = static_cast<UnwindEnd>(i);
    lines.push_back(std::to_string(s.samples) + " not unwound to the end (" +
                    Percent(s.samples, stats.samples) + ", " + std::to_string(s.leaf_only) +
                    " of them leaf only): " + UnwindEndName(end) + ": " + Advice(end, s.module));
  }
  return lines;
}

void UnwindUserStack(const UserStackSample& input, UserStackUnwinder& unwinder, Sample* sample,
                     UnwindStatistics* stats) {
  std::vector<uint64_t>& chain = sample->callchain;
  // With a stack copy perf records no user frames (exclude_callchain_user); any it did record
  // are replaced by the walk, and kept only when the walk finds nothing.
  const size_t user_at =
      static_cast<size_t>(std::find(chain.begin(), chain.end(), kContextUser) - chain.begin());
  std::vector<uint64_t> recorded_user(chain.begin() + static_cast<ptrdiff_t>(user_at), chain.end());
  chain.resize(user_at);
  chain.push_back(kContextUser);
  const size_t first = chain.size();
  UnwindOutcome outcome = unwinder.Unwind(input, &chain);
  const size_t found = chain.size() - first;
  if (found == 0) {
    chain.pop_back();
    if (!recorded_user.empty()) {
      chain.insert(chain.end(), recorded_user.begin(), recorded_user.end());
    } else if (sample->ip && !IsKernelAddress(sample->ip)) {
      chain.push_back(kContextUser);
      chain.push_back(sample->ip);
    }
  }
  const size_t user_frames = chain.size() > user_at ? chain.size() - user_at - 1 : 0;
  if (stats) stats->Add(outcome, user_frames);
}

}  // namespace tprof
