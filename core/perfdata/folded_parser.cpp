#include "core/perfdata/folded_parser.h"

#include <cctype>
#include <charconv>

namespace tprof {
namespace {

struct FoldedLine {
  std::string_view stack;
  uint64_t counts[2] = {0, 0};
  int columns = 0;
};

bool ParseCount(std::string_view s, uint64_t* out) {
  if (s.empty()) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size();
}

// Splits "a;b;c 12" or "a;b;c 12 15" at the last one or two spaces.
bool SplitLine(std::string_view line, FoldedLine* out) {
  while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back())))
    line.remove_suffix(1);
  size_t last = line.find_last_of(" \t");
  if (last == std::string_view::npos || last == 0) return false;
  uint64_t count = 0;
  if (!ParseCount(line.substr(last + 1), &count)) return false;
  std::string_view rest = line.substr(0, last);
  while (!rest.empty() && std::isspace(static_cast<unsigned char>(rest.back())))
    rest.remove_suffix(1);
  size_t prev = rest.find_last_of(" \t");
  uint64_t first = 0;
  if (prev != std::string_view::npos && prev > 0 && ParseCount(rest.substr(prev + 1), &first)) {
    out->stack = rest.substr(0, prev);
    out->counts[0] = first;
    out->counts[1] = count;
    out->columns = 2;
  } else {
    out->stack = rest;
    out->counts[0] = count;
    out->columns = 1;
  }
  while (!out->stack.empty() && std::isspace(static_cast<unsigned char>(out->stack.front())))
    out->stack.remove_prefix(1);
  return !out->stack.empty();
}

struct NamedFrame {
  std::string_view module;
  std::string_view function;
};

NamedFrame ParseFrame(std::string_view f) {
  NamedFrame n;
  if (f.size() > 4 && f.substr(f.size() - 4, 2) == "_[" && f.back() == ']') {
    char kind = f[f.size() - 2];
    f.remove_suffix(4);
    if (kind == 'k') n.module = "[kernel]";
    if (kind == 'j') n.module = "[jit]";
  }
  if (size_t tick = f.find('`'); tick != std::string_view::npos) {
    n.module = f.substr(0, tick);
    f = f.substr(tick + 1);
  }
  n.function = f;
  return n;
}

}  // namespace

bool LooksLikeFolded(std::string_view head) {
  size_t pos = 0;
  int good = 0;
  for (int lines = 0; lines < 8 && pos < head.size(); ++lines) {
    size_t end = head.find('\n', pos);
    if (end == std::string_view::npos) break;  // the last line may be cut by the sniff window
    std::string_view line = head.substr(pos, end - pos);
    pos = end + 1;
    if (line.empty() || line.front() == '#') continue;
    FoldedLine f;
    if (line.front() == '\t' || !SplitLine(line, &f)) return false;
    ++good;
  }
  return good > 0;
}

Result<TextProfile> ParseFolded(std::string_view text) {
  TextProfile p;
  int columns = 0;
  size_t pos = 0, line_no = 0;
  std::vector<uint64_t> frames;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    std::string_view line = text.substr(pos, end == std::string_view::npos ? end : end - pos);
    pos = end == std::string_view::npos ? text.size() : end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    bool blank = true;
    for (char c : line) blank = blank && std::isspace(static_cast<unsigned char>(c));
    if (blank || line.front() == '#') continue;
    FoldedLine f;
    if (!SplitLine(line, &f))
      return Error("folded stacks: line " + std::to_string(line_no) +
                   " is not 'frame;frame;... count'");
    if (!columns) {
      columns = f.columns;
      p.events.resize(static_cast<size_t>(columns));
      p.events[0].name = columns == 2 ? "before" : "samples";
      if (columns == 2) p.events[1].name = "after";
    } else if (f.columns != columns) {
      return Error("folded stacks: line " + std::to_string(line_no) + " has " +
                   std::to_string(f.columns) + " count column(s), the first line " +
                   std::to_string(columns));
    }
    // Root first in the text, leaf first in a callchain.
    frames.clear();
    std::string_view stack = f.stack;
    while (!stack.empty()) {
      size_t semi = stack.rfind(';');
      std::string_view frame = semi == std::string_view::npos ? stack : stack.substr(semi + 1);
      stack = semi == std::string_view::npos ? std::string_view() : stack.substr(0, semi);
      if (frame.empty()) continue;
      NamedFrame n = ParseFrame(frame);
      frames.push_back(p.frames.Intern(n.module, n.function));
    }
    if (frames.empty()) continue;
    for (int c = 0; c < columns; ++c) {
      if (!f.counts[c]) continue;
      Sample s;
      s.event = static_cast<uint32_t>(c);
      s.period = f.counts[c];
      s.ip = frames.front();
      s.callchain = frames;
      p.samples.push_back(std::move(s));
      p.sample_comm.push_back(0);
    }
  }
  if (p.samples.empty()) return Error("folded stacks: no stacks with a count");
  p.comms.push_back("folded");
  p.metadata.source = "folded stacks import";
  return p;
}

}  // namespace tprof
