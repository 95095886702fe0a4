// perf.data recorded here with the local perf, read by tprof: function shares must equal
// `perf report --stdio --no-children --sort comm,dso,sym` within 0.1 percentage points. Also the
// CLI (`tprof report perf.data`, `tprof import`), and the autofdo sample with its binary.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "core/analysis/function_profile.h"
#include "core/model/address_space.h"
#include "core/source/profile_source.h"
#include "symbolize/binary_locator.h"
#include "symbolize/dwarf_unwinder.h"
#include "symbolize/elf_symbols.h"
#include "symbolize/symbolizer.h"
#include "test/support/run_command.h"
#include "test/support/test_programs.h"

namespace tprof {
namespace {

using testing::RunCommand;

const std::string kAutofdo = std::string(TPROF_TESTDATA_DIR) + "/perf/autofdo/";

// Shares keyed by (comm, dso, symbol). Kernel symbols and addresses no symbol covers are
// summed per (comm, dso): tprof reads no kallsyms, and perf names unknown addresses one by one.
using Shares = std::map<std::string, double>;

// perf prints C++ names without their parameter lists.
std::string WithoutParameters(std::string name) {
  if (name.size() > 6 && name.compare(name.size() - 6, 6, " const") == 0)
    name.resize(name.size() - 6);
  if (name.empty() || name.back() != ')') return name;
  int depth = 0;
  for (size_t i = name.size(); i-- > 0;) {
    if (name[i] == ')') ++depth;
    if (name[i] == '(' && --depth == 0) return i > 0 ? name.substr(0, i) : name;
  }
  return name;
}

std::string Key(const std::string& comm, std::string dso, const std::string& symbol) {
  if (dso.rfind("[kernel", 0) == 0) dso = "[kernel]";
  bool named =
      dso != "[kernel]" && !symbol.empty() && symbol[0] != '[' && symbol.rfind("0x", 0) != 0;
  return comm + "|" + dso + "|" + (named ? WithoutParameters(symbol) : "*");
}

std::string DsoKey(const std::string& key) { return key.substr(0, key.rfind('|')) + "|*"; }

// perf's shares by Key.
Shares PerfShares(const std::string& path) {
  std::string command = kPerf +
                        " report --stdio --no-children --sort comm,dso,sym -g none -t '|' "
                        "-i " +
                        path + " 2>/dev/null";
  Shares shares;
  FILE* p = ::popen(command.c_str(), "r");
  std::string text;
  char buf[65536];
  size_t n;
  while (p && (n = std::fread(buf, 1, sizeof buf, p)) > 0) text.append(buf, n);
  if (p) ::pclose(p);
  std::istringstream in(text);
  auto trim = [](std::string s) {
    s.erase(0, s.find_first_not_of(' '));
    s.erase(s.find_last_not_of(' ') + 1);
    return s;
  };
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f;
    std::stringstream fields(line);
    for (std::string part; std::getline(fields, part, '|');) f.push_back(trim(part));
    if (f.size() < 4 || f[0].empty() || f[0].back() != '%') continue;
    std::string symbol = f[3].size() > 4 ? f[3].substr(4) : "";  // "[.] name"
    shares[Key(f[1], f[2], symbol)] += std::stod(f[0]);
  }
  return shares;
}

Shares TprofShares(const std::string& path, uint64_t* samples) {
  auto source = ProfileSource::OpenFile(path);
  EXPECT_TRUE(source.ok()) << source.error().message();
  if (!source.ok()) return {};
  ElfSymbolizer symbolizer;
  FrameResolver* resolver = (*source)->embedded_frames();  // text inputs name their frames
  // perf report's symbols are out-of-line functions (it shows inlined ones only in chains).
  FunctionProfileBuilder builder((*source)->events(), resolver ? *resolver : symbolizer,
                                 InlineMode::kPhysical);
  auto summary = (*source)->ReadRecords(builder);
  EXPECT_TRUE(summary.ok()) << summary.error().message();
  FunctionProfile profile = builder.Finish();
  Shares shares;
  *samples = profile.total_samples.empty() ? 0 : profile.total_samples[0];
  for (const FunctionRow& row : profile.rows)
    shares[Key(row.command, row.module, row.function)] +=
        100.0 * static_cast<double>(row.self_period[0]) /
        static_cast<double>(profile.total_period[0]);
  return shares;
}

// `input` is what tprof reads (perf.data, or perf script text made from it); `perf_data` what
// perf report reads.
void ExpectSharesAgree(const std::string& input, const std::string& perf_data) {
  uint64_t samples = 0;
  Shares tprof = TprofShares(input, &samples);
  Shares perf = PerfShares(perf_data);
  // Names the two symbolizers give differently (PLT stubs, aliases such as clock_gettime and
  // __clock_gettime) are symbolization questions, not import ones: such rows are compared per
  // (comm, dso), where every sample still has to land on the same side.
  auto fold = [](const Shares& mine, const Shares& theirs) {
    Shares folded;
    for (const auto& [k, v] : mine) folded[theirs.count(k) ? k : DsoKey(k)] += v;
    return folded;
  };
  Shares tprof_folded = fold(tprof, perf), perf_folded = fold(perf, tprof);
  tprof = tprof_folded;
  perf = perf_folded;
  ASSERT_GT(samples, 200u);
  ASSERT_FALSE(perf.empty());
  std::set<std::string> keys;
  for (auto& [k, v] : tprof) keys.insert(k);
  for (auto& [k, v] : perf) keys.insert(k);
  double compared = 0;
  for (const std::string& k : keys) {
    double a = tprof.count(k) ? tprof[k] : 0.0, b = perf.count(k) ? perf[k] : 0.0;
    // perf prints two decimals: a row below 0.005% is "0.00%" or not printed at all.
    EXPECT_NEAR(a, b, 0.1) << k;
    compared += b;
  }
  EXPECT_NEAR(compared, 100.0, 0.5);
}

void ExpectSharesAgree(const std::string& path) { ExpectSharesAgree(path, path); }

class LocalRecording : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(::access(kPerf.c_str(), X_OK), 0)
        << "perf is not installed (scripts/setup.sh installs it)";
  }
  // perf record on the demo workload; returns the file, or "" when perf cannot record here.
  std::string Record(const std::string& name, std::vector<std::string> options) {
    std::string path = TempPath("import", name);
    std::vector<std::string> argv = {kPerf, "record", "-q", "-e", "cpu-clock", "-F", "2000"};
    bool to_stdout = false;
    for (const std::string& o : options) {
      argv.push_back(o);
      to_stdout = to_stdout || o == "-";
    }
    if (!to_stdout) {
      argv.push_back("-o");
      argv.push_back(path);
    }
    argv.insert(argv.end(), {"--", kDemo, "0.4"});
    testing::CommandResult r = RunCommand(argv);
    if (to_stdout) {
      std::ofstream(path, std::ios::binary) << r.out;
    }
    files_.push_back(path);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return path;
  }
  void TearDown() override {
    for (const std::string& f : files_) std::remove(f.c_str());
  }
  std::vector<std::string> files_;
};

