// The new-to-old line map of two versions of a file, and its use over two source trees.
#include "core/analysis/source_line_map.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace tprof {
namespace {

// Old lines as the map gives them for every new line (0: new or changed).
std::vector<uint32_t> Map(const std::string& old_text, const std::string& new_text) {
  LineMap map = DiffLines(old_text, new_text);
  std::vector<uint32_t> out;
  for (uint32_t line = 1; line <= map.new_line_count(); ++line) out.push_back(map.OldLine(line));
  return out;
}

TEST(SourceLineMapTest, SplitLinesHandlesCrLfAndALastLineWithoutNewline) {
  auto lines = SplitLines("a\r\nb\n\nc");
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], "a");
  EXPECT_EQ(lines[1], "b");
  EXPECT_EQ(lines[2], "");
  EXPECT_EQ(lines[3], "c");
  EXPECT_TRUE(SplitLines("").empty());
}

TEST(SourceLineMapTest, IdenticalFilesMapEveryLineToItself) {
  EXPECT_EQ(Map("a\nb\nc\n", "a\nb\nc\n"), (std::vector<uint32_t>{1, 2, 3}));
}

TEST(SourceLineMapTest, InsertedLinesMapToNothingAndMoveTheLinesBelow) {
  // Two lines inserted after line 1: old 2 and 3 are now 4 and 5.
  EXPECT_EQ(Map("a\nb\nc\n", "a\nx\ny\nb\nc\n"), (std::vector<uint32_t>{1, 0, 0, 2, 3}));
}

TEST(SourceLineMapTest, DeletedLinesMoveTheLinesBelowUp) {
  EXPECT_EQ(Map("a\nb\nc\nd\n", "a\nd\n"), (std::vector<uint32_t>{1, 4}));
}

TEST(SourceLineMapTest, ChangedLinesMapToNothing) {
  EXPECT_EQ(Map("a\nb\nc\n", "a\nB\nc\n"), (std::vector<uint32_t>{1, 0, 3}));
}

TEST(SourceLineMapTest, MixedEditsKeepTheUnchangedLinesInOrder) {
  // Old:  1 int f() {  2 return 1;  3 }  4  5 int g() {  6 loop;  7 }
  // New: a comment inserted on top, f's body changed, g unchanged but moved by one.
  std::string old_text = "int f() {\n  return 1;\n}\n\nint g() {\n  loop;\n}\n";
  std::string new_text = "// new\nint f() {\n  return 2;\n}\n\nint g() {\n  loop;\n}\n";
  EXPECT_EQ(Map(old_text, new_text), (std::vector<uint32_t>{0, 1, 0, 3, 4, 5, 6, 7}));
}

TEST(SourceLineMapTest, LinesPastTheEndAndLineZeroMapToNothing) {
  LineMap map = DiffLines("a\n", "a\n");
  EXPECT_EQ(map.OldLine(0), 0u);
  EXPECT_EQ(map.OldLine(2), 0u);
}

TEST(SourceLineMapTest, DuplicateLinesAreMatchedInOrder) {
  // "}" lines repeat; the unchanged ones keep their order.
  EXPECT_EQ(Map("{\n}\n{\n}\n", "{\n}\nx\n{\n}\n"), (std::vector<uint32_t>{1, 2, 0, 3, 4}));
}

class SourceTreeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ =
        std::filesystem::temp_directory_path() / ("tprof_line_map_" + std::to_string(::getpid()));
    std::filesystem::remove_all(root_);
    Write("before/src/work.cpp", "a\nb\nc\n");
    Write("after/src/work.cpp", "a\nnew\nb\nC\n");
    Write("after/src/added.cpp", "x\n");
    Write("before/src/removed.cpp", "y\n");
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  void Write(const std::string& relative, const std::string& text) {
    std::filesystem::create_directories((root_ / relative).parent_path());
    std::ofstream(root_ / relative) << text;
  }
  std::filesystem::path root_;
};

TEST_F(SourceTreeTest, RecordedPathsAreMatchedToTheTreesBySuffix) {
  auto trees = SourceTreeMap::Open((root_ / "before").string(), (root_ / "after").string());
  ASSERT_TRUE(trees.ok()) << trees.error().message();
  // Built somewhere else entirely: the suffix src/work.cpp names the tree's file.
  EXPECT_EQ(trees->NewFileKey("/build/v2/src/work.cpp"), "src/work.cpp");
  EXPECT_EQ(trees->OldFileKey("/elsewhere/v1/src/work.cpp"), "src/work.cpp");
  EXPECT_EQ(trees->NewFileKey("/usr/include/c++/12/bits/stl_vector.h"), "stl_vector.h");

  MappedLine moved = trees->MapNewLine("/build/v2/src/work.cpp", 3);
  EXPECT_EQ(moved.fate, LineFate::kUnchanged);
  EXPECT_EQ(moved.old_line, 2u);
  EXPECT_EQ(trees->MapNewLine("/build/v2/src/work.cpp", 2).fate, LineFate::kChanged);
  EXPECT_EQ(trees->MapNewLine("/build/v2/src/work.cpp", 4).fate, LineFate::kChanged);
  // A file only in the new tree: every line is new.
  EXPECT_EQ(trees->MapNewLine("/build/v2/src/added.cpp", 1).fate, LineFate::kChanged);
  // Outside both trees: compared as it is.
  MappedLine outside = trees->MapNewLine("/usr/include/stdio.h", 42);
  EXPECT_EQ(outside.fate, LineFate::kUnknown);
  EXPECT_EQ(outside.old_line, 42u);
}

TEST_F(SourceTreeTest, AMissingTreeIsAnError) {
  auto trees = SourceTreeMap::Open((root_ / "nope").string(), (root_ / "after").string());
  ASSERT_FALSE(trees.ok());
  EXPECT_NE(trees.error().message().find("--before"), std::string::npos);
}

}  // namespace
}  // namespace tprof
