// tprof stream and tprof diff --stream end to end.
//
// Two builds of test/workloads/stream_v{1,2}: v2 makes slow_func slower by changing its source,
// replaces old_only_func by new_only_func (longer, so hot_loop below it moves down), and builds
// flag_func, whose source is the same, with -DFLAG_ROUNDS=3. Both are built here with the
// system compiler and recorded with cpu-clock callchains; expected lines come from searching the
// sources' text, expected counts from the profiles' raw samples.
//
// Branch stacks: the LBR recordings in ../shared/testdata/perf, against `perf script -F brstack`
// where perf 6.1 reads the file, else against a loop over the records as the reader gives them.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "core/format/profile_writer.h"
#include "core/source/profile_source.h"
#include "test/support/nm_symbols.h"
#include "test/support/run_command.h"
#include "test/support/test_programs.h"

namespace tprof {
namespace {

using testing::CommandResult;
using testing::RunCommand;

const std::string kWorkloads = STREAM_WORKLOADS_DIR;
const std::string kPerfData = std::string(TPROF_TESTDATA_DIR) + "/perf/";

// The 1-based number of the only line of `path` containing `needle`, or 0.
uint32_t LineOf(const std::string& path, const std::string& needle) {
  std::ifstream in(path);
  std::string line;
  uint32_t number = 0, found = 0, count = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.find(needle) != std::string::npos) {
      found = number;
      ++count;
    }
  }
  return count == 1 ? found : 0;
}

bool StartsWith(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// The leaf (first) entry of a stream in tprof's JSON.
const nlohmann::json& Leaf(const nlohmann::json& stream) { return stream["entries"][0]; }

class StreamWorkloadTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(TempPath("streams", "work"));
    ::mkdir(dir_->c_str(), 0755);
    v1_src_ = new std::string(kWorkloads + "/stream_v1/stream_work.cpp");
    v2_src_ = new std::string(kWorkloads + "/stream_v2/stream_work.cpp");
    const std::vector<std::string> flags = {"-O2", "-g", "-fno-omit-frame-pointer"};
    auto compile = [&](const std::string& src, const std::string& out,
                       std::vector<std::string> extra) {
      std::vector<std::string> argv = {"/usr/bin/c++"};
      argv.insert(argv.end(), flags.begin(), flags.end());
      argv.insert(argv.end(), extra.begin(), extra.end());
      argv.insert(argv.end(), {src, "-o", out});
      return RunCommand(argv);
    };
    setup_error_ = new std::string();
    for (auto [src, name, extra] :
         {std::tuple{*v1_src_, "v1", std::vector<std::string>{}},
          std::tuple{*v2_src_, "v2", std::vector<std::string>{"-DFLAG_ROUNDS=3"}}}) {
      std::string binary = *dir_ + "/" + name;
      CommandResult built = compile(src, binary, extra);
      if (built.exit_code != 0) *setup_error_ += "compiling " + src + ": " + built.err;
      CommandResult recorded = RunCommand(
          {kTprof, "record", "-e", "cpu-clock", "-g", "-o", binary + ".tprof", "--", binary, "1"});
      if (recorded.exit_code != 0) *setup_error_ += "recording " + binary + ": " + recorded.err;
    }
  }
  static void TearDownTestSuite() {
    RunCommand({"/bin/rm", "-rf", *dir_});
    delete dir_;
    delete v1_src_;
    delete v2_src_;
    delete setup_error_;
  }
  void SetUp() override { ASSERT_TRUE(setup_error_->empty()) << *setup_error_; }

  static std::string Profile(const char* name) { return *dir_ + "/" + name + ".tprof"; }

  static nlohmann::json DiffJson(std::vector<std::string> extra) {
    std::vector<std::string> argv = {kTprof,        "diff",
                                     "--stream",    Profile("v1"),
                                     Profile("v2"), "--top",
                                     "4",           "--json",
                                     "--before",    kWorkloads + "/stream_v1",
                                     "--after",     kWorkloads + "/stream_v2"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    CommandResult r = RunCommand(argv);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out, nullptr, false);
  }

  // The pairs (or streams) of a section whose new (else old) leaf is in `function`.
  static std::vector<nlohmann::json> Find(const nlohmann::json& section,
                                          const std::string& function) {
    std::vector<nlohmann::json> out;
    for (const nlohmann::json& item : section) {
      const nlohmann::json& stream =
          item.contains("entries") ? item : (item["new"].is_null() ? item["old"] : item["new"]);
      if (StartsWith(Leaf(stream)["function"].get<std::string>(), function)) out.push_back(item);
    }
    return out;
  }

  static std::string* dir_;
  static std::string* v1_src_;
  static std::string* v2_src_;
  static std::string* setup_error_;
};
std::string* StreamWorkloadTest::dir_;
std::string* StreamWorkloadTest::v1_src_;
std::string* StreamWorkloadTest::v2_src_;
std::string* StreamWorkloadTest::setup_error_;

