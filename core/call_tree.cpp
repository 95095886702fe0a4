#include "core/call_tree.h"

#include <algorithm>

namespace tprof {

CallNode* CallNode::Child(const std::string& child_name, const std::string& child_module,
                          FrameKind child_kind, size_t events) {
  std::string key;
  key.reserve(child_name.size() + child_module.size() + 2);
  key.push_back(static_cast<char>('0' + static_cast<int>(child_kind)));
  key += child_module;
  key.push_back('\0');
  key += child_name;
  auto it = child_index.find(key);
  if (it != child_index.end()) return it->second;
  auto node = std::make_unique<CallNode>();
  node->name = child_name;
  node->module = child_module;
  node->kind = child_kind;
  node->self.assign(events, 0);
  node->total.assign(events, 0);
  node->self_samples.assign(events, 0);
  CallNode* raw = node.get();
  children.push_back(std::move(node));
  child_index.emplace(std::move(key), raw);
  return raw;
}

CallTreeBuilder::CallTreeBuilder(std::vector<EventDesc> events, FrameResolver& resolver,
                                 CallTreeOptions options)
    : events_(std::move(events)), resolver_(resolver), options_(options) {
  root_.name = "all";
  root_.kind = FrameKind::kRoot;
  root_.self.assign(events_.size(), 0);
  root_.total.assign(events_.size(), 0);
  root_.self_samples.assign(events_.size(), 0);
}

const std::vector<CallTreeBuilder::Frame>& CallTreeBuilder::FramesAt(uint32_t pid, uint64_t address,
                                                                     bool kernel) {
  const Mapping* mapping = space_.Find(pid, address);
  auto key = std::make_pair(mapping, address);
  auto it = frame_cache_.find(key);
  if (it != frame_cache_.end()) return it->second;
  ResolvedFrame resolved = resolver_.ResolveInProcess(pid, mapping, address);
  std::vector<Frame> frames;
  const FrameKind base = kernel ? FrameKind::kKernel : FrameKind::kUser;
  if (options_.expand_inlined && resolved.frames.size() > 1) {
    // resolved.frames is innermost first; the tree wants the outermost (out-of-line) first.
    for (auto f = resolved.frames.rbegin(); f != resolved.frames.rend(); ++f)
      frames.push_back({f->function, resolved.module, f->inlined ? FrameKind::kInlined : base});
  } else {
    frames.push_back({resolved.function, resolved.module, base});
  }
  return frame_cache_.emplace(key, std::move(frames)).first->second;
}

void CallTreeBuilder::OnSample(const Sample& sample) {
  if (sample.event >= events_.size()) return;
  path_.clear();
  std::vector<std::pair<uint64_t, bool>> addresses;  // address, kernel
  ForEachFrameAddress(sample, [&](uint64_t address, bool kernel) {
    addresses.push_back({address, kernel});
    return true;
  });
  for (auto it = addresses.rbegin(); it != addresses.rend(); ++it) {
    if (it->second && !options_.include_kernel) continue;
    path_.push_back(&FramesAt(sample.pid, it->first, it->second));
  }

  CallNode* node = &root_;
  const size_t e = sample.event;
  const size_t n = events_.size();
  node->total[e] += sample.period;
  switch (options_.roots) {
    case CallTreeOptions::Roots::kNone:
      break;
    case CallTreeOptions::Roots::kProcess:
      node = node->Child(space_.ThreadName(sample.pid, sample.pid), "", FrameKind::kRoot, n);
      break;
    case CallTreeOptions::Roots::kPid:
      node =
          node->Child(space_.ThreadName(sample.pid, sample.pid) + "-" + std::to_string(sample.pid),
                      "", FrameKind::kRoot, n);
      break;
    case CallTreeOptions::Roots::kThread:
      node = node->Child(space_.ThreadName(sample.pid, sample.tid) + "-" +
                             std::to_string(sample.pid) + "/" + std::to_string(sample.tid),
                         "", FrameKind::kRoot, n);
      break;
  }
  if (node != &root_) node->total[e] += sample.period;
  for (const std::vector<Frame>* frames : path_) {
    for (const Frame& f : *frames) {
      node = node->Child(f.name, f.module, f.kind, n);
      node->total[e] += sample.period;
    }
  }
  node->self[e] += sample.period;
  node->self_samples[e] += 1;
}

namespace {

void Fold(const CallNode& node, std::string& prefix, const FoldedOptions& options,
          std::vector<std::pair<std::string, uint64_t>>& out) {
  const size_t mark = prefix.size();
  if (node.kind != FrameKind::kRoot || !node.module.empty() || node.name != "all") {
    if (!prefix.empty()) prefix.push_back(';');
    std::string name = node.name;
    // ';' separates frames and a trailing number is the count: keep names from containing them.
    std::replace(name.begin(), name.end(), ';', ':');
    prefix += name;
    if (options.annotate && node.kind == FrameKind::kKernel) prefix += "_[k]";
    if (options.annotate && node.kind == FrameKind::kInlined) prefix += "_[i]";
  }
  uint64_t self = options.use_period ? node.self[options.event] : node.self_samples[options.event];
  if (self && !prefix.empty()) out.push_back({prefix, self});
  for (const auto& child : node.children) Fold(*child, prefix, options, out);
  prefix.resize(mark);
}

}  // namespace

std::string RenderFolded(const CallNode& root, const FoldedOptions& options) {
  std::vector<std::pair<std::string, uint64_t>> lines;
  std::string prefix;
  Fold(root, prefix, options, lines);
  std::sort(lines.begin(), lines.end());
  std::string out;
  for (const auto& [stack, count] : lines) out += stack + " " + std::to_string(count) + "\n";
  return out;
}

}  // namespace tprof
