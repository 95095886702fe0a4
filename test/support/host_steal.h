// CPU time the hypervisor takes from this machine's virtual CPUs while a test runs (the steal
// column of /proc/stat). A sampled clock (task-clock, cpu-clock) cannot see it: when a stolen
// vCPU runs again the kernel's sampling timer fires once, late, and reports one period, not the
// periods it skipped, while the clock's counter and the wall clock ran on through the steal. So
// a test that holds sampled time against counted or wall time allows for the steal it measured,
// and only for that: on a host that steals nothing its bounds are unchanged.
#pragma once

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

namespace tprof::testing {

// Steal since boot, summed over the CPUs, in ns; 0 where the kernel does not account it.
inline double StealNsSinceBoot() {
  std::ifstream stat("/proc/stat");
  std::string line;
  if (!std::getline(stat, line) || line.rfind("cpu ", 0) != 0) return 0;
  std::istringstream fields(line.substr(4));
  // user nice system idle iowait irq softirq steal
  unsigned long long value = 0, steal = 0;
  for (int column = 0; column < 8 && fields >> value; ++column)
    if (column == 7) steal = value;
  const long ticks_per_second = sysconf(_SC_CLK_TCK);
  return ticks_per_second > 0 ? static_cast<double>(steal) * 1e9 / ticks_per_second : 0;
}

// Whether the host stole enough of a span of `span_ns` to throw a sampled clock over it off: over
// 5 % of the span, with 20 ms of grace (the steal is all CPUs', counted in 10 ms ticks).
inline bool StoleMuchOf(double steal_ns, double span_ns) {
  return steal_ns > 0.05 * span_ns + 20e6;
}

// The steal over a span of the test: all CPUs' steal, an upper bound on what one thread lost
// (the accounting's grain is a clock tick, 10 ms at USER_HZ 100).
class StealMeter {
 public:
  StealMeter() : start_ns_(StealNsSinceBoot()) {}
  double ElapsedNs() const { return StealNsSinceBoot() - start_ns_; }

 private:
  double start_ns_;
};

}  // namespace tprof::testing
