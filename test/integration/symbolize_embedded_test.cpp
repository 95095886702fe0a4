// Self-contained profiles: record a copy of the demo with tprof, embed the symbols of every
// sampled address, move the binary away, and the report from the embedded symbols is the
// same as the report made from the binary. Without the section, the moved binary's addresses
// read [module+0xoffset].
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>

#include "core/analysis/function_profile.h"
#include "core/base/build_id.h"
#include "core/format/profile_reader.h"
#include "core/format/symbol_section.h"
#include "report/text_report.h"
#include "symbolize/elf_symbols.h"
#include "symbolize/symbolizer.h"
#include "test/support/run_command.h"

namespace tprof {
namespace {

std::string Report(const std::string& profile, FrameResolver& resolver) {
  auto reader = ProfileReader::OpenFile(profile);
  EXPECT_TRUE(reader.ok());
  // By out-of-line function: the demo's noinline functions, whose loops are inlined lambdas.
  FunctionProfileBuilder builder(reader->events(), resolver, InlineMode::kPhysical);
  EXPECT_TRUE(reader->ReadRecords(builder).ok());
  std::ostringstream out;
  RenderFunctionTable(reader->metadata(), builder.Finish(), {}, out);
  return out.str();
}

TEST(SymbolizeEmbedded, ReportIsTheSameAfterTheBinaryIsMoved) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("tprof_embed_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::path binary = dir / "demo_copy";
  fs::copy_file(DEMO_BINARY, binary);
  std::string recorded = (dir / "recorded.tprof").string();
  std::string embedded = (dir / "embedded.tprof").string();
  auto run = testing::RunCommand(
      {TPROF_BINARY, "record", "-g", "-o", recorded, "--", binary.string(), "0.15"});
  ASSERT_EQ(run.exit_code, 0) << run.err;

  SymbolizerOptions options;
  options.on_note = [](const std::string&) {};
  options.build_id_dir = "";  // perf's cache may hold a copy of the demo: this machine's has none
  Symbolizer live(options);
  auto distinct = EmbedSymbols(recorded, embedded, live);
  ASSERT_TRUE(distinct.ok()) << distinct.error().message();
  EXPECT_GT(*distinct, 10u);
  Symbolizer before_symbolizer(options);
  std::string before = Report(embedded, before_symbolizer);
  EXPECT_NE(before.find("inline_mix_loop"), std::string::npos) << before;

  fs::rename(binary, dir / "moved_away");
  auto reader = ProfileReader::OpenFile(embedded);
  ASSERT_TRUE(reader.ok());
  auto table = ReadSymbolSection(*reader);
  ASSERT_TRUE(table.ok()) << table.error().message();
  EXPECT_EQ(table->size(), *distinct);
  EmbeddedSymbolResolver from_file(std::move(table).value());
  std::string after = Report(embedded, from_file);
  EXPECT_EQ(before, after);
  EXPECT_EQ(from_file.misses(), 0u);

  // The same profile without its section: the moved binary cannot be named.
  Symbolizer after_symbolizer(options);
  std::string unresolved = Report(embedded, after_symbolizer);
  EXPECT_EQ(unresolved.find("inline_mix_loop"), std::string::npos);
  EXPECT_NE(unresolved.find("[demo_copy+0x"), std::string::npos);

  fs::remove_all(dir);
}

// A binary rebuilt or deleted since the recording is read from perf's build-id cache, where
// `perf record` copied it: DIR/.build-id/xx/yyyy links to a directory holding "elf".
TEST(SymbolizeEmbedded, MissingBinaryIsReadFromPerfsBuildIdCache) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("tprof_cache_" + std::to_string(::getpid()));
  auto demo = ElfSymbols::Load(DEMO_BINARY);
  ASSERT_TRUE(demo.ok());
  const std::string& id = demo->build_id();
  ASSERT_GE(id.size(), 2u);
  const std::string hex = BuildIdHex(id);
  fs::path copy_dir = dir / "gone/tprof_demo" / hex;
  fs::create_directories(copy_dir);
  fs::create_directories(dir / ".build-id" / hex.substr(0, 2));
  fs::copy_file(DEMO_BINARY, copy_dir / "elf");
  fs::create_directory_symlink("../../gone/tprof_demo/" + hex,
                               dir / ".build-id" / hex.substr(0, 2) / hex.substr(2));

  SymbolizerOptions options;
  options.on_note = [](const std::string&) {};
  options.build_id_dir = "";
  EXPECT_EQ(Symbolizer(options).ModuleFor("/gone/tprof_demo", id), nullptr);
  options.build_id_dir = dir.string();
  Symbolizer symbolizer(options);
  DwarfModule* module = symbolizer.ModuleFor("/gone/tprof_demo", id);
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(module->build_id(), id);
  uint64_t start = 0, end = 0;
  EXPECT_TRUE(module->FindFunction("inline_mix_loop", &start, &end) ||
              module->FindFunction("main", &start, &end));
  // Another build-id does not pick the cached copy.
  EXPECT_EQ(symbolizer.ModuleFor("/gone/tprof_demo", std::string(id.size(), '\x01')), nullptr);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tprof
