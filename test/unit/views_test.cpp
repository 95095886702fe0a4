// The views' pipelines called directly, as cmd/ calls them, on public perf.data files recorded
// elsewhere (quipper's test recordings, ../shared/testdata/perf): what each writes adds up to what
// a plain visitor reads from the same file, what it says goes to the caller's ViewMessages and
// nothing to stderr, and an input cut short ends as incomplete, never as a whole answer.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "pmu/event_spec.h"
#include "views/diff_flamegraph.h"
#include "views/flame_graph.h"
#include "views/function_diff.h"
#include "views/opened_profile.h"
#include "views/profile_import.h"
#include "views/recording_session.h"
#include "views/report_exports.h"
#include "views/report_table.h"
#include "views/report_timeline.h"
#include "views/stream_diff.h"
#include "views/topdown.h"

namespace tprof {
namespace views_test {
namespace {

const std::string kData = std::string(TPROF_TESTDATA_DIR) + "/perf/";
// perf 3.8's callchains of a busy program (cycles, 1 event).
const std::string kCallgraph = kData + "quipper-perf.data.callgraph-3.8";
// perf 4.14's branch stacks.
const std::string kBranches = kData + "quipper-perf.data.branch-4.14";
// perf 3.8's callchains and branch stacks of another program.
const std::string kOtherBranches = kData + "quipper-perf.data.callgraph_and_branch-3.8";

// What a view told its caller.
struct Told {
  std::vector<std::string> notes, warnings, wrote, summaries, notices, symbol_notes;
  ViewMessages Messages() {
    ViewMessages m;
    m.note = [this](const std::string& s) { notes.push_back(s); };
    m.input_warning = [this](const std::string& input, const std::string& warning) {
      warnings.push_back(input + ": " + warning);
    };
    m.wrote = [this](const std::string& s) { wrote.push_back(s); };
    m.summary = [this](const std::string& s) { summaries.push_back(s); };
    m.notice = [this](const std::string& s) { notices.push_back(s); };
    m.symbol_note = [this](const std::string& s) { symbol_notes.push_back(s); };
    return m;
  }
};

// Each event's samples and periods as the source hands them over, with no builder between.
struct Totals : RecordVisitor {
  void OnSample(const Sample& s) override {
    samples[s.event] += 1;
    periods[s.event] += s.period;
  }
  std::map<uint32_t, uint64_t> samples, periods;
};

std::unique_ptr<OpenedProfile> Open(const std::string& path, Told* told) {
  ProfileOpenOptions options;
  options.on_note = told->Messages().note;
  options.messages = told->Messages();
  auto opened = OpenedProfile::Open(path, options);
  EXPECT_TRUE(opened.ok()) << (opened.ok() ? "" : opened.error().message());
  return opened.ok() ? std::move(opened).value() : nullptr;
}

Totals TotalsOf(const std::string& path) {
  Told told;
  auto opened = Open(path, &told);
  Totals totals;
  if (opened) {
    EXPECT_TRUE(opened->source().ReadRecords(totals).ok());
  }
  return totals;
}

// A copy of `path` cut to `fraction` of its bytes, in a scratch directory.
std::string CutCopy(const std::string& path, double fraction) {
  const std::string dir = ::testing::TempDir() + "views_test_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string out = dir + "/" + std::filesystem::path(path).filename().string() + ".cut";
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  bytes.resize(static_cast<size_t>(static_cast<double>(bytes.size()) * fraction));
  std::ofstream(out, std::ios::binary) << bytes;
  return out;
}

uint64_t FoldedSum(const std::string& folded) {
  uint64_t sum = 0;
  std::istringstream lines(folded);
  std::string line;
  while (std::getline(lines, line)) sum += std::stoull(line.substr(line.rfind(' ') + 1));
  return sum;
}

TEST(ReportExportsView, FoldedCountsAreTheEventsPeriodsAndWhatItSaysGoesToTheCaller) {
  const Totals totals = TotalsOf(kCallgraph);
  ASSERT_GT(totals.periods.at(0), 0u);
  Told told;
  auto opened = Open(kCallgraph, &told);
  ASSERT_TRUE(opened);
  ReportExportRequest request;
  request.folded = true;
  std::ostringstream out;
  ModuleOpener open_module = [&](const std::string& m, const std::string& b) {
    return opened->OpenModule(m, b);
  };
  testing::internal::CaptureStderr();
  auto outcome = WriteReportExports(request, kCallgraph, opened->source(), opened->resolver(),
                                    open_module, out, told.Messages());
  const std::string stderr_text = testing::internal::GetCapturedStderr();
  if (!outcome.ok() && outcome.error().message().find("cannot open event") != std::string::npos)
    GTEST_SKIP() << "this machine records no software event: " << outcome.error().message();
  ASSERT_TRUE(outcome.ok()) << outcome.error().message();
  EXPECT_TRUE(outcome->complete);
  EXPECT_TRUE(told.warnings.empty());
  EXPECT_EQ(stderr_text, "");
  EXPECT_EQ(FoldedSum(out.str()), totals.periods.at(0));
  // A named event the profile lacks is the request's fault, named with the input.
  request.event = "no-such-event";
  std::ostringstream none;
  auto refused = WriteReportExports(request, kCallgraph, opened->source(), opened->resolver(),
                                    open_module, none, told.Messages());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind(), ErrorKind::kBadRequest);
  EXPECT_NE(refused.error().message().find(kCallgraph), std::string::npos);
  EXPECT_EQ(none.str(), "");
}

TEST(ReportExportsView, AnInputCutShortIsIncompleteAndSaysWhatWasLost) {
  const std::string cut = CutCopy(kCallgraph, 0.6);
  const Totals whole = TotalsOf(kCallgraph);
  Told told;
  auto opened = Open(cut, &told);
  ASSERT_TRUE(opened);
  ReportExportRequest request;
  request.folded = true;
  std::ostringstream out;
  auto outcome = WriteReportExports(request, cut, opened->source(), opened->resolver(), {}, out,
                                    told.Messages());
  ASSERT_TRUE(outcome.ok()) << outcome.error().message();
  EXPECT_FALSE(outcome->complete);
  ASSERT_EQ(told.warnings.size(), 1u);
  EXPECT_EQ(told.warnings[0].rfind(cut, 0), 0u) << told.warnings[0];
  const uint64_t kept = FoldedSum(out.str());
  EXPECT_GT(kept, 0u);
  EXPECT_LT(kept, whole.periods.at(0));
}

TEST(ReportTableView, JsonCountsEverySampleReadAndAnEmptyRangeWritesNothing) {
  const Totals totals = TotalsOf(kCallgraph);
  Told told;
  auto opened = Open(kCallgraph, &told);
  ASSERT_TRUE(opened);
  ReportTableRequest request;
  request.input = kCallgraph;
  request.sort = {SortKey::kSymbol};
  request.format = TableFormat::kJson;
  std::ostringstream out;
  auto outcome = WriteReportTable(request, *opened, out, told.Messages());
  ASSERT_TRUE(outcome.ok()) << outcome.error().message();
  EXPECT_TRUE(outcome->complete);
  EXPECT_FALSE(outcome->time_range_empty);
  const nlohmann::json j = nlohmann::json::parse(out.str());
  ASSERT_EQ(j["events"].size(), totals.samples.size());
  uint64_t self_samples = 0;
  for (const auto& row : j["rows"])
    for (const auto& e : row["events"])
      if (e["event"] == 0) self_samples += e["self_samples"].get<uint64_t>();
  EXPECT_EQ(self_samples, totals.samples.at(0));

  // A range after the profile's end: said, not shown as an empty table.
  request.filter.time_start = 1e6;
  request.filter.time_end = 2e6;
  std::ostringstream empty;
  auto ranged = WriteReportTable(request, *opened, empty, told.Messages());
  ASSERT_TRUE(ranged.ok()) << ranged.error().message();
  EXPECT_TRUE(ranged->time_range_empty);
  EXPECT_EQ(empty.str(), "");
}

TEST(ReportTimelineView, AFilterThatKeepsNothingSaysSoAndWritesNothing) {
  Told told;
  auto opened = Open(kCallgraph, &told);
  ASSERT_TRUE(opened);
  ReportTimelineRequest request;
  request.input = kCallgraph;
  request.filter.comms = {"no-such-command"};
  std::ostringstream out;
  auto outcome = WriteReportTimeline(request, *opened, out, told.Messages());
  ASSERT_TRUE(outcome.ok()) << outcome.error().message();
  EXPECT_TRUE(outcome->nothing_kept);
  EXPECT_EQ(out.str(), "");
  // Without the filter, the intervals hold every sample and period of the file between them.
  const Totals totals = TotalsOf(kCallgraph);
  request.filter = {};
  request.format = TableFormat::kJson;
  std::ostringstream all;
  auto kept = WriteReportTimeline(request, *opened, all, told.Messages());
  ASSERT_TRUE(kept.ok()) << kept.error().message();
  EXPECT_FALSE(kept->nothing_kept);
  const nlohmann::json j = nlohmann::json::parse(all.str());
  ASSERT_GT(j["intervals"].size(), 1u);
  uint64_t samples = 0, period = 0;
  for (const auto& interval : j["intervals"]) {
    samples += interval["samples"][0].get<uint64_t>();
    period += interval["period"][0].get<uint64_t>();
  }
  EXPECT_EQ(samples, totals.samples.at(0));
  EXPECT_EQ(period, totals.periods.at(0));
}

TEST(FlameGraphView, WritesThePageAndTellsTheCallerWhere) {
  Told told;
  auto opened = Open(kCallgraph, &told);
  ASSERT_TRUE(opened);
  FlameGraphRequest request;
  request.input = kCallgraph;
  request.out_path = ::testing::TempDir() + "views_flame_" + std::to_string(::getpid()) + ".html";
  testing::internal::CaptureStderr();
  auto outcome =
      WriteFlameGraph(request, opened->source(), opened->resolver(), nullptr, told.Messages());
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  ASSERT_TRUE(outcome.ok()) << outcome.error().message();
  EXPECT_TRUE(outcome->complete);
  ASSERT_EQ(told.wrote.size(), 1u);
  EXPECT_NE(told.wrote[0].find("written to " + request.out_path), std::string::npos);
  // The page names the input and holds the profile's frames: the leaf of its heaviest stack,
  // as the folded export names it.
  ReportExportRequest folded;
  folded.folded = true;
  folded.no_marks = true;  // the page names frames without the _[k] and _[i] marks
  std::ostringstream stacks;
  ASSERT_TRUE(WriteReportExports(folded, kCallgraph, opened->source(), opened->resolver(), {},
                                 stacks, told.Messages())
                  .ok());
  std::string heaviest;
  uint64_t most = 0;
  std::istringstream lines(stacks.str());
  for (std::string line; std::getline(lines, line);) {
    const size_t space = line.rfind(' ');
    const uint64_t count = std::stoull(line.substr(space + 1));
    if (count > most) {
      most = count;
      heaviest = line.substr(line.rfind(';', space) + 1, space - line.rfind(';', space) - 1);
    }
  }
  ASSERT_FALSE(heaviest.empty());
  std::ifstream in(request.out_path);
  const std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(page.find(kCallgraph), std::string::npos);
  EXPECT_NE(page.find(heaviest), std::string::npos) << heaviest;
  // Colouring by IPC needs cycles and instructions: this profile has only cycles, which the
  // refusal says (the request's fault, not the work's).
  request.color = "ipc";
  auto refused =
      WriteFlameGraph(request, opened->source(), opened->resolver(), nullptr, told.Messages());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind(), ErrorKind::kBadRequest);
  EXPECT_NE(refused.error().message().find("no instructions samples"), std::string::npos)
      << refused.error().message();
  std::filesystem::remove(request.out_path);
}

// Before the views layer the differential flame graph exited 0 over a side cut short; whole
// sides are complete.
TEST(DiffFlameGraphView, ASideCutShortMakesTheGraphIncomplete) {
  {
    Told told;
    DiffFlameGraphOptions options;
    options.old_paths = options.new_paths = {kCallgraph};
    options.out_path = ::testing::TempDir() + "views_whole_" + std::to_string(::getpid()) + ".html";
    auto whole = WriteDiffFlameGraph(options, told.Messages());
    ASSERT_TRUE(whole.ok()) << whole.error().message();
    EXPECT_TRUE(whole->complete);
    EXPECT_TRUE(told.warnings.empty());
    std::filesystem::remove(options.out_path);
  }
  const std::string cut = CutCopy(kCallgraph, 0.6);
  for (const bool cut_new : {false, true}) {
    Told told;
    DiffFlameGraphOptions options;
    options.old_paths = {cut_new ? kCallgraph : cut};
    options.new_paths = {cut_new ? cut : kCallgraph};
    options.out_path = ::testing::TempDir() + "views_diff_" + std::to_string(::getpid()) + ".html";
    auto outcome = WriteDiffFlameGraph(options, told.Messages());
    ASSERT_TRUE(outcome.ok()) << outcome.error().message();
    EXPECT_FALSE(outcome->complete) << (cut_new ? "new" : "old") << " side cut";
    ASSERT_EQ(told.warnings.size(), 1u);
    EXPECT_EQ(told.warnings[0].rfind(cut, 0), 0u) << told.warnings[0];
    EXPECT_EQ(told.wrote.size(), 1u);
    std::filesystem::remove(options.out_path);
  }
}

// Kernel work as the table counts it, on every input or on none: perf 3.8's system-wide
// callchains (kernel samples of user threads above their user stacks) against themselves are
// drawn otherwise when credited than with kernel rows; beside perf 4.14's recording without a
// call graph or user registers (whose kernel samples cannot be credited) the page asked to
// credit is byte for byte the page with kernel rows: neither side was credited.
TEST(DiffFlameGraphView, KernelWorkIsCreditedOnEveryInputOrOnNone) {
  auto page = [](const std::string& new_path, bool credit) {
    Told told;
    DiffFlameGraphOptions options;
    options.old_paths = {kCallgraph};
    options.new_paths = {new_path};
    options.credit_kernel_to_user = credit;
    options.out_path =
        ::testing::TempDir() + "views_kernel_" + std::to_string(::getpid()) + ".html";
    auto outcome = WriteDiffFlameGraph(options, told.Messages());
    EXPECT_TRUE(outcome.ok()) << outcome.error().message();
    std::ifstream in(options.out_path);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::filesystem::remove(options.out_path);
    return bytes;
  };
  const std::string credited = page(kCallgraph, true);
  ASSERT_FALSE(credited.empty());
  EXPECT_NE(credited, page(kCallgraph, false)) << "crediting changed nothing";
  const std::string beside_uncreditable = page(kBranches, true);
  ASSERT_FALSE(beside_uncreditable.empty());
  EXPECT_EQ(beside_uncreditable, page(kBranches, false))
      << "one side was credited while the other could not be";
}

// A profile against itself: nothing changed, so a gate on any growth passes; against a copy cut
// short, the diff is written but says which input was incomplete, and a gate does not judge.
TEST(FunctionDiffView, ItselfChangesNothingAndACutSideWithholdsTheGate) {
  auto gate = ParseThreshold("total > 0%");
  ASSERT_TRUE(gate.ok()) << gate.error().message();
  Told told;
  FunctionDiffRequest request;
  request.old_files = request.new_files = {kCallgraph};
  request.thresholds = {*gate};
  request.json = true;
  std::ostringstream out;
  auto same = WriteFunctionDiff(request, out, told.Messages());
  ASSERT_TRUE(same.ok()) << same.error().message();
  EXPECT_TRUE(same->usage_error.empty());
  EXPECT_TRUE(same->incomplete.empty());
  EXPECT_FALSE(same->gate_withheld);
  EXPECT_TRUE(same->regressions.empty());
  const nlohmann::json j = nlohmann::json::parse(out.str());
  ASSERT_FALSE(j["events"].empty());
  for (const auto& event : j["events"]) {
    ASSERT_FALSE(event["functions"].empty());
    for (const auto& f : event["functions"]) EXPECT_EQ(f["delta"], 0) << f.dump();
  }

  const std::string cut = CutCopy(kCallgraph, 0.6);
  request.new_files = {cut};
  std::ostringstream partial;
  auto withheld = WriteFunctionDiff(request, partial, told.Messages());
  ASSERT_TRUE(withheld.ok()) << withheld.error().message();
  EXPECT_TRUE(withheld->gate_withheld);
  EXPECT_NE(withheld->incomplete.find("new profile " + cut + " is incomplete"), std::string::npos)
      << withheld->incomplete;
  EXPECT_NE(partial.str(), "");
  // A gate on an event neither side has is the command line's to mend: nothing written.
  auto unknown = ParseThreshold("total.no-such-event > 0%");
  ASSERT_TRUE(unknown.ok());
  request.new_files = {kCallgraph};
  request.thresholds = {*unknown};
  std::ostringstream none;
  auto refused = WriteFunctionDiff(request, none, told.Messages());
  ASSERT_TRUE(refused.ok()) << refused.error().message();
  EXPECT_EQ(refused->usage_error.rfind("--fail-if ", 0), 0u) << refused->usage_error;
  EXPECT_EQ(none.str(), "");
}

TEST(StreamDiffView, AProfileAgainstItselfMatchesEveryStream) {
  Told told;
  StreamDiffOptions options;
  options.old_path = options.new_path = kBranches;
  options.json = true;
  std::ostringstream out;
  auto outcome = WriteStreamDiff(options, out, told.Messages());
  ASSERT_TRUE(outcome.ok()) << outcome.error().message();
  EXPECT_TRUE(outcome->complete);
  const nlohmann::json j = nlohmann::json::parse(out.str());
  EXPECT_FALSE(j["matched"].empty()) << j.dump().substr(0, 2000);
  EXPECT_TRUE(j["old_only"].empty());
  EXPECT_TRUE(j["new_only"].empty());
  EXPECT_TRUE(j["source_changed"].empty());
  // Against another program's recording, streams of each side alone.
  options.new_path = kOtherBranches;
  std::ostringstream other;
  auto differ = WriteStreamDiff(options, other, told.Messages());
  ASSERT_TRUE(differ.ok()) << differ.error().message();
  const nlohmann::json k = nlohmann::json::parse(other.str());
  EXPECT_FALSE(k["old_only"].empty()) << k.dump().substr(0, 2000);
  EXPECT_FALSE(k["new_only"].empty());
  // --blocks on a profile without branch stacks says which.
  options.old_path = kCallgraph;
  options.blocks = true;
  std::ostringstream none;
  auto refused = WriteStreamDiff(options, none, told.Messages());
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message().find(kCallgraph + " has none"), std::string::npos)
      << refused.error().message();
}

