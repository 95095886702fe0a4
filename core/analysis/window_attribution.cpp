#include "core/analysis/window_attribution.h"

#include <algorithm>

namespace tprof {
namespace {

// Keeps the window (`now` less `before`, per member) among the pair's longest by leader delta.
void KeepIfLongest(EdgeWindows& edge, const std::vector<uint64_t>& now,
                   const std::vector<uint64_t>& before) {
  const double leader = static_cast<double>(now[0] - before[0]);
  auto shortest = edge.longest.end();
  if (edge.longest.size() == EdgeWindows::kLongestKept) {
    shortest = std::min_element(edge.longest.begin(), edge.longest.end(),
                                [](const auto& a, const auto& b) { return a[0] < b[0]; });
    if ((*shortest)[0] >= leader) return;
  }
  std::vector<double> window(now.size());
  for (size_t i = 0; i < now.size(); ++i) window[i] = static_cast<double>(now[i] - before[i]);
  if (shortest == edge.longest.end())
    edge.longest.push_back(std::move(window));
  else
    *shortest = std::move(window);
}

}  // namespace

void WindowAttributor::Add(const Sample& sample, const std::string& function) {
  FunctionCounters& f = functions_[function];
  if (f.deltas.empty()) {
    f.deltas.assign(members_, 0);
    f.products.assign(members_ * members_, 0);
  }
  ++f.samples;
  if (sample.counter_values.size() != members_) return;

  auto [it, first] = previous_.try_emplace(SeriesKey{sample.tid, sample.cpu});
  if (first && sample.counter_values[0] > sample.period)
    leader_read_before_first_samples_ += sample.counter_values[0] - sample.period;
  bool whole = false;  // the window ending here is one (see SampleRuns)
  Previous& before = it->second;
  auto [cpu_it, first_of_thread] = last_cpu_.try_emplace(sample.tid, sample.cpu);
  const bool migrated = !first_of_thread && cpu_it->second != sample.cpu;
  cpu_it->second = sample.cpu;
  if (!first && short_window_ && sample.period != short_window_) {
    ++long_periods_;
  } else if (!first) {
    bool monotonic = true;
    for (size_t i = 0; i < members_; ++i) monotonic &= sample.counter_values[i] >= before.values[i];
    whole = monotonic && !before.interrupted && !migrated;
    if (whole) {
      SampleRuns& runs = runs_[before.function];
      ++runs.windows_from;
      runs.windows_stay += before.function == function;
      if (!before.function_before.empty() && before.function_before == function &&
          before.function != function) {
        SampleRuns& returned = runs_[function];
        ++returned.single_returns;
        ++returned.returned_over[before.function];
      }
    }
    const double leader_delta =
        static_cast<double>(sample.counter_values[0]) - static_cast<double>(before.values[0]);
    auto add_window = [&](std::vector<double>& deltas, std::vector<double>& products) {
      if (deltas.empty()) {
        deltas.assign(members_, 0);
        products.assign(members_ * members_, 0);
      }
      for (size_t i = 0; i < members_; ++i) {
        const double di = static_cast<double>(sample.counter_values[i] - before.values[i]);
        deltas[i] += di;
        for (size_t j = 0; j < members_; ++j)
          products[i * members_ + j] +=
              di * static_cast<double>(sample.counter_values[j] - before.values[j]);
      }
    };
    if (whole && before.function == function) {
      add_window(f.deltas, f.products);
      ++f.windows_credited;
      f.longest_credited = std::max(f.longest_credited, leader_delta);
      ++credited_;
      for (const Previous::Interloper& other : before.interlopers) {
        if (other.function == function) continue;
        if (f.stepped_events.empty()) f.stepped_events.assign(members_, 0);
        f.stepped_events[other.member] += static_cast<double>(other.events);
        ++f.stepped_samples;
        ++f.stepped_over[other.function];
      }
    } else {
      if (whole) {
        EdgeWindows& edge = edges_[{before.function, function}];
        add_window(edge.deltas, edge.products);
        ++edge.windows;
        KeepIfLongest(edge, sample.counter_values, before.values);
      }
      ++f.windows_discarded;
      ++discarded_;
    }
  }
  before.values = sample.counter_values;
  if (whole)
    before.function_before = std::move(before.function);
  else
    before.function_before.clear();
  before.function = function;
  before.interrupted = false;
  before.interlopers.clear();
}

void WindowAttributor::AddInterloper(const Sample& sample, const std::string& function,
                                     size_t member, uint64_t events) {
  if (member >= members_) return;
  // The window open on the thread is its last leader sample's, on that sample's CPU: an
  // interloper on another CPU means the thread migrated, and that window is discarded anyway.
  auto cpu = last_cpu_.find(sample.tid);
  if (cpu == last_cpu_.end() || cpu->second != sample.cpu) return;
  auto open = previous_.find(SeriesKey{sample.tid, sample.cpu});
  if (open == previous_.end()) return;
  open->second.interlopers.push_back({member, function, events});
}

void WindowAttributor::Interrupt() {
  for (auto& [series, before] : previous_) before.interrupted = true;
}

std::vector<uint64_t> WindowAttributor::read_totals() const {
  std::vector<uint64_t> totals(members_, 0);
  for (const auto& [series, last] : previous_)
    for (size_t i = 0; i < members_; ++i) totals[i] += last.values[i];
  return totals;
}

double WindowAttributor::discarded_percent() const {
  uint64_t total = credited_ + discarded_;
  return total ? 100.0 * static_cast<double>(discarded_) / static_cast<double>(total) : 0.0;
}

}  // namespace tprof
