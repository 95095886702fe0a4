#include "core/format/output_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tprof {

Result<std::unique_ptr<PartialFileSink>> PartialFileSink::Create(const std::string& path) {
  std::string partial = path + ".partial";
  int fd = ::open(partial.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Error("cannot create " + partial + ": " + std::strerror(errno));
  return std::unique_ptr<PartialFileSink>(new PartialFileSink(path, fd));
}

PartialFileSink::PartialFileSink(std::string path, int fd)
    : path_(std::move(path)), partial_path_(path_ + ".partial"), fd_(fd) {}

PartialFileSink::~PartialFileSink() {
  if (fd_ >= 0) ::close(fd_);
}

Status PartialFileSink::Write(std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd_, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return Error("writing " + partial_path_ + ": " + std::strerror(errno));
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

Status PartialFileSink::Commit() {
  if (::fsync(fd_) != 0 && errno != EINVAL)
    return Error("writing " + partial_path_ + ": " + std::strerror(errno));
  if (::close(fd_) != 0) {
    fd_ = -1;
    return Error("closing " + partial_path_ + ": " + std::strerror(errno));
  }
  fd_ = -1;
  if (::access(path_.c_str(), F_OK) == 0) {
    std::string old = path_ + ".old";
    if (::rename(path_.c_str(), old.c_str()) != 0)
      return Error("cannot keep the previous " + path_ + " as " + old + ": " +
                   std::strerror(errno));
  }
  if (::rename(partial_path_.c_str(), path_.c_str()) != 0)
    return Error("cannot rename " + partial_path_ + " to " + path_ + ": " + std::strerror(errno));
  return Status::Ok();
}

}  // namespace tprof
