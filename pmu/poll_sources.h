// What the poll loops of recording and counting wait on besides the kernel's buffers: the
// termination signals as a descriptor, and owned descriptors (timers, pidfds).
#pragma once

#include <signal.h>
#include <sys/signalfd.h>
#include <sys/types.h>
#include <unistd.h>

namespace tprof {

// Blocks the termination signals while recording and delivers them through a descriptor, so the
// poll loop sees them without a handler or global state. Restores the mask when done.
class SignalWatch {
 public:
  SignalWatch() {
    sigemptyset(&set_);
    for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&set_, s);
    sigprocmask(SIG_BLOCK, &set_, &old_);
    fd_ = signalfd(-1, &set_, SFD_CLOEXEC | SFD_NONBLOCK);
  }
  ~SignalWatch() {
    if (fd_ >= 0) ::close(fd_);
    sigprocmask(SIG_SETMASK, &old_, nullptr);
  }
  SignalWatch(const SignalWatch&) = delete;
  SignalWatch& operator=(const SignalWatch&) = delete;
  int fd() const { return fd_; }
  // The next pending signal, with the sender's pid (0 when the kernel sent it, e.g. the
  // terminal's Ctrl-C, which a launched workload in the same process group receives as well).
  bool Next(int* signal, pid_t* sender) {
    signalfd_siginfo info;
    if (::read(fd_, &info, sizeof info) != sizeof info) return false;
    *signal = static_cast<int>(info.ssi_signo);
    *sender = static_cast<pid_t>(info.ssi_pid);
    return true;
  }

 private:
  sigset_t set_, old_;
  int fd_ = -1;
};

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace tprof