TEST_F(LocalRecording, FramePointerCallchains) { ExpectSharesAgree(Record("g.data", {"-g"})); }

TEST_F(LocalRecording, DwarfCallchainsSelfShares) {
  // Self shares need only the sampled ip; the stack copies are parsed and left to an unwinder.
  ExpectSharesAgree(Record("dwarf.data", {"--call-graph", "dwarf,4096"}));
}

// With the symbolizer's unwinder plugged into the reader, the stack copies become callers: the
// demo's hot functions are called from main (directly or through a thread's start routine).
TEST_F(LocalRecording, DwarfCallchainsAreUnwound) {
  std::string data = Record("dwarf-unwind.data", {"--call-graph", "dwarf,8192"});
  DwarfUnwinder unwinder;
  SourceOptions options;
  options.unwinder = &unwinder;
  auto source = ProfileSource::OpenFile(data, options);
  ASSERT_TRUE(source.ok()) << source.error().message();
  struct Chains : RecordVisitor {
    AddressSpace space;
    ElfSymbolizer symbolizer;
    uint64_t samples = 0, in_demo = 0, reaching_main = 0;
    void OnMmap(const MmapRecord& r) override { space.OnMmap(r); }
    void OnComm(const CommRecord& r) override { space.OnComm(r); }
    void OnTask(const TaskRecord& r) override { space.OnTask(r); }
    void OnSample(const Sample& s) override {
      ++samples;
      const Mapping* leaf = space.Find(s.pid, s.ip);
      if (!leaf || leaf->filename.find("tprof_demo") == std::string::npos) return;
      ++in_demo;
      for (uint64_t address : s.callchain) {
        if (IsContextMarker(address)) continue;
        const Mapping* m = space.Find(s.pid, address);
        if (m && symbolizer.Resolve(m, address).function == "main") {
          ++reaching_main;
          break;
        }
      }
    }
  } chains;
  auto summary = (*source)->ReadRecords(chains);
  ASSERT_TRUE(summary.ok()) << summary.error().message();
  EXPECT_GT(summary->unwinding.complete, chains.samples / 2);
  ASSERT_GT(chains.in_demo, 100u);
  // Main-thread samples reach main; the worker thread's start at clone(), and is the demo's
  // inline_mix_loop, about a third of the samples.
  EXPECT_GT(chains.reaching_main, chains.in_demo / 3)
      << chains.reaching_main << " of " << chains.in_demo;
}

