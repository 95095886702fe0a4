// Import throughput: perf.data (or any input ProfileSource reads) to .tprof, the work of
// `tprof import` without the command line. Prints wall time, samples and samples per second.
//   import_bench perf.data [out.tprof]
#include <chrono>
#include <cstdio>

#include "core/format/profile_writer.h"
#include "core/source/profile_source.h"

namespace {

struct Copier : tprof::RecordVisitor {
  tprof::ProfileWriter* writer = nullptr;
  tprof::Status status;
  template <typename R>
  void Keep(const R& r) {
    tprof::Status s = writer->Write(r);
    if (status.ok() && !s.ok()) status = s;
  }
  void OnSample(const tprof::Sample& r) override { Keep(r); }
  void OnMmap(const tprof::MmapRecord& r) override { Keep(r); }
  void OnComm(const tprof::CommRecord& r) override { Keep(r); }
  void OnTask(const tprof::TaskRecord& r) override { Keep(r); }
  void OnLost(const tprof::LostRecord& r) override { Keep(r); }
  void OnThrottle(const tprof::ThrottleRecord& r) override { Keep(r); }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s perf.data [out.tprof]\n", argv[0]);
    return 2;
  }
  std::string out = argc > 2 ? argv[2] : "/tmp/import_bench.tprof";
  auto start = std::chrono::steady_clock::now();
  auto source = tprof::ProfileSource::OpenFile(argv[1]);
  if (!source.ok()) {
    std::fprintf(stderr, "%s\n", source.error().message().c_str());
    return 1;
  }
  auto writer = tprof::ProfileWriter::CreateFile(out, (*source)->metadata(), (*source)->events());
  if (!writer.ok()) {
    std::fprintf(stderr, "%s\n", writer.error().message().c_str());
    return 1;
  }
  Copier copier;
  copier.writer = writer->get();
  auto summary = (*source)->ReadRecords(copier);
  if (!summary.ok() || !copier.status.ok() || !(*writer)->Finish({}).ok()) {
    std::fprintf(stderr, "import failed\n");
    return 1;
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("imported %llu samples (%llu records) in %.3f s: %.0f samples/s, %llu bytes\n",
              static_cast<unsigned long long>(summary->samples),
              static_cast<unsigned long long>(summary->records), seconds,
              static_cast<double>(summary->samples) / seconds,
              static_cast<unsigned long long>((*writer)->bytes_written()));
  return 0;
}
