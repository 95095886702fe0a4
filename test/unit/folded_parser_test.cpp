// Folded stacks, single and differential, with flamegraph annotations.
#include "core/perfdata/folded_parser.h"

#include <gtest/gtest.h>

#include "core/source/profile_source.h"

namespace tprof {
namespace {

TEST(FoldedParser, OneCountColumn) {
  auto p = ParseFolded(
      "demo;main;compute_kernel 120\n"
      "demo;main;operator new(unsigned long) 7\n"
      "demo;entry_SYSCALL_64_[k];do_syscall_64_[k] 5\n"
      "libc.so.6`memcpy;main 3\n"
      "\n# comment\n");
  ASSERT_TRUE(p.ok()) << p.error().message();
  ASSERT_EQ(p->events.size(), 1u);
  ASSERT_EQ(p->samples.size(), 4u);
  EXPECT_EQ(p->samples[0].period, 120u);
  EXPECT_EQ(p->frames.Resolve(nullptr, p->samples[0].ip).function, "compute_kernel");
  EXPECT_EQ(p->frames.Resolve(nullptr, p->samples[0].callchain.back()).function, "demo");
  EXPECT_EQ(p->frames.Resolve(nullptr, p->samples[1].ip).function, "operator new(unsigned long)");
  ResolvedFrame k = p->frames.Resolve(nullptr, p->samples[2].ip);
  EXPECT_EQ(k.function, "do_syscall_64");
  EXPECT_EQ(k.module, "[kernel]");
  ResolvedFrame m = p->frames.Resolve(nullptr, p->samples[3].ip);
  EXPECT_EQ(m.function, "main");
  EXPECT_EQ(p->frames.Resolve(nullptr, p->samples[3].callchain[1]).module, "libc.so.6");
}

TEST(FoldedParser, TwoCountColumnsAreBeforeAndAfter) {
  auto p = ParseFolded("main;a 10 12\nmain;b 3 0\n");
  ASSERT_TRUE(p.ok()) << p.error().message();
  ASSERT_EQ(p->events.size(), 2u);
  EXPECT_EQ(p->events[0].name, "before");
  EXPECT_EQ(p->events[1].name, "after");
  ASSERT_EQ(p->samples.size(), 3u);  // b has nothing after
  EXPECT_EQ(p->samples[1].event, 1u);
  EXPECT_EQ(p->samples[1].period, 12u);
}

TEST(FoldedParser, MalformedLineNamesItsNumber) {
  auto p = ParseFolded("main;a 10\nmain;b\n");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message().find("line 2"), std::string::npos) << p.error().message();
  auto q = ParseFolded("main;a 10\nmain;b 1 2\n");
  ASSERT_FALSE(q.ok());
  EXPECT_NE(q.error().message().find("line 2"), std::string::npos);
}

TEST(FoldedParser, SniffedAsFolded) {
  auto f = SniffProfileFormat("demo;main;compute_kernel 120\ndemo;main 7\n");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(*f, ProfileFormat::kFolded);
}

}  // namespace
}  // namespace tprof