// A perf record file cut at 60 % (a copy interrupted, a disk filled): the report shows every
// sample before the cut, one line says where reading stopped and what is missing, and the
// exit status is 4 (an incomplete input); the gate of a diff over it does not judge. perf 6.1
// shows none of it ("failed to process sample").
TEST_F(LocalRecording, AFileCutShortIsReadUpToTheCutWithStatusFour) {
  const std::string whole = Record("whole.data", {"-g"});
  const std::string cut = TempPath("import", "cut.data");
  files_.push_back(cut);
  {
    std::ifstream in(whole, std::ios::binary);
    std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    ASSERT_GT(bytes.size(), 4096u);
    std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() * 6 / 10);
  }
  auto report = RunCommand({kTprof, "report", "-i", cut, "--json"});
  EXPECT_EQ(report.exit_code, 4) << report.err;
  EXPECT_NE(report.err.find("read up to the damage: at byte offset"), std::string::npos)
      << report.err;
  EXPECT_NE(report.err.find("sections after the data"), std::string::npos) << report.err;
  const nlohmann::json cut_report = nlohmann::json::parse(report.out);
  auto full = RunCommand({kTprof, "report", "-i", whole, "--json"});
  ASSERT_EQ(full.exit_code, 0) << full.err;
  const nlohmann::json whole_report = nlohmann::json::parse(full.out);
  const double cut_samples = cut_report["events"][0]["samples"].get<double>();
  const double all_samples = whole_report["events"][0]["samples"].get<double>();
  // Samples are written as they come, so the first 60 % of the data holds roughly that share.
  EXPECT_GT(cut_samples, 0.3 * all_samples) << cut_samples << " of " << all_samples;
  EXPECT_LT(cut_samples, all_samples);
  // The gate fails closed on it.
  auto gate = RunCommand({kTprof, "diff", whole, cut, "--fail-if", "total > +50%"});
  EXPECT_EQ(gate.exit_code, 4) << gate.err;
  // The streams of it, and a comparison of its streams, end the same way (they ended in 0).
  auto streams = RunCommand({kTprof, "stream", cut});
  EXPECT_EQ(streams.exit_code, 4) << streams.err;
  EXPECT_NE(streams.err.find("read up to the damage"), std::string::npos) << streams.err;
  auto compared = RunCommand({kTprof, "diff", "--stream", whole, cut});
  EXPECT_EQ(compared.exit_code, 4) << compared.err;
}

TEST_F(LocalRecording, ZstdCompressed) { ExpectSharesAgree(Record("z.data", {"-g", "-z"})); }

TEST_F(LocalRecording, PipeMode) { ExpectSharesAgree(Record("pipe.data", {"-g", "-o", "-"})); }

// perf script text of the same recording, default fields and a -F variant with pid/tid
// and symbol offsets, read as a profile of its own.
TEST_F(LocalRecording, PerfScriptTextOfTheSameRecording) {
  std::string data = Record("script.data", {"-g"});
  for (std::string fields : {"", " -F comm,pid,tid,time,period,event,ip,sym,symoff,dso"}) {
    SCOPED_TRACE(fields);
    std::string text = data + ".txt";
    files_.push_back(text);
    ASSERT_EQ(std::system(
                  (kPerf + " script -i " + data + fields + " > " + text + " 2>/dev/null").c_str()),
              0);
    auto source = ProfileSource::OpenFile(text);
    ASSERT_TRUE(source.ok()) << source.error().message();
    EXPECT_EQ((*source)->format(), ProfileFormat::kPerfScript);
    ExpectSharesAgree(text, data);
  }
}

