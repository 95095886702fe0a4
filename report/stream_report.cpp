#include "report/stream_report.h"

#include <algorithm>
#include <cstdio>
#include <string>

namespace tprof {
namespace {

std::string PercentText(double share) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f%%", share * 100.0);
  return buf;
}

std::string SignedPercentPoints(double delta) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.2f", delta * 100.0);
  return buf;
}

std::string Fixed(double value, const char* format = "%.1f") {
  char buf[32];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

std::string EventName(const StreamProfile& p) {
  return p.event >= 0 && static_cast<size_t>(p.event) < p.events.size() ? p.events[p.event].name
                                                                        : std::string("-");
}

std::string Cycles(const HotStream* s) {
  return s && s->has_cycles() ? Fixed(s->average_cycles()) : std::string("-");
}

std::string Header(const StreamProfile& p, const char* what) {
  std::string kind = p.branch_samples ? "branch stacks" : "callchains";
  return std::to_string(p.samples) + " samples of " + EventName(p) + ", " + what + " from " + kind;
}

nlohmann::json EntryJson(const StreamEntry& e) {
  nlohmann::json j = {{"function", e.function}, {"file", e.file}, {"line", e.line}};
  if (e.end_line) j["end_line"] = e.end_line;
  if (e.offset) j["offset"] = e.offset;
  if (e.end_offset) j["end_offset"] = e.end_offset;
  return j;
}

nlohmann::json StreamJson(const StreamProfile& p, const HotStream& s, int index) {
  nlohmann::json entries = nlohmann::json::array();
  for (uint32_t e : s.entries) entries.push_back(EntryJson(p.entries[e]));
  nlohmann::json j = {{"index", index},      {"kind", StreamKindName(s.kind)},
                      {"share", p.Share(s)}, {"samples", s.samples},
                      {"period", s.period},  {"entries", entries}};
  j["average_cycles"] = s.has_cycles() ? nlohmann::json(s.average_cycles()) : nlohmann::json();
  j["cycle_samples"] = s.cycle_samples;
  return j;
}

nlohmann::json BlockJson(const StreamProfile& p, const BasicBlock& b, int index) {
  nlohmann::json j = EntryJson(p.entries[b.entry]);
  j["index"] = index;
  j["module"] = b.module;
  j["start"] = b.start;
  j["end"] = b.end;
  j["executions"] = b.executions;
  j["cycles"] = b.cycles;
  j["cycle_counts"] = b.cycle_counts;
  j["share"] = p.Share(b);
  j["average_cycles"] = b.cycle_counts ? nlohmann::json(b.average_cycles()) : nlohmann::json();
  return j;
}

// Two columns of text: `left` padded to `width`.
void TwoColumns(std::ostream& out, const std::string& left, const std::string& right,
                size_t width) {
  out << "    " << left;
  if (!right.empty()) {
    out << std::string(left.size() < width ? width - left.size() : 2, ' ') << right;
  }
  out << '\n';
}

void RenderPair(const StreamProfile& o, const StreamProfile& n, const StreamPair& pair, int index,
                const char* label, std::ostream& out) {
  const HotStream* os = pair.old_stream >= 0 ? &o.streams[pair.old_stream] : nullptr;
  const HotStream* ns = pair.new_stream >= 0 ? &n.streams[pair.new_stream] : nullptr;
  out << '\n' << label << ' ' << index << ":\n";
  double old_share = os ? o.Share(*os) : 0, new_share = ns ? n.Share(*ns) : 0;
  out << "  hits: " << (os ? PercentText(old_share) : "-") << " -> "
      << (ns ? PercentText(new_share) : "-");
  if (os && ns) out << " (" << SignedPercentPoints(new_share - old_share) << ")";
  out << "   samples: " << (os ? std::to_string(os->samples) : "-") << " -> "
      << (ns ? std::to_string(ns->samples) : "-");
  out << "   cycles: " << Cycles(os) << " -> " << Cycles(ns);
  if (os && ns && os->has_cycles() && ns->has_cycles())
    out << " (" << Fixed(ns->average_cycles() - os->average_cycles(), "%+.1f") << ")";
  out << '\n';

  std::vector<std::string> left, right;
  size_t rows = std::max(os ? os->entries.size() : 0, ns ? ns->entries.size() : 0);
  for (size_t r = 0; r < rows; ++r) {
    bool changed = r < pair.changed.size() && pair.changed[r];
    std::string mark = changed ? "* " : "  ";
    left.push_back(os && r < os->entries.size() ? mark + FormatEntry(o.entries[os->entries[r]])
                                                : "");
    right.push_back(ns && r < ns->entries.size() ? mark + FormatEntry(n.entries[ns->entries[r]])
                                                 : "");
  }
  size_t width = 40;
  for (const std::string& l : left) width = std::max(width, l.size() + 4);
  if (os && ns) TwoColumns(out, "old", "new", width);
  for (size_t r = 0; r < rows; ++r) {
    if (os && ns)
      TwoColumns(out, left[r], right[r], width);
    else
      TwoColumns(out, os ? left[r] : right[r], "", width);
  }
}

}  // namespace

