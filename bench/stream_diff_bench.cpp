// Times `tprof diff --stream OLD NEW` on two synthetic profiles of N samples each (default one
// million): callchains drawn, skewed as in real programs, from 5,000 stacks of 4-12 frames over
// 8,000 distinct addresses of a real binary (the tprof binary unless BINARY is given, so the
// symbolizer does real lookups). NEW shares 90% of OLD's stacks. With --branches the samples
// carry 16-entry branch stacks instead (and --blocks is timed too). Goal: under 2 s.
//   stream_diff_bench [SAMPLES] [--branches] [--binary BINARY] [--tprof TPROF]
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "core/format/profile_writer.h"

namespace {

using Clock = std::chrono::steady_clock;
constexpr uint64_t kBase = 0x400000;

struct Pools {
  std::vector<uint64_t> addresses;
  std::vector<std::vector<uint64_t>> stacks;
};

Pools MakePools(uint64_t text_size, uint32_t seed) {
  std::mt19937_64 rng(seed);
  Pools pools;
  for (int i = 0; i < 8000; ++i) pools.addresses.push_back(kBase + 0x1000 + rng() % text_size);
  for (int i = 0; i < 5000; ++i) {
    std::vector<uint64_t> stack;
    size_t depth = 4 + rng() % 9;
    for (size_t d = 0; d < depth; ++d)
      stack.push_back(pools.addresses[rng() % pools.addresses.size()]);
    pools.stacks.push_back(std::move(stack));
  }
  return pools;
}

bool WriteProfile(const std::string& path, const std::string& binary, uint64_t text_size,
                  const Pools& pools, size_t count, bool branches, uint32_t seed) {
  tprof::Metadata metadata;
  metadata.tprof_version = "bench";
  std::vector<tprof::EventDesc> events(1);
  events[0].name = "cycles";
  auto writer = tprof::ProfileWriter::CreateFile(path, metadata, events);
  if (!writer.ok()) return false;
  tprof::CommRecord comm;
  comm.pid = comm.tid = 4242;
  comm.comm = "bench";
  tprof::MmapRecord mmap;
  mmap.pid = mmap.tid = 4242;
  mmap.start = kBase;
  mmap.length = text_size + 0x2000;
  mmap.filename = binary;
  if (!(*writer)->Write(comm).ok() || !(*writer)->Write(mmap).ok()) return false;
  std::mt19937_64 rng(seed);
  std::geometric_distribution<size_t> skew(0.002);
  tprof::Sample s;
  uint64_t time = 1000000000;
  for (size_t i = 0; i < count; ++i) {
    s.ClearKeepCapacity();
    time += 250000;
    s.time = time;
    s.pid = s.tid = 4242;
    s.period = 250000;
    const std::vector<uint64_t>& stack = pools.stacks[skew(rng) % pools.stacks.size()];
    s.ip = stack[0];
    if (branches) {
      // A loop-like stack: blocks of 16-64 bytes ending at the stack's addresses.
      for (size_t b = 0; b < 16; ++b) {
        uint64_t from = stack[b % stack.size()] + 64;
        uint64_t to = stack[(b + 1) % stack.size()];
        s.branches.push_back({from, to, static_cast<uint64_t>(1 + (b * 7 + i) % 40) << 4});
      }
    } else {
      s.callchain.push_back(tprof::kContextUser);
      s.callchain.insert(s.callchain.end(), stack.begin(), stack.end());
    }
    if (!(*writer)->Write(s).ok()) return false;
  }
  return (*writer)->Finish({}).ok();
}

struct Timing {
  double wall = 0, cpu = 0;  // seconds; cpu: user + system of the command
};

Timing Run(const std::vector<std::string>& argv) {
  auto start = Clock::now();
  pid_t pid = ::fork();
  if (pid == 0) {
    int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  int status = 0;
  rusage usage{};
  ::wait4(pid, &status, 0, &usage);
  Timing t;
  t.wall = std::chrono::duration<double>(Clock::now() - start).count();
  t.cpu = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
          static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "stream_diff_bench: %s failed\n", argv[0].c_str());
    std::exit(1);
  }
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  size_t count = 1000000;
  bool branches = false;
  std::string tprof = TPROF_BINARY;
  std::string binary = TPROF_BINARY;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--branches") {
      branches = true;
    } else if (a == "--binary" && i + 1 < argc) {
      binary = argv[++i];
    } else if (a == "--tprof" && i + 1 < argc) {
      tprof = argv[++i];
    } else {
      count = std::strtoull(a.c_str(), nullptr, 10);
    }
  }
  struct stat st {};
  if (::stat(binary.c_str(), &st) != 0) {
    std::fprintf(stderr, "stream_diff_bench: cannot read %s\n", binary.c_str());
    return 1;
  }
  uint64_t text_size = static_cast<uint64_t>(st.st_size) > 0x3000 ? st.st_size - 0x2000 : 0x1000;
  Pools old_pools = MakePools(text_size, 1);
  Pools new_pools = old_pools;
  std::mt19937_64 rng(2);
  for (auto& stack : new_pools.stacks)  // 10% of the stacks change their leaf
    if (rng() % 10 == 0) stack[0] = new_pools.addresses[rng() % new_pools.addresses.size()];
  std::string dir = "/tmp/tprof_stream_bench_" + std::to_string(::getpid());
  std::string old_path = dir + "_old.tprof", new_path = dir + "_new.tprof";
  if (!WriteProfile(old_path, binary, text_size, old_pools, count, branches, 3) ||
      !WriteProfile(new_path, binary, text_size, new_pools, count, branches, 4)) {
    std::fprintf(stderr, "stream_diff_bench: cannot write the profiles\n");
    return 1;
  }
  // The machine may be shared: CPU time (user + system) is printed beside the wall time.
  Timing one = Run({tprof, "stream", old_path, "-n", "20"});
  Timing diff = Run({tprof, "diff", "--stream", old_path, new_path, "--top", "20"});
  std::printf("%zu samples per profile (%s), binary %s\n", count,
              branches ? "16-entry branch stacks" : "callchains", binary.c_str());
  std::printf("tprof stream (one profile):   %.3f s wall, %.3f s CPU\n", one.wall, one.cpu);
  std::printf("tprof diff --stream (two):    %.3f s wall, %.3f s CPU  (goal: < 2 s, %s)\n",
              diff.wall, diff.cpu, diff.wall < 2.0 ? "met" : "NOT met");
  if (branches) {
    Timing blocks = Run({tprof, "diff", "--stream", "--blocks", old_path, new_path, "--top", "20"});
    std::printf("tprof diff --stream --blocks: %.3f s wall, %.3f s CPU\n", blocks.wall, blocks.cpu);
  }
  std::remove(old_path.c_str());
  std::remove(new_path.c_str());
  return 0;
}
