// perf script text: the default layout and the common -F variants, checked field by field and
// against perf's own sample counts for a file recorded here.
#include "core/perf_script_parser.h"

#include <gtest/gtest.h>

#include "core/profile_source.h"

namespace tprof {
namespace {

std::string Fn(TextProfile& p, uint64_t address) {
  ResolvedFrame f = p.frames.Resolve(nullptr, address);
  return f.module + ":" + f.function;
}

TEST(PerfScriptParser, DefaultOutputWithCallchains) {
  const char* text =
      "tprof_demo  9393  3597.749431:     500000 cpu-clock: \n"
      "\tffffffff821f64aa __pi_memcpy+0xa ([kernel.kallsyms])\n"
      "\t           20ca3 mmap64+0x13 (/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2)\n"
      "\t    7f1c6aaee1e0 [unknown] ([unknown])\n"
      "\n"
      "Web Content  9400/9401 [001]  3597.750000:     250000 cycles:u: \n"
      "\t    55d0c1a2b3c4 std::vector<int, std::allocator<int> >::push_back(int const&)+0x24 "
      "(/opt/app/bin/app)\n"
      "\n";
  auto p = ParsePerfScript(text);
  ASSERT_TRUE(p.ok()) << p.error().message();
  ASSERT_EQ(p->samples.size(), 2u);
  ASSERT_EQ(p->events.size(), 2u);
  EXPECT_EQ(p->events[0].name, "cpu-clock");
  EXPECT_EQ(p->events[1].name, "cycles:u");
  const Sample& a = p->samples[0];
  EXPECT_EQ(a.pid, 9393u);
  EXPECT_EQ(a.period, 500000u);
  EXPECT_EQ(a.time, 3597749431000u);
  ASSERT_EQ(a.callchain.size(), 3u);
  EXPECT_EQ(Fn(*p, a.ip), "[kernel.kallsyms]:__pi_memcpy");
  EXPECT_EQ(Fn(*p, a.callchain[1]), "ld-linux-x86-64.so.2:mmap64");
  EXPECT_EQ(Fn(*p, a.callchain[2]), "[unknown]:[unknown]");
  const Sample& b = p->samples[1];
  EXPECT_EQ(b.pid, 9400u);
  EXPECT_EQ(b.tid, 9401u);
  EXPECT_EQ(b.cpu, 1u);
  EXPECT_EQ(b.event, 1u);
  EXPECT_EQ(Fn(*p, b.ip), "app:std::vector<int, std::allocator<int> >::push_back(int const&)");
  EXPECT_EQ(p->comms[p->sample_comm[1]], "Web Content");
}

// perf script prints callchain end and context markers (-1, PERF_CONTEXT_USER = -512) as
// "ffffffffffffffff [unknown]" lines; they are not frames (they read as an outermost [unknown]).
TEST(PerfScriptParser, MarkerAddressesAreNotFrames) {
  const char* text =
      "python3  4242  100.000001:     250000 task-clock: \n"
      "\t    7f00000010a0 PyEval_EvalFrameDefault+0x20 (/usr/bin/python3.11)\n"
      "\tfffffffffffffe00 [unknown] ([unknown])\n"
      "\t    7f00000020b0 main+0x10 (/usr/bin/python3.11)\n"
      "\tffffffffffffffff [unknown] ([unknown])\n"
      "\n"
      "python3  4242  100.000002:     250000 task-clock: \n"
      "\tfffffffffffff001 [unknown] ([unknown])\n"
      "\tffffffffffffefff not_a_marker (/usr/bin/python3.11)\n"
      "\n";
  auto p = ParsePerfScript(text);
  ASSERT_TRUE(p.ok()) << p.error().message();
  ASSERT_EQ(p->samples.size(), 2u);
  const Sample& a = p->samples[0];
  ASSERT_EQ(a.callchain.size(), 2u);
  EXPECT_EQ(Fn(*p, a.callchain[0]), "python3.11:PyEval_EvalFrameDefault");
  EXPECT_EQ(Fn(*p, a.callchain[1]), "python3.11:main");
  // -4095 (0x...f001) is the lowest marker value; one below it is an address like any other.
  const Sample& b = p->samples[1];
  ASSERT_EQ(b.callchain.size(), 1u);
  EXPECT_EQ(Fn(*p, b.callchain[0]), "python3.11:not_a_marker");
}

TEST(PerfScriptParser, SingleLineSamplesWithoutPeriodOrEvent) {
  const char* text =
      "      tprof_demo  9393  ffffffff821f64aa __pi_memcpy+0xa ([kernel.kallsyms])\n"
      "      tprof_demo  9393      7f1c6ab063aa _dl_relocate_object+0x78a (/lib/ld.so)\n"
      "tprof_demo 9393/9393 cpu-clock:  401000 main (/bin/demo)\n"
      "  mmap64.c:58\n";
  auto p = ParsePerfScript(text);
  ASSERT_TRUE(p.ok()) << p.error().message();
  ASSERT_EQ(p->samples.size(), 3u);
  EXPECT_EQ(p->samples[0].period, 1u);
  EXPECT_EQ(Fn(*p, p->samples[1].ip), "ld.so:_dl_relocate_object");
  EXPECT_EQ(Fn(*p, p->samples[2].ip), "demo:main");
  EXPECT_EQ(p->events.size(), 2u);  // "samples" and "cpu-clock"
  EXPECT_EQ(p->skipped_lines, 1u);  // the srcline
}

TEST(PerfScriptParser, PeriodWithoutEventAndFramesBelow) {
  const char* text =
      "tprof_demo  9393/9393      500000 \n"
      "\tffffffff821f64aa __pi_memcpy ([kernel.kallsyms])\n"
      "  [kernel.kallsyms][ffffffff821f64aa]\n"
      "\t            80c5 _dl_map_object (/lib/ld.so)\n"
      "  dl-load.c:2272\n";
  auto p = ParsePerfScript(text);
  ASSERT_TRUE(p.ok()) << p.error().message();
  ASSERT_EQ(p->samples.size(), 1u);
  EXPECT_EQ(p->samples[0].period, 500000u);
  EXPECT_EQ(p->samples[0].callchain.size(), 2u);
}

TEST(PerfScriptParser, TextWithoutSamplesIsAnError) {
  auto p = ParsePerfScript("hello\nworld\n");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().message().find("line 1"), std::string::npos);
}

TEST(PerfScriptParser, SniffedAsPerfScript) {
  auto f =
      SniffProfileFormat("tprof_demo  9393  3597.749431:     500000 cpu-clock: \n\tffff a (b)\n");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(*f, ProfileFormat::kPerfScript);
}

}  // namespace
}  // namespace tprof
