// Writes a small seed corpus of valid profiles for the reader fuzzers.
#include <cstdio>
#include <fstream>
#include <string>

#include "core/format/profile_writer.h"
#include "test/support/perf_data_writer.h"
#include "test/support/record_generator.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT_DIR\n", argv[0]);
    return 2;
  }
  using namespace tprof;
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    std::string bytes;
    WriterOptions options;
    options.chunk_size = 512 << seed;
    auto writer = ProfileWriter::Create(std::make_unique<StringSink>(bytes),
                                        testing::TestMetadata(), testing::TestEvents(), options);
    if (!writer.ok()) return 1;
    testing::RecordGenerator generator(seed);
    for (int i = 0; i < 20 * static_cast<int>(seed); ++i) {
      auto record = generator.Next();
      Status status = std::visit([&](const auto& r) { return writer.value()->Write(r); }, record);
      if (!status.ok()) return 1;
    }
    if (!writer.value()->Finish({1000, 2000, {}}).ok()) return 1;
    std::ofstream(std::string(argv[1]) + "/seed" + std::to_string(seed) + ".tprof",
                  std::ios::binary)
        << bytes;
  }
  // A perf.data file in the layout of perf record --off-cpu (BPF): a clock, then the summed
  // off-CPU samples at made-up times (core/perfdata/summed_off_cpu_times.h), for the perf.data
  // reader's fuzzer.
  testing::PerfDataWriter perf;
  const size_t clock =
      perf.AddEvent("task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, 4000, true);
  const size_t summed =
      perf.AddEvent("offcpu-time", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_BPF_OUTPUT, 1, true);
  perf.Comm(100, 100, "seed", 1000);
  perf.Mmap(100, 0x400000, 0x1000, 0, "/bin/seed", 1000);
  for (uint64_t i = 1; i <= 4; ++i)
    perf.Sample(clock, 100, 100, 1000 + i * 250, 250, {0x400010 + i, 0x400100});
  perf.FinishedRound();
  perf.SampleTimes(1250, 2000);
  perf.Sample(summed, 100, 100, ~0ull << 32, 5000, {0x400020, 0x400100});
  perf.Sample(summed, 100, 101, (~0ull << 32) + 1, 7000, {0x400030});
  if (!perf.WriteTo(std::string(argv[1]) + "/offcpu_bpf.data")) return 1;
  // The same in perf's later layout: thread, time and stack inside the BPF output data
  // (PerfRecordLayout::off_cpu_in_raw), one wait during the run and one sum after it.
  testing::PerfDataWriter raw;
  const size_t raw_clock =
      raw.AddEvent("task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, 4000, true);
  const size_t in_raw =
      raw.AddEvent("offcpu-time", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_BPF_OUTPUT, 1, true, true);
  raw.Comm(100, 100, "seed", 1000);
  raw.Mmap(100, 0x400000, 0x1000, 0, "/bin/seed", 1000);
  raw.Sample(raw_clock, 100, 100, 1250, 250, {0x400010, 0x400100});
  raw.Sample(in_raw, 1, 1, 9000, 1, {},
             {uint64_t{100} << 32 | 101, 5000, 3, PERF_CONTEXT_USER, 0x400020, 0x400100, 0});
  raw.FinishedRound();
  raw.Sample(in_raw, 1, 1, ~0ull << 32, 1, {},
             {uint64_t{100} << 32 | 100, 7000, 2, PERF_CONTEXT_USER, 0x400030, 0});
  if (!raw.WriteTo(std::string(argv[1]) + "/offcpu_bpf_raw.data")) return 1;
  return 0;
}
