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
  s.named.Add(outcome.module);
}

namespace {

// The lines about frame-pointer chains mended with their stack copies (record -g).
void DescribeChainRepair(const ChainRepairStatistics& r, std::vector<std::string>* lines) {
  if (r.samples == 0) return;
  std::string line = std::to_string(r.samples) +
                     " frame-pointer stacks checked against a CFI walk of their stack copies: " +
                     std::to_string(r.repaired) + " (" + Percent(r.repaired, r.samples) +
                     ") mended, " + std::to_string(r.frames_added) +
                     " frames the frame-pointer walk had skipped put in; " +
                     std::to_string(r.unchanged()) + " (" + Percent(r.unchanged(), r.samples) +
                     ") right as recorded";
  if (r.replaced)
    line += "; " + std::to_string(r.replaced) +
            " replaced by a walk to the outermost frame that the chain never met";
  lines->push_back(line);
  for (size_t i = 0; i < kUnwindEndCount; ++i) {
    if (r.kept_by_end[i] == 0) continue;
    const UnwindEnd end = static_cast<UnwindEnd>(i);
    std::string why = Advice(end, r.kept_module_by_end[i].module);
    if (end == UnwindEnd::kStackCopyTooShort)
      why =
          "the walk needed more than the copied stack bytes; record with a larger "
          "--call-graph fp,SIZE, or --call-graph dwarf";
    lines->push_back(std::to_string(r.kept_by_end[i]) + " (" +
                     Percent(r.kept_by_end[i], r.samples) +
                     ") kept as recorded, maybe missing the leaf's callers: " + UnwindEndName(end) +
                     (why.empty() ? "" : ": " + why));
  }
}

}  // namespace

std::vector<std::string> DescribeUnwinding(const UnwindStatistics& stats) {
  std::vector<std::string> lines;
  if (stats.samples) {
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
                      " of them leaf only): " + UnwindEndName(end) + ": " +
                      Advice(end, s.named.module));
    }
  }
  DescribeChainRepair(stats.chain_repair, &lines);
  return lines;
}

std::optional<ChainMeeting> FindChainMeeting(std::span<const uint64_t> walked,
                                             std::span<const uint64_t> chain) {
  for (size_t i = 1; i < walked.size(); ++i)
    for (size_t j = 1; j < chain.size(); ++j) {
      if (walked[i] != chain[j]) continue;
      const size_t both = std::min(walked.size() - i, chain.size() - j);
      if (std::equal(walked.begin() + static_cast<ptrdiff_t>(i),
                     walked.begin() + static_cast<ptrdiff_t>(i + both),
                     chain.begin() + static_cast<ptrdiff_t>(j)))
        return ChainMeeting{i, j};
    }
  return std::nullopt;
}

void MendFramePointerChain(std::span<const uint64_t> walked, const UnwindOutcome& outcome,
                           std::vector<uint64_t>* chain, ChainRepairStatistics* stats) {
  ++stats->samples;
  std::optional<ChainMeeting> meeting;
  // A walk from another pc than the chain's is of another moment: nothing to compare.
  const bool same_pc = !walked.empty() && !chain->empty() && walked.front() == chain->front();
  if (same_pc) meeting = FindChainMeeting(walked, *chain);
  if (!meeting && same_pc && outcome.end == UnwindEnd::kOutermostFrame && walked.size() > 1) {
    // A walk that reached the outermost frame (_start, a thread's start) is whole, so a chain
    // that never meets it holds a wrong frame (a pointer read from a register the leaf used for
    // something else): the walk stands (an imported file's large copy; rarely a short one).
    ++stats->replaced;
    *chain = std::vector<uint64_t>(walked.begin(), walked.end());
    return;
  }
  if (!meeting) {
    // Where the walk stopped early (no CFI, a short copy) the chain may still be whole, and
    // where it could not be followed (no binary, an unknown address) nothing says the chain is
    // wrong: it stays as the kernel recorded it, counted so that the summary can say so.
    ++stats->kept_by_end[static_cast<size_t>(outcome.end)];
    stats->kept_module_by_end[static_cast<size_t>(outcome.end)].Add(outcome.module);
    return;
  }
  if (meeting->walked_at == meeting->chain_at &&
      std::equal(walked.begin(), walked.begin() + static_cast<ptrdiff_t>(meeting->walked_at),
                 chain->begin()))
    return;
  ++stats->repaired;
  stats->frames_added += meeting->walked_at - std::min(meeting->walked_at, meeting->chain_at);
  std::vector<uint64_t> mended(walked.begin(),
                               walked.begin() + static_cast<ptrdiff_t>(meeting->walked_at));
  mended.insert(mended.end(), chain->begin() + static_cast<ptrdiff_t>(meeting->chain_at),
                chain->end());
  *chain = std::move(mended);
}

