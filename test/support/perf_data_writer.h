// Test support: a perf.data file (file mode, host byte order) as `perf record` lays it out, for
// inputs no tool here can record (perf's BPF --off-cpu output needs a perf built with BPF). The
// layout follows tools/perf/util/header.c: the file header, each event's ids and attribute, the
// data section's records, then the feature table and the EVENT_DESC feature that names the
// events. Every event samples IDENTIFIER | IP | TID | TIME | ID | CPU | PERIOD | CALLCHAIN, and
// every other record carries the sample_id_all trailer (TID, TIME, ID, CPU, IDENTIFIER).
// Tests check what they write against `perf report` of the same file.
#pragma once

#include <linux/perf_event.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace tprof::testing {

class PerfDataWriter {
 public:
  static constexpr uint64_t kSampleType =
      PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
      PERF_SAMPLE_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN;

  // An event; its id is 1000 + its index. Returns the index. `raw`: its samples also carry
  // PERF_SAMPLE_RAW data (after the callchain).
  size_t AddEvent(const std::string& name, uint32_t type, uint64_t config, uint64_t period,
                  bool freq, bool raw = false) {
    perf_event_attr attr{};
    attr.type = type;
    attr.size = sizeof attr;
    attr.config = config;
    attr.sample_period = period;
    attr.freq = freq;
    attr.sample_type = kSampleType | (raw ? PERF_SAMPLE_RAW : 0);
    attr.sample_id_all = 1;
    attr.disabled = 1;
    attr.exclude_kernel = 1;
    events_.push_back({name, attr});
    return events_.size() - 1;
  }

  void Comm(uint32_t pid, uint32_t tid, const std::string& comm, uint64_t time) {
    const size_t at = Begin();
    U32(pid);
    U32(tid);
    PaddedString(comm);
    SampleId(pid, tid, time);
    End(PERF_RECORD_COMM, at);
  }
  void Mmap(uint32_t pid, uint64_t start, uint64_t length, uint64_t pgoff, const std::string& file,
            uint64_t time) {
    const size_t at = Begin();
    U32(pid);
    U32(pid);
    U64(start);
    U64(length);
    U64(pgoff);
    PaddedString(file);
    SampleId(pid, pid, time);
    End(PERF_RECORD_MMAP, at, PERF_RECORD_MISC_USER);
  }
  // `user_stack`: leaf first, as perf's callchains; written after PERF_CONTEXT_USER. `raw`:
  // the raw data of an event that has it, whole u64s (after its u32 size, as perf lays it).
  void Sample(size_t event, uint32_t pid, uint32_t tid, uint64_t time, uint64_t period,
              const std::vector<uint64_t>& user_stack, const std::vector<uint64_t>& raw = {}) {
    const size_t at = Begin();
    const uint64_t id = 1000 + event;
    U64(id);
    U64(user_stack.empty() ? 0 : user_stack.front());
    U32(pid);
    U32(tid);
    U64(time);
    U64(id);
    U64(0);  // cpu, reserved
    U64(period);
    U64(user_stack.size() + 1);
    U64(PERF_CONTEXT_USER);
    for (uint64_t ip : user_stack) U64(ip);
    if (events_[event].attr.sample_type & PERF_SAMPLE_RAW) {
      U32(static_cast<uint32_t>(raw.size() * 8 + 4));  // 4 bytes of padding keep the alignment
      for (uint64_t word : raw) U64(word);
      U32(0);
    }
    End(PERF_RECORD_SAMPLE, at, PERF_RECORD_MISC_USER);
  }
  // The SAMPLE_TIME feature: the first and last sample's times, as perf record saw them.
  void SampleTimes(uint64_t first, uint64_t last) {
    sample_times_[0] = first;
    sample_times_[1] = last;
  }
  void FinishedRound() {
    const size_t at = Begin();
    End(kFinishedRound, at);
  }

