// The perf.data reader against perf's own figures on real files, against an independent count
// of records where perf 6.1 refuses the file, and on synthetic files that cover both byte
// orders, every sample_type field, compression, ordering and corruption.
#include "core/perfdata/perf_data_reader.h"

#include <gtest/gtest.h>
#include <linux/perf_event.h>
#include <unistd.h>
#include <zstd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "core/perfdata/perf_data_format.h"
#include "core/perfdata/perf_data_swap.h"
#include "core/source/profile_source.h"

namespace tprof {
namespace {

const std::string kPerfDir = std::string(TPROF_TESTDATA_DIR) + "/perf/";
const char* const kPerf = "/usr/bin/perf";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string Run(const std::string& command) {
  std::string out;
  FILE* p = ::popen(command.c_str(), "r");
  if (!p) return out;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  ::pclose(p);
  return out;
}

std::string Trim(std::string s) {
  s.erase(0, s.find_first_not_of(" \t"));
  s.erase(s.find_last_not_of(" \t\r") + 1);
  return s;
}

// What tprof makes of a file: per event samples, period and lost, and the comm of every sample
// at the time it was taken.
struct Figures : RecordVisitor {
  std::vector<uint64_t> samples, period, lost;
  std::set<std::string> comms;
  std::map<uint32_t, std::string> comm_of;

