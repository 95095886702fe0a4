#include "report/folded_stacks.h"

#include <algorithm>
#include <deque>
#include <future>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "report/printf.h"

namespace tprof {
namespace {

// The folded lines as paths of names, first frame to last, in one shared vector: a line is
// views of its frames' names, not a copy of them (a million-stack profile's lines would be a
// hundred MiB of text before sorting).
class FoldedLines {
 public:
  explicit FoldedLines(const FoldedOptions& options) : options_(options) {}

  void Collect(const CallNode& node) {
    const bool shown = node.kind != FrameKind::kRoot || !node.module.empty() || node.name != "all";
    if (shown) path_.push_back(NameOf(node));
    const uint64_t self =
        options_.use_period ? node.self[options_.event] : node.self_samples[options_.event];
    // Frames with empty names leave no text at the start of a line (no ';' follows them), and
    // a line needs some text.
    size_t first = 0;
    while (first < path_.size() && path_[first].empty()) ++first;
    if (self && first < path_.size()) {
      lines_.push_back({names_.size(), path_.size() - first, self});
      names_.insert(names_.end(), path_.begin() + static_cast<ptrdiff_t>(first), path_.end());
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
    // A block at a time, each written on a thread of its own while the next is made: a large
    // profile's lines are a hundred MiB of text, and making them and writing them (into a pipe,
    // often) take about as long.
    constexpr size_t kBlock = 1 << 20;
    std::future<void> writing;
    auto hand_over = [&](std::string&& full) {
      if (writing.valid()) writing.get();  // in order, one at a time
      writing = std::async(std::launch::async, [&out, block = std::move(full)] {
        out.write(block.data(), static_cast<std::streamsize>(block.size()));
      });
    };
    auto empty_block = [] {
      std::string block;
      block.reserve(kBlock + 4096);  // a line seldom overruns the block by more
      return block;
    };
    std::string block = empty_block();
    for (const Line& line : lines_) {
      for (size_t i = 0; i < line.size; ++i) {
        if (i) block += ';';
        block += names_[line.begin + i];
      }
      block += ' ';
      AppendUint(block, line.count);
      block += '\n';
      if (block.size() >= kBlock) {
        hand_over(std::move(block));
        block = empty_block();
      }
    }
    hand_over(std::move(block));
    writing.get();
  }

 private:
  struct Line {
    size_t begin, size;  // into names_
    uint64_t count;
  };

  // The node's name as the line shows it: the node's own text unless it must change.
  std::string_view NameOf(const CallNode& node) {
    const bool mark =
        options_.annotate && (node.kind == FrameKind::kKernel || node.kind == FrameKind::kInlined);
    if (!mark && node.name.view().find(';') == std::string::npos) return node.name;
    std::string name = node.name.str();
    // ';' separates frames and a trailing number is the count: keep names from containing them.
    std::replace(name.begin(), name.end(), ';', ':');
    if (mark) name += node.kind == FrameKind::kKernel ? "_[k]" : "_[i]";
    return renamed_.emplace_back(std::move(name));
  }

  // The lines' texts compared as strings (the names joined by ';'), without joining them.
  int Compare(const Line& a, const Line& b) const {
    for (size_t i = 0;; ++i) {
      const bool a_ends = i == a.size, b_ends = i == b.size;
      if (a_ends || b_ends) return a_ends && b_ends ? 0 : a_ends ? -1 : 1;
      const std::string_view x = names_[a.begin + i], y = names_[b.begin + i];
      if (x.data() == y.data() && x.size() == y.size()) continue;  // one node's: a shared caller
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
  std::vector<std::string_view> path_;
  std::vector<std::string_view> names_;
  std::vector<Line> lines_;
  std::deque<std::string> renamed_;  // names that differ from their node's (a deque: they stay put)
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
