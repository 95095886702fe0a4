#include "report/folded_stacks.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <future>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "report/printf.h"

namespace tprof {
namespace {

// The folded lines as paths of names, first frame to last, in one shared vector: a line is the
// ids of its frames' names, not a copy of them (the benchmark profile's 19,970 lines are 118 MB
// of text). A text gets its id, and is searched for ';', once: it was searched at every node
// (199k names of some 300 characters), and a line held a 16-byte view per frame.
class FoldedLines {
 public:
  explicit FoldedLines(const FoldedOptions& options) : options_(options) {}

  void Collect(const CallNode& node) {
    const bool shown = node.kind != FrameKind::kRoot || !node.module.empty() || node.name != "all";
    if (shown) path_.push_back(IdOf(node));
    const uint64_t self =
        options_.use_period ? node.self[options_.event] : node.self_samples[options_.event];
    // Frames with empty names leave no text at the start of a line (no ';' follows them), and
    // a line needs some text.
    size_t first = 0;
    while (first < path_.size() && names_[path_[first]].empty()) ++first;
    if (self && first < path_.size()) {
      lines_.push_back({ids_.size(), path_.size() - first, self});
      ids_.insert(ids_.end(), path_.begin() + static_cast<ptrdiff_t>(first), path_.end());
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
        block += names_[ids_[line.begin + i]];
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
    size_t begin, size;  // into ids_
    uint64_t count;
  };
  // A node's name as the line shows it, before any change: its text (by address, which the
  // nodes of one function share) and the mark its kind adds.
  struct NameKey {
    const char* data;
    size_t size;
    FrameKind mark;  // kKernel or kInlined when marked, else kRoot
    bool operator==(const NameKey&) const = default;
    template <typename H>
    friend H AbslHashValue(H h, const NameKey& k) {
      return H::combine(std::move(h), k.data, k.size, k.mark);
    }
  };

  // The id of the node's name as the line shows it: the node's own text unless it must change.
  uint32_t IdOf(const CallNode& node) {
    const bool mark =
        options_.annotate && (node.kind == FrameKind::kKernel || node.kind == FrameKind::kInlined);
    const std::string_view text = node.name;
    const NameKey key{text.data(), text.size(), mark ? node.kind : FrameKind::kRoot};
    auto [it, inserted] = id_of_.try_emplace(key, static_cast<uint32_t>(names_.size()));
    if (!inserted) return it->second;
    if (!mark && text.find(';') == std::string::npos) {
      names_.push_back(text);
      return it->second;
    }
    std::string name(text);
    // ';' separates frames and a trailing number is the count: keep names from containing them.
    std::replace(name.begin(), name.end(), ';', ':');
    if (mark) name += node.kind == FrameKind::kKernel ? "_[k]" : "_[i]";
    names_.push_back(renamed_.emplace_back(std::move(name)));
    return it->second;
  }

  // The lines' texts compared as strings (the names joined by ';'), without joining them.
  int Compare(const Line& a, const Line& b) const {
    for (size_t i = 0;; ++i) {
      const bool a_ends = i == a.size, b_ends = i == b.size;
      if (a_ends || b_ends) return a_ends && b_ends ? 0 : a_ends ? -1 : 1;
      const uint32_t id_a = ids_[a.begin + i], id_b = ids_[b.begin + i];
      if (id_a == id_b) continue;  // one text: a shared caller, mostly
      const std::string_view x = names_[id_a], y = names_[id_b];
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
  std::vector<uint32_t> path_;  // the ids of the names from the root to the node being visited
  std::vector<uint32_t> ids_;   // the lines' names, line after line
  std::vector<Line> lines_;
  // Each distinct name once, with its id (3,267 texts for the benchmark's million samples).
  std::vector<std::string_view> names_;
  absl::flat_hash_map<NameKey, uint32_t> id_of_;
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
