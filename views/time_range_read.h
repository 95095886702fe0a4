// Reading one profile's samples within a --time range, for the commands that take one (stream,
// stream diff, and diff's --old-time/--new-time): the range resolved against the profile's
// length, and a range that holds no sample refused rather than read as "nothing ran".
#pragma once

#include <string>

#include "core/analysis/report_table.h"
#include "core/base/error.h"
#include "core/model/profile.h"
#include "core/source/profile_source.h"

namespace tprof {

struct TimeRangeRead {
  SourceSummary summary;
  // The range in seconds from the profile's start, as the output names it ("0.000 s to 0.125 s
  // after the profile start"); empty when every sample was read.
  std::string seconds;
};

// Reads `source` into `visitor`, only the samples within `range` (--time's forms: "S,E",
// "+S,+E", "A%-B%"; empty: every sample). `option` names the option the range came from and
// `path` the input, for the errors: a range that is malformed, starts past the profile's end or
// holds no sample is a bad request; the input's own errors (and a file cut short before any of
// the range's samples) name `path`, and callers return every error as it is.
Result<TimeRangeRead> ReadTimeRange(ProfileSource& source, RecordVisitor& visitor,
                                    const std::string& option, const std::string& range,
                                    const std::string& path);

// "1.500 s to 2.000 s after the profile start", or "... to its end" when `end` is open.
std::string DescribeSeconds(std::optional<double> start, std::optional<double> end);

// `filter` in the options that made it, for messages: "--comm a,b --pid 7 --time 1,2 (1.000 s
// to 2.000 s after the profile start)"; `time` is the --time text as given (empty: none).
std::string DescribeFilter(const SampleFilter& filter, const std::string& time);

}  // namespace tprof
