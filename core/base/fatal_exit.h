// How a tprof process ends when it cannot go on: one line on standard error, written without
// allocating (the heap may be what failed), and the commands' runtime-error status. Files being
// written are left as NAME.partial (PartialFileSink), never passed off as complete.
#pragma once

#include <string_view>

namespace tprof {

// The status of a process ended here: the commands' runtime error (cmd/cli_support.h).
inline constexpr int kFatalExitStatus = 1;

// "tprof: MESSAGE", then _exit.
[[noreturn]] void ExitWithOneLine(std::string_view message);

// Out of memory, on whichever thread: without a handler an allocator may abort (SIGABRT, not a
// word), and a std::bad_alloc escaping a worker thread ends the process in std::terminate.
[[noreturn]] void ExitOutOfMemory();

// An exception no thread caught: resources the system refused (a thread it would not start) are
// the runtime error they are; anything else is a bug, reported as one.
[[noreturn]] void ExitOnUncaughtException();

// Both above as the process's new-handler and terminate handler.
void InstallFatalExits();

}  // namespace tprof
