#include "core/analysis/stream_matcher.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace tprof {
namespace {

std::string ShapeKey(const std::string& function, const std::string& file_key) {
  std::string key = function;
  key.push_back('\0');
  key += file_key;
  return key;
}

std::string LineKey(const std::string& shape, uint32_t line, uint32_t end_line,
                    const StreamEntry& e) {
  return shape + '\0' + std::to_string(line) + ':' + std::to_string(end_line) + ':' +
         std::to_string(e.offset) + ':' + std::to_string(e.end_offset);
}

struct VectorHash {
  size_t operator()(const std::vector<int>& v) const {
    uint64_t h = 0xcbf29ce484222325ULL;
    for (int x : v) h = (h ^ static_cast<uint32_t>(x)) * 0x100000001b3ULL;
    return static_cast<size_t>(h ^ (h >> 29));
  }
};

}  // namespace

StreamMatcher::StreamMatcher(const StreamProfile& old_profile, const StreamProfile& new_profile,
                             SourceTreeMap& trees, StreamMatchOptions options)
    : old_(old_profile), new_(new_profile), options_(std::move(options)) {
  std::unordered_map<std::string, int> keys, shapes;
  for (const StreamEntry& e : old_.entries) {
    std::string shape = ShapeKey(e.function, e.file.empty() ? "" : trees.OldFileKey(e.file));
    old_entry_key_.push_back(
        keys.emplace(LineKey(shape, e.line, e.end_line, e), static_cast<int>(keys.size()))
            .first->second);
    old_entry_shape_.push_back(
        shapes.emplace(std::move(shape), static_cast<int>(shapes.size())).first->second);
  }
  for (const StreamEntry& e : new_.entries) {
    NewEntryInfo info;
    std::string shape = ShapeKey(e.function, e.file.empty() ? "" : trees.NewFileKey(e.file));
    uint32_t line = e.line, end_line = e.end_line;
    if (!e.file.empty()) {
      // Line 0 (no line information) stays 0 on both sides.
      if (e.line) {
        MappedLine m = trees.MapNewLine(e.file, e.line);
        info.changed = info.changed || m.fate == LineFate::kChanged;
        line = m.old_line;
      }
      if (e.end_line) {
        MappedLine m = trees.MapNewLine(e.file, e.end_line);
        info.changed = info.changed || m.fate == LineFate::kChanged;
        end_line = m.old_line;
      }
    }
    if (NamedAsChanged(e.function)) info.changed = true;
    auto key = keys.find(LineKey(shape, line, end_line, e));
    if (key != keys.end()) info.mapped_key = key->second;
    if (!info.changed) info.old_key = info.mapped_key;
    auto s = shapes.find(shape);
    if (s != shapes.end()) info.shape_key = s->second;
    new_entries_.push_back(info);
  }
}

bool StreamMatcher::NamedAsChanged(const std::string& function) const {
  if (options_.changed_functions.count(function)) return true;
  // "flag_func" names "flag_func(unsigned long)": the demangled name without its parameters.
  size_t paren = function.find('(');
  return paren != std::string::npos && options_.changed_functions.count(function.substr(0, paren));
}

bool StreamMatcher::Compatible(const HotStream& o, const HotStream& n, std::vector<bool>& changed,
                               size_t& exact) const {
  if (o.kind != n.kind || o.entries.size() != n.entries.size()) return false;
  changed.assign(n.entries.size(), false);
  exact = 0;
  size_t changes = 0;
  for (size_t p = 0; p < n.entries.size(); ++p) {
    const NewEntryInfo& info = new_entries_[n.entries[p]];
    if (info.shape_key != old_entry_shape_[o.entries[p]]) return false;
    if (info.changed) {
      changed[p] = true;
      ++changes;
    } else if (info.old_key == old_entry_key_[o.entries[p]]) {
      ++exact;
    } else {
      return false;  // an unchanged line elsewhere: a different stream
    }
  }
  return changes > 0;
}

