#include "report/text_report.h"

#include <linux/perf_event.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "core/base/visible_text.h"
#include "core/model/event_unit.h"
#include "report/printf.h"

namespace tprof {
namespace {

// "# host: name, arch, cpu, kernel release" with only what the profile knows: perf script text
// and folded stacks carry none of it, and then there is no line.
// "vm, x86_64, Intel(R) Xeon(R) Processor, kernel 6.18.44"; empty when the profile says none.
std::string HostText(const Metadata& metadata) {
  std::string line;
  auto add = [&line](const std::string& part) {
    if (!part.empty()) line += (line.empty() ? "" : ", ") + part;
  };
  add(metadata.hostname);
  add(metadata.architecture);
  add(metadata.cpu.model_name.empty() ? metadata.cpu.vendor : metadata.cpu.model_name);
  if (!metadata.kernel_release.empty()) add("kernel " + metadata.kernel_release);
  return line;
}

void WriteHostLine(const Metadata& metadata, std::ostream& out) {
  if (const std::string host = HostText(metadata); !host.empty()) out << "# host: " << host << '\n';
}

}  // namespace

void RenderFunctionTable(const Metadata& metadata, const FunctionProfile& profile,
                         const TextReportOptions& options, std::ostream& out) {
  out << "# tprof report\n";
  if (!metadata.command_line.empty()) {
    out << "# command:";
    for (const std::string& arg : metadata.command_line) out << ' ' << arg;
    out << '\n';
  }
  WriteHostLine(metadata, out);
  if (metadata.duration_ns)
    out << Printf("# duration: %.3f s\n", static_cast<double>(metadata.duration_ns) / 1e9);
  if (profile.lost) out << "# lost samples: " << profile.lost << '\n';
  for (size_t e = 0; e < profile.events.size(); ++e) {
    const EventDesc& event = profile.events[e];
    if (event.group_leader >= 0 && event.group_leader != static_cast<int32_t>(e) &&
        (profile.events[static_cast<size_t>(event.group_leader)].sample_type & PERF_SAMPLE_READ)) {
      // A member of a leader-sampled group: its counts travel in the leader's samples.
      out << "#\n# event: " << event.name << ", read in every sample of "
          << profile.events[static_cast<size_t>(event.group_leader)].name << " (group member)\n";
      continue;
    }
    const uint64_t total = profile.total_period[e];
    out << "#\n# event: " << profile.events[e].name << ", " << profile.total_samples[e]
        << " samples, total period " << total << '\n';
    out << "# Self% is the function's share of the event's total period (sum of sample periods)\n";
    out << Printf("# %8s %10s  %-16s %-24s %s\n", "Self%", "Samples", "Command", "Module",
                  "Function");
    if (total == 0) continue;
    std::vector<const FunctionRow*> rows;
    for (const FunctionRow& row : profile.rows)
      if (row.self_samples[e] != 0) rows.push_back(&row);
    std::stable_sort(rows.begin(), rows.end(), [e](const FunctionRow* a, const FunctionRow* b) {
      return a->self_period[e] > b->self_period[e];
    });
    size_t shown = 0;
    for (const FunctionRow* row_ptr : rows) {
      const FunctionRow& row = *row_ptr;
      double percent = 100.0 * static_cast<double>(row.self_period[e]) / static_cast<double>(total);
      if (percent < options.percent_limit) continue;
      if (options.max_rows && shown >= options.max_rows) break;
      out << Printf("  %7.2f%% %10llu  %-16s %-24s %s\n", percent,
                    static_cast<unsigned long long>(row.self_samples[e]), row.command.c_str(),
                    row.module.c_str(), row.function.c_str());
      ++shown;
    }
  }
}

}  // namespace tprof

