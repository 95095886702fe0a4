// Inlined functions as functions of their own in every view that names functions: the report
// table (Self% and --children), --callers/--callees, CSV, --annotate, pprof, speedscope and the
// function diff with its gate. Workloads with always_inline helpers (C, a C++ template, two
// levels of inlining, one helper inlined into two callers) are built here with -O2 -g and
// recorded by perf; the expected functions come from `perf script` addresses given to
// `addr2line -i -f -C`, never from tprof.
#include <gtest/gtest.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmath>
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

const std::string kWorkloads = INLINE_WORKLOADS_DIR;
const std::string kProtoDir = PPROF_PROTO_DIR;

CommandResult Shell(const std::string& command) { return RunCommand({"/bin/sh", "-c", command}); }

// One function of an address as addr2line -i names it, innermost first.
struct SourceFunction {
  std::string name;
  std::string line;  // "file:line"
};
using InlineChain = std::vector<SourceFunction>;

// `addr2line -a -i -f -C -e BINARY` on every address: its inline chain, innermost first.
std::map<uint64_t, InlineChain> Addr2line(const std::string& binary,
                                          const std::set<uint64_t>& addresses,
                                          const std::string& scratch) {
  {
    std::ofstream out(scratch);
    for (uint64_t a : addresses) out << std::hex << "0x" << a << '\n';
  }
  auto r = Shell("addr2line -a -i -f -C -e " + binary + " < " + scratch);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::map<uint64_t, InlineChain> chains;
  InlineChain* chain = nullptr;
  std::vector<std::string> lines = SplitLines(r.out);
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].rfind("0x", 0) == 0) {
      chain = &chains[std::stoull(lines[i], nullptr, 16)];
      continue;
    }
    if (!chain || i + 1 >= lines.size()) continue;
    chain->push_back({lines[i], lines[i + 1]});
    ++i;
  }
  return chains;
}

// The difference between an address in the binary and its file offset in the executable
// segment (perf script prints file offsets for a program's addresses), from readelf.
uint64_t TextOffsetDelta(const std::string& binary) {
  auto r = Shell("readelf -lW " + binary);
  std::regex load(R"(^\s*LOAD\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+\S+\s+\S+\s+\S+\s+R E\s)");
  for (const std::string& line : SplitLines(r.out)) {
    std::smatch m;
    if (std::regex_search(line, m, load))
      return std::stoull(m[2].str(), nullptr, 16) - std::stoull(m[1].str(), nullptr, 16);
  }
  ADD_FAILURE() << "no executable LOAD segment in " << binary;
  return 0;
}

// What addr2line says the samples of a perf recording fall in, summed by function. Frames
// outside the binary are one function "[other]".
struct Reference {
  uint64_t total = 0;
  std::map<std::string, uint64_t> self;      // the innermost function at the pc
  std::map<std::string, uint64_t> physical;  // the out-of-line function at the pc
  std::map<std::string, uint64_t> children;  // anywhere on the expanded chain, once per sample
  // function -> caller or callee (the next function outward or inward) -> period, once per
  // sample.
  std::map<std::string, std::map<std::string, uint64_t>> callers, callees;
  // function -> the out-of-line function holding its self samples -> period
  std::map<std::string, std::map<std::string, uint64_t>> self_within;
  std::map<std::string, std::set<std::string>> self_lines;  // function -> file:line of its pcs

  double SelfPercent(const std::string& f) const { return Percent(self, f); }
  double Percent(const std::map<std::string, uint64_t>& m, const std::string& f) const {
    auto it = m.find(f);
    return it == m.end() ? 0 : 100.0 * static_cast<double>(it->second) / static_cast<double>(total);
  }
};

