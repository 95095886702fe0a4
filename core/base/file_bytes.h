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
  // Lets the system take back the pages of [begin, end) (a range of view()) that a reader has
  // read and will not come back to soon: a mapped file's pages count toward the process's
  // resident memory for as long as they stay mapped, and a reader that goes front to back
  // would otherwise hold the whole file by its end. Read again, the pages come back from the
  // file, unchanged (the mapping is private and never written). Only whole pages inside the
  // range are given back; bytes that are not a mapping are kept.
  void Release(const char* begin, const char* end) const;

 private:
  // Standard input copied to an unnamed temporary file and mapped; null where no temporary file
  // can be made.
  static Result<std::shared_ptr<const FileBytes>> Spool(int fd, const std::string& path);

  void* map_ = nullptr;
  size_t map_size_ = 0;
  std::string owned_;
  std::string_view view_;
};

}  // namespace tprof
