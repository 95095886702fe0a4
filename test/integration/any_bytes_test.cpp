// Names that are not UTF-8 in every output: a thread name (prctl), a binary's path, a library's
// path and a symbol holding bytes 0xFF, 0xFE and 0x80, recorded live (bad_bytes.c) and written
// into a hand-made perf.data. Every text output shows each such byte as \xHH (the one rule,
// core/base/visible_text.h); JSON and the page are checked valid by a second parser (Node's
// fatal TextDecoder and JSON.parse) and pprof by protoc (its strings must be UTF-8); diff matches
// the functions across two recordings by their bytes.
#include <gtest/gtest.h>
#include <linux/perf_event.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test/support/perf_data_writer.h"
#include "test/support/run_command.h"
#include "test/support/test_programs.h"

namespace tprof {
namespace any_bytes {
namespace {

using testing::RunCommand;

const std::string kProgram = BAD_BYTES_BINARY;
const std::string kLibrary = BAD_BYTES_LIBRARY;
const std::string kProtoDirectory = PPROF_PROTO_DIR;

// The names as the program makes them, and as every output must show them.
const std::string kThread = "w\xff\xfe\x80z", kThreadShown = "w\\xFF\\xFE\\x80z";
const std::string kSymbol = "spin_\xff\xfe_bytes", kSymbolShown = "spin_\\xFF\\xFE_bytes";
const std::string kLibraryName =
                      "lib\xff"
                      "bytes.so",
                  kLibraryShown = "lib\\xFFbytes.so";
const std::string kDirectory =
                      "bad\xff"
                      "dir",
                  kDirectoryShown = "bad\\xFFdir";

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// Node's verdict on a file: "ok" when its bytes are UTF-8 (a fatal decoder) and, with `json`,
// JSON.parse takes them; otherwise its error.
std::string NodeReads(const std::string& path, bool json) {
  const std::string script =
      "const b = require('fs').readFileSync(process.argv[1]);"
      "const t = new TextDecoder('utf-8', {fatal: true}).decode(b);" +
      std::string(json ? "JSON.parse(t);" : "") + "console.log('ok');";
  auto r = RunCommand({"/usr/bin/env", "node", "-e", script, path});
  return r.exit_code == 0 ? "ok" : r.err;
}

class AnyBytes : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "tprof-any-bytes-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = new std::string(pattern);
    const std::string bin = *dir_ + "/" + kDirectory;
    std::filesystem::create_directory(bin);
    std::filesystem::copy_file(kProgram, bin + "/prog");
    std::filesystem::copy_file(kLibrary, bin + "/" + kLibraryName);
    for (const char* name : {"/old.tprof", "/new.tprof"}) {
      auto r = RunCommand({kTprof, "record", "-q", "-g", "-e", "task-clock", "-o", *dir_ + name,
                           "--", bin + "/prog", bin + "/" + kLibraryName});
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
  }
  static void TearDownTestSuite() {
    std::error_code ignored;
    std::filesystem::remove_all(*dir_, ignored);
    delete dir_;
  }
  static std::string Path(const std::string& name) { return *dir_ + "/" + name; }