std::string FormatEntry(const StreamEntry& entry) {
  std::string out = entry.function;
  if (!entry.file.empty()) {
    size_t slash = entry.file.rfind('/');
    out += ' ';
    out += slash == std::string::npos ? entry.file : entry.file.substr(slash + 1);
    out += ':' + std::to_string(entry.line);
    if (entry.end_line && entry.end_line != entry.line) out += '-' + std::to_string(entry.end_line);
  }
  if (!entry.line && (entry.offset || entry.end_offset)) {
    char buf[48];
    if (entry.end_offset)
      std::snprintf(buf, sizeof buf, " @0x%llx-0x%llx",
                    static_cast<unsigned long long>(entry.offset),
                    static_cast<unsigned long long>(entry.end_offset));
    else
      std::snprintf(buf, sizeof buf, " @0x%llx", static_cast<unsigned long long>(entry.offset));
    out += buf;
  }
  return out;
}

void RenderStreams(const StreamProfile& p, const StreamReportOptions& options, std::ostream& out) {
  if (options.blocks) {
    out << "# Hot basic blocks: " << Header(p, "blocks") << ", "
        << (p.has_cycles ? "share of sampled cycles" : "share of executions (no cycle counts)")
        << '\n';
    out << "#   share   cycles  executions  block\n";
    for (size_t i = 0; i < std::min(options.top, p.blocks.size()); ++i) {
      const BasicBlock& b = p.blocks[i];
      char buf[96];
      std::snprintf(buf, sizeof buf, "%8s %8s %11llu  ", PercentText(p.Share(b)).c_str(),
                    b.cycle_counts ? Fixed(b.average_cycles()).c_str() : "-",
                    static_cast<unsigned long long>(b.executions));
      size_t slash = b.module.rfind('/');
      std::string module = slash == std::string::npos ? b.module : b.module.substr(slash + 1);
      out << buf << FormatEntry(p.entries[b.entry]) << "  [" << module << "+0x" << std::hex
          << b.start << "-0x" << b.end << std::dec << "]\n";
    }
    return;
  }
  out << "# Hot streams: " << Header(p, "streams") << '\n';
  for (size_t i = 0; i < std::min(options.top, p.streams.size()); ++i) {
    const HotStream& s = p.streams[i];
    out << "\nhot stream " << i + 1 << ": hits " << PercentText(p.Share(s)) << ", samples "
        << s.samples << ", cycles " << Cycles(&s) << '\n';
    for (uint32_t e : s.entries) out << "    " << FormatEntry(p.entries[e]) << '\n';
  }
}

nlohmann::json StreamsJson(const StreamProfile& p, const StreamReportOptions& options) {
  nlohmann::json j = {{"event", EventName(p)},
                      {"samples", p.samples},
                      {"period", p.period},
                      {"branch_samples", p.branch_samples},
                      {"has_cycles", p.has_cycles},
                      {"block_cycles", p.block_cycles},
                      {"block_executions", p.block_executions}};
  nlohmann::json streams = nlohmann::json::array(), blocks = nlohmann::json::array();
  for (size_t i = 0; i < std::min(options.top, p.streams.size()); ++i)
    streams.push_back(StreamJson(p, p.streams[i], static_cast<int>(i)));
  for (size_t i = 0; i < std::min(options.top, p.blocks.size()); ++i)
    blocks.push_back(BlockJson(p, p.blocks[i], static_cast<int>(i)));
  j["streams"] = streams;
  j["blocks"] = blocks;
  return j;
}

