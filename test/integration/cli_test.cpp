// The command-line spine: help, version, exit codes, one-line errors with suggestions.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>
#include <vector>

#include "test/support/run_command.h"
#include "test/support/test_programs.h"

namespace tprof {
namespace {

using testing::RunCommand;

// tprof's own help fits a screen (40 lines): every command with one line, examples, the exit
// statuses; the same from `tprof help` and from `tprof` alone (which is a usage error, status 2).
// A command's help is whole: its options.
TEST(CliTest, HelpListsEverySubcommandAndTheExitCodes) {
  auto r = RunCommand({kTprof, "--help"});
  EXPECT_EQ(r.exit_code, 0);
  for (const char* c : {"record", "report", "import", "diff", "stream", "topdown", "list", "help"})
    EXPECT_NE(r.out.find(std::string("\n  ") + c), std::string::npos) << c << "\n" << r.out;
  EXPECT_NE(r.out.find("Exit status"), std::string::npos);
  EXPECT_NE(r.out.find("\nExamples:\n  tprof record"), std::string::npos) << r.out;
  EXPECT_LE(std::count(r.out.begin(), r.out.end(), '\n'), 40) << r.out;
  auto topic = RunCommand({kTprof, "help"});
  EXPECT_EQ(topic.exit_code, 0);
  EXPECT_EQ(topic.out, r.out);
  auto bare = RunCommand({kTprof});
  EXPECT_EQ(bare.exit_code, 2);
  EXPECT_EQ(bare.out, r.out);
  auto report = RunCommand({kTprof, "report", "--help"});
  EXPECT_EQ(report.exit_code, 0);
  EXPECT_NE(report.out.find("--timeline"), std::string::npos);
}

// Man pages and bash completion come from the options --help shows: every long option of every
// command is in its page, and completion offers commands, options, event and CPU names.
TEST(CliTest, ManPagesAndCompletionFollowTheHelp) {
  for (const std::string command :
       {"", "record", "report", "import", "diff", "stream", "topdown", "list"}) {
    auto page = RunCommand({kTprof, "help", "--man", command});
    ASSERT_EQ(page.exit_code, 0) << command << ": " << page.err;
    const std::string title = command.empty() ? "TPROF" : "TPROF-" + command;
    std::string upper = title;
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    EXPECT_EQ(page.out.rfind(".TH " + upper + " 1 ", 0), 0u) << page.out.substr(0, 200);
    auto help = RunCommand({kTprof, "help", command});
    ASSERT_EQ(help.exit_code, 0);
    std::regex long_option("--[a-z][a-z-]*");
    size_t options = 0;
    for (auto it = std::sregex_iterator(help.out.begin(), help.out.end(), long_option);
         it != std::sregex_iterator(); ++it) {
      std::string escaped;
      for (char c : it->str()) escaped += c == '-' ? std::string("\\-") : std::string(1, c);
      EXPECT_NE(page.out.find(escaped), std::string::npos) << command << ": " << it->str();
      ++options;
    }
    EXPECT_GT(options, 1u) << command;
  }
  auto script = RunCommand({kTprof, "help", "--completion", "bash"});
  ASSERT_EQ(script.exit_code, 0) << script.err;
  const std::string path = ::testing::TempDir() + "/tprof_completion_" + std::to_string(::getpid());
  std::ofstream(path) << script.out;
  auto complete = [&](const std::string& words, int word) {
    auto r = RunCommand({"/bin/bash", "-c",
                         "source " + path + " && COMP_WORDS=(" + words + ") && COMP_CWORD=" +
                             std::to_string(word) + " && _tprof && echo \"${COMPREPLY[*]}\""});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  };
  EXPECT_EQ(complete("tprof rec", 1), "record\n");
  EXPECT_EQ(complete("tprof record --call", 2), "--call-graph\n");
  EXPECT_NE(complete("tprof record -e cyc", 3).find("cycles"), std::string::npos);
  EXPECT_NE(complete("tprof topdown --cpu neoverse-n", 3).find("neoverse-n1"), std::string::npos);
  EXPECT_NE(complete("tprof diff --ignore", 2).find("--ignore-module"), std::string::npos);
  std::remove(path.c_str());
}

// `tprof help CMD` and `tprof CMD --help` print the same page, whose usage line names the whole
// command (the first form printed "Usage: report ..." where the second printed "Usage: tprof
// report ...").
TEST(CliTest, HelpForEachCommandInBothForms) {
  for (const char* c : {"record", "report", "import", "diff", "stream", "topdown", "list"}) {
    auto a = RunCommand({kTprof, "help", c});
    auto b = RunCommand({kTprof, c, "--help"});
    EXPECT_EQ(a.exit_code, 0) << c;
    EXPECT_EQ(b.exit_code, 0) << c;
    EXPECT_EQ(a.out, b.out) << c;
    EXPECT_NE(b.out.find(std::string("Usage: tprof ") + c + " "), std::string::npos) << c;
  }
}

// A command's help shows how it is used before what each option means: its forms, then examples,
// within its first screen, for every command; and every option an example uses is one the
// command has, so the examples cannot drift from the options.
TEST(CliTest, HelpShowsExamplesFirstThatUseRealOptions) {
  for (const char* c : {"record", "report", "diff", "stream", "topdown", "import", "list"}) {
    auto help = RunCommand({kTprof, c, "--help"});
    ASSERT_EQ(help.exit_code, 0) << c;
    std::istringstream lines(help.out);
    std::string line;
    int number = 0, examples_at = 0;
    std::vector<std::string> examples;
    while (std::getline(lines, line)) {
      ++number;
      if (line == "Examples:") {
        examples_at = number;
      } else if (examples_at && line.empty()) {
        break;
      } else if (examples_at) {
        examples.push_back(line);
      }
    }
    ASSERT_GT(examples_at, 0) << c << ": no Examples: block\n" << help.out;
    EXPECT_LE(examples_at, 12) << c << ": the examples start on line " << examples_at;
    EXPECT_GE(examples.size(), 4u) << c;
    const std::string options = help.out.substr(help.out.find("Options:"));
    const std::regex long_option("(^|\\s)(--[a-z][a-z-]*)");
    for (const std::string& example : examples)
      for (std::sregex_iterator m(example.begin(), example.end(), long_option), end; m != end;
           ++m) {
        const std::string option = (*m)[2];
        EXPECT_NE(options.find(option), std::string::npos)
            << c << ": an example uses " << option << ", which is not an option:\n  " << example;
      }
  }
}

// The profile a command reads is given once, by -i or by name: both at once is a usage error
// (report took the positional one without a word; stream did too until its input options were
// report's), and an unknown short option in the file's place is named as an option (CLI11 hands
// a word like -5 to the positional, where stream took it for a file name).
TEST(CliTest, AProfileGivenTwiceOrAnUnknownOptionInItsPlaceIsAUsageError) {
  const std::string input =
      std::string(TPROF_TESTDATA_DIR) + "/perf/quipper-perf.data.callgraph-3.8";
  for (const char* c : {"report", "stream"}) {
    auto twice = RunCommand({kTprof, c, input, "-i", input});
    EXPECT_EQ(twice.exit_code, 2) << c << ": " << twice.err;
    EXPECT_NE(twice.err.find("excludes"), std::string::npos) << c << ": " << twice.err;
    auto unknown = RunCommand({kTprof, c, "-5"});
    EXPECT_EQ(unknown.exit_code, 2) << c << ": " << unknown.err;
    EXPECT_NE(unknown.err.find("unknown option '-5'"), std::string::npos)
        << c << ": " << unknown.err;
    auto once = RunCommand({kTprof, c, input});
    EXPECT_EQ(once.exit_code, 0) << c << ": " << once.err;
  }
}

TEST(CliTest, Version) {
  auto r = RunCommand({kTprof, "--version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.rfind("tprof ", 0), 0u) << r.out;
}

// Output that could not all be written (a full disk: /dev/full) is an error, not a success
// with a report cut short, whatever wrote it; the same command written out whole succeeds.
TEST(CliTest, OutputThatCannotBeWrittenIsAnError) {
  const std::string input =
      std::string(TPROF_TESTDATA_DIR) + "/perf/quipper-perf.data.callgraph-3.8";
  for (const std::string& args : {"report -i " + input, "report --folded -i " + input,
                                  "report --json -i " + input, std::string("--version")}) {
    auto full = RunCommand({"/bin/sh", "-c", std::string(kTprof) + " " + args + " > /dev/full"});
    EXPECT_EQ(full.exit_code, 1) << args << ": " << full.err;
    EXPECT_NE(full.err.find("tprof: cannot write standard output"), std::string::npos)
        << args << ": " << full.err;
    auto whole = RunCommand({"/bin/sh", "-c", std::string(kTprof) + " " + args + " > /dev/null"});
    EXPECT_EQ(whole.exit_code, 0) << args << ": " << whole.err;
  }
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

constexpr long kMiB = 1 << 20;

// The least RLIMIT_DATA, in steps of 2 MiB, under which tprof starts at all (0: none to 512 MiB).
long LeastDataLimitToStart() {
  for (long limit = 2 * kMiB; limit <= 512 * kMiB; limit += 2 * kMiB) {
    testing::RunOptions options;
    options.data_limit = limit;
    if (RunCommand({kTprof, "--version"}, options).exit_code == 0) return limit;
  }
  return 0;
}

// The last line of a failed command's standard error, after checking that it is its one error
// (any line before it a note or a summary: a recording's "[ tprof record: ...]" and the
// "unwinding:" lines before it, which a failure after the summary, such as running out of memory
// in the short-stack hint's read-back, follows) and says it is tprof's ("tprof: ", "tprof CMD: ").
std::string OneLineError(const std::string& err) {
  const std::vector<std::string> lines = SplitLines(err);
  if (lines.empty()) {
    ADD_FAILURE() << "no error was written";
    return "";
  }
  for (size_t i = 0; i + 1 < lines.size(); ++i)
    EXPECT_TRUE(
        lines[i].find(": note: ") != std::string::npos || lines[i].starts_with("[ tprof ") ||
        (lines[i].find(": unwinding: ") != std::string::npos && lines[i].starts_with("tprof ")))
        << lines[i];
  EXPECT_TRUE(lines.back().starts_with("tprof")) << lines.back();
  EXPECT_EQ(lines.back().find(": note: "), std::string::npos) << lines.back();
  return lines.back();
}

// Out of memory (here: a limit on what the process may map) ends a command with one line and
// status 1, whichever thread runs out, never SIGABRT without a word (mimalloc's default) or
// std::terminate. Every limit from the least that lets tprof start at all up is tried: the
// report is either whole, as without a limit, or that one line.
TEST(CliTest, UnderAnyMemoryLimitAReportIsWholeOrAOneLineError) {
  if (kUnderAddressSanitizer)
    GTEST_SKIP() << "the sanitizers' shadow memory cannot be mapped under a limit";
  const std::string input =
      std::string(TPROF_TESTDATA_DIR) + "/perf/quipper-perf.data.callgraph_and_branch-3.8";
  const auto whole = RunCommand({kTprof, "report", "-i", input});
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  const long least = LeastDataLimitToStart();
  ASSERT_GT(least, 0) << "tprof --version does not start under 512 MiB";
  int completed = 0, out_of_memory = 0;
  for (long limit = least; limit <= least + 160 * kMiB; limit += 4 * kMiB) {
    testing::RunOptions options;
    options.data_limit = limit;
    const auto r = RunCommand({kTprof, "report", "-i", input}, options);
    SCOPED_TRACE("limit " + std::to_string(limit / kMiB) + " MiB: " + r.err);
    if (r.exit_code == 0) {
      ++completed;
      EXPECT_EQ(r.out, whole.out);
      continue;
    }
    EXPECT_EQ(r.exit_code, 1);
    if (OneLineError(r.err).find("out of memory") != std::string::npos) ++out_of_memory;
  }
  EXPECT_GT(out_of_memory, 0) << "no limit made the report run out of memory";
  EXPECT_GT(completed, 0) << "no limit let the report finish";
}

// The same for a recording: a status of 0 is a profile that reads, a failure says so in one
// line, and a finished file (not NAME.partial) always reads whatever the status. Once the
// summary says the profile is written, only running out of memory may still fail the command:
// the hint about short stacks reads the profile back, best effort, and under 34-46 MiB here
// that read-back was refused a thread and turned a recording that had succeeded into status 1.
TEST(CliTest, UnderAnyMemoryLimitARecordingIsWholeOrSaysItIsNot) {
  if (kUnderAddressSanitizer)
    GTEST_SKIP() << "the sanitizers' shadow memory cannot be mapped under a limit";
  const long least = LeastDataLimitToStart();
  ASSERT_GT(least, 0) << "tprof --version does not start under 512 MiB";
  const std::string dir = ::testing::TempDir() + "/tprof_cli_limit_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string out = dir + "/limited.tprof";
  int recorded = 0;
  for (long limit = least; limit <= least + 96 * kMiB; limit += 2 * kMiB) {
    std::filesystem::remove(out);
    std::filesystem::remove(out + ".partial");
    testing::RunOptions options;
    options.data_limit = limit;
    // -g: frame pointers, the mode that reads the profile back for its hint.
    const auto r = RunCommand(
        {kTprof, "record", "-g", "-e", "cpu-clock", "-o", out, "--", "/bin/true"}, options);
    SCOPED_TRACE("limit " + std::to_string(limit / kMiB) + " MiB: " + r.err);
    ASSERT_LT(r.exit_code, 128) << "killed by a signal";
    if (std::filesystem::exists(out)) {
      EXPECT_EQ(RunCommand({kTprof, "report", "-i", out}).exit_code, 0) << "a finished file";
    }
    if (r.exit_code == 0) {
      ++recorded;
      EXPECT_TRUE(std::filesystem::exists(out));
      continue;
    }
    EXPECT_EQ(r.exit_code, 1);
    const std::string error = OneLineError(r.err);
    if (r.err.find("[ tprof record: ") != std::string::npos) {
      EXPECT_NE(error.find("out of memory"), std::string::npos) << "a written profile failed";
    }
  }
  std::filesystem::remove_all(dir);
  // Whether any limit still fails it depends on timing (out of memory after the summary, near
  // 50 MiB here, comes and goes): only a finished recording is required.
  EXPECT_GT(recorded, 0) << "no limit let the recording finish";
}

// --binary takes one file an option in every command that reads profiles: given before a
// positional profile, it does not take the profile as a binary too (diff, report and import did:
// "expected OLD NEW", or "no such file: profile.tprof", the default input).
TEST(CliTest, ABinaryGivenBeforeTheProfilesTakesOneFile) {
  const std::string profile =
      std::string(TPROF_TESTDATA_DIR) + "/perf/quipper-perf.data.callgraph-3.8";
  const std::string imported = TempPath("cli", "binary_before_input.tprof");
  for (const std::vector<std::string>& argv :
       {std::vector<std::string>{kTprof, "diff", "--binary", "/bin/true", profile, profile},
        std::vector<std::string>{kTprof, "report", "--binary", "/bin/true", profile},
        std::vector<std::string>{kTprof, "stream", "--binary", "/bin/true", profile},
        std::vector<std::string>{kTprof, "import", "--binary", "/bin/true", profile, "-o",
                                 imported}}) {
    auto r = RunCommand(argv);
    EXPECT_EQ(r.exit_code, 0) << argv[1] << ": " << r.err;
    EXPECT_TRUE(argv[1] == "import" || !r.out.empty()) << argv[1];
  }
  EXPECT_TRUE(std::filesystem::exists(imported));
  std::filesystem::remove(imported);
  // One file an option: two after one --binary are a usage error, not a second binary.
  EXPECT_EQ(RunCommand({kTprof, "report", "-i", profile, "--binary", "/bin/true", "/bin/false"})
                .exit_code,
            2);
}

// A --metric that names what the profile lacks is the command line's mistake, said before the
// profile is read, in every view that takes --metric: a flame graph without a metric track used to
// ignore it and write the page (exit 0).
TEST(CliTest, AMetricOverEventsTheProfileLacksIsAUsageErrorInEveryView) {
  const std::string profile =
      std::string(TPROF_TESTDATA_DIR) + "/perf/quipper-perf.data.callgraph-3.8";
  const std::string page = TempPath("cli", "bad_metric.html");
  const std::string metric = "bogus = nosuch / cycles";
  for (const std::vector<std::string>& argv :
       {std::vector<std::string>{kTprof, "report", "-i", profile, "--metric", metric},
        std::vector<std::string>{kTprof, "report", "-i", profile, "--metric", metric, "--timeline"},
        std::vector<std::string>{kTprof, "report", "-i", profile, "--metric", metric,
                                 "--flamegraph", page, "--no-timeline"}}) {
    auto r = RunCommand(argv);
    EXPECT_EQ(r.exit_code, 2) << argv.back() << ": " << r.err;
    EXPECT_NE(r.err.find("--metric"), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
  }
  EXPECT_FALSE(std::filesystem::exists(page));
}

TEST(CliTest, ReportOfANonProfileSaysSo) {
  auto r = RunCommand({kTprof, "report", "-i", "/etc/hostname"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("not a tprof profile"), std::string::npos) << r.err;
}

// simpleperf's Arm ETM recording holds hardware trace (one AUXTRACE record of 0x180 bytes, as
// perf report -D lists it) and no samples: a plain one-line error, not an empty table with
// "nothing matched the filters" and exit 0.
TEST(CliTest, ReportOfHardwareTraceOnlySaysWhatTheFileHolds) {
  const std::string etm = std::string(TPROF_TESTDATA_DIR) + "/perf/simpleperf/perf_etm.data";
  for (const char* output : {"", "--folded", "--json"}) {
    std::vector<std::string> argv = {kTprof, "report", "-i", etm};
    if (*output) argv.push_back(output);
    auto r = RunCommand(argv);
    EXPECT_EQ(r.exit_code, 1) << output << r.err;
    EXPECT_NE(r.err.find("384 bytes of hardware trace (AUX area data"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("in 1 records, which tprof does not decode; it found 0 samples"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(r.out.find("no rows"), std::string::npos) << r.out;
  }
}

// A misspelt option before the command is tprof's, not the program's: `record --bogus -- true`
// recorded 'true' with exit 0 (a misspelt --off-cpu or --call-graph silently records something
// else), `record --freqq 99 -- true` blamed 'true'. Each is a usage error naming the option,
// before anything runs; a program's own options given without "--" are refused, not dropped.
TEST(CliTest, UnknownOptionsBeforeTheCommandAreUsageErrors) {
  const std::string out = ::testing::TempDir() + "/tprof_cli_bogus_" + std::to_string(::getpid());
  struct Case {
    std::vector<std::string> argv;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{kTprof, "record", "-o", out, "--bogus", "--", "true"}, "unknown option '--bogus'"},
      {{kTprof, "record", "--freqq", "99", "-o", out, "--", "true"},
       "unknown option '--freqq'; did you mean '--freq'?"},
      {{kTprof, "record", "-e", "cpu-clock", "-o", out, "/bin/echo", "-n", "hi"},
       "unknown option '-n'"},
      {{kTprof, "topdown", "--bogus", "--", "true"}, "unknown option '--bogus'"},
  };
  for (const Case& c : cases) {
    auto r = RunCommand(c.argv);
    EXPECT_EQ(r.exit_code, 2) << c.argv[2] << ": " << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
    EXPECT_EQ(Lines(r.err), 1) << r.err;
    EXPECT_TRUE(r.out.empty()) << "the program ran: " << r.out;
    EXPECT_NE(::access(out.c_str(), F_OK), 0) << "a recording was made";
  }
  // The same commands spelled right run, the program's options after "--".
  auto ok = RunCommand(
      {kTprof, "record", "-q", "-e", "cpu-clock", "-o", out, "--", "/bin/echo", "-n", "hi"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(ok.out, "hi");
  std::remove(out.c_str());
}

// The command after "--" keeps its own options whatever tprof's options came last: with -e just
// before "--", `sh -c` had its -c read as tprof's --count ("Could not convert: --count").
TEST(CliTest, ACommandsOwnOptionsAfterAnEventList) {
  const std::string dir =
      ::testing::TempDir() + "/tprof_cli_dashdash_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  for (const std::vector<std::string>& options :
       {std::vector<std::string>{"-o", dir + "/a.tprof", "-e", "task-clock"},
        std::vector<std::string>{"-e", "task-clock", "-o", dir + "/a.tprof"},
        std::vector<std::string>{"-o", dir + "/a.tprof", "-e", "task-clock", "-e",
                                 "page-faults"}}) {
    std::vector<std::string> args = {kTprof, "record", "-q"};
    args.insert(args.end(), options.begin(), options.end());
    for (const char* a : {"--", "/bin/sh", "-c", "exit 0"}) args.push_back(a);
    auto r = RunCommand(args);
    EXPECT_EQ(r.exit_code, 0) << options[0] << " ...: " << r.err;
  }
  std::filesystem::remove_all(dir);
}

// `record -o -` wrote a file named "-". As perf's pipe mode: the profile on standard output,
// complete, readable by `report -i -`; the program's own output goes to standard error so that
// it cannot mix with the profile's bytes, and nothing is left behind in TMPDIR.
TEST(CliTest, RecordToStandardOutputFeedsReport) {
  const std::string dir = ::testing::TempDir() + "/tprof_cli_pipe_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir + "/tmp");
  const std::string captured = dir + "/stdout.tprof";
  auto r = RunCommand({"/bin/sh", "-c",
                       "cd '" + dir + "' && TMPDIR='" + dir + "/tmp' '" + kTprof +
                           "' record -q -e task-clock -o - -- /bin/sh -c "
                           "'echo the-program-speaks; i=0; while [ $i -lt 200000 ]; "
                           "do i=$((i+1)); done' > '" +
                           captured + "'"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("the-program-speaks"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/-")) << "a file named '-' was written";
  EXPECT_TRUE(std::filesystem::is_empty(dir + "/tmp")) << "the spool was left behind";
  std::ifstream in(captured, std::ios::binary);
  const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  EXPECT_EQ(bytes.find("the-program-speaks"), std::string::npos);
  // The same bytes as a file and through a pipe give the same report.
  auto from_file = RunCommand({kTprof, "report", "-v", "-i", captured, "--sort", "comm"});
  ASSERT_EQ(from_file.exit_code, 0) << from_file.err;
  EXPECT_NE(from_file.out.find("task-clock"), std::string::npos) << from_file.out;
  EXPECT_NE(from_file.out.find("sh"), std::string::npos) << from_file.out;
  auto piped = RunCommand(
      {"/bin/sh", "-c", "'" + kTprof + "' report -v -i - --sort comm < '" + captured + "'"});
  ASSERT_EQ(piped.exit_code, 0) << piped.err;
  auto body = [](const std::string& report) { return report.substr(report.find("# event:")); };
  EXPECT_EQ(body(piped.out), body(from_file.out));
  // A reader that has gone (here before the profile is ready) is an error that says so, not a
  // death by SIGPIPE or an exit 0.
  auto gone = RunCommand(
      {"/bin/bash", "-c",
       "set -o pipefail; '" + kTprof + "' record -q -e task-clock -o - -- /bin/sleep 0.2 | true"});
  EXPECT_EQ(gone.exit_code, 1) << gone.err;
  EXPECT_NE(gone.err.find("writing standard output: Broken pipe"), std::string::npos) << gone.err;
  // Binary bytes are not written to a terminal (script(1) gives the command one).
  auto terminal = RunCommand(
      {"/usr/bin/script", "-qec", kTprof + " record -q -e task-clock -o - -- true", "/dev/null"});
  EXPECT_EQ(terminal.exit_code, 2) << terminal.out;
  EXPECT_NE(terminal.out.find("standard output is a terminal"), std::string::npos) << terminal.out;
  std::filesystem::remove_all(dir);
}

// One rule for every subcommand: a request naming what the input lacks (an event, a ratio's
// events, a metric's) is the command line's fault, exit 2; a command that could not do its job
// (a missing input, an unwritable output) exits 1. "no event 'X'" exited 2 with --folded and 1
// with --flamegraph and diff --flamegraph. Each says so in one line and writes nothing out.
TEST(CliTest, UsageErrorsExitTwoAndFailuresExitOneInEverySubcommand) {
  const std::string dir = ::testing::TempDir() + "/tprof_cli_rule_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string p = dir + "/p.tprof", html = dir + "/out.html";
  auto recorded =
      RunCommand({kTprof, "record", "-q", "-g", "-e", "task-clock", "-o", p, "--", "/bin/sh", "-c",
                  "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done"});
  ASSERT_EQ(recorded.exit_code, 0) << recorded.err;
  struct Case {
    std::vector<std::string> argv;
    int exit_code;
  };
  const std::vector<Case> cases = {
      {{kTprof, "report", "-i", p, "--folded", "--event", "nope"}, 2},
      {{kTprof, "report", "-i", p, "--flamegraph", html, "--event", "nope"}, 2},
      {{kTprof, "report", "-i", p, "--flamegraph", html, "--color", "ipc"}, 2},
      {{kTprof, "report", "-i", p, "--metric", "x = nope / task-clock"}, 2},
      {{kTprof, "diff", p, p, "--flamegraph", html, "--event", "nope"}, 2},
      {{kTprof, "diff", p, p, "--normalize", "nope"}, 2},
      {{kTprof, "diff", p, p, "--flamegraph", html, "--normalize", "nope"}, 2},
      {{kTprof, "diff", p, p, "--fail-if", "total.nope > +5%"}, 2},
      {{kTprof, "stream", p, "--event", "nope"}, 2},
      // Outputs that carry every event still refuse a name the profile does not have.
      {{kTprof, "report", "-i", p, "--event", "nope"}, 2},
      {{kTprof, "report", "-i", p, "--pprof", dir + "/p.pb", "--event", "nope"}, 2},
      {{kTprof, "report", "-i", p, "--speedscope", dir + "/p.json", "--event", "nope"}, 2},
      {{kTprof, "diff", p, p, "--event", "nope"}, 2},
      {{kTprof, "report", "-i", dir + "/missing.tprof"}, 1},
      {{kTprof, "report", "-i", p, "--flamegraph", dir + "/no/such/dir/out.html"}, 1},
      {{kTprof, "diff", dir + "/missing.tprof", p}, 1},
      {{kTprof, "diff", p, p, "--flamegraph", dir + "/no/such/dir/out.html"}, 1},
      {{kTprof, "stream", dir + "/missing.tprof"}, 1},
      {{kTprof, "import", dir + "/missing.data", "-o", dir + "/x.tprof"}, 1},
      {{kTprof, "topdown", "--cpu", "neoverse-n1", "--input", dir + "/missing.csv"}, 1},
  };
  for (const Case& c : cases) {
    std::string shown;
    for (size_t i = 1; i < c.argv.size(); ++i) shown += c.argv[i] + " ";
    auto r = RunCommand(c.argv);
    EXPECT_EQ(r.exit_code, c.exit_code) << shown << "\n" << r.err;
    EXPECT_EQ(Lines(r.err), 1) << shown << "\n" << r.err;
    EXPECT_NE(r.err.find("tprof " + c.argv[1] + ": "), std::string::npos) << shown << r.err;
    EXPECT_TRUE(r.out.empty()) << shown << "\n" << r.out;
    EXPECT_FALSE(std::filesystem::exists(html)) << shown;
    EXPECT_FALSE(std::filesystem::exists(dir + "/p.pb")) << shown;
    EXPECT_FALSE(std::filesystem::exists(dir + "/p.json")) << shown;
    // One message for a misspelt event, whichever command and output met it.
    if (shown.find("nope") != std::string::npos && shown.find("--metric") == std::string::npos &&
        (shown.find("--normalize") == std::string::npos ||
         shown.find("--flamegraph") != std::string::npos)) {
      EXPECT_NE(r.err.find("no event 'nope' (it has: task-clock)"), std::string::npos)
          << shown << r.err;
    }
  }
  std::filesystem::remove_all(dir);
}

// Outputs that exclude each other are a usage error, not a silent choice: `--flamegraph x
// --json` wrote the page and dropped the JSON, `--folded --json` printed folded stacks.
TEST(CliTest, OutputsThatExcludeEachOtherAreAUsageError) {
  const std::string dir = ::testing::TempDir() + "/tprof_cli_outputs_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string p = dir + "/p.tprof", html = dir + "/out.html", pb = dir + "/out.pb";
  auto recorded =
      RunCommand({kTprof, "record", "-q", "-g", "-e", "task-clock", "-o", p, "--", "/bin/sh", "-c",
                  "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done"});
  ASSERT_EQ(recorded.exit_code, 0) << recorded.err;
  const std::vector<std::vector<std::string>> conflicts = {
      {"--flamegraph", html, "--json"},
      {"--flamegraph", html, "--folded"},
      {"--flamegraph", html, "--pprof", pb},
      {"--folded", "--json"},
      {"--folded", "--csv"},
      {"--pprof", pb, "--json"},
      {"--annotate", "main", "--json"},
      {"--folded", "--annotate", "main"},
      {"--callers", "main", "--folded"},
      {"--speedscope", dir + "/s.json", "--callees", "main"},
  };
  for (const auto& options : conflicts) {
    std::vector<std::string> argv = {kTprof, "report", "-i", p};
    argv.insert(argv.end(), options.begin(), options.end());
    std::string shown;
    for (const std::string& o : options) shown += o + " ";
    auto r = RunCommand(argv);
    EXPECT_EQ(r.exit_code, 2) << shown << r.err;
    EXPECT_NE(r.err.find("are two outputs"), std::string::npos) << shown << r.err;
    EXPECT_EQ(Lines(r.err), 1) << shown << r.err;
    EXPECT_TRUE(r.out.empty()) << shown;
    EXPECT_FALSE(std::filesystem::exists(html)) << shown;
    EXPECT_FALSE(std::filesystem::exists(pb)) << shown;
  }
  // What goes together still does: the exports share one pass.
  auto both = RunCommand({kTprof, "report", "-i", p, "--folded", "--pprof", pb});
  EXPECT_EQ(both.exit_code, 0) << both.err;
  EXPECT_FALSE(both.out.empty());
  EXPECT_TRUE(std::filesystem::exists(pb));
  auto callers = RunCommand({kTprof, "report", "-i", p, "--callers", "main", "--json"});
  EXPECT_EQ(callers.exit_code, 0) << callers.err;
  std::filesystem::remove_all(dir);
}

// A perf user's habits: what perf spells the same works, what tprof does otherwise is named.
TEST(CliTest, PerfHabitsWorkOrSayWhatToUseInstead) {
  const std::string dir = ::testing::TempDir() + "/tprof_cli_habits_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string p = dir + "/p.tprof";
  // -F max: the kernel's own limit (100 kHz here). Not with a clock: a VM's timer interrupts
  // at that rate leave the sampled program almost no time of its own (`sh -c 'exec true'` took
  // 8 s of task-clock, perf's recording the same, and a shell loop over the test's time limit
  // on a loaded CI machine). Page faults at the maximum rate are every fault, and fast.
  auto recorded = RunCommand({kTprof, "record", "-q", "-F", "max", "-e", "page-faults", "-o", p,
                              "--", "/bin/sh", "-c", "exec true"});
  ASSERT_EQ(recorded.exit_code, 0) << recorded.err;
  auto bad_freq = RunCommand({kTprof, "record", "-F", "lots", "-o", p, "--", "true"});
  EXPECT_EQ(bad_freq.exit_code, 2) << bad_freq.err;
  EXPECT_NE(bad_freq.err.find("'max'"), std::string::npos) << bad_freq.err;
  // perf report's defaults, spelled out: the same table.
  auto plain = RunCommand({kTprof, "report", "-i", p});
  auto spelled = RunCommand({kTprof, "report", "--stdio", "--no-children", "-n", "-i", p});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_EQ(spelled.exit_code, 0) << spelled.err;
  EXPECT_EQ(spelled.out, plain.out);
  // perf's options that tprof spells otherwise: the message names tprof's way, not '-h'.
  struct Case {
    std::vector<std::string> argv;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{kTprof, "report", "-i", p, "-g"}, "--callers"},
      {{kTprof, "report", "-i", p, "--vmlinux", "/boot/vmlinux"}, "kallsyms"},
      {{kTprof, "report", "-i", p, "--dsos", "libc.so.6"}, "--dso"},
      {{kTprof, "report", "-i", p, "--tui"}, "--flamegraph"},
      {{kTprof, "record", "-z", "-o", p, "--", "true"}, "zstd"},
  };
  for (const Case& c : cases) {
    auto r = RunCommand(c.argv);
    EXPECT_EQ(r.exit_code, 2) << c.argv[1] << " " << c.argv.back() << ": " << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("did you mean"), std::string::npos) << r.err;
    EXPECT_EQ(Lines(r.err), 1) << r.err;
  }
  // import -i, as perf's commands take their input.
  const std::string perf_data =
      std::string(TPROF_TESTDATA_DIR) + "/perf/quipper-perf.data.throttle-3.8";
  auto imported = RunCommand({kTprof, "import", "-i", perf_data, "-o", dir + "/i.tprof"});
  EXPECT_EQ(imported.exit_code, 0) << imported.err;
  EXPECT_TRUE(std::filesystem::exists(dir + "/i.tprof"));
  std::filesystem::remove_all(dir);
}

// report --limit N says how many rows it left out, as diff does.
TEST(CliTest, ReportLimitSaysHowManyRowsAreLeftOut) {
  const std::string dir = ::testing::TempDir() + "/tprof_cli_limit_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string folded = dir + "/in.folded";
  std::ofstream(folded) << "main;a 5\nmain;b 4\nmain;c 3\nmain;d 2\n";
  auto all = RunCommand({kTprof, "report", "-i", folded, "--sort", "sym"});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  EXPECT_EQ(all.out.find("more (--limit)"), std::string::npos) << all.out;
  auto two = RunCommand({kTprof, "report", "-i", folded, "--sort", "sym", "--limit", "2"});
  ASSERT_EQ(two.exit_code, 0) << two.err;
  EXPECT_NE(two.out.find("# ... 2 more (--limit)"), std::string::npos) << two.out;
  auto json =
      RunCommand({kTprof, "report", "-i", folded, "--sort", "sym", "--limit", "3", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_NE(json.out.find("\"rows_beyond_limit\": 1"), std::string::npos) << json.out;
  std::filesystem::remove_all(dir);
}

// Mistakes that got an answer that was not one, each with exit 0 before: a damaged profile
// with no readable sample ("# no rows: nothing matched the filters", no filter given), two
// inputs (the first reported silently), a negative --limit, and topdown's unreadable input
// without the reason.
TEST(CliTest, ReportMistakesAreErrorsThatSayWhatHappened) {
  const std::string dir =
      ::testing::TempDir() + "/tprof_cli_mistakes_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string whole = dir + "/a.tprof", cut = dir + "/cut.tprof";
  ASSERT_EQ(RunCommand({kTprof, "record", "-q", "-e", "cpu-clock", "-o", whole, "--", "/bin/sh",
                        "-c", "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done"})
                .exit_code,
            0);
  std::ifstream in(whole, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(bytes.size(), 3000u);
  std::ofstream(cut, std::ios::binary) << bytes.substr(0, 3000);

  auto damaged = RunCommand({kTprof, "report", "-i", cut});
  EXPECT_EQ(damaged.exit_code, 1) << damaged.out;
  EXPECT_NE(damaged.err.find("no samples could be read"), std::string::npos) << damaged.err;
  EXPECT_EQ(damaged.out.find("nothing matched the filters"), std::string::npos) << damaged.out;

  auto two = RunCommand({kTprof, "report", whole, "-i", cut});
  EXPECT_EQ(two.exit_code, 2) << two.err;
  EXPECT_TRUE(two.out.empty());

  auto limit = RunCommand({kTprof, "report", "-i", whole, "--limit", "-1"});
  EXPECT_EQ(limit.exit_code, 2);
  EXPECT_NE(limit.err.find("--limit: a number of rows"), std::string::npos) << limit.err;

  auto filtered = RunCommand({kTprof, "report", "-i", whole, "--comm", "no-such-comm"});
  EXPECT_EQ(filtered.exit_code, 0) << filtered.err;
  EXPECT_NE(filtered.out.find("# no rows: nothing matched the filters"), std::string::npos);

  // Branch streams of a profile without branch stacks: refused with the reason, as --blocks is.
  auto branch = RunCommand({kTprof, "stream", whole, "--source", "branch"});
  EXPECT_EQ(branch.exit_code, 1) << branch.out;
  EXPECT_NE(branch.err.find("--source branch needs branch stacks"), std::string::npos)
      << branch.err;

  auto missing = RunCommand({kTprof, "topdown", "--cpu", "skylake", "--input", dir + "/none.csv"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("none.csv: No such file or directory"), std::string::npos)
      << missing.err;
  std::filesystem::remove_all(dir);
}

TEST(CliTest, StreamOfAMissingFileSaysSoInOneLine) {
  auto r = RunCommand({kTprof, "stream", "x.tprof"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("tprof stream: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("x.tprof"), std::string::npos) << r.err;
  EXPECT_EQ(Lines(r.err), 1);
}

TEST(CliTest, TopdownLiveWithoutAPmuSaysSoInOneLine) {
  auto r = RunCommand({kTprof, "topdown", "-M", "l1", "--", "/bin/true"});
  if (r.exit_code == 0) GTEST_SKIP() << "this machine has a PMU";
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no hardware PMU"), std::string::npos) << r.err;
  EXPECT_EQ(Lines(r.err), 1);
}

// Counts of an Arm CPU evaluated with an Intel table: not a table of n/a and exit 0, but an
// error that names the tables the counts fit.
TEST(CliTest, TopdownCountsThatDoNotFitTheTableSayWhichDo) {
  std::string path = ::testing::TempDir() + "/tprof_cli_arm_counts.csv";
  std::ofstream(path)
      << "1000,,CPU_CYCLES,5000,100.00,,\n1500,,STALL_SLOT_FRONTEND,5000,100.00,,\n";
  auto r = RunCommand({kTprof, "topdown", "--cpu", "skylake", "--input", path});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.err.find("none of the skylake table's metrics"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("tables that fit them: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("neoverse-n2"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("skylake (--cpu"), std::string::npos) << r.err;
  EXPECT_EQ(Lines(r.err), 1) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  std::remove(path.c_str());
}

// Offline evaluation through the command line, in all three output forms. N2 r0p0-r0p2 counts:
// frontend = (1500 - 1000) / (5 * 1000) = 10%.
TEST(CliTest, TopdownEvaluatesSavedPerfStatCounts) {
  std::string path = ::testing::TempDir() + "/tprof_cli_counts.csv";
  std::ofstream(path)
      << "1000,,CPU_CYCLES,5000,100.00,,\n1500,,STALL_SLOT_FRONTEND,5000,100.00,,\n";
  auto text = RunCommand({kTprof, "topdown", "--cpu", "0x410fd490", "--input", path});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("frontend_bound"), std::string::npos);
  EXPECT_NE(text.out.find("10.00"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("n/a"), std::string::npos);  // backend_bound: not counted
  auto csv = RunCommand({kTprof, "topdown", "--cpu", "neoverse-n2", "--input", path, "--csv"});
  EXPECT_NE(csv.out.find("frontend_bound,10.00,%,100"), std::string::npos) << csv.out;
  auto json = RunCommand({kTprof, "topdown", "--cpu", "neoverse-n2", "--input", path, "--json"});
  EXPECT_NE(json.out.find("\"value\": 10.0"), std::string::npos) << json.out;
  auto bad = RunCommand({kTprof, "topdown", "--cpu", "pentium", "--input", path});
  EXPECT_EQ(bad.exit_code, 2);
  auto group = RunCommand({kTprof, "topdown", "--cpu", "n2", "--input", path, "-M", "Nope"});
  EXPECT_EQ(group.exit_code, 2);
  EXPECT_NE(group.err.find("TLB"), std::string::npos) << group.err;  // lists the real groups
  std::remove(path.c_str());
}

TEST(CliTest, ListCpusAndMetrics) {
  auto cpus = RunCommand({kTprof, "list", "cpus"});
  EXPECT_EQ(cpus.exit_code, 0);
  for (const char* name :
       {"neoverse-n1", "neoverse-n2", "neoverse-n2-r0p3", "neoverse-v1", "neoverse-v2"})
    EXPECT_NE(cpus.out.find(name), std::string::npos) << name;
  auto metrics = RunCommand({kTprof, "list", "metrics", "--cpu", "neoverse-n2"});
  EXPECT_EQ(metrics.exit_code, 0);
  EXPECT_NE(metrics.out.find("(STALL_SLOT_FRONTEND - CPU_CYCLES)"), std::string::npos);
}

}  // namespace
}  // namespace tprof
