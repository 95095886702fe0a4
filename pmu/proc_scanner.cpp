#include "pmu/proc_scanner.h"

#include <dirent.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace tprof {
namespace {

std::vector<pid_t> NumericEntries(const std::string& dir) {
  std::vector<pid_t> ids;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d)) {
      char* end;
      long v = std::strtol(e->d_name, &end, 10);
      if (*end == '\0' && v > 0) ids.push_back(static_cast<pid_t>(v));
    }
    ::closedir(d);
  }
  return ids;
}

}  // namespace

Result<std::vector<pid_t>> ListThreads(pid_t pid) {
  std::vector<pid_t> tids = NumericEntries("/proc/" + std::to_string(pid) + "/task");
  if (tids.empty()) return Error("no process with pid " + std::to_string(pid));
  return tids;
}

std::vector<pid_t> ListProcesses() { return NumericEntries("/proc"); }

Result<ProcessSnapshot> SnapshotProcess(pid_t pid, uint64_t time) {
  ProcessSnapshot snapshot;
  auto tids = ListThreads(pid);
  if (!tids.ok()) return tids.error();
  for (pid_t tid : tids.value()) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/comm");
    CommRecord c;
    c.time = time;
    c.pid = static_cast<uint32_t>(pid);
    c.tid = static_cast<uint32_t>(tid);
    std::getline(in, c.comm);
    snapshot.comms.push_back(std::move(c));
  }
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  std::string line;
  while (std::getline(maps, line)) {
    // start-end perms offset dev inode path
    std::istringstream in(line);
    std::string range, perms, offset, device, inode, path;
    in >> range >> perms >> offset >> device >> inode;
    std::getline(in >> std::ws, path);
    if (perms.size() < 3 || perms[2] != 'x') continue;
    MmapRecord m;
    m.time = time;
    m.pid = static_cast<uint32_t>(pid);
    m.tid = static_cast<uint32_t>(pid);
    size_t dash = range.find('-');
    m.start = std::strtoull(range.substr(0, dash).c_str(), nullptr, 16);
    m.length = std::strtoull(range.substr(dash + 1).c_str(), nullptr, 16) - m.start;
    m.page_offset = std::strtoull(offset.c_str(), nullptr, 16);
    m.prot = 0x1 | 0x4;  // PROT_READ | PROT_EXEC
    m.executable = true;
    m.filename = path.empty() ? "//anon" : path;
    snapshot.mmaps.push_back(std::move(m));
  }
  return snapshot;
}

}  // namespace tprof
