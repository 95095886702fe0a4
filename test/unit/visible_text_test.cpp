// The one rule for bytes that are not UTF-8 (core/base/visible_text.h), held against Python's
// reading of the same bytes where it has one: a byte outside a well-formed sequence is what
// bytes.decode("utf-8", "backslashreplace") writes as \xhh (there in lower case).
#include "core/base/visible_text.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace tprof {
namespace {

TEST(VisibleText, WellFormedTextIsUnchanged) {
  for (const std::string text :
       {"", "faults_heavy", "caf\xc3\xa9", "\xe2\x82\xac 100", "\xf0\x9f\x94\xa5 hot", "a\\xffb"}) {
    EXPECT_TRUE(IsWellFormedUtf8(text)) << text;
    EXPECT_EQ(VisibleText(text), text);
  }
}

TEST(VisibleText, BytesOutsideSequencesAreWrittenAsHexEscapes) {
  // Python: b"w\xff\xfe\x80z".decode("utf-8", "backslashreplace") == "w\\xff\\xfe\\x80z"
  EXPECT_EQ(VisibleText("w\xff\xfe\x80z"), "w\\xFF\\xFE\\x80z");
  // A lead byte cut short, then an ASCII byte: the lead alone is escaped.
  EXPECT_EQ(VisibleText("a\xc3("), "a\\xC3(");
  // Overlong forms, a surrogate and a code point above U+10FFFF are not well formed (Python
  // agrees byte by byte: "\\xc0\\x80", "\\xed\\xa0\\x80", "\\xf4\\x90\\x80\\x80").
  EXPECT_EQ(VisibleText("\xc0\x80"), "\\xC0\\x80");
  EXPECT_EQ(VisibleText("\xed\xa0\x80"), "\\xED\\xA0\\x80");
  EXPECT_EQ(VisibleText("\xf4\x90\x80\x80"), "\\xF4\\x90\\x80\\x80");
  // A valid sequence beside invalid bytes is kept.
  EXPECT_EQ(VisibleText("\xff\xc3\xa9\xff"), "\\xFF\xc3\xa9\\xFF");
  EXPECT_FALSE(
      IsWellFormedUtf8("tou\xff\xfe"
                       "ch"));
}

TEST(VisibleText, JsonWithSuchNamesDumpsAsValidJson) {
  nlohmann::json j = {{"sym", "spin_\xff\xfe"}, {"list", {"ok", "bad\xff"}}, {"k\xfe", 1}};
  const std::string text = DumpVisibleJson(j);
  const nlohmann::json back = nlohmann::json::parse(text);  // throws on invalid UTF-8
  EXPECT_EQ(back["sym"], "spin_\\xFF\\xFE");
  EXPECT_EQ(back["list"][1], "bad\\xFF");
  EXPECT_EQ(back["k\\xFE"], 1);
}

TEST(VisibleText, StreamHoldsASequenceCutBetweenWrites) {
  std::ostringstream sink;
  {
    VisibleTextStream out(sink);
    out << "caf\xc3";  // the second byte of é comes in the next write
    out.flush();
    out << "\xa9 and \xff";
    out << "\xe2";  // a lead byte never completed
  }
  EXPECT_EQ(sink.str(), "caf\xc3\xa9 and \\xFF\\xE2");
}

}  // namespace
}  // namespace tprof