// A recording made through the session as `tprof record` makes it: a shell loop sampled by
// task-clock, here on any machine. The summary it says counts what the profile holds (read back
// by a plain visitor), the command's exit status comes back, and nothing goes to stderr.
TEST(RecordingSessionView, ItsSummaryCountsWhatTheProfileHoldsAndTheCommandsStatusComesBack) {
  const std::string dir = ::testing::TempDir() + "views_test_rec_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  RecordRequest request;
  auto groups = ParseEventList("task-clock");
  ASSERT_TRUE(groups.ok());
  request.options.groups = std::move(groups).value();
  request.options.sampling.frequency = 2000;
  // DWARF stacks: their unwinding is said unless quiet.
  request.options.sampling.call_graph = CallGraphMode::kDwarf;
  request.command = {"/bin/sh", "-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; exit 3"};
  request.output = dir + "/rec.tprof";
  Told told;
  testing::internal::CaptureStderr();
  auto outcome = RecordProfile(request, told.Messages());
  const std::string stderr_text = testing::internal::GetCapturedStderr();
  ASSERT_TRUE(outcome.ok()) << outcome.error().message();
  EXPECT_TRUE(outcome->launched);
  ASSERT_TRUE(WIFEXITED(outcome->wait_status));
  EXPECT_EQ(WEXITSTATUS(outcome->wait_status), 3);
  EXPECT_EQ(stderr_text, "");
  const Totals totals = TotalsOf(request.output);
  ASSERT_GT(totals.samples.count(0), 0u);
  ASSERT_EQ(told.summaries.size(), 1u);
  EXPECT_EQ(
      told.summaries[0].rfind(std::to_string(totals.samples.at(0)) + " task-clock samples; ", 0),
      0u)
      << told.summaries[0];
  EXPECT_NE(told.summaries[0].find(" to " + request.output + " in "), std::string::npos)
      << told.summaries[0];
  ASSERT_FALSE(told.notices.empty()) << "the unwinding statistics were not said";
  EXPECT_EQ(told.notices[0].rfind(request.output + ": unwinding: ", 0), 0u) << told.notices[0];
  // Quiet: no summary, no note, and of the notices only warnings (stacks cut short, samples
  // lost or throttled), none here but by chance of the machine.
  request.quiet = true;
  Told quiet;
  ASSERT_TRUE(RecordProfile(request, quiet.Messages()).ok());
  EXPECT_TRUE(quiet.summaries.empty() && quiet.notes.empty());
  for (const std::string& notice : quiet.notices)
    EXPECT_TRUE(notice.find("(without -q: why)") != std::string::npos ||
                notice.starts_with("samples were lost") ||
                notice.starts_with("the kernel throttled"))
        << notice;
  std::filesystem::remove_all(dir);
}

