#include "core/perfdata/perf_script_parser.h"

#include <cctype>
#include <charconv>
#include <map>

#include "core/model/profile.h"

namespace tprof {
namespace {

struct Token {
  std::string_view text;
  size_t begin;  // offset in the line
};

// std::isspace in the "C" locale, which perf script's text is read in, without the call.
constexpr bool IsSpace(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

std::vector<Token> Tokenize(std::string_view line) {
  std::vector<Token> tokens;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && IsSpace(line[i])) ++i;
    size_t start = i;
    while (i < line.size() && !IsSpace(line[i])) ++i;
    if (i > start) tokens.push_back({line.substr(start, i - start), start});
  }
  return tokens;
}

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

bool IsHex(std::string_view s) {
  if (s.empty() || s.size() > 16) return false;
  for (char c : s)
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

bool IsPidToken(std::string_view s) {  // "123" or "123/456"
  size_t slash = s.find('/');
  if (slash == std::string_view::npos) return AllDigits(s);
  return AllDigits(s.substr(0, slash)) && AllDigits(s.substr(slash + 1));
}

bool IsCpuToken(std::string_view s) {  // "[001]"
  return s.size() >= 3 && s.front() == '[' && s.back() == ']' &&
         AllDigits(s.substr(1, s.size() - 2));
}

bool IsTimeToken(std::string_view s) {  // "3597.749431:"
  if (s.size() < 2 || s.back() != ':') return false;
  s.remove_suffix(1);
  size_t dot = s.find('.');
  if (dot == std::string_view::npos) return AllDigits(s);
  return AllDigits(s.substr(0, dot)) && AllDigits(s.substr(dot + 1));
}

bool IsEventToken(std::string_view s) {  // "cpu-clock:", "cycles:u:", "sched:sched_switch:"
  return s.size() >= 2 && s.back() == ':' && !IsTimeToken(s) &&
         (std::isalpha(static_cast<unsigned char>(s.front())) || s.front() == '_' ||
          s.front() == '{');
}

uint64_t ParseU64(std::string_view s, int base = 10) {
  uint64_t v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v, base);
  return v;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

std::string_view BaseName(std::string_view path) {
  if (!path.empty() && path.front() == '[') return path;  // [kernel.kallsyms], [vdso]
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

struct Frame {
  std::string_view module;  // base name, as tprof names modules
  std::string_view function;
  PrintedFrame printed;
};

// "ip sym+0xoff (dso)", "ip [unknown] ([unknown])", "sym (dso)", "ip (dso)".
// A frame line whose address is a callchain context marker or end marker (PERF_CONTEXT_*, -1 at
// or above -4095): not code. perf prints "ffffffffffffffff [unknown]" for such entries; as a
// frame it became the outermost "[unknown]" of every stack.
bool IsMarkerFrame(std::string_view text) {
  text = Trim(text);
  std::string_view first = text.substr(0, text.find_first_of(" \t"));
  uint64_t address = 0;
  auto [end, ec] = std::from_chars(first.data(), first.data() + first.size(), address, 16);
  return ec == std::errc() && end == first.data() + first.size() && !first.empty() &&
         IsContextMarker(address);
}

Frame ParseFrame(std::string_view text, PrintedFrame::Origin origin) {
  Frame f;
  f.printed.origin = origin;
  text = Trim(text);
  if (!text.empty() && text.back() == ')') {
    int depth = 0;
    for (size_t i = text.size(); i-- > 0;) {
      if (text[i] == ')') ++depth;
      if (text[i] == '(' && --depth == 0) {
        std::string_view path = text.substr(i + 1, text.size() - i - 2);
        f.printed.module_path = std::string(path);
        f.module = BaseName(path);
        text = Trim(text.substr(0, i));
        break;
      }
    }
  }
  size_t space = text.find_first_of(" \t");
  std::string_view first = text.substr(0, space);
  if (IsHex(first)) {
    f.printed.address = ParseU64(first, 16);
    f.printed.has_address = true;
    text = space == std::string_view::npos ? "" : Trim(text.substr(space));
  }
  // "func+0x1f" -> "func"; perf prints the offset only with symoff.
  size_t plus = text.rfind("+0x");
  if (plus != std::string_view::npos && plus > 0 && IsHex(text.substr(plus + 3)))
    text = text.substr(0, plus);
  f.function = text.empty() ? std::string_view("[unknown]") : text;
  if (f.module.empty()) f.module = "[unknown]";
  // "7f1e2215d058  (/lib/libc-2.15.so)": perf printed no symbol at all, which is not the same
  // as its "[unknown]" (stackcollapse-perf.pl names the one " ", the other by its module).
  f.printed.symbol = f.printed.has_address && text.empty() ? "" : std::string(f.function);
  if (f.printed.module_path.empty()) f.printed.module_path = "[unknown]";
  f.printed.kernel =
      IsKernelModule(f.printed.module_path, f.printed.address, f.printed.has_address);
  return f;
}

// The key a frame line's parse is cached under: the line without its address and "+0x" offset,
// which name the same frame for a named symbol in a named module (NamedFrameTable keeps one
// entry whatever the addresses); the whole line otherwise ([unknown] symbols keep their
// address, and an [unknown] module's kernel or user side is told by it).
void FrameCacheKey(std::string_view line, PrintedFrame::Origin origin, std::string* key) {
  key->assign(1, static_cast<char>('0' + static_cast<int>(origin)));
  std::string_view t = Trim(line);
  const size_t space = t.find_first_of(" \t");
  const size_t module = t.rfind(" (");
  if (space == std::string_view::npos || module == std::string_view::npos || module <= space ||
      t.back() != ')' || !IsHex(t.substr(0, space))) {
    key->append(line);
    return;
  }
  std::string_view symbol = Trim(t.substr(space, module - space));
  const std::string_view module_text = t.substr(module);
  const size_t plus = symbol.rfind("+0x");
  if (plus != std::string_view::npos && plus > 0 && IsHex(symbol.substr(plus + 3)))
    symbol = symbol.substr(0, plus);
  // Parentheses inside the module's would let the frame parser split the line elsewhere.
  if (symbol.empty() || symbol == "[unknown]" || module_text == " ([unknown])" ||
      module_text.substr(2, module_text.size() - 3).find_first_of("()") != std::string_view::npos) {
    key->append(line);
    return;
  }
  key->append(symbol);
  key->append(module_text);
}

// A callchain line that is not indented with a tab: "  7f00 func (mod)" or "400577 f (mod)".
// Its address comes first, where a sample line has its comm.
bool LooksLikeFrameLine(std::string_view line) {
  std::string_view t = Trim(line);
  if (t.empty() || t.back() != ')' || t.find(" (") == std::string_view::npos) return false;
  size_t space = t.find_first_of(" \t");
  return space != std::string_view::npos && IsHex(t.substr(0, space));
}

// The line that starts at `pos`, without its newline.
std::string_view LineAt(std::string_view text, size_t pos) {
  if (pos >= text.size()) return {};
  size_t end = text.find('\n', pos);
  return text.substr(pos, end == std::string_view::npos ? end : end - pos);
}

struct Header {
  std::string_view comm;
  uint32_t pid = 0, tid = 0, cpu = 0;
  uint64_t time = 0, period = 1;
  std::string_view event = "samples";
  std::string_view rest;  // the frame on the sample line itself, when there is one
  bool has_pid = false;   // "pid/tid"; a lone number is the tid
};

// A sample line: true when it says so by itself (a cpu, time, event, "pid/tid", or a frame of its
// own). "comm tid" alone (perf script -F comm,tid) fills `h` and returns false: it is a sample
// line only when a frame line follows (FollowedByFrame).
bool ParseHeader(std::string_view line, Header* h) {
  std::vector<Token> t = Tokenize(line);
  size_t i = 0;
  while (i < t.size() && !IsPidToken(t[i].text)) ++i;
  if (i == t.size()) return false;
  *h = Header{};
  if (i > 0) h->comm = line.substr(t[0].begin, t[i - 1].begin + t[i - 1].text.size() - t[0].begin);
  std::string_view pid = t[i].text;
  size_t slash = pid.find('/');
  h->pid = static_cast<uint32_t>(ParseU64(pid.substr(0, slash)));
  h->tid = slash == std::string_view::npos ? h->pid
                                           : static_cast<uint32_t>(ParseU64(pid.substr(slash + 1)));
  h->has_pid = slash != std::string_view::npos;
  size_t j = i + 1;
  bool structured = false;  // a cpu, time or event token proves this is a sample line
  if (j < t.size() && IsCpuToken(t[j].text)) {
    h->cpu = static_cast<uint32_t>(ParseU64(t[j].text.substr(1, t[j].text.size() - 2)));
    ++j;
    structured = true;
  }
  if (j < t.size() && IsTimeToken(t[j].text)) {
    std::string_view s = t[j].text.substr(0, t[j].text.size() - 1);
    size_t dot = s.find('.');
    uint64_t sec = ParseU64(s.substr(0, dot));
    uint64_t ns = 0;
    if (dot != std::string_view::npos) {
      std::string frac(s.substr(dot + 1, 9));
      frac.resize(9, '0');
      ns = ParseU64(frac);
    }
    h->time = sec * 1000000000ull + ns;
    ++j;
    structured = true;
  }
  if (j + 1 < t.size() && AllDigits(t[j].text) &&
      (IsEventToken(t[j + 1].text) || (IsHex(t[j + 1].text) && j + 2 < t.size()))) {
    h->period = ParseU64(t[j].text);
    ++j;
    structured = true;
  } else if (j + 1 == t.size() && AllDigits(t[j].text)) {
    h->period = ParseU64(t[j].text);  // "comm pid/tid period" with a callchain below
    ++j;
    structured = true;
  }
  if (j < t.size() && IsEventToken(t[j].text)) {
    h->event = t[j].text.substr(0, t[j].text.size() - 1);
    ++j;
    structured = true;
  }
  if (j < t.size()) h->rest = line.substr(t[j].begin);
  // A bare "word number" line (srcline, a warning) is not a sample unless a frame follows.
  return structured || !h->rest.empty() || slash != std::string_view::npos;
}

// Whether `next` is a callchain line, which makes a bare "comm tid" line before it a sample line.
bool IsFrameLine(std::string_view next) {
  return (!next.empty() && next.front() == '\t') || LooksLikeFrameLine(next);
}

}  // namespace

bool LooksLikePerfScript(std::string_view head) {
  size_t pos = 0;
  // Comment lines do not count: `perf script --header` starts with a block of 17-21 of them.
  for (int lines = 0; lines < 8 && pos < head.size();) {
    size_t end = head.find('\n', pos);
    std::string_view line = head.substr(pos, end == std::string_view::npos ? end : end - pos);
    pos = end == std::string_view::npos ? head.size() : end + 1;
    if (!line.empty() && line.front() == '#') continue;
    ++lines;
    if (Trim(line).empty() || line.front() == '\t') continue;
    Header h;
    if (ParseHeader(line, &h)) return !h.rest.empty() || h.time || h.event != "samples";
    return !h.comm.empty() && IsFrameLine(LineAt(head, pos));
  }
  return false;
}

Result<PerfScriptScan> PerfScriptParser::Parse(std::string_view text, PerfScriptSampleSink* sink,
                                               const FileBytes* release) {
  PerfScriptScan scan;
  std::map<std::string, uint32_t, std::less<>> event_index;
  Header header;
  bool open = false;
  // The open sample's first line and byte, and whether samples print their callchains a frame
  // a line (then a blank line ends each).
  size_t open_line = 0, open_offset = 0;
  bool chain_lines = false;
  size_t first_bad_line = 0;
  frames_read_.clear();

  // A frame line's parse by its bytes: the same line (the same address, symbol and module)
  // always parses alike, and a profile's stacks repeat their lines over and over. Context
  // markers are kept as such (no frame).
  const auto add_frame = [&](std::string_view line, PrintedFrame::Origin origin) {
    if (!frames_) return;
    std::string& key = frame_key_;
    FrameCacheKey(line, origin, &key);
    // Bounded: text of ever new unknown frames must not grow it without end.
    if (frame_cache_.size() >= kMaxCachedFrames) frame_cache_.clear();
    auto it = frame_cache_.find(key);
    if (it == frame_cache_.end()) {
      ChainEntry entry{0, false, true};
      if (!IsMarkerFrame(line)) {
        Frame f = ParseFrame(line, origin);
        entry = {frames_->InternPrinted(f.printed, f.module, f.function), f.printed.kernel, false};
      }
      it = frame_cache_.emplace(key, entry).first;
    }
    if (!it->second.marker) frames_read_.push_back(it->second);
  };
  const auto close = [&]() {
    if (!open) return;
    open = false;
    ++scan.samples;
    scan.any_pid |= header.has_pid;
    scan.max_cpu = std::max(scan.max_cpu, header.cpu);
    auto [ev, new_event] = event_index.try_emplace(std::string(header.event), scan.events.size());
    if (new_event) {
      EventDesc e;
      e.name = std::string(header.event);
      scan.events.push_back(std::move(e));
    }
    if (!sink) return;
    Sample& s = sample_;
    s = Sample{};
    s.pid = header.pid;
    s.tid = header.tid;
    s.cpu = header.cpu;
    s.time = header.time;
    s.period = header.period;
    s.event = ev->second;
    if (frames_read_.empty() && frames_) {
      PrintedFrame none;
      none.origin = PrintedFrame::Origin::kNone;
      none.symbol = none.module_path = "[unknown]";
      frames_read_.push_back(
          {frames_->InternPrinted(none, "[unknown]", "[unknown]"), false, false});
    }
    // The module tells kernel frames from user ones; context markers carry that into the
    // callchain, as they do in perf.data, wherever the context changes.
    if (!frames_read_.empty()) s.ip = frames_read_.front().address;
    for (size_t i = 0; i < frames_read_.size(); ++i) {
      if (i == 0 ? frames_read_[i].kernel : frames_read_[i].kernel != frames_read_[i - 1].kernel)
        s.callchain.push_back(frames_read_[i].kernel ? kContextKernel : kContextUser);
      s.callchain.push_back(frames_read_[i].address);
    }
    frames_read_.clear();
    sink->OnSample(s, header.comm.empty() ? std::string_view("[unknown]") : header.comm);
  };

  size_t pos = 0, line_no = 0, released = 0, last_line_offset = 0;
  bool last_line_in_sample = false;  // the text ends inside a line of the open sample
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    std::string_view line = text.substr(pos, end == std::string_view::npos ? end : end - pos);
    last_line_offset = pos;
    pos = end == std::string_view::npos ? text.size() : end + 1;
    ++line_no;
    if (end == std::string_view::npos) {
      // Cut short, so not read: even blanks ("\t    ") are the start of a frame's line, not the
      // empty line that would end the sample. It is the open sample's when samples print their
      // callchains a frame a line, or it starts with a callchain line's tab. (Not with a space:
      // one-line samples start with their comm right-aligned, "      tprof_demo 32177 ...", and
      // such a cut line is the next sample's, the open one whole.)
      last_line_in_sample = open && (chain_lines || (!line.empty() && line.front() == '\t'));
      break;
    }
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (Trim(line).empty()) {
      close();
      // What was read is not read again: give its pages back (a mapped file's pages count
      // toward the resident memory while they stay mapped).
      if (release && pos - released >= kReleaseBytes) {
        release->Release(text.data() + released, text.data() + pos);
        released = pos;
      }
      continue;
    }
    if (line.front() == '#') continue;  // perf script --header's block and other comments
    if (line.front() == '\t') {         // a callchain frame
      if (open) {
        add_frame(line, PrintedFrame::Origin::kCallchainLine);
        chain_lines = true;
      } else
        ++scan.skipped_lines;
      continue;
    }
    Header next;
    const bool sample_line =
        ParseHeader(line, &next) || (!next.comm.empty() && IsFrameLine(LineAt(text, pos)));
    // Frames indented with spaces, or not at all: an address first, where a sample line has
    // its comm.
    if (open && LooksLikeFrameLine(line) && (!sample_line || next.comm.empty())) {
      add_frame(line, PrintedFrame::Origin::kCallchainLine);
      chain_lines = true;
      continue;
    }
    if (sample_line) {
      close();
      header = next;
      open = true;
      open_line = line_no;
      open_offset = static_cast<size_t>(line.data() - text.data());
      if (!header.rest.empty()) add_frame(header.rest, PrintedFrame::Origin::kSampleLine);
      continue;
    }
    ++scan.skipped_lines;  // srcline, warnings, --show-*-events records
    if (!first_bad_line) first_bad_line = line_no;
  }
  // perf script ends every line, and every callchain with an empty line. Text that ends inside
  // a line was cut: a sample cut there would read as a whole one with a shorter stack, so it is
  // left out. Text whose last callchain has no empty line after it may be cut at a line's end or
  // only trimmed (FlameGraph's test files end so): its last sample is read, and a note says so.
  const bool line_cut = !text.empty() && text.back() != '\n';
  if (open && line_cut && last_line_in_sample) {
    scan.cut = "the text ends inside its last sample (line " + std::to_string(open_line) +
               ", byte " + std::to_string(open_offset) + "; " +
               std::to_string(text.size() - open_offset) + " bytes): that sample is left out";
    open = false;
    frames_read_.clear();
  } else if (line_cut) {
    scan.cut = "the text ends inside its last line (line " + std::to_string(line_no) + ", byte " +
               std::to_string(last_line_offset) + "), which is not read";
  } else if (open && chain_lines) {
    scan.unended =
        "the text ends without the empty line perf script prints after a sample (its "
        "last, at line " +
        std::to_string(open_line) + "): if it was cut, that sample's stack may be short";
  }
  scan.final_sample_unterminated = open;
  if (frames_) frames_->final_sample_unterminated = open;
  close();
  if (scan.samples == 0 && !scan.cut.empty())
    return Error("perf script text: no whole sample; " + scan.cut);
  if (scan.samples == 0)
    return Error(first_bad_line ? "perf script text: no samples; line " +
                                      std::to_string(first_bad_line) + " is not a sample line"
                                : std::string("perf script text: no samples"));
  return scan;
}

Metadata PerfScriptScan::ToMetadata() const {
  Metadata metadata;
  metadata.source = "perf script import";
  metadata.cpu_count = max_cpu + 1;
  metadata.clock = "perf_clock";
  metadata.pids_unknown = !any_pid;
  return metadata;
}

Result<TextProfile> ParsePerfScript(std::string_view text) {
  // The whole text's samples, kept.
  class Collector : public PerfScriptSampleSink {
   public:
    explicit Collector(TextProfile& p) : p_(p) {}
    void OnSample(Sample& sample, std::string_view comm) override {
      auto [c, new_comm] = comm_index_.try_emplace(std::string(comm), p_.comms.size());
      if (new_comm) p_.comms.emplace_back(comm);
      p_.sample_comm.push_back(c->second);
      p_.samples.push_back(std::move(sample));
    }

   private:
    TextProfile& p_;
    std::map<std::string, uint32_t, std::less<>> comm_index_;
  };
  TextProfile p;
  Collector collector(p);
  PerfScriptParser parser(&p.frames);
  auto scan = parser.Parse(text, &collector);
  if (!scan.ok()) return scan.error();
  p.events = scan->events;
  p.metadata = scan->ToMetadata();
  p.skipped_lines = scan->skipped_lines;
  p.cut = scan->cut;
  return p;
}

bool IsKernelModule(std::string_view module_path, uint64_t address, bool has_address) {
  if (module_path == "[unknown]") return has_address && IsKernelAddress(address);
  if (module_path.starts_with("[kernel.kallsyms]")) return true;
  std::string_view base = BaseName(module_path);
  if (base == "vmlinux" || base.starts_with("vmlinux-")) return true;
  for (std::string_view ko : {".ko", ".ko.xz", ".ko.gz", ".ko.zst"})
    if (base.ends_with(ko)) return true;
  if (module_path.size() > 2 && module_path.front() == '[' && module_path.back() == ']') {
    std::string_view name = module_path.substr(1, module_path.size() - 2);
    for (std::string_view user : {"vdso", "vsyscall", "vvar", "heap", "stack", "anon", "uprobes",
                                  "jit", "unknown", "guest"})
      if (name.starts_with(user)) return false;
    return true;  // a loaded kernel module: "[nf_conntrack_ipv4]"
  }
  return false;
}

}  // namespace tprof
