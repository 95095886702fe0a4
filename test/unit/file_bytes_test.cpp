// FileBytes::Release: the pages of a mapped file given back leave the process's resident
// memory, and the bytes read the same after (the mapping is private and never written).
#include "core/base/file_bytes.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

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

// Standard input that is a pipe is copied to an unnamed temporary file and mapped: the bytes
// read the same, and a reader going front to back can give its pages back (Release), which it
// cannot with bytes read into memory.
TEST(FileBytes, StandardInputFromAPipeIsMappedFromATemporaryCopy) {
  constexpr size_t kSize = size_t{24} << 20;
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const int saved_stdin = ::dup(0);
  ASSERT_GE(saved_stdin, 0);
  ASSERT_EQ(::dup2(pipe_fds[0], 0), 0);
  ::close(pipe_fds[0]);
  std::thread writer([fd = pipe_fds[1]] {
    std::string chunk(1 << 16, '\0');
    for (size_t at = 0; at < kSize; at += chunk.size()) {
      for (size_t i = 0; i < chunk.size(); ++i) chunk[i] = PatternAt(at + i);
      for (size_t done = 0; done < chunk.size();) {
        const ssize_t n = ::write(fd, chunk.data() + done, chunk.size() - done);
        if (n <= 0) break;
        done += static_cast<size_t>(n);
      }
    }
    ::close(fd);
  });
  auto bytes = FileBytes::Read("-");
  writer.join();
  ::dup2(saved_stdin, 0);
  ::close(saved_stdin);
  ASSERT_TRUE(bytes.ok()) << bytes.error().message();
  const std::string_view view = (*bytes)->view();
  ASSERT_EQ(view.size(), kSize);
  size_t mismatches = 0;
  for (size_t i = 0; i < kSize; ++i) mismatches += view[i] != PatternAt(i);
  EXPECT_EQ(mismatches, 0u);
  const long before = ResidentFileKib();
  (*bytes)->Release(view.data(), view.data() + kSize);
  const long after = ResidentFileKib();
  EXPECT_GT(before - after, 16 * 1024) << "RssFile " << before << " kB, then " << after << " kB";
  for (size_t i = 0; i < kSize; ++i) mismatches += view[i] != PatternAt(i);
  EXPECT_EQ(mismatches, 0u);
}

}  // namespace
}  // namespace tprof
