// tprof record --call-graph dwarf end to end, on a program built without frame pointers:
// complete stacks (leaf -> mid -> top -> main) where frame-pointer callchains break, with perf's
// own DWARF unwinding as the reference.
#include <gtest/gtest.h>
#include <unistd.h>

#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/format/profile_reader.h"
#include "core/model/address_space.h"
#include "symbolize/symbolizer.h"
#include "test/support/run_command.h"
#include "test/support/test_programs.h"

namespace tprof {
namespace {

using testing::RunCommand;
const std::string kNoFp = NOFP_BINARY;

// For samples whose leaf is `leaf`, the share whose user callchain continues mid -> top -> main.
struct ChainCheck : RecordVisitor {
  AddressSpace space;
  Symbolizer symbolizer;
  uint64_t in_leaf = 0, complete = 0;
  std::string Name(uint32_t pid, uint64_t address) {
    std::string f = symbolizer.Resolve(space.Find(pid, address), address).function;
    return f.substr(0, f.find('('));
  }
  void OnMmap(const MmapRecord& r) override { space.OnMmap(r); }
  void OnComm(const CommRecord& r) override { space.OnComm(r); }
  void OnTask(const TaskRecord& r) override { space.OnTask(r); }
  void OnSample(const Sample& s) override {
    std::vector<std::string> user;
    bool in_user = s.callchain.empty();
    for (uint64_t a : s.callchain) {
      if (a == kContextUser)
        in_user = true;
      else if (IsContextMarker(a))
        in_user = false;
      else if (in_user)
        user.push_back(Name(s.pid, user.empty() ? a : a - 1));
    }
    if (user.empty() || user[0] != "leaf") return;
    ++in_leaf;
    if (user.size() >= 4 && user[1] == "mid" && user[2] == "top" && user[3] == "main") ++complete;
  }
};

void Check(const std::string& path, ChainCheck* check) {
  auto reader = ProfileReader::OpenFile(path);
  ASSERT_TRUE(reader.ok());
  ASSERT_TRUE(reader->ReadRecords(*check).ok());
}

// The short-stack note after a -g recording names the module the frame-pointer walk stopped in,
// the one to rebuild: the program built without frame pointers, not the garbage address its
// walk ends on ("[unknown]" before). A program built with them (the demo, whose short start-up
// is mostly a frameless memset in libc that lands on libc's start routine) gets no note, on a
// run short enough that its start-up dominates.
TEST(RecordDwarfTest, ShortStackNoteNamesTheBinaryToRebuild) {
  std::string nofp = TempPath("dwarf", "nofp_g.tprof"), demo = TempPath("dwarf", "demo_g.tprof");
  // The kernel's chains alone (fp,0): -g's stack copy would walk this small program's whole
  // stack with CFI and hide what a deeper one shows.
  auto r = RunCommand({kTprof, "record", "-e", "cpu-clock", "--call-graph", "fp,0", "-o", nofp,
                       "--", kNoFp, "0.3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string name = kNoFp.substr(kNoFp.rfind('/') + 1);
  EXPECT_NE(r.err.find("stop after one or two frames, most ("), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("%) in " + name + ": "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("rebuild it with -fno-omit-frame-pointer"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("[unknown]"), std::string::npos) << r.err;
  // report says the same in its header, with the same shares: record counts each sample as it
  // reads it, report each distinct stack once, times its samples in the tally.
  auto report = RunCommand({kTprof, "report", "-i", nofp});
  EXPECT_NE(report.out.find("%) in " + name + ": "), std::string::npos) << report.out;
  auto hint_in = [](const std::string& text, const std::string& prefix) {
    const std::string marker = prefix + "note: ";
    const size_t start = text.find(marker);
    if (start == std::string::npos) return std::string("(none)");
    const size_t begin = start + marker.size();
    return text.substr(begin, text.find('\n', begin) - begin);
  };
  EXPECT_EQ(hint_in(report.out, "# "), hint_in(r.err, "tprof record: "));

  auto d = RunCommand(
      {kTprof, "record", "-e", "cpu-clock", "-g", "-o", demo, "--", DEMO_BINARY, "0.002"});
  ASSERT_EQ(d.exit_code, 0) << d.err;
  EXPECT_EQ(d.err.find("frame pointers"), std::string::npos) << d.err;
  std::remove(nofp.c_str());
  std::remove(demo.c_str());
}

TEST(RecordDwarfTest, CompleteStacksWithoutFramePointers) {
  std::string dwarf = TempPath("dwarf", "dwarf.tprof"), fp = TempPath("dwarf", "fp.tprof");
  auto r = RunCommand(
      {kTprof, "record", "-e", "cpu-clock", "--call-graph", "dwarf", "-o", dwarf, "--", kNoFp});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("unwound"), std::string::npos) << r.err;
  EXPECT_NE(::access((dwarf + ".stacks").c_str(), F_OK), 0) << "the stack copies are dropped";
  // The recording keeps how its stacks were walked: report tells the same lines record did, and
  // JSON the counts, as for a perf.data file unwound on reading.
  auto told = RunCommand({kTprof, "report", "-v", "-i", dwarf, "--limit", "1"});
  ASSERT_EQ(told.exit_code, 0) << told.err;
  const std::string recorded_line = ": unwinding: ";
  const size_t at = r.err.find(recorded_line);
  ASSERT_NE(at, std::string::npos) << r.err;
  const std::string first =
      r.err.substr(at + recorded_line.size(), r.err.find('\n', at) - at - recorded_line.size());
  EXPECT_NE(told.out.find("# unwinding: " + first + "\n"), std::string::npos)
      << first << "\n"
      << told.out.substr(0, 1500);
  auto json = RunCommand({kTprof, "report", "-i", dwarf, "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json unwinding = nlohmann::json::parse(json.out)["unwinding"];
  ASSERT_TRUE(unwinding.is_object()) << json.out.substr(0, 500);
  EXPECT_GT(unwinding["samples"].get<uint64_t>(), 500u);
  EXPECT_LE(unwinding["complete"].get<uint64_t>(), unwinding["samples"].get<uint64_t>());
  ASSERT_EQ(RunCommand({kTprof, "record", "-e", "cpu-clock", "--call-graph", "fp,0", "-o", fp, "--",
                        kNoFp})
                .exit_code,
            0);
  // -g copies 1 KiB of the stack's top; this program's whole stack fits, so its walk reaches
  // the outermost frame and stands for the chain, which it never meets.
  const std::string mended = TempPath("dwarf", "mended.tprof");
  ASSERT_EQ(
      RunCommand({kTprof, "record", "-e", "cpu-clock", "-g", "-o", mended, "--", kNoFp}).exit_code,
      0);

  ChainCheck with_dwarf, with_fp, with_mended;
  Check(dwarf, &with_dwarf);
  Check(fp, &with_fp);
  Check(mended, &with_mended);
  ASSERT_GT(with_dwarf.in_leaf, 500u);
  EXPECT_GT(static_cast<double>(with_dwarf.complete),
            0.98 * static_cast<double>(with_dwarf.in_leaf));
  EXPECT_LT(static_cast<double>(with_fp.complete), 0.1 * static_cast<double>(with_fp.in_leaf));
  EXPECT_GT(static_cast<double>(with_mended.complete),
            0.98 * static_cast<double>(with_mended.in_leaf));
  std::remove(mended.c_str());

  // perf's DWARF unwinding of the same program agrees: its leaf samples show the full chain.
  std::string perf_data = TempPath("dwarf", "perf.data");
  auto pr = RunCommand({"/usr/bin/perf", "record", "-q", "-e", "cpu-clock", "--call-graph", "dwarf",
                        "-o", perf_data, "--", kNoFp});
  ASSERT_EQ(pr.exit_code, 0) << pr.err;
  auto script = RunCommand({"/usr/bin/perf", "script", "-i", perf_data, "-F", "ip,sym"});
  std::stringstream lines(script.out);
  std::string line, previous;
  std::vector<std::string> chain;
  uint64_t perf_leaf = 0, perf_complete = 0;
  auto finish = [&] {
    if (!chain.empty() && chain[0] == "leaf") {
      ++perf_leaf;
      if (chain.size() >= 4 && chain[1] == "mid" && chain[2] == "top" && chain[3] == "main")
        ++perf_complete;
    }
    chain.clear();
  };
  while (std::getline(lines, line)) {
    std::stringstream words(line);
    std::string address, symbol;  // "  401136 leaf" per frame, a blank line between samples
    if (!(words >> address >> symbol)) {
      finish();
      continue;
    }
    chain.push_back(symbol);
  }
  finish();
  ASSERT_GT(perf_leaf, 100u);
  EXPECT_GT(static_cast<double>(perf_complete), 0.98 * static_cast<double>(perf_leaf));
  std::cout << "leaf samples with leaf->mid->top->main: tprof dwarf " << with_dwarf.complete << "/"
            << with_dwarf.in_leaf << ", tprof -g " << with_fp.complete << "/" << with_fp.in_leaf
            << ", perf dwarf " << perf_complete << "/" << perf_leaf << "\n";
  for (const std::string& p : {dwarf, fp, perf_data}) std::remove(p.c_str());
}

// Recursion unwound by CFI: a function that calls itself repeats its return address frame after
// frame, which the unwinder took for CFI going in circles (9,233 of 9,266 stacks of a recursive
// program stopped at "rec;rec;leaf"). The recursion workload's leaf samples must show the whole
// designed chain to main: 13 rec frames, ping and pong alternating 13 times, 201 deep frames
// (a 32 KiB stack copy holds them), for tprof's DWARF unwinding, for perf's DWARF recording read
// by tprof, and for the frame-pointer build (the reference that the design gives those stacks).
struct RecursionShares {
  // Of the period in leaf() under each kind of recursion, the share whose stack is the designed
  // chain from main.
  std::map<std::string, double> complete, all;
};

RecursionShares FoldedRecursion(const std::string& profile, const std::string& binary = "") {
  std::vector<std::string> argv = {kTprof, "report", "-i", profile, "--folded"};
  if (!binary.empty()) argv.insert(argv.end(), {"--binary", binary});
  auto folded = RunCommand(argv);
  EXPECT_EQ(folded.exit_code, 0) << folded.err;
  auto repeat = [](const std::string& part, int n) {
    std::string s;
    for (int i = 0; i < n; ++i) s += part;
    return s;
  };
  const std::map<std::string, std::string> designed = {
      {"rec", ";main;" + repeat("rec;", 13) + "leaf"},
      {"ping", ";main;" + repeat("ping;pong;", 6) + "ping;leaf"},
      {"deep", ";main;" + repeat("deep;", 201) + "leaf"}};
  RecursionShares shares;
  std::stringstream lines(folded.out);
  std::string line;
  while (std::getline(lines, line)) {
    size_t space = line.rfind(' ');
    if (space == std::string::npos) continue;
    std::string stack = line.substr(0, space);
    double count = std::stod(line.substr(space + 1));
    if (!stack.ends_with(";leaf")) continue;
    for (const auto& [kind, chain] : designed) {
      if (stack.find(kind + ";") == std::string::npos) continue;
      shares.all[kind] += count;
      if (stack.ends_with(chain)) shares.complete[kind] += count;
    }
  }
  return shares;
}

void ExpectCompleteRecursion(const RecursionShares& shares, const std::string& what,
                             std::vector<std::string> kinds = {"rec", "ping", "deep"}) {
  for (const std::string& kind : kinds) {
    const double all = shares.all.count(kind) ? shares.all.at(kind) : 0;
    const double complete = shares.complete.count(kind) ? shares.complete.at(kind) : 0;
    EXPECT_GT(all, 0) << what << ": no leaf samples under " << kind;
    EXPECT_GE(complete, 0.95 * all) << what << ": " << kind << " " << complete << " of " << all;
    std::cout << what << ": " << kind << " complete " << (all ? 100 * complete / all : 0) << "%\n";
  }
}

TEST(RecordDwarfTest, RecursionIsUnwoundToMain) {
  const std::string nofp = RECURSION_NOFP_BINARY, fp = RECURSION_FP_BINARY;
  std::string dwarf = TempPath("dwarf", "rec_dwarf.tprof"),
              fp_profile = TempPath("dwarf", "rec_fp.tprof"),
              perf_data = TempPath("dwarf", "rec_perf.data");
  auto r = RunCommand({kTprof, "record", "-e", "cpu-clock", "--call-graph", "dwarf,32768", "-o",
                       dwarf, "--", nofp, "0.6"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("unwinder error"), std::string::npos) << r.err;
  ExpectCompleteRecursion(FoldedRecursion(dwarf), "tprof --call-graph dwarf");

  ASSERT_EQ(
      RunCommand({kTprof, "record", "-e", "cpu-clock", "-g", "-o", fp_profile, "--", fp, "0.6"})
          .exit_code,
      0);
  // The kernel's frame-pointer walk stops at kernel.perf_event_max_stack (127) frames, short of
  // deep's 201: the reference covers rec and ping.
  ExpectCompleteRecursion(FoldedRecursion(fp_profile), "tprof -g, frame-pointer build",
                          {"rec", "ping"});

  auto pr = RunCommand({"/usr/bin/perf", "record", "-q", "-e", "cpu-clock", "--call-graph",
                        "dwarf,32768", "-o", perf_data, "--", nofp, "0.6"});
  ASSERT_EQ(pr.exit_code, 0) << pr.err;
  ExpectCompleteRecursion(FoldedRecursion(perf_data, nofp),
                          "perf's dwarf recording, read by tprof");
  for (const std::string& p : {dwarf, fp_profile, perf_data}) std::remove(p.c_str());
}

TEST(RecordDwarfTest, KeepStacksOnRequest) {
  std::string path = TempPath("dwarf", "keep.tprof");
  auto r = RunCommand({kTprof, "record", "-e", "cpu-clock", "--call-graph", "dwarf,4096",
                       "--keep-stacks", "-o", path, "--", kNoFp});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  struct Copies : RecordVisitor {
    uint64_t with = 0, total = 0;
    void OnSample(const Sample& s) override {
      ++total;
      with += !s.user_stack.empty() && s.user_stack.size() <= 4096 && !s.user_regs.empty();
    }
  } copies;
  auto reader = ProfileReader::OpenFile(path);
  ASSERT_TRUE(reader.ok());
  ASSERT_TRUE(reader->ReadRecords(copies).ok());
  EXPECT_EQ(reader->events()[0].sample_stack_user, 4096u);
  EXPECT_GT(copies.total, 100u);
  EXPECT_GT(copies.with, copies.total * 9 / 10);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace tprof
