// tprof report's other outputs on recordings made here: folded stacks (against the table's
// totals and an independent fold of `perf script`), pprof (decoded by protoc with Debian's
// profile.proto), speedscope (validated against the schema speedscope publishes) and annotate
// (against the table, the binary's symbol table from nm, and demo.cpp's own text).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "test/support/run_command.h"
#include "test/support/test_programs.h"

namespace tprof {
namespace {

using testing::CommandResult;
using testing::RunCommand;

const std::string kDemoSource = DEMO_SOURCE;

// The same file by another spelling: a binary built with relative paths names its source
// relative to the compilation directory ("/b/build/../test/workloads/demo.cpp").
bool SameFile(const std::string& a, const std::string& b) {
  std::error_code error;
  return std::filesystem::equivalent(a, b, error);
}
const std::string kProtoDir = PPROF_PROTO_DIR;
const std::string kSpeedscopeCheck = SPEEDSCOPE_CHECK_DIR;

CommandResult Shell(const std::string& command) { return RunCommand({"/bin/sh", "-c", command}); }

// The table's totals per event, from its "# event: NAME, N samples, total period P" lines.
struct EventTotal {
  uint64_t samples = 0;
  uint64_t period = 0;
};
std::map<std::string, EventTotal> ReportTotals(const std::string& input) {
  auto r = RunCommand({kTprof, "report", "-i", input, "-v"});  // the full header's event lines
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, EventTotal> totals;
  std::regex event(R"(^# event: (\S+), (\d+) samples, total period (\d+)$)");
  for (const std::string& line : SplitLines(r.out)) {
    std::smatch m;
    if (std::regex_match(line, m, event))
      totals[m[1]] = {std::stoull(m[2].str()), std::stoull(m[3].str())};
  }
  return totals;
}

// "stack count" lines -> count by stack.
std::map<std::string, uint64_t> ParseFolded(const std::string& text) {
  std::map<std::string, uint64_t> stacks;
  for (const std::string& line : SplitLines(text)) {
    size_t space = line.rfind(' ');
    if (space == std::string::npos) continue;
    stacks[line.substr(0, space)] += std::stoull(line.substr(space + 1));
  }
  return stacks;
}

uint64_t Sum(const std::map<std::string, uint64_t>& stacks) {
  uint64_t sum = 0;
  for (const auto& [stack, count] : stacks) sum += count;
  return sum;
}

// perf prints C++ names without parameter lists; tprof with them.
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

// One frame name as both tools can agree on it: no parameters; every unnamed address alike.
std::string NormalFrame(const std::string& name) {
  if (name.empty() || name[0] == '[' || name.rfind("0x", 0) == 0) return "[unknown]";
  return WithoutParameters(name);
}

std::string NormalStack(const std::string& stack) {
  std::string out;
  std::stringstream frames(stack);
  for (std::string frame; std::getline(frames, frame, ';');)
    out += (out.empty() ? "" : ";") + NormalFrame(frame);
  return out;
}

// An independent fold of `perf script -F comm,tid,period,ip,sym` output, as stackcollapse-perf
// does it: a header line per sample, then its frames leaf first, then a blank line.
std::map<std::string, uint64_t> FoldPerfScript(const std::string& text) {
  std::map<std::string, uint64_t> stacks;
  std::regex header(R"(^\S.*\s(\d+)\s*$)");  // "comm tid period"
  std::regex frame(R"(^\s+([0-9a-f]+)\s+(.*)$)");
  uint64_t period = 0;
  std::vector<std::string> frames;
  auto flush = [&] {
    if (period == 0 && frames.empty()) return;
    std::string stack;
    for (auto f = frames.rbegin(); f != frames.rend(); ++f)
      stack += (stack.empty() ? "" : ";") + NormalFrame(*f);
    stacks[stack] += period;
    period = 0;
    frames.clear();
  };
  for (const std::string& line : SplitLines(text)) {
    std::smatch m;
    if (line.empty()) {
      flush();
    } else if (std::regex_match(line, m, frame)) {
      std::string sym = m[2];
      if (sym.size() > 2 && sym.back() == ')' && sym.find(" (") != std::string::npos)
        sym = sym.substr(0, sym.rfind(" ("));  // a dso, when perf adds one
      frames.push_back(sym == "[unknown]" ? "[unknown]" : sym);
    } else if (std::regex_match(line, m, header)) {
      flush();
      period = std::stoull(m[1].str());
    }
  }
  flush();
  return stacks;
}

// The 20-byte GNU build-id of an ELF file, found without tprof: the descriptor after the
// "GNU\0" name of its .note.gnu.build-id.
std::string BuildIdHex(const std::string& path) {
  std::string binary = testing::ReadWholeFile(path);
  size_t note = binary.find(std::string("\x04\0\0\0\x14\0\0\0\x03\0\0\0GNU\0", 16));
  if (note == std::string::npos) return "";
  std::string hex;
  char digits[3];
  for (unsigned char c : binary.substr(note + 16, 20)) {
    std::snprintf(digits, sizeof digits, "%02x", c);
    hex += digits;
  }
  return hex;
}

class ReportExports : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    tprof_file_ = new std::string(TempPath("export", "demo.tprof"));
    perf_file_ = new std::string(TempPath("export", "demo.data"));
    auto r =
        RunCommand({kTprof, "record", "-g", "-F", "4000", "-o", *tprof_file_, "--", kDemo, "0.12"});
    recorded_ = r.exit_code == 0;
    if (!recorded_) std::fprintf(stderr, "tprof record failed: %s\n", r.err.c_str());
    auto p = RunCommand({"/usr/bin/perf", "record", "-q", "-e", "cpu-clock", "-g", "-F", "4000",
                         "-o", *perf_file_, "--", kDemo, "0.08"});
    perf_recorded_ = p.exit_code == 0;
    if (!perf_recorded_) std::fprintf(stderr, "perf record failed: %s\n", p.err.c_str());
  }
  static void TearDownTestSuite() {
    std::remove(tprof_file_->c_str());
    std::remove(perf_file_->c_str());
    delete tprof_file_;
    delete perf_file_;
  }
  static std::string* tprof_file_;
  static std::string* perf_file_;
  static bool recorded_, perf_recorded_;
};
std::string* ReportExports::tprof_file_;
std::string* ReportExports::perf_file_;
bool ReportExports::recorded_, ReportExports::perf_recorded_;

