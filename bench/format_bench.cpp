// Writes and reads samples with 16-frame callchains through the .tprof format and prints
// samples/s and bytes/sample. The samples imitate a recording: 4 threads on 2 CPUs at ~4 kHz,
// callchains drawn (skewed, as in real programs) from 20,000 distinct 16-frame stacks.
//   format_bench [SAMPLES] [OUTPUT_FILE]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "core/format/profile_reader.h"
#include "core/format/profile_writer.h"

namespace {

using Clock = std::chrono::steady_clock;
double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

std::vector<tprof::Sample> MakeSamples(size_t count) {
  std::mt19937_64 rng(1);
  constexpr size_t kStacks = 20000, kDepth = 16;
  std::vector<std::vector<uint64_t>> stacks(kStacks);
  for (auto& stack : stacks) {
    uint64_t base = 0x400000 + (rng() % 0x200000);
    for (size_t d = 0; d < kDepth; ++d) stack.push_back(base + (rng() % 0x100000));
  }
  std::vector<tprof::Sample> samples(count);
  std::geometric_distribution<size_t> skew(0.001);
  uint64_t time = 1000000000;
  for (auto& s : samples) {
    time += 60000 + rng() % 10000;
    s.time = time;
    s.pid = 4242;
    s.tid = 4242 + static_cast<uint32_t>(rng() % 4);
    s.cpu = static_cast<uint32_t>(rng() % 2);
    s.period = 250000 + rng() % 1000;
    s.callchain = stacks[skew(rng) % kStacks];
    s.ip = s.callchain[0];
  }
  return samples;
}

struct SumVisitor : tprof::RecordVisitor {
  uint64_t sum = 0, count = 0;
  void OnSample(const tprof::Sample& s) override {
    sum += s.ip + s.callchain.size();
    ++count;
  }
};

}  // namespace

int main(int argc, char** argv) {
  size_t count = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 2000000;
  std::string path = argc > 2 ? argv[2] : "/tmp/tprof_format_bench.tprof";
  std::vector<tprof::Sample> samples = MakeSamples(count);
  tprof::Metadata metadata;
  std::vector<tprof::EventDesc> events(1);
  events[0].name = "task-clock";

  auto t0 = Clock::now();
  auto writer = tprof::ProfileWriter::CreateFile(path, metadata, events);
  if (!writer.ok()) {
    std::fprintf(stderr, "format_bench: %s\n", writer.error().message().c_str());
    return 1;
  }
  for (const auto& s : samples)
    if (!writer.value()->Write(s).ok()) return 1;
  if (!writer.value()->Finish({1, 1, {}}).ok()) return 1;
  auto t1 = Clock::now();
  uint64_t bytes = writer.value()->bytes_written();

  auto reader = tprof::ProfileReader::OpenFile(path);
  if (!reader.ok()) return 1;
  SumVisitor visitor;
  auto summary = reader->ReadRecords(visitor);
  auto t2 = Clock::now();
  if (!summary.ok() || visitor.count != count) {
    std::fprintf(stderr, "format_bench: read back %llu of %zu samples\n",
                 static_cast<unsigned long long>(visitor.count), count);
    return 1;
  }
  std::printf("samples:            %zu (16-frame callchains)\n", count);
  std::printf("write:              %.2f M samples/s (%.3f s, to %s)\n",
              static_cast<double>(count) / Seconds(t0, t1) / 1e6, Seconds(t0, t1), path.c_str());
  std::printf("read:               %.2f M samples/s (%.3f s)\n",
              static_cast<double>(count) / Seconds(t1, t2) / 1e6, Seconds(t1, t2));
  std::printf("tprof bytes/sample: %.2f (%llu bytes)\n",
              static_cast<double>(bytes) / static_cast<double>(count),
              static_cast<unsigned long long>(bytes));
  std::printf(
      "raw perf.data bytes/sample for the same fields: %d (header 8, ip, pid/tid, time, "
      "id, cpu, period, nr, 16 frames)\n",
      8 + 6 * 8 + 8 + 16 * 8);
  std::remove(path.c_str());
  return 0;
}
