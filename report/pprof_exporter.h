// pprof's profile.proto (github.com/google/pprof, proto/profile.proto), gzipped, from a stack
// profile: one sample type per event (the summed period, with its unit), one Location per
// distinct address with its inlined functions as several Lines (innermost first, as the proto
// says), Mappings with their build-ids in hex, Functions with demangled and mangled names and
// source files. `pprof -top out.pb.gz` and `go tool pprof` read it.
#pragma once

#include <string>

#include "core/analysis/stack_profile.h"
#include "core/base/error.h"
#include "core/model/profile.h"

namespace tprof {

// The unit of an event's period: "nanoseconds" for the software clocks, else "count".
std::string PeriodUnit(const EventDesc& event);

// The serialized Profile message, not compressed.
std::string EncodePprof(const Metadata& metadata, const StackProfile& profile);

// EncodePprof gzipped, as pprof files are stored.
Result<std::string> ExportPprof(const Metadata& metadata, const StackProfile& profile);

}  // namespace tprof
