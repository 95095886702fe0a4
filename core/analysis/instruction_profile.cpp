#include "core/analysis/instruction_profile.h"

#include <algorithm>

#include "core/model/function_name.h"

namespace tprof {
namespace {

// "(anonymous namespace)::f" -> "f"; "a::b<c::d>::f" -> "f".
std::string Unqualified(const std::string& name) {
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i + 1 < name.size(); ++i) {
    char c = name[i];
    if (c == '(' || c == '<') ++depth;
    if (c == ')' || c == '>') --depth;
    if (depth == 0 && c == ':' && name[i + 1] == ':') start = i + 2;
  }
  return name.substr(start);
}

}  // namespace

bool FunctionMatches(const std::string& function, const std::string& mangled,
                     const std::string& query) {
  if (query.empty()) return false;
  if (function == query || mangled == query) return true;
  std::string bare = WithoutParameters(function);
  return bare == query || Unqualified(bare) == query;
}

InstructionProfileBuilder::InstructionProfileBuilder(std::vector<EventDesc> events,
                                                     FrameResolver& resolver, std::string query,
                                                     InlineMode inline_mode)
    : resolver_(resolver), attribution_(inline_mode), query_(std::move(query)) {
  profile_.events = std::move(events);
  profile_.total_period.assign(profile_.events.size(), 0);
  profile_.total_samples.assign(profile_.events.size(), 0);
}

void InstructionProfileBuilder::OnSample(const Sample& sample) {
  const size_t e = sample.event;
  const size_t n = profile_.events.size();
  if (e >= n) return;
  profile_.total_period[e] += sample.period;
  profile_.total_samples[e] += 1;
  const Mapping* mapping = space().Find(sample.pid, sample.ip);
  auto [it, inserted] = cache_.try_emplace({mapping, sample.ip});
  if (inserted) {
    ResolvedFrame frame = resolver_.ResolveInProcess(sample.pid, mapping, sample.ip);
    const std::string& name = attribution_.LeafName(frame);
    const std::string& mangled = attribution_.Mangled(frame, 0);
    if (frame.resolved && FunctionMatches(name, mangled, query_)) {
      // The recorded path, which opens the binary (the frame's module may be a short name).
      const std::string& module = mapping ? mapping->filename : frame.module;
      const std::string& build_id = mapping ? mapping->build_id : frame.build_id;
      const bool inlined = attribution_.Inlined(frame, 0);
      const std::string& inlined_into = inlined ? frame.function : std::string();
      auto [f, added] = function_index_.try_emplace({module, build_id, name, inlined_into},
                                                    static_cast<int>(profile_.functions.size()));
      if (added) {
        FunctionSamples function;
        function.function = name;
        function.mangled = mangled;
        if (inlined) {
          function.inlined_into = frame.function;
          function.inlined_into_mangled = frame.mangled;
        }
        function.module = module;
        function.build_id = build_id;
        function.file_offsets = mapping && !IsKernelAddress(sample.ip);
        function.self_period.assign(n, 0);
        function.self_samples.assign(n, 0);
        profile_.functions.push_back(std::move(function));
      }
      it->second.function = f->second;
      const bool offsets = profile_.functions[static_cast<size_t>(f->second)].file_offsets;
      it->second.key = offsets && mapping ? mapping->FileOffset(sample.ip) : sample.ip;
    }
  }
  if (it->second.function < 0) return;
  FunctionSamples& function = profile_.functions[static_cast<size_t>(it->second.function)];
  auto& period = function.period_by_offset[it->second.key];
  auto& samples = function.samples_by_offset[it->second.key];
  if (period.empty()) {
    period.assign(n, 0);
    samples.assign(n, 0);
  }
  period[e] += sample.period;
  samples[e] += 1;
  function.self_period[e] += sample.period;
  function.self_samples[e] += 1;
}

InstructionProfile InstructionProfileBuilder::Finish() {
  std::stable_sort(profile_.functions.begin(), profile_.functions.end(),
                   [](const FunctionSamples& a, const FunctionSamples& b) {
                     return !a.self_period.empty() && a.self_period[0] > b.self_period[0];
                   });
  cache_.clear();
  function_index_.clear();
  return std::move(profile_);
}

}  // namespace tprof
