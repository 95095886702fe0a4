// Where a profile's bytes go. A file is written as NAME.partial and renamed to NAME only when it
// is complete, so a crash, a full disk or SIGKILL never leaves a file that looks finished.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "core/base/error.h"

namespace tprof {

class ByteSink {
 public:
  virtual ~ByteSink() = default;
  virtual Status Write(std::string_view bytes) = 0;
  // Makes the written bytes durable and visible under their final name.
  virtual Status Commit() = 0;
};

class PartialFileSink : public ByteSink {
 public:
  // Opens NAME.partial for writing. An existing NAME is kept as NAME.old at commit, as perf does.
  static Result<std::unique_ptr<PartialFileSink>> Create(const std::string& path);
  ~PartialFileSink() override;

  Status Write(std::string_view bytes) override;
  Status Commit() override;

  const std::string& partial_path() const { return partial_path_; }

 private:
  PartialFileSink(std::string path, int fd);

  std::string path_;
  std::string partial_path_;
  int fd_;
};

// A private directory under $TMPDIR (else /tmp), removed with everything in it when the object
// goes. `record -o -` records there, as its symbol and unwinding passes read the file back.
class ScratchDirectory {
 public:
  static Result<ScratchDirectory> Create(const std::string& prefix);
  ScratchDirectory(ScratchDirectory&& other) noexcept : path_(std::move(other.path_)) {
    other.path_.clear();
  }
  ScratchDirectory& operator=(ScratchDirectory&&) = delete;
  ~ScratchDirectory();

  const std::string& path() const { return path_; }

 private:
  explicit ScratchDirectory(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

// Copies the file at `path` to the open descriptor `fd` (named `fd_name` in errors).
Status CopyFileTo(const std::string& path, int fd, const std::string& fd_name);

class StringSink : public ByteSink {
 public:
  explicit StringSink(std::string& out) : out_(out) {}
  Status Write(std::string_view bytes) override {
    out_.append(bytes);
    return Status::Ok();
  }
  Status Commit() override { return Status::Ok(); }

 private:
  std::string& out_;
};

}  // namespace tprof
