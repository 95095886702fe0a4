// A profile read through SampleSelectingVisitor: the samples the time range and thread filters
// keep, for views that read whole stacks (a flame graph, the exports).
#pragma once

#include <cstdint>
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

}  // namespace tprof
