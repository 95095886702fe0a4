#include "core/base/fatal_exit.h"

#include <unistd.h>

#include <exception>
#include <new>
#include <string>
#include <system_error>

namespace tprof {

void ExitWithOneLine(std::string_view message) {
  const std::string_view prefix = "tprof: ";
  (void)!write(STDERR_FILENO, prefix.data(), prefix.size());
  (void)!write(STDERR_FILENO, message.data(), message.size());
  (void)!write(STDERR_FILENO, "\n", 1);
  _exit(kFatalExitStatus);
}

void ExitOutOfMemory() {
  ExitWithOneLine(
      "out of memory (see ulimit -v and -d, or the cgroup's memory limit): the command did not "
      "finish");
}

void ExitOnUncaughtException() {
  try {
    if (std::exception_ptr e = std::current_exception()) std::rethrow_exception(e);
  } catch (const std::bad_alloc&) {
    ExitOutOfMemory();
  } catch (const std::system_error& e) {
    ExitWithOneLine(std::string("the system refused what the command needed: ") + e.what());
  } catch (const std::exception& e) {
    ExitWithOneLine(std::string("internal error: ") + e.what());
  } catch (...) {
  }
  ExitWithOneLine("internal error: the command ended unexpectedly");
}

void InstallFatalExits() {
  std::set_new_handler(ExitOutOfMemory);
  std::set_terminate(ExitOnUncaughtException);
}

}  // namespace tprof
