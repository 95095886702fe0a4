// Describes processes that already run, from /proc: the records the kernel would have sent had we
// watched them start (comm per thread, executable mappings), for -p, -t and -a.
#pragma once

#include <sys/types.h>

#include <vector>

#include "core/base/error.h"
#include "core/model/profile.h"

namespace tprof {

// Thread ids of a process, from /proc/PID/task.
Result<std::vector<pid_t>> ListThreads(pid_t pid);
// Every process id in /proc.
std::vector<pid_t> ListProcesses();

struct ProcessSnapshot {
  std::vector<CommRecord> comms;
  std::vector<MmapRecord> mmaps;
};
// Reads a process's threads' names and its executable mappings; `time` stamps the records.
Result<ProcessSnapshot> SnapshotProcess(pid_t pid, uint64_t time);

}  // namespace tprof
