// A recording from its first sample to a finished profile, for `tprof record` and for tests: the
// command launched and held before exec (or the targets attached), the events opened, the samples
// written, then the symbols embedded or the stack copies unwound, and the profile copied to its
// stream where the output is one (standard output, a device, a FIFO), so that a reader never
// sees half a profile and a device stays a device.
#pragma once

#include <string>
#include <vector>

#include "core/base/error.h"
#include "pmu/recorder.h"
#include "views/view_messages.h"

namespace tprof {

struct RecordRequest {
  RecordOptions options;
  std::vector<std::string> command;  // the command to launch; empty for -p, -t and -a alone
  std::string output;                // the path as given, or "-" for standard output
  // 'cycles' asked for by default or alone: where the PMU cannot count it, a software clock
  // answers the same question (perf does the same), said as a notice. Other events are never
  // substituted.
  bool cycles_may_fall_back = false;
  bool keep_stacks = false;  // every stack copy kept in the profile, as recorded
  // No notes, summary or notices but the warnings (lost samples, throttling, stacks cut
  // short), which are said as notices.
  bool quiet = false;
  std::vector<std::string> planning_notes;  // said once the events are open
};

struct RecordOutcome {
  bool launched = false;
  int wait_status = 0;  // of the launched command
};

// -M METRICS (with --cpu NAME, else the CPU detected): the table's cycles event leading a
// leader-sampled group that reads every event the selected metrics' formulas name; "ipc" is
// {cycles,instructions}:S.
Result<std::vector<EventGroup>> MetricTableGroups(const std::string& metrics,
                                                  const std::string& cpu);

// Says its notes (messages.note), its notices and warnings (messages.notice), the summary
// (messages.summary) and, for -g's frame-pointer stacks that stop early, the remedy. An error
// says that nothing was recorded, or that the profile is incomplete and where its part lies.
Result<RecordOutcome> RecordProfile(const RecordRequest& request, const ViewMessages& messages);

}  // namespace tprof
