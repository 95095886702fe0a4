#include "core/format/output_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

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

Result<ScratchDirectory> ScratchDirectory::Create(const std::string& prefix) {
  const char* tmpdir = std::getenv("TMPDIR");
  std::string pattern =
      std::string(tmpdir && *tmpdir ? tmpdir : "/tmp").append("/").append(prefix).append("XXXXXX");
  if (::mkdtemp(pattern.data()) == nullptr)
    return Error("cannot create a temporary directory " + pattern + ": " + std::strerror(errno));
  return ScratchDirectory(std::move(pattern));
}

ScratchDirectory::~ScratchDirectory() {
  if (path_.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

Status CopyFileTo(const std::string& path, int fd, const std::string& fd_name) {
  int in = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return Error("cannot open " + path + ": " + std::strerror(errno));
  char buffer[1 << 16];
  for (;;) {
    ssize_t n = ::read(in, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(in);
      return Error("reading " + path + ": " + std::strerror(err));
    }
    if (n == 0) break;
    for (ssize_t done = 0; done < n;) {
      ssize_t w = ::write(fd, buffer + done, static_cast<size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) {
        int err = errno;
        ::close(in);
        return Error("writing " + fd_name + ": " + std::strerror(err));
      }
      done += w;
    }
  }
  ::close(in);
  return Status::Ok();
}

}  // namespace tprof