// A command that cannot run: an error that says nothing was recorded, and no file, partial or
// whole, that would say otherwise.
TEST(RecordingSessionView, ACommandThatCannotRunRecordsNothingAndLeavesNoFile) {
  const std::string dir = ::testing::TempDir() + "views_test_norun_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  RecordRequest request;
  request.options.groups = ParseEventList("task-clock").value();
  request.command = {dir + "/no-such-program"};
  request.output = dir + "/rec.tprof";
  Told told;
  auto outcome = RecordProfile(request, told.Messages());
  ASSERT_FALSE(outcome.ok());
  EXPECT_NE(outcome.error().message().find("nothing was recorded"), std::string::npos)
      << outcome.error().message();
  EXPECT_FALSE(std::filesystem::exists(request.output));
  EXPECT_FALSE(std::filesystem::exists(request.output + ".partial"));
  std::filesystem::remove_all(dir);
}

// Saved counts evaluated as `tprof topdown --input` evaluates them: Neoverse N2 counts (r0p0-r0p2
// formula: frontend = (STALL_SLOT_FRONTEND - CPU_CYCLES) / (5 * CPU_CYCLES) = (1500 - 1000) /
// 5000 = 10 %), and the same counts against an Intel table, an error naming the tables they fit.
TEST(TopdownView, SavedCountsAreEvaluatedAndCountsOfAnotherCpuNameTheTablesTheyFit) {
  const std::string path = ::testing::TempDir() + "views_test_counts_" + std::to_string(::getpid());
  std::ofstream(path)
      << "1000,,CPU_CYCLES,5000,100.00,,\n1500,,STALL_SLOT_FRONTEND,5000,100.00,,\n";
  auto n2 = FindMetricTable("neoverse-n2", BuiltinMetricTables());
  ASSERT_TRUE(n2.ok());
  auto selected = n2.value()->Select("l1");
  ASSERT_TRUE(selected.ok());
  std::ostringstream csv;
  ASSERT_TRUE(
      WriteSavedTopdown({n2.value(), selected.value(), "l1", path, TopdownFormat::kCsv}, csv).ok());
  EXPECT_NE(csv.str().find("frontend_bound,10.00,%,100"), std::string::npos) << csv.str();

  auto skylake = FindMetricTable("skylake", BuiltinMetricTables());
  ASSERT_TRUE(skylake.ok());
  auto skylake_l1 = skylake.value()->Select("l1");
  ASSERT_TRUE(skylake_l1.ok());
  std::ostringstream nothing;
  Status refused = WriteSavedTopdown(
      {skylake.value(), skylake_l1.value(), "l1", path, TopdownFormat::kText}, nothing);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message().find("none of the skylake table's metrics"),
            std::string::npos)
      << refused.error().message();
  EXPECT_NE(refused.error().message().find("tables that fit them: "), std::string::npos);
  EXPECT_NE(refused.error().message().find("neoverse-n2"), std::string::npos);
  EXPECT_TRUE(nothing.str().empty());

  std::ostringstream missing;
  Status unread = WriteSavedTopdown(
      {n2.value(), selected.value(), "l1", path + ".none", TopdownFormat::kText}, missing);
  ASSERT_FALSE(unread.ok());
  EXPECT_EQ(unread.error().message().rfind("cannot read " + path + ".none", 0), 0u);
  std::remove(path.c_str());
}

