// Process address spaces built from MMAP records, overlaps as the kernel leaves them.
#include "core/model/address_space.h"

#include <gtest/gtest.h>

namespace tprof {
namespace {

MmapRecord Mmap(uint64_t start, uint64_t length, const std::string& file, uint64_t offset = 0) {
  MmapRecord r;
  r.pid = r.tid = 98;
  r.start = start;
  r.length = length;
  r.page_offset = offset;
  r.filename = file;
  return r;
}

// The arm lab's guest: the kernel reports ld.so's whole reserved span (0x42000 bytes), unmaps
// its tail without a record, and puts the vdso there. perf script names ld.so for the samples
// at its start; tprof had lost the whole of it to the vdso.
TEST(AddressSpaceTest, AMappingInsideAnotherKeepsTheOthersPartsAroundIt) {
  AddressSpace space;
  space.OnMmap(Mmap(0xffffad794000, 0x42000, "/lib/ld-linux-aarch64.so.1"));
  space.OnMmap(Mmap(0xffffad7d1000, 0x1000, "[vdso]"));
  const Mapping* before = space.Find(98, 0xffffad79ce04);
  ASSERT_TRUE(before);
  EXPECT_EQ(before->filename, "/lib/ld-linux-aarch64.so.1");
  EXPECT_EQ(before->FileOffset(0xffffad79ce04), 0x8e04u);
  EXPECT_EQ(before->end, 0xffffad7d1000u);
  const Mapping* vdso = space.Find(98, 0xffffad7d1800);
  ASSERT_TRUE(vdso);
  EXPECT_EQ(vdso->filename, "[vdso]");
  const Mapping* after = space.Find(98, 0xffffad7d2010);
  ASSERT_TRUE(after);
  EXPECT_EQ(after->filename, "/lib/ld-linux-aarch64.so.1");
  EXPECT_EQ(after->FileOffset(0xffffad7d2010), 0x3e010u);  // offsets continue past the hole
}

// A process's generation changes whenever what Find can answer for it does, also when it was
// just asked for (GenerationOf keeps its last answer): a mapping of its own or of the kernel,
// an exec, a fork into it. Another process's mapping leaves it alone.
TEST(AddressSpaceTest, GenerationChangesWithEveryChangeEvenRightAfterItWasAsked) {
  AddressSpace space;
  space.OnMmap(Mmap(0x400000, 0x1000, "/bin/a"));
  AddressSpace::Generation seen = space.GenerationOf(98);
  EXPECT_EQ(space.GenerationOf(98), seen);
  auto changed = [&](const char* what) {
    const AddressSpace::Generation now = space.GenerationOf(98);
    EXPECT_NE(now, seen) << what;
    seen = now;
  };
  space.OnMmap(Mmap(0x500000, 0x1000, "/lib/b.so"));
  changed("a mapping of its own");
  MmapRecord kernel = Mmap(0xffffffff81000000, 0x1000000, "[kernel.kallsyms]");
  kernel.pid = kernel.tid = UINT32_MAX;
  space.OnMmap(kernel);
  changed("a kernel mapping");
  CommRecord exec;
  exec.pid = exec.tid = 98;
  exec.exec = true;
  exec.comm = "b";
  space.OnComm(exec);
  changed("an exec");
  MmapRecord other = Mmap(0x600000, 0x1000, "/bin/c");
  other.pid = other.tid = 99;
  space.OnMmap(other);
  EXPECT_EQ(space.GenerationOf(98), seen) << "another process's mapping";
  TaskRecord fork;
  fork.pid = fork.tid = 98;
  fork.ppid = fork.ptid = 99;
  space.OnTask(fork);
  changed("a fork into it");
}

TEST(AddressSpaceTest, AMappingOverSeveralReplacesTheirOverlappedParts) {
  AddressSpace space;
  space.OnMmap(Mmap(0x1000, 0x2000, "/a", 0x10000));  // [0x1000, 0x3000)
  space.OnMmap(Mmap(0x3000, 0x2000, "/b"));           // [0x3000, 0x5000)
  space.OnMmap(Mmap(0x2000, 0x2000, "/c"));           // [0x2000, 0x4000) over both
  EXPECT_EQ(space.Find(98, 0x1800)->filename, "/a");
  EXPECT_EQ(space.Find(98, 0x1800)->FileOffset(0x1800), 0x10800u);
  EXPECT_EQ(space.Find(98, 0x2800)->filename, "/c");
  EXPECT_EQ(space.Find(98, 0x3800)->filename, "/c");
  EXPECT_EQ(space.Find(98, 0x4800)->filename, "/b");
  EXPECT_EQ(space.Find(98, 0x4800)->FileOffset(0x4800), 0x1800u);
  // Exactly over an old one: only the new one is left.
  space.OnMmap(Mmap(0x2000, 0x2000, "/d"));
  EXPECT_EQ(space.Find(98, 0x2000)->filename, "/d");
  EXPECT_EQ(space.Find(98, 0x3fff)->filename, "/d");
  EXPECT_EQ(space.Find(98, 0x5000), nullptr);
}

}  // namespace
}  // namespace tprof