TEST_F(StreamWorkloadTest, TheSlowerFunctionIsInTheSourceChangedSectionWithItsLineMarked) {
  nlohmann::json diff = DiffJson({});
  ASSERT_FALSE(diff.is_discarded());
  auto pairs = Find(diff["source_changed"], "slow_func");
  ASSERT_EQ(pairs.size(), 1u) << diff.dump(1);
  const nlohmann::json& pair = pairs[0];
  // The leaf is on the changed loop line of each version; it is marked, main's call is not.
  EXPECT_EQ(Leaf(pair["old"])["line"], LineOf(*v1_src_, "x = x * 6364136223846793005ull + i;"));
  EXPECT_EQ(Leaf(pair["new"])["line"], LineOf(*v2_src_, "i < n * 2"));
  EXPECT_TRUE(pair["changed"][0].get<bool>());
  ASSERT_GE(pair["new"]["entries"].size(), 2u);
  EXPECT_EQ(pair["new"]["entries"][1]["function"], "main");
  EXPECT_FALSE(pair["changed"][1].get<bool>());
  EXPECT_TRUE(Find(diff["matched"], "slow_func").empty());

  // The same in the text: '*' before the changed entries on both sides.
  CommandResult text =
      RunCommand({kTprof, "diff", "--stream", Profile("v1"), Profile("v2"), "--top", "4",
                  "--before", kWorkloads + "/stream_v1", "--after", kWorkloads + "/stream_v2"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  size_t section = text.out.find("[ Hot streams whose source changed");
  size_t next = text.out.find("[ Hot streams in the old profile only");
  ASSERT_NE(section, std::string::npos);
  std::string changed = text.out.substr(section, next - section);
  EXPECT_NE(changed.find("* slow_func(unsigned long) stream_work.cpp:" +
                         std::to_string(LineOf(*v2_src_, "i < n * 2"))),
            std::string::npos)
      << changed;
}

TEST_F(StreamWorkloadTest, TheLoopThatOnlyMovedIsMatched) {
  nlohmann::json diff = DiffJson({});
  auto pairs = Find(diff["matched"], "hot_loop");
  ASSERT_FALSE(pairs.empty()) << diff.dump(1);
  const std::string loop = "0xff51afd7ed558ccdull";
  uint32_t old_line = LineOf(*v1_src_, loop), new_line = LineOf(*v2_src_, loop);
  ASSERT_NE(old_line, new_line);  // the workload moves it
  EXPECT_EQ(Leaf(pairs[0]["old"])["line"], old_line);
  EXPECT_EQ(Leaf(pairs[0]["new"])["line"], new_line);
  EXPECT_TRUE(Find(diff["source_changed"], "hot_loop").empty());

  // Without the source trees the moved lines are different lines: no match.
  CommandResult bare = RunCommand(
      {kTprof, "diff", "--stream", Profile("v1"), Profile("v2"), "--top", "4", "--json"});
  ASSERT_EQ(bare.exit_code, 0) << bare.err;
  nlohmann::json without = nlohmann::json::parse(bare.out);
  EXPECT_TRUE(Find(without["matched"], "hot_loop").empty());
}

TEST_F(StreamWorkloadTest, AFlagOnlyChangeIsChangedWhenNamed) {
  nlohmann::json diff = DiffJson({});
  EXPECT_FALSE(Find(diff["matched"], "flag_func").empty()) << diff.dump(1);
  EXPECT_TRUE(Find(diff["source_changed"], "flag_func").empty());

  nlohmann::json named = DiffJson({"--changed-func", "flag_func"});
  EXPECT_TRUE(Find(named["matched"], "flag_func").empty());
  auto pairs = Find(named["source_changed"], "flag_func");
  ASSERT_EQ(pairs.size(), 1u) << named.dump(1);
  EXPECT_TRUE(pairs[0]["changed"][0].get<bool>());
  const std::string loop = "n * FLAG_ROUNDS";
  EXPECT_EQ(Leaf(pairs[0]["old"])["line"], LineOf(*v1_src_, loop));
  EXPECT_EQ(Leaf(pairs[0]["new"])["line"], LineOf(*v2_src_, loop));
  // The rest is as without the flag.
  EXPECT_FALSE(Find(named["matched"], "hot_loop").empty());
  EXPECT_EQ(Find(named["source_changed"], "slow_func").size(), 1u);
}

TEST_F(StreamWorkloadTest, OldOnlyAndNewOnlyStreams) {
  nlohmann::json diff = DiffJson({});
  ASSERT_EQ(diff["old_only"].size(), 1u) << diff.dump(1);
  EXPECT_EQ(Leaf(diff["old_only"][0])["function"], "old_only_func(unsigned long)");
  ASSERT_EQ(diff["new_only"].size(), 1u) << diff.dump(1);
  EXPECT_EQ(Leaf(diff["new_only"][0])["function"], "new_only_func(unsigned long)");
  for (const char* section : {"matched", "source_changed"}) {
    EXPECT_TRUE(Find(diff[section], "old_only_func").empty()) << section;
    EXPECT_TRUE(Find(diff[section], "new_only_func").empty()) << section;
  }
}

// Samples per function, counted from the raw records: the first user address of each
// callchain, turned into a file offset through the recorded mapping of the binary and named by
// nm and readelf (not by tprof's symbolizer, whose streams this checks).
std::map<std::string, uint64_t> LeafFunctionCounts(const std::string& profile,
                                                   const std::string& binary) {
  struct Counter : RecordVisitor {
    std::vector<MmapRecord> maps;  // the binary's executable mappings
    const testing::NmSymbols* symbols = nullptr;
    std::string binary;
    std::map<std::string, uint64_t> counts;
    void OnMmap(const MmapRecord& r) override {
      if (r.filename == binary && r.executable) maps.push_back(r);
    }
    void OnSample(const Sample& s) override {
      for (uint64_t a : s.callchain) {
        if (IsContextMarker(a) || IsKernelAddress(a)) continue;
        std::string name = "?";
        for (const MmapRecord& m : maps)
          if (m.pid == s.pid && a >= m.start && a < m.start + m.length)
            name = symbols->AtFileOffset(a - m.start + m.page_offset);
        counts[name.empty() ? "?" : name] += 1;
        return;
      }
    }
  } counter;
  testing::NmSymbols symbols(binary);
  EXPECT_TRUE(symbols.error.empty()) << symbols.error;
  counter.symbols = &symbols;
  counter.binary = binary;
  auto source = ProfileSource::OpenFile(profile);
  EXPECT_TRUE(source.ok());
  EXPECT_TRUE((*source)->ReadRecords(counter).ok());
  return counter.counts;
}

TEST_F(StreamWorkloadTest, StreamSamplesAddUpToTheRawCount) {
  // One-entry user streams: each stream is a line of the leaf function.
  CommandResult r = RunCommand(
      {kTprof, "stream", Profile("v1"), "--json", "-n", "100000", "--depth", "1", "--no-kernel"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json streams = nlohmann::json::parse(r.out);
  std::map<std::string, uint64_t> from_streams;
  for (const nlohmann::json& s : streams["streams"]) {
    std::string f = Leaf(s)["function"];
    from_streams[f.substr(0, f.find('('))] += s["samples"].get<uint64_t>();
  }
  auto raw = LeafFunctionCounts(Profile("v1"), *dir_ + "/v1");
  for (auto [mangled, plain] : {std::pair{"_Z9slow_funcm", "slow_func"},
                                {"_Z8hot_loopm", "hot_loop"},
                                {"_Z9flag_funcm", "flag_func"},
                                {"_Z13old_only_funcm", "old_only_func"}}) {
    EXPECT_GT(raw[mangled], 50u) << plain;
    EXPECT_EQ(from_streams[plain], raw[mangled]) << plain;
  }
}

// ---- Branch stacks -------------------------------------------------------------------------

struct RawBlock {
  uint64_t executions = 0, cycles = 0;
};

// Blocks and depth-`depth` streams computed from raw branch stacks (most recent first), by the
// rule tprof documents: block i runs from entry i+1's target to entry i's source, with entry i's
// cycles; 0->0 slots end the stack; a backward or over-64-KiB range is not a block and ends the
// stream.
struct RawBranchCounts {
  std::map<std::pair<uint64_t, uint64_t>, RawBlock> blocks;
  struct RawStream {
    uint64_t samples = 0, cycle_samples = 0, cycles = 0;
  };
  std::map<std::vector<std::pair<uint64_t, uint64_t>>, RawStream> streams;
  uint64_t samples = 0, executions = 0, cycles = 0;

  void Add(const std::vector<BranchEntry>& branches, size_t depth) {
    if (branches.empty()) return;
    ++samples;
    size_t used = 0;
    while (used < branches.size() && (branches[used].from || branches[used].to)) ++used;
    std::vector<std::pair<uint64_t, uint64_t>> stream;
    bool open = true, all_cycles = true;
    uint64_t stream_cycles = 0;
    for (size_t i = 0; i + 1 < used; ++i) {
      uint64_t start = branches[i + 1].to, end = branches[i].from;
      if (start == 0 || start > end || end - start > 64 * 1024) {
        open = false;
        continue;
      }
      RawBlock& b = blocks[{start, end}];
      b.executions += 1;
      b.cycles += branches[i].cycles();
      executions += 1;
      cycles += branches[i].cycles();
      if (open && stream.size() < depth) {
        stream.push_back({start, end});
        all_cycles = all_cycles && branches[i].cycles();
        stream_cycles += branches[i].cycles();
      }
    }
    if (!stream.empty()) {
      RawStream& s = streams[stream];
      s.samples += 1;
      if (all_cycles) {
        s.cycle_samples += 1;
        s.cycles += stream_cycles;
      }
    }
  }
  // Blocks' (cycles, executions), hottest first, as tprof orders them.
  std::vector<std::pair<uint64_t, uint64_t>> Ranked() const {
    std::vector<std::pair<uint64_t, uint64_t>> out;
    for (const auto& [range, b] : blocks) out.push_back({b.cycles, b.executions});
    std::sort(out.rbegin(), out.rend());
    return out;
  }
  uint64_t TopStreamSamples() const {
    uint64_t top = 0;
    for (const auto& [key, s] : streams) top = std::max(top, s.samples);
    return top;
  }
};

// Parses `perf script -F brstack`: one line per sample of "from/to/flags.../cycles/" words.
RawBranchCounts FromPerfScript(const std::string& file, size_t depth) {
  CommandResult r = RunCommand({kPerf, "script", "-i", file, "-F", "brstack"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  RawBranchCounts counts;
  std::istringstream lines(r.out);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string word;
    std::vector<BranchEntry> branches;
    while (words >> word) {
      std::vector<std::string> parts;
      std::stringstream fields(word);
      std::string part;
      while (std::getline(fields, part, '/')) parts.push_back(part);
      if (parts.size() < 6) continue;
      BranchEntry e;
      e.from = std::stoull(parts[0], nullptr, 16);
      e.to = std::stoull(parts[1], nullptr, 16);
      e.flags = std::stoull(parts[5]) << 4;
      branches.push_back(e);
    }
    if (!branches.empty()) counts.Add(branches, depth);
  }
  return counts;
}

nlohmann::json StreamJson(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {kTprof, "stream", "--json"};
  argv.insert(argv.end(), args.begin(), args.end());
  CommandResult r = RunCommand(argv);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(r.out, nullptr, false);
}

void ExpectBlocksAndStreamsMatch(const std::string& file, const RawBranchCounts& raw,
                                 const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args = {file, "-n", "5"};
  args.insert(args.end(), extra.begin(), extra.end());
  nlohmann::json j = StreamJson(args);
  ASSERT_FALSE(j.is_discarded());
  EXPECT_EQ(j["branch_samples"], raw.samples);
  EXPECT_EQ(j["block_executions"], raw.executions);
  EXPECT_EQ(j["block_cycles"], raw.cycles);
  auto ranked = raw.Ranked();
  ASSERT_GE(ranked.size(), 5u);
  ASSERT_EQ(j["blocks"].size(), 5u);
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(j["blocks"][i]["cycles"], ranked[i].first) << i;
    EXPECT_EQ(j["blocks"][i]["executions"], ranked[i].second) << i;
  }
  // Streams are ranked by period; the most frequent one has the raw stacks' largest count.
  nlohmann::json all = StreamJson({file, "-n", "1000000"});
  uint64_t most = 0, total = 0;
  for (const nlohmann::json& s : all["streams"]) {
    if (s["kind"] != "branch") continue;  // samples without a branch stack give callchains
    most = std::max(most, s["samples"].get<uint64_t>());
    total += s["samples"].get<uint64_t>();
  }
  EXPECT_EQ(most, raw.TopStreamSamples());
  uint64_t raw_total = 0;
  for (const auto& [key, s] : raw.streams) raw_total += s.samples;
  EXPECT_EQ(total, raw_total);
}

TEST(BranchStreamTest, CycleCountsOfSkylakeLbrAgreeWithPerfScript) {
  const std::string file = kPerfData + "quipper-perf.data.branch-4.14";
  RawBranchCounts raw = FromPerfScript(file, 8);
  ASSERT_EQ(raw.samples, 13u);
  ASSERT_GT(raw.cycles, 0u);
  ExpectBlocksAndStreamsMatch(file, raw);
  // Every stream's samples and average cycles, against the raw stacks' (keys are told apart by
  // their samples, which are distinct enough in this file to pair them).
  nlohmann::json j = StreamJson({file, "-n", "1000"});
  ASSERT_EQ(j["streams"].size(), raw.streams.size());
  std::multiset<std::pair<uint64_t, double>> ours, theirs;
  for (const nlohmann::json& s : j["streams"])
    ours.insert({s["samples"].get<uint64_t>(),
                 s["average_cycles"].is_null() ? -1.0 : s["average_cycles"].get<double>()});
  for (const auto& [key, s] : raw.streams)
    theirs.insert({s.samples, s.cycle_samples ? static_cast<double>(s.cycles) /
                                                    static_cast<double>(s.cycle_samples)
                                              : -1.0});
  EXPECT_EQ(ours, theirs);
}

TEST(BranchStreamTest, SandyBridgeLbrWithCallchainsAgreesWithPerfScript) {
  const std::string file = kPerfData + "quipper-perf.data.callgraph_and_branch-3.8";
  RawBranchCounts raw = FromPerfScript(file, 8);
  ASSERT_EQ(raw.samples, 1856u);
  EXPECT_EQ(raw.cycles, 0u);  // Sandy Bridge's LBR has no cycle counts
  nlohmann::json j = StreamJson({file, "-n", "5"});
  EXPECT_EQ(j["branch_samples"], raw.samples);
  EXPECT_EQ(j["block_executions"], raw.executions);
  EXPECT_FALSE(j["has_cycles"].get<bool>());
  EXPECT_EQ(j["streams"][0]["kind"], "branch");
  EXPECT_TRUE(j["streams"][0]["average_cycles"].is_null());
  // --source callchain ignores the branch stacks: callchain streams of the same samples.
  nlohmann::json calls = StreamJson({file, "-n", "1", "--source", "callchain"});
  EXPECT_EQ(calls["streams"][0]["kind"], "callchain");
}

// The autofdo sample with its binary: blocks resolve to its functions.
class PropellerTest : public ::testing::Test {
 protected:
  const std::string file_ = kPerfData + "autofdo/propeller_sample_1.perfdata1";
  const std::string binary_ = kPerfData + "autofdo/propeller_sample_1.bin";

  // The raw records as the reader gives them, split in two halves by sample order.
  struct Split : RecordVisitor {
    std::vector<Sample> samples;
    std::vector<MmapRecord> mmaps;
    std::vector<CommRecord> comms;
    void OnSample(const Sample& s) override { samples.push_back(s); }
    void OnMmap(const MmapRecord& r) override { mmaps.push_back(r); }
    void OnComm(const CommRecord& r) override { comms.push_back(r); }
  };
};

TEST_F(PropellerTest, BlocksAndStreamsAgreeWithTheRawStacksAndResolveToFunctions) {
  Split records;
  auto source = ProfileSource::OpenFile(file_);
  ASSERT_TRUE(source.ok());
  ASSERT_TRUE((*source)->ReadRecords(records).ok());
  RawBranchCounts raw;
  for (const Sample& s : records.samples) raw.Add(s.branches, 8);
  ExpectBlocksAndStreamsMatch(file_, raw, {"--binary", binary_});

  // Each top block's function is the symbol holding its first instruction, as nm and readelf
  // place it (the block's start is a file offset).
  testing::NmSymbols symbols(binary_);
  ASSERT_TRUE(symbols.error.empty()) << symbols.error;
  nlohmann::json j = StreamJson({file_, "-n", "5", "--binary", binary_});
  for (const nlohmann::json& b : j["blocks"]) {
    const std::string name = symbols.AtFileOffset(b["start"].get<uint64_t>());
    ASSERT_FALSE(name.empty()) << b.dump();
    EXPECT_EQ(b["function"], name);
  }
  // This binary's DWARF covers only the C runtime: its blocks are told apart by offset.
  EXPECT_EQ(j["blocks"][0]["line"], 0);

  CommandResult text = RunCommand({kTprof, "stream", file_, "--binary", binary_, "--blocks"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("compute_flag @0x"), std::string::npos) << text.out;
}

TEST_F(PropellerTest, DiffOfTwoHalvesComparesBlocksOldAgainstNew) {
  Split records;
  auto source = ProfileSource::OpenFile(file_);
  ASSERT_TRUE(source.ok());
  ASSERT_TRUE((*source)->ReadRecords(records).ok());
  const size_t half = records.samples.size() / 2;
  RawBranchCounts raw[2];
  std::string paths[2] = {TempPath("streams", "first.tprof"), TempPath("streams", "second.tprof")};
  for (int part = 0; part < 2; ++part) {
    auto writer =
        ProfileWriter::CreateFile(paths[part], (*source)->metadata(), (*source)->events());
    ASSERT_TRUE(writer.ok());
    for (const CommRecord& c : records.comms) ASSERT_TRUE((*writer)->Write(c).ok());
    for (const MmapRecord& m : records.mmaps) ASSERT_TRUE((*writer)->Write(m).ok());
    for (size_t i = part ? half : 0; i < (part ? records.samples.size() : half); ++i) {
      ASSERT_TRUE((*writer)->Write(records.samples[i]).ok());
      raw[part].Add(records.samples[i].branches, 8);
    }
    ASSERT_TRUE((*writer)->Finish({}).ok());
  }

  CommandResult r = RunCommand({kTprof, "diff", "--stream", "--blocks", paths[0], paths[1],
                                "--binary", binary_, "--top", "5", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_FALSE(j["blocks"].empty());
  // Every row of the same binary is matched and unchanged; the shares are the raw ones.
  for (const nlohmann::json& row : j["blocks"]) {
    ASSERT_FALSE(row["old"].is_null());
    ASSERT_FALSE(row["new"].is_null());
    EXPECT_FALSE(row["source_changed"].get<bool>());
    EXPECT_EQ(row["old"]["start"], row["new"]["start"]);
    EXPECT_EQ(row["old"]["end"], row["new"]["end"]);
  }
  // The hottest old block: its cycles and share of cycles in each half, from the raw stacks,
  // its module offsets turned back into addresses through the recorded mapping.
  const MmapRecord* text = nullptr;
  for (const MmapRecord& m : records.mmaps)
    if (m.filename.find("propeller_sample_1.bin") != std::string::npos && m.executable) text = &m;
  ASSERT_NE(text, nullptr);
  const nlohmann::json& top = j["blocks"][0];
  std::pair<uint64_t, uint64_t> range = {
      top["old"]["start"].get<uint64_t>() - text->page_offset + text->start,
      top["old"]["end"].get<uint64_t>() - text->page_offset + text->start};
  for (int part = 0; part < 2; ++part) {
    const char* side = part ? "new" : "old";
    ASSERT_TRUE(raw[part].blocks.count(range)) << side;
    const RawBlock& b = raw[part].blocks.at(range);
    EXPECT_EQ(top[side]["cycles"], b.cycles) << side;
    EXPECT_EQ(top[side]["executions"], b.executions) << side;
    EXPECT_NEAR(top[side]["share"].get<double>(),
                static_cast<double>(b.cycles) / static_cast<double>(raw[part].cycles), 1e-12);
  }

  // Named as changed (a compiler flag), compute_flag's blocks are marked.
  CommandResult named =
      RunCommand({kTprof, "diff", "--stream", "--blocks", paths[0], paths[1], "--binary", binary_,
                  "--top", "5", "--changed-func", "compute_flag"});
  ASSERT_EQ(named.exit_code, 0) << named.err;
  EXPECT_NE(named.out.find("*"), std::string::npos);
  std::istringstream lines(named.out);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    EXPECT_EQ(line[0] == '*', line.find("compute_flag") != std::string::npos) << line;
  }

  // Streams of the same program: the hottest match, nothing changed.
  CommandResult streams = RunCommand({kTprof, "diff", "--stream", paths[0], paths[1], "--binary",
                                      binary_, "--top", "3", "--json"});
  ASSERT_EQ(streams.exit_code, 0) << streams.err;
  nlohmann::json s = nlohmann::json::parse(streams.out);
  EXPECT_FALSE(s["matched"].empty());
  EXPECT_TRUE(s["source_changed"].empty());
  std::remove(paths[0].c_str());
  std::remove(paths[1].c_str());
}

TEST(StreamCliTest, BadInputAndMisuseGiveOneLineErrors) {
  CommandResult missing = RunCommand({kTprof, "stream", "/nonexistent.tprof"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("tprof stream:"), std::string::npos) << missing.err;
  CommandResult no_branches =
      RunCommand({kTprof, "stream", kPerfData + "quipper-perf.data.callgraph-3.8", "--blocks"});
  EXPECT_EQ(no_branches.exit_code, 1);
  EXPECT_NE(no_branches.err.find("--blocks needs branch stacks"), std::string::npos);
  CommandResult one = RunCommand({kTprof, "diff", "--stream", "/nonexistent.tprof"});
  EXPECT_EQ(one.exit_code, 2);
  CommandResult half_trees = RunCommand({kTprof, "diff", "--stream", "a", "b", "--before", "/tmp"});
  EXPECT_EQ(half_trees.exit_code, 2);
  EXPECT_NE(half_trees.err.find("--before and --after"), std::string::npos);
}

}  // namespace
}  // namespace tprof
