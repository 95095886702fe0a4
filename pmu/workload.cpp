#include "pmu/workload.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tprof {

Result<Workload> Workload::Create(const std::vector<std::string>& argv, bool stdout_to_stderr) {
  if (argv.empty()) return Error("no command given to profile");
  int start_pipe[2];
  int error_pipe[2];
  if (::pipe2(start_pipe, O_CLOEXEC) != 0 || ::pipe2(error_pipe, O_CLOEXEC) != 0)
    return Error(std::string("pipe: ") + std::strerror(errno));
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  pid_t pid = ::fork();
  if (pid < 0) return Error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::close(start_pipe[1]);
    ::close(error_pipe[0]);
    char go;
    // Wait until the parent has attached the events (or died: then read returns 0 and we stop).
    if (::read(start_pipe[0], &go, 1) != 1) ::_exit(127);
    if (stdout_to_stderr && ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0) ::_exit(127);
    ::execvp(args[0], args.data());
    int err = errno;
    if (::write(error_pipe[1], &err, sizeof err) < 0) {
      // Nothing more to do: the parent will see exit status 127.
    }
    ::_exit(127);
  }
  ::close(start_pipe[0]);
  ::close(error_pipe[1]);
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) {
    int err = errno;
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    return Error(std::string("pidfd_open: ") + std::strerror(err));
  }
  Workload w(pid, start_pipe[1], error_pipe[0], pidfd);
  w.program_ = argv[0];
  return w;
}

Workload::Workload(Workload&& o) noexcept
    : pid_(o.pid_),
      start_fd_(o.start_fd_),
      error_fd_(o.error_fd_),
      pidfd_(o.pidfd_),
      reaped_(o.reaped_),
      started_(o.started_),
      program_(std::move(o.program_)) {
  o.pid_ = -1;
  o.start_fd_ = o.error_fd_ = o.pidfd_ = -1;
}

Workload::~Workload() {
  if (pid_ > 0 && !reaped_) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  for (int fd : {start_fd_, error_fd_, pidfd_})
    if (fd >= 0) ::close(fd);
}

Status Workload::Start() {
  char go = 1;
  if (::write(start_fd_, &go, 1) != 1)
    return Error(std::string("starting the workload: ") + std::strerror(errno));
  ::close(start_fd_);
  start_fd_ = -1;
  int err = 0;
  ssize_t n;
  do {
    n = ::read(error_fd_, &err, sizeof err);
  } while (n < 0 && errno == EINTR);
  ::close(error_fd_);
  error_fd_ = -1;
  if (n == sizeof err) {
    ::waitpid(pid_, nullptr, 0);
    reaped_ = true;
    return Error("cannot run '" + program_ + "': " + std::strerror(err));
  }
  started_ = true;
  return Status::Ok();
}

Result<int> Workload::Wait() {
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0) {
    if (errno != EINTR) return Error(std::string("waitpid: ") + std::strerror(errno));
  }
  reaped_ = true;
  return status;
}

}  // namespace tprof
