#include "core/base/file_bytes.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

namespace tprof {

Result<std::shared_ptr<const FileBytes>> FileBytes::Read(const std::string& path) {
  auto bytes = std::make_shared<FileBytes>();
  const bool standard_input = path == "-";
  int fd = standard_input ? 0 : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error("cannot open " + path + ": " + std::strerror(errno));
  auto close_fd = [&] {
    if (!standard_input) ::close(fd);
  };
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    const size_t size = static_cast<size_t>(st.st_size);
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p != MAP_FAILED) {
      // Inputs are read front to back: ask for read-ahead. (Mapping the whole file in up front,
      // MAP_POPULATE, made a 23 MB import slower: it delays the first record.)
      ::madvise(p, size, MADV_SEQUENTIAL);
      ::madvise(p, size, MADV_WILLNEED);
      bytes->map_ = p;
      bytes->map_size_ = size;
      bytes->view_ = std::string_view(static_cast<const char*>(p), size);
      close_fd();
      return std::shared_ptr<const FileBytes>(std::move(bytes));
    }
  }
  // A pipe: copied to an unnamed temporary file, and that mapped, so that a reader going front
  // to back holds a few pages of it rather than all of it (`perf script | tprof report -` is
  // some 4 KB a sample). Where no temporary file can be made, read into memory as below.
  if (standard_input && !(::fstat(fd, &st) == 0 && S_ISREG(st.st_mode))) {
    auto spooled = Spool(fd, path);
    if (!spooled.ok()) return spooled.error();
    if (*spooled) return *spooled;
  }
  // Not mappable (a pipe, a /proc file): read to the end.
  std::string& out = bytes->owned_;
  size_t used = 0;
  out.resize(st.st_size > 0 ? static_cast<size_t>(st.st_size) + 1 : size_t{1} << 16);
  for (;;) {
    if (used == out.size()) out.resize(out.size() * 2);
    ssize_t n = ::read(fd, out.data() + used, out.size() - used);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      std::string message = "cannot read " + path + ": " + std::strerror(errno);
      close_fd();
      return Error(message);
    }
    if (n == 0) break;
    used += static_cast<size_t>(n);
  }
  close_fd();
  out.resize(used);
  bytes->view_ = out;
  return std::shared_ptr<const FileBytes>(std::move(bytes));
}

Result<std::shared_ptr<const FileBytes>> FileBytes::Spool(int fd, const std::string& path) {
  const char* tmpdir = std::getenv("TMPDIR");
  const std::string dir = tmpdir && *tmpdir ? tmpdir : "/tmp";
  const int spool = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (spool < 0) return std::shared_ptr<const FileBytes>();  // read into memory instead
  std::string buffer(size_t{1} << 20, '\0');
  size_t size = 0;
  for (;;) {
    ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      std::string message = "cannot read " + path + ": " + std::strerror(errno);
      ::close(spool);
      return Error(message);
    }
    if (n == 0) break;
    for (ssize_t done = 0; done < n;) {
      ssize_t w = ::write(spool, buffer.data() + done, static_cast<size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) {
        std::string message =
            "cannot copy " + path + " to a temporary file in " + dir + ": " + std::strerror(errno);
        ::close(spool);
        return Error(message);
      }
      done += w;
    }
    size += static_cast<size_t>(n);
  }
  auto bytes = std::make_shared<FileBytes>();
  if (size > 0) {
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, spool, 0);
    if (p == MAP_FAILED) {
      std::string message = "cannot map the copy of " + path + ": " + std::strerror(errno);
      ::close(spool);
      return Error(message);
    }
    ::madvise(p, size, MADV_SEQUENTIAL);
    bytes->map_ = p;
    bytes->map_size_ = size;
    bytes->view_ = std::string_view(static_cast<const char*>(p), size);
  }
  ::close(spool);  // the mapping keeps the unnamed file
  return std::shared_ptr<const FileBytes>(std::move(bytes));
}

std::shared_ptr<const FileBytes> FileBytes::FromString(std::string s) {
  auto bytes = std::make_shared<FileBytes>();
  bytes->owned_ = std::move(s);
  bytes->view_ = bytes->owned_;
  return bytes;
}

void FileBytes::Release(const char* begin, const char* end) const {
  if (!map_) return;
  const char* map = static_cast<const char*>(map_);
  begin = std::max(begin, map);
  end = std::min(end, map + map_size_);
  if (begin >= end) return;
  const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t first = (reinterpret_cast<uintptr_t>(begin) + page - 1) & ~(page - 1);
  const uintptr_t last = reinterpret_cast<uintptr_t>(end) & ~(page - 1);
  if (first < last)
    ::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);  // advice only
}

FileBytes::~FileBytes() {
  if (map_) ::munmap(map_, map_size_);
}

}  // namespace tprof