  static std::string* dir_;
};
std::string* AnyBytes::dir_ = nullptr;

TEST_F(AnyBytes, TextCsvAndFoldedShowEachByteTheSameWay) {
  const std::string profile = Path("old.tprof");
  auto text = RunCommand({kTprof, "report", "-i", profile, "--sort", "comm,dso,sym"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  auto csv = RunCommand({kTprof, "report", "-i", profile, "--sort", "comm,dso,sym", "--csv"});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  auto folded = RunCommand({kTprof, "report", "-i", profile, "--folded"});
  ASSERT_EQ(folded.exit_code, 0) << folded.err;
  for (const auto& [name, out] : {std::pair("text", text.out), std::pair("csv", csv.out)}) {
    EXPECT_NE(out.find(kThreadShown), std::string::npos) << name << "\n" << out;
    EXPECT_NE(out.find(kSymbolShown), std::string::npos) << name;
    EXPECT_NE(out.find(kLibraryShown), std::string::npos) << name;
    EXPECT_EQ(out.find(kSymbol), std::string::npos) << name << ": raw bytes";
    const std::string file = Path(std::string(name) + ".txt");
    WriteFile(file, out);
    EXPECT_EQ(NodeReads(file, false), "ok") << name;
  }
  // The command line in the header names the directory.
  EXPECT_NE(text.out.find(kDirectoryShown), std::string::npos) << text.out.substr(0, 600);
  EXPECT_NE(folded.out.find(kSymbolShown), std::string::npos);
  WriteFile(Path("folded.txt"), folded.out);
  EXPECT_EQ(NodeReads(Path("folded.txt"), false), "ok");
  // The table's columns are aligned on what is shown: the thread name's column is as wide as
  // its \xHH form, so each row's function starts where the header's "Function" does.
  size_t header = text.out.find("Function");
  ASSERT_NE(header, std::string::npos);
  const size_t column = header - text.out.rfind('\n', header) - 1;
  size_t row = text.out.find(kSymbolShown);
  ASSERT_NE(row, std::string::npos);
  EXPECT_EQ(row - text.out.rfind('\n', row) - 1, column) << text.out;
}

TEST_F(AnyBytes, JsonSpeedscopeAndThePageAreValidAndShowTheSameNames) {
  const std::string profile = Path("old.tprof");
  auto json = RunCommand({kTprof, "report", "-i", profile, "--sort", "comm,dso,sym", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  WriteFile(Path("report.json"), json.out);
  EXPECT_EQ(NodeReads(Path("report.json"), true), "ok");
  const nlohmann::json j = nlohmann::json::parse(json.out);
  bool found = false;
  for (const auto& row : j["rows"])
    if (row["keys"]["sym"] == kSymbolShown) {
      found = true;
      EXPECT_EQ(row["keys"]["comm"], kThreadShown);
      EXPECT_EQ(row["keys"]["dso"], "prog");
    }
  EXPECT_TRUE(found) << json.out.substr(0, 2000);
  EXPECT_NE(j["metadata"]["command_line"].dump().find("bad\\\\xFFdir"), std::string::npos)
      << j["metadata"].dump();

  for (const auto& [option, file] :
       {std::pair("--speedscope", "s.json"), {"--flamegraph", "f.html"}}) {
    auto exported = RunCommand({kTprof, "report", "-i", profile, option, Path(file)});
    ASSERT_EQ(exported.exit_code, 0) << exported.err;
  }
  EXPECT_EQ(NodeReads(Path("s.json"), true), "ok");
  EXPECT_EQ(NodeReads(Path("f.html"), false), "ok");
  const std::string speedscope = testing::ReadWholeFile(Path("s.json"));
  // In JSON text the backslash of \xFF is itself escaped.
  EXPECT_NE(speedscope.find("spin_\\\\xFF\\\\xFE_bytes"), std::string::npos);
  const std::string page = testing::ReadWholeFile(Path("f.html"));
  EXPECT_NE(page.find("spin_\\\\xFF\\\\xFE_bytes"), std::string::npos);
  EXPECT_NE(page.find("lib\\\\xFFbytes.so"), std::string::npos);
}

TEST_F(AnyBytes, PprofIsValidAndShowsTheSameNames) {
  const std::string out = Path("p.pb.gz");
  auto r = RunCommand({kTprof, "report", "-i", Path("old.tprof"), "--pprof", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto decoded =
      RunCommand({"/bin/sh", "-c",
                  "gzip -dc '" + out + "' | protoc --decode perftools.profiles.Profile -I " +
                      kProtoDirectory + " " + kProtoDirectory + "/profile.proto"});
  ASSERT_EQ(decoded.exit_code, 0) << decoded.err;
  // profile.proto's strings must be UTF-8 (protoc refuses the file otherwise): the same visible
  // form, its backslash escaped in protoc's text.
  EXPECT_NE(decoded.out.find("spin_\\\\xFF\\\\xFE_bytes"), std::string::npos)
      << decoded.out.substr(0, 3000);
  EXPECT_NE(decoded.out.find("lib\\\\xFFbytes.so"), std::string::npos);
}

TEST_F(AnyBytes, DiffMatchesTheFunctionsByTheirBytesAndItsJsonIsValid) {
  auto r = RunCommand({kTprof, "diff", Path("old.tprof"), Path("new.tprof"), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  WriteFile(Path("diff.json"), r.out);
  EXPECT_EQ(NodeReads(Path("diff.json"), true), "ok");
  const nlohmann::json j = nlohmann::json::parse(r.out);
  int matched = 0;
  for (const auto& function : j["events"][0]["functions"]) {
    if (function["function"] != kSymbolShown && function["function"] != "lib_spin") continue;
    // On both sides: neither gone nor new.
    EXPECT_EQ(function["status"], "both") << function.dump();
    ++matched;
  }
  EXPECT_GE(matched, 2) << r.out.substr(0, 3000);
  auto text = RunCommand({kTprof, "diff", Path("old.tprof"), Path("new.tprof")});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find(kSymbolShown), std::string::npos) << text.out;
}

// A perf.data made by hand: a thread named and a module mapped at paths with such bytes (the
// module does not exist: its samples are the module's own rows).
TEST_F(AnyBytes, APerfDataFileWithSuchNamesReportsValidJson) {
  testing::PerfDataWriter writer;
  writer.AddEvent("task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, 1000000, false);
  writer.Comm(100, 100, kThread, 1);
  writer.Mmap(100, 0x400000, 0x10000, 0, "/opt/" + kDirectory + "/prog", 2);
  for (uint64_t i = 0; i < 10; ++i)
    writer.Sample(0, 100, 100, 10 + i, 1000000, {0x401000 + i * 16});
  const std::string data = Path("hand.perf.data");
  ASSERT_TRUE(writer.WriteTo(data));
  auto json = RunCommand({kTprof, "report", "-i", data, "--sort", "comm,dso", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  WriteFile(Path("hand.json"), json.out);
  EXPECT_EQ(NodeReads(Path("hand.json"), true), "ok");
  const nlohmann::json j = nlohmann::json::parse(json.out);
  ASSERT_FALSE(j["rows"].empty());
  EXPECT_EQ(j["rows"][0]["keys"]["comm"], kThreadShown);
  EXPECT_EQ(j["rows"][0]["keys"]["dso"], "prog");
  auto text = RunCommand({kTprof, "report", "-i", data, "--sort", "comm,dso", "-v"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find(kThreadShown), std::string::npos) << text.out;
}

// An event whose name is not UTF-8 (one flipped byte in a file's event description): imported
// to .tprof it keeps its bytes, so a diff of the .tprof against the perf.data pairs the event,
// and both show it in the same visible form.
TEST_F(AnyBytes, AnEventNameOfAnyBytesSurvivesImportAndPairsInADiff) {
  const std::string event = "task\xff-clock";
  testing::PerfDataWriter writer;
  writer.AddEvent(event, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, 1000000, false);
  writer.Comm(100, 100, "prog", 1);
  writer.Mmap(100, 0x400000, 0x10000, 0, "/opt/prog", 2);
  for (uint64_t i = 0; i < 10; ++i)
    writer.Sample(0, 100, 100, 10 + i, 1000000, {0x401000 + i * 16});
  const std::string data = Path("event.perf.data"), imported = Path("event.tprof");
  ASSERT_TRUE(writer.WriteTo(data));
  auto import = RunCommand({kTprof, "import", data, "-o", imported});
  ASSERT_EQ(import.exit_code, 0) << import.err;
  auto diff = RunCommand({kTprof, "diff", imported, data, "--json"});
  ASSERT_EQ(diff.exit_code, 0) << diff.err;
  const nlohmann::json j = nlohmann::json::parse(diff.out);
  EXPECT_TRUE(j["unpaired_events"].empty()) << j["unpaired_events"].dump();
  ASSERT_EQ(j["events"].size(), 1u) << diff.out.substr(0, 2000);
  EXPECT_EQ(j["events"][0]["name"], "task\\xFF-clock");
  auto from_tprof = RunCommand({kTprof, "report", "-i", imported, "--json"});
  auto from_data = RunCommand({kTprof, "report", "-i", data, "--json"});
  ASSERT_EQ(from_tprof.exit_code, 0) << from_tprof.err;
  ASSERT_EQ(from_data.exit_code, 0) << from_data.err;
  EXPECT_EQ(nlohmann::json::parse(from_tprof.out)["events"][0]["name"],
            nlohmann::json::parse(from_data.out)["events"][0]["name"]);
}

}  // namespace
}  // namespace any_bytes
}  // namespace tprof
