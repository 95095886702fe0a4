// Source-line mapping between two versions of a program's source tree: which line of the new
// version was which line of the old one. A stream entry on a line that only moved (lines were
// inserted or deleted above it) still matches its old position; an entry on a changed or new
// line matches nothing, so the stream comparison can say "the source changed here" instead of
// comparing cycles of different code.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/error.h"

namespace tprof {

// The line map of one file: new line -> old line, 0 for a line that is new or changed.
class LineMap {
 public:
  LineMap() = default;
  explicit LineMap(std::vector<uint32_t> new_to_old) : new_to_old_(std::move(new_to_old)) {}

  // 1-based lines. A line past the end of the new file (stale debug info) maps to nothing.
  uint32_t OldLine(uint32_t new_line) const {
    return new_line == 0 || new_line > new_to_old_.size() ? 0 : new_to_old_[new_line - 1];
  }
  size_t new_line_count() const { return new_to_old_.size(); }

 private:
  std::vector<uint32_t> new_to_old_;
};

// Splits text into lines ("\n" or "\r\n" ends a line; a last line without one still counts).
std::vector<std::string_view> SplitLines(std::string_view text);

// Diffs two versions of a file (Myers' O(NP) shortest edit script, from dtl) and returns the
// new-to-old map: lines common to both map to their old position, added lines (which include
// both halves of a changed line) to nothing.
LineMap DiffLines(std::string_view old_text, std::string_view new_text);

// What became of a source line of the new version.
enum class LineFate {
  kUnknown,    // the file is not in both trees (a system header, libc): compared as it is
  kUnchanged,  // the same line in both versions, possibly at another line number
  kChanged,    // new or changed in the new version (or the file is only in the new tree)
};

struct MappedLine {
  LineFate fate = LineFate::kUnknown;
  uint32_t old_line = 0;  // valid for kUnchanged (and kUnknown, where it is the line itself)
};

// Two source trees (before = the old profile's sources, after = the new one's). Recorded file
// names (absolute paths from DWARF) are matched to a tree by their longest path suffix that is
// a file of that tree, so the trees can be checked out anywhere. Files present in both trees are
// diffed on first use.
class SourceTreeMap {
 public:
  // An empty map: no trees, every line kUnknown; files are compared by base name.
  SourceTreeMap() = default;
  // Lists both trees; an error when either is not a readable directory.
  static Result<SourceTreeMap> Open(const std::string& before_dir, const std::string& after_dir);

  bool has_trees() const { return !before_.empty() || !after_.empty(); }

  // The name under which a recorded file is compared between the profiles: its path relative
  // to the tree when the tree has it, else its base name (perf's srcline compares base names).
  std::string OldFileKey(const std::string& recorded_path) const;
  std::string NewFileKey(const std::string& recorded_path) const;

  // Maps a line of a file recorded in the new profile.
  MappedLine MapNewLine(const std::string& recorded_path, uint32_t line);

  // The map of one file by its tree-relative path (diffing it now if needed); null when the
  // file is not in both trees or cannot be read.
  const LineMap* MapOf(const std::string& relative_path);

 private:
  // relative path -> absolute path, for every regular file of a tree.
  using FileIndex = std::map<std::string, std::string>;
  static std::string KeyIn(const FileIndex& tree, const std::string& recorded_path);

  std::string before_root_, after_root_;
  FileIndex before_, after_;
  std::map<std::string, std::unique_ptr<LineMap>> maps_;  // null: not diffable
};

}  // namespace tprof
