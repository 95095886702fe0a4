// Folded stacks named as FlameGraph's stackcollapse-perf.pl names them, for pipelines and tools
// built around its output: the process name (spaces as '_') as root, "[module]" for unknown
// symbols, names cut at the first '(' (C++ parameter lists), Java "Lpkg/Class;" signatures
// tidied, each sample of the first event counted by its period (1 where perf script printed
// none), a last sample without the blank line that ends it dropped, and its options (--pid, --tid,
// --kernel,
// --jit, --all, --addrs). tprof's own folded style (report/folded_stacks.h) is richer; this
// one is for byte-for-byte compatibility.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/model/address_space.h"
#include "core/model/frame_resolver.h"
#include "core/model/named_frames.h"

namespace tprof {

struct StackcollapseOptions {
  enum class Root { kComm, kPid, kTid } root = Root::kComm;  // --pid, --tid
  bool mark_kernel = false;                                  // --kernel (and --all): "_[k]"
  bool mark_jit = false;                                     // --jit (and --all): "_[j]"
  bool addresses = false;     // --addrs: "[module <address>]" for unknown symbols
  uint32_t event = 0;         // the event folded; stackcollapse-perf keeps the first it sees
  bool pids_unknown = false;  // perf script printed tids only: the root reads "comm-?"
  // Frames tprof resolved itself (not printed by perf script): inlined calls as "a->b" chains,
  // which stackcollapse-perf marks "_[i]".
  bool expand_inlined = true;
};

// One frame's name(s) by stackcollapse-perf's rules: `symbol` as printed (without "+0x"),
// `module_path` as printed between the parentheses, `address` its printed address, `root` the
// stack's root ("java", "java-?"). Inlined chains "a->b" give several names, root side first.
// Empty when the frame is skipped (a symbol starting with '(').
std::vector<std::string> StackcollapseNames(std::string_view symbol, std::string_view module_path,
                                            std::string_view address, std::string_view root,
                                            const StackcollapseOptions& options);

class StackcollapseFolder : public ProcessTrackingVisitor {
 public:
  // `printed` (may be null) holds how perf script printed each frame; other frames are named
  // from `resolver`.
  StackcollapseFolder(FrameResolver& resolver, const NamedFrameTable* printed,
                      StackcollapseOptions options)
      : resolver_(resolver), printed_(printed), options_(options) {}

  void OnSample(const Sample& sample) override;

  // "root;...;leaf count" lines, sorted bytewise as Perl's sort does.
  std::string Render() const;
  void Render(std::ostream& out) const;

 private:
  FrameResolver& resolver_;
  const NamedFrameTable* printed_;
  StackcollapseOptions options_;
  // Names of a frame perf script printed, by its made-up address's slot, under a java root
  // ([1]) or another ([0]): a stack repeats its frames over and over.
  const std::vector<std::string>& PrintedNames(uint64_t address, const PrintedFrame& printed,
                                               std::string_view root);
  std::vector<std::unique_ptr<std::vector<std::string>>> printed_names_[2];
  absl::flat_hash_map<std::string, uint64_t> stacks_;
  // The last sample read, while it was the fold's event: dropped by Render when the text ended
  // inside it (NamedFrameTable::final_sample_unterminated).
  std::string last_stack_;
  uint64_t last_period_ = 0;
  bool last_sample_folded_ = false;
};

}  // namespace tprof