StreamComparison StreamMatcher::CompareStreams() {
  const size_t n_old = old_.streams.size(), n_new = new_.streams.size();
  const size_t top = options_.top;
  std::vector<int> old_pair(n_old, -1), new_pair(n_new, -1);

  // Exact matches, over every stream: a top stream of one profile matches wherever its twin
  // ranks in the other.
  std::unordered_map<std::vector<int>, int, VectorHash> old_index;
  std::unordered_map<std::vector<int>, std::vector<int>, VectorHash> old_shapes, new_shapes;
  std::vector<int> key;
  for (size_t i = 0; i < n_old; ++i) {
    const HotStream& s = old_.streams[i];
    key.assign(1, static_cast<int>(s.kind));
    for (uint32_t e : s.entries) key.push_back(old_entry_key_[e]);
    old_index.emplace(key, static_cast<int>(i));
    key.resize(1);
    for (uint32_t e : s.entries) key.push_back(old_entry_shape_[e]);
    old_shapes[key].push_back(static_cast<int>(i));
  }
  std::vector<bool> exact_pair(n_old, false);
  for (size_t j = 0; j < n_new; ++j) {
    const HotStream& s = new_.streams[j];
    key.assign(1, static_cast<int>(s.kind));
    bool possible = true;
    for (uint32_t e : s.entries) {
      possible = possible && new_entries_[e].old_key >= 0;
      key.push_back(new_entries_[e].old_key);
    }
    if (possible) {
      auto it = old_index.find(key);
      if (it != old_index.end()) {
        old_pair[it->second] = static_cast<int>(j);
        new_pair[j] = it->second;
        exact_pair[it->second] = true;
      }
    }
    if (new_pair[j] < 0) {
      key.resize(1);
      bool shaped = true;
      for (uint32_t e : s.entries) {
        shaped = shaped && new_entries_[e].shape_key >= 0;
        key.push_back(new_entries_[e].shape_key);
      }
      if (shaped) new_shapes[key].push_back(static_cast<int>(j));
    }
  }

  StreamComparison out;
  std::vector<bool> changed, best_changed;
  size_t exact = 0;
  // Source-changed pairs: each unmatched top stream of the new profile with the hottest
  // compatible unmatched old stream (the most entries matching exactly first).
  for (size_t j = 0; j < std::min(top, n_new); ++j) {
    if (new_pair[j] >= 0) continue;
    const HotStream& s = new_.streams[j];
    key.assign(1, static_cast<int>(s.kind));
    for (uint32_t e : s.entries) key.push_back(new_entries_[e].shape_key);
    auto candidates = old_shapes.find(key);
    if (candidates == old_shapes.end()) continue;
    int best = -1;
    size_t best_exact = 0;
    for (int i : candidates->second) {
      if (old_pair[i] >= 0 || !Compatible(old_.streams[i], s, changed, exact)) continue;
      if (best < 0 || exact > best_exact) {
        best = i;
        best_exact = exact;
        best_changed = changed;
      }
    }
    if (best >= 0) {
      old_pair[best] = static_cast<int>(j);
      new_pair[j] = best;
      out.source_changed.push_back({best, static_cast<int>(j), best_changed});
    }
  }
  // ... and each unmatched top old stream with a compatible new one, wherever it ranks.
  for (size_t i = 0; i < std::min(top, n_old); ++i) {
    if (old_pair[i] >= 0) continue;
    const HotStream& s = old_.streams[i];
    key.assign(1, static_cast<int>(s.kind));
    for (uint32_t e : s.entries) key.push_back(old_entry_shape_[e]);
    auto candidates = new_shapes.find(key);
    if (candidates == new_shapes.end()) continue;
    int best = -1;
    size_t best_exact = 0;
    for (int j : candidates->second) {
      if (new_pair[j] >= 0 || !Compatible(s, new_.streams[j], changed, exact)) continue;
      if (best < 0 || exact > best_exact) {
        best = j;
        best_exact = exact;
        best_changed = changed;
      }
    }
    if (best >= 0) {
      old_pair[i] = best;
      new_pair[best] = static_cast<int>(i);
      out.source_changed.push_back({static_cast<int>(i), best, best_changed});
    }
  }

  for (size_t i = 0; i < n_old; ++i)
    if (exact_pair[i] && (i < top || static_cast<size_t>(old_pair[i]) < top))
      out.matched.push_back({static_cast<int>(i), old_pair[i], {}});
  for (size_t i = 0; i < std::min(top, n_old); ++i)
    if (old_pair[i] < 0) out.old_only.push_back(static_cast<int>(i));
  for (size_t j = 0; j < std::min(top, n_new); ++j)
    if (new_pair[j] < 0) out.new_only.push_back(static_cast<int>(j));

  auto hotter = [this](const StreamPair& a, const StreamPair& b) {
    auto share = [this](const StreamPair& p) {
      return std::max(p.old_stream >= 0 ? old_.Share(old_.streams[p.old_stream]) : 0.0,
                      p.new_stream >= 0 ? new_.Share(new_.streams[p.new_stream]) : 0.0);
    };
    return share(a) > share(b);
  };
  std::stable_sort(out.matched.begin(), out.matched.end(), hotter);
  std::stable_sort(out.source_changed.begin(), out.source_changed.end(), hotter);
  return out;
}

