// The time a clock sampled in one mode leaves out of its samples, where the clock reads its own
// count in them (record's ReadOneModeClocks): a timer clock's samples that fall in the mode it
// does not sample are dropped by the kernel while its count goes on, so a sample's read less the
// thread's last one, beyond the sample's period, is what the dropped samples stood for.
#pragma once

#include <cstddef>
#include <cstdint>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/model/profile.h"

namespace tprof {

class ClockLeftOutTime {
 public:
  explicit ClockLeftOutTime(const std::vector<EventDesc>& events);

  // Whether `event` is such a clock.
  bool reads_itself(size_t event) const {
    return event < reads_itself_.size() && reads_itself_[event];
  }
  bool any() const { return any_; }
  // The time left out before `sample` since its thread's last sample on its CPU (0 for the
  // first, for another event, or for a read that went backwards), added to the event's total.
  double Add(const Sample& sample);
  // Per event: the time left out so far (0 for events that do not read themselves).
  const std::vector<double>& totals() const { return totals_; }

 private:
  std::vector<bool> reads_itself_;
  bool any_ = false;
  std::vector<double> totals_;
  absl::flat_hash_map<std::tuple<size_t, uint32_t, uint32_t>, uint64_t> last_read_;
};

}  // namespace tprof
