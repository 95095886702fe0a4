#include "core/analysis/source_line_map.h"

#include <dtl/dtl.hpp>
#include <filesystem>
#include <unordered_map>

#include "core/base/file_bytes.h"
#include "core/base/file_paths.h"

namespace tprof {

std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    start = end + 1;
  }
  return lines;
}

LineMap DiffLines(std::string_view old_text, std::string_view new_text) {
  std::vector<std::string_view> old_lines = SplitLines(old_text);
  std::vector<std::string_view> new_lines = SplitLines(new_text);
  // The diff compares integers: one id per distinct line text.
  std::unordered_map<std::string_view, int> ids;
  auto to_ids = [&ids](const std::vector<std::string_view>& lines) {
    std::vector<int> out;
    out.reserve(lines.size());
    for (std::string_view line : lines)
      out.push_back(ids.emplace(line, static_cast<int>(ids.size())).first->second);
    return out;
  };
  std::vector<int> a = to_ids(old_lines);
  std::vector<int> b = to_ids(new_lines);

  std::vector<uint32_t> new_to_old(b.size(), 0);
  if (a == b) {
    for (size_t i = 0; i < b.size(); ++i) new_to_old[i] = static_cast<uint32_t>(i + 1);
    return LineMap(std::move(new_to_old));
  }
  dtl::Diff<int, std::vector<int>> diff(a, b);
  diff.compose();
  for (const auto& [element, info] : diff.getSes().getSequence()) {
    (void)element;
    // Indexes are 1-based; a common element carries both.
    if (info.type == dtl::SES_COMMON && info.afterIdx >= 1 &&
        static_cast<size_t>(info.afterIdx) <= b.size())
      new_to_old[info.afterIdx - 1] = static_cast<uint32_t>(info.beforeIdx);
  }
  return LineMap(std::move(new_to_old));
}

namespace {

Result<std::map<std::string, std::string>> ListTree(const std::string& root) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return Error(root + ": not a directory");
  std::map<std::string, std::string> files;
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec);
  if (ec) return Error(root + ": " + ec.message());
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) return Error(root + ": " + ec.message());
    if (!it->is_regular_file(ec)) continue;
    std::string relative = fs::relative(it->path(), root, ec).generic_string();
    if (ec || relative.empty()) continue;
    files.emplace(relative, it->path().string());
  }
  return files;
}

bool ReadFile(const std::string& path, std::string& out) {
  auto bytes = FileBytes::Read(path);
  if (!bytes.ok()) return false;
  out = (*bytes)->view();
  return true;
}

}  // namespace

Result<SourceTreeMap> SourceTreeMap::Open(const std::string& before_dir,
                                          const std::string& after_dir) {
  SourceTreeMap map;
  auto before = ListTree(before_dir);
  if (!before.ok()) return before.error().WithContext("--before");
  auto after = ListTree(after_dir);
  if (!after.ok()) return after.error().WithContext("--after");
  map.before_root_ = before_dir;
  map.after_root_ = after_dir;
  map.before_ = std::move(before.value());
  map.after_ = std::move(after.value());
  return map;
}

std::string SourceTreeMap::KeyIn(const FileIndex& tree, const std::string& recorded_path) {
  // The longest suffix of the recorded path, at a '/' boundary, that names a file of the tree.
  size_t from = 0;
  while (from < recorded_path.size()) {
    std::string suffix = recorded_path.substr(from);
    if (!suffix.empty() && suffix[0] != '/' && tree.count(suffix)) return suffix;
    size_t slash = recorded_path.find('/', from);
    if (slash == std::string::npos) break;
    from = slash + 1;
  }
  return std::string();
}

std::string SourceTreeMap::OldFileKey(const std::string& recorded_path) const {
  std::string key = KeyIn(before_, recorded_path);
  return key.empty() ? BaseName(recorded_path) : key;
}

std::string SourceTreeMap::NewFileKey(const std::string& recorded_path) const {
  std::string key = KeyIn(after_, recorded_path);
  return key.empty() ? BaseName(recorded_path) : key;
}

const LineMap* SourceTreeMap::MapOf(const std::string& relative_path) {
  auto cached = maps_.find(relative_path);
  if (cached != maps_.end()) return cached->second.get();
  std::unique_ptr<LineMap> map;
  auto old_file = before_.find(relative_path);
  auto new_file = after_.find(relative_path);
  std::string old_text, new_text;
  if (old_file != before_.end() && new_file != after_.end() &&
      ReadFile(old_file->second, old_text) && ReadFile(new_file->second, new_text))
    map = std::make_unique<LineMap>(DiffLines(old_text, new_text));
  return maps_.emplace(relative_path, std::move(map)).first->second.get();
}

MappedLine SourceTreeMap::MapNewLine(const std::string& recorded_path, uint32_t line) {
  std::string key = KeyIn(after_, recorded_path);
  if (key.empty()) return {LineFate::kUnknown, line};
  if (!before_.count(key)) return {LineFate::kChanged, 0};  // a file new in this version
  const LineMap* map = MapOf(key);
  if (!map) return {LineFate::kUnknown, line};
  uint32_t old_line = map->OldLine(line);
  if (old_line == 0) return {LineFate::kChanged, 0};
  return {LineFate::kUnchanged, old_line};
}

}  // namespace tprof
