// What a view says besides its output: notes, what an input lost when it was read, the files it
// wrote, and lines of its own (notices: a fallback taken, a warning). The view calls these; the
// command prints them in its own format ("tprof CMD: note:
// ..."), a test collects them. Unset ones are dropped.
#pragma once

#include <functional>
#include <string>

namespace tprof {

struct ViewMessages {
  std::function<void(const std::string& note)> note;
  // A truncated file, dropped samples: said once per input, never silent.
  std::function<void(const std::string& input, const std::string& warning)> input_warning;
  // A file written, as a statement: "flame graph of cycles written to out.html".
  std::function<void(const std::string& what)> wrote;
  // A file written and what it holds, as a summary (perf's "[ perf record: ... ]" lines): "wrote
  // pprof profile out.pb.gz: 12 stacks, 40 locations".
  std::function<void(const std::string& what)> summary;
  // A line of the view's own, said as it is: "burst sampling: kernel mode", a warning that
  // samples were lost, an input's unwinding statistics.
  std::function<void(const std::string& text)> notice;
  // A note about the binaries behind an input (modules without a usable file, gathered into one
  // line; a vdso of another kernel), which the program says as its own ("tprof: note: ...").
  std::function<void(const std::string& note)> symbol_note;

  void Note(const std::string& text) const {
    if (note) note(text);
  }
  void InputWarning(const std::string& input, const std::string& warning) const {
    if (input_warning && !warning.empty()) input_warning(input, warning);
  }
  void Wrote(const std::string& what) const {
    if (wrote) wrote(what);
  }
  void Summary(const std::string& what) const {
    if (summary) summary(what);
  }
  void Notice(const std::string& text) const {
    if (notice) notice(text);
  }
  void SymbolNote(const std::string& note) const {
    if (symbol_note) symbol_note(note);
  }
};

// How a view that did not fail ended: over its whole input, or over an input read only in part
// (the input warning said what was lost), which a command exits 4 for; and whether the filters
// left anything to show, which the command says in the words of its options.
struct ViewOutcome {
  bool complete = true;
  // A --time range kept no sample: nothing was written (an answer over nothing would read as
  // "nothing ran").
  bool time_range_empty = false;
  // The filters kept no sample (the output, if any, is empty).
  bool nothing_kept = false;
};

}  // namespace tprof
