// SharedString: copies share one text and the last owner frees it (ASan and LSan would report a
// double free, a use after free or a leak); SharedStringPool hands out one text per distinct one.
#include "core/base/shared_string.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace tprof {
namespace {

TEST(SharedStringTest, CopiesShareTheTextAndOutliveTheOriginal) {
  std::string source = "std::vector<int>::_M_realloc_insert<int const&>";
  std::vector<SharedString> copies;
  {
    SharedString original(source);
    source.assign(source.size(), 'x');  // the shared text is a copy, not a view
    for (int i = 0; i < 4; ++i) copies.push_back(original);
    EXPECT_TRUE(copies[0].SharesTextWith(original));
  }
  for (const SharedString& copy : copies) {
    EXPECT_EQ(copy.view(), "std::vector<int>::_M_realloc_insert<int const&>");
    EXPECT_TRUE(copy.SharesTextWith(copies[0]));
  }
  SharedString moved = std::move(copies[0]);
  EXPECT_TRUE(copies[0].empty());
  EXPECT_EQ(moved, copies[1]);
}

TEST(SharedStringTest, AssigningTextMakesItsOwnCopy) {
  SharedString name;
  EXPECT_TRUE(name.empty());
  EXPECT_EQ(name.view(), "");
  {
    std::string temporary = "main";
    name = std::string_view(temporary);
  }
  EXPECT_EQ(name, "main");
  EXPECT_EQ(name.size(), 4u);
  EXPECT_EQ(name.str(), "main");
  EXPECT_TRUE(SharedString("").empty());
}

TEST(SharedStringTest, ComparesByText) {
  const SharedString a("alpha"), a2("alpha"), b("beta");
  EXPECT_FALSE(a.SharesTextWith(a2));
  EXPECT_EQ(a, a2);
  EXPECT_NE(a, b);
  EXPECT_LT(a, b);
  EXPECT_GT(b, std::string_view("alpha"));
  EXPECT_TRUE("alpha" == a);
}

TEST(SharedStringTest, PoolHandsOutOneTextPerDistinctText) {
  SharedStringPool pool;
  std::string text = "libc.so.6";
  const SharedString first = pool.Intern(text);
  text = "main";
  const SharedString other = pool.Intern(text);
  const SharedString again = pool.Intern(std::string("libc.so.") + "6");
  EXPECT_TRUE(again.SharesTextWith(first));
  EXPECT_FALSE(other.SharesTextWith(first));
  EXPECT_EQ(first, "libc.so.6");
  EXPECT_EQ(other, "main");
  EXPECT_EQ(pool.size(), 2u);
}

TEST(SharedStringTest, CopiesMadeAndDroppedOnTwoThreadsFreeTheTextOnce) {
  // Under ASan a count that lost an update frees the text early (use after free) or never (leak).
  std::vector<SharedString> held(1000, SharedString("shared between threads"));
  auto churn = [&held](size_t from) {
    for (int round = 0; round < 200; ++round)
      for (size_t i = from; i < held.size(); i += 2) {
        SharedString copy = held[i];
        held[i] = copy;
      }
  };
  std::thread other(churn, 1);
  churn(0);
  other.join();
  for (const SharedString& s : held) EXPECT_EQ(s, "shared between threads");
}

}  // namespace
}  // namespace tprof
