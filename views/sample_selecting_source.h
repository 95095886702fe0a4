// A profile read through SampleSelectingVisitor: the samples the time range and thread filters
// keep, for views that read whole stacks (a flame graph, the exports).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "core/analysis/report_table.h"
#include "core/source/profile_source.h"

namespace tprof {

class SampleSelectingSource : public ForwardingSource {
 public:
  SampleSelectingSource(ProfileSource& inner, SampleSelector selector)
      : ForwardingSource(inner), selector_(std::move(selector)) {}
  Result<SourceSummary> ReadRecords(RecordVisitor& visitor) override {
    SampleSelectingVisitor selecting(visitor, selector_);  // each read starts the range afresh
    auto summary = inner().ReadRecords(selecting);
    kept_ = selecting.kept();
    in_time_ = selecting.in_time();
    start_ = selecting.start_timestamp();
    return summary;
  }
  // Of the last read.
  uint64_t samples_kept() const { return kept_; }
  uint64_t samples_in_time() const { return in_time_; }
  // What --time counted from: the first sample of the whole input when the metadata has no
  // start, which the samples kept need not include.
  uint64_t start_timestamp() const { return start_; }
  const SampleFilter& filter() const { return selector_.filter(); }

 private:
  SampleSelector selector_;
  uint64_t kept_ = 0, in_time_ = 0, start_ = 0;
};

// Why `filter` does not suit `view` ("--timeline", or a view of whole stacks: "--flamegraph",
// "this output"): --dso and --symbol choose a table's rows. Nullopt when it suits.
std::optional<std::string> RowFilterMisuse(const SampleFilter& filter, const std::string& view);

// The samples `view` reads: `source` through `filter`'s time range and threads, or null when the
// filter keeps every sample (the source is read as it is, with no thread lookup per sample). A
// filter that does not suit the view, or a selector that cannot be made, is a bad request.
Result<std::unique_ptr<SampleSelectingSource>> SelectSamplesForView(ProfileSource& source,
                                                                    const SampleFilter& filter,
                                                                    const std::string& view);

}  // namespace tprof
