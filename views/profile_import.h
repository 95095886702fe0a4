// `tprof import`: a perf.data file or stream converted into a .tprof profile, with the symbols
// embedded so that it travels, and the mappings of binaries found here (--symfs, --binary)
// pointed at the local copies so that it symbolizes here.
#pragma once

#include <string>
#include <vector>

#include "core/base/error.h"
#include "views/view_messages.h"

namespace tprof {

struct ImportRequest {
  std::string input;   // a path, or "-" for standard input
  std::string output;  // a path; a device, FIFO or socket is written once the profile is whole
  std::string symfs;
  std::vector<std::string> binaries;
};

// Whole inputs only: an input read in part is an error, and nothing is left behind (unlike a
// recording cut short, the input is still there to convert again). Says what the input lost
// (messages.input_warning), the summary, and the unwinding statistics (messages.notice).
Status ImportProfile(const ImportRequest& request, const ViewMessages& messages);

}  // namespace tprof
