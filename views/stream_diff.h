// `tprof diff --stream`: the hot-stream (and basic-block) comparison of two profiles, and the
// profile loading that `tprof stream` shares.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "core/analysis/hot_streams.h"
#include "core/base/error.h"
#include "views/view_messages.h"

namespace tprof {

// Where the recorded binaries are, and how streams are cut.
struct StreamInputOptions {
  std::string symfs;
  std::vector<std::string> binaries;
  HotStreamOptions streams;
  std::string time;  // --time as report takes it (ParseTimeRange); empty: the whole profile
};

// Reads a profile (any format ProfileSource knows) into its hot streams and blocks, naming
// addresses from the profile's embedded symbols first, then the binaries. `complete` (when
// given) is cleared when the input could be read only in part (the warning says what was lost).
Result<StreamProfile> LoadStreamProfile(const std::string& path, const StreamInputOptions& options,
                                        const ViewMessages& messages, bool* complete = nullptr);

struct StreamDiffOptions {
  std::string old_path;
  std::string new_path;
  StreamInputOptions input;
  std::string before_dir;  // the old profile's source tree
  std::string after_dir;   // the new profile's
  std::vector<std::string> changed_functions;
  size_t top = 10;
  bool blocks = false;
  bool json = false;
};

// Compares the two profiles and writes the comparison (text or JSON) on `out`. --before and
// --after go together: the caller checks that.
Result<ViewOutcome> WriteStreamDiff(const StreamDiffOptions& options, std::ostream& out,
                                    const ViewMessages& messages);

}  // namespace tprof
