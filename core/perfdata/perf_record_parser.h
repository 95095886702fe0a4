// Parses records in the kernel's perf_event ABI (PERF_RECORD_*) into the profile model. Shared by
// live recording (records from the ring buffer) and the perf.data importer (records from a file),
// so both read the same bytes the same way. Every read is bounds-checked: the input may be a
// corrupt file.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "core/base/error.h"
#include "core/model/profile.h"

namespace tprof {

// What the attribute of an event says about the layout of its records.
struct PerfRecordLayout {
  uint64_t sample_type = 0;
  uint64_t read_format = 0;
  bool sample_id_all = false;
  bool branch_hw_index = false;  // branch_sample_type has PERF_SAMPLE_BRANCH_HW_INDEX
  uint32_t regs_user_count = 0;  // popcount of sample_regs_user
  uint32_t regs_intr_count = 0;  // popcount of sample_regs_intr
  // perf record --off-cpu's offcpu-time event since perf's 2025 rework ("dump off-cpu samples
  // in BPF"): the sample's thread, off-CPU nanoseconds and user stack travel in its RAW data
  // (u64 thread word, u64 period, u64 nr, nr ips, u64 cgroup, as perf's __set_offcpu_sample
  // reads them), the sample's own fields being those of whichever task ran the BPF program.
  bool off_cpu_in_raw = false;
};

// A parsed PERF_RECORD_SAMPLE: the model's sample plus the fields the model does not keep.
struct ParsedPerfSample {
  Sample sample;
  uint64_t id = 0;  // event id (PERF_SAMPLE_ID or IDENTIFIER), 0 when absent
  uint64_t addr = 0;
  uint64_t stream_id = 0;
  uint64_t weight = 0;
  uint64_t data_src = 0;
  uint64_t transaction = 0;
  uint64_t phys_addr = 0;
  std::vector<uint64_t> counter_ids;  // per group member, when read_format has ID
  uint64_t regs_user_abi = 0;
  std::vector<uint64_t> regs_user;
  std::string_view stack_user;  // points into the parsed record
  uint64_t stack_user_dynamic_size = 0;
};

// The sample_id block that follows non-sample records when sample_id_all is set.
struct PerfSampleId {
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint64_t time = 0;
  uint64_t id = 0;
  uint32_t cpu = 0;
  bool has_time = false;
};

// The size of the sample_id block that sample_type gives non-sample records (sample_id_all).
size_t SampleIdSize(uint64_t sample_type);

// Parses the body of a PERF_RECORD_SAMPLE (the bytes after the 8-byte perf_event_header).
Status ParsePerfSample(const uint8_t* body, size_t size, const PerfRecordLayout& layout,
                       ParsedPerfSample* out);

// Reads the event id of a sample without parsing the rest (PERF_SAMPLE_IDENTIFIER is first).
// Returns false when the layout has no identifier at a fixed position.
bool PeekSampleIdentifier(const uint8_t* body, size_t size, uint64_t sample_type, uint64_t* id);
// Reads the id of a non-sample record from its trailing sample_id block (IDENTIFIER is last).
bool PeekTrailingIdentifier(const uint8_t* body, size_t size, uint64_t sample_type, uint64_t* id);

// Parses the trailing sample_id block of a non-sample record; `body`/`size` is the whole body and
// `fixed_size` the bytes used by the record's own fields.
Status ParseTrailingSampleId(const uint8_t* body, size_t size, size_t fixed_size,
                             const PerfRecordLayout& layout, PerfSampleId* out);

// A non-sample record turned into the model's record types.
struct ParsedPerfRecord {
  enum class Kind {
    kNone,
    kMmap,
    kComm,
    kTask,
    kLost,
    kLostSamples,
    kThrottle,
    kSwitch
  } kind = Kind::kNone;
  MmapRecord mmap;
  CommRecord comm;
  TaskRecord task;
  LostRecord lost;
  ThrottleRecord throttle;
  // kSwitch (PERF_RECORD_SWITCH, SWITCH_CPU_WIDE): the thread of sample_id left the CPU (out) or
  // came back to it.
  bool switch_out = false;
  uint64_t id = 0;  // the event the record belongs to, when the record or sample_id says so
  PerfSampleId sample_id;
};

// Parses MMAP, MMAP2, COMM, FORK, EXIT, LOST, LOST_SAMPLES, THROTTLE, UNTHROTTLE, SWITCH and
// SWITCH_CPU_WIDE. Other types
// give Kind::kNone (and are skipped by the caller).
Status ParsePerfNonSample(uint32_t type, uint16_t misc, const uint8_t* body, size_t size,
                          const PerfRecordLayout& layout, ParsedPerfRecord* out);

}  // namespace tprof
