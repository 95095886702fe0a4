#include "views/function_profile_loader.h"

#include <sys/stat.h>

#include <algorithm>
#include <future>
#include <thread>

#include "views/opened_profile.h"
#include "views/time_range_read.h"

namespace tprof {

ProfileToCompare::ProfileToCompare(std::string path, std::unique_ptr<OpenedProfile> opened)
    : path_(std::move(path)), opened_(std::move(opened)) {}
ProfileToCompare::ProfileToCompare(ProfileToCompare&&) noexcept = default;
ProfileToCompare::~ProfileToCompare() = default;

Result<ProfileToCompare> ProfileToCompare::Open(const std::string& path,
                                                const ProfileLoadOptions& options) {
  auto opened =
      OpenedProfile::Open(path, {options.symfs, options.binaries, nullptr, options.messages});
  if (!opened.ok()) return opened.error();
  return ProfileToCompare(path, std::move(opened).value());
}

bool ProfileToCompare::records_user_context() const { return opened_->records_user_context(); }

Result<LoadedFunctionProfile> ProfileToCompare::Load(const ProfileLoadOptions& options) && {
  const std::unique_ptr<OpenedProfile> opened = std::move(opened_);
  if (options.credit_kernel_to_user) opened->CreditKernelWorkToUser();
  ProfileSource& source = opened->source();
  FunctionProfileBuilder builder(source.events(), opened->resolver(), options.inline_mode);
  auto read = ReadTimeRange(source, builder, time_option_, time_range_, path_);
  if (!read.ok()) return read.error();
  const SourceSummary* summary = &read->summary;
  LoadedFunctionProfile loaded;
  loaded.seconds = read->seconds;
  loaded.metadata = source.metadata();
  loaded.profile = builder.Finish();
  loaded.warning = summary->warning;
  loaded.kernel_credit = summary->kernel_credit;
  // The windows of a read group are credited to functions by the table's attribution, which
  // needs each sample's row as it comes: a second read, for such profiles only.
  if (!loaded.profile.read_groups.empty()) {
    auto table = ReportTableBuilder::Create(source.events(), opened->resolver(),
                                            {SortKey::kDso, SortKey::kSymbol}, SampleFilter{},
                                            loaded.metadata.start_timestamp, options.inline_mode);
    if (!table.ok()) return table.error().WithContext(path_);
    auto again = ReadTimeRange(source, **table, time_option_, time_range_, path_);
    if (!again.ok()) return again.error();
    loaded.function_table = (*table)->Finish();
  }
  if (!summary->complete)
    loaded.incomplete = summary->warning.empty() ? "the file was cut short" : summary->warning;
  else if (summary->samples == 0)
    loaded.incomplete = "it holds no samples";
  return loaded;
}

std::vector<Result<LoadedFunctionProfile>> LoadSideBySide(std::vector<ProfileToCompare> profiles,
                                                          const ProfileLoadOptions& options) {
  // Each read already keeps two threads busy (decoding, and the visitor's), so half as many
  // reads as cores run at once: on two cores one at a time, since two at once took the same
  // wall time for 1.17x the CPU (two 1M-sample profiles, pair by pair), and were faster only
  // where one read left a core idle (a profile whose addresses stayed unresolved: 0.80).
  const size_t at_once = std::max<size_t>(1, std::thread::hardware_concurrency() / 2);
  std::vector<Result<LoadedFunctionProfile>> loaded;
  loaded.reserve(profiles.size());
  for (size_t first = 0; first < profiles.size(); first += at_once) {
    std::vector<std::future<Result<LoadedFunctionProfile>>> reading;
    for (size_t i = first; i < std::min(profiles.size(), first + at_once); ++i)
      reading.push_back(std::async(std::launch::async, [&profile = profiles[i], &options] {
        return std::move(profile).Load(options);
      }));
    for (auto& read : reading) loaded.push_back(read.get());
  }
  return loaded;
}

Result<LoadedFunctionProfile> LoadFunctionProfile(const std::string& path,
                                                  const ProfileLoadOptions& options) {
  auto opened = ProfileToCompare::Open(path, options);
  if (!opened.ok()) return opened.error();
  return std::move(opened).value().Load(options);
}

std::vector<std::string> SplitProfileList(const std::string& arg) {
  struct stat st;
  if (::stat(arg.c_str(), &st) == 0 || arg.find(',') == std::string::npos) return {arg};
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= arg.size()) {
    size_t comma = arg.find(',', pos);
    if (comma == std::string::npos) comma = arg.size();
    if (comma > pos) out.push_back(arg.substr(pos, comma - pos));
    pos = comma + 1;
  }
  return out;
}

}  // namespace tprof