BlockComparison StreamMatcher::CompareBlocks() {
  const size_t n_old = old_.blocks.size(), n_new = new_.blocks.size();
  const size_t top = options_.top;
  // Blocks by entry key, hottest first; a key can stand for several blocks (one line holding
  // several blocks, or two copies of the code).
  std::unordered_map<int, std::vector<int>> old_by_key, new_by_key;
  for (size_t i = 0; i < n_old; ++i)
    old_by_key[old_entry_key_[old_.blocks[i].entry]].push_back(static_cast<int>(i));
  // A block whose source changed (or whose function was named) still pairs with the old block
  // at its mapped lines (or offsets), marked: its figures then compare different code.
  for (size_t j = 0; j < n_new; ++j) {
    const NewEntryInfo& info = new_entries_[new_.blocks[j].entry];
    if (info.mapped_key >= 0) new_by_key[info.mapped_key].push_back(static_cast<int>(j));
  }
  std::vector<bool> old_taken(n_old, false), new_taken(n_new, false);
  auto first_free = [](const std::vector<int>& candidates, const std::vector<bool>& taken) {
    for (int c : candidates)
      if (!taken[c]) return c;
    return -1;
  };
  BlockComparison out;
  for (size_t j = 0; j < std::min(top, n_new); ++j) {
    const NewEntryInfo& info = new_entries_[new_.blocks[j].entry];
    BlockRow row;
    row.new_block = static_cast<int>(j);
    row.source_changed = info.changed;
    if (info.mapped_key >= 0) {
      auto it = old_by_key.find(info.mapped_key);
      if (it != old_by_key.end()) row.old_block = first_free(it->second, old_taken);
    }
    if (row.old_block >= 0) old_taken[row.old_block] = true;
    new_taken[j] = true;
    out.rows.push_back(row);
  }
  for (size_t i = 0; i < std::min(top, n_old); ++i) {
    if (old_taken[i]) continue;
    BlockRow row;
    row.old_block = static_cast<int>(i);
    auto it = new_by_key.find(old_entry_key_[old_.blocks[i].entry]);
    if (it != new_by_key.end()) row.new_block = first_free(it->second, new_taken);
    if (row.new_block >= 0) {
      new_taken[row.new_block] = true;
      row.source_changed = new_entries_[new_.blocks[row.new_block].entry].changed;
    } else {
      row.source_changed = NamedAsChanged(old_.entries[old_.blocks[i].entry].function);
    }
    old_taken[i] = true;
    out.rows.push_back(row);
  }
  auto share = [this](const BlockRow& r) {
    return std::max(r.old_block >= 0 ? old_.Share(old_.blocks[r.old_block]) : 0.0,
                    r.new_block >= 0 ? new_.Share(new_.blocks[r.new_block]) : 0.0);
  };
  std::stable_sort(out.rows.begin(), out.rows.end(),
                   [&](const BlockRow& a, const BlockRow& b) { return share(a) > share(b); });
  return out;
}

}  // namespace tprof
