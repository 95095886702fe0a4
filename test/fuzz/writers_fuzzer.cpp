// libFuzzer target for the writers: random bytes as a thread name, an event name, a symbol and a
// module path reach every output of `tprof report` (the table as text, JSON and CSV; folded
// stacks; the flame graph page; pprof; speedscope) through a perf script text that holds them,
// read as report reads it. Every text output must be well-formed UTF-8 (non-UTF-8 bytes shown
// in their visible form, core/base/visible_text.h), and every JSON output must parse back
// (nlohmann, strict); anything else traps, which libFuzzer reports as a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "core/analysis/call_tree.h"
#include "core/analysis/derived_metrics.h"
#include "core/analysis/report_table.h"
#include "core/analysis/stack_profile.h"
#include "core/base/visible_text.h"
#include "core/source/profile_source.h"
#include "report/csv_report.h"
#include "report/flamegraph_html.h"
#include "report/folded_stacks.h"
#include "report/json_report.h"
#include "report/pprof_exporter.h"
#include "report/report_table_view.h"
#include "report/speedscope_exporter.h"
#include "report/text_report.h"

namespace {

using tprof::IsWellFormedUtf8;

void Require(bool condition) {
  if (!condition) __builtin_trap();
}

void RequireJson(const std::string& text) {
  Require(IsWellFormedUtf8(text));
  try {
    (void)nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    __builtin_trap();
  }
}

// The page's data object, which the page's script parses.
void RequirePageData(const std::string& page) {
  Require(IsWellFormedUtf8(page));
  const std::string marker = "const DATA = ";
  size_t begin = page.find(marker);
  Require(begin != std::string::npos);
  begin += marker.size();
  RequireJson(page.substr(begin, page.find(";\n", begin) - begin));
}

// The fuzz input split at NUL bytes into the four names; a line break would end the sample's
// line, so none is kept (the parser's own fuzzer covers broken lines).
std::vector<std::string> Names(std::string_view data) {
  std::vector<std::string> names(4);
  size_t k = 0;
  for (char c : data) {
    if (c == '\0') {
      if (++k == names.size()) break;
      continue;
    }
    if (c != '\n' && c != '\r') names[k].push_back(c);
  }
  if (names[0].empty()) names[0] = "prog";
  if (names[1].empty()) names[1] = "cpu-clock";
  if (names[2].empty()) names[2] = "work";
  if (names[3].empty()) names[3] = "/bin/prog";
  return names;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<std::string> n =
      Names(std::string_view(reinterpret_cast<const char*>(data), size));
  const std::string& comm = n[0];
  const std::string& event = n[1];
  const std::string& symbol = n[2];
  const std::string& module = n[3];
  std::string text;
  for (int i = 0; i < 2; ++i) {
    text += comm + "  4242/" + std::to_string(4242 + i) + " [000]  100." +
            std::to_string(100000 + i) + ":     250000 " + event + ": \n";
    text += "\t    401136 " + symbol + "+0x16 (" + module + ")\n";
    text += "\t    401200 main+0x20 (" + module + ")\n\n";
  }
  auto source = tprof::ProfileSource::OpenBytes(text);
  if (!source.ok()) return 0;
  tprof::FrameResolver* resolver = (*source)->embedded_frames();
  if (!resolver) return 0;
  const std::vector<tprof::EventDesc>& events = (*source)->events();
  if (events.empty()) return 0;

  // The table: text, JSON, CSV.
  auto sort = tprof::ParseSortKeys("comm,dso,sym");
  Require(sort.ok());
  auto builder =
      tprof::ReportTableBuilder::Create(events, *resolver, *sort, tprof::SampleFilter{}, 0);
  if (!builder.ok()) return 0;
  if (!(*source)->ReadRecords(**builder).ok()) return 0;
  tprof::ReportTable table = (*builder)->Finish();
  auto metrics = tprof::DerivedMetrics::Plan(table, {}, "");
  if (!metrics.ok()) return 0;
  tprof::ReportTableView view;
  view.metadata = &(*source)->metadata();
  view.table = &table;
  view.metrics = &metrics.value();
  view.input = module;  // a file name of any bytes, as given on the command line
  for (int format = 0; format < 3; ++format) {
    std::ostringstream sink;
    {
      tprof::VisibleTextStream out(sink);
      if (format == 0) tprof::RenderReportTable(view, out);
      if (format == 1) tprof::RenderReportJson(view, out);
      if (format == 2) tprof::RenderReportCsv(view, out);
    }
    if (format == 1)
      RequireJson(sink.str());
    else
      Require(IsWellFormedUtf8(sink.str()));
  }

  // Folded stacks and the flame graph page.
  tprof::CallTreeBuilder tree(events, *resolver, tprof::CallTreeOptions{});
  if (!(*source)->ReadRecords(tree).ok()) return 0;
  const tprof::CallNode& root = tree.root();
  {
    std::ostringstream sink;
    {
      tprof::VisibleTextStream out(sink);
      tprof::WriteFolded(root, tprof::FoldedOptions{}, out);
    }
    Require(IsWellFormedUtf8(sink.str()));
  }
  {
    tprof::FlameGraphInput input;
    input.root = &root;
    input.event_name = events[0].name;
    input.subtitle = module + " | " + comm;
    std::ostringstream page;
    tprof::RenderFlameGraphHtml(input, page);
    RequirePageData(page.str());
  }

  // pprof and speedscope.
  tprof::StackProfileBuilder stacks(events, *resolver);
  if (!(*source)->ReadRecords(stacks).ok()) return 0;
  const tprof::StackProfile profile = stacks.Finish();
  auto pprof = tprof::ExportPprof((*source)->metadata(), profile);
  (void)pprof;
  RequireJson(tprof::ExportSpeedscope((*source)->metadata(), profile));
  return 0;
}