namespace tprof {
namespace {

struct Column {
  std::string top;  // the event a column belongs to, or ""
  std::string title;
  bool left = false;  // left-aligned text (keys)
  std::vector<std::string> cells;
};

// Terminal columns of text as it will be shown (core/base/visible_text.h: a byte that is not
// UTF-8 takes the four of \xHH): one per code point (continuation bytes take none).
size_t DisplayWidth(const std::string& text) {
  if (!IsWellFormedUtf8(text)) return DisplayWidth(VisibleText(text));
  size_t width = 0;
  for (unsigned char c : text) width += (c & 0xC0) != 0x80;
  return width;
}

// "1.234 ±0.045", "~" after a low-confidence value ("±?" where no interval can be estimated),
// "!" after a value the window method biases (its reason goes under the table).
std::string FormatMetric(const MetricValue& v) {
  if (!v.value) return "n/a";
  auto number = [](double x) {
    return std::abs(x) >= 1000 ? Printf("%.0f", x) : Printf("%.3f", x);
  };
  std::string s = number(*v.value);
  s += v.half_width ? " \u00b1" + number(*v.half_width) : " \u00b1?";
  if (v.low_confidence) s += "~";
  if (v.bias) s += "!";
  return s;
}

std::string KeyTitle(SortKey k) {
  switch (k) {
    case SortKey::kSymbol:
      return "Function";
    case SortKey::kDso:
      return "Module";
    case SortKey::kComm:
      return "Command";
    case SortKey::kPid:
      return "Pid";
    case SortKey::kTid:
      return "Tid";
    case SortKey::kSrcline:
      return "Source";
  }
  return "?";
}

std::string MetricTitle(const MetricColumn& c) {
  return c.name + (c.source == MetricSource::kSampledPeriods ? "[s]" : "[g]");
}

// The unwinding statistics of a --call-graph dwarf input, so that stacks cut short show in the
// report itself and not only on the terminal that made it.
void WriteUnwinding(const ReportTableView& view, std::ostream& out) {
  for (const std::string& line : DescribeUnwinding(view.unwinding))
    out << "# unwinding: " << line << '\n';
}

// A clock that reads itself (a group of one; record adds the read beside other events): what its
// samples leave out, which metrics over its time allow for (for a clock in both modes, not the
// time of samples the kernel lost: the lost-samples line). Empty when it read nothing and, for
// `compact` headers, when a clock in both modes missed no more than its timer's usual lateness.
std::string ClockLeftOutLine(const ReportTable& table, const ReadGroup& group, bool compact) {
  if (group.members.size() != 1) return "";
  const auto reads = ClockLeftOutOfReads(table, group);
  if (!reads || (compact && !reads->BeyondLateness())) return "";
  return table.events[reads->clock].name + ": its samples leave out " +
         Printf("%.4g ms (%.1f%%)", reads->left_out / 1e6, 100 * reads->left_out / reads->read) +
         " of the time its reads counted (" +
         (reads->one_mode ? "the time in the mode it does not sample"
                          : "ticks its timer missed: a busy host holding the CPU") +
         ")";
}

// The notes of the default header that change how to read the table, one line each: what a
// user would otherwise take for a whole profile, a whole stack or a measured value. Most telling
// first: samples missing, what the rows hold, stacks, kernel work, a clock's or a group's reads.
std::vector<std::string> ReadingNotes(const ReportTableView& view) {
  const ReportTable& table = *view.table;
  std::vector<std::string> notes;
  if (table.lost) notes.push_back("lost samples: " + std::to_string(table.lost));
  std::string throttled;  // one line for every event the kernel throttled
  for (size_t e = 0; e < table.throttles.size(); ++e)
    if (table.throttles[e])
      throttled += (throttled.empty() ? "" : ", ") + table.events[e].name + " " +
                   std::to_string(table.throttles[e]) + " times";
  if (!throttled.empty())
    notes.push_back("throttled: the kernel stopped sampling " + throttled +
                    ", each until its next tick");
  if (!view.filter_summary.empty())
    notes.push_back("filters: " + view.filter_summary + " (shares stay relative to every sample" +
                    (view.filter.time_start || view.filter.time_end ? " in the time range" : "") +
                    ")");
  if (view.latency)
    notes.push_back(
        "latency view: on-CPU samples weighted by 1 / (threads of their process "
        "running then): on-CPU columns are wall time");
  if (const std::string off_cpu = OffCpuLine(view); !off_cpu.empty()) notes.push_back(off_cpu);
  if (!view.stack_hint.empty()) notes.push_back("note: " + view.stack_hint);
  // Stacks that may be cut short, in one line (-v says where and why).
  const UnwindStatistics& u = view.unwinding;
  const uint64_t stacks = u.samples + u.chain_repair.samples,
                 short_stacks = u.incomplete() + u.chain_repair.kept();
  if (short_stacks)
    notes.push_back(
        Printf("unwinding: %llu of %llu stacks (%.1f%%) may miss callers (-v: where "
               "and why)",
               static_cast<unsigned long long>(short_stacks),
               static_cast<unsigned long long>(stacks), Percent(short_stacks, stacks)));
  // Kernel work where it moves a share by a point or more (or kernel rows were asked for).
  if (view.kernel_rows || (view.kernel_credit && Percent(view.kernel_credit->kernel_samples,
                                                         view.kernel_credit->samples) >= 1.0))
    if (const std::string kernel = KernelWorkLine(view); !kernel.empty()) notes.push_back(kernel);
  for (const ReadGroup& g : table.groups) {
    if (g.members.size() == 1) {
      if (const std::string line = ClockLeftOutLine(table, g, /*compact=*/true); !line.empty())
        notes.push_back(line);
      continue;
    }
    std::string names;
    for (uint32_t m : g.members) names += (names.empty() ? "" : ",") + table.events[m].name;
    std::string note =
        Printf("group {%s}: %.1f%% of its windows discarded (they started in another row)",
               names.c_str(), g.discarded_percent);
    if (g.short_window)
      note += Printf("; windows: the short periods of %llu events only",
                     static_cast<unsigned long long>(g.short_window));
    notes.push_back(note);
  }
  return notes;
}

// The default header: what was recorded, how long and where; the events and what a row is; the
// metrics, with how to read their values; and only the notes that change how to read this table,
// kCompactHeaderLines lines in all (the notes beyond are counted); -v gives every line and what
// each column means (WriteFullHeader).
constexpr size_t kCompactHeaderLines = 5;

void WriteCompactHeader(const ReportTableView& view, std::ostream& out) {
  const Metadata& metadata = *view.metadata;
  const ReportTable& table = *view.table;
  std::vector<std::string> lines;
  std::string what = view.input;
  if (!metadata.command_line.empty()) {
    what += ":";
    for (const std::string& arg : metadata.command_line) what += " " + arg;
  }
  std::string about;
  if (metadata.duration_ns)
    about = Printf("%.3f s", static_cast<double>(metadata.duration_ns) / 1e9);
  if (const std::string host = HostText(metadata); !host.empty())
    about += (about.empty() ? "on " : " on ") + host;
  lines.push_back(what + (about.empty() ? "" : " (" + about + ")"));
  std::string events;
  for (size_t e = 0; e < table.events.size(); ++e) {
    if (!table.IsSampled(e)) continue;
    events += (events.empty() ? "" : ", ") + table.events[e].name + " " +
              std::to_string(table.total_samples[e]) + " samples";
  }
  std::string sort;
  for (size_t i = 0; i < table.sort.size(); ++i) {
    if (i) sort += ',';
    sort += SortKeyName(table.sort[i]);
  }
  lines.push_back(events + "; rows by " + sort + ", " +
                  (table.inline_mode == InlineMode::kInnermost ? "inlined functions their own rows"
                                                               : "out-of-line functions"));
  if (!view.metrics->columns().empty()) {
    std::string metrics;
    for (size_t c = 0; c < view.metrics->columns().size(); ++c) {
      const MetricColumn& m = view.metrics->columns()[c];
      std::string formula = m.formula;
      for (size_t at; (at = formula.find("\\-")) != std::string::npos;) formula.erase(at, 1);
      if (!metrics.empty()) metrics += "; ";
      metrics += MetricTitle(m) + " = " + formula + ": " +
                 FormatMetric(view.metrics->EvaluateTotal(c, table)) + " overall";
    }
    lines.push_back(
        "metrics ([s] from sampled periods, [g] from group windows; \u00b1 95% "
        "interval, ~ low confidence, ! may lie outside it, why under the table): " +
        metrics);
  }
  std::vector<std::string> notes = ReadingNotes(view);
  const size_t room = kCompactHeaderLines - lines.size();  // at least 2: lines holds 2 or 3
  if (notes.size() > room) {
    const size_t more = notes.size() - (room - 1);
    notes.resize(room - 1);
    notes.push_back(std::to_string(more) + " more notes: -v shows them");
  }
  lines.insert(lines.end(), notes.begin(), notes.end());
  for (const std::string& line : lines) out << "# " << line << '\n';
  out << "#\n";
}

void WriteFullHeader(const ReportTableView& view, std::ostream& out) {
  const Metadata& metadata = *view.metadata;
  const ReportTable& table = *view.table;
  out << "# tprof report of " << view.input << '\n';
  if (!metadata.command_line.empty()) {
    out << "# command:";
    for (const std::string& arg : metadata.command_line) out << ' ' << arg;
    out << '\n';
  }
  WriteHostLine(metadata, out);
  if (metadata.duration_ns)
    out << Printf("# duration: %.3f s\n", static_cast<double>(metadata.duration_ns) / 1e9);
  if (table.lost) out << "# lost samples: " << table.lost << '\n';
  for (size_t e = 0; e < table.throttles.size(); ++e)
    if (table.throttles[e])
      out << "# throttled: the kernel stopped sampling " << table.events[e].name << ' '
          << table.throttles[e]
          << " times, each until its next tick: its samples miss the events of those times "
             "(record at a lower -F, or raise kernel.perf_event_max_sample_rate)\n";
  if (!view.stack_hint.empty()) out << "# note: " << view.stack_hint << '\n';
  if (const std::string kernel = KernelWorkLine(view); !kernel.empty())
    out << "# " << kernel << '\n';
  if (const std::string off_cpu = OffCpuLine(view); !off_cpu.empty())
    out << "# " << off_cpu << '\n';
  if (view.latency)
    out << "# latency view: each on-CPU sample weighted by 1 / (threads of its process running "
           "then, from the recorded switches): on-CPU columns are wall time, not CPU time\n";
  WriteUnwinding(view, out);
  for (size_t e = 0; e < table.events.size(); ++e) {
    const EventDesc& event = table.events[e];
    if (!table.IsSampled(e)) {
      out << "# event: " << event.name << ", read in every sample of "
          << table.events[static_cast<size_t>(event.group_leader)].name << " (group member)\n";
      continue;
    }
    out << "# event: " << event.name << ", " << table.total_samples[e] << " samples, total period "
        << table.total_period[e] << '\n';
  }
  for (const ReadGroup& g : table.groups) {
    if (g.members.size() == 1) {
      if (const std::string line = ClockLeftOutLine(table, g, /*compact=*/false); !line.empty())
        out << "# " << line << '\n';
      continue;
    }
    out << "# group {";
    for (size_t i = 0; i < g.members.size(); ++i)
      out << (i ? "," : "") << table.events[g.members[i]].name;
    out << Printf(
        "}: %llu windows credited, %llu discarded (%.1f%% of windows: they started in "
        "another row; their samples still count toward the shares)\n",
        static_cast<unsigned long long>(g.windows_credited),
        static_cast<unsigned long long>(g.windows_discarded), g.discarded_percent);
    if (g.short_window)
      out << Printf(
          "#   windows: the short periods of %llu events only (the kernel alternated "
          "them with %llu long ones)\n",
          static_cast<unsigned long long>(g.short_window),
          static_cast<unsigned long long>(g.long_periods));
  }
  out << "# sort: ";
  for (size_t i = 0; i < table.sort.size(); ++i)
    out << (i ? "," : "") << SortKeyName(table.sort[i]);
  out << '\n';
  out << "# functions: " << InlineModeDescription(table.inline_mode) << '\n';
  if (!view.filter_summary.empty())
    out << "# filters: " << view.filter_summary << " (shares stay relative to every sample"
        << (view.filter.time_start || view.filter.time_end ? " in the time range" : "") << ")\n";
  if (!view.metric_table.empty()) out << "# " << view.metric_table << '\n';
  for (size_t c = 0; c < view.metrics->columns().size(); ++c) {
    const MetricColumn& m = view.metrics->columns()[c];
    std::string formula = m.formula;  // as written, without the '\-' escapes of event names
    for (size_t at; (at = formula.find("\\-")) != std::string::npos;) formula.erase(at, 1);
    out << "# " << MetricTitle(m) << " = " << formula << " (" << m.unit << ", from "
        << MetricSourceName(m.source)
        << "): " << FormatMetric(view.metrics->EvaluateTotal(c, table)) << " overall\n";
  }
  out << "#\n# Self%: the row's share of the event's total period (sum of sample periods) in "
         "samples whose leaf is in the row\n";
  if (view.children)
    out << "# Total%: the same for samples with the row anywhere on the callchain (--children)"
        << (table.has_callchains ? "" : "; this profile has no callchains, so Total% = Self%")
        << '\n';
  bool sampled = false, grouped = false;
  for (const MetricColumn& m : view.metrics->columns())
    (m.source == MetricSource::kSampledPeriods ? sampled : grouped) = true;
  if (sampled)
    out << "# [s] metrics come from sampled periods: an event's count in a row is the sum of its "
           "samples' periods there\n";
  if (grouped)
    out << "# [g] metrics come from group deltas: the counts of the windows between two samples "
           "that start and end in the row\n";
  if (std::any_of(table.groups.begin(), table.groups.end(),
                  [](const ReadGroup& g) { return g.members.size() > 1; }))
    out << "# D:EVENT is an event's count over the row's credited windows; Win the credited "
           "windows; Disc% the row's windows discarded (started in another row)\n";
  if (!view.metrics->columns().empty() || !table.groups.empty())
    out << "# " << LowConfidenceRule() << '\n';
  out << "#\n";
}

}  // namespace

void RenderReportTable(const ReportTableView& view, std::ostream& out) {
  const ReportTable& table = *view.table;
  if (view.full_header)
    WriteFullHeader(view, out);
  else
    WriteCompactHeader(view, out);
  size_t beyond_limit = 0;
  std::vector<const ReportRow*> rows = VisibleRows(view, &beyond_limit);
  std::vector<Column> columns;
  for (size_t e = 0; e < table.events.size(); ++e) {
    if (!table.IsSampled(e)) continue;
    const std::string& name = table.events[e].name;
    Column self{name, "Self%", false, {}}, total{name, "Total%", false, {}},
        samples{name, "Samples", false, {}};
    for (const ReportRow* row : rows) {
      self.cells.push_back(Printf("%.2f%%", Percent(row->self_period[e], table.total_period[e])));
      total.cells.push_back(Printf("%.2f%%", Percent(row->total_period[e], table.total_period[e])));
      samples.cells.push_back(std::to_string(row->self_samples[e]));
    }
    if (view.children) columns.push_back(std::move(total));
    columns.push_back(std::move(self));
    columns.push_back(std::move(samples));
  }
  for (size_t g = 0; g < table.groups.size(); ++g) {
    const ReadGroup& group = table.groups[g];
    if (group.members.size() == 1) continue;  // a clock reading itself: no window columns
    for (size_t i = 1; i < group.members.size(); ++i) {
      Column c{"", "D:" + table.events[group.members[i]].name, false, {}};
      for (const ReportRow* row : rows) {
        const GroupCredit& credit = row->groups[g];
        c.cells.push_back(Printf("%.0f", credit.deltas[i]));
      }
      columns.push_back(std::move(c));
    }
    Column win{"", "Win", false, {}}, disc{"", "Disc%", false, {}};
    for (const ReportRow* row : rows) {
      const GroupCredit& credit = row->groups[g];
      win.cells.push_back(std::to_string(credit.windows_credited));
      disc.cells.push_back(Printf(
          "%.1f%%",
          Percent(credit.windows_discarded, credit.windows_credited + credit.windows_discarded)));
    }
    columns.push_back(std::move(win));
    columns.push_back(std::move(disc));
  }
  std::vector<std::string> bias_lines;  // "! ROW COLUMN: reason", under the table
  for (size_t m = 0; m < view.metrics->columns().size(); ++m) {
    Column c{"", MetricTitle(view.metrics->columns()[m]), false, {}};
    for (const ReportRow* row : rows) {
      const MetricValue v = view.metrics->Evaluate(m, table, *row, view.children);
      c.cells.push_back(FormatMetric(v));
      if (v.bias) {
        std::string name;
        for (const std::string& key : row->keys) name += (name.empty() ? "" : " ") + key;
        bias_lines.push_back("# ! " + name + ", " + c.title + ": " + v.bias->reason);
      }
    }
    columns.push_back(std::move(c));
  }
  for (size_t k = 0; k < table.sort.size(); ++k) {
    Column c{"", KeyTitle(table.sort[k]), true, {}};
    for (const ReportRow* row : rows) c.cells.push_back(row->keys[k]);
    columns.push_back(std::move(c));
  }
  std::vector<size_t> width;
  for (const Column& c : columns) {
    size_t w = DisplayWidth(c.title);
    for (const std::string& cell : c.cells) w = std::max(w, DisplayWidth(cell));
    width.push_back(w);
  }
  // A line naming each event above its run of columns (widened to fit the name), then the
  // titles, then the rows.
  std::string top = "#";
  bool any_top = false;
  for (size_t i = 0; i < columns.size();) {
    size_t j = i + 1;
    while (j < columns.size() && !columns[i].top.empty() && columns[j].top == columns[i].top) ++j;
    size_t span = 0;
    for (size_t k = i; k < j; ++k) span += width[k] + (k > i ? 2 : 0);
    const std::string& name = columns[i].top;
    if (name.size() > span) {
      width[i] += name.size() - span;
      span = name.size();
    }
    any_top |= !name.empty();
    top += std::string(i ? "  " : " ") + name + std::string(span - name.size(), ' ');
    i = j;
  }
  if (any_top) {
    while (!top.empty() && top.back() == ' ') top.pop_back();
    out << top << '\n';
  }
  auto line = [&](auto cell_of) {
    std::string s;
    for (size_t i = 0; i < columns.size(); ++i) {
      std::string cell = cell_of(i);
      const size_t cell_width = DisplayWidth(cell);
      // Padding is appended only where it shows: the last column is left-aligned names, as wide
      // as the longest, and making its padding for every row and dropping it was 1.8 % of a
      // flat report's instructions.
      const size_t pad = width[i] > cell_width ? width[i] - cell_width : 0;
      s += "  ";
      if (columns[i].left) {
        s += cell;
        if (i + 1 < columns.size()) s.append(pad, ' ');
      } else {
        s.append(pad, ' ');
        s += cell;
      }
    }
    return s;
  };
  out << '#' << line([&](size_t i) { return columns[i].title; }).substr(1) << '\n';
  for (size_t r = 0; r < rows.size(); ++r)
    out << line([&](size_t i) { return columns[i].cells[r]; }) << '\n';
  if (beyond_limit) out << "# ... " << beyond_limit << " more (--limit)\n";
  if (!bias_lines.empty()) {
    out << "#\n# ! these values may lie outside their intervals, for the reason given:\n";
    for (const std::string& l : bias_lines) out << l << '\n';
  }
  if (rows.empty())
    out << (view.filter_summary.empty() ? "# no rows: the profile holds no samples\n"
                                        : "# no rows: nothing matched the filters\n");
}

std::string TimelineMetricTitle(const TimelineView& view, size_t m) {
  return view.metric_names[m] + (view.metric_sources[m] == MetricSource::kGroupDeltas ? "[g]" : "");
}

void RenderTimeline(const TimelineView& view, std::ostream& out) {
  const std::string& ranking = view.events[view.ranking_event].name;
  out << "# Timeline: every " << Printf("%.3f", static_cast<double>(view.interval_ns) / 1e9)
      << " s (times in seconds from the profile start); functions by " << ranking
      << " (self % of the interval)";
  if (!view.metric_names.empty())
    out << "; metrics from the events' sampled periods in the interval ([g]: from a group's "
           "windows that ended in it), \u00b1 their 95 % interval (~ uncertain)";
  out << "\n";
  std::vector<std::string> bias_lines;  // "! INTERVAL METRIC: reason", under the intervals
  for (const TimelinePoint& point : view.points) {
    const std::string interval = Printf("%8.3f-%-8.3f s", static_cast<double>(point.start_ns) / 1e9,
                                        static_cast<double>(point.end_ns) / 1e9);
    out << interval;
    for (size_t m = 0; m < view.metric_names.size(); ++m)
      if (point.metrics[m].bias)
        bias_lines.push_back("# ! " + interval + ", " + TimelineMetricTitle(view, m) + ": " +
                             point.metrics[m].bias->reason);
    for (size_t e = 0; e < view.events.size(); ++e)
      out << "  " << view.events[e].name << " " << point.samples[e] << " samples";
    for (size_t m = 0; m < view.metric_names.size(); ++m)
      out << "  " << TimelineMetricTitle(view, m) << " " << FormatMetric(point.metrics[m]);
    out << "\n";
    if (point.top.empty()) out << "      (no " << ranking << " sample)\n";
    for (const TimelineFunction& f : point.top)
      out << Printf("    %6.2f%%  ", f.percent) << f.function << "  [" << f.command << "]\n";
  }
  if (!bias_lines.empty()) {
    out << "# ! these values may lie outside their intervals, for the reason given:\n";
    for (const std::string& l : bias_lines) out << l << '\n';
  }
  if (view.samples_beyond)
    out << "# " << view.samples_beyond << " samples lie past the last interval kept ("
        << kMaxTimelineIntervals << "): left out\n";
}

void RenderCallRelations(const CallRelations& relations, bool callers, bool callees,
                         std::ostream& out) {
  out << "# tprof report: callers and callees of '" << relations.wanted << "'\n";
  if (relations.matched.empty()) {
    out << "# no sampled function matched '" << relations.wanted << "'\n";
    return;
  }
  out << "# matched:";
  for (const std::string& m : relations.matched) out << " " << m << ";";
  out << '\n';
  if (!relations.has_callchains)
    out << "# this profile has no callchains (record with -g or --call-graph): only self "
           "samples are known\n";
  out << "# Share%: of the period of the samples whose callchain passes through the function, "
         "the part that passed through each caller (the frame just outside it) or callee (the "
         "frame just inside it); each counts once per sample\n";
  for (size_t e = 0; e < relations.events.size(); ++e) {
    if (relations.through_samples[e] == 0) continue;
    const uint64_t through = relations.through_period[e];
    out << Printf(
        "#\n# event %s: the function is on the chain of %.2f%% of the period (%llu "
        "samples), the leaf of %.2f%%\n",
        relations.events[e].name.c_str(), Percent(through, relations.total_period[e]),
        static_cast<unsigned long long>(relations.through_samples[e]),
        Percent(relations.self_period[e], relations.total_period[e]));
    auto list = [&](const char* title, const std::vector<Neighbour>& neighbours, uint64_t rest,
                    const char* rest_name) {
      out << Printf("# %s\n# %8s %10s  %-24s %s\n", title, "Share%", "Samples", "Module",
                    "Function");
      for (const Neighbour& n : neighbours) {
        if (n.samples[e] == 0) continue;
        out << Printf("  %7.2f%% %10llu  %-24s %s\n", Percent(n.period[e], through),
                      static_cast<unsigned long long>(n.samples[e]), n.module.c_str(),
                      n.function.c_str());
      }
      if (rest)
        out << Printf("  %7.2f%% %10s  %-24s %s\n", Percent(rest, through), "", "", rest_name);
    };
    if (callers)
      list("callers", relations.callers, relations.no_caller_period[e],
           "[no caller: the chain ends here]");
    if (callees)
      list("callees", relations.callees, relations.self_period[e], "[self: the function itself]");
  }
}

}  // namespace tprof
