#include "report/stackcollapse_folded.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <sstream>
#include <vector>

#include "core/model/profile.h"

namespace tprof {
namespace {

std::string_view AfterLastSlash(std::string_view path) {  // Perl's s/.*\///
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// m/\.\(.*\)\./: a Go method such as "net/http.(*Client).Do", whose parentheses are the name's.
bool LooksLikeGoMethod(std::string_view f) {
  size_t open = f.find(".(");
  if (open == std::string_view::npos) return false;
  size_t close = f.rfind(").");
  return close != std::string_view::npos && close >= open + 2;
}

// s/\((?!anonymous namespace\)).*//: everything from the first '(' that does not open
// "(anonymous namespace)".
void CutParameters(std::string& f) {
  for (size_t open = f.find('('); open != std::string::npos; open = f.find('(', open + 1)) {
    if (std::string_view(f).substr(open + 1).starts_with("anonymous namespace)")) continue;
    f.resize(open);
    return;
  }
}

// m:/tmp/perf-\d+\.map:
bool IsPerfMap(std::string_view module) {
  for (size_t at = module.find("/tmp/perf-"); at != std::string_view::npos;
       at = module.find("/tmp/perf-", at + 1)) {
    size_t i = at + 10, digits = i;
    while (i < module.size() && std::isdigit(static_cast<unsigned char>(module[i]))) ++i;
    if (i > digits && module.substr(i).starts_with(".map")) return true;
  }
  return false;
}

// m/(^\[|vmlinux$)/ && !~ /unknown/
bool IsKernelByName(std::string_view module) {
  return (module.starts_with("[") || module.ends_with("vmlinux")) &&
         module.find("unknown") == std::string_view::npos;
}

std::string Hex(uint64_t address) {  // as perf script prints addresses: lower case, no 0x
  char text[24];
  std::snprintf(text, sizeof text, "%llx", static_cast<unsigned long long>(address));
  return text;
}

}  // namespace

std::vector<std::string> StackcollapseNames(std::string_view symbol, std::string_view module_path,
                                            std::string_view address, std::string_view root,
                                            const StackcollapseOptions& options) {
  std::vector<std::string> names;
  if (symbol.starts_with("(")) return names;  // process names in some perf versions

  // split /\->/: Perl's split drops the empty fields at the end ("Type::operator->" is one
  // field, "->" none) and keeps the others ("->f" is "" and "f").
  std::vector<std::string_view> fields;
  for (size_t pos = 0;;) {
    const size_t arrow = symbol.find("->", pos);
    fields.push_back(symbol.substr(pos, arrow == std::string_view::npos ? arrow : arrow - pos));
    if (arrow == std::string_view::npos) break;
    pos = arrow + 2;
  }
  while (!fields.empty() && fields.back().empty() && !symbol.empty()) fields.pop_back();
  for (std::string_view field : fields) {
    std::string f(field);
    // No symbol printed ("7f1e2215d058  (/lib/libc-2.15.so)"): the script's frame pattern
    // /^\s*(\w+)\s*(.+) \((\S*)\)/ takes the space before the '(' for the name.
    if (symbol.empty()) f.assign(1, ' ');
    if (f == "[unknown]") {
      f = module_path != "[unknown]" ? std::string(AfterLastSlash(module_path)) : "unknown";
      f = options.addresses ? "[" + f + " <" + std::string(address) + ">]" : "[" + f + "]";
    }
    std::replace(f.begin(), f.end(), ';', ':');
    if (!LooksLikeGoMethod(f)) CutParameters(f);
    std::erase_if(f, [](char c) { return c == '"' || c == '\''; });
    // Java frames "Lorg/pkg/Class;.method" (';' is ':' by now) lose their 'L' when the root is
    // exactly "java": not under --pid or --tid ("java-?"), as stackcollapse-perf.pl tests
    // $pname eq "java" (its test results at commit 2b0ba56 show it).
    if (root == "java" && f.find('/') != std::string::npos && f.starts_with("L")) f.erase(0, 1);
    // The marks, each "unless $func =~ m/\_\[i\]/" (and [j]) as the script has them: a name
    // that holds the mark already is not marked twice; _[k] has no such test.
    if (!names.empty()) {
      if (f.find("_[i]") == std::string::npos) f += "_[i]";
    } else if (options.mark_kernel && IsKernelByName(module_path)) {
      f += "_[k]";
    } else if (options.mark_jit && IsPerfMap(module_path)) {
      if (f.find("_[j]") == std::string::npos) f += "_[j]";
    }
    names.push_back(std::move(f));
  }
  return names;
}

void StackcollapseFolder::OnSample(const Sample& sample) {
  last_sample_folded_ = false;
  if (sample.event != options_.event) return;
  std::string root = space().ThreadName(sample.pid, sample.tid);
  const std::string pid = options_.pids_unknown ? "?" : std::to_string(sample.pid);
  if (options_.root == StackcollapseOptions::Root::kPid) root += "-" + pid;
  if (options_.root == StackcollapseOptions::Root::kTid)
    root += "-" + pid + "/" + std::to_string(sample.tid);
  std::replace(root.begin(), root.end(), ' ', '_');
  // Leaf first: a printed frame's cached names, or null for the next of `resolved_names` (whose
  // order is the frames').
  std::vector<const std::vector<std::string>*> frames;
  std::vector<std::vector<std::string>> resolved_names;
  ForEachFrameAddress(sample, [&](uint64_t address, bool kernel) {
    const PrintedFrame* printed = printed_ ? printed_->Printed(address) : nullptr;
    if (printed) {
      // stackcollapse-perf reads callchain lines only: a frame on the sample line is not one.
      if (printed->origin == PrintedFrame::Origin::kCallchainLine)
        frames.push_back(&PrintedNames(address, *printed, root));
      return true;
    }
    // A frame tprof resolved itself (perf.data, .tprof): its module's name stands for the path,
    // bracketed for kernel code so that --kernel marks it.
    ResolvedFrame resolved =
        resolver_.ResolveInProcess(sample.pid, space().Find(sample.pid, address), address);
    std::string module = resolved.module.empty() ? "[unknown]" : resolved.module;
    if (kernel && !module.starts_with("[")) module = "[" + module + "]";
    std::string symbol = resolved.resolved ? resolved.function : "[unknown]";
    if (options_.expand_inlined && resolved.resolved && resolved.frames.size() > 1) {
      symbol.clear();
      for (auto f = resolved.frames.rbegin(); f != resolved.frames.rend(); ++f)
        symbol += (symbol.empty() ? "" : "->") + f->function;
    }
    resolved_names.push_back(StackcollapseNames(symbol, module, Hex(address), root, options_));
    frames.push_back(nullptr);
    return true;
  });
  std::string stack = root;
  auto resolved = resolved_names.rbegin();
  for (auto frame = frames.rbegin(); frame != frames.rend(); ++frame)
    for (const std::string& name : *frame ? **frame : *resolved++)
      stack.append(1, ';').append(name);
  // The script counts the period printed on the sample line (1 where none is printed, which
  // the text parser gives every such sample).
  stacks_[stack] += sample.period;
  last_stack_ = std::move(stack);
  last_period_ = sample.period;
  last_sample_folded_ = true;
}

const std::vector<std::string>& StackcollapseFolder::PrintedNames(uint64_t address,
                                                                  const PrintedFrame& printed,
                                                                  std::string_view root) {
  // Of the root, the names read only whether it starts with "java" (Java signatures tidied).
  auto& cache = printed_names_[root.starts_with("java") ? 1 : 0];
  const size_t slot = (address - NamedFrameTable::kBase) / NamedFrameTable::kStride;
  if (slot >= cache.size()) cache.resize(slot + 1);
  if (!cache[slot])
    cache[slot] = std::make_unique<std::vector<std::string>>(StackcollapseNames(
        printed.symbol, printed.module_path, Hex(printed.address), root, options_));
  return *cache[slot];
}

void StackcollapseFolder::Render(std::ostream& out) const {
  // The script saves a stack when it reads the blank line after it: a last sample with none
  // after it is never saved.
  const bool drop_last = printed_ && printed_->final_sample_unterminated && last_sample_folded_;
  std::vector<const std::pair<const std::string, uint64_t>*> sorted;
  sorted.reserve(stacks_.size());
  for (const auto& entry : stacks_) sorted.push_back(&entry);
  std::sort(sorted.begin(), sorted.end(), [](const auto* a, const auto* b) {
    return a->first < b->first;  // bytewise, as Perl's sort
  });
  std::string line;
  for (const auto* entry : sorted) {
    uint64_t n = entry->second;
    if (drop_last && entry->first == last_stack_) n -= last_period_;
    if (n == 0) continue;
    line.assign(entry->first).append(1, ' ').append(std::to_string(n)).append(1, '\n');
    out.write(line.data(), static_cast<std::streamsize>(line.size()));
  }
}

std::string StackcollapseFolder::Render() const {
  std::ostringstream out;
  Render(out);
  return std::move(out).str();
}

}  // namespace tprof
