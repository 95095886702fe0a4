#include "core/model/frame_interner.h"

#include <gtest/gtest.h>

#include "core/format/symbol_section.h"

namespace tprof {
namespace {

ResolvedFrame FrameOf(const std::string& function, uint32_t line) {
  ResolvedFrame frame;
  frame.resolved = true;
  frame.function = function;
  frame.module = "prog";
  SourceFrame source;
  source.function = function;
  source.file = "prog.c";
  source.line = line;
  frame.frames.push_back(source);
  return frame;
}

TEST(FrameInterner, EqualFramesShareOneCopyAndAnyDifferenceSeparates) {
  FrameInterner interner;
  const ResolvedFrame* a = interner.Intern(FrameOf("work", 10));
  EXPECT_EQ(interner.Intern(FrameOf("work", 10)), a);
  EXPECT_NE(interner.Intern(FrameOf("work", 11)), a);  // another line
  EXPECT_NE(interner.Intern(FrameOf("rest", 10)), a);  // another function
  ResolvedFrame inlined = FrameOf("work", 10);
  inlined.frames.front().inlined = true;
  EXPECT_NE(interner.Intern(inlined), a);
  ResolvedFrame other_build = FrameOf("work", 10);
  other_build.build_id = "\x01\x02";
  EXPECT_NE(interner.Intern(other_build), a);
  EXPECT_EQ(interner.size(), 5u);
  EXPECT_EQ(*a, FrameOf("work", 10));
  // Moving the interner keeps the frames where they are.
  FrameInterner moved = std::move(interner);
  EXPECT_EQ(moved.Intern(FrameOf("work", 10)), a);
}

// A profile's symbol table answers each address with its own frame's contents; addresses whose
// frames are equal share one, added or decoded.
TEST(FrameInterner, SymbolTableSharesEqualFramesOfDifferentAddresses) {
  SymbolTable table;
  for (uint64_t offset : {0x1000, 0x1004, 0x1008})
    table.Add({"prog", "", offset}, FrameOf("work", 10));
  table.Add({"prog", "", 0x100c}, FrameOf("work", 11));
  auto check = [](const SymbolTable& t) {
    const ResolvedFrame* first = t.Find({"prog", "", 0x1000});
    ASSERT_NE(first, nullptr);
    EXPECT_EQ(t.Find({"prog", "", 0x1004}), first);
    EXPECT_EQ(t.Find({"prog", "", 0x1008}), first);
    const ResolvedFrame* other = t.Find({"prog", "", 0x100c});
    ASSERT_NE(other, nullptr);
    EXPECT_NE(other, first);
    EXPECT_EQ(first->line(), 10u);
    EXPECT_EQ(other->line(), 11u);
    EXPECT_EQ(t.Find({"prog", "", 0x1010}), nullptr);
  };
  check(table);
  SymbolTable decoded;
  for (const std::string& payload : table.Encode()) ASSERT_TRUE(decoded.Decode(payload).ok());
  EXPECT_EQ(decoded.size(), 4u);
  check(decoded);
}

}  // namespace
}  // namespace tprof
