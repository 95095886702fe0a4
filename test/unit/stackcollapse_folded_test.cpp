// --folded-style stackcollapse: the expected lines are derived by hand from the rules of
// FlameGraph's stackcollapse-perf.pl (the version of its commit 2b0ba56, whose test.sh runs the
// options pid, tid, kernel, jit, all and addrs; periods, the unterminated last sample and the
// frame without a symbol follow commit 41fee1f, whose suite ctest runs in full), not from
// tprof's output. The inputs are written
// here to hold one case of each rule; the comments say which rule gives each name.
#include "report/stackcollapse_folded.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <tuple>

#include "core/source/profile_source.h"
#include "test/support/run_command.h"

namespace tprof {
namespace {

std::string Collapse(const std::string& text, StackcollapseOptions options) {
  auto source = ProfileSource::OpenBytes(text);
  EXPECT_TRUE(source.ok()) << source.error().message();
  if (!source.ok()) return "";
  options.pids_unknown = (*source)->metadata().pids_unknown;
  FrameResolver* frames = (*source)->embedded_frames();
  StackcollapseFolder folder(*frames, dynamic_cast<const NamedFrameTable*>(frames), options);
  auto read = (*source)->ReadRecords(folder);
  EXPECT_TRUE(read.ok());
  return folder.Render();
}

StackcollapseOptions Options(StackcollapseOptions::Root root = StackcollapseOptions::Root::kComm,
                             bool kernel = false, bool jit = false, bool addrs = false) {
  StackcollapseOptions o;
  o.root = root;
  o.mark_kernel = kernel;
  o.mark_jit = jit;
  o.addresses = addrs;
  return o;
}

// Samples 1 and 4 below: the same stack on two threads.
const std::string kJavaStack =
    "\tffffffff8a1c4e20 native_safe_halt+0x1b ([kernel.kallsyms])\n"
    "\t    7f0000001000 Lcom/example/shop/Cart;.total(Lcom/example/shop/"
    "Item;)Ljava/math/BigDecimal; (/tmp/perf-4000.map)\n"
    "\t    7f0000002000 Interpreter::run(Thread*, int) (/usr/lib/jvm/libjvm.so)\n"
    "\t    7f0000003000 [unknown] (/usr/lib/jvm/libjvm.so)\n"
    "\t    7f0000004000 [unknown] ([unknown])\n"
    "\t    7f0000005000 start_thread (/lib/x86_64-linux-gnu/libpthread-2.15.so)\n";

// perf script -F comm,pid,tid,cpu,time,event,ip,sym,dso --header: "pid/tid" on sample lines.
const std::string kPidTid =
    "# ========\n"
    "# captured on: Wed Nov 25 12:00:00 2026\n"
    "# hostname : test\n"
    "# os release : 6.1.0\n"
    "# perf version : 6.1.0\n"
    "# arch : x86_64\n"
    "# nrcpus online : 2\n"
    "# nrcpus avail : 2\n"
    "# cpudesc : Test CPU\n"
    "# cpuid : GenuineIntel,6,62,4\n"
    "# total memory : 7693752 kB\n"
    "# cmdline : /usr/bin/perf record -F 99 -a -g -- java -jar app.jar\n"
    "# event : name = cpu-clock, type = 1, config = 0x0\n"
    "# HEADER_CPU_TOPOLOGY info available, use -I to display\n"
    "# HEADER_NUMA_TOPOLOGY info available, use -I to display\n"
    "# pmu mappings: software = 1, tracepoint = 2, breakpoint = 5\n"
    "# ========\n"
    "#\n"
    // 1. Java's main thread. "+0x1b" is stripped. A Java signature loses what follows its first
    // '(' and ';' becomes ':'; its leading 'L' goes only when the root is exactly "java". A
    // C++ name loses its parameters. [unknown] in a known module is "[module]" (its base
    // name), in [unknown] "[unknown]"; --addrs adds the printed address. --kernel marks
    // [kernel.kallsyms], --jit /tmp/perf-PID.map.
    "java 4000/4000 [000] 100.000001: cpu-clock: \n" +
    kJavaStack +
    "\n"
    // 2. A thread of a process whose main thread never sampled: the root is the sample's own
    // comm, spaces as '_'. A symbol starting with '(' is skipped (stackcollapse-perf takes it
    // for a process name); "(anonymous namespace)" elsewhere survives the cut at '('; a Go
    // method "pkg.(*T).M" keeps its parentheses; "a->b" is an inlined chain, the callee
    // marked _[i]. The last two frames are indented with spaces and not at all.
    "C2 CompilerThre 5000/5007 [001] 100.000002: cpu-clock: \n"
    "\t    7f0000006000 (anonymous namespace)::helper(int) (/usr/lib/jvm/libjvm.so)\n"
    "\t    7f0000006100 app::(anonymous namespace)::Compile::Optimize(int) "
    "(/usr/lib/jvm/libjvm.so)\n"
    "\t    7f0000007000 net/http.(*Client).Do (/opt/goapp)\n"
    "    7f0000008000 outer_fn->inner_fn (/opt/app)\n"
    "7f0000009000 thread_entry (/opt/app)\n"
    "\n"
    // 3. --kernel marks a module that starts with '[' ([nf_conntrack], and [vdso] too) or
    // ends in vmlinux, unless it says "unknown"; a *.ko path is not marked. Quotes are deleted.
    "java 4000/4001 [001] 100.000003: cpu-clock: \n"
    "\t             3a4 nf_conntrack_in+0x3a4 ([nf_conntrack])\n"
    "\t          9d2210 tcp_sendmsg (/usr/src/linux-6.1/vmlinux)\n"
    "\t            1f00 xfs_file_read_iter (/lib/modules/6.1.0/kernel/fs/xfs/xfs.ko)\n"
    "\tffffffff81000000 [unknown] ([unknown])\n"
    "\t    7ffd1c3f0a10 __vdso_clock_gettime ([vdso])\n"
    "\t    7f000000a000 KeyedLoadIC:\"price\"'s (/tmp/perf-4000.map)\n"
    "\t    7f000000b000 Ljava/lang/Thread;.run()V (/tmp/perf-4000.map)\n"
    "\n"
    // 4. Sample 1's stack on another thread: merged with it unless --tid.
    "java 4000/4001 [000] 100.000004: cpu-clock: \n" +
    kJavaStack +
    "\n"
    // 5. Another event: only the first event seen is folded.
    "java 4000/4000 [000] 100.000005: instructions: \n"
    "\t    7f0000005000 start_thread (/lib/x86_64-linux-gnu/libpthread-2.15.so)\n"
    "\n"
    // 6, 7. A frame on the sample line is not a stack line, and a sample without frames is
    // its root alone.
    "java 4000/4000 [000] 100.000006: cpu-clock:  7f0000005000 start_thread "
    "(/lib/x86_64-linux-gnu/libpthread-2.15.so)\n"
    "\n"
    "java 4000/4000 [000] 100.000007: cpu-clock: \n"
    "\n";

const std::string kC2 =
    ";thread_entry;outer_fn;inner_fn_[i];net/http.(*Client).Do;"
    "app::(anonymous namespace)::Compile::Optimize 1\n";

TEST(StackcollapseFolded, Default) {
  EXPECT_EQ(Collapse(kPidTid, Options()),
            "C2_CompilerThre" + kC2 +
                "java 2\n"
                "java;java/lang/Thread:.run;KeyedLoadIC:prices;__vdso_clock_gettime;[unknown];"
                "xfs_file_read_iter;tcp_sendmsg;nf_conntrack_in 1\n"
                "java;start_thread;[unknown];[libjvm.so];Interpreter::run;"
                "com/example/shop/Cart:.total;native_safe_halt 2\n");
}

TEST(StackcollapseFolded, Kernel) {
  EXPECT_EQ(Collapse(kPidTid, Options(StackcollapseOptions::Root::kComm, true)),
            "C2_CompilerThre" + kC2 +
                "java 2\n"
                "java;java/lang/Thread:.run;KeyedLoadIC:prices;__vdso_clock_gettime_[k];[unknown];"
                "xfs_file_read_iter;tcp_sendmsg_[k];nf_conntrack_in_[k] 1\n"
                "java;start_thread;[unknown];[libjvm.so];Interpreter::run;"
                "com/example/shop/Cart:.total;native_safe_halt_[k] 2\n");
}

TEST(StackcollapseFolded, Jit) {
  EXPECT_EQ(
      Collapse(kPidTid, Options(StackcollapseOptions::Root::kComm, false, true)),
      "C2_CompilerThre" + kC2 +
          "java 2\n"
          "java;java/lang/Thread:.run_[j];KeyedLoadIC:prices_[j];__vdso_clock_gettime;[unknown];"
          "xfs_file_read_iter;tcp_sendmsg;nf_conntrack_in 1\n"
          "java;start_thread;[unknown];[libjvm.so];Interpreter::run;"
          "com/example/shop/Cart:.total_[j];native_safe_halt 2\n");
}

TEST(StackcollapseFolded, All) {
  EXPECT_EQ(Collapse(kPidTid, Options(StackcollapseOptions::Root::kComm, true, true)),
            "C2_CompilerThre" + kC2 +
                "java 2\n"
                "java;java/lang/Thread:.run_[j];KeyedLoadIC:prices_[j];__vdso_clock_gettime_[k];"
                "[unknown];xfs_file_read_iter;tcp_sendmsg_[k];nf_conntrack_in_[k] 1\n"
                "java;start_thread;[unknown];[libjvm.so];Interpreter::run;"
                "com/example/shop/Cart:.total_[j];native_safe_halt_[k] 2\n");
}

TEST(StackcollapseFolded, Addrs) {
  EXPECT_EQ(Collapse(kPidTid, Options(StackcollapseOptions::Root::kComm, false, false, true)),
            "C2_CompilerThre" + kC2 +
                "java 2\n"
                "java;java/lang/Thread:.run;KeyedLoadIC:prices;__vdso_clock_gettime;"
                "[unknown <ffffffff81000000>];xfs_file_read_iter;tcp_sendmsg;"
                "nf_conntrack_in 1\n"
                "java;start_thread;[unknown <7f0000004000>];[libjvm.so <7f0000003000>];"
                "Interpreter::run;com/example/shop/Cart:.total;"
                "native_safe_halt 2\n");
}

// Under --pid the root is "java-4000", not "java": Java signatures keep their 'L'.
TEST(StackcollapseFolded, Pid) {
  EXPECT_EQ(
      Collapse(kPidTid, Options(StackcollapseOptions::Root::kPid)),
      "C2_CompilerThre-5000" + kC2 +
          "java-4000 2\n"
          "java-4000;Ljava/lang/Thread:.run;KeyedLoadIC:prices;__vdso_clock_gettime;[unknown];"
          "xfs_file_read_iter;tcp_sendmsg;nf_conntrack_in 1\n"
          "java-4000;start_thread;[unknown];[libjvm.so];Interpreter::run;"
          "Lcom/example/shop/Cart:.total;native_safe_halt 2\n");
}

TEST(StackcollapseFolded, Tid) {
  EXPECT_EQ(Collapse(kPidTid, Options(StackcollapseOptions::Root::kTid)),
            "C2_CompilerThre-5000/5007" + kC2 +
                "java-4000/4000 2\n"
                "java-4000/4000;start_thread;[unknown];[libjvm.so];Interpreter::run;"
                "Lcom/example/shop/Cart:.total;native_safe_halt 1\n"
                "java-4000/4001;Ljava/lang/Thread:.run;KeyedLoadIC:prices;__vdso_clock_gettime;"
                "[unknown];xfs_file_read_iter;tcp_sendmsg;nf_conntrack_in 1\n"
                "java-4000/4001;start_thread;[unknown];[libjvm.so];Interpreter::run;"
                "Lcom/example/shop/Cart:.total;native_safe_halt 1\n");
}

// perf script's default fields: one number, the thread id. The process is "?" under --pid and
// --tid. Frames indented with spaces and not indented at all are frames.
const std::string kTidOnly =
    "calc 2201 5021.310442: cpu-clock: \n"
    "          401136 work_b (/opt/calc/bin/calc)\n"
    "4011a2 main (/opt/calc/bin/calc)\n"
    "\t    7f3b2a029d90 __libc_start_main (/usr/lib/x86_64-linux-gnu/libc.so.6)\n"
    "\n"
    "Node Worker 3120 812.004211: cpu-clock: \n"
    "\t    3e2f1c0a7c40 LazyCompile:~render /srv/app/view.js:42 (/tmp/perf-3100.map)\n"
    "\t    7f0000001000 v8::internal::Invoke(v8::internal::Isolate*) (/usr/bin/node)\n"
    "\n";

TEST(StackcollapseFolded, TidOnlyInput) {
  using Root = StackcollapseOptions::Root;
  EXPECT_EQ(Collapse(kTidOnly, Options()),
            "Node_Worker;v8::internal::Invoke;LazyCompile:~render /srv/app/view.js:42 1\n"
            "calc;__libc_start_main;main;work_b 1\n");
  EXPECT_EQ(Collapse(kTidOnly, Options(Root::kPid)),
            "Node_Worker-?;v8::internal::Invoke;LazyCompile:~render /srv/app/view.js:42 1\n"
            "calc-?;__libc_start_main;main;work_b 1\n");
  EXPECT_EQ(Collapse(kTidOnly, Options(Root::kTid)),
            "Node_Worker-?/3120;v8::internal::Invoke;"
            "LazyCompile:~render /srv/app/view.js:42 1\n"
            "calc-?/2201;__libc_start_main;main;work_b 1\n");
  EXPECT_EQ(Collapse(kTidOnly, Options(Root::kComm, true, true, true)),
            "Node_Worker;v8::internal::Invoke;LazyCompile:~render /srv/app/view.js:42_[j] 1\n"
            "calc;__libc_start_main;main;work_b 1\n");
}

// The rules of commit 41fee1f that FlameGraph's own suite exercises:
// - the period: /:\s*(\d+)*\s+(\S+):\s*$/ on the sample line takes the number before the event
//   name, and a sample without one counts 1;
// - a frame line with no symbol, "addr  (module)": /^\s*(\w+)\s*(.+) \((\S*)\)/ leaves one
//   space as the name, which no tidying changes;
// - a stack is saved only at the empty line after it, so a last sample with none is lost.
const std::string kPeriods =
    "dd 2088 [001] 1264.612348: 10101010 cpu-clock: \n"
    "\t          4011a0 copy_block (/bin/dd)\n"
    "\t    7f1e2215d058  (/lib/x86_64-linux-gnu/libc-2.15.so)\n"
    "\n"
    "dd 2088 [001] 1264.622449: 10101010 cpu-clock: \n"
    "\t          4011a0 copy_block (/bin/dd)\n"
    "\t    7f1e2215d058  (/lib/x86_64-linux-gnu/libc-2.15.so)\n"
    "\n"
    "dd 2088 [000] 1264.632550: 20202020 cpu-clock: \n"
    "\t          401200 main (/bin/dd)\n"
    "\n"
    "dd 2088 [000] 1264.642651: 10101010 cpu-clock: \n"
    "\t          401200 main (/bin/dd)\n";  // the text ends here, without an empty line

TEST(StackcollapseFolded, PeriodsFramesWithoutASymbolAndTheUnterminatedLastSample) {
  // dd; " " (libc's frame, root side); copy_block twice at 10101010; main once at 20202020, and
  // not the last sample's 10101010.
  EXPECT_EQ(Collapse(kPeriods, Options()),
            "dd; ;copy_block 20202020\n"
            "dd;main 20202020\n");
  // With the empty line the last sample is saved: main 20202020 + 10101010.
  EXPECT_EQ(Collapse(kPeriods + "\n", Options()),
            "dd; ;copy_block 20202020\n"
            "dd;main 30303030\n");
  // tprof's own views keep the last sample (two samples of main in the model), with a note
  // that its stack may be short; the text cut inside that line leaves it out and is incomplete.
  const std::string cut = kPeriods.substr(0, kPeriods.size() - 5);
  for (const auto& [text, samples, period, complete, note] :
       {std::tuple{kPeriods, 4u, 50505050u, true, "may be short"},
        std::tuple{kPeriods + "\n", 4u, 50505050u, true, ""},
        std::tuple{cut, 3u, 40404040u, false, "ends inside its last sample"}}) {
    auto source = ProfileSource::OpenBytes(text);
    ASSERT_TRUE(source.ok());
    struct Count : RecordVisitor {
      uint64_t samples = 0, period = 0;
      void OnSample(const Sample& s) override { ++samples, period += s.period; }
    } count;
    auto summary = (*source)->ReadRecords(count);
    ASSERT_TRUE(summary.ok());
    EXPECT_EQ(count.samples, samples);
    EXPECT_EQ(count.period, period);
    EXPECT_EQ(summary->complete, complete) << summary->warning;
    if (*note)
      EXPECT_NE(summary->warning.find(note), std::string::npos) << summary->warning;
    else
      EXPECT_EQ(summary->warning, "");
  }
  // The script drops the cut sample as it drops the unended one.
  EXPECT_EQ(Collapse(cut, Options()), Collapse(kPeriods, Options()));
}

TEST(StackcollapseFolded, NamesOneFrame) {
  StackcollapseOptions o;
  EXPECT_EQ(StackcollapseNames("(process)", "[unknown]", "0", "p", o), std::vector<std::string>{});
  EXPECT_EQ(StackcollapseNames("a->b->c", "/x", "0", "p", o),
            (std::vector<std::string>{"a", "b_[i]", "c_[i]"}));
  EXPECT_EQ(StackcollapseNames("f(std::pair<int; int>)", "/x", "0", "p", o),
            std::vector<std::string>{"f"});
  // No symbol printed: one space, marked like any other frame of its module.
  EXPECT_EQ(StackcollapseNames("", "/lib/libc.so.6", "7f00", "p", o),
            std::vector<std::string>{" "});
  o.mark_kernel = true;
  EXPECT_EQ(StackcollapseNames("", "[kernel.kallsyms]", "ffff", "p", o),
            std::vector<std::string>{" _[k]"});
}

// Quirks of the script's splitting and marking, with stackcollapse-perf.pl itself as the oracle
// (run from ../shared/reference, not copied): "Type::operator->+0x59" is one frame,
// "Type::operator" (split drops the empty field at the end; tprof printed "Type::operator;_[i]"
// on a real perf script text); "->" alone is no frame and "->lead" an empty one first; a name
// that holds _[i] or _[j] already is not marked again.
TEST(StackcollapseFolded, SplitsAndMarksAsTheScriptDoes) {
  const std::string script = std::string(TPROF_REFERENCE_DIR) + "/flamegraph/stackcollapse-perf.pl";
  ASSERT_EQ(::access(script.c_str(), R_OK), 0) << script << " (../shared beside the checkout)";
  const std::string text =
      "prog 100 [000] 1.000001: 1 cpu-clock: \n"
      "\t          401000 Type::operator->+0x59 (/opt/app)\n"
      "\t          401100 std::unique_ptr<T>::operator->() const+0x10 (/opt/app)\n"
      "\t          401200 foo_[i]->bar_[i] (/opt/app)\n"
      "\t          401300 ->lead (/opt/app)\n"
      "\t          401400 -> (/opt/app)\n"
      "\t          401500 a->->b->-> (/opt/app)\n"
      "\t          401600 main (/opt/app)\n"
      "\n"
      "prog 100 [000] 1.000002: 1 cpu-clock: \n"
      "\t    7f0000001000 jitted_[j] (/tmp/perf-100.map)\n"
      "\t    7f0000002000 stub (/tmp/perf-100.map)\n"
      "\t          401600 main (/opt/app)\n"
      "\n";
  char path[] = "/tmp/tprof-stackcollapse-XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  ::close(fd);
  for (const bool jit : {false, true}) {
    std::vector<std::string> perl = {"/usr/bin/perl", script};
    if (jit) perl.push_back("--jit");
    perl.push_back(path);
    const auto expected = testing::RunCommand(perl);
    ASSERT_EQ(expected.exit_code, 0) << expected.err;
    ASSERT_NE(expected.out.find(";Type::operator 1"), std::string::npos) << expected.out;
    EXPECT_EQ(Collapse(text, Options(StackcollapseOptions::Root::kComm, false, jit)), expected.out)
        << (jit ? "--jit" : "default");
  }
  ::unlink(path);
}

}  // namespace
}  // namespace tprof
