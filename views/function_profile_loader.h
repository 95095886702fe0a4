// Reads any profile tprof understands into a FunctionProfile, symbolized as `tprof report` does:
// embedded symbols (or a text input's names) first, then the binaries on this machine, local
// copies named with --binary, or a --symfs tree. Shared by the commands that compare profiles.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/analysis/function_profile.h"
#include "core/analysis/report_table.h"
#include "core/base/error.h"
#include "core/model/kernel_entry_credit.h"
#include "core/model/profile.h"
#include "views/view_messages.h"

namespace tprof {

class OpenedProfile;

// A side of a diff named as "a,b,c": three profiles (repeated runs), unless a file of that very
// name exists.
std::vector<std::string> SplitProfileList(const std::string& arg);

struct ProfileLoadOptions {
  std::string symfs;
  std::vector<std::string> binaries;
  InlineMode inline_mode = InlineMode::kInnermost;
  // Kernel samples count for the user function that entered the kernel (KernelEntryCredit), as
  // in `tprof report`; a comparison sets it only when every input records a user context.
  bool credit_kernel_to_user = false;
  // Where each input's unwinding statistics and the symbolizer's gathered notes are said
  // (ProfileOpenOptions::messages).
  ViewMessages messages;
};

struct LoadedFunctionProfile {
  Metadata metadata;
  FunctionProfile profile;
  std::string warning;  // one line (e.g. the input was cut short); empty when none
  // Why the profile cannot stand for the run it recorded (cut short, no samples); empty when
  // it can. A gate over such a profile fails rather than judge it.
  std::string incomplete;
  // Set when kernel work was credited (ProfileLoadOptions::credit_kernel_to_user).
  std::optional<KernelCreditStatistics> kernel_credit;
  // The time range read (ProfileToCompare::LimitToTime) in seconds; empty: the whole profile.
  std::string seconds;
  // For a profile with a leader-sampled group: its rows by (dso, sym) with the group's windows
  // credited as `tprof report` credits them, for the metrics they give (SumWindowRatios).
  std::optional<ReportTable> function_table;
};

// A profile opened, not yet read: a comparison opens every input first, to decide how to read
// them all alike.
class ProfileToCompare {
 public:
  // Errors carry the path.
  static Result<ProfileToCompare> Open(const std::string& path, const ProfileLoadOptions& options);
  ProfileToCompare(ProfileToCompare&&) noexcept;
  ~ProfileToCompare();

  const std::string& path() const { return path_; }
  // Every event that samples records a callchain or the user pc (see RecordsUserContext).
  bool records_user_context() const;
  // Load reads only the samples within `range` (--time's forms), given as `option`: a range
  // that holds none of them is an error (two ranges of one run compared: tprof diff --old-time).
  void LimitToTime(std::string option, std::string range) {
    time_option_ = std::move(option);
    time_range_ = std::move(range);
  }
  // Reads the profile once, and closes it: a comparison of many runs holds one open at a time.
  Result<LoadedFunctionProfile> Load(const ProfileLoadOptions& options) &&;

 private:
  ProfileToCompare(std::string path, std::unique_ptr<OpenedProfile> opened);
  std::string path_;
  std::unique_ptr<OpenedProfile> opened_;
  std::string time_option_, time_range_;
};

// Reads every profile, several at once where the machine has the cores, each on a thread of its
// own (they share nothing: each has its own resolver), and returns what each gave, in their
// order.
std::vector<Result<LoadedFunctionProfile>> LoadSideBySide(std::vector<ProfileToCompare> profiles,
                                                          const ProfileLoadOptions& options);

// Opens and reads one profile. Errors carry the path.
Result<LoadedFunctionProfile> LoadFunctionProfile(const std::string& path,
                                                  const ProfileLoadOptions& options);

}  // namespace tprof
