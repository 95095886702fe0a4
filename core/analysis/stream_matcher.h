// Matching the hot streams (and basic blocks) of two profiles of two builds of a program. Two
// streams match when all their entries match: same function, same file, and the new entry's
// line maps (core/analysis/source_line_map.h) to the old entry's line. An entry whose line is new
// or changed in the new source, or whose function is named as changed (code changed without the
// source: compiler flags), cannot match; a stream whose only differences are such entries is
// paired with its old counterpart as "source changed", with those entries marked, because its
// cycles then compare different code.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "core/analysis/hot_streams.h"
#include "core/analysis/source_line_map.h"

namespace tprof {

struct StreamMatchOptions {
  size_t top = 10;  // streams (and blocks) of each profile shown: its N hottest
  // Functions whose code changed without their source (compiler flags), by demangled name
  // with or without the parameter list.
  std::set<std::string> changed_functions;
};

struct StreamPair {
  int old_stream = -1;  // index into the old profile's streams; -1: none
  int new_stream = -1;
  // Per entry position (source-changed pairs): the entry changed. Empty for exact matches.
  std::vector<bool> changed;
};

struct StreamComparison {
  std::vector<StreamPair> matched;         // hottest first (by the larger share of the two)
  std::vector<StreamPair> source_changed;  // hottest first
  std::vector<int> old_only;               // among the old profile's top streams
  std::vector<int> new_only;
};

struct BlockRow {
  int old_block = -1;  // index into the old profile's blocks; -1: none
  int new_block = -1;
  bool source_changed = false;  // the new block's lines changed, or its function was named
};

struct BlockComparison {
  std::vector<BlockRow> rows;  // by the larger share of the two, descending
};

// Compares two stream profiles. `trees` maps new lines to old ones; an empty SourceTreeMap
// compares lines as they are, files by base name.
class StreamMatcher {
 public:
  StreamMatcher(const StreamProfile& old_profile, const StreamProfile& new_profile,
                SourceTreeMap& trees, StreamMatchOptions options);

  StreamComparison CompareStreams();
  BlockComparison CompareBlocks();

  // Whether a new entry changed (its line is new or changed, or its function was named).
  bool EntryChanged(uint32_t new_entry) const { return new_entries_[new_entry].changed; }

 private:
  struct NewEntryInfo {
    // The old entry key its function, file and mapped lines give; -1: no old entry has it.
    int mapped_key = -1;
    int old_key = -1;    // mapped_key when the entry did not change; else -1
    int shape_key = -1;  // function + file, in the old profile's shape keys; -1: none
    bool changed = false;
  };
  // A function named by options.changed_functions, exactly or without its parameter list.
  bool NamedAsChanged(const std::string& function) const;
  bool Compatible(const HotStream& old_stream, const HotStream& new_stream,
                  std::vector<bool>& changed, size_t& exact) const;

  const StreamProfile& old_;
  const StreamProfile& new_;
  StreamMatchOptions options_;
  std::vector<int> old_entry_key_;    // per old entry: key id
  std::vector<int> old_entry_shape_;  // per old entry: shape id
  std::vector<NewEntryInfo> new_entries_;
};

}  // namespace tprof
