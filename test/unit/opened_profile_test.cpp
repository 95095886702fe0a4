// The views layer called directly, as cmd/ calls it: OpenedProfile opens a public perf.data
// (perfparser's test recording of a static binary, on a machine that is not this one) with the
// resolver stack every command uses, and a report table built over it names what the binary's
// own symbol table says. The oracle is `nm -S` on the binary, not tprof's ELF reader: each sample
// whose pc lies in main's [address, address + size) must be main's row.
#include "views/opened_profile.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/analysis/report_table.h"
#include "views/time_range_read.h"

namespace tprof {
namespace {

const std::string kDir = std::string(TPROF_TESTDATA_DIR) + "/perf/perfparser/";
const std::string kProfile = kDir + "vector_static_gcc.perf.lbr.data";
const std::string kBinary = kDir + "vector_static_gcc_v9.1.0";

// main's [address, address + size) from `nm -S` (the binary is static and not PIE: a sample's
// pc is its address in the file).
std::optional<std::pair<uint64_t, uint64_t>> MainByNm() {
  FILE* pipe = popen(("nm -S --defined-only '" + kBinary + "' 2>/dev/null").c_str(), "r");
  if (!pipe) return std::nullopt;
  std::optional<std::pair<uint64_t, uint64_t>> found;
  char line[512];
  while (std::fgets(line, sizeof line, pipe)) {
    unsigned long long address = 0, size = 0;
    char type = 0;
    char name[256] = {};
    if (std::sscanf(line, "%llx %llx %c %255s", &address, &size, &type, name) == 4 &&
        std::string(name) == "main")
      found = std::make_pair(address, address + size);
  }
  pclose(pipe);
  return found;
}

class UserPcs : public RecordVisitor {
 public:
  void OnSample(const Sample& s) override {
    if (s.ip < kContextUser && s.ip < (uint64_t{1} << 47)) pcs.push_back(s.ip);
  }
  std::vector<uint64_t> pcs;
};

ReportTable TableOf(OpenedProfile& opened) {
  // By the out-of-line function (--no-inline), which is what a symbol table names: main's one
  // sample there is in code inlined from std::generate_n.
  auto builder = ReportTableBuilder::Create(opened.source().events(), opened.resolver(),
                                            {SortKey::kSymbol}, {}, 0, InlineMode::kPhysical);
  EXPECT_TRUE(builder.ok());
  auto summary = opened.source().ReadRecords(**builder);
  EXPECT_TRUE(summary.ok());
  return (*builder)->Finish();
}

uint64_t SamplesOf(const ReportTable& table, const std::string& function) {
  for (const ReportRow& row : table.rows)
    if (row.keys[0] == function) return row.self_samples[0];
  return 0;
}

TEST(OpenedProfile, NamesWhatTheBinaryGivenByBinarySaysAndItsNotesGoToTheCaller) {
  const auto main_range = MainByNm();
  if (!main_range) GTEST_SKIP() << "nm is not installed, or it found no main in " << kBinary;
  // Where the recorded binary is not on this machine: a note for the caller, not stderr.
  std::vector<std::string> notes;
  ProfileOpenOptions options;
  options.on_note = [&notes](const std::string& note) { notes.push_back(note); };
  testing::internal::CaptureStderr();
  {
    auto opened = OpenedProfile::Open(kProfile, options);
    ASSERT_TRUE(opened.ok()) << opened.error().message();
    const ReportTable table = TableOf(**opened);
    EXPECT_EQ(SamplesOf(table, "main"), 0u);
  }
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  bool named = false;
  for (const std::string& note : notes)
    named |= note.find("vector_static_gcc_v9.1.0") != std::string::npos;
  EXPECT_TRUE(named) << "no note names the missing binary (" << notes.size() << " notes)";

  // With the binary given: main's row holds exactly the samples whose pc nm puts in main.
  options.binaries = {kBinary};
  auto opened = OpenedProfile::Open(kProfile, options);
  ASSERT_TRUE(opened.ok()) << opened.error().message();
  UserPcs pcs;
  ASSERT_TRUE((*opened)->recorded_source().ReadRecords(pcs).ok());
  uint64_t in_main = 0;
  for (uint64_t pc : pcs.pcs) in_main += pc >= main_range->first && pc < main_range->second;
  ASSERT_GT(in_main, 0u) << "no sample in main: the oracle checks nothing";
  const ReportTable table = TableOf(**opened);
  EXPECT_EQ(SamplesOf(table, "main"), in_main);
}

TEST(OpenedProfile, AnInputThatIsNotAProfileIsAnErrorNamingIt) {
  auto opened = OpenedProfile::Open(kBinary, ProfileOpenOptions{});
  ASSERT_FALSE(opened.ok());
  EXPECT_NE(opened.error().message().find(kBinary), std::string::npos) << opened.error().message();
  EXPECT_FALSE(OpenedProfile::Open(kDir + "no-such-file.data", ProfileOpenOptions{}).ok());
}

// --time's percent form over the opened profile: the first half of its length holds fewer
// samples than the whole, and a range past its end is a bad request naming the option.
TEST(OpenedProfile, ATimeRangeReadsPartOfTheOpenedProfile) {
  auto opened = OpenedProfile::Open(kProfile, ProfileOpenOptions{});
  ASSERT_TRUE(opened.ok());
  UserPcs all, half;
  ASSERT_TRUE((*opened)->source().ReadRecords(all).ok());
  auto read = ReadTimeRange((*opened)->source(), half, "--time", "0%-50%", kProfile);
  ASSERT_TRUE(read.ok()) << read.error().message();
  EXPECT_GT(half.pcs.size(), 0u);
  EXPECT_LT(half.pcs.size(), all.pcs.size());
  EXPECT_FALSE(read->seconds.empty());
  UserPcs none;
  auto past = ReadTimeRange((*opened)->source(), none, "--time", "500,600", kProfile);
  ASSERT_FALSE(past.ok());
  EXPECT_NE(past.error().message().find("--time"), std::string::npos) << past.error().message();
}

}  // namespace
}  // namespace tprof