  bool WriteTo(const std::string& path) const {
    constexpr size_t kHeader = 104, kFileAttr = sizeof(perf_event_attr) + 16;
    std::string out(kHeader, '\0');
    std::vector<uint64_t> ids_at;
    for (size_t e = 0; e < events_.size(); ++e) {
      ids_at.push_back(out.size());
      Append(out, uint64_t{1000 + e});
    }
    const uint64_t attrs_at = out.size();
    for (size_t e = 0; e < events_.size(); ++e) {
      Append(out, events_[e].attr);
      Append(out, ids_at[e]);
      Append(out, uint64_t{8});
    }
    const uint64_t data_at = out.size();
    out += data_;
    // The feature table, one section per feature bit set, in bit order, then their payloads:
    // EVENT_DESC, and SAMPLE_TIME when set.
    std::string desc;
    Append(desc, static_cast<uint32_t>(events_.size()));
    Append(desc, static_cast<uint32_t>(sizeof(perf_event_attr)));
    for (size_t e = 0; e < events_.size(); ++e) {
      Append(desc, events_[e].attr);
      Append(desc, uint32_t{1});
      const size_t padded = (events_[e].name.size() + 1 + 7) / 8 * 8;
      Append(desc, static_cast<uint32_t>(padded));
      desc += events_[e].name;
      desc.append(padded - events_[e].name.size(), '\0');
      Append(desc, uint64_t{1000 + e});
    }
    std::vector<std::string> payloads = {desc};
    uint64_t features = uint64_t{1} << kEventDescBit;
    if (sample_times_[1] != 0) {
      std::string times;
      Append(times, sample_times_);
      payloads.push_back(times);
      features |= uint64_t{1} << kSampleTimeBit;
    }
    const uint64_t table_at = out.size();
    out.append(16 * payloads.size(), '\0');
    for (size_t f = 0; f < payloads.size(); ++f) {
      const uint64_t section[] = {out.size(), payloads[f].size()};
      std::memcpy(&out[table_at + 16 * f], section, sizeof section);
      out += payloads[f];
    }
    // The header: magic, its size, the file attribute's size, then the attrs, data and
    // event_types sections, then the feature bitmap.
    const uint64_t header[] = {
        0x32454c4946524550ULL, kHeader, kFileAttr, attrs_at, kFileAttr * events_.size(), data_at,
        data_.size(),          0,       0,         features};
    std::memcpy(out.data(), header, sizeof header);
    std::ofstream file(path, std::ios::binary);
    file.write(out.data(), static_cast<std::streamsize>(out.size()));
    return static_cast<bool>(file);
  }

 private:
  static constexpr int kEventDescBit = 12,
                       kSampleTimeBit = 21;       // HEADER_EVENT_DESC, ..._SAMPLE_TIME
  static constexpr uint32_t kFinishedRound = 68;  // PERF_RECORD_FINISHED_ROUND, a perf tool record
  struct Event {
    std::string name;
    perf_event_attr attr;
  };
  template <typename T>
  static void Append(std::string& out, const T& v) {
    out.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void U32(uint32_t v) { Append(data_, v); }
  void U64(uint64_t v) { Append(data_, v); }
  void PaddedString(const std::string& s) {
    const size_t padded = (s.size() + 1 + 7) / 8 * 8;
    data_ += s;
    data_.append(padded - s.size(), '\0');
  }
  // The sample_id_all trailer, as the first event's sample type lays it out.
  void SampleId(uint32_t pid, uint32_t tid, uint64_t time) {
    U32(pid);
    U32(tid);
    U64(time);
    U64(1000);  // id
    U64(0);     // cpu
    U64(1000);  // identifier
  }
  size_t Begin() {
    const size_t at = data_.size();
    data_.append(8, '\0');
    return at;
  }
  void End(uint32_t type, size_t at, uint16_t misc = 0) {
    const auto size = static_cast<uint16_t>(data_.size() - at);
    std::memcpy(&data_[at], &type, 4);
    std::memcpy(&data_[at + 4], &misc, 2);
    std::memcpy(&data_[at + 6], &size, 2);
  }

  std::vector<Event> events_;
  std::string data_;
  uint64_t sample_times_[2] = {0, 0};
};

}  // namespace tprof::testing
