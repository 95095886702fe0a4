// Opens any profile tprof reads with the resolver stack every command uses: the profile's
// embedded symbols (or a text input's names) first, because they name what was recorded even
// where the binaries are gone or rebuilt; then the binaries on this machine, local copies named
// with --binary, or a --symfs tree; and DWARF unwinding for --call-graph dwarf recordings.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/model/frame_resolver.h"
#include "core/source/profile_source.h"
#include "symbolize/binary_locator.h"
#include "symbolize/dwarf_unwinder.h"
#include "symbolize/symbolizer.h"
#include "views/view_messages.h"

namespace tprof {

class OffCpuReasons;

struct ProfileOpenOptions {
  std::string symfs;
  std::vector<std::string> binaries;
  std::function<void(const std::string&)> on_note;  // symbolizer notes; null: gathered
  // Where the input's unwinding statistics (notice: "INPUT: unwinding: LINE", once, on the first
  // read that unwinds) and the symbolizer's gathered notes (symbol_note) are said; unset ones
  // are dropped.
  ViewMessages messages;
  // Kernel samples of user threads read as the user function that entered the kernel
  // (KernelEntryCredit); false: kernel functions are rows of their own, as in perf.
  bool credit_kernel_to_user = false;
  // Every "no usable file for MODULE" note on its own line; else one line when the profile is
  // closed, with the count and the first few (a profile from another machine lacks dozens).
  bool verbose = false;
  // The latency view (core/analysis/latency_weights.h): on-CPU samples weighted by 1 / (threads
  // of their process running then). Needs an off-CPU profile: Open fails without one.
  bool latency = false;
  // The off-cpu event split by why each thread waited (core/analysis/off_cpu_reasons.h): one more
  // event per reason, "off-cpu:lock" and so on. Needs an off-CPU profile: Open fails without one.
  bool off_cpu_reasons = false;
  // The same where the profile has an off-cpu event, and nothing (no error) where it has none:
  // a flame graph page's timeline colours the off-CPU time by its reason.
  bool off_cpu_reasons_when_present = false;
};

// The symbolizer's notes, said through `say`, those about modules without a usable file
// gathered into one summary line unless verbose.
class ModuleNotes {
 public:
  ModuleNotes(bool verbose, std::function<void(const std::string&)> say)
      : verbose_(verbose), say_(std::move(say)) {}
  ~ModuleNotes() { Flush(); }
  void Add(const std::string& note);
  void Flush();

 private:
  bool verbose_;
  std::function<void(const std::string&)> say_;
  std::vector<std::string> missing_;  // modules
};

// Owns the source and the resolvers it reads through; they refer to each other, so the object
// stays where it was made.
class OpenedProfile {
 public:
  static Result<std::unique_ptr<OpenedProfile>> Open(const std::string& path,
                                                     const ProfileOpenOptions& options);
  OpenedProfile(const OpenedProfile&) = delete;
  OpenedProfile& operator=(const OpenedProfile&) = delete;

  // The input; the first read that unwinds stack copies says its statistics (messages.notice).
  ProfileSource& source() { return *reporting_; }
  // The input as recorded, kernel samples not credited and the off-cpu event not split: for
  // views that read the kernel's frames (why a thread was off the CPU).
  ProfileSource& recorded_source() { return *source_; }
  // With ProfileOpenOptions::off_cpu_reasons, the reasons of the whole profile's off-CPU time,
  // read when it was opened (null otherwise: read recorded_source() for them).
  const OffCpuReasons* classified_off_cpu() const { return classified_off_cpu_; }
  // Embedded symbols when the profile has them, else the live symbolizer.
  FrameResolver& resolver();
  // The live symbolizer (through --binary/--symfs when given), for disassembly and such.
  FrameResolver& live_resolver();
  // The DWARF of the binary a recorded module stands for (a located local copy first); null
  // when none is usable. For views that read code, such as annotate.
  DwarfModule* OpenModule(const std::string& module, const std::string& build_id);
  // Whether kernel samples can be credited to the user function that entered the kernel: the
  // profile records callchains or the user pc (core/model/kernel_entry_credit.h).
  bool records_user_context() const;
  // From now on source() reads as ProfileOpenOptions::credit_kernel_to_user does, for callers
  // that decide only once the profile is open (a comparison, after seeing every input).
  void CreditKernelWorkToUser();

 private:
  explicit OpenedProfile(const ProfileOpenOptions& options);
  // source() over source_: credited when asked, seen through the statistics printer.
  void ChainSources(bool credit_kernel_to_user);

  ModuleNotes notes_;      // first: the symbolizer's notes land here until the end
  BinaryLocator locator_;  // the unwinder asks it for --binary files
  DwarfUnwinder unwinder_;
  Symbolizer symbolizer_;
  LocatingResolver located_;
  // What resolver() and live_resolver() hand out: a report resolves on threads of its own.
  SynchronizedFrameResolver shared_live_;
  std::unique_ptr<SynchronizedFrameResolver> shared_embedded_;
  std::unique_ptr<ProfileSource> source_;
  std::unique_ptr<ProfileSource> reasons_;  // source_ with the off-cpu event split, when asked
  const OffCpuReasons* classified_off_cpu_ = nullptr;  // reasons_'s first pass
  std::unique_ptr<ProfileSource> crediting_;  // source_ with kernel samples credited, when asked
  std::unique_ptr<ProfileSource> latency_;    // ... weighted by the threads running, when asked
  std::optional<uint32_t> latency_off_cpu_event_;  // the latency view's off-cpu event, when asked
  std::unique_ptr<ProfileSource> reporting_;       // the above seen through the statistics printer
  ViewMessages messages_;                          // for the statistics
  std::string path_;
};

}  // namespace tprof
