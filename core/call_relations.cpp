#include "core/call_relations.h"

#include <algorithm>

namespace tprof {
namespace {

std::string WithoutParameters(const std::string& name) {
  std::string n = name;
  if (n.size() > 6 && n.compare(n.size() - 6, 6, " const") == 0) n.resize(n.size() - 6);
  if (n.empty() || n.back() != ')') return n;
  int depth = 0;
  for (size_t i = n.size(); i-- > 0;) {
    if (n[i] == ')') ++depth;
    if (n[i] == '(' && --depth == 0) return i > 0 ? n.substr(0, i) : n;
  }
  return n;
}

}  // namespace

bool FunctionNameMatches(const std::string& full_name, const std::string& wanted) {
  if (full_name == wanted) return true;
  std::string bare = WithoutParameters(full_name);
  if (bare == wanted) return true;
  size_t colons = bare.rfind("::");
  return colons != std::string::npos && bare.substr(colons + 2) == wanted;
}

Result<std::unique_ptr<CallRelationsBuilder>> CallRelationsBuilder::Create(
    std::vector<EventDesc> events, FrameResolver& resolver, std::string function,
    const SampleFilter& filter, uint64_t start_timestamp) {
  auto selector = SampleSelector::Create(filter, start_timestamp);
  if (!selector.ok()) return selector.error();
  return std::unique_ptr<CallRelationsBuilder>(new CallRelationsBuilder(
      std::move(events), resolver, std::move(function), std::move(selector).value()));
}

CallRelationsBuilder::CallRelationsBuilder(std::vector<EventDesc> events, FrameResolver& resolver,
                                           std::string function, SampleSelector selector)
    : frames_(resolver), selector_(std::move(selector)) {
  result_.events = std::move(events);
  result_.wanted = std::move(function);
  const size_t n = result_.events.size();
  result_.through_period.assign(n, 0);
  result_.through_samples.assign(n, 0);
  result_.self_period.assign(n, 0);
  result_.total_period.assign(n, 0);
  result_.no_caller_period.assign(n, 0);
}

bool CallRelationsBuilder::Matches(const ResolvedFrame& frame) {
  auto it = match_cache_.find(frame.function);
  if (it != match_cache_.end()) return it->second;
  bool m = FunctionNameMatches(frame.function, result_.wanted);
  if (m) result_.matched.push_back(frame.function);
  match_cache_.emplace(frame.function, m);
  return m;
}

void CallRelationsBuilder::Credit(std::map<std::pair<std::string, std::string>, Neighbour>& into,
                                  const ResolvedFrame& frame, const Sample& sample) {
  Neighbour& n = into[{frame.module, frame.function}];
  if (n.period.empty()) {
    n.function = frame.function;
    n.module = frame.module;
    n.period.assign(result_.events.size(), 0);
    n.samples.assign(result_.events.size(), 0);
  }
  n.period[sample.event] += sample.period;
  n.samples[sample.event] += 1;
}

void CallRelationsBuilder::OnSample(const Sample& sample) {
  if (sample.event >= result_.events.size()) return;
  if (!selector_.InTimeRange(sample)) return;
  result_.total_period[sample.event] += sample.period;
  const std::string comm = frames_.space().ThreadName(sample.pid, sample.tid);
  if (!selector_.ThreadMatches(sample, comm)) return;
  if (!sample.callchain.empty()) result_.has_callchains = true;
  const auto& chain = frames_.Chain(sample);  // leaf first
  bool through = false;
  seen_callers_.clear();
  seen_callees_.clear();
  auto same = [](const ResolvedFrame* a, const ResolvedFrame* b) {
    return a->function == b->function && a->module == b->module;
  };
  for (size_t i = 0; i < chain.size(); ++i) {
    if (!Matches(*chain[i])) continue;
    through = true;
    if (i + 1 < chain.size()) {
      const ResolvedFrame* caller = chain[i + 1];
      if (std::none_of(seen_callers_.begin(), seen_callers_.end(),
                       [&](const ResolvedFrame* f) { return same(f, caller); })) {
        seen_callers_.push_back(caller);
        Credit(callers_, *caller, sample);
      }
    } else {
      result_.no_caller_period[sample.event] += sample.period;
    }
    if (i > 0) {
      const ResolvedFrame* callee = chain[i - 1];
      if (std::none_of(seen_callees_.begin(), seen_callees_.end(),
                       [&](const ResolvedFrame* f) { return same(f, callee); })) {
        seen_callees_.push_back(callee);
        Credit(callees_, *callee, sample);
      }
    }
  }
  if (!through) return;
  result_.through_period[sample.event] += sample.period;
  result_.through_samples[sample.event] += 1;
  if (Matches(*chain[0])) result_.self_period[sample.event] += sample.period;
}

CallRelations CallRelationsBuilder::Finish() {
  size_t order = 0;
  for (size_t e = 0; e < result_.events.size(); ++e)
    if (result_.through_samples[e]) {
      order = e;
      break;
    }
  auto collect = [order](std::map<std::pair<std::string, std::string>, Neighbour>& from) {
    std::vector<Neighbour> v;
    for (auto& [key, n] : from) v.push_back(std::move(n));
    std::stable_sort(v.begin(), v.end(), [order](const Neighbour& a, const Neighbour& b) {
      return a.period[order] > b.period[order];
    });
    return v;
  };
  result_.callers = collect(callers_);
  result_.callees = collect(callees_);
  std::sort(result_.matched.begin(), result_.matched.end());
  return std::move(result_);
}

}  // namespace tprof
