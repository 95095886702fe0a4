// Finds the binaries of a recording made elsewhere: perf.data names files by the path they had
// on the recording machine. A --symfs root (PATH under it, or its base name at the top) and
// explicit --binary files (matched by build-id, else by base name) stand in for them. Wraps any
// FrameResolver; the module keeps its recorded name so reports still say what ran.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "core/model/frame_resolver.h"

namespace tprof {

struct BinarySearchOptions {
  std::string symfs;                  // root directory, empty: none
  std::vector<std::string> binaries;  // explicit files
  // Reads a file's build-id (raw bytes, empty when it has none or is not ELF); the caller's
  // choice of ELF reader.
  std::function<std::string(const std::string& path)> build_id_of;
};

class BinaryLocator {
 public:
  explicit BinaryLocator(BinarySearchOptions options) : options_(std::move(options)) {}
  bool active() const { return !options_.symfs.empty() || !options_.binaries.empty(); }
  // The local file standing for `recorded_path`, or "" when none matches. Safe to call from
  // several threads (the unwinder on the reading thread, symbols on a report's own).
  const std::string& Locate(const std::string& recorded_path, const std::string& build_id);

 private:
  bool BuildIdsAgree(const std::string& recorded, const std::string& path);
  std::string BuildIdOf(const std::string& path);

  BinarySearchOptions options_;
  std::mutex mutex_;                            // guards the maps below
  std::map<std::string, std::string> located_;  // recorded path + build-id -> local path
  std::map<std::string, std::string> build_ids_;
};

class LocatingResolver : public FrameResolver {
 public:
  LocatingResolver(FrameResolver& inner, BinaryLocator& locator)
      : inner_(inner), locator_(locator) {}
  ResolvedFrame Resolve(const Mapping* mapping, uint64_t address) override {
    return ResolveInProcess(0, mapping, address);
  }
  ResolvedFrame ResolveInProcess(uint32_t pid, const Mapping* mapping, uint64_t address) override;

 private:
  FrameResolver& inner_;
  BinaryLocator& locator_;
};

}  // namespace tprof
