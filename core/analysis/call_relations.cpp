#include "core/analysis/call_relations.h"

#include <algorithm>
#include <tuple>

#include "core/model/function_name.h"

namespace tprof {

bool FunctionNameMatches(const std::string& full_name, const std::string& wanted) {
  if (full_name == wanted) return true;
  std::string bare = WithoutParameters(full_name);
  if (bare == wanted) return true;
  size_t colons = bare.rfind("::");
  return colons != std::string::npos && bare.substr(colons + 2) == wanted;
}

Result<std::unique_ptr<CallRelationsBuilder>> CallRelationsBuilder::Create(
    std::vector<EventDesc> events, FrameResolver& resolver, std::string function,
    const SampleFilter& filter, uint64_t start_timestamp, InlineMode inline_mode) {
  auto selector = SampleSelector::Create(filter, start_timestamp);
  if (!selector.ok()) return selector.error();
  return std::unique_ptr<CallRelationsBuilder>(new CallRelationsBuilder(
      std::move(events), resolver, std::move(function), std::move(selector).value(), inline_mode));
}

CallRelationsBuilder::CallRelationsBuilder(std::vector<EventDesc> events, FrameResolver& resolver,
                                           std::string function, SampleSelector selector,
                                           InlineMode inline_mode)
    : attribution_(inline_mode),
      frames_(resolver, space()),
      selector_(std::move(selector)),
      tally_(events.size()) {
  result_.events = std::move(events);
  result_.wanted = std::move(function);
  const size_t n = result_.events.size();
  result_.through_period.assign(n, 0);
  result_.through_samples.assign(n, 0);
  result_.self_period.assign(n, 0);
  result_.total_period.assign(n, 0);
  result_.no_caller_period.assign(n, 0);
}

bool CallRelationsBuilder::Matches(FunctionRef function) {
  auto [it, inserted] = matches_.try_emplace(function, false);
  if (inserted) {
    const std::string& name = attribution_.Name(*function.first, function.second);
    it->second = FunctionNameMatches(name, result_.wanted);
    if (it->second) matched_.insert(name);
  }
  return it->second;
}

uint32_t CallRelationsBuilder::NeighbourOf(FunctionRef function) {
  auto [it, inserted] = frame_neighbours_.try_emplace(function, 0);
  if (inserted) {
    const std::string& name = attribution_.Name(*function.first, function.second);
    auto [index, added] = neighbour_index_.try_emplace({function.first->module, name},
                                                       static_cast<uint32_t>(neighbours_.size()));
    if (added) neighbours_.push_back(index->first);
    it->second = index->second;
  }
  return it->second;
}

void CallRelationsBuilder::ResolveStack(const Sample& sample) {
  // Every function on the chain, leaf first: an inlined function's caller is the function it
  // was inlined into.
  std::vector<FunctionRef>& chain = functions_;
  chain.clear();
  for (const ResolvedFrame* frame : frames_.Chain(sample))
    attribution_.ForEachLevel(*frame, [&](uint32_t level) { chain.emplace_back(frame, level); });
  StackRelations stack;
  // Each caller or callee once per stack (recursion does not inflate shares).
  auto add_once = [&](uint32_t begin, uint32_t id) {
    if (std::find(neighbour_ids_.begin() + begin, neighbour_ids_.end(), id) == neighbour_ids_.end())
      neighbour_ids_.push_back(id);
  };
  stack.callers_begin = static_cast<uint32_t>(neighbour_ids_.size());
  for (size_t i = 0; i < chain.size(); ++i) {
    if (!Matches(chain[i])) continue;
    stack.through = true;
    if (i + 1 < chain.size())
      add_once(stack.callers_begin, NeighbourOf(chain[i + 1]));
    else
      stack.no_caller = true;
  }
  stack.callers_end = stack.callees_begin = static_cast<uint32_t>(neighbour_ids_.size());
  for (size_t i = 1; i < chain.size(); ++i)
    if (Matches(chain[i])) add_once(stack.callees_begin, NeighbourOf(chain[i - 1]));
  stack.callees_end = static_cast<uint32_t>(neighbour_ids_.size());
  stack.self = stack.through && Matches(chain[0]);
  stacks_.push_back(stack);
}

void CallRelationsBuilder::OnSample(const Sample& sample) {
  if (sample.event >= result_.events.size()) return;
  if (!selector_.InTimeRange(sample)) return;
  result_.total_period[sample.event] += sample.period;
  auto [thread, inserted] = thread_matches_.try_emplace(uint64_t{sample.pid} << 32 | sample.tid);
  if (inserted)
    thread->second = selector_.ThreadMatches(sample, space().ThreadName(sample.pid, sample.tid));
  if (!thread->second) return;
  if (!sample.callchain.empty()) result_.has_callchains = true;
  const auto stack = tally_.Add(sample, 0, space().GenerationOf(sample.pid));
  if (stack.first) ResolveStack(sample);
}

CallRelations CallRelationsBuilder::Finish() {
  const size_t n = result_.events.size();
  std::vector<Neighbour> callers(neighbours_.size()), callees(neighbours_.size());
  for (auto* rows : {&callers, &callees})
    for (size_t id = 0; id < neighbours_.size(); ++id) {
      (*rows)[id].module = neighbours_[id].first;
      (*rows)[id].function = neighbours_[id].second;
      (*rows)[id].period.assign(n, 0);
      (*rows)[id].samples.assign(n, 0);
    }
  std::vector<bool> called(neighbours_.size()), calling(neighbours_.size());
  for (uint32_t s = 0; s < stacks_.size(); ++s) {
    const StackRelations& stack = stacks_[s];
    if (!stack.through) continue;
    for (size_t e = 0; e < n; ++e) {
      const uint64_t samples = tally_.samples(s, e);
      if (samples == 0) continue;
      const uint64_t period = tally_.period(s, e);
      result_.through_period[e] += period;
      result_.through_samples[e] += samples;
      if (stack.self) result_.self_period[e] += period;
      if (stack.no_caller) result_.no_caller_period[e] += period;
      auto credit = [&](std::vector<Neighbour>& rows, std::vector<bool>& used, uint32_t begin,
                        uint32_t end) {
        for (uint32_t k = begin; k < end; ++k) {
          Neighbour& row = rows[neighbour_ids_[k]];
          row.period[e] += period;
          row.samples[e] += samples;
          used[neighbour_ids_[k]] = true;
        }
      };
      credit(callers, called, stack.callers_begin, stack.callers_end);
      credit(callees, calling, stack.callees_begin, stack.callees_end);
    }
  }
  size_t order = 0;
  for (size_t e = 0; e < n; ++e)
    if (result_.through_samples[e]) {
      order = e;
      break;
    }
  // By period of the first event with samples through the function; ties by module and name.
  auto collect = [order](std::vector<Neighbour>& rows, const std::vector<bool>& used) {
    std::vector<Neighbour> v;
    for (size_t id = 0; id < rows.size(); ++id)
      if (used[id]) v.push_back(std::move(rows[id]));
    std::sort(v.begin(), v.end(), [order](const Neighbour& a, const Neighbour& b) {
      if (a.period[order] != b.period[order]) return a.period[order] > b.period[order];
      return std::tie(a.module, a.function) < std::tie(b.module, b.function);
    });
    return v;
  };
  result_.callers = collect(callers, called);
  result_.callees = collect(callees, calling);
  result_.matched.assign(matched_.begin(), matched_.end());
  return std::move(result_);
}

}  // namespace tprof
