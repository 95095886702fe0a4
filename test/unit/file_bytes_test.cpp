// FileBytes::Release: the pages of a mapped file given back leave the process's resident
// memory, and the bytes read the same after (the mapping is private and never written).
#include "core/base/file_bytes.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace tprof {
namespace {

// The process's resident pages of mapped files, in KiB (RssFile in /proc/self/status).
long ResidentFileKib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.starts_with("RssFile:")) return std::stol(line.substr(8));
  return -1;
}

char PatternAt(size_t i) { return static_cast<char>((i * 131) ^ (i >> 12)); }

TEST(FileBytes, ReleasedPagesLeaveResidentMemoryAndReadTheSame) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("tprof_file_bytes_" + std::to_string(getpid())))
          .string();
  constexpr size_t kSize = size_t{32} << 20;
  {
    std::string pattern(kSize, '\0');
    for (size_t i = 0; i < kSize; ++i) pattern[i] = PatternAt(i);
    std::ofstream(path, std::ios::binary) << pattern;
  }
  auto bytes = FileBytes::Read(path);
  ASSERT_TRUE(bytes.ok()) << bytes.error().message();
  const std::string_view view = (*bytes)->view();
  ASSERT_EQ(view.size(), kSize);
  size_t mismatches = 0;
  for (size_t i = 0; i < kSize; ++i) mismatches += view[i] != PatternAt(i);  // every page read
  EXPECT_EQ(mismatches, 0u);
  const long before = ResidentFileKib();
  // A range that starts and ends inside pages keeps those two pages; the rest go.
  (*bytes)->Release(view.data() + 100, view.data() + kSize - 100);
  const long after = ResidentFileKib();
  ASSERT_GE(before, 0);
  EXPECT_GT(before - after, 24 * 1024) << "RssFile " << before << " kB, then " << after << " kB";
  for (size_t i = 0; i < kSize; ++i) mismatches += view[i] != PatternAt(i);
  EXPECT_EQ(mismatches, 0u);
  // Ranges outside the mapping, or bytes that are no mapping, are left alone.
  (*bytes)->Release(view.data() + kSize, view.data() + kSize + 4096);
  auto copy = FileBytes::FromString("not a mapping");
  copy->Release(copy->view().data(), copy->view().data() + copy->view().size());
  EXPECT_EQ(copy->view(), "not a mapping");
  std::remove(path.c_str());
}

}  // namespace
}  // namespace tprof
