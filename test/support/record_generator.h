// Test support: random profile records and a visitor that collects them. Shared by the format
// tests, the fuzzers' seed corpus and the format benchmark.
#pragma once

#include <random>
#include <variant>
#include <vector>

#include "core/model/profile.h"

namespace tprof::testing {

using AnyRecord =
    std::variant<Sample, MmapRecord, CommRecord, TaskRecord, LostRecord, ThrottleRecord>;

struct CollectingVisitor : RecordVisitor {
  std::vector<AnyRecord> records;
  void OnSample(const Sample& r) override { records.push_back(r); }
  void OnMmap(const MmapRecord& r) override { records.push_back(r); }
  void OnComm(const CommRecord& r) override { records.push_back(r); }
  void OnTask(const TaskRecord& r) override { records.push_back(r); }
  void OnLost(const LostRecord& r) override { records.push_back(r); }
  void OnThrottle(const ThrottleRecord& r) override { records.push_back(r); }
};

// Random records that exercise every field, with repeated callchains (as real profiles have)
// and extreme values (kernel addresses, context markers, 64-bit counters).
class RecordGenerator {
 public:
  explicit RecordGenerator(uint32_t seed) : rng_(seed) {
    for (int i = 0; i < 50; ++i) {
      std::vector<uint64_t> chain;
      if (Coin()) chain.push_back(kContextKernel);
      size_t depth = 1 + Below(30);
      for (size_t d = 0; d < depth; ++d) chain.push_back(Address());
      if (Coin()) {
        chain.push_back(kContextUser);
        chain.push_back(Address());
      }
      stacks_.push_back(chain);
    }
  }

  AnyRecord Next() {
    time_ += Below(100000);
    switch (Below(10)) {
      case 0: {
        MmapRecord m;
        m.time = time_;
        m.pid = Pid();
        m.tid = m.pid + static_cast<uint32_t>(Below(3));
        m.start = Address() & ~0xfffull;
        m.length = 4096 * (1 + Below(1000));
        m.page_offset = 4096 * Below(100);
        m.prot = 5;
        m.flags = 2;
        m.executable = Coin();
        m.filename = "/usr/lib/lib" + std::to_string(Below(100)) + ".so";
        if (Coin()) m.build_id = std::string(20, static_cast<char>(Below(256)));
        return m;
      }
      case 1: {
        CommRecord c;
        c.time = time_;
        c.pid = Pid();
        c.tid = c.pid;
        c.exec = Coin();
        c.comm = "proc" + std::to_string(Below(1000));
        return c;
      }
      case 2: {
        TaskRecord t;
        t.time = time_;
        t.is_exit = Coin();
        t.pid = Pid();
        t.ppid = Pid();
        t.tid = t.pid + 1;
        t.ptid = t.ppid;
        return t;
      }
      case 3: {
        if (Coin()) {
          LostRecord l;
          l.time = time_;
          l.event = static_cast<uint32_t>(Below(3));
          l.lost = Below(1u << 20);
          l.samples_only = Coin();
          return l;
        }
        ThrottleRecord t;
        t.time = time_;
        t.event = static_cast<uint32_t>(Below(3));
        t.throttled = Coin();
        return t;
      }
      default: {
        Sample s;
        s.time = time_;
        s.pid = Pid();
        s.tid = s.pid + static_cast<uint32_t>(Below(4));
        s.cpu = static_cast<uint32_t>(Below(256));
        s.event = static_cast<uint32_t>(Below(3));
        s.period = Below(10) ? 1 + Below(1000000) : UINT64_MAX;
        s.ip = Address();
        if (Below(3) == 0) {
          s.time_enabled = Below(1ull << 40);
          s.time_running = s.time_enabled - Below(1000);
          size_t n = 1 + Below(6);
          for (size_t i = 0; i < n; ++i) s.counter_values.push_back(rng_());
        }
        if (Below(4)) s.callchain = stacks_[Below(stacks_.size())];
        if (Below(4) == 0) {
          s.branch_hw_index = Below(32);
          size_t n = Below(33);
          for (size_t i = 0; i < n; ++i) s.branches.push_back({Address(), Address(), rng_()});
        }
        if (Below(8) == 0) {
          s.user_regs_abi = 2;  // PERF_SAMPLE_REGS_ABI_64
          for (int i = 0; i < 20; ++i) s.user_regs.push_back(rng_());
          s.user_stack.resize(Below(2048));
          for (char& c : s.user_stack) c = static_cast<char>(Below(256));
        }
        return s;
      }
    }
  }

 private:
  uint64_t Below(uint64_t n) { return std::uniform_int_distribution<uint64_t>(0, n - 1)(rng_); }
  bool Coin() { return Below(2) == 0; }
  uint32_t Pid() { return static_cast<uint32_t>(1 + Below(4000000)); }
  uint64_t Address() {
    switch (Below(4)) {
      case 0:
        return 0xffffffff81000000ull + Below(1u << 24);  // kernel text
      case 1:
        return 0x7f0000000000ull + Below(1ull << 32);  // shared libraries
      default:
        return 0x400000 + Below(1u << 22);  // the executable
    }
  }

  std::mt19937_64 rng_;
  std::vector<std::vector<uint64_t>> stacks_;
  uint64_t time_ = 1000000000;
};

inline Metadata TestMetadata() {
  Metadata m;
  m.tprof_version = "test";
  m.command_line = {"./prog", "--flag", "arg with spaces"};
  m.hostname = "host";
  m.kernel_release = "6.1.0";
  m.architecture = "x86_64";
  m.cpu_count = 2;
  m.cpu.vendor = "GenuineIntel";
  m.cpu.family = 6;
  m.cpu.model = 85;
  m.start_time_unix_ns = 1700000000000000000ull;
  return m;
}

inline std::vector<EventDesc> TestEvents() {
  std::vector<EventDesc> events(3);
  events[0].name = "cycles";
  events[0].group_members = {0, 1, 2};
  events[0].group_leader = 0;
  events[1].name = "instructions";
  events[1].group_leader = 0;
  events[1].config = 1;
  events[2].name = "task-clock";
  events[2].type = 1;
  events[2].config = 1;
  return events;
}

}  // namespace tprof::testing