// A perf.data file imported as `tprof import` imports it: the profile holds every sample and
// period the perf.data file does (read by a plain visitor on both sides), and the summary says
// how many; a copy cut short is refused with what it lost, and leaves no file behind.
TEST(ProfileImportView, TheProfileHoldsEverySampleAndACutInputLeavesNothing) {
  const std::string dir = ::testing::TempDir() + "views_test_import_" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  const std::string out = dir + "/imported.tprof";
  Told told;
  testing::internal::CaptureStderr();
  Status imported = ImportProfile({kCallgraph, out, "", {}}, told.Messages());
  // The symbolizer's notes on binaries this machine lacks come to the caller too (the command
  // says them as "tprof: note: no usable file for ..."); nothing reaches stderr.
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  EXPECT_FALSE(told.symbol_notes.empty());
  EXPECT_TRUE(
      std::any_of(told.symbol_notes.begin(), told.symbol_notes.end(), [](const std::string& note) {
        return note.starts_with("no usable file for /lib64/libc-2.15.so");
      }));
  ASSERT_TRUE(imported.ok()) << imported.error().message();
  const Totals perf = TotalsOf(kCallgraph), tprof = TotalsOf(out);
  ASSERT_FALSE(perf.samples.empty());
  EXPECT_EQ(tprof.samples, perf.samples);
  EXPECT_EQ(tprof.periods, perf.periods);
  ASSERT_EQ(told.summaries.size(), 1u);
  EXPECT_EQ(told.summaries[0].rfind(std::to_string(perf.samples.begin()->second) + " samples, ", 0),
            0u)
      << told.summaries[0];

  const std::string cut_out = dir + "/cut.tprof";
  Told cut_told;
  Status cut = ImportProfile({CutCopy(kCallgraph, 0.5), cut_out, "", {}}, cut_told.Messages());
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.error().message().find("incomplete"), std::string::npos) << cut.error().message();
  EXPECT_FALSE(std::filesystem::exists(cut_out));
  EXPECT_FALSE(std::filesystem::exists(cut_out + ".partial"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace views_test
}  // namespace tprof
