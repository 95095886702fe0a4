// The protobuf encoder against the protobuf documentation's own examples, and the pprof encoding
// of a constructed stack profile decoded by protoc with Debian's profile.proto.
#include "report/pprof_exporter.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "core/analysis/stack_profile.h"
#include "report/protobuf_writer.h"
#include "report/speedscope_exporter.h"
#include "test/support/run_command.h"

namespace tprof {
namespace {

std::string Hex(const std::string& bytes) {
  std::string hex;
  char digits[3];
  for (unsigned char c : bytes) {
    std::snprintf(digits, sizeof digits, "%02x", c);
    hex += digits;
  }
  return hex;
}

// protobuf.dev/programming-guides/encoding: field 1 = 150 is 08 96 01; field 2 = "testing" is
// 12 07 74 65 73 74 69 6e 67; packed field 4 = [3, 270, 86942] is 22 06 03 8e 02 9e a7 05.
TEST(ProtobufWriter, MatchesTheEncodingGuideExamples) {
  ProtobufWriter varint;
  varint.Varint(1, 150);
  EXPECT_EQ(Hex(varint.bytes()), "089601");
  ProtobufWriter text;
  text.Bytes(2, "testing");
  EXPECT_EQ(Hex(text.bytes()), "120774657374696e67");
  ProtobufWriter packed;
  packed.PackedVarints(4, std::vector<uint64_t>{3, 270, 86942});
  EXPECT_EQ(Hex(packed.bytes()), "2206038e029ea705");
  ProtobufWriter zero;  // proto3: a zero scalar is the default and is not written
  zero.Varint(1, 0);
  EXPECT_EQ(zero.bytes(), "");
}

// Two events; one stack through an inlined call in a mapped binary, one kernel stack with no
// mapping.
StackProfile SmallProfile() {
  StackProfile p;
  p.events.resize(2);
  p.events[0].name = "cpu-clock";
  p.events[1].name = "cycles:u";
  p.mappings.push_back({0x400000, 0x500000, 0x1000, "/bin/prog", std::string("\xab\x01", 2)});
  StackLocation leaf;
  leaf.mapping = 0;
  leaf.address = 0x401234;
  leaf.frame.function = "outer";
  leaf.frame.resolved = true;
  leaf.frame.frames = {{"helper", "_Z6helperv", "/src/a.h", 7, 0, true},
                       {"outer", "_Z5outerv", "/src/a.cc", 20, 0, false}};
  StackLocation caller;
  caller.mapping = 0;
  caller.address = 0x401100;
  caller.frame.function = "main";
  caller.frame.resolved = true;
  caller.frame.frames = {{"main", "", "/src/a.cc", 40, 0, false}};
  StackLocation kernel;
  kernel.address = 0xffffffff81000010;
  kernel.kernel = true;
  kernel.frame.function = "do_syscall_64";
  kernel.frame.module = "[kernel.kallsyms]";
  kernel.frame.resolved = true;
  p.locations = {leaf, caller, kernel};
  Stack user;
  user.pid = 7;
  user.tid = 8;
  user.comm = "prog";
  user.locations = {0, 1};
  user.period = {1000, 30};
  user.samples = {2, 1};
  Stack sys;
  sys.pid = 7;
  sys.tid = 7;
  sys.comm = "prog";
  sys.locations = {2, 1};
  sys.period = {500, 0};
  sys.samples = {1, 0};
  p.stacks = {user, sys};
  p.total_period = {1500, 30};
  p.total_samples = {3, 1};
  return p;
}

TEST(PprofExporter, DecodesWithProfileProto) {
  Metadata metadata;
  metadata.command_line = {"prog", "arg"};
  metadata.duration_ns = 123456;
  std::string path = ::testing::TempDir() + "/tprof_pprof_unit_" + std::to_string(::getpid());
  {
    std::ofstream out(path, std::ios::binary);
    out << EncodePprof(metadata, SmallProfile());
  }
  const std::string dir = PPROF_PROTO_DIR;
  auto decoded = testing::RunCommand({"/bin/sh", "-c",
                                      "protoc --decode perftools.profiles.Profile -I " + dir + " " +
                                          dir + "/profile.proto < " + path});
  std::remove(path.c_str());
  ASSERT_EQ(decoded.exit_code, 0) << decoded.err;
  const std::string& text = decoded.out;
  // Values per event in sample_type order; zero values are written in packed arrays.
  EXPECT_NE(text.find("  value: 1000\n  value: 30\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  value: 500\n  value: 0\n"), std::string::npos) << text;
  // The inlined location: two lines, innermost (helper, line 7) first.
  EXPECT_NE(text.find("address: 4198964\n  line {\n    function_id: 1\n    line: 7\n  }\n"
                      "  line {\n    function_id: 2\n    line: 20\n  }\n"),
            std::string::npos)
      << text;
  // The kernel location has no mapping_id.
  size_t kernel = text.find("address: 18446744071578845200");
  ASSERT_NE(kernel, std::string::npos);
  size_t kernel_start = text.rfind("location {", kernel);
  EXPECT_EQ(text.substr(kernel_start, kernel - kernel_start).find("mapping_id"), std::string::npos);
  EXPECT_NE(text.find("build_id: "), std::string::npos);
  EXPECT_NE(text.find("string_table: \"ab01\""), std::string::npos) << text;
  EXPECT_NE(text.find("string_table: \"\"\n"), std::string::npos);  // index 0
  EXPECT_NE(text.find("string_table: \"nanoseconds\""), std::string::npos);
  EXPECT_NE(text.find("string_table: \"count\""), std::string::npos);  // cycles:u
  EXPECT_NE(text.find("duration_nanos: 123456"), std::string::npos);
}

TEST(PprofExporter, IsGzipped) {
  auto gz = ExportPprof({}, SmallProfile());
  ASSERT_TRUE(gz.ok());
  ASSERT_GT(gz->size(), 18u);
  EXPECT_EQ(static_cast<unsigned char>((*gz)[0]), 0x1f);
  EXPECT_EQ(static_cast<unsigned char>((*gz)[1]), 0x8b);
}

TEST(SpeedscopeExporter, FramesRootFirstWithInlinedCallsAndOneProfilePerEvent) {
  auto file = nlohmann::json::parse(ExportSpeedscope({}, SmallProfile()));
  std::vector<std::string> names;
  for (const auto& frame : file["shared"]["frames"]) names.push_back(frame["name"]);
  ASSERT_EQ(file["profiles"].size(), 2u);
  const auto& cpu = file["profiles"][0];
  EXPECT_EQ(cpu["unit"], "nanoseconds");
  EXPECT_EQ(file["profiles"][1]["unit"], "none");
  // main, then outer, then the inlined helper: root first.
  std::vector<std::string> first;
  for (const auto& f : cpu["samples"][0]) first.push_back(names.at(f.get<size_t>()));
  EXPECT_EQ(first, (std::vector<std::string>{"main", "outer", "helper"}));
  EXPECT_EQ(cpu["weights"], nlohmann::json::array({1000, 500}));
  // The second event has only the user stack.
  EXPECT_EQ(file["profiles"][1]["weights"], nlohmann::json::array({30}));
}

}  // namespace
}  // namespace tprof
