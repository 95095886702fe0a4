// Parsing of the -e event syntax into what perf_event_open needs:
//   generic names      cycles, instructions, cpu-clock, page-faults, ...
//   raw codes          r003c, r01c0:u
//   PMU terms          cpu/event=0x3c,umask=0x0,name=ref/  msr/tsc/  software/config=1/
//   vendor names       INST_RETIRED.ANY_P, STALL_SLOT_BACKEND (through libpfm4)
//   modifiers          :u :k :h :p :pp :ppp
//   groups             {cycles,instructions}  {cycles,instructions}:S  (S: the leader samples
//                      and every sample reads all members)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/base/error.h"

namespace tprof {

struct EventSpec {
  std::string name;  // as the user wrote it (or the name= term), modifiers included
  uint32_t type = 0;
  uint64_t config = 0;
  uint64_t config1 = 0;
  uint64_t config2 = 0;
  bool exclude_user = false;
  bool exclude_kernel = false;
  bool exclude_hv = false;  // as perf: only modifiers (:u, :k) exclude the hypervisor
  uint32_t precise_ip = 0;
  uint64_t period = 0;  // a period= term; 0: use the command's sampling settings
  bool is_hardware() const;
};

struct EventGroup {
  std::vector<EventSpec> events;  // leader first; a lone event is a group of one
  bool leader_sampling = false;   // :S
  bool is_group() const { return events.size() > 1 || explicit_braces; }
  bool explicit_braces = false;
  // A leader-sampled group's member sampled on its own as the second method (PlanMemberSampling):
  // at -F's rate whatever the other events' period, and outside --burst's windows.
  bool second_method = false;
};

// Parses one event (no groups).
Result<EventSpec> ParseEventSpec(const std::string& text);
// Parses a list of events and groups: "cycles,{cpu-clock,page-faults}:S,r00c0".
Result<std::vector<EventGroup>> ParseEventList(const std::string& text);

// A leader-sampled group's members read in its samples give per-function values by the window
// method, whose biases (windows stepping over short calls, a loop in step with the period) only
// a second method can expose: the same events sampled on their own. Plans each non-leader member
// of every {..}:S group as a lone sampled event too, unless it already is one, as record -M and
// record {..}:S do by default. A member is sampled at -F's rate (second_method), whatever period
// -c or --burst gives the events named: the kernel adapts its period to the rate, so a
// fault-heavy function is not slowed by a sample per fault (which had raised a memset's share of
// the time from 4.7 % to 12.6 %), and the group's windows, whatever their length against a loop's
// round, have a check. (Left out under -c, as they once were, the windows of a loop sampled
// once a round gave every function the round's rate with nothing to say so.) Left out, with a
// note: a hardware member when the recording would then use more than
// kMemberSamplingCounterBudget hardware counters, since a PMU short of counters multiplexes and
// the group is then counted only part of the time.
inline constexpr size_t kMemberSamplingCounterBudget = 4;
struct MemberSampling {
  std::vector<EventGroup> added;   // lone events to sample beside the groups
  std::vector<std::string> notes;  // one line each: members left out and why
};
MemberSampling PlanMemberSampling(const std::vector<EventGroup>& groups);

// A timer clock sampled on its own leaves time out of its samples while its count keeps it: in
// one mode (task-clock:u, what a user who is not root records), the time spent in the other; in
// any mode, the ticks its timer missed (IsTimerClock). Beside other sampled events, whose rates
// per time that time changes (faults per ms), the clock is made to read itself in its samples (a
// leader-sampled group of one), from which report measures the time left out. Returns whether
// any clock was changed.
bool ReadClocksSampledAlone(std::vector<EventGroup>* groups);

// Every generic event name tprof knows, for help texts and suggestions.
std::vector<std::string> KnownEventNames();

// The closest candidate to `word` by edit distance, or "" when none is close.
std::string ClosestMatch(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace tprof
