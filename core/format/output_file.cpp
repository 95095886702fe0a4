#include "core/format/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace tprof {

Result<OutputTarget> ResolveOutputTarget(const std::string& path) {
  std::string target = path;
  // Follow links, each relative to the directory of the link it came from (a bounded number:
  // a loop is refused as the kernel would).
  for (int hops = 0;; ++hops) {
    struct stat link {};
    if (::lstat(target.c_str(), &link) != 0) {
      if (errno == ENOENT) return OutputTarget{OutputTarget::Kind::kFile, target};
      return Error("cannot write " + path + ": " + std::strerror(errno));
    }
    if (!S_ISLNK(link.st_mode)) break;
    if (hops == 40) return Error("cannot write " + path + ": " + std::strerror(ELOOP));
    std::string pointed(static_cast<size_t>(link.st_size > 0 ? link.st_size : 4096) + 1, '\0');
    const ssize_t n = ::readlink(target.c_str(), pointed.data(), pointed.size());
    if (n < 0) return Error("cannot read the link " + target + ": " + std::strerror(errno));
    pointed.resize(static_cast<size_t>(n));
    if (!pointed.empty() && pointed[0] != '/') {
      const size_t slash = target.rfind('/');
      pointed = (slash == std::string::npos ? "" : target.substr(0, slash + 1)) + pointed;
    }
    target = pointed;
  }
  struct stat st {};
  if (::stat(target.c_str(), &st) != 0)
    return Error("cannot write " + path + ": " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) return Error("cannot write " + path + ": it is a directory");
  if (S_ISREG(st.st_mode)) return OutputTarget{OutputTarget::Kind::kFile, target};
  return OutputTarget{OutputTarget::Kind::kStream, target};
}

Result<StreamOutput> StreamOutput::Open(const std::string& path) {
  int fd;
  do fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) return Error("cannot open " + path + " for writing: " + std::strerror(errno));
  return StreamOutput(path, fd);
}

StreamOutput::~StreamOutput() {
  if (fd_ >= 0) ::close(fd_);
}

Status StreamOutput::CopyFrom(const std::string& file) const {
  return CopyFileTo(file, fd_, path_);
}

Result<std::unique_ptr<PartialFileSink>> PartialFileSink::Create(const std::string& path) {
  // Never replace what is not a regular file (see ResolveOutputTarget): callers resolve first;
  // this is the last line of defence.
  auto target = ResolveOutputTarget(path);
  if (!target.ok()) return target.error();
  if (target->kind != OutputTarget::Kind::kFile)
    return Error("cannot write " + path +
                 ": it is not a regular file, and a profile is renamed into place");
  std::string partial = target->path + ".partial";
  int fd = ::open(partial.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Error("cannot create " + partial + ": " + std::strerror(errno));
  return std::unique_ptr<PartialFileSink>(new PartialFileSink(target->path, fd));
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
  struct stat existing {};
  if (::lstat(path_.c_str(), &existing) == 0 && !S_ISREG(existing.st_mode))
    return Error("cannot replace " + path_ + ": it is no longer a regular file (the profile is " +
                 partial_path_ + ")");
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
