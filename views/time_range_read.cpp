#include "views/time_range_read.h"

#include <cstdio>
#include <sstream>

#include "core/analysis/report_table.h"

namespace tprof {

std::string DescribeSeconds(std::optional<double> start, std::optional<double> end) {
  char text[96];
  if (end)
    std::snprintf(text, sizeof text, "%.3f s to %.3f s after the profile start", start.value_or(0),
                  *end);
  else
    std::snprintf(text, sizeof text, "%.3f s after the profile start to its end",
                  start.value_or(0));
  return text;
}

std::string DescribeFilter(const SampleFilter& filter, const std::string& time) {
  std::ostringstream s;
  auto list = [&](const char* name, const auto& values) {
    if (values.empty()) return;
    s << (s.tellp() > 0 ? " " : "") << name << ' ';
    bool first = true;
    for (const auto& v : values) s << (first ? "" : ",") << v, first = false;
  };
  list("--comm", filter.comms);
  list("--pid", filter.pids);
  list("--tid", filter.tids);
  list("--dso", filter.dsos);
  if (!filter.symbol_pattern.empty())
    s << (s.tellp() > 0 ? " " : "") << "--symbol " << filter.symbol_pattern;
  if (!time.empty())
    s << (s.tellp() > 0 ? " " : "") << "--time " << time << " ("
      << DescribeSeconds(filter.time_start, filter.time_end) << ")";
  return s.str();
}

Result<TimeRangeRead> ReadTimeRange(ProfileSource& source, RecordVisitor& visitor,
                                    const std::string& option, const std::string& range,
                                    const std::string& path) {
  TimeRangeRead read;
  if (range.empty()) {
    auto summary = source.ReadRecords(visitor);
    if (!summary.ok()) return summary.error().WithContext(path);
    read.summary = std::move(summary).value();
    return read;
  }
  const uint64_t duration_ns = source.metadata().duration_ns;
  auto parsed = ParseTimeRange(range);
  if (!parsed.ok()) return Error::BadRequest(option + " " + parsed.error().message());
  auto seconds = ResolveTimeRange(*parsed, duration_ns);
  if (!seconds.ok())
    return Error::BadRequest(option + " " + range + ": " + seconds.error().message());
  SampleFilter filter;
  filter.time_start = seconds->first;
  filter.time_end = seconds->second;
  read.seconds = DescribeSeconds(filter.time_start, filter.time_end);
  auto selector = SampleSelector::Create(filter, source.metadata().start_timestamp);
  if (!selector.ok()) return Error::BadRequest(selector.error().message());
  SampleSelectingVisitor selecting(visitor, std::move(selector).value());
  auto summary = source.ReadRecords(selecting);
  if (!summary.ok()) return summary.error().WithContext(path);
  // A file cut short may hold the range's samples in the part that could not be read: that is
  // the input's fault, not the range's.
  if (selecting.in_time() == 0 && !summary->complete)
    return Error(path + ": no sample of " + option + " " + range + " (" + read.seconds +
                 ") could be read: the file is incomplete" +
                 (summary->warning.empty() ? std::string() : " (" + summary->warning + ")"));
  if (selecting.in_time() == 0) {
    std::string message =
        option + " " + range + " (" + read.seconds + ") holds no sample of " + path;
    if (duration_ns != 0) {
      char length[64];
      std::snprintf(length, sizeof length, "; the profile is %.3f s long",
                    static_cast<double>(duration_ns) / 1e9);
      message += length;
    }
    return Error::BadRequest(message);
  }
  read.summary = std::move(summary).value();
  return read;
}

}  // namespace tprof