// perf script text cut short (a copy interrupted, a pipe closed early) inside a frame's line,
// and inside the blanks that start one: the report reads every whole sample, says where the
// text ends inside one, and exits 4, as for a cut perf.data. The oracle is the same text cut at
// the empty line before the damaged sample (whole, exit 0), whose samples must be as many.
// Cut at a frame line's end, the last sample is read with a note that its stack may be short
// (the text may only have lost its last empty line), exit 0.
TEST_F(LocalRecording, PerfScriptTextCutShortIsReadUpToTheCutWithStatusFour) {
  const std::string data = Record("script-cut.data", {"-g"});
  const std::string text_path = data + ".txt";
  files_.push_back(text_path);
  ASSERT_EQ(
      std::system((kPerf + " script -i " + data + " > " + text_path + " 2>/dev/null").c_str()), 0);
  std::ifstream in(text_path, std::ios::binary);
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  ASSERT_GT(text.size(), 10000u);
  const auto samples_of = [&](const std::string& name, const std::string& bytes,
                              testing::CommandResult* result) {
    const std::string path = TempPath("import", name);
    files_.push_back(path);
    std::ofstream(path, std::ios::binary) << bytes;
    *result = RunCommand({kTprof, "report", "-i", path, "--json"});
    if (result->out.empty()) return -1.0;
    return nlohmann::json::parse(result->out)["events"][0]["samples"].get<double>();
  };
  // Inside a frame line's blanks, and after its address.
  const size_t blanks = text.find("\t", text.size() * 6 / 10) + 5;
  const size_t middle = text.find_first_not_of(" \t", blanks) + 3;
  for (const size_t cut_at : {blanks, middle}) {
    SCOPED_TRACE("cut at byte " + std::to_string(cut_at));
    // The empty line that ends the last whole sample before the cut (the match ends before it).
    const size_t whole_end = text.rfind("\n\n", cut_at - 2) + 2;
    testing::CommandResult cut, whole;
    const double cut_samples = samples_of("cut.txt", text.substr(0, cut_at), &cut);
    const double whole_samples = samples_of("whole.txt", text.substr(0, whole_end), &whole);
    EXPECT_EQ(cut.exit_code, 4) << cut.err;
    EXPECT_NE(cut.err.find("the text ends inside its last sample"), std::string::npos) << cut.err;
    ASSERT_EQ(whole.exit_code, 0) << whole.err;
    EXPECT_EQ(whole.err.find("ends inside"), std::string::npos) << whole.err;
    EXPECT_GT(whole_samples, 100);
    EXPECT_EQ(cut_samples, whole_samples);
  }
  const size_t frame_end = text.find('\n', middle) + 1;
  // Before the unended sample's lines (a last frame's line is followed by the empty line, which
  // a match at frame_end - 1 would take in: CI run F drew such a line).
  const size_t whole_end = text.rfind("\n\n", frame_end - 2) + 2;
  testing::CommandResult unended, whole;
  const double unended_samples = samples_of("unended.txt", text.substr(0, frame_end), &unended);
  const double whole_samples = samples_of("whole.txt", text.substr(0, whole_end), &whole);
  EXPECT_EQ(unended.exit_code, 0) << unended.err;
  EXPECT_NE(unended.err.find("that sample's stack may be short"), std::string::npos) << unended.err;
  EXPECT_EQ(unended_samples, whole_samples + 1);
}