// ---- folded stacks ----

TEST_F(ReportExports, FoldedCountsAddUpToTheReportTotalWithEveryPrefix) {
  ASSERT_TRUE(recorded_);
  auto totals = ReportTotals(*tprof_file_);
  ASSERT_EQ(totals.size(), 1u);
  const auto& [event, total] = *totals.begin();
  ASSERT_GT(total.samples, 1000u);
  std::map<std::string, std::set<std::string>> roots;
  for (std::string prefix : {"none", "comm", "pid", "tid"}) {
    auto r =
        RunCommand({kTprof, "report", "-i", *tprof_file_, "--folded", "--folded-prefix", prefix});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto stacks = ParseFolded(r.out);
    EXPECT_EQ(Sum(stacks), total.period) << prefix;
    for (const auto& [stack, count] : stacks)
      roots[prefix].insert(stack.substr(0, stack.find(';')));
  }
  // The demo is one process name; two processes (it forks a child); at least three threads.
  EXPECT_EQ(roots["comm"], (std::set<std::string>{"tprof_demo"}));
  EXPECT_EQ(roots["pid"].size(), 2u);
  for (const std::string& root : roots["pid"]) EXPECT_EQ(root.rfind("tprof_demo-", 0), 0u) << root;
  EXPECT_GE(roots["tid"].size(), 3u);
  for (const std::string& root : roots["tid"]) EXPECT_NE(root.find('/'), std::string::npos) << root;
}

