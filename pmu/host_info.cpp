#include "pmu/host_info.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <ctime>
#include <fstream>
#include <sstream>

#include "core/base/version.h"

namespace tprof {
namespace {

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  size_t e = s.find_last_not_of(" \t\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

}  // namespace

CpuDescription ParseCpuInfo(const std::string& text) {
  CpuDescription cpu;
  std::istringstream in(text);
  std::string line;
  // Arm's MIDR_EL1 fields as /proc/cpuinfo prints them; -1 where a field is missing.
  long implementer = -1, variant = -1, part = -1, revision = -1;
  while (std::getline(in, line)) {
    size_t colon = line.find(':');
    if (colon == std::string::npos) {
      if (!cpu.model_name.empty() || !cpu.vendor.empty()) break;  // first processor only
      continue;
    }
    std::string key = Trim(line.substr(0, colon));
    std::string value = Trim(line.substr(colon + 1));
    try {
      if (key == "vendor_id")
        cpu.vendor = value;
      else if (key == "cpu family")
        cpu.family = static_cast<uint32_t>(std::stoul(value));
      else if (key == "model")
        cpu.model = static_cast<uint32_t>(std::stoul(value));
      else if (key == "stepping")
        cpu.stepping = static_cast<uint32_t>(std::stoul(value));
      else if (key == "model name")
        cpu.model_name = value;
      else if (key == "CPU implementer") {
        implementer = std::stol(value, nullptr, 0);
        if (cpu.vendor.empty()) cpu.vendor = "ARM";
      } else if (key == "CPU variant")
        variant = std::stol(value, nullptr, 0);
      else if (key == "CPU part")
        part = std::stol(value, nullptr, 0);
      else if (key == "CPU revision")
        revision = std::stol(value, nullptr, 0);
    } catch (const std::exception&) {
      // A field we cannot parse stays unknown.
    }
  }
  if (implementer >= 0 && part >= 0) {
    // MIDR_EL1: implementer [31:24], variant [23:20], architecture [19:16] (0xf: see the ID
    // registers, as every Armv8 core reports), part number [15:4], revision [3:0].
    cpu.midr = static_cast<uint64_t>(implementer & 0xff) << 24 |
               static_cast<uint64_t>(variant < 0 ? 0 : variant & 0xf) << 20 | 0xfu << 16 |
               static_cast<uint64_t>(part & 0xfff) << 4 |
               static_cast<uint64_t>(revision < 0 ? 0 : revision & 0xf);
  }
  return cpu;
}

CpuDescription DetectCpu() {
  std::ifstream in("/proc/cpuinfo");
  std::stringstream text;
  text << in.rdbuf();
  CpuDescription cpu = ParseCpuInfo(text.str());
  // The kernel's own copy of MIDR_EL1 where it exports one (arm64 since Linux 4.11), from the
  // first online CPU that has it; /proc/cpuinfo's fields are the fallback.
  for (int n : OnlineCpus()) {
    std::ifstream midr("/sys/devices/system/cpu/cpu" + std::to_string(n) +
                       "/regs/identification/midr_el1");
    std::string midr_text;
    if (!(midr >> midr_text)) continue;
    try {
      cpu.midr = std::stoull(midr_text, nullptr, 16);
    } catch (const std::exception&) {
      continue;
    }
    break;
  }
  return cpu;
}

std::vector<int> OnlineCpus() {
  std::vector<int> cpus;
  std::ifstream in("/sys/devices/system/cpu/online");
  std::string text;
  if (in >> text) {
    std::stringstream ranges(text);
    std::string range;
    while (std::getline(ranges, range, ',')) {
      size_t dash = range.find('-');
      int first = std::stoi(range.substr(0, dash));
      int last = dash == std::string::npos ? first : std::stoi(range.substr(dash + 1));
      for (int c = first; c <= last; ++c) cpus.push_back(c);
    }
  }
  if (cpus.empty()) {
    long n = ::sysconf(_SC_NPROCESSORS_ONLN);
    for (long c = 0; c < n; ++c) cpus.push_back(static_cast<int>(c));
  }
  return cpus;
}

void FillHostMetadata(Metadata* m) {
  m->tprof_version = kVersion;
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) == 0) m->hostname = host;
  struct utsname u;
  if (::uname(&u) == 0) {
    m->kernel_release = u.release;
    m->architecture = u.machine;
  }
  m->cpu_count = static_cast<uint32_t>(OnlineCpus().size());
  m->cpu = DetectCpu();
  m->clock = "monotonic";
}

uint64_t MonotonicNowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

uint64_t RealtimeNowNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

Result<uint64_t> ReadMaxSampleRate() {
  const char* path = "/proc/sys/kernel/perf_event_max_sample_rate";
  std::ifstream in(path);
  uint64_t rate = 0;
  if (!(in >> rate) || rate == 0) return Error(std::string("-F max: cannot read ") + path);
  return rate;
}

}  // namespace tprof
