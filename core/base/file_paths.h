// Small facts about file paths as perf records them.
#pragma once

#include <string>

namespace tprof {

// The part after the last '/': "/usr/lib/libc.so.6" -> "libc.so.6".
std::string BaseName(const std::string& path);
// The path without the " (deleted)" the kernel appends to a file replaced after it was mapped.
std::string StripDeleted(const std::string& path);
// A regular file (after symlinks) exists at `path`.
bool IsFile(const std::string& path);

}  // namespace tprof