TEST_F(ReportExports, FoldedMarksInlinedAndKernelFramesUnlessAskedNotTo) {
  ASSERT_TRUE(recorded_);
  auto marked = RunCommand({kTprof, "report", "-i", *tprof_file_, "--folded"});
  ASSERT_EQ(marked.exit_code, 0) << marked.err;
  // demo.cpp's mix_helper is always_inline into inline_mix_loop's loop. g++ names the inlined
  // copy "mix_helper"; clang by its linkage name, "(anonymous namespace)::mix_helper(unsigned
  // long)".
  EXPECT_NE(marked.out.find("inline_mix_loop(double);"), std::string::npos);
  const std::regex inlined_helper(R"(;(\(anonymous namespace\)::)?mix_helper(\([^;]*\))?_\[i\])");
  EXPECT_TRUE(std::regex_search(marked.out, inlined_helper));
  auto plain = RunCommand({kTprof, "report", "-i", *tprof_file_, "--folded", "--no-marks"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(plain.out.find("_[i]"), std::string::npos);
  EXPECT_EQ(plain.out.find("_[k]"), std::string::npos);
  EXPECT_TRUE(std::regex_search(
      plain.out, std::regex(R"(;(\(anonymous namespace\)::)?mix_helper(\([^;]*\))?[; ])")));
  EXPECT_EQ(Sum(ParseFolded(marked.out)), Sum(ParseFolded(plain.out)));
}

TEST_F(ReportExports, FoldedPerfDataAgreesWithAFoldOfPerfScript) {
  ASSERT_TRUE(perf_recorded_);
  auto script =
      RunCommand({"/usr/bin/perf", "script", "-F", "comm,tid,period,ip,sym", "-i", *perf_file_});
  ASSERT_EQ(script.exit_code, 0) << script.err;
  auto expected = FoldPerfScript(script.out);
  auto r =
      RunCommand({kTprof, "report", "-i", *perf_file_, "--folded", "--no-marks", "--no-inline"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, uint64_t> got;
  for (const auto& [stack, count] : ParseFolded(r.out)) got[NormalStack(stack)] += count;
  auto totals = ReportTotals(*perf_file_);
  ASSERT_EQ(totals.count("cpu-clock"), 1u);
  EXPECT_EQ(Sum(got), totals["cpu-clock"].period);
  EXPECT_EQ(Sum(got), Sum(expected));
  // Stack by stack: names of the same addresses from two symbolizers. Where they differ (aliases
  // such as __clock_gettime / clock_gettime, PLT stubs) a stack counts as different; nearly
  // all of the period must still fall on stacks both folds name identically.
  uint64_t same = 0;
  for (const auto& [stack, count] : expected) {
    auto it = got.find(stack);
    if (it != got.end()) same += std::min(count, it->second);
  }
  EXPECT_GE(static_cast<double>(same), 0.95 * static_cast<double>(Sum(expected)))
      << "tprof:\n"
      << r.out.substr(0, 4000) << "\nperf script fold (first stacks):\n"
      << [&] {
           std::string s;
           for (const auto& [stack, count] : expected)
             if (s.size() < 4000) s += stack + " " + std::to_string(count) + "\n";
           return s;
         }();
  // The hot functions are leaves of stacks rooted in the program's main or thread start.
  bool compute_kernel_under_main = false;
  for (const auto& [stack, count] : got)
    compute_kernel_under_main |=
        stack.find("main;(anonymous namespace)::compute_kernel") != std::string::npos;
  EXPECT_TRUE(compute_kernel_under_main);
}

// Folded stacks are also an input: tprof's own output reads back as the same stacks (callers
// included, which are looked up at their return address minus one).
TEST_F(ReportExports, FoldedOutputReadsBackAsTheSameStacks) {
  ASSERT_TRUE(recorded_);
  auto first = RunCommand({kTprof, "report", "-i", *tprof_file_, "--folded", "--no-marks"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  std::string path = TempPath("export", "stacks.folded");
  {
    std::ofstream out(path);
    out << first.out;
  }
  auto second = RunCommand({kTprof, "report", "-i", path, "--folded", "--no-marks"});
  std::remove(path.c_str());
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_GT(SplitLines(first.out).size(), 10u);
  EXPECT_EQ(second.out, first.out);
}

TEST_F(ReportExports, UnknownEventIsAUsageError) {
  ASSERT_TRUE(recorded_);
  auto r = RunCommand({kTprof, "report", "-i", *tprof_file_, "--folded", "--event", "nope"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no event 'nope'"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

// ---- pprof ----

// protoc's text format, reduced to what the test checks.
struct DecodedPprof {
  std::vector<std::pair<int64_t, int64_t>> sample_types;  // string indexes
  std::vector<std::vector<uint64_t>> sample_values;
  std::vector<size_t> lines_per_location;
  std::vector<std::pair<int64_t, int64_t>> mappings;          // filename, build_id indexes
  std::map<int64_t, int64_t> function_names;                  // id -> name index
  std::vector<std::vector<int64_t>> location_line_functions;  // function ids per location
  std::vector<std::string> strings;
};

std::string Unescape(const std::string& quoted) {  // protoc's C-style escapes
  std::string out;
  for (size_t i = 1; i + 1 < quoted.size(); ++i) {
    if (quoted[i] != '\\') {
      out += quoted[i];
      continue;
    }
    char c = quoted[++i];
    if (c >= '0' && c <= '7') {
      int v = 0;
      for (int k = 0; k < 3 && i < quoted.size() - 1 && quoted[i] >= '0' && quoted[i] <= '7'; ++k)
        v = v * 8 + (quoted[i++] - '0');
      --i;
      out += static_cast<char>(v);
    } else {
      out += c == 'n' ? '\n' : c == 't' ? '\t' : c;
    }
  }
  return out;
}

DecodedPprof ParseDecoded(const std::string& text) {
  DecodedPprof d;
  std::vector<std::string> path;  // open messages
  int64_t function_id = 0;
  std::regex field(R"(^\s*(\w+): (.*)$)");
  for (const std::string& line : SplitLines(text)) {
    std::smatch m;
    // Only a line "name {" opens a message and "}" closes one: string values may hold braces
    // (a lambda's name: "f::{lambda at x.cpp:4}::operator()").
    const size_t last = line.find_last_not_of(' ');
    if (last != std::string::npos && line[last] == '{' && line.find(": ") == std::string::npos) {
      std::string name = line.substr(line.find_first_not_of(' '));
      name = name.substr(0, name.find(' '));
      path.push_back(name);
      if (path.size() == 1 && name == "sample") d.sample_values.emplace_back();
      if (path.size() == 1 && name == "sample_type") d.sample_types.emplace_back();
      if (path.size() == 1 && name == "mapping") d.mappings.emplace_back();
      if (path.size() == 1 && name == "location") {
        d.lines_per_location.push_back(0);
        d.location_line_functions.emplace_back();
      }
      if (path.size() == 2 && path[0] == "location" && name == "line")
        ++d.lines_per_location.back();
      continue;
    }
    if (last != std::string::npos && line[last] == '}' && line.find_first_not_of(' ') == last) {
      if (!path.empty()) path.pop_back();
      continue;
    }
    if (!std::regex_match(line, m, field)) continue;
    std::string key = m[1], value = m[2];
    std::string where = path.empty() ? "" : path[0];
    if (path.empty() && key == "string_table") d.strings.push_back(Unescape(value));
    if (path.size() == 1 && where == "sample" && key == "value")
      d.sample_values.back().push_back(std::stoull(value));
    if (path.size() == 1 && where == "sample_type" && key == "type")
      d.sample_types.back().first = std::stoll(value);
    if (path.size() == 1 && where == "sample_type" && key == "unit")
      d.sample_types.back().second = std::stoll(value);
    if (path.size() == 1 && where == "mapping" && key == "filename")
      d.mappings.back().first = std::stoll(value);
    if (path.size() == 1 && where == "mapping" && key == "build_id")
      d.mappings.back().second = std::stoll(value);
    if (path.size() == 1 && where == "function" && key == "id") function_id = std::stoll(value);
    if (path.size() == 1 && where == "function" && key == "name")
      d.function_names[function_id] = std::stoll(value);
    if (path.size() == 2 && where == "location" && key == "function_id")
      d.location_line_functions.back().push_back(std::stoll(value));
  }
  return d;
}

DecodedPprof ExportAndDecode(const std::string& input) {
  std::string out = TempPath("export", "out.pb.gz");
  auto r = RunCommand({kTprof, "report", "-i", input, "--pprof", out});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // gzip -t checks the gzip wrapper and its CRC; protoc fails on any malformed message.
  EXPECT_EQ(Shell("gzip -t " + out).exit_code, 0);
  auto decoded = Shell("gzip -dc " + out + " | protoc --decode perftools.profiles.Profile -I " +
                       kProtoDir + " " + kProtoDir + "/profile.proto");
  EXPECT_EQ(decoded.exit_code, 0) << decoded.err;
  std::remove(out.c_str());
  return ParseDecoded(decoded.out);
}

TEST_F(ReportExports, PprofDecodesWithProfileProtoAndItsTotalsAreTheReports) {
  for (const std::string* input : {tprof_file_, perf_file_}) {
    ASSERT_TRUE(input == tprof_file_ ? recorded_ : perf_recorded_);
    DecodedPprof d = ExportAndDecode(*input);
    ASSERT_FALSE(d.strings.empty());
    EXPECT_EQ(d.strings[0], "");
    auto totals = ReportTotals(*input);
    ASSERT_EQ(d.sample_types.size(), totals.size());
    for (size_t t = 0; t < d.sample_types.size(); ++t) {
      const std::string& type = d.strings.at(static_cast<size_t>(d.sample_types[t].first));
      const std::string& unit = d.strings.at(static_cast<size_t>(d.sample_types[t].second));
      ASSERT_EQ(totals.count(type), 1u) << type;
      EXPECT_EQ(unit, "nanoseconds") << type;  // task-clock / cpu-clock count nanoseconds
      uint64_t sum = 0;
      for (const auto& values : d.sample_values) sum += values.at(t);
      EXPECT_EQ(sum, totals[type].period) << *input;
    }
    // The demo's mapping comes first (pprof's main binary) and carries its build-id in hex.
    ASSERT_FALSE(d.mappings.empty());
    EXPECT_EQ(d.strings.at(static_cast<size_t>(d.mappings[0].first)), kDemo) << *input;
    bool demo_mapping = false;
    for (const auto& [filename, build_id] : d.mappings)
      if (d.strings.at(static_cast<size_t>(filename)) == kDemo) {
        demo_mapping = true;
        EXPECT_EQ(d.strings.at(static_cast<size_t>(build_id)), BuildIdHex(kDemo));
      }
    EXPECT_TRUE(demo_mapping);
    // Inlined frames: a location of inline_mix_loop's loop has mix_helper as its first
    // (innermost) line and inline_mix_loop as its last (the function it was inlined into).
    bool inline_location = false;
    for (const auto& functions : d.location_line_functions) {
      if (functions.size() < 2) continue;
      auto name = [&](int64_t id) {
        return d.strings.at(static_cast<size_t>(d.function_names.at(id)));
      };
      inline_location |= name(functions.front()).find("mix_helper") != std::string::npos &&
                         name(functions.back()).find("inline_mix_loop") != std::string::npos;
    }
    EXPECT_TRUE(inline_location) << *input;
  }
}

// ---- speedscope ----

TEST_F(ReportExports, SpeedscopeValidatesAgainstItsSchemaAndWeightsAreTheReportTotals) {
  ASSERT_TRUE(recorded_);
  ASSERT_EQ(::access((kSpeedscopeCheck + "/node_modules/ajv").c_str(), F_OK), 0)
      << "the schema check is not installed: run scripts/setup.sh (npm ci in " << kSpeedscopeCheck
      << ")";
  std::string out = TempPath("export", "out.speedscope.json");
  for (const std::string* input : {tprof_file_, perf_file_}) {
    auto r = RunCommand({kTprof, "report", "-i", *input, "--speedscope", out});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto valid = RunCommand({"/usr/bin/env", "node", kSpeedscopeCheck + "/validate.mjs", out});
    EXPECT_EQ(valid.exit_code, 0) << valid.out << valid.err;
    auto file = nlohmann::json::parse(testing::ReadWholeFile(out));
    const size_t frames = file["shared"]["frames"].size();
    auto totals = ReportTotals(*input);
    ASSERT_EQ(file["profiles"].size(), totals.size());
    for (const auto& profile : file["profiles"]) {
      std::string event = profile["name"];
      ASSERT_EQ(totals.count(event), 1u) << event;
      uint64_t sum = 0;
      for (const auto& w : profile["weights"]) sum += w.get<uint64_t>();
      EXPECT_EQ(sum, totals[event].period);
      EXPECT_EQ(profile["endValue"].get<uint64_t>(), totals[event].period);
      EXPECT_EQ(profile["samples"].size(), profile["weights"].size());
      for (const auto& stack : profile["samples"])
        for (const auto& f : stack) EXPECT_LT(f.get<size_t>(), frames);  // the schema can't say
    }
  }
  std::remove(out.c_str());
}

TEST_F(ReportExports, ExportToAnUnwritablePathIsOneLineError) {
  ASSERT_TRUE(recorded_);
  auto r =
      RunCommand({kTprof, "report", "-i", *tprof_file_, "--pprof", "/nonexistent-dir/out.pb.gz"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("/nonexistent-dir/out.pb.gz"), std::string::npos) << r.err;
}

// ---- annotate ----

TEST_F(ReportExports, AnnotateSharesAddUpAndPointIntoTheFunctionAndItsSource) {
  ASSERT_TRUE(recorded_);
  // The table's row for compute_kernel: self share and samples. Its loop is a lambda inlined
  // into it: --no-inline counts that code as compute_kernel's, in the table and the listing.
  auto table = RunCommand({kTprof, "report", "-i", *tprof_file_, "--no-inline"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  double self_percent = 0;
  uint64_t self_samples = 0;
  std::regex row(R"(^\s+([0-9.]+)%\s+(\d+)\s+.*compute_kernel\(.*$)");
  for (const std::string& line : SplitLines(table.out)) {
    std::smatch m;
    if (std::regex_match(line, m, row)) {
      self_percent += std::stod(m[1]);
      self_samples += std::stoull(m[2]);
    }
  }
  ASSERT_GT(self_samples, 50u);

  // The function's range from the binary's symbol table, read by nm.
  auto nm = Shell("nm -S " + kDemo + " | grep compute_kernel");
  ASSERT_EQ(nm.exit_code, 0);
  std::istringstream nm_line(nm.out);
  std::string start_hex, size_hex;
  nm_line >> start_hex >> size_hex;
  const uint64_t start = std::stoull(start_hex, nullptr, 16);
  const uint64_t end = start + std::stoull(size_hex, nullptr, 16);

  // compute_kernel's lines in demo.cpp: from its definition to the next function's.
  auto source = SplitLines(testing::ReadWholeFile(kDemoSource));
  uint32_t first_line = 0, last_line = 0;
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i].find("void compute_kernel(") != std::string::npos) first_line = i + 1;
    if (first_line && !last_line && i + 1 > first_line && source[i].rfind("}", 0) == 0)
      last_line = i + 1;
  }
  ASSERT_GT(last_line, first_line);

  auto r = RunCommand(
      {kTprof, "report", "-i", *tprof_file_, "--annotate", "compute_kernel", "--no-inline"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::regex instruction(R"(^\s+([0-9.]+)%\s+(\d+)\s+([0-9a-f]+): .*$)");
  std::regex empty_instruction(R"(^\s+([0-9a-f]+): .*$)");
  std::regex source_header(R"(^\s+(\S+):(\d+)(:  .*)?$)");
  double share_sum = 0;
  uint64_t sample_sum = 0, instructions = 0, hottest_samples = 0, hottest = 0;
  std::string file, hottest_file;
  uint32_t line_number = 0, hottest_line = 0;
  bool text_shown = false;
  for (const std::string& line : SplitLines(r.out)) {
    std::smatch m;
    if (std::regex_match(line, m, instruction)) {
      ++instructions;
      share_sum += std::stod(m[1]);
      uint64_t samples = std::stoull(m[2]);
      sample_sum += samples;
      uint64_t address = std::stoull(m[3], nullptr, 16);
      EXPECT_GE(address, start);
      EXPECT_LT(address, end);
      if (samples > hottest_samples) {
        hottest_samples = samples;
        hottest = address;
        hottest_file = file;
        hottest_line = line_number;
      }
    } else if (std::regex_match(line, m, empty_instruction)) {
      ++instructions;
    } else if (std::regex_match(line, m, source_header)) {
      file = m[1];
      line_number = static_cast<uint32_t>(std::stoul(m[2]));
      // The text shown is the file's own line.
      if (m[3].matched && SameFile(file, kDemoSource)) {
        std::string text = source.at(line_number - 1);
        EXPECT_NE(m[3].str().find(text.substr(text.find_first_not_of(' '))), std::string::npos)
            << line;
        text_shown = true;
      }
    }
  }
  EXPECT_GT(instructions, 10u) << r.out;
  EXPECT_EQ(sample_sum, self_samples) << r.out;
  // Shares are printed to 0.01: each rounds by at most 0.005.
  EXPECT_NEAR(share_sum, self_percent, 0.005 * static_cast<double>(instructions) + 0.01);
  EXPECT_TRUE(text_shown);
  // The hottest instruction is in the function, on a line of its loop in demo.cpp.
  EXPECT_GE(hottest, start);
  EXPECT_LT(hottest, end);
  EXPECT_TRUE(SameFile(hottest_file, kDemoSource)) << hottest_file << " is not " << kDemoSource;
  EXPECT_GE(hottest_line, first_line);
  EXPECT_LE(hottest_line, last_line);
}

TEST_F(ReportExports, AnnotatingAFunctionWithoutSamplesIsOneLineError) {
  ASSERT_TRUE(recorded_);
  auto r = RunCommand({kTprof, "report", "-i", *tprof_file_, "--annotate", "no_such_function"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no_such_function"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

}  // namespace
}  // namespace tprof
