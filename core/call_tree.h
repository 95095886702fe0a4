// Samples aggregated into a tree of calls, root first: every distinct path of functions from a
// root (optionally a process or thread) to a leaf is one node chain, with the period each event
// spent exactly there (self) and below (total). Inlined calls are frames of their own. The tree
// is what folded stacks, flame graphs and exporters render.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/address_space.h"
#include "core/frame_resolver.h"
#include "core/profile.h"

namespace tprof {

enum class FrameKind : uint8_t { kUser, kKernel, kInlined, kRoot };

struct CallNode {
  std::string name;
  std::string module;
  FrameKind kind = FrameKind::kUser;
  std::vector<uint64_t> self;   // per event: period of samples whose leaf is this node
  std::vector<uint64_t> total;  // per event: period of samples through this node
  std::vector<uint64_t> self_samples;
  std::vector<std::unique_ptr<CallNode>> children;
  std::unordered_map<std::string, CallNode*> child_index;  // by kind + module + name

  CallNode* Child(const std::string& name, const std::string& module, FrameKind kind,
                  size_t events);
};

struct CallTreeOptions {
  enum class Roots { kNone, kProcess, kPid, kThread } roots = Roots::kNone;
  bool include_kernel = true;
  bool expand_inlined = true;
};

class CallTreeBuilder : public RecordVisitor {
 public:
  CallTreeBuilder(std::vector<EventDesc> events, FrameResolver& resolver, CallTreeOptions options);

  void OnSample(const Sample& sample) override;
  void OnMmap(const MmapRecord& r) override { space_.OnMmap(r); }
  void OnComm(const CommRecord& r) override { space_.OnComm(r); }
  void OnTask(const TaskRecord& r) override { space_.OnTask(r); }

  const CallNode& root() const { return root_; }
  const std::vector<EventDesc>& events() const { return events_; }

 private:
  struct Frame {
    std::string name, module;
    FrameKind kind;
  };
  // The frames of one address, outermost first (inlined callers before their inlinees).
  const std::vector<Frame>& FramesAt(uint32_t pid, uint64_t address, bool kernel);

  std::vector<EventDesc> events_;
  FrameResolver& resolver_;
  CallTreeOptions options_;
  AddressSpace space_;
  CallNode root_;
  std::map<std::pair<const Mapping*, uint64_t>, std::vector<Frame>> frame_cache_;
  std::vector<const std::vector<Frame>*> path_;  // reused per sample
};

// FlameGraph's folded format: one line per distinct stack, root first, frames joined by ';',
// then a space and the count. Kernel frames end in "_[k]" and inlined ones in "_[i]" when
// `annotate`, as FlameGraph's colour palettes expect.
struct FoldedOptions {
  size_t event = 0;
  bool annotate = true;
  bool use_period = true;  // counts are periods (as perf script's default); else sample counts
};
std::string RenderFolded(const CallNode& root, const FoldedOptions& options);

}  // namespace tprof
