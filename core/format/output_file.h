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

// Where an output named on the command line really goes. A profile is written as NAME.partial
// and renamed over NAME with the previous NAME kept as NAME.old: right for a regular file, and
// wrong for anything else, which the rename would replace (`-o /dev/null` run as root would leave
// /dev/null a regular file and the device at /dev/null.old). So:
//  - a symbolic link is followed: the file written is its target (a dangling link's target is
//    created), and the link stays;
//  - a character or block device, a FIFO or a socket is a stream: the profile is written in a
//    private directory and copied to it, opened for writing, once complete;
//  - a directory is refused.
struct OutputTarget {
  enum class Kind { kFile, kStream };
  Kind kind = Kind::kFile;
  std::string path;  // kFile: the file to write (a link's target); kStream: the stream's path
};
Result<OutputTarget> ResolveOutputTarget(const std::string& path);

// A stream output (OutputTarget::Kind::kStream), opened before anything is recorded or any
// private directory made: a FIFO waits for its reader there, as `perf record -o FIFO` does, where
// Ctrl-C leaves nothing behind, rather than after the workload has run.
class StreamOutput {
 public:
  static Result<StreamOutput> Open(const std::string& path);
  StreamOutput(StreamOutput&& other) noexcept : path_(std::move(other.path_)), fd_(other.fd_) {
    other.fd_ = -1;
  }
  StreamOutput& operator=(StreamOutput&&) = delete;
  ~StreamOutput();

  const std::string& path() const { return path_; }
  // Copies the complete file at `file` into the stream.
  Status CopyFrom(const std::string& file) const;

 private:
  StreamOutput(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  std::string path_;
  int fd_;
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
