// The command-line spine: help, version, exit codes, one-line errors with suggestions.
#include <gtest/gtest.h>

#include <algorithm>

#include "test/support/run_command.h"

namespace tprof {
namespace {

using testing::RunCommand;
const std::string kTprof = TPROF_BINARY;

int Lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

TEST(CliTest, HelpListsEverySubcommandAndTheExitCodes) {
  auto r = RunCommand({kTprof, "--help"});
  EXPECT_EQ(r.exit_code, 0);
  for (const char* c : {"record", "report", "diff", "stream", "topdown", "help"})
    EXPECT_NE(r.out.find(c), std::string::npos) << c;
  EXPECT_NE(r.out.find("Exit status"), std::string::npos);
}

TEST(CliTest, HelpForEachCommandInBothForms) {
  for (const char* c : {"record", "report", "diff", "stream", "topdown"}) {
    auto a = RunCommand({kTprof, "help", c});
    auto b = RunCommand({kTprof, c, "--help"});
    EXPECT_EQ(a.exit_code, 0) << c;
    EXPECT_EQ(b.exit_code, 0) << c;
    EXPECT_NE(a.out.find(c), std::string::npos) << c;
    EXPECT_NE(b.out.find(c), std::string::npos) << c;
  }
}

TEST(CliTest, Version) {
  auto r = RunCommand({kTprof, "--version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.rfind("tprof ", 0), 0u) << r.out;
}

TEST(CliTest, UnknownCommandSuggestsTheClosest) {
  auto r = RunCommand({kTprof, "reprot"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("did you mean 'report'"), std::string::npos) << r.err;
  EXPECT_EQ(Lines(r.err), 1);
}

TEST(CliTest, UnknownOptionSuggestsTheClosest) {
  auto r = RunCommand({kTprof, "report", "--percent-limt", "3"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--percent-limit"), std::string::npos) << r.err;
  EXPECT_EQ(Lines(r.err), 1);
}

TEST(CliTest, UnknownEventAndBadModifierAreUsageErrors) {
  auto r = RunCommand({kTprof, "record", "-e", "cyclez", "--", "/bin/true"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("did you mean 'cycles'"), std::string::npos) << r.err;
  auto m = RunCommand({kTprof, "record", "-e", "cpu-clock:x", "--", "/bin/true"});
  EXPECT_EQ(m.exit_code, 2);
  EXPECT_NE(m.err.find("unknown modifier 'x'"), std::string::npos) << m.err;
}

TEST(CliTest, ReportOfAMissingFileIsAOneLineRuntimeError) {
  auto r = RunCommand({kTprof, "report", "-i", "/nonexistent/x.tprof"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("/nonexistent/x.tprof"), std::string::npos);
  EXPECT_EQ(Lines(r.err), 1);
}

TEST(CliTest, ReportOfANonProfileSaysSo) {
  auto r = RunCommand({kTprof, "report", "-i", "/etc/hostname"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("not a tprof profile"), std::string::npos) << r.err;
}

TEST(CliTest, UnbuiltCommandsSaySoAndFail) {
  auto r = RunCommand({kTprof, "topdown", "-M", "l1", "--", "/bin/true"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("not implemented"), std::string::npos);
}

}  // namespace
}  // namespace tprof
