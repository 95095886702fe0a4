// A command started for profiling: forked at once but held before exec until the events are
// attached, so counting starts exactly at exec (enable_on_exec).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "core/base/error.h"

namespace tprof {

class Workload {
 public:
  // Forks; the child waits for Start() and then execs argv[0] (searched in PATH). With
  // `stdout_to_stderr`, the child's standard output is its standard error (record -o - keeps
  // standard output for the profile).
  static Result<Workload> Create(const std::vector<std::string>& argv,
                                 bool stdout_to_stderr = false);
  Workload(Workload&& other) noexcept;
  Workload& operator=(Workload&&) = delete;
  Workload(const Workload&) = delete;
  ~Workload();

  pid_t pid() const { return pid_; }
  // Lets the child exec; fails with the reason when exec fails (missing binary, no permission).
  Status Start();
  // Whether Start() let the program run: until then, nothing of it was recorded.
  bool started() const { return started_; }
  // A file descriptor that becomes readable when the child exits (a pidfd).
  int exit_fd() const { return pidfd_; }
  // Reaps the child; returns the wait status.
  Result<int> Wait();

 private:
  Workload(pid_t pid, int start_fd, int error_fd, int pidfd)
      : pid_(pid), start_fd_(start_fd), error_fd_(error_fd), pidfd_(pidfd) {}

  pid_t pid_ = -1;
  int start_fd_ = -1;
  int error_fd_ = -1;
  int pidfd_ = -1;
  bool reaped_ = false;
  bool started_ = false;
  std::string program_;
};

}  // namespace tprof
