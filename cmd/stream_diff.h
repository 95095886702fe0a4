// `tprof diff --stream`: the hot-stream (and basic-block) comparison of two profiles, kept apart
// from the function diff so that cmd/diff_cmd.cpp only hands over to it. Also the profile loading
// that `tprof stream` shares.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "core/analysis/hot_streams.h"
#include "core/base/error.h"

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
                                        const std::string& command, bool* complete = nullptr);

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

// Registers the stream-diff options on `app`. With `shared`, also the ones a diff command has
// anyway (positional OLD NEW, --symfs, --binary, --json); a diff command that registers those
// itself passes false and copies their values into the options before RunStreamDiff.
void AddStreamDiffOptions(CLI::App& app, StreamDiffOptions& options, bool shared);

// Runs the comparison, prints it on standard output; returns the exit code.
int RunStreamDiff(const StreamDiffOptions& options);

}  // namespace tprof
