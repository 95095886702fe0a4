#include "core/analysis/function_profile.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "test/support/mapping_named_resolver.h"

namespace tprof {
namespace {

EventDesc Clock() {
  EventDesc e;
  e.name = "cpu-clock";
  return e;
}

Sample At(uint32_t tid, uint64_t ip) {
  Sample s;
  s.pid = 7;
  s.tid = tid;
  s.ip = ip;
  s.period = 10;
  return s;
}

MmapRecord Map(const std::string& file) {
  MmapRecord m;
  m.pid = m.tid = 7;
  m.start = 0x1000;
  m.length = 0x1000;
  m.executable = true;
  m.filename = file;
  return m;
}

CommRecord Name(uint32_t tid, const std::string& comm) {
  CommRecord c;
  c.pid = 7;
  c.tid = tid;
  c.comm = comm;
  return c;
}

// "command function" -> samples
std::map<std::string, uint64_t> Rows(const FunctionProfile& profile) {
  std::map<std::string, uint64_t> rows;
  for (const FunctionRow& row : profile.rows)
    rows[row.command + " " + row.function] += row.self_samples[0];
  return rows;
}

// A sample's row is remembered per thread and pc: what decides it (the code mapped there, the
// thread's name) changing must give the next sample at that pc its new row.
TEST(FunctionProfileBuilder, APcCountsForWhatIsMappedThereAndTheThreadsNameWhenSampled) {
  testing::MappingNamedResolver resolver;
  FunctionProfileBuilder builder({Clock()}, resolver);
  builder.OnComm(Name(7, "one"));
  builder.OnMmap(Map("a.so"));
  builder.OnSample(At(7, 0x1010));
  builder.OnSample(At(7, 0x1010));
  builder.OnMmap(Map("b.so"));  // replaces a.so at the same addresses
  for (int i = 0; i < 3; ++i) builder.OnSample(At(7, 0x1010));
  builder.OnComm(Name(7, "two"));
  for (int i = 0; i < 4; ++i) builder.OnSample(At(7, 0x1010));
  builder.OnComm(Name(8, "other"));  // a thread of its own name, same pc
  for (int i = 0; i < 5; ++i) builder.OnSample(At(8, 0x1010));
  const FunctionProfile profile = builder.Finish();
  EXPECT_EQ(Rows(profile),
            (std::map<std::string, uint64_t>{
                {"one in_a.so", 2}, {"one in_b.so", 3}, {"two in_b.so", 4}, {"other in_b.so", 5}}));
  EXPECT_EQ(profile.total_samples[0], 14u);
  EXPECT_EQ(profile.total_period[0], 140u);
}

}  // namespace
}  // namespace tprof