void RenderStreamComparison(const StreamProfile& o, const StreamProfile& n,
                            const StreamComparison& c, std::ostream& out) {
  out << "# old: " << Header(o, "streams") << '\n';
  out << "# new: " << Header(n, "streams") << '\n';
  out << "# hits: share of the event's period; cycles: average per stream (branch stacks only)\n";
  out << "\n[ Matched hot streams ]\n";
  int index = 0;
  for (const StreamPair& p : c.matched) RenderPair(o, n, p, ++index, "hot stream pair", out);
  out << "\n[ Hot streams whose source changed (* marks the changed entries) ]\n";
  index = 0;
  for (const StreamPair& p : c.source_changed) RenderPair(o, n, p, ++index, "hot stream pair", out);
  out << "\n[ Hot streams in the old profile only ]\n";
  index = 0;
  for (int i : c.old_only) RenderPair(o, n, {i, -1, {}}, ++index, "hot stream", out);
  out << "\n[ Hot streams in the new profile only ]\n";
  index = 0;
  for (int j : c.new_only) RenderPair(o, n, {-1, j, {}}, ++index, "hot stream", out);
}

nlohmann::json StreamComparisonJson(const StreamProfile& o, const StreamProfile& n,
                                    const StreamComparison& c) {
  auto pair_json = [&](const StreamPair& p) {
    nlohmann::json j;
    j["old"] =
        p.old_stream >= 0 ? StreamJson(o, o.streams[p.old_stream], p.old_stream) : nlohmann::json();
    j["new"] =
        p.new_stream >= 0 ? StreamJson(n, n.streams[p.new_stream], p.new_stream) : nlohmann::json();
    nlohmann::json changed = nlohmann::json::array();
    for (bool b : p.changed) changed.push_back(b);
    j["changed"] = changed;
    return j;
  };
  nlohmann::json j = {{"old", {{"event", EventName(o)}, {"samples", o.samples}}},
                      {"new", {{"event", EventName(n)}, {"samples", n.samples}}}};
  j["matched"] = nlohmann::json::array();
  for (const StreamPair& p : c.matched) j["matched"].push_back(pair_json(p));
  j["source_changed"] = nlohmann::json::array();
  for (const StreamPair& p : c.source_changed) j["source_changed"].push_back(pair_json(p));
  j["old_only"] = nlohmann::json::array();
  for (int i : c.old_only) j["old_only"].push_back(StreamJson(o, o.streams[i], i));
  j["new_only"] = nlohmann::json::array();
  for (int i : c.new_only) j["new_only"].push_back(StreamJson(n, n.streams[i], i));
  return j;
}

void RenderBlockComparison(const StreamProfile& o, const StreamProfile& n, const BlockComparison& c,
                           std::ostream& out) {
  out << "# old: " << Header(o, "blocks") << '\n';
  out << "# new: " << Header(n, "blocks") << '\n';
  out << "# share: of sampled cycles (of executions when the stacks carry no cycle counts); "
         "* the block's source changed\n";
  out << "#  share old  share new     diff  cycles old  cycles new  block\n";
  for (const BlockRow& r : c.rows) {
    const BasicBlock* ob = r.old_block >= 0 ? &o.blocks[r.old_block] : nullptr;
    const BasicBlock* nb = r.new_block >= 0 ? &n.blocks[r.new_block] : nullptr;
    double os = ob ? o.Share(*ob) : 0, ns = nb ? n.Share(*nb) : 0;
    char buf[128];
    std::snprintf(buf, sizeof buf, "%s %9s  %9s  %7s  %10s  %10s  ", r.source_changed ? "*" : " ",
                  ob ? PercentText(os).c_str() : "-", nb ? PercentText(ns).c_str() : "-",
                  ob && nb ? SignedPercentPoints(ns - os).c_str() : "-",
                  ob && ob->cycle_counts ? Fixed(ob->average_cycles()).c_str() : "-",
                  nb && nb->cycle_counts ? Fixed(nb->average_cycles()).c_str() : "-");
    out << buf;
    if (ob && nb && FormatEntry(o.entries[ob->entry]) != FormatEntry(n.entries[nb->entry]))
      out << FormatEntry(o.entries[ob->entry]) << " -> " << FormatEntry(n.entries[nb->entry]);
    else
      out << FormatEntry(nb ? n.entries[nb->entry] : o.entries[ob->entry]);
    out << '\n';
  }
}

nlohmann::json BlockComparisonJson(const StreamProfile& o, const StreamProfile& n,
                                   const BlockComparison& c) {
  nlohmann::json rows = nlohmann::json::array();
  for (const BlockRow& r : c.rows) {
    nlohmann::json j;
    j["old"] =
        r.old_block >= 0 ? BlockJson(o, o.blocks[r.old_block], r.old_block) : nlohmann::json();
    j["new"] =
        r.new_block >= 0 ? BlockJson(n, n.blocks[r.new_block], r.new_block) : nlohmann::json();
    j["source_changed"] = r.source_changed;
    rows.push_back(j);
  }
  return {{"blocks", rows}};
}

}  // namespace tprof