Reference BuildReference(const std::string& perf_data, const std::string& binary,
                         const std::string& scratch) {
  auto r = RunCommand({"/usr/bin/perf", "script", "-F", "period,ip,dso", "-i", perf_data});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  struct Frame {
    uint64_t address;  // in the binary; return addresses minus one
    bool ours;
  };
  std::vector<std::pair<uint64_t, std::vector<Frame>>> samples;
  const uint64_t delta = TextOffsetDelta(binary);
  std::set<uint64_t> addresses;
  std::regex frame(R"(^\s+([0-9a-f]+) \((.*)\)$)");
  for (const std::string& line : SplitLines(r.out)) {
    std::smatch m;
    if (std::regex_match(line, m, frame) && !samples.empty()) {
      Frame f{std::stoull(m[1].str(), nullptr, 16) + delta, m[2].str() == binary};
      if (!samples.back().second.empty()) f.address -= 1;  // a return address: the call
      if (f.ours) addresses.insert(f.address);
      samples.back().second.push_back(f);
    } else if (line.find_first_not_of(" \t0123456789") == std::string::npos &&
               line.find_first_of("0123456789") != std::string::npos) {
      samples.emplace_back(std::stoull(line), std::vector<Frame>{});
    }
  }
  EXPECT_GT(samples.size(), 500u) << perf_data;
  const auto chains = Addr2line(binary, addresses, scratch);
  Reference ref;
  for (const auto& [period, frames] : samples) {
    ref.total += period;
    std::vector<std::string> functions;  // leaf first, every inlined function its own
    for (size_t i = 0; i < frames.size(); ++i) {
      if (!frames[i].ours) {
        functions.push_back("[other]");
        if (i == 0) ref.physical["[other]"] += period;
        continue;
      }
      const InlineChain& chain = chains.at(frames[i].address);
      for (const SourceFunction& f : chain) functions.push_back(f.name);
      if (i == 0) {
        ref.physical[chain.back().name] += period;
        ref.self_within[chain.front().name][chain.back().name] += period;
        ref.self_lines[chain.front().name].insert(chain.front().line);
      }
    }
    if (functions.empty()) continue;
    ref.self[functions.front()] += period;
    std::set<std::string> seen, caller_seen, callee_seen;
    for (size_t i = 0; i < functions.size(); ++i) {
      const std::string& f = functions[i];
      if (seen.insert(f).second) ref.children[f] += period;
      if (i + 1 < functions.size() && caller_seen.insert(f + '\n' + functions[i + 1]).second)
        ref.callers[f][functions[i + 1]] += period;
      if (i > 0 && callee_seen.insert(f + '\n' + functions[i - 1]).second)
        ref.callees[f][functions[i - 1]] += period;
    }
  }
  return ref;
}

