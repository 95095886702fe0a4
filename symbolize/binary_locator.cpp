#include "symbolize/binary_locator.h"

#include <filesystem>

#include "core/base/build_id.h"
#include "core/base/file_paths.h"

namespace tprof {

std::string BinaryLocator::BuildIdOf(const std::string& path) {
  auto it = build_ids_.find(path);
  if (it != build_ids_.end()) return it->second;
  std::string id = options_.build_id_of ? options_.build_id_of(path) : std::string();
  return build_ids_.emplace(path, id).first->second;
}

bool BinaryLocator::BuildIdsAgree(const std::string& recorded, const std::string& path) {
  if (recorded.empty()) return true;
  std::string id = BuildIdOf(path);
  return id.empty() || SameBuildId(recorded, id);
}

const std::string& BinaryLocator::Locate(const std::string& recorded_path,
                                         const std::string& build_id) {
  std::lock_guard lock(mutex_);  // (what it returns is a map node's: it stays where it is)
  std::string key = recorded_path + '\0' + build_id;
  auto it = located_.find(key);
  if (it != located_.end()) return it->second;
  std::string found;
  // An explicit binary with the recorded build-id wins; then one with the same base name.
  if (!build_id.empty())
    for (const std::string& b : options_.binaries) {
      std::string id = BuildIdOf(b);
      if (!id.empty() && SameBuildId(build_id, id)) {
        found = b;
        break;
      }
    }
  if (found.empty())
    for (const std::string& b : options_.binaries)
      if (BaseName(b) == BaseName(recorded_path) && BuildIdsAgree(build_id, b)) {
        found = b;
        break;
      }
  if (found.empty() && !options_.symfs.empty() && !recorded_path.empty() &&
      recorded_path[0] == '/') {
    for (const std::string& candidate :
         {options_.symfs + recorded_path, options_.symfs + "/" + BaseName(recorded_path)})
      if (IsFile(candidate) && BuildIdsAgree(build_id, candidate)) {
        found = candidate;
        break;
      }
  }
  // Symbolizers only trust absolute paths (a relative one would depend on the cwd).
  if (!found.empty()) {
    std::error_code ec;
    std::filesystem::path absolute = std::filesystem::absolute(found, ec);
    if (!ec) found = absolute.lexically_normal().string();
  }
  return located_.emplace(std::move(key), std::move(found)).first->second;
}

ResolvedFrame LocatingResolver::ResolveInProcess(uint32_t pid, const Mapping* mapping,
                                                 uint64_t address) {
  if (!mapping) return inner_.ResolveInProcess(pid, mapping, address);
  const std::string& local = locator_.Locate(mapping->filename, mapping->build_id);
  if (local.empty()) return inner_.ResolveInProcess(pid, mapping, address);
  Mapping stand_in = *mapping;
  stand_in.filename = local;
  stand_in.build_id.clear();  // checked by the locator, which knows about padded ids
  ResolvedFrame frame = inner_.ResolveInProcess(pid, &stand_in, address);
  frame.module = BaseName(mapping->filename);
  return frame;
}

}  // namespace tprof