  explicit Figures(size_t events) : samples(events), period(events), lost(events) {}
  void OnSample(const Sample& s) override {
    samples.at(s.event) += 1;
    period.at(s.event) += s.period;
    auto it = comm_of.find(s.tid);
    comms.insert(it == comm_of.end() ? ":" + std::to_string(s.tid) : it->second);
  }
  void OnComm(const CommRecord& c) override { comm_of[c.tid] = c.comm; }
  void OnTask(const TaskRecord& t) override {
    // A new thread starts with its parent thread's name, as perf's thread__fork does.
    if (t.is_exit || comm_of.count(t.tid)) return;
    if (auto it = comm_of.find(t.ptid); it != comm_of.end()) comm_of[t.tid] = it->second;
  }
  void OnLost(const LostRecord& l) override { lost.at(l.event) += l.lost; }
};

// perf's figures, from perf itself.
struct PerfFigures {
  std::vector<std::string> names;  // evlist order
  std::vector<uint64_t> samples, period, lost;
  std::set<std::string> comms;
};

PerfFigures AskPerf(const std::string& path) {
  PerfFigures f;
  // `perf report --stats`: "<event> stats:" then "SAMPLE events: N" per event, in evlist order.
  std::istringstream stats(Run(std::string(kPerf) + " report --stats -i " + path + " 2>/dev/null"));
  bool in_event = false;
  for (std::string line; std::getline(stats, line);) {
    std::string t = Trim(line);
    if (t.size() > 7 && t.compare(t.size() - 7, 7, " stats:") == 0 && t != "Aggregated stats:") {
      f.names.push_back(t.substr(0, t.size() - 7));
      f.samples.push_back(0);
      in_event = true;
    } else if (in_event && t.rfind("SAMPLE events:", 0) == 0) {
      f.samples.back() = std::stoull(t.substr(14));
    }
  }
  f.period.assign(f.names.size(), 0);
  f.lost.assign(f.names.size(), 0);
  // `perf script -F comm,event,period`: sum periods by event name; collect comms.
  std::istringstream script(
      Run(std::string(kPerf) + " script -i " + path + " -F comm,event,period 2>/dev/null"));
  for (std::string line; std::getline(script, line);) {
    // "<comm> <period> <event>: " — the comm may contain spaces, the rest may not.
    std::string t = Trim(line);
    if (t.empty() || t.back() != ':') continue;
    size_t event_start = t.find_last_of(' ');
    std::string event = t.substr(event_start + 1, t.size() - event_start - 2);
    std::string rest = Trim(t.substr(0, event_start));
    size_t period_start = rest.find_last_of(' ');
    uint64_t period = std::stoull(rest.substr(period_start + 1));
    f.comms.insert(Trim(rest.substr(0, period_start)));
    // perf 6.1 names an event "cycles:uH" in --stats and "cycles:u" (EVENT_DESC) in script:
    // match on the name before the modifiers; the files' events differ there.
    auto base = [](const std::string& n) { return n.substr(0, n.find(':')); };
    for (size_t e = 0; e < f.names.size(); ++e)
      if (base(f.names[e]) == base(event)) f.period[e] += period;
  }
  // `perf report -D` prints every LOST_SAMPLES record ("...: id:289: lost samples :1") and
  // every LOST record ("PERF_RECORD_LOST lost 12 id 5"? perf prints "lost %lu"): totals.
  std::istringstream dump(Run(std::string(kPerf) + " report -D -i " + path + " 2>/dev/null"));
  uint64_t total = 0;
  for (std::string line; std::getline(dump, line);) {
    if (line.find("PERF_RECORD_LOST_SAMPLES") != std::string::npos) {
      total += std::stoull(line.substr(line.rfind(':') + 1));
    } else if (size_t at = line.find("PERF_RECORD_LOST "); at != std::string::npos) {
      size_t n = line.find("lost ", at + 17);
      if (n != std::string::npos) total += std::stoull(line.substr(n + 5));
    }
  }
  f.lost.assign(f.names.size(), 0);
  if (!f.names.empty()) f.lost[0] = total;  // compared as a total
  return f;
}

uint64_t Sum(const std::vector<uint64_t>& v) {
  uint64_t s = 0;
  for (uint64_t x : v) s += x;
  return s;
}

class PerfAgreement : public ::testing::TestWithParam<std::string> {};

TEST_P(PerfAgreement, SamplesPeriodsLostAndCommsEqualPerfs) {
  ASSERT_EQ(::access(kPerf, X_OK), 0) << "perf is not installed (scripts/setup.sh installs it)";
  const std::string path = kPerfDir + GetParam();
  std::string bytes = ReadFile(path);
  ASSERT_FALSE(bytes.empty()) << path;
  auto reader = PerfDataReader::Open(bytes);
  ASSERT_TRUE(reader.ok()) << reader.error().message();
  Figures tprof(reader->events().size());
  auto summary = reader->ReadRecords(tprof);
  ASSERT_TRUE(summary.ok()) << summary.error().message();

  PerfFigures perf = AskPerf(path);
  ASSERT_EQ(perf.names.size(), reader->events().size());
  for (size_t e = 0; e < perf.names.size(); ++e) {
    SCOPED_TRACE(perf.names[e]);
    EXPECT_EQ(tprof.samples[e], perf.samples[e]);
    EXPECT_EQ(tprof.period[e], perf.period[e]);
  }
  EXPECT_EQ(Sum(tprof.lost), Sum(perf.lost));
  EXPECT_EQ(tprof.comms, perf.comms);
}

INSTANTIATE_TEST_SUITE_P(
    Testdata, PerfAgreement,
    ::testing::Values("quipper-perf.data.throttle-3.8", "quipper-perf.data.busy.1-3.4",
                      "quipper-perf.data.callgraph-3.8",
                      "quipper-perf.data.callgraph_and_branch-3.8", "quipper-perf.data.branch-4.14",
                      "quipper-perf.data.lost_samples-4.4",
                      "quipper-perf.data.piped.lost_samples-4.4",
                      "quipper-perf.data.piped.header_feautres_group_desc-6.8",
                      "quipper-perf.data.forkexit-3.8", "autofdo/propeller_sample_1.perfdata1"),
    [](const auto& info) {
      std::string name = info.param;
      for (char& c : name)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      return name;
    });

// Lost counts per event, where perf names the event of each LOST_SAMPLES record.
TEST(PerfDataReader, LostSamplesGoToTheirEvents) {
  std::string bytes = ReadFile(kPerfDir + "quipper-perf.data.lost_samples-4.4");
  auto reader = PerfDataReader::Open(bytes);
  ASSERT_TRUE(reader.ok()) << reader.error().message();
  Figures f(reader->events().size());
  ASSERT_TRUE(reader->ReadRecords(f).ok());
  // perf report --stats: "cycles:pp stats: LOST_SAMPLES events: 1", and the same for
  // branch-instructions:pp; each record says "lost samples :1".
  EXPECT_EQ(f.lost, (std::vector<uint64_t>{1, 0, 1}));
  EXPECT_EQ(reader->events()[0].group_members, (std::vector<uint32_t>{0, 1, 2}));
  EXPECT_EQ(reader->events()[2].group_leader, 0);
}

// perf 6.1 refuses this file (136-byte attributes, newer than its ABI). The reference figures
// come from walking the records here with nothing but the header layout: samples counted by the
// id at their IDENTIFIER/ID position, periods read at the PERIOD position, comms from COMM
// records of threads that have samples.
struct IndependentCount {
  std::map<uint64_t, uint64_t> samples_by_id, period_by_id;
  std::map<uint64_t, size_t> event_of_id;
  std::set<std::string> comms;
  uint64_t lost = 0;
};

IndependentCount CountRecords(const std::string& bytes) {
  IndependentCount c;
  auto u64 = [&](size_t at) {
    uint64_t v;
    std::memcpy(&v, bytes.data() + at, 8);
    return v;
  };
  auto u32 = [&](size_t at) {
    uint32_t v;
    std::memcpy(&v, bytes.data() + at, 4);
    return v;
  };
  uint64_t attr_entry = u64(16), attrs_off = u64(24), attrs_size = u64(32);
  uint64_t data_off = u64(40), data_size = u64(48);
  uint64_t sample_type = 0;
  for (uint64_t i = 0; i < attrs_size / attr_entry; ++i) {
    size_t at = attrs_off + i * attr_entry;
    if (i == 0) sample_type = u64(at + 24);
    uint64_t ids_off = u64(at + attr_entry - 16), ids_size = u64(at + attr_entry - 8);
    for (uint64_t k = 0; k < ids_size / 8; ++k) c.event_of_id[u64(ids_off + 8 * k)] = i;
  }
  // The id is first with IDENTIFIER, else after IP, TID, TIME and ADDR.
  int id_index = (sample_type & PERF_SAMPLE_IDENTIFIER) ? 0 : -1;
  if (id_index < 0 && (sample_type & PERF_SAMPLE_ID)) {
    id_index = 0;
    for (uint64_t bit : {PERF_SAMPLE_IP, PERF_SAMPLE_TID, PERF_SAMPLE_TIME, PERF_SAMPLE_ADDR})
      if (sample_type & bit) ++id_index;
  }
  int period_index = 0;
  for (uint64_t bit : {PERF_SAMPLE_IDENTIFIER, PERF_SAMPLE_IP, PERF_SAMPLE_TID, PERF_SAMPLE_TIME,
                       PERF_SAMPLE_ADDR, PERF_SAMPLE_ID, PERF_SAMPLE_STREAM_ID, PERF_SAMPLE_CPU})
    if (sample_type & bit) ++period_index;
  std::map<uint32_t, std::string> comm_of;
  for (uint64_t pos = data_off; pos < data_off + data_size;) {
    uint32_t type = u32(pos);
    uint16_t size;
    std::memcpy(&size, bytes.data() + pos + 6, 2);
    if (size < 8) break;
    if (type == PERF_RECORD_SAMPLE) {
      uint64_t id = id_index >= 0 ? u64(pos + 8 + 8 * static_cast<size_t>(id_index)) : 0;
      c.samples_by_id[id] += 1;
      if (sample_type & PERF_SAMPLE_PERIOD) c.period_by_id[id] += u64(pos + 8 + 8 * period_index);
      // The comm the thread had then (file order is time order in this single-threaded run).
      uint32_t tid = u32(pos + 8 +
                         8 * ((sample_type & PERF_SAMPLE_IDENTIFIER ? 1 : 0) +
                              (sample_type & PERF_SAMPLE_IP ? 1 : 0)) +
                         4);
      if (comm_of.count(tid)) c.comms.insert(comm_of[tid]);
    } else if (type == PERF_RECORD_COMM) {
      comm_of[u32(pos + 12)] = std::string(bytes.data() + pos + 16);
    } else if (type == PERF_RECORD_LOST_SAMPLES) {
      c.lost += u64(pos + 8);
    }
    pos += size;
  }
  return c;
}

TEST(PerfDataReader, HotspotFileAgreesWithAnIndependentCount) {
  std::string bytes = ReadFile(kPerfDir + "hotspot-perf.data.PerfFormatLost");
  auto reader = PerfDataReader::Open(bytes);
  ASSERT_TRUE(reader.ok()) << reader.error().message();
  ASSERT_EQ(reader->events().size(), 2u);
  EXPECT_EQ(reader->events()[0].name, "cycles");
  EXPECT_EQ(reader->events()[1].group_leader, 0);
  struct GroupCheck : Figures {
    using Figures::Figures;
    size_t with_both_counters = 0;
    void OnSample(const Sample& s) override {
      Figures::OnSample(s);
      if (s.counter_values.size() == 2) ++with_both_counters;
    }
  } g(2);
  ASSERT_TRUE(reader->ReadRecords(g).ok());
  IndependentCount c = CountRecords(bytes);
  std::vector<uint64_t> samples(2), period(2);
  for (auto& [id, n] : c.samples_by_id) samples.at(c.event_of_id.at(id)) += n;
  for (auto& [id, n] : c.period_by_id) period.at(c.event_of_id.at(id)) += n;
  EXPECT_EQ(g.samples, samples);
  EXPECT_EQ(g.period, period);
  EXPECT_EQ(Sum(g.lost), c.lost);
  EXPECT_EQ(g.with_both_counters, Sum(samples));  // PERF_SAMPLE_READ with GROUP|ID|LOST
  std::set<std::string> sampled = g.comms;
  EXPECT_EQ(sampled, c.comms);
}

// simpleperf --add-counter: cycles samples read {cycles, instructions} (read_format 0xf) and the
// file has no GROUP_DESC feature. The group comes from the ids in the reads. Reference: perf
// script, which prints both members' deltas in every sample; their sums per event equal the
// running totals' last values per counter series.
TEST(PerfDataReader, SimpleperfAddCounterGroupComesFromTheReadIds) {
  const std::string path = kPerfDir + "simpleperf/perf_with_add_counter.data";
  std::string bytes = ReadFile(path);
  auto reader = PerfDataReader::Open(bytes);
  ASSERT_TRUE(reader.ok()) << reader.error().message();
  ASSERT_EQ(reader->events().size(), 2u);
  EXPECT_TRUE(reader->features().groups.empty());  // what the case is about
  EXPECT_EQ(reader->events()[0].group_members, (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(reader->events()[1].group_leader, 0);
  struct Reads : RecordVisitor {
    uint64_t samples = 0, with_both = 0;
    std::map<std::pair<uint32_t, uint32_t>, std::vector<uint64_t>> last;  // by (tid, cpu)
    void OnSample(const Sample& s) override {
      ++samples;
      if (s.counter_values.size() == 2) ++with_both, last[{s.tid, s.cpu}] = s.counter_values;
    }
  } reads;
  ASSERT_TRUE(reader->ReadRecords(reads).ok());
  EXPECT_EQ(reads.with_both, reads.samples);
  std::vector<uint64_t> totals(2, 0);
  for (const auto& [series, values] : reads.last)
    for (size_t i = 0; i < 2; ++i) totals[i] += values[i];

  ASSERT_EQ(::access(kPerf, X_OK), 0) << "perf is not installed (scripts/setup.sh installs it)";
  std::istringstream script(
      tprof::Run(std::string(kPerf) + " script -i " + path + " -F event,period 2>/dev/null"));
  std::map<std::string, uint64_t> perf_sums;
  std::string line;
  while (std::getline(script, line)) {
    std::istringstream words(line);
    uint64_t period = 0;
    std::string event;
    if (words >> period >> event) perf_sums[event.substr(0, event.find(':'))] += period;
  }
  EXPECT_EQ(totals[0], perf_sums["cycles"]);
  EXPECT_EQ(totals[1], perf_sums["instructions"]);
  EXPECT_GT(perf_sums["instructions"], 0u);
}

// simpleperf writes its tracing data inside the HEADER_TRACING_DATA record (perf streams it after
// the record): read as perf's, the payload was skipped twice and the next "record" had size 0.
// The file's 45 samples (an independent walk of the records by their sizes counts them), named
// by the tracing data's formats as the recorded command line asked: sched:sched_switch and
// cpu-cycles.
TEST(PerfDataReader, SimpleperfTracingDataRecordAndTracepointNames) {
  std::string bytes = ReadFile(kPerfDir + "simpleperf/perf_with_tracepoint_event.data");
  auto reader = PerfDataReader::Open(bytes);
  ASSERT_TRUE(reader.ok()) << reader.error().message();
  ASSERT_EQ(reader->events().size(), 2u);
  EXPECT_EQ(reader->events()[0].name, "sched:sched_switch");
  EXPECT_EQ(reader->metadata().command_line,
            (std::vector<std::string>{"/data/local/tmp/simpleperf", "record", "-e",
                                      "sched:sched_switch", "-e", "cpu-cycles", "sleep", "1"}));
  Figures f(2);
  auto summary = reader->ReadRecords(f);
  ASSERT_TRUE(summary.ok()) << summary.error().message();
  EXPECT_EQ(Sum(f.samples), 45u);
  // The walk by sizes: every PERF_RECORD_SAMPLE in the data section, the tracing record's
  // declared size covering its payload.
  const uint64_t data_offset = *reinterpret_cast<const uint64_t*>(bytes.data() + 40);
  const uint64_t data_size = *reinterpret_cast<const uint64_t*>(bytes.data() + 48);
  uint64_t walked = 0;
  for (uint64_t pos = data_offset; pos + 8 <= data_offset + data_size;) {
    perf_event_header h;
    std::memcpy(&h, bytes.data() + pos, sizeof h);
    if (h.size < 8) break;
    walked += h.type == PERF_RECORD_SAMPLE;
    pos += h.size;
  }
  EXPECT_EQ(walked, 45u);
}

// perf record --call-graph lbr (perfparser's vector_static_gcc): the user stacks are stitched
// from the callchain's user context and the branch stack's call-stack entries, as perf script
// prints them. perf 6.1 prints this static binary's addresses relative to its mapping at
// 0x400000, call sites as the branch sources (tprof keeps them as return addresses, one byte
// on). Samples whose branch stack is empty have no call stack: perf reads a stale entry there
// (it prints 358b2300358b23), tprof keeps the sampled ip and counts them.
TEST(PerfDataReader, LbrCallStacksAreStitchedAsPerfStitchesThem) {
  const std::string path = kPerfDir + "perfparser/vector_static_gcc.perf.lbr.data";
  std::string bytes = ReadFile(path);
  auto reader = PerfDataReader::Open(bytes);
  ASSERT_TRUE(reader.ok()) << reader.error().message();
  struct UserStacks : RecordVisitor {
    std::vector<std::vector<uint64_t>> stacks;  // per sample, user frames as call sites
    void OnSample(const Sample& s) override {
      std::vector<uint64_t> user;
      bool in_user = false;
      for (uint64_t a : s.callchain) {
        if (IsContextMarker(a)) {
          in_user = a == kContextUser;
          continue;
        }
        if (in_user) user.push_back(user.empty() ? a : a - 1);
      }
      stacks.push_back(user);
    }
  } tprof;
  auto summary = reader->ReadRecords(tprof);
  ASSERT_TRUE(summary.ok()) << summary.error().message();

  // A sample is its comm line, then its frames indented by a tab.
  std::istringstream script(
      tprof::Run(std::string(kPerf) + " script -i " + path + " -F comm,ip 2>/dev/null"));
  std::vector<std::vector<uint64_t>> perf;
  std::string line;
  while (std::getline(script, line)) {
    if (Trim(line).empty()) continue;
    if (line[0] != '\t') {
      perf.emplace_back();
      continue;
    }
    uint64_t address = std::stoull(Trim(line), nullptr, 16);
    if (address >> 63) continue;  // kernel frames
    if (!perf.empty()) perf.back().push_back(address);
  }
  ASSERT_EQ(perf.size(), tprof.stacks.size());
  // The two order samples of equal time differently: the stacks are compared as multisets.
  // A stitched stack has the newest callee and at least one call site. perf reads the first
  // entry even of an empty call stack, so its stacks of such samples are nothing or one stale
  // frame (358b2300358b23, or the previous sample's callee); tprof keeps the sampled ip there
  // and counts the sample as unstitched.
  std::multiset<std::vector<uint64_t>> from_perf, from_tprof;
  uint64_t perf_without_call_stack = 0;
  for (const std::vector<uint64_t>& stack : perf) {
    if (stack.size() <= 1)
      ++perf_without_call_stack;
    else
      from_perf.insert(stack);
  }
  EXPECT_EQ(summary->lbr_unstitched, perf_without_call_stack);
  for (const std::vector<uint64_t>& stack : tprof.stacks) {
    if (stack.size() <= 1) continue;
    std::vector<uint64_t> relative;
    for (uint64_t a : stack) relative.push_back(a - 0x400000);
    from_tprof.insert(relative);
  }
  EXPECT_EQ(from_tprof, from_perf);
  size_t deep = 0;
  for (const std::vector<uint64_t>& stack : from_tprof) deep += stack.size() >= 4;
  EXPECT_GE(deep, 15u);
  EXPECT_EQ(summary->lbr_stitched, 21u);  // the issue counted 21 samples with call stacks
  EXPECT_EQ(summary->lbr_unstitched + summary->lbr_stitched, 29u);
}

// A record of size 0 can be neither read nor stepped over: the records before it are read, and
// the summary names the offset where reading stopped and what was left.
TEST(PerfDataReader, CorruptZeroSizeRecordStopsTheReadingThereAndSaysSo) {
  std::string bytes = ReadFile(kPerfDir + "quipper-perf.data.piped.corrupted.zero_size_sample-3.2");
  auto reader = PerfDataReader::Open(bytes);
  ASSERT_TRUE(reader.ok()) << reader.error().message();
  Figures f(reader->events().size());
  auto summary = reader->ReadRecords(f);
  ASSERT_TRUE(summary.ok()) << summary.error().message();
  EXPECT_NE(summary->damage.find("at byte offset 49104"), std::string::npos) << summary->damage;
  EXPECT_NE(summary->damage.find("size 0"), std::string::npos) << summary->damage;
  EXPECT_EQ(summary->damage_offset, 49104u);
  EXPECT_EQ(summary->bytes_not_read, bytes.size() - 49104);
  EXPECT_GT(summary->records, 0u);
}

// The samples a file holds before byte `cut`, counted by walking its records' headers here (not
// by the reader): PERF_RECORD_SAMPLE records that end at or before the cut, up to the first
// record the cut splits. Uncompressed files only.
uint64_t SamplesBefore(const std::string& bytes, uint64_t cut) {
  uint64_t header_size, pos, end;
  std::memcpy(&header_size, bytes.data() + 8, 8);
  if (header_size == 16) {  // pipe mode: the records follow the header
    pos = 16;
    end = bytes.size();
  } else {
    uint64_t data_offset, data_size;
    std::memcpy(&data_offset, bytes.data() + 40, 8);
    std::memcpy(&data_size, bytes.data() + 48, 8);
    pos = data_offset;
    end = data_offset + data_size;
  }
  uint64_t samples = 0;
  while (pos + 8 <= end) {
    uint32_t type;
    uint16_t size;
    std::memcpy(&type, bytes.data() + pos, 4);
    std::memcpy(&size, bytes.data() + pos + 6, 2);
    if (size < 8 || pos + size > cut) break;
    if (type == PERF_RECORD_SAMPLE) ++samples;
    pos += size;
  }
  return samples;
}

// A flipped byte in a record's type turns a sample into a record of a type no kernel writes: it
// is skipped (its bytes cannot be trusted), counted, and its offset kept for the warning; it was
// skipped silently (one sample of 1,887 gone, exit 0).
TEST(PerfDataReader, RecordsOfUnknownTypesAreCountedNotDroppedSilently) {
  const std::string whole = ReadFile(kPerfDir + "quipper-perf.data.callgraph-3.8");
  uint64_t data_offset;
  std::memcpy(&data_offset, whole.data() + 40, 8);
  // The tenth sample record's offset, by walking the headers.
  uint64_t pos = data_offset, target = 0;
  for (int samples = 0; pos + 8 <= whole.size();) {
    uint32_t type;
    uint16_t size;
    std::memcpy(&type, whole.data() + pos, 4);
    std::memcpy(&size, whole.data() + pos + 6, 2);
    if (type == PERF_RECORD_SAMPLE && ++samples == 10) {
      target = pos;
      break;
    }
    pos += size;
  }
  ASSERT_GT(target, 0u);
  auto count = [](const std::string& bytes) {
    auto reader = PerfDataReader::Open(bytes);
    EXPECT_TRUE(reader.ok());
    Figures f(reader->events().size());
    auto summary = reader->ReadRecords(f);
    EXPECT_TRUE(summary.ok());
    return *summary;
  };
  const PerfDataReadSummary before = count(whole);
  std::string flipped = whole;
  flipped[target] = 30;  // PERF_RECORD_SAMPLE (9) becomes 30, no kernel's type
  const PerfDataReadSummary after = count(flipped);
  EXPECT_EQ(before.unknown_type_records, 0u);
  EXPECT_EQ(after.unknown_type_records, 1u);
  EXPECT_EQ(after.first_unknown_type_offset, target);
  EXPECT_EQ(after.samples, before.samples - 1);
}

// A file cut short (a recording killed, a copy interrupted) is read up to the cut: every sample
// before it, the damage named with its offset, the bytes not read counted. perf 6.1 reads none
// of a file cut at 60 % ("failed to process sample"); tprof refused them whole until now.
TEST(PerfDataReader, FilesCutShortAreReadUpToTheCut) {
  for (const char* name :
       {"quipper-perf.data.callgraph-3.8", "quipper-perf.data.throttle-3.8",
        "quipper-perf.data.piped.lost_samples-4.4", "quipper-perf.data.branch-4.14",
        "simpleperf/perf_with_add_counter.data", "simpleperf/perf_with_tracepoint_event.data"}) {
    const std::string whole = ReadFile(kPerfDir + name);
    for (const double share : {0.3, 0.6, 0.9}) {
      const uint64_t cut = static_cast<uint64_t>(share * static_cast<double>(whole.size()));
      SCOPED_TRACE(std::string(name) + " cut at " + std::to_string(cut) + " of " +
                   std::to_string(whole.size()));
      const std::string bytes = whole.substr(0, cut);
      auto reader = PerfDataReader::Open(bytes);
      ASSERT_TRUE(reader.ok()) << reader.error().message();
      Figures f(reader->events().size());
      auto summary = reader->ReadRecords(f);
      ASSERT_TRUE(summary.ok()) << summary.error().message();
      const uint64_t expected = SamplesBefore(whole, cut);
      EXPECT_EQ(summary->samples + summary->unknown_id_samples, expected);
      if (share > 0.5) {
        EXPECT_GT(expected, 0u);
      }
      // Where the data section itself was cut, reading stopped and says where; a cut among
      // the feature sections after the data leaves the samples whole.
      uint64_t header_size;
      std::memcpy(&header_size, whole.data() + 8, 8);
      uint64_t data_end = cut;  // a pipe's data ends where the bytes do
      if (header_size != 16) {
        uint64_t data_offset, data_size;
        std::memcpy(&data_offset, whole.data() + 40, 8);
        std::memcpy(&data_size, whole.data() + 48, 8);
        data_end = data_offset + data_size;
      }
      // (A pipe has no declared end: one cut between two records reads as a whole stream.)
      if ((header_size != 16 && cut < data_end) || !summary->damage.empty()) {
        EXPECT_FALSE(summary->damage.empty());
        EXPECT_NE(summary->damage.find("at byte offset"), std::string::npos) << summary->damage;
        EXPECT_LE(summary->damage_offset, cut);
        EXPECT_EQ(summary->damage_offset + summary->bytes_not_read, data_end);
      }
    }
  }
}

// Every cut and every flipped byte gives a result or an error, never a crash (the ASan build
// runs this too); an error names an offset.
TEST(PerfDataReader, TruncatedAndDamagedFilesFailCleanly) {
  for (const char* name :
       {"quipper-perf.data.lost_samples-4.4", "quipper-perf.data.piped.lost_samples-4.4",
        "quipper-perf.data.branch-4.14"}) {
    std::string bytes = ReadFile(kPerfDir + name);
    std::mt19937_64 rng(42);
    for (int i = 0; i < 200; ++i) {
      std::string damaged = bytes;
      if (i % 2 == 0) {
        damaged.resize(rng() % bytes.size());
      } else {
        for (int k = 0; k < 8; ++k) damaged[rng() % damaged.size()] = static_cast<char>(rng());
      }
      auto reader = PerfDataReader::Open(damaged);
      if (!reader.ok()) {
        const std::string& m = reader.error().message();
        EXPECT_TRUE(m.find("offset") != std::string::npos || m.find("magic") != std::string::npos ||
                    m.find("attributes") != std::string::npos)
            << m;
        continue;
      }
      Figures f(reader->events().size());
      auto summary = reader->ReadRecords(f);
      if (!summary.ok()) {
        EXPECT_NE(summary.error().message().find("offset"), std::string::npos)
            << summary.error().message();
      }
    }
  }
}

// ---- Synthetic files: both byte orders, every sample field, compression, ordering. ----

class Bytes {
 public:
  explicit Bytes(bool big_endian) : be_(big_endian) {}
  template <typename T>
  void Put(T v) {
    if (be_) v = perf_data::Swap(v);
    s_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void U8(uint8_t v) { s_.push_back(static_cast<char>(v)); }
  void U16(uint16_t v) { Put(v); }
  void U32(uint32_t v) { Put(v); }
  void U64(uint64_t v) { Put(v); }
  void Raw(std::string_view b) { s_.append(b); }
  void PaddedString(std::string_view str, size_t size) {
    std::string b(str);
    b.resize(size, '\0');
    s_ += b;
  }
  // perf_header_string.
  void HeaderString(std::string_view str) {
    uint32_t len = static_cast<uint32_t>((str.size() + 1 + 7) / 8 * 8);
    U32(len);
    PaddedString(str, len);
  }
  void PatchU64(size_t at, uint64_t v) {
    if (be_) v = perf_data::Swap(v);
    std::memcpy(s_.data() + at, &v, 8);
  }
  size_t size() const { return s_.size(); }
  std::string& str() { return s_; }
  bool be() const { return be_; }

 private:
  bool be_;
  std::string s_;
};

uint8_t Rev(uint8_t b) {
  uint8_t r = 0;
  for (int i = 0; i < 8; ++i)
    if (b & (1 << i)) r |= static_cast<uint8_t>(1 << (7 - i));
  return r;
}

constexpr uint64_t kSampleType =
    PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
    PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |
    PERF_SAMPLE_PERIOD | PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW |
    PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER | PERF_SAMPLE_WEIGHT |
    PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_TRANSACTION | PERF_SAMPLE_REGS_INTR | PERF_SAMPLE_PHYS_ADDR;
constexpr uint64_t kReadFormat = PERF_FORMAT_GROUP | PERF_FORMAT_ID |
                                 PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING |
                                 perf_data::kFormatLost;
constexpr uint64_t kFlags = 1ull << 10 /* freq */ | 1ull << 18 /* sample_id_all */ |
                            1ull << 5 /* exclude_kernel */ | 2ull << 15 /* precise_ip */;

void PutAttr(Bytes& b, uint32_t size, uint64_t config) {
  size_t start = b.size();
  b.U32(PERF_TYPE_HARDWARE);
  b.U32(size);
  b.U64(config);
  b.U64(4000);
  b.U64(kSampleType);
  b.U64(kReadFormat);
  for (int i = 0; i < 8; ++i) {
    uint8_t byte = static_cast<uint8_t>(kFlags >> (8 * i));
    b.U8(b.be() ? Rev(byte) : byte);
  }
  b.U32(0);  // wakeup
  b.U32(0);  // bp_type
  b.U64(0);  // config1
  if (size >= 72) b.U64(0);
  if (size >= 80) b.U64(PERF_SAMPLE_BRANCH_ANY | PERF_SAMPLE_BRANCH_HW_INDEX);
  if (size >= 88) b.U64(0x5);  // sample_regs_user: two registers
  if (size >= 96) {
    b.U32(64);  // sample_stack_user
    b.U32(0);
  }
  if (size >= 104) b.U64(0x3);              // sample_regs_intr: two registers
  while (b.size() - start < size) b.U8(0);  // newer fields, unknown to the reader
}

// Sample fields in sample_type order, every one of them.
std::string SampleBody(bool be, uint64_t id, uint64_t time, uint32_t tid, uint64_t ip) {
  Bytes b(be);
  b.U64(id);  // IDENTIFIER
  b.U64(ip);
  b.U32(tid);  // pid == tid
  b.U32(tid);
  b.U64(time);
  b.U64(0xadd7);  // ADDR
  b.U64(id);      // ID
  b.U64(id);      // STREAM_ID
  b.U32(1);       // cpu
  b.U32(0);
  b.U64(1000 + tid);  // PERIOD
  b.U64(2);           // READ: nr
  b.U64(500);         // time_enabled
  b.U64(400);         // time_running
  for (uint64_t k = 0; k < 2; ++k) {
    b.U64(111 * (k + 1));  // value
    b.U64(10 + k);         // id
    b.U64(0);              // lost
  }
  b.U64(3);  // CALLCHAIN
  b.U64(kContextUser);
  b.U64(ip);
  b.U64(0x401000);
  b.U32(4);  // RAW: size then bytes (plus padding to 8)
  b.Raw(std::string("\x01\x02\x03\x04", 4));
  b.U64(1);   // BRANCH_STACK nr
  b.U64(7);   // hw_idx
  b.U64(ip);  // from
  b.U64(0x401000);
  // flags: mispred, cycles 33, type 2
  uint64_t le_flags = 1 | 33ull << 4 | 2ull << 20;
  uint64_t be_flags = 1ull << 63 | 33ull << 44 | 2ull << 40;
  b.U64(be ? be_flags : le_flags);
  b.U64(PERF_SAMPLE_REGS_ABI_64);  // REGS_USER
  b.U64(0x7ffc0000);
  b.U64(0x7ffc0010);
  b.U64(16);  // STACK_USER size
  b.Raw(std::string(16, '\x5a'));
  b.U64(16);                       // dyn_size
  b.U64(77);                       // WEIGHT
  b.U64(0x68100142);               // DATA_SRC
  b.U64(0);                        // TRANSACTION
  b.U64(PERF_SAMPLE_REGS_ABI_64);  // REGS_INTR
  b.U64(1);
  b.U64(2);
  b.U64(0xfeed000);  // PHYS_ADDR
  return b.str();
}

std::string SampleId(bool be, uint64_t id, uint64_t time, uint32_t tid) {
  Bytes b(be);
  b.U32(tid);
  b.U32(tid);
  b.U64(time);
  b.U64(id);
  b.U64(id);
  b.U32(1);
  b.U32(0);
  b.U64(id);
  return b.str();
}

void Record(Bytes& out, uint32_t type, uint16_t misc, const std::string& body) {
  out.U32(type);
  out.U16(misc);
  out.U16(static_cast<uint16_t>(8 + body.size()));
  out.Raw(body);
}

// The kernel records of the synthetic profile: two rounds, out of order within each.
std::string DataRecords(bool be) {
  Bytes d(be);
  {
    Bytes b(be);
    b.U32(42);
    b.U32(42);
    b.PaddedString("workload", 16);
    Record(d, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC, b.str() + SampleId(be, 10, 100, 42));
  }
  {
    Bytes b(be);
    b.U32(42);
    b.U32(42);
    b.U64(0x400000);
    b.U64(0x10000);
    b.U64(0);
    b.U32(8);
    b.U32(1);
    b.U64(1234);
    b.U64(1);
    b.U32(5);  // PROT_READ | PROT_EXEC
    b.U32(2);
    b.PaddedString("/bin/workload", 16);
    Record(d, PERF_RECORD_MMAP2, 0, b.str() + SampleId(be, 10, 110, 42));
  }
  Record(d, PERF_RECORD_SAMPLE, 0, SampleBody(be, 11, 300, 42, 0x401234));
  Record(d, PERF_RECORD_SAMPLE, 0, SampleBody(be, 10, 200, 42, 0x401100));
  {
    Bytes b(be);
    b.U64(10);  // id
    b.U64(5);   // lost
    Record(d, PERF_RECORD_LOST, 0, b.str() + SampleId(be, 10, 250, 42));
  }
  Record(d, perf_data::kFinishedRound, 0, "");
  {
    Bytes b(be);
    b.U64(3);
    Record(d, PERF_RECORD_LOST_SAMPLES, 0, b.str() + SampleId(be, 11, 350, 42));
  }
  {
    Bytes b(be);
    b.U64(360);
    b.U64(11);
    b.U64(11);
    Record(d, PERF_RECORD_THROTTLE, 0, b.str() + SampleId(be, 11, 360, 42));
  }
  Record(d, 4242, 0, std::string(24, '\x7f'));  // unknown type: skipped by size
  {
    Bytes b(be);
    b.U32(43);
    b.U32(42);
    b.U32(43);
    b.U32(42);
    b.U64(150);
    Record(d, PERF_RECORD_FORK, 0, b.str() + SampleId(be, 10, 150, 43));
  }
  Record(d, PERF_RECORD_SAMPLE, 0, SampleBody(be, 10, 400, 43, 0x401200));
  return d.str();
}

void PutFeatures(Bytes& b, uint32_t feature) {
  if (feature == perf_data::kFeatHostname) b.HeaderString("synthetic-host");
  if (feature == perf_data::kFeatArch) b.HeaderString("aarch64");
  if (feature == perf_data::kFeatEventDesc) {
    b.U32(2);
    b.U32(136);
    for (int e = 0; e < 2; ++e) {
      PutAttr(b, 136, static_cast<uint64_t>(e));
      b.U32(1);
      b.HeaderString(e ? "instructions:upp" : "cycles:upp");
      b.U64(10 + static_cast<uint64_t>(e));
    }
  }
  if (feature == perf_data::kFeatGroupDesc) {
    b.U32(1);
    b.HeaderString("{cycles,instructions}");
    b.U32(0);
    b.U32(2);
  }
}

constexpr uint32_t kFeatures[] = {perf_data::kFeatHostname, perf_data::kFeatArch,
                                  perf_data::kFeatEventDesc, perf_data::kFeatGroupDesc};

// File mode: header, attrs (one 64-byte ABI entry stride with a 136-byte attribute would not
// fit, so both use 136 + the ids section), ids, data, feature table.
std::string FileMode(bool be, const std::string& data) {
  Bytes b(be);
  b.U64(perf_data::kMagic);  // written in the file's order, so a BE file reads as swapped
  b.U64(104);
  b.U64(136 + 16);
  size_t attrs_at = b.size();
  b.U64(0);
  b.U64(0);
  b.U64(0);  // data
  b.U64(0);
  b.U64(0);  // event_types
  b.U64(0);
  uint64_t bits = 0;
  for (uint32_t f : kFeatures) bits |= 1ull << f;
  b.U64(bits);
  b.U64(0);
  b.U64(0);
  b.U64(0);
  size_t ids_at = b.size();
  b.U64(10);
  b.U64(11);
  size_t attrs = b.size();
  for (int e = 0; e < 2; ++e) {
    PutAttr(b, 136, static_cast<uint64_t>(e));
    b.U64(ids_at + 8 * static_cast<size_t>(e));
    b.U64(8);
  }
  b.PatchU64(attrs_at, attrs);
  b.PatchU64(attrs_at + 8, b.size() - attrs);
  size_t data_at = b.size();
  b.Raw(data);
  b.PatchU64(attrs_at + 16, data_at);
  b.PatchU64(attrs_at + 24, data.size());
  size_t table = b.size();
  for (size_t i = 0; i < std::size(kFeatures); ++i) {
    b.U64(0);
    b.U64(0);
  }
  for (size_t i = 0; i < std::size(kFeatures); ++i) {
    size_t start = b.size();
    PutFeatures(b, kFeatures[i]);
    b.PatchU64(table + 16 * i, start);
    b.PatchU64(table + 16 * i + 8, b.size() - start);
  }
  return b.str();
}

std::string PipeMode(bool be, const std::string& data) {
  Bytes b(be);
  b.U64(perf_data::kMagic);
  b.U64(16);
  for (int e = 0; e < 2; ++e) {
    Bytes a(be);
    PutAttr(a, e ? 136 : 120, static_cast<uint64_t>(e));  // sizes may differ per record
    a.U64(10 + static_cast<uint64_t>(e));
    Record(b, perf_data::kHeaderAttr, 0, a.str());
  }
  for (uint32_t f : kFeatures) {
    Bytes fb(be);
    fb.U64(f);
    PutFeatures(fb, f);
    Record(b, perf_data::kHeaderFeature, 0, fb.str());
  }
  b.Raw(data);
  return b.str();
}

// A recording that announces hardware trace (PERF_RECORD_AUX: a buffer filled) without its data
// (no AUXTRACE records, as simpleperf's ETM files whose trace was not kept): the reader counts
// the announcements, and a source with no samples says what the file holds rather than show an
// empty profile.
TEST(PerfDataReader, TraceAnnouncedWithoutItsDataIsSaid) {
  Bytes aux(false);
  aux.U64(0);                              // aux_offset
  aux.U64(4096);                           // aux_size
  aux.U64(0);                              // flags
  for (int i = 0; i < 6; ++i) aux.U64(0);  // the sample_id trailer (time 0: delivered at once)
  Bytes data(false);
  Record(data, PERF_RECORD_AUX, 0, aux.str());
  const std::string bytes = PipeMode(false, data.str());
  auto reader = PerfDataReader::Open(bytes);
  ASSERT_TRUE(reader.ok()) << reader.error().message();
  Figures f(reader->events().size());
  auto summary = reader->ReadRecords(f);
  ASSERT_TRUE(summary.ok()) << summary.error().message();
  EXPECT_EQ(summary->aux_records, 1u);
  EXPECT_EQ(summary->aux_trace_records, 0u);
  auto source = ProfileSource::OpenBytes(bytes);
  ASSERT_TRUE(source.ok()) << source.error().message();
  Figures g((*source)->events().size());
  auto read = (*source)->ReadRecords(g);
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.error().message().find("announces 1 buffers of hardware trace"), std::string::npos)
      << read.error().message();
}

// The data as perf record -z writes it: zstd frames in COMPRESSED records, split at an
// arbitrary byte so that one record straddles two of them.
std::string Compressed(bool be, const std::string& data) {
  Bytes out(be);
  size_t cut = data.size() / 2 + 3;
  for (std::string_view part :
       {std::string_view(data).substr(0, cut), std::string_view(data).substr(cut)}) {
    std::string frame(ZSTD_compressBound(part.size()), '\0');
    frame.resize(ZSTD_compress(frame.data(), frame.size(), part.data(), part.size(), 3));
    Bytes payload(be);
    payload.U64(frame.size());
    payload.Raw(frame);
    std::string p = payload.str();
    p.resize((p.size() + 7) / 8 * 8, '\0');
    Record(out, perf_data::kCompressed2, 0, p);
  }
  return out.str();
}

struct Collected : RecordVisitor {
  std::vector<Sample> samples;
  std::vector<MmapRecord> mmaps;
  std::vector<CommRecord> comms;
  std::vector<TaskRecord> tasks;
  std::vector<LostRecord> lost;
  std::vector<ThrottleRecord> throttles;
  std::vector<uint64_t> order;  // times, in delivery order
  void OnSample(const Sample& s) override {
    samples.push_back(s);
    order.push_back(s.time);
  }
  void OnMmap(const MmapRecord& r) override {
    mmaps.push_back(r);
    order.push_back(r.time);
  }
  void OnComm(const CommRecord& r) override {
    comms.push_back(r);
    order.push_back(r.time);
  }
  void OnTask(const TaskRecord& r) override { tasks.push_back(r); }
  void OnLost(const LostRecord& r) override {
    lost.push_back(r);
    order.push_back(r.time);
  }
  void OnThrottle(const ThrottleRecord& r) override { throttles.push_back(r); }
};

Collected ReadAll(const std::string& bytes) {
  Collected c;
  auto reader = PerfDataReader::Open(bytes);
  EXPECT_TRUE(reader.ok()) << reader.error().message();
  if (!reader.ok()) return c;
  EXPECT_EQ(reader->events().size(), 2u);
  if (reader->events().size() == 2) {
    EXPECT_EQ(reader->events()[0].name, "cycles:upp");
    EXPECT_EQ(reader->events()[1].name, "instructions:upp");
    EXPECT_EQ(reader->events()[1].group_leader, 0);
    EXPECT_TRUE(reader->events()[0].use_frequency);
    EXPECT_TRUE(reader->events()[0].exclude_kernel);
    EXPECT_EQ(reader->events()[0].precise_ip, 2u);
    EXPECT_EQ(reader->metadata().hostname, "synthetic-host");
  }
  auto summary = reader->ReadRecords(c);
  EXPECT_TRUE(summary.ok()) << summary.error().message();
  return c;
}

void ExpectSyntheticContent(const Collected& c) {
  ASSERT_EQ(c.samples.size(), 3u);
  // Sorted by time within FINISHED_ROUND windows: 200 before 300 (same round).
  EXPECT_EQ(c.samples[0].time, 200u);
  EXPECT_EQ(c.samples[0].event, 0u);
  EXPECT_EQ(c.samples[1].time, 300u);
  EXPECT_EQ(c.samples[1].event, 1u);
  EXPECT_EQ(c.samples[2].tid, 43u);
  const Sample& s = c.samples[0];
  EXPECT_EQ(s.ip, 0x401100u);
  EXPECT_EQ(s.pid, 42u);
  EXPECT_EQ(s.cpu, 1u);
  EXPECT_EQ(s.period, 1042u);
  EXPECT_EQ(s.time_enabled, 500u);
  EXPECT_EQ(s.time_running, 400u);
  EXPECT_EQ(s.counter_values, (std::vector<uint64_t>{111, 222}));
  EXPECT_EQ(s.callchain, (std::vector<uint64_t>{kContextUser, 0x401100, 0x401000}));
  ASSERT_EQ(s.branches.size(), 1u);
  EXPECT_EQ(s.branch_hw_index, 7u);
  EXPECT_TRUE(s.branches[0].mispredicted());
  EXPECT_EQ(s.branches[0].cycles(), 33u);
  EXPECT_EQ((s.branches[0].flags >> 20) & 0xf, 2u);
  ASSERT_EQ(c.mmaps.size(), 1u);
  EXPECT_EQ(c.mmaps[0].filename, "/bin/workload");
  EXPECT_EQ(c.mmaps[0].start, 0x400000u);
  EXPECT_TRUE(c.mmaps[0].executable);
  ASSERT_EQ(c.comms.size(), 2u);  // "swapper" for the idle thread, then the workload
  EXPECT_EQ(c.comms[1].comm, "workload");
  EXPECT_TRUE(c.comms[1].exec);
  ASSERT_EQ(c.tasks.size(), 1u);
  EXPECT_EQ(c.tasks[0].ptid, 42u);
  ASSERT_EQ(c.lost.size(), 2u);
  EXPECT_EQ(c.lost[0].lost, 5u);
  EXPECT_EQ(c.lost[0].event, 0u);
  EXPECT_EQ(c.lost[1].lost, 3u);
  EXPECT_EQ(c.lost[1].event, 1u);
  EXPECT_TRUE(c.lost[1].samples_only);
  ASSERT_EQ(c.throttles.size(), 1u);
  EXPECT_EQ(c.throttles[0].event, 1u);
  EXPECT_TRUE(std::is_sorted(c.order.begin(), c.order.end()));
}

TEST(PerfDataReader, SyntheticFileModeBothByteOrders) {
  for (bool be : {false, true}) {
    SCOPED_TRACE(be ? "big-endian" : "little-endian");
    Collected c = ReadAll(FileMode(be, DataRecords(be)));
    ExpectSyntheticContent(c);
  }
}

// With an unwinder, every sample with user registers and a stack copy is walked, the unwinder
// learning the recorded architecture first. These samples also carry the user part of a
// frame-pointer chain (0x401000 after the pc), so the walk mends it (the frame 0x402222 the chain
// skipped is put in) rather than replacing it, and is counted as a repair.
TEST(PerfDataReader, StackCopiesGoToTheUnwinderWithTheRecordedArchitecture) {
  struct Unwinder : UserStackUnwinder {
    std::string architecture;
    std::vector<size_t> stack_sizes;
    std::vector<uint64_t> frame_record_returns;
    void OnArchitecture(const std::string& machine) override { architecture = machine; }
    void OnMmap(const MmapRecord&) override {}
    UnwindOutcome Unwind(const UserStackSample& s, std::vector<uint64_t>* frames) override {
      stack_sizes.push_back(s.stack.size());
      frame_record_returns.push_back(s.frame_record_return);
      if (s.regs.size() != 2 || s.regs_mask != 0x5) return {UnwindEnd::kNoRegisters, ""};
      frames->insert(frames->end(), {s.ip, 0x402222, 0x401000});
      return {UnwindEnd::kStackCopyTooShort, "/bin/prog"};
    }
  } unwinder;
  std::string bytes = FileMode(false, DataRecords(false));
  auto reader = PerfDataReader::Open(bytes);
  ASSERT_TRUE(reader.ok()) << reader.error().message();
  EXPECT_EQ(reader->metadata().architecture, "aarch64");
  Collected c;
  auto summary = reader->ReadRecords(c, &unwinder);
  ASSERT_TRUE(summary.ok()) << summary.error().message();
  EXPECT_EQ(unwinder.architecture, "aarch64");
  ASSERT_FALSE(c.samples.empty());
  EXPECT_EQ(unwinder.stack_sizes, std::vector<size_t>(c.samples.size(), 16));
  // The chain's second frame is offered to the walk as the frame record's return address.
  EXPECT_EQ(unwinder.frame_record_returns, std::vector<uint64_t>(c.samples.size(), 0x401000));
  for (const Sample& s : c.samples)
    EXPECT_EQ(s.callchain, (std::vector<uint64_t>{kContextUser, s.ip, 0x402222, 0x401000}));
  EXPECT_EQ(summary->unwinding.samples, 0u);
  EXPECT_EQ(summary->unwinding.chain_repair.samples, c.samples.size());
  EXPECT_EQ(summary->unwinding.chain_repair.repaired, c.samples.size());
  EXPECT_EQ(summary->unwinding.chain_repair.frames_added, c.samples.size());
}

// A round holds one run of time-ordered records per CPU ring buffer perf drained; delivery is
// in time order, ties in file order, whether the round is a few runs (merged) or many (sorted).
TEST(PerfDataReader, RoundsOfInterleavedRunsAreDeliveredInTimeOrder) {
  struct Written {
    uint64_t time;
    uint64_t ip;  // file position, to check ties keep it
  };
  std::vector<Written> written;
  Bytes d(false);
  auto sample = [&](uint64_t time) {
    const uint64_t ip = 0x401000 + written.size();
    written.push_back({time, ip});
    Record(d, PERF_RECORD_SAMPLE, 0, SampleBody(false, 10, time, 42, ip));
  };
  // Round 1: three CPUs' runs, with ties across them.
  for (int cpu = 0; cpu < 3; ++cpu)
    for (uint64_t t = 0; t < 50; ++t) sample(1000 + t * 3 + (cpu == 2 ? 0 : cpu));
  Record(d, perf_data::kFinishedRound, 0, "");
  // Round 2: descending times, a run per record (past what is merged).
  for (uint64_t t = 60; t > 0; --t) sample(2000 + t);
  Record(d, perf_data::kFinishedRound, 0, "");
  Collected c = ReadAll(FileMode(false, d.str()));
  std::stable_sort(written.begin(), written.end(),
                   [](const Written& a, const Written& b) { return a.time < b.time; });
  ASSERT_EQ(c.samples.size(), written.size());
  for (size_t i = 0; i < written.size(); ++i) {
    EXPECT_EQ(c.samples[i].time, written[i].time) << i;
    EXPECT_EQ(c.samples[i].ip, written[i].ip) << i;
  }
}

TEST(PerfDataReader, SyntheticPipeModeBothByteOrders) {
  for (bool be : {false, true}) {
    SCOPED_TRACE(be ? "big-endian" : "little-endian");
    ExpectSyntheticContent(ReadAll(PipeMode(be, DataRecords(be))));
  }
}

TEST(PerfDataReader, CompressedRecordsGiveTheSameRecords) {
  for (bool be : {false, true}) {
    SCOPED_TRACE(be ? "big-endian" : "little-endian");
    Collected plain = ReadAll(FileMode(be, DataRecords(be)));
    Collected packed = ReadAll(FileMode(be, Compressed(be, DataRecords(be))));
    EXPECT_EQ(packed.samples, plain.samples);
    EXPECT_EQ(packed.mmaps, plain.mmaps);
    EXPECT_EQ(packed.lost, plain.lost);
  }
}

// perf's off-CPU samples since its 2025 rework carry their thread, off-CPU time and user stack
// in the BPF output data (perf's __set_offcpu_sample layout): read from a file of either byte
// order, the data's own fields swapped like the sample's.
TEST(PerfDataReader, OffCpuDataInsideBpfOutputIsReadInBothByteOrders) {
  PerfRecordLayout layout;
  layout.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD | PERF_SAMPLE_RAW;
  layout.off_cpu_in_raw = true;
  for (bool be : {false, true}) {
    SCOPED_TRACE(be ? "big-endian" : "little-endian");
    // A sample as the file holds it, in native order after the reader's swap.
    // `time` 9000: a wait dumped during the run, its thread word (u64)tgid << 32 | thread; at a
    // made-up time past ~0 << 32, a sum written after it, (u64)thread << 32 | tgid.
    auto read = [&](uint64_t stack_count, ParsedPerfSample* parsed, uint64_t time = 9000) {
      Bytes d(be);
      d.U32(1);  // the task that ran the BPF program
      d.U32(1);
      d.U64(time);
      d.U64(1);          // period placeholder
      d.U32(7 * 8 + 4);  // raw size: thread word, period, nr, 3 ips, cgroup, perf's 4 pad bytes
      d.U64(time < (~0ull << 32) ? uint64_t{4242} << 32 | 4243 : uint64_t{4243} << 32 | 4242);
      d.U64(5'000'000);  // off-CPU nanoseconds
      d.U64(stack_count);
      d.U64(kContextUser);
      d.U64(0x401100);
      d.U64(0x401000);
      d.U64(77);  // cgroup
      d.U32(0);
      std::string body = d.str();
      if (be)
        SwapPerfRecordBody(PERF_RECORD_SAMPLE, 0, reinterpret_cast<uint8_t*>(body.data()),
                           body.size(), layout);
      return ParsePerfSample(reinterpret_cast<const uint8_t*>(body.data()), body.size(), layout,
                             parsed);
    };
    ParsedPerfSample parsed;
    ASSERT_TRUE(read(3, &parsed).ok());
    EXPECT_EQ(parsed.sample.pid, 4242u);
    EXPECT_EQ(parsed.sample.tid, 4243u);
    EXPECT_EQ(parsed.sample.time, 9000u);
    EXPECT_EQ(parsed.sample.period, 5'000'000u);
    EXPECT_EQ(parsed.sample.ip, 0x401100u);
    EXPECT_EQ(parsed.sample.callchain, (std::vector<uint64_t>{kContextUser, 0x401100, 0x401000}));
    // The sums after the run: the same thread, from the other layout of the word.
    ASSERT_TRUE(read(3, &parsed, ~0ull << 32).ok());
    EXPECT_EQ(parsed.sample.pid, 4242u);
    EXPECT_EQ(parsed.sample.tid, 4243u);
    // A stack count past the data is malformed, not read beyond it.
    EXPECT_FALSE(read(100, &parsed).ok());
  }
}

TEST(PerfDataReader, SwappedBranchFlagsKeepTheirFields) {
  uint64_t be = 1ull << 62 /* predicted */ | 0xffffull << 44 /* cycles */ | 0xfull << 40;
  uint64_t le = SwapBranchFlags(be);
  EXPECT_EQ(le & 1, 0u);
  EXPECT_EQ((le >> 1) & 1, 1u);
  EXPECT_EQ((le >> 4) & 0xffff, 0xffffu);
  EXPECT_EQ((le >> 20) & 0xf, 0xfu);
}

// Found by the fuzzer: an EVENT_DESC whose attribute is cut short read through a null pointer.
// simpleperf's META_INFO: NUL-separated keys and values; event_type_info names events by type and
// config ("name,type,config" lines, the name possibly holding commas); a value without its NUL is
// a malformed section, not a silently shorter one.
TEST(PerfDataFeatures, SimpleperfMetaInfoNamesEventsAndSaysTraceOffcpu) {
  PerfFeatures f;
  const std::string meta = std::string(
      "event_type_info\0cpu-clock,1,0\nsched:sched_switch,2,91\n"
      "odd,name,4,7\0trace_offcpu\0true\0",
      85);
  ASSERT_TRUE(
      ParsePerfFeature(perf_data::kFeatSimpleperfMetaInfo, meta, perf_data::ByteOrder(), &f).ok());
  EXPECT_EQ(f.simpleperf_meta["trace_offcpu"], "true");
  EXPECT_EQ(SimpleperfEventName(f, 2, 91), "sched:sched_switch");
  EXPECT_EQ(SimpleperfEventName(f, 1, 0), "cpu-clock");
  EXPECT_EQ(SimpleperfEventName(f, 4, 7), "odd,name");
  EXPECT_EQ(SimpleperfEventName(f, 2, 92), "");
  PerfFeatures cut;
  EXPECT_FALSE(ParsePerfFeature(perf_data::kFeatSimpleperfMetaInfo,
                                std::string_view("trace_offcpu\0tr", 15), perf_data::ByteOrder(),
                                &cut)
                   .ok());
}

TEST(PerfDataReader, TruncatedEventDescIsAnError) {
  Bytes b(false);
  b.U64(perf_data::kMagic);
  b.U64(16);
  Bytes a(false);
  PutAttr(a, 64, 0);
  Record(b, perf_data::kHeaderAttr, 0, a.str());
  Bytes f(false);
  f.U64(perf_data::kFeatEventDesc);
  f.U32(1);
  f.U32(64);  // one 64-byte attribute announced, 8 bytes present
  f.U64(0);
  Record(b, perf_data::kHeaderFeature, 0, f.str());
  auto r = PerfDataReader::Open(b.str());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("at byte offset 88"), std::string::npos)
      << r.error().message();
}

// Found by the fuzzer: an attribute entry size near 2^64 wrapped the end-of-section check.
TEST(PerfDataReader, HugeAttributeEntrySizeIsAnError) {
  std::string bytes = ReadFile(kPerfDir + "quipper-perf.data.lost_samples-4.4");
  uint64_t huge = 0xffffffffffffff90ull;
  std::memcpy(bytes.data() + 16, &huge, 8);
  auto r = PerfDataReader::Open(bytes);
  EXPECT_FALSE(r.ok());
}

TEST(PerfDataReader, RejectsWhatIsNotPerfData) {
  EXPECT_FALSE(PerfDataReader::Open("hello world, not a profile").ok());
  std::string header = FileMode(false, DataRecords(false)).substr(0, 60);
  auto r = PerfDataReader::Open(header);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("offset"), std::string::npos) << r.error().message();
}

}  // namespace
}  // namespace tprof
