// The time a timer clock leaves out of its samples, where the clock reads its own count in them
// (record's ReadClocksSampledAlone): its samples that fall in the mode it does not sample (a
// clock sampled in one mode) and the ticks its timer missed (any clock: an interrupt that came
// late or not at all) are not taken while its count goes on, so a sample's read less the
// thread's last one, beyond the sample's period, is what the samples not taken stood for. For a
// clock in both modes only a whole missed tick counts: a timer that fires a little late and then
// a little early moves time between two samples, and leaves none out. For a clock in both modes
// a read across a lost record or its own throttle holds the samples the kernel lost or did not
// take, which are not ticks its timer missed (LostSamplesBias names them): it is kept apart. (A
// clock in one mode keeps it: that read holds the other mode's time too.)
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
  // The kernel lost samples (of any event: every clock's next reads span them) or throttled
  // `event`: what a clock in both modes reads next beyond its period goes to
  // across_interrupts(), not totals().
  void Interrupt() {
    for (uint64_t& n : interrupts_) ++n;
  }
  void Interrupt(size_t event) {
    if (event < interrupts_.size()) ++interrupts_[event];
  }
  const std::vector<double>& across_interrupts() const { return across_interrupts_; }

 private:
  std::vector<bool> reads_itself_;
  std::vector<bool> both_modes_;
  bool any_ = false;
  std::vector<double> totals_;
  std::vector<double> across_interrupts_;
  std::vector<uint64_t> interrupts_;  // per event
  struct LastRead {
    uint64_t read = 0;
    uint64_t interrupts = 0;  // the event's interrupts_ when it was taken
  };
  absl::flat_hash_map<std::tuple<size_t, uint32_t, uint32_t>, LastRead> last_read_;
};

}  // namespace tprof
