#include "core/base/file_paths.h"

#include <sys/stat.h>

#include <string_view>

namespace tprof {

std::string BaseName(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string StripDeleted(const std::string& path) {
  static constexpr std::string_view kSuffix = " (deleted)";
  if (path.size() > kSuffix.size() && path.ends_with(kSuffix))
    return path.substr(0, path.size() - kSuffix.size());
  return path;
}

bool IsFile(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace tprof
