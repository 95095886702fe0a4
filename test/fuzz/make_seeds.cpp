// Writes a small seed corpus of valid profiles for the reader fuzzer.
#include <cstdio>
#include <fstream>
#include <string>

#include "core/format/profile_writer.h"
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
  return 0;
}
