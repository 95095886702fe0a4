// Runs a program for an integration test and captures its exit status and output.
#pragma once

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace tprof::testing {

struct CommandResult {
  int exit_code = -1;  // 128 + signal when killed
  std::string out;
  std::string err;
};

struct RunOptions {
  bool new_process_group = false;  // so a test can signal the whole group, as a terminal does
  long file_size_limit = -1;       // RLIMIT_FSIZE in bytes, with SIGXFSZ ignored: a "full disk"
  long data_limit = -1;            // RLIMIT_DATA in bytes: the heap and thread stacks it may map
  int cpu = -1;                    // when >= 0, the program and its children run on this CPU alone
};

inline std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A started program; Wait() collects its result.
class RunningCommand {
 public:
  RunningCommand(const std::vector<std::string>& argv, const RunOptions& options = {}) {
    static int counter = 0;
    std::string base =
        "/tmp/tprof_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
    out_path_ = base + ".out";
    err_path_ = base + ".err";
    pid_ = ::fork();
    if (pid_ == 0) {
      if (options.new_process_group) ::setpgid(0, 0);
      if (options.file_size_limit >= 0) {
        ::signal(SIGXFSZ, SIG_IGN);
        rlimit limit{static_cast<rlim_t>(options.file_size_limit),
                     static_cast<rlim_t>(options.file_size_limit)};
        ::setrlimit(RLIMIT_FSIZE, &limit);
      }
      if (options.data_limit >= 0) {
        rlimit limit{static_cast<rlim_t>(options.data_limit),
                     static_cast<rlim_t>(options.data_limit)};
        ::setrlimit(RLIMIT_DATA, &limit);
      }
      if (options.cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(options.cpu, &set);
        if (::sched_setaffinity(0, sizeof set, &set) != 0) ::_exit(125);
      }
      int out = ::open(out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      int err = ::open(err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      ::dup2(out, 1);
      ::dup2(err, 2);
      int devnull = ::open("/dev/null", O_RDONLY);
      ::dup2(devnull, 0);
      std::vector<char*> args;
      for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      ::execv(args[0], args.data());
      ::_exit(126);
    }
    if (options.new_process_group) ::setpgid(pid_, pid_);  // no race with the child's own call
    own_group_ = options.new_process_group;
  }
  RunningCommand(const RunningCommand&) = delete;
  RunningCommand& operator=(const RunningCommand&) = delete;
  // A test that stops early (a failed ASSERT) leaves no program running to load the machine
  // under the tests that come after it.
  ~RunningCommand() {
    if (waited_) return;
    ::kill(own_group_ ? -pid_ : pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    ::unlink(out_path_.c_str());
    ::unlink(err_path_.c_str());
  }
  pid_t pid() const { return pid_; }
  CommandResult Wait() {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    waited_ = true;
    CommandResult result;
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    result.out = ReadWholeFile(out_path_);
    result.err = ReadWholeFile(err_path_);
    ::unlink(out_path_.c_str());
    ::unlink(err_path_.c_str());
    return result;
  }

 private:
  pid_t pid_;
  bool waited_ = false;
  bool own_group_ = false;
  std::string out_path_, err_path_;
};

inline CommandResult RunCommand(const std::vector<std::string>& argv,
                                const RunOptions& options = {}) {
  return RunningCommand(argv, options).Wait();
}

}  // namespace tprof::testing
