// The self-describing parts of a perf.data file: event attributes (every ABI size) and the
// feature sections (host, CPU, command line, event names, groups, build-ids). In file mode these
// live in the header and sections; in pipe mode in HEADER_ATTR and HEADER_FEATURE records — the
// payloads are the same bytes, so one parser serves both.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/error.h"
#include "core/model/profile.h"
#include "core/perfdata/perf_data_format.h"

namespace tprof {

// A perf_event_attr in native byte order, zero past the size it was written with.
struct PerfAttr {
  uint32_t type = 0;
  uint32_t size = 0;
  uint64_t config = 0;
  uint64_t sample_period = 0;  // or sample_freq when `freq`
  uint64_t sample_type = 0;
  uint64_t read_format = 0;
  uint64_t flags = 0;  // the bitfield word: disabled, inherit, ..., freq, ..., sample_id_all
  uint64_t config1 = 0;
  uint64_t config2 = 0;
  uint64_t branch_sample_type = 0;
  uint64_t sample_regs_user = 0;
  uint32_t sample_stack_user = 0;
  uint64_t sample_regs_intr = 0;

  bool freq() const { return flags & perf_data::attr::kFlagFreq; }
  bool sample_id_all() const { return flags & perf_data::attr::kFlagSampleIdAll; }
};

// Reads an attribute from `bytes` (at most `bytes.size()` of it is the attribute). Fields the
// writer's ABI did not have are zero; fields newer than this reader knows are ignored.
PerfAttr ParsePerfAttr(std::string_view bytes, perf_data::ByteOrder order);
// The size an attribute says it has (its `size` field; 0 means the first ABI, 64 bytes).
uint32_t PerfAttrSize(std::string_view bytes, perf_data::ByteOrder order);

// perf's own name for an event it can name from the attribute alone ("cycles", "cpu-clock",
// "raw 0x1c2"); EVENT_DESC or EVENT_UPDATE give the real one when present.
std::string DefaultPerfEventName(const PerfAttr& attr);

struct PerfEventDescEntry {
  PerfAttr attr;
  std::string name;
  std::vector<uint64_t> ids;
};

struct PerfGroupDesc {
  std::string name;
  uint32_t leader = 0;
  uint32_t members = 0;
};

// Everything the feature sections said, in native form.
struct PerfFeatures {
  std::string hostname;
  std::string os_release;
  std::string perf_version;
  std::string arch;
  uint32_t cpus_online = 0;
  uint32_t cpus_available = 0;
  std::string cpu_desc;
  std::string cpu_id;  // "GenuineIntel,6,85,4" on x86, MIDR on Arm
  std::vector<std::string> cmdline;
  std::vector<PerfEventDescEntry> event_desc;
  std::vector<PerfGroupDesc> groups;
  uint64_t first_sample_time = 0;
  uint64_t last_sample_time = 0;
  // Build-ids by file name (raw bytes), from the BUILD_ID section or HEADER_BUILD_ID records.
  std::map<std::string, std::string> build_ids;
  // Tracepoint events by id (a tracepoint attribute's config): "system:event", from the
  // tracing data's event formats (HEADER_TRACING_DATA feature or record).
  std::map<uint64_t, std::string> tracepoint_names;
  // simpleperf's META_INFO: "event_type_info" (lines "name,type,config"), "trace_offcpu" ...
  std::map<std::string, std::string> simpleperf_meta;
};

// simpleperf's name for the event of an attribute, from META_INFO's event_type_info; empty when
// it names none.
std::string SimpleperfEventName(const PerfFeatures& features, uint32_t type, uint64_t config);

// Reads the event formats of perf's tracing data (trace-event-read.c's layout: header page and
// event, ftrace formats, then per system its name and formats with "name:" and "ID:" lines) into
// tracepoint_names. Best effort: a malformed block leaves the names found before it.
void ParseTracingData(std::string_view data, PerfFeatures* out);

// Parses one feature section; unknown features are ignored. Errors name what was malformed;
// the caller adds the offset.
Status ParsePerfFeature(uint32_t feature, std::string_view bytes, perf_data::ByteOrder order,
                        PerfFeatures* out);

// Parses the body of one build-id event (the BUILD_ID section is a sequence of them, and pipe
// mode sends each as a HEADER_BUILD_ID record). `misc` is the record's misc field.
Status ParsePerfBuildIdEvent(uint16_t misc, std::string_view body, perf_data::ByteOrder order,
                             PerfFeatures* out);

// Fills the model's host description from what the features said.
void ApplyPerfFeatures(const PerfFeatures& features, Metadata* metadata);

}  // namespace tprof
