// Reads a counting session in intervals: each read gives the counts since the previous one
// (value, time_enabled and time_running deltas, summed over the session's instances), so that a
// counter scaled over one interval uses that interval's own running share, as perf stat -I does.
// The deltas are kept raw: they add up exactly to the total.
#pragma once

#include "core/base/error.h"
#include "core/model/counter_report.h"
#include "pmu/counting_session.h"

namespace tprof {

class IntervalReader {
 public:
  // Starts from zero: the session is read for the first time by Next (a session opened disabled,
  // or waiting for exec, has counted nothing yet).
  explicit IntervalReader(const CountingSession& session) : session_(&session) {}
  // The raw counts since the previous Next (or since the start).
  Result<RawCounts> Next();
  // The same, scaled into a report.
  Result<CounterReport> NextReport();
  // Everything read so far: the sum of all the intervals.
  const RawCounts& total() const { return previous_; }

 private:
  const CountingSession* session_;
  RawCounts previous_;
};

}  // namespace tprof