// The table's rows by sym: self and total period of the first event.
struct TableRow {
  uint64_t self = 0, total = 0;
};
std::map<std::string, TableRow> TableBySym(const std::string& input,
                                           std::vector<std::string> extra = {}) {
  std::vector<std::string> argv = {kTprof, "report", "-i", input, "--sort", "sym", "--json"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  auto r = RunCommand(argv);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, TableRow> rows;
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  if (j.is_discarded()) {
    ADD_FAILURE() << "not JSON: " << r.out.substr(0, 300);
    return rows;
  }
  for (const auto& row : j["rows"]) {
    TableRow& t = rows[row["keys"]["sym"].get<std::string>()];
    t.self += row["events"][0]["self_period"].get<uint64_t>();
    t.total += row["events"][0]["total_period"].get<uint64_t>();
  }
  return rows;
}

double Percent(uint64_t part, uint64_t total) {
  return 100.0 * static_cast<double>(part) / static_cast<double>(total);
}

// Shares may differ by the few addresses where tprof's symbolizer and addr2line disagree.
constexpr double kTolerancePoints = 1.0;

class InlineRows : public ::testing::Test {
 protected:
  struct Workload {
    std::string binary, data;
    Reference ref;
  };
  static void SetUpTestSuite() {
    // perf names a binary by its canonical path; the frames of ours are matched by it.
    const std::string made = ::testing::TempDir() + "/tprof_inline_" + std::to_string(::getpid());
    Shell("mkdir -p " + made + "/old " + made + "/new");
    char canonical[PATH_MAX];
    dir_ = new std::string(::realpath(made.c_str(), canonical) ? canonical : made);
    const std::string flags = " -O2 -g -fno-omit-frame-pointer ";
    const std::string c_source = kWorkloads + "/inline_rows.c";
    const std::string cpp_source = kWorkloads + "/inline_rows.cpp";
    // old/inline_c and new/inline_c: one name, so that the diff matches their functions; the
    // new build's hot_helper does three times the work.
    workloads_ = new std::map<std::string, Workload>;
    auto build = [&](const std::string& key, const std::string& compile, const std::string& binary,
                     const std::string& argument) {
      Workload w;
      w.binary = *dir_ + "/" + binary;
      w.data = *dir_ + "/" + key + ".data";
      auto c = Shell(compile + " -o " + w.binary);
      if (c.exit_code != 0) {
        std::fprintf(stderr, "compile failed: %s\n", c.err.c_str());
        return;
      }
      auto p = RunCommand({"/usr/bin/perf", "record", "-q", "-e", "cpu-clock:u", "-c", "100000",
                           "-g", "-o", w.data, "--", w.binary, argument});
      if (p.exit_code != 0) {
        std::fprintf(stderr, "perf record failed: %s\n", p.err.c_str());
        return;
      }
      w.ref = BuildReference(w.data, w.binary, *dir_ + "/" + key + ".addresses");
      (*workloads_)[key] = std::move(w);
    };
    build("c", "gcc" + flags + c_source, "old/inline_c", "30000000");
    build("c_slow", "gcc" + flags + "-DHELPER_WORK=3 " + c_source, "new/inline_c", "30000000");
    build("cpp", "g++" + flags + cpp_source, "inline_cpp", "100000");
  }
  static void TearDownTestSuite() {
    Shell("rm -rf " + *dir_);
    delete dir_;
    delete workloads_;
  }
  static const Workload* Get(const std::string& key) {
    auto it = workloads_->find(key);
    return it == workloads_->end() ? nullptr : &it->second;
  }
  static std::string* dir_;
  static std::map<std::string, Workload>* workloads_;
};
std::string* InlineRows::dir_;
std::map<std::string, InlineRows::Workload>* InlineRows::workloads_;

// The functions the workloads' hot loops are in, as addr2line names them.
const std::vector<std::string> kCHelpers = {"hot_helper", "innermost", "middle", "shared_helper"};

TEST_F(InlineRows, ReferenceSeesTheHelpersAsInlined) {
  // The premise: addr2line puts most samples in inlined helpers, none of them a symbol.
  const Workload* c = Get("c");
  ASSERT_NE(c, nullptr);
  for (const std::string& helper : kCHelpers) {
    EXPECT_GT(c->ref.SelfPercent(helper), 3.0) << helper;
    EXPECT_EQ(c->ref.physical.count(helper), 0u) << helper;
  }
}

TEST_F(InlineRows, TableSelfSharesAreAddr2linesInnermostFunctions) {
  for (const std::string key : {"c", "cpp"}) {
    const Workload* w = Get(key);
    ASSERT_NE(w, nullptr) << key;
    auto rows = TableBySym(w->data);
    uint64_t total = 0;
    for (const auto& [name, row] : rows) total += row.self;
    ASSERT_EQ(total, w->ref.total) << key;
    size_t compared = 0;
    for (const auto& [function, period] : w->ref.self) {
      if (function == "[other]" || Percent(period, w->ref.total) < 2.0) continue;
      ++compared;
      ASSERT_EQ(rows.count(function), 1u) << key << ": no row for " << function;
      EXPECT_NEAR(Percent(rows[function].self, total), w->ref.SelfPercent(function),
                  kTolerancePoints)
          << key << ": " << function;
    }
    EXPECT_GE(compared, key == std::string("c") ? 4u : 2u) << key;
  }
}

TEST_F(InlineRows, TheTemplateInstantiationsAreRowsOfTheirOwn) {
  const Workload* w = Get("cpp");
  ASSERT_NE(w, nullptr);
  auto rows = TableBySym(w->data);
  size_t instantiations = 0;
  for (const auto& [function, period] : w->ref.self)
    if (function.find("accumulate_rounds<") != std::string::npos &&
        Percent(period, w->ref.total) > 5.0) {
      ++instantiations;
      EXPECT_GT(rows[function].self, 0u) << function;
    }
  EXPECT_EQ(instantiations, 2u);
}

TEST_F(InlineRows, NoInlineRowsAreTheOutOfLineFunctionsAndTheHeaderSaysWhich) {
  const Workload* w = Get("c");
  ASSERT_NE(w, nullptr);
  auto rows = TableBySym(w->data, {"--no-inline"});
  for (const std::string& helper : kCHelpers) EXPECT_EQ(rows.count(helper), 0u) << helper;
  for (const char* function : {"outer", "two_levels", "caller_a", "caller_b"})
    EXPECT_NEAR(Percent(rows[function].self, w->ref.total),
                w->ref.Percent(w->ref.physical, function), kTolerancePoints)
        << function;
  // The compact header says it in its rows line, the full one (-v) in a line of its own.
  auto text = RunCommand({kTprof, "report", "-i", w->data});
  EXPECT_NE(text.out.find("inlined functions their own rows"), std::string::npos) << text.out;
  auto physical = RunCommand({kTprof, "report", "-i", w->data, "--no-inline"});
  EXPECT_NE(physical.out.find(", out-of-line functions\n"), std::string::npos) << physical.out;
  auto full = RunCommand({kTprof, "report", "-i", w->data, "--no-inline", "-v"});
  EXPECT_NE(full.out.find("# functions: out-of-line function"), std::string::npos) << full.out;
  auto json = RunCommand({kTprof, "report", "-i", w->data, "--json", "--no-inline"});
  EXPECT_EQ(nlohmann::json::parse(json.out)["functions"], "physical");
}

TEST_F(InlineRows, ChildrenTotalsCountEveryInlinedLevelOncePerSample) {
  const Workload* w = Get("c");
  ASSERT_NE(w, nullptr);
  auto rows = TableBySym(w->data, {"--children"});
  for (const char* function : {"hot_helper", "outer", "innermost", "middle", "two_levels",
                               "shared_helper", "caller_a", "caller_b"}) {
    ASSERT_EQ(rows.count(function), 1u) << function;
    EXPECT_NEAR(Percent(rows[function].total, w->ref.total),
                w->ref.Percent(w->ref.children, function), kTolerancePoints)
        << function;
  }
  // middle holds innermost: its Total% includes innermost's, beyond its own Self%.
  EXPECT_GT(rows["middle"].total, rows["middle"].self + rows["innermost"].self / 2);
}

// --callers/--callees FUNC as JSON: neighbour function -> period, of the first event.
std::map<std::string, uint64_t> Neighbours(const std::string& input, const std::string& option,
                                           const std::string& function, uint64_t* through) {
  auto r = RunCommand({kTprof, "report", "-i", input, option, function, "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, uint64_t> out;
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  if (j.is_discarded()) return out;
  const auto& event = j["events"][0];
  *through = event["through_period"].get<uint64_t>();
  for (const auto& n : event[option == "--callers" ? "callers" : "callees"])
    out[n["function"].get<std::string>()] += n["period"].get<uint64_t>();
  return out;
}

TEST_F(InlineRows, CallersAndCalleesOfInlinedFunctionsAreTheFunctionsAroundThem) {
  const Workload* w = Get("c");
  ASSERT_NE(w, nullptr);
  // One helper inlined into two callers; two levels: innermost <- middle <- two_levels.
  for (const auto& [option, function] :
       std::vector<std::pair<std::string, std::string>>{{"--callers", "shared_helper"},
                                                        {"--callers", "innermost"},
                                                        {"--callers", "middle"},
                                                        {"--callees", "middle"},
                                                        {"--callees", "two_levels"},
                                                        {"--callees", "outer"}}) {
    uint64_t through = 0;
    auto got = Neighbours(w->data, option, function, &through);
    const auto& expected = (option == "--callers" ? w->ref.callers : w->ref.callees).at(function);
    EXPECT_NEAR(Percent(through, w->ref.total), w->ref.Percent(w->ref.children, function),
                kTolerancePoints)
        << option << ' ' << function;
    for (const auto& [neighbour, period] : expected) {
      if (Percent(period, w->ref.total) < 1.0) continue;
      EXPECT_NEAR(Percent(got[neighbour], w->ref.total), Percent(period, w->ref.total),
                  kTolerancePoints)
          << option << ' ' << function << ": " << neighbour;
    }
  }
  uint64_t through = 0;
  auto callers = Neighbours(w->data, "--callers", "shared_helper", &through);
  EXPECT_GT(callers["caller_a"], 0u);
  EXPECT_GT(callers["caller_b"], callers["caller_a"]);  // twice the work
}

TEST_F(InlineRows, CsvRowsNameInlinedFunctions) {
  const Workload* w = Get("c");
  ASSERT_NE(w, nullptr);
  auto r = RunCommand({kTprof, "report", "-i", w->data, "--sort", "sym", "--csv"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines = SplitLines(r.out);
  ASSERT_GT(lines.size(), 1u);
  std::vector<std::string> header;
  std::stringstream h(lines[0]);
  for (std::string f; std::getline(h, f, ',');) header.push_back(f);
  size_t period_column =
      std::find(header.begin(), header.end(), "cpu-clock:u:self_period") - header.begin();
  if (period_column == header.size())
    period_column =
        std::find(header.begin(), header.end(), "cpu-clock:self_period") - header.begin();
  ASSERT_LT(period_column, header.size()) << lines[0];
  std::map<std::string, uint64_t> self;
  for (size_t i = 1; i < lines.size(); ++i) {
    std::vector<std::string> fields;
    std::stringstream s(lines[i]);
    for (std::string f; std::getline(s, f, ',');) fields.push_back(f);
    if (fields.size() > period_column) self[fields[0]] = std::stoull(fields[period_column]);
  }
  for (const std::string& helper : kCHelpers)
    EXPECT_NEAR(Percent(self[helper], w->ref.total), w->ref.SelfPercent(helper), kTolerancePoints)
        << helper;
}

TEST_F(InlineRows, AnnotateShowsAnInlinedFunctionWithinEachFunctionItWasInlinedInto) {
  const Workload* w = Get("c");
  ASSERT_NE(w, nullptr);
  auto r = RunCommand({kTprof, "report", "-i", w->data, "--annotate", "shared_helper"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // One section per function shared_helper was inlined into, with its self share there.
  std::map<std::string, double> share_within;
  std::regex inlined_into(R"(^# inlined into: (\S+) )");
  std::regex self(R"(^# event \S+: self ([0-9.]+)% )");
  std::string within;
  for (const std::string& line : SplitLines(r.out)) {
    std::smatch m;
    if (std::regex_search(line, m, inlined_into)) within = m[1];
    if (std::regex_search(line, m, self)) share_within[within] = std::stod(m[1]);
  }
  const auto& expected = w->ref.self_within.at("shared_helper");
  ASSERT_EQ(share_within.size(), expected.size()) << r.out.substr(0, 3000);
  for (const auto& [caller, period] : expected)
    EXPECT_NEAR(share_within[caller], Percent(period, w->ref.total), kTolerancePoints) << caller;
  // The listing interleaves the helper's own source lines (where addr2line puts its pcs).
  for (const std::string& line : w->ref.self_lines.at("shared_helper")) {
    std::string tail = line.substr(line.rfind('/') + 1);
    EXPECT_NE(r.out.find(tail), std::string::npos) << tail;
  }
}

TEST_F(InlineRows, SpeedscopeLeafFramesAreTheInnermostFunctions) {
  const Workload* w = Get("c");
  ASSERT_NE(w, nullptr);
  const std::string out = *dir_ + "/c.speedscope.json";
  auto r = RunCommand({kTprof, "report", "-i", w->data, "--speedscope", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(testing::ReadWholeFile(out));
  const auto& frames = j["shared"]["frames"];
  const auto& profile = j["profiles"][0];
  std::map<std::string, uint64_t> self;
  uint64_t total = 0;
  for (size_t s = 0; s < profile["samples"].size(); ++s) {
    const auto& stack = profile["samples"][s];
    const uint64_t weight = profile["weights"][s].get<uint64_t>();
    total += weight;
    if (!stack.empty()) self[frames[stack.back().get<size_t>()]["name"]] += weight;
  }
  ASSERT_EQ(total, w->ref.total);
  for (const std::string& helper : kCHelpers)
    EXPECT_NEAR(Percent(self[helper], total), w->ref.SelfPercent(helper), kTolerancePoints)
        << helper;
}

TEST_F(InlineRows, PprofLocationsLeadWithTheInnermostFunction) {
  const Workload* w = Get("c");
  ASSERT_NE(w, nullptr);
  const std::string out = *dir_ + "/c.pb.gz";
  auto r = RunCommand({kTprof, "report", "-i", w->data, "--pprof", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto decoded = Shell("gzip -dc " + out + " | protoc --decode perftools.profiles.Profile -I " +
                       kProtoDir + " " + kProtoDir + "/profile.proto");
  ASSERT_EQ(decoded.exit_code, 0) << decoded.err;
  // protoc's text format: top-level messages open with "NAME {" at column 0.
  std::vector<std::string> strings;
  std::map<uint64_t, uint64_t> function_name;         // function id -> string index
  std::map<uint64_t, uint64_t> location_function;     // location id -> first line's function
  std::vector<std::pair<uint64_t, uint64_t>> leaves;  // (leaf location, value)
  std::string top;
  uint64_t id = 0;
  bool first_location = true, first_line = true;
  std::regex field(R"(^\s*(\w+): (.*)$)");
  for (const std::string& line : SplitLines(decoded.out)) {
    if (!line.empty() && line[0] != ' ' && line.back() == '{') {
      top = line.substr(0, line.find(' '));
      first_location = first_line = true;
      continue;
    }
    std::smatch m;
    if (!std::regex_match(line, m, field)) continue;
    const std::string key = m[1], value = m[2];
    if (top.empty() || line[0] != ' ') {
      if (key == "string_table") strings.push_back(value.substr(1, value.size() - 2));
      continue;
    }
    if (top == "sample" && key == "location_id" && first_location) {
      leaves.emplace_back(std::stoull(value), 0);
      first_location = false;
    }
    if (top == "sample" && key == "value" && !leaves.empty() && leaves.back().second == 0)
      leaves.back().second = std::stoull(value);
    if ((top == "function" || top == "location") && key == "id") id = std::stoull(value);
    if (top == "function" && key == "name") function_name[id] = std::stoull(value);
    if (top == "location" && key == "function_id" && first_line) {
      location_function[id] = std::stoull(value);
      first_line = false;
    }
  }
  std::map<std::string, uint64_t> self;
  uint64_t total = 0;
  for (const auto& [location, value] : leaves) {
    total += value;
    self[strings.at(function_name.at(location_function.at(location)))] += value;
  }
  ASSERT_EQ(total, w->ref.total);
  for (const std::string& helper : kCHelpers)
    EXPECT_NEAR(Percent(self[helper], total), w->ref.SelfPercent(helper), kTolerancePoints)
        << helper;
}

TEST_F(InlineRows, DiffAndGateNameTheInlinedHelperThatGotSlower) {
  const Workload* old_run = Get("c");
  const Workload* new_run = Get("c_slow");
  ASSERT_NE(old_run, nullptr);
  ASSERT_NE(new_run, nullptr);
  auto r = RunCommand({kTprof, "diff", old_run->data, new_run->data, "--json", "--fail-if",
                       "func(hot_helper) > +50%"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["functions"], "innermost");
  std::map<std::string, std::pair<double, double>> functions;  // old, new
  for (const auto& f : j["events"][0]["functions"])
    functions[f["function"].get<std::string>()] = {f["old"].get<double>(), f["new"].get<double>()};
  for (const std::string& helper : kCHelpers) {
    ASSERT_EQ(functions.count(helper), 1u) << helper;
    EXPECT_NEAR(Percent(static_cast<uint64_t>(functions[helper].first), old_run->ref.total),
                old_run->ref.SelfPercent(helper), kTolerancePoints)
        << helper;
    EXPECT_NEAR(Percent(static_cast<uint64_t>(functions[helper].second), new_run->ref.total),
                new_run->ref.SelfPercent(helper), kTolerancePoints)
        << helper;
  }
  // The helper three times slower is the largest change, the other helpers did not move much.
  EXPECT_EQ(j["events"][0]["functions"][0]["function"], "hot_helper");
  auto unchanged = RunCommand(
      {kTprof, "diff", old_run->data, new_run->data, "--fail-if", "func(shared_helper) > +50%"});
  EXPECT_EQ(unchanged.exit_code, 0) << unchanged.out << unchanged.err;
  EXPECT_NE(unchanged.out.find("# functions: innermost"), std::string::npos) << unchanged.out;
  // With --no-inline the change belongs to outer, and hot_helper is no function at all.
  auto physical = RunCommand({kTprof, "diff", old_run->data, new_run->data, "--json", "--no-inline",
                              "--fail-if", "func(outer) > +50%"});
  EXPECT_EQ(physical.exit_code, 3) << physical.err;
  EXPECT_EQ(physical.out.find("\"hot_helper\""), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(physical.out)["functions"], "physical");
}

}  // namespace
}  // namespace tprof