TEST_F(LocalRecording, ReportAndImportFromTheCommandLine) {
  std::string data = Record("cli.data", {"-g"});
  testing::CommandResult report =
      RunCommand({kTprof, "report", data, "--limit", "5", "--no-inline"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_NE(report.out.find("inline_mix_loop"), std::string::npos) << report.out;

  std::string out = TempPath("import", "cli.tprof");
  files_.push_back(out);
  testing::CommandResult import = RunCommand({kTprof, "import", data, "-o", out});
  ASSERT_EQ(import.exit_code, 0) << import.err;
  uint64_t direct_samples = 0, imported_samples = 0;
  Shares direct = TprofShares(data, &direct_samples);
  Shares imported = TprofShares(out, &imported_samples);
  EXPECT_EQ(direct_samples, imported_samples);
  for (auto& [k, v] : direct) EXPECT_NEAR(imported[k], v, 1e-9) << k;

  // Pipe input on standard input.
  testing::CommandResult corrupt =
      RunCommand({kTprof, "report",
                  std::string(TPROF_TESTDATA_DIR) +
                      "/perf/quipper-perf.data.piped.corrupted.zero_size_sample-3.2"});
  EXPECT_EQ(corrupt.exit_code, 1);
  EXPECT_NE(corrupt.err.find("offset 49104"), std::string::npos) << corrupt.err;

  // An import that fails leaves nothing behind, not even the part it wrote.
  std::string failed = TempPath("import", "failed.tprof");
  testing::CommandResult failed_import =
      RunCommand({kTprof, "import",
                  std::string(TPROF_TESTDATA_DIR) +
                      "/perf/quipper-perf.data.piped.corrupted.zero_size_sample-3.2",
                  "-o", failed});
  EXPECT_EQ(failed_import.exit_code, 1);
  EXPECT_NE(failed_import.err.find("offset 49104"), std::string::npos) << failed_import.err;
  EXPECT_FALSE(std::filesystem::exists(failed));
  EXPECT_FALSE(std::filesystem::exists(failed + ".partial"));
}

// The kernel throttled sampling 68 times in this recording (perf report --stats): the report
// says so per event, as perf's raw dump attributes the records (each names its event by
// sample id, at offset 0x10 of the record), since the samples miss what the events counted
// while throttled.
// A perf.data file's length runs from its first sample to its last, so its last sample lies at
// 100 %: --time in percents covers every sample perf script prints, the halves add up to the
// whole (seen: 0%-100% gave 28 of perfparser's 29 samples when the end was excluded).
TEST(PerfDataTimeRanges, PercentsCoverEverySampleUpToTheLast) {
  const std::string file =
      std::string(TPROF_TESTDATA_DIR) + "/perf/perfparser/vector_static_gcc.perf.lbr.data";
  auto script = RunCommand({kPerf, "script", "-i", file, "-F", "time"});
  ASSERT_EQ(script.exit_code, 0) << script.err;
  const uint64_t perf_samples = std::count(script.out.begin(), script.out.end(), '\n');
  ASSERT_GT(perf_samples, 10u);
  auto samples = [&](const std::string& range) -> uint64_t {
    auto r = RunCommand({kTprof, "report", "-i", file, "--time", range, "--json"});
    EXPECT_EQ(r.exit_code, 0) << range << ": " << r.err;
    const auto j = nlohmann::json::parse(r.out, nullptr, false);
    return j.is_discarded() ? 0 : j["events"][0]["samples"].get<uint64_t>();
  };
  EXPECT_EQ(samples("0%-100%"), perf_samples);
  EXPECT_EQ(samples("0%-50%") + samples("50%-100%"), perf_samples);
}

TEST(ThrottledRecording, TheReportSaysWhichEventsTheKernelThrottled) {
  const std::string input =
      std::string(TPROF_TESTDATA_DIR) + "/perf/quipper-perf.data.throttle-3.8";
  // perf's view: sample ids per event from the header, throttle records per id from the dump.
  auto header = RunCommand({kPerf, "report", "--header-only", "-i", input});
  ASSERT_EQ(header.exit_code, 0) << header.err;
  std::map<uint64_t, std::string> event_of_id;
  std::istringstream header_lines(header.out);
  for (std::string line; std::getline(header_lines, line);) {
    if (line.rfind("# event : name = ", 0) != 0) continue;
    const std::string name = line.substr(17, line.find(',') - 17);
    std::istringstream ids(line.substr(line.find("id = {") + 6));
    for (std::string id; ids >> id && id[0] != '}';)  // "{ 141, 142, 143, 144 },"
      event_of_id[std::stoull(id.substr(0, id.find(',')))] = name;
  }
  ASSERT_EQ(event_of_id.size(), 8u) << header.out;
  auto dump = RunCommand({kPerf, "report", "-D", "-i", input});
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  std::map<std::string, uint64_t> perf_throttles;
  std::istringstream dump_lines(dump.out);
  bool in_throttle = false;
  for (std::string line; std::getline(dump_lines, line);) {
    while (!line.empty() && line.back() == ' ') line.pop_back();
    if (line.ends_with("event: 5")) {
      in_throttle = true;  // PERF_RECORD_THROTTLE; its raw bytes follow
      continue;
    }
    if (in_throttle && line.find("0010:") != std::string::npos) {
      // "0010:  8f 00 00 00 00 00 00 00 ..": the id, little-endian (the file is x86's).
      std::istringstream bytes(line.substr(line.find("0010:") + 5));
      uint64_t id = 0;
      for (int b = 0; b < 8; ++b) {
        std::string hex;
        bytes >> hex;
        id |= std::stoull(hex, nullptr, 16) << (8 * b);
      }
      ASSERT_TRUE(event_of_id.count(id)) << line;
      ++perf_throttles[event_of_id[id]];
      in_throttle = false;
    }
  }
  ASSERT_FALSE(perf_throttles.empty()) << "no throttle records in perf's dump";
  uint64_t perf_total = 0;
  for (const auto& [event, n] : perf_throttles) perf_total += n;
  EXPECT_EQ(perf_total, 68u);

  auto json = RunCommand({kTprof, "report", "-i", input, "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json j = nlohmann::json::parse(json.out);
  ASSERT_EQ(j["throttles"].size(), j["events"].size());
  std::map<std::string, uint64_t> tprof_throttles;
  for (size_t e = 0; e < j["events"].size(); ++e)
    if (j["throttles"][e].get<uint64_t>())
      tprof_throttles[j["events"][e]["name"]] = j["throttles"][e].get<uint64_t>();
  EXPECT_EQ(tprof_throttles, perf_throttles);
  // The full header (-v) a line per event; the compact one every event in one line.
  auto table = RunCommand({kTprof, "report", "-i", input, "-v"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  for (const auto& [event, n] : perf_throttles)
    EXPECT_NE(table.out.find("# throttled: the kernel stopped sampling " + event + " " +
                             std::to_string(n) + " times"),
              std::string::npos)
        << table.out.substr(0, 2000);
  auto compact = RunCommand({kTprof, "report", "-i", input});
  ASSERT_EQ(compact.exit_code, 0) << compact.err;
  const size_t line = compact.out.find("# throttled: the kernel stopped sampling ");
  ASSERT_NE(line, std::string::npos) << compact.out.substr(0, 2000);
  const std::string throttled = compact.out.substr(line, compact.out.find('\n', line) - line);
  for (const auto& [event, n] : perf_throttles)
    EXPECT_NE(throttled.find(event + " " + std::to_string(n) + " times"), std::string::npos)
        << throttled;
}

// The autofdo sample: the recorded path (.bin.gen on the build machine) differs from the file
// here; --binary finds it by build-id (an 8-byte id perf padded to 20 bytes).
TEST(AutofdoSample, BranchStackSamplesGetFunctionNames) {
  auto source = ProfileSource::OpenFile(kAutofdo + "propeller_sample_1.perfdata1");
  ASSERT_TRUE(source.ok()) << source.error().message();
  ElfSymbolizer symbolizer;
  BinaryLocator locator({"", {kAutofdo + "propeller_sample_1.bin"}, [](const std::string& p) {
                           auto s = ElfSymbols::Load(p);
                           return s.ok() ? s->build_id() : std::string();
                         }});
  LocatingResolver resolver(symbolizer, locator);
  struct BranchNames : RecordVisitor {
    AddressSpace space;
    FrameResolver* resolver = nullptr;
    std::map<std::string, uint64_t> names;
    uint64_t in_binary = 0, named = 0, with_line = 0, samples = 0, samples_with_branches = 0;
    void OnMmap(const MmapRecord& r) override { space.OnMmap(r); }
    void OnComm(const CommRecord& r) override { space.OnComm(r); }
    void OnSample(const Sample& s) override {
      ++samples;
      if (!s.branches.empty()) ++samples_with_branches;
      for (const BranchEntry& b : s.branches)
        for (uint64_t address : {b.from, b.to}) {
          const Mapping* m = space.Find(s.pid, address);
          if (!m || m->filename.find("propeller_sample_1") == std::string::npos) continue;
          ++in_binary;
          ResolvedFrame f = resolver->Resolve(m, address);
          if (f.resolved) {
            ++named;
            if (f.line() > 0) ++with_line;
            ++names[f.function];
          }
        }
    }
  } visitor;
  visitor.resolver = &resolver;
  ASSERT_TRUE((*source)->ReadRecords(visitor).ok());
  EXPECT_EQ(visitor.samples, 3740u);  // perf report --stats: 3740 samples
  EXPECT_GT(visitor.samples_with_branches, 3700u);
  ASSERT_GT(visitor.in_binary, 10000u);
  EXPECT_EQ(visitor.named, visitor.in_binary);
  // No source lines to check: the binary's .debug_line covers only crt's start.S (addr2line
  // answers ??:? for main and compute_flag too), so `with_line` stays near zero here.
  EXPECT_LE(visitor.with_line, visitor.in_binary);
  EXPECT_GT(visitor.names["main"], 0u);
  EXPECT_GT(visitor.names["compute_flag"], 0u);

  testing::CommandResult report =
      RunCommand({kTprof, "report", kAutofdo + "propeller_sample_1.perfdata1", "--binary",
                  kAutofdo + "propeller_sample_1.bin"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_NE(report.out.find("compute_flag"), std::string::npos) << report.out;
}

}  // namespace
}  // namespace tprof