namespace {

// Where the user part of a callchain starts: its PERF_CONTEXT_USER marker, or the end. With
// --call-graph dwarf (exclude_callchain_user) the kernel records no user frames; with -g they
// are its frame-pointer chain.
size_t UserContextAt(const std::vector<uint64_t>& chain) {
  return static_cast<size_t>(std::find(chain.begin(), chain.end(), kContextUser) - chain.begin());
}

}  // namespace

void StackCopyTrimmer::Trim(Sample* sample) {
  // As the pass after the workload (UnwindPass): a sample without registers is not walked.
  if (sample->user_stack.empty() || sample->user_regs.empty()) return;
  const std::vector<uint64_t>& chain = sample->callchain;
  const size_t user_at = UserContextAt(chain);
  if (user_at + 1 >= chain.size()) return;
  UserStackSample input;
  input.pid = sample->pid;
  input.tid = sample->tid;
  input.ip = sample->ip;
  const std::span<const uint64_t> recorded_user(chain.data() + user_at + 1,
                                                chain.size() - user_at - 1);
  if (!unwinder_.ChainKeepsFramePointers(input, recorded_user)) return;
  sample->user_regs_abi = 0;
  sample->user_regs.clear();
  sample->user_stack.clear();
  ++trimmed_;
}

void UnwindUserStack(const UserStackSample& input, UserStackUnwinder& unwinder, Sample* sample,
                     UnwindStatistics* stats) {
  std::vector<uint64_t>& chain = sample->callchain;
  // With --call-graph dwarf the walk gives all the user frames; with -g it mends the chain.
  const size_t user_at = UserContextAt(chain);
  std::vector<uint64_t> recorded_user(
      chain.begin() + static_cast<ptrdiff_t>(std::min(user_at + 1, chain.size())), chain.end());
  chain.resize(user_at);
  chain.push_back(kContextUser);
  const size_t first = chain.size();
  UserStackSample walk = input;
  if (recorded_user.size() >= 2) walk.frame_record_return = recorded_user[1];
  // Most -g samples are in code that keeps its frame pointer, whose chain is right as it is: the
  // walk, which would only confirm it, is what the repair costs (some 10 us a sample).
  if (!recorded_user.empty() && unwinder.ChainKeepsFramePointers(walk, recorded_user)) {
    chain.insert(chain.end(), recorded_user.begin(), recorded_user.end());
    if (stats) ++stats->chain_repair.samples;
    return;
  }
  UnwindOutcome outcome = unwinder.Unwind(walk, &chain);
  if (!recorded_user.empty()) {
    std::vector<uint64_t> walked(chain.begin() + static_cast<ptrdiff_t>(first), chain.end());
    ChainRepairStatistics unused;
    MendFramePointerChain(walked, outcome, &recorded_user, stats ? &stats->chain_repair : &unused);
    chain.resize(first);
    chain.insert(chain.end(), recorded_user.begin(), recorded_user.end());
    return;
  }
  const size_t found = chain.size() - first;
  if (found == 0) {
    chain.pop_back();
    if (sample->ip && !IsKernelAddress(sample->ip)) {
      chain.push_back(kContextUser);
      chain.push_back(sample->ip);
    }
  }
  const size_t user_frames = chain.size() > user_at ? chain.size() - user_at - 1 : 0;
  if (stats) stats->Add(outcome, user_frames);
}

}  // namespace tprof
