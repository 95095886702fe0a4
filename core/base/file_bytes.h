// A whole file's bytes, read once: a read-only mapping of a regular file, or a copy of what a
// pipe, standard input or a /proc file (which reports size 0) gives. Inputs are parsed in place
// through views of these bytes, so they are not copied again.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "core/base/error.h"

namespace tprof {

class FileBytes {
 public:
  // "-" reads standard input.
  static Result<std::shared_ptr<const FileBytes>> Read(const std::string& path);
  static std::shared_ptr<const FileBytes> FromString(std::string bytes);

  FileBytes() = default;
  FileBytes(const FileBytes&) = delete;
  FileBytes& operator=(const FileBytes&) = delete;
  ~FileBytes();

  std::string_view view() const { return view_; }

 private:
  void* map_ = nullptr;
  size_t map_size_ = 0;
  std::string owned_;
  std::string_view view_;
};

}  // namespace tprof
