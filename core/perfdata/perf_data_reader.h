// Reads a Linux perf.data file — file mode or pipe mode, written on a machine of either byte
// order, by any perf from 3.x on — into the profile model: metadata from the feature sections,
// one EventDesc per attribute, and the records in the order perf itself delivers them (sorted by
// time within the FINISHED_ROUND windows, zstd-compressed records expanded).
//
// Every offset and size in the input is checked: a corrupt or truncated file gives an error that
// names the byte offset of the bad record or section, never a crash, a hang or a huge allocation.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/base/error.h"
#include "core/base/file_bytes.h"
#include "core/model/profile.h"
#include "core/model/user_stack_unwinder.h"
#include "core/perfdata/perf_data_features.h"
#include "core/perfdata/perf_record_parser.h"

namespace tprof {

struct PerfDataReadSummary {
  uint64_t records = 0;             // kernel records delivered (after decompression)
  uint64_t samples = 0;             // samples delivered
  uint64_t unknown_id_samples = 0;  // samples whose id names no event; dropped, as perf does
  uint64_t skipped_records = 0;     // records of types the model has no place for
  // Records of kernel types this build does not know (a newer kernel's, or damage), skipped,
  // and the first one's offset.
  uint64_t unknown_type_records = 0;
  uint64_t first_unknown_type_offset = 0;
  uint64_t compressed_records = 0;  // COMPRESSED/COMPRESSED2 records expanded
  uint64_t lbr_stitched = 0;        // --call-graph lbr samples whose user stack came from the LBR
  uint64_t lbr_unstitched = 0;      // such samples with a user context but no call-stack entries
  uint64_t aux_trace_records = 0;   // AUXTRACE records: hardware trace, not decoded
  uint64_t aux_trace_bytes = 0;     // the trace data they carry
  uint64_t aux_records = 0;         // AUX records: a trace buffer filled (its data in AUXTRACE)
  UnwindStatistics unwinding;       // samples with stack copies, by how far they were walked
  // simpleperf --trace-offcpu: switches read as off-CPU intervals, and those without an end
  // (no later sample of their thread), which are not counted.
  uint64_t off_cpu_intervals = 0;
  uint64_t off_cpu_unended = 0;
  // Where reading stopped short of the data's end: a record cut off by the file's end or one
  // whose header makes no sense. Empty `damage` when the data was read to its end.
  std::string damage;           // why, with the byte offset
  uint64_t damage_offset = 0;   // the first byte not read
  uint64_t bytes_not_read = 0;  // from there to the data section's declared end
};

class PerfDataReader {
 public:
  // True when the bytes start like a perf.data file or stream (either byte order).
  static bool LooksLikePerfData(std::string_view first_bytes);

  // Reads the header, the attributes and the features. `bytes` must outlive the reader.
  static Result<PerfDataReader> Open(std::string_view bytes);

  const Metadata& metadata() const { return metadata_; }
  const std::vector<EventDesc>& events() const { return events_; }
  const PerfFeatures& features() const { return features_; }
  bool pipe_mode() const { return pipe_mode_; }
  // The file ends inside its data section (a recording cut short): the data is read up to the
  // file's end, and the feature sections, which follow the data, are missing. 0: it does not.
  uint64_t declared_data_end() const { return truncated_ ? declared_data_end_ : 0; }
  // The file ends among the feature sections after the data: the features from there on
  // (event names, build ids, the command line, ...) are missing. 0: it does not.
  uint64_t features_cut_at() const { return features_cut_at_; }
  bool byte_swapped() const { return order_.swapped(); }

  // Streams every record to the visitor. With an unwinder, samples that carry a user stack copy
  // (--call-graph dwarf) get its frames appended to their callchain. `file`: the bytes the
  // reader was opened on, whose pages are given back as the records in them are delivered.
  Result<PerfDataReadSummary> ReadRecords(RecordVisitor& visitor,
                                          UserStackUnwinder* unwinder = nullptr,
                                          const FileBytes* file = nullptr) const;

 private:
  friend class PerfDataRecordPump;
  struct EventInfo {
    PerfAttr attr;
    PerfRecordLayout layout;
    std::string name;  // from EVENT_DESC / EVENT_UPDATE; empty: use the default
  };

  PerfDataReader() = default;
  Status ReadFileHeader();
  Status ReadPipeHeader();
  // Walks the top-level records once for what pipe mode (and ID_INDEX) carries in-band.
  Status ScanInBandHeaders();
  Status AddAttr(std::string_view attr_bytes, const std::vector<uint64_t>& ids);
  void AddId(uint64_t id, uint32_t event);
  Status Finalize();
  // Groups from the ids of the first group read of each event that reads its group in samples
  // (PERF_SAMPLE_READ with PERF_FORMAT_GROUP | PERF_FORMAT_ID), for files without GROUP_DESC
  // (simpleperf's --add-counter). The leader is the sampled event, its members the ids' events.
  void InferGroupsFromReads();

  // The event a record belongs to, perf's way: the only event, the id's event, the first event
  // when the record carries no id; -1 when the id names no event.
  int32_t EventOfSample(const uint8_t* body, size_t size) const;
  int32_t EventOfId(uint64_t id) const;
  // A --switch-events recording with a sample at every switch out: sets switch_event_ and
  // appends the off-cpu event.
  void FindSwitchEvent();
  // The record's timestamp, or UINT64_MAX when it has none.
  uint64_t RecordTime(uint32_t type, const uint8_t* body, size_t size) const;

  std::string_view bytes_;
  perf_data::ByteOrder order_;
  bool pipe_mode_ = false;
  uint64_t data_begin_ = 0;
  uint64_t data_end_ = 0;
  bool truncated_ = false;
  uint64_t declared_data_end_ = 0;
  uint64_t features_cut_at_ = 0;
  std::vector<EventInfo> infos_;
  std::unordered_map<uint64_t, uint32_t> id_to_event_;
  std::unordered_map<uint64_t, std::string> names_by_id_;  // EVENT_UPDATE names
  int id_pos_ = -1;             // u64 index of the id in a sample body, -1: none
  int is_pos_ = -1;             // u64 index of the id from the end of a sample_id block, -1: none
  int32_t off_cpu_event_ = -1;  // simpleperf --trace-offcpu's sched_switch event, -1: none
  // perf record --switch-events with a sample at every switch out (SwitchRecordOffCpu): that
  // event, and the off-cpu event appended after the file's; -1: none.
  int32_t switch_event_ = -1;
  int32_t switch_off_cpu_event_ = -1;
  // perf record --off-cpu's "offcpu-time" event, read as the off-cpu event; -1: none.
  int32_t summed_off_cpu_event_ = -1;
  PerfFeatures features_;
  Metadata metadata_;
  std::vector<EventDesc> events_;
};

}  // namespace tprof
