#include "report/folded_stacks.h"

#include <algorithm>
#include <sstream>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace tprof {
namespace {

// The folded lines as paths of nodes, first frame to last, in one shared vector: a line is its
// nodes, not a copy of their names (a million-stack profile's lines would be a hundred MiB of
// text before sorting).
class FoldedLines {
 public:
  explicit FoldedLines(const FoldedOptions& options) : options_(options) {}

  void Collect(const CallNode& node) {
    const bool shown = node.kind != FrameKind::kRoot || !node.module.empty() || node.name != "all";
    if (shown) {
      path_.push_back(&node);
      std::string name = node.name;
      // ';' separates frames and a trailing number is the count: keep names from containing them.
      std::replace(name.begin(), name.end(), ';', ':');
      if (options_.annotate && node.kind == FrameKind::kKernel) name += "_[k]";
      if (options_.annotate && node.kind == FrameKind::kInlined) name += "_[i]";
      if (name != node.name) renamed_.emplace(&node, std::move(name));
    }
    const uint64_t self =
        options_.use_period ? node.self[options_.event] : node.self_samples[options_.event];
    // Frames with empty names leave no text at the start of a line (no ';' follows them), and
    // a line needs some text.
    size_t first = 0;
    while (first < path_.size() && Name(path_[first]).empty()) ++first;
    if (self && first < path_.size()) {
      lines_.push_back({nodes_.size(), path_.size() - first, self});
      nodes_.insert(nodes_.end(), path_.begin() + static_cast<ptrdiff_t>(first), path_.end());
    }
    for (const auto& child : node.children) Collect(*child);
    if (shown) path_.pop_back();
  }

  // In the order of the lines' text (then count), as `sort` orders FlameGraph's folded files.
  void Sort() {
    std::sort(lines_.begin(), lines_.end(), [this](const Line& a, const Line& b) {
      const int order = Compare(a, b);
      return order != 0 ? order < 0 : a.count < b.count;
    });
  }

  void Write(std::ostream& out) const {
    for (const Line& line : lines_) {
      for (size_t i = 0; i < line.size; ++i) out << (i ? ";" : "") << Name(nodes_[line.begin + i]);
      out << ' ' << line.count << '\n';
    }
  }

 private:
  struct Line {
    size_t begin, size;  // into nodes_
    uint64_t count;
  };

  std::string_view Name(const CallNode* node) const {
    auto it = renamed_.find(node);
    return it == renamed_.end() ? std::string_view(node->name) : std::string_view(it->second);
  }

  // The lines' texts compared as strings (the names joined by ';'), without joining them.
  int Compare(const Line& a, const Line& b) const {
    for (size_t i = 0;; ++i) {
      const bool a_ends = i == a.size, b_ends = i == b.size;
      if (a_ends || b_ends) return a_ends && b_ends ? 0 : a_ends ? -1 : 1;
      const CallNode* x_node = nodes_[a.begin + i];
      const CallNode* y_node = nodes_[b.begin + i];
      if (x_node == y_node) continue;  // a shared caller: the same text
      const std::string_view x = Name(x_node), y = Name(y_node);
      const size_t common = std::min(x.size(), y.size());
      if (const int c = x.substr(0, common).compare(y.substr(0, common)); c != 0) return c;
      if (x.size() == y.size()) continue;
      // One name is a prefix of the other: the shorter line goes on with ';' or ends there.
      if (x.size() < y.size()) {
        if (i + 1 == a.size) return -1;
        return ';' < y[x.size()] ? -1 : ';' > y[x.size()] ? 1 : 0;
      }
      if (i + 1 == b.size) return 1;
      return x[y.size()] < ';' ? -1 : x[y.size()] > ';' ? 1 : 0;
    }
  }

  const FoldedOptions& options_;
  std::vector<const CallNode*> path_;
  std::vector<const CallNode*> nodes_;
  std::vector<Line> lines_;
  absl::flat_hash_map<const CallNode*, std::string> renamed_;  // where the text differs
};

}  // namespace

void WriteFolded(const CallNode& root, const FoldedOptions& options, std::ostream& out) {
  FoldedLines lines(options);
  lines.Collect(root);
  lines.Sort();
  lines.Write(out);
}

std::string RenderFolded(const CallNode& root, const FoldedOptions& options) {
  std::ostringstream out;
  WriteFolded(root, options, out);
  return out.str();
}

}  // namespace tprof
