// Reads the GNU build-id note of an ELF file, for mappings the kernel reported without one.
#pragma once

#include <string>
#include <unordered_map>

namespace tprof {

// Returns the raw build-id bytes, or "" when the file is unreadable or has none.
std::string ReadElfBuildId(const std::string& path);

// Memoizes ReadElfBuildId per path: a process maps the same libraries many times.
class BuildIdCache {
 public:
  const std::string& Get(const std::string& path);

 private:
  std::unordered_map<std::string, std::string> ids_;
};

}  // namespace tprof
