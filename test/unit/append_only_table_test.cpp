// AppendOnlyTable: an entry stays where it was put while the table grows (a vector's would move,
// and a reader on another thread would read freed memory), and a reader thread sees every entry
// the appending thread published.
#include "core/base/append_only_table.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>

namespace tprof {
namespace {

TEST(AppendOnlyTable, EntriesStayPutAsTheTableGrows) {
  AppendOnlyTable<std::string> table;
  ASSERT_TRUE(table.push_back("first, long enough not to fit a short string's buffer"));
  const std::string& first = table[0];
  const char* bytes = first.data();
  for (int i = 1; i < 3 * static_cast<int>(AppendOnlyTable<std::string>::kChunkSize); ++i)
    ASSERT_TRUE(table.push_back(std::to_string(i)));
  EXPECT_EQ(&table[0], &first);
  EXPECT_EQ(table[0].data(), bytes);
  EXPECT_EQ(table[0], "first, long enough not to fit a short string's buffer");
  EXPECT_EQ(table.size(), 3 * AppendOnlyTable<std::string>::kChunkSize);
  EXPECT_EQ(table[5000], "5000");
  // Moved whole (no reader meanwhile): the entries go with it.
  AppendOnlyTable<std::string> moved(std::move(table));
  EXPECT_EQ(moved[5000], "5000");
  EXPECT_EQ(table.size(), 0u);
}

TEST(AppendOnlyTable, AReaderSeesWhatWasPublished) {
  AppendOnlyTable<uint64_t> table;
  constexpr uint64_t kEntries = 200000;
  std::atomic<bool> done{false};
  uint64_t wrong = 0, reads = 0;
  std::thread reader([&] {
    while (!done.load()) {
      const size_t n = table.size();
      if (n == 0) continue;
      ++reads;
      wrong += table[n - 1] != (n - 1) * 3 || table[n / 2] != (n / 2) * 3;
    }
  });
  for (uint64_t i = 0; i < kEntries; ++i) ASSERT_TRUE(table.push_back(i * 3));
  done.store(true);
  reader.join();
  EXPECT_EQ(wrong, 0u) << "of " << reads << " reads";
  EXPECT_EQ(table.size(), kEntries);
}

}  // namespace
}  // namespace tprof
