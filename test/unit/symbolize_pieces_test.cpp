// Unit tests of the symbolization pieces: demangling, kallsyms and perf-PID.map tables, the
// disassembler, and the embedded symbols section (encoding, corruption, writer/reader).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <thread>
#include <variant>

#include "core/format/format_spec.h"
#include "core/format/output_file.h"
#include "core/format/profile_reader.h"
#include "core/format/profile_writer.h"
#include "core/format/symbol_section.h"
#include "core/format/varint.h"
#include "core/source/profile_source.h"
#include "symbolize/demangle.h"
#include "symbolize/disassembler.h"
#include "symbolize/kernel_symbols.h"
#include "symbolize/perf_map.h"
#include "symbolize/symbolizer.h"
#include "test/support/test_programs.h"

namespace tprof {
namespace {

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

TEST(Demangle, CppAndRust) {
  EXPECT_EQ(Demangle("_ZN12_GLOBAL__N_110mix_helperEm"),
            "(anonymous namespace)::mix_helper(unsigned long)");
  EXPECT_EQ(Demangle("main"), "main");
  // Symbol versions are not part of the name.
  EXPECT_EQ(Demangle("__libc_start_main@@GLIBC_2.34"), "__libc_start_main");
  EXPECT_EQ(Demangle("clock_nanosleep@GLIBC_2.17"), "clock_nanosleep");
  EXPECT_EQ(Demangle("_ZN12_GLOBAL__N_110mix_helperEm@@V1"),
            "(anonymous namespace)::mix_helper(unsigned long)");
  EXPECT_EQ(Demangle("_Znotvalid"), "_Znotvalid");
  // Legacy Rust: the hash goes, escapes are decoded.
  EXPECT_EQ(Demangle("_ZN4core3fmt5write17h0123456789abcdefE"), "core::fmt::write");
  EXPECT_EQ(
      Demangle("_ZN49_$LT$alloc..vec..Vec$LT$T$GT$$u20$as$u20$Drop$GT$4drop17h1111222233334444E"),
      "<alloc::vec::Vec<T> as Drop>::drop");
}

TEST(KernelSymbols, ParsesTextSymbolsAndModules) {
  std::string path = TempPath("symtest", "kallsyms");
  WriteFile(path,
            "ffffffff81000000 T _text\n"
            "ffffffff81001000 T do_syscall_64\n"
            "ffffffff81002000 D some_data\n"
            "ffffffff81003000 t helper\n"
            "ffffffffc0001000 t ext4_read\t[ext4]\n");
  KernelSymbols table = KernelSymbols::Load(path);
  ASSERT_TRUE(table.available());
  EXPECT_EQ(table.Find(0xffffffff81001010)->name, "do_syscall_64");
  EXPECT_EQ(table.Find(0xffffffff81002010)->name, "do_syscall_64");  // data is not a boundary
  EXPECT_EQ(table.Find(0xffffffffc0001004)->module, "[ext4]");
  EXPECT_FALSE(table.Find(0x1000));
  ::unlink(path.c_str());
}

// Module symbols come in runs, unsorted, and a module may come back after another: each symbol
// keeps its own module. The file is larger than one read, and has no newline at its end.
TEST(KernelSymbols, ModulesInRunsAndLargeFiles) {
  std::string path = TempPath("symtest", "kallsyms_modules");
  std::string text = "ffffffff81000000 T _text\n";
  for (int i = 0; i < 5000; ++i) {  // about 200 KB: several reads
    char line[96];
    std::snprintf(line, sizeof line, "ffffffff81%06x t kernel_function_number_%d\n",
                  0x1000 + i * 16, i);
    text += line;
  }
  text +=
      "ffffffffc0003000 t xfs_write\t[xfs]\n"
      "ffffffffc0001000 t ext4_read\t[ext4]\n"
      "ffffffffc0002000 t ext4_write\t[ext4]\n"
      "ffffffffc0004000 t xfs_read\t[xfs]\n"
      "ffffffffc0005000 t last_one\t[ext4]";
  WriteFile(path, text);
  KernelSymbols table = KernelSymbols::Load(path);
  ASSERT_TRUE(table.available());
  EXPECT_EQ(table.size(), 5006u);
  EXPECT_EQ(table.Find(0xffffffff81001000 + 4321 * 16 + 3)->name, "kernel_function_number_4321");
  EXPECT_EQ(table.Find(0xffffffff81001000 + 4321 * 16)->module, "[kernel.kallsyms]");
  EXPECT_EQ(table.Find(0xffffffffc0001004)->name, "ext4_read");
  EXPECT_EQ(table.Find(0xffffffffc0001004)->module, "[ext4]");
  EXPECT_EQ(table.Find(0xffffffffc0002004)->module, "[ext4]");
  EXPECT_EQ(table.Find(0xffffffffc0003004)->module, "[xfs]");
  EXPECT_EQ(table.Find(0xffffffffc0004004)->name, "xfs_read");
  EXPECT_EQ(table.Find(0xffffffffc0004004)->module, "[xfs]");
  EXPECT_EQ(table.Find(0xffffffffc0005004)->name, "last_one");
  EXPECT_EQ(table.Find(0xffffffffc0005004)->module, "[ext4]");
  ::unlink(path.c_str());
}

TEST(KernelSymbols, HiddenAddressesGiveANote) {
  std::string path = TempPath("symtest", "kallsyms_hidden");
  WriteFile(path, "0000000000000000 T _text\n0000000000000000 T do_syscall_64\n");
  KernelSymbols table = KernelSymbols::Load(path);
  EXPECT_FALSE(table.available());
  EXPECT_NE(table.unavailable_reason().find("kptr_restrict"), std::string::npos);

  std::vector<std::string> notes;
  SymbolizerOptions options;
  options.kallsyms = path;
  options.on_note = [&](const std::string& n) { notes.push_back(n); };
  Symbolizer symbolizer(options);
  ResolvedFrame frame = symbolizer.Resolve(nullptr, 0xffffffff81001010);
  EXPECT_FALSE(frame.resolved);
  EXPECT_EQ(frame.function, "[kernel.kallsyms+0xffffffff81001010]");
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("kernel symbols unavailable"), std::string::npos);
  ::unlink(path.c_str());
}

TEST(KernelSymbols, RunningKernelResolvesWhenReadable) {
  KernelSymbols table = KernelSymbols::Load("/proc/kallsyms");
  if (!table.available()) GTEST_SKIP() << table.unavailable_reason();
  SymbolizerOptions options;
  options.on_note = [](const std::string&) {};
  Symbolizer symbolizer(options);
  std::ifstream in("/proc/kallsyms");
  std::string address, type, name;
  uint64_t schedule = 0;
  while (in >> address >> type >> name)
    if (name == "schedule" && (type == "T" || type == "t"))
      schedule = std::stoull(address, nullptr, 16);
  if (!schedule) GTEST_SKIP() << "no 'schedule' symbol";
  ResolvedFrame frame = symbolizer.Resolve(nullptr, schedule + 1);
  EXPECT_TRUE(frame.resolved);
  EXPECT_EQ(frame.function, "schedule");
  EXPECT_EQ(frame.module, "[kernel.kallsyms]");
}

// perf's build-id cache as `perf record` leaves it: DIR/.build-id/xx/yyyy links to the
// directory of a copy ("kallsyms" for the kernel).
std::string MakeCacheEntry(const std::string& dir, const std::string& hex_id,
                           const std::string& file, const std::string& content) {
  std::string copy_dir = dir + "/[kernel.kallsyms]/" + hex_id;
  std::string link_dir = dir + "/.build-id/" + hex_id.substr(0, 2);
  std::filesystem::create_directories(copy_dir);
  std::filesystem::create_directories(link_dir);
  std::filesystem::create_directory_symlink("../../[kernel.kallsyms]/" + hex_id,
                                            link_dir + "/" + hex_id.substr(2));
  WriteFile(copy_dir + "/" + file, content);
  return copy_dir + "/" + file;
}

TEST(KernelSymbols, RecordedKernelNamesComeFromPerfsBuildIdCache) {
  // The recorded kernel is not the running one (its notes say another build-id), but perf's
  // cache kept its symbols: they name its addresses.
  std::string dir = TempPath("symtest", "buildid_cache");
  const std::string recorded(20, '\x4a');
  MakeCacheEntry(dir, "4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a4a", "kallsyms",
                 "ffffffff81000000 T _text\n"
                 "ffffffff81001000 T recorded_kernel_function\n"
                 "ffffffff81002000 T next_function\n");
  std::string notes = TempPath("symtest", "notes_other_kernel");
  WriteFile(notes,
            std::string("\x04\0\0\0\x14\0\0\0\x03\0\0\0GNU\0", 16) + std::string(20, '\x11'));
  ASSERT_EQ(RunningKernelBuildId(notes), std::string(20, '\x11'));

  Mapping kernel;
  kernel.start = 0xffffffff81000000;
  kernel.end = 0xffffffff82000000;
  kernel.filename = "[kernel.kallsyms]_text";
  kernel.build_id = recorded;
  std::vector<std::string> notes_given;
  SymbolizerOptions options;
  options.build_id_dir = dir;
  options.kallsyms = TempPath("symtest", "no_such_kallsyms");
  options.kernel_notes = notes;
  options.on_note = [&](const std::string& n) { notes_given.push_back(n); };
  for (bool preload : {false, true}) {
    Symbolizer symbolizer(options);
    if (preload) symbolizer.PreloadKernelSymbols(recorded);
    ResolvedFrame frame = symbolizer.ResolveInProcess(1, &kernel, 0xffffffff81001010);
    EXPECT_TRUE(frame.resolved) << preload;
    EXPECT_EQ(frame.function, "recorded_kernel_function");
  }
  EXPECT_TRUE(notes_given.empty()) << notes_given.front();

  // Without the cache the running kernel's symbols are not used for another kernel.
  options.build_id_dir = "";
  options.kallsyms = MakeCacheEntry(dir, "5b5b5b5b5b5b5b5b5b5b5b5b5b5b5b5b5b5b5b5b", "kallsyms",
                                    "ffffffff81001000 T running_kernel_function\n");
  Symbolizer without_cache(options);
  EXPECT_FALSE(without_cache.ResolveInProcess(1, &kernel, 0xffffffff81001010).resolved);
  ASSERT_FALSE(notes_given.empty());
  EXPECT_NE(notes_given.back().find("recorded on another kernel"), std::string::npos);
  std::filesystem::remove_all(dir);
  ::unlink(notes.c_str());
}

TEST(PerfMap, ResolvesJitCodeOfTheProcess) {
  std::string dir = TempPath("symtest", "maps");
  ::mkdir(dir.c_str(), 0755);
  WriteFile(dir + "/perf-4242.map",
            "7f0000001000 40 LazyCompile:~foo bar.js:1\n"
            "0x7f0000002000 0x20 jitted_loop\n"
            "garbage line\n");
  SymbolizerOptions options;
  options.perf_map_dir = dir;
  options.on_note = [](const std::string&) {};
  Symbolizer symbolizer(options);
  Mapping anon;
  anon.start = 0x7f0000000000;
  anon.end = 0x7f0000100000;
  anon.filename = "//anon";
  ResolvedFrame a = symbolizer.ResolveInProcess(4242, &anon, 0x7f0000001010);
  EXPECT_TRUE(a.resolved);
  EXPECT_EQ(a.function, "LazyCompile:~foo bar.js:1");
  EXPECT_EQ(a.module, "perf-4242.map");
  EXPECT_EQ(symbolizer.ResolveInProcess(4242, nullptr, 0x7f0000002004).function, "jitted_loop");
  ResolvedFrame miss = symbolizer.ResolveInProcess(4242, &anon, 0x7f0000003000);
  EXPECT_FALSE(miss.resolved);
  EXPECT_EQ(miss.function, "[anon+0x3000]");
  EXPECT_FALSE(symbolizer.ResolveInProcess(7, &anon, 0x7f0000001010).resolved);  // no map
  ::unlink((dir + "/perf-4242.map").c_str());
  ::rmdir(dir.c_str());
}

TEST(Symbolizer, VdsoResolvesFromThisKernel) {
  SymbolizerOptions options;
  options.on_note = [](const std::string&) {};
  Symbolizer symbolizer(options);
  DwarfModule* vdso = symbolizer.ModuleFor("[vdso]", "");
  if (!vdso) GTEST_SKIP() << "no vdso";
  // Some function of the vdso resolves by name through a mapping named [vdso].
  bool found = false;
  for (uint64_t offset = 0; offset < 0x2000 && !found; offset += 4) {
    Mapping m;
    m.start = 0x7fff00000000;
    m.end = m.start + 0x2000;
    m.filename = "[vdso]";
    ResolvedFrame f = symbolizer.Resolve(&m, m.start + offset);
    if (f.resolved && f.function.find("clock_gettime") != std::string::npos) found = true;
  }
  EXPECT_TRUE(found);
}

TEST(Symbolizer, MissingAndMismatchedBinariesAreNotGuessed) {
  std::vector<std::string> notes;
  SymbolizerOptions options;
  options.on_note = [&](const std::string& n) { notes.push_back(n); };
  Symbolizer symbolizer(options);
  Mapping missing;
  missing.start = 0x400000;
  missing.end = 0x500000;
  missing.filename = "/nonexistent/prog";
  ResolvedFrame f = symbolizer.Resolve(&missing, 0x401234);
  EXPECT_FALSE(f.resolved);
  EXPECT_EQ(f.function, "[prog+0x1234]");
  Mapping wrong = missing;
  wrong.filename = "/proc/self/exe";  // this test binary, under a build-id it does not have
  wrong.build_id = std::string(20, '\x5a');
  f = symbolizer.Resolve(&wrong, 0x401000);
  EXPECT_FALSE(f.resolved);
  bool mismatch_noted = false;
  for (const std::string& n : notes)
    if (n.find("differs from the recorded") != std::string::npos) mismatch_noted = true;
  EXPECT_TRUE(mismatch_noted);
}

TEST(Disassembler, X86_64) {
  auto d = Disassembler::Create(Architecture::kX86_64);
  ASSERT_TRUE(d.ok());
  // push rbp; mov rbp, rsp; (bad byte 0x06 is invalid in 64-bit mode); ret
  std::string code("\x55\x48\x89\xe5\x06\xc3", 6);
  auto insns = d->Decode(code, 0x1000);
  ASSERT_EQ(insns.size(), 4u);
  EXPECT_EQ(insns[0].mnemonic, "push");
  EXPECT_EQ(insns[0].operands, "rbp");
  EXPECT_EQ(insns[1].address, 0x1001u);
  EXPECT_EQ(insns[1].mnemonic, "mov");
  EXPECT_EQ(insns[1].operands, "rbp, rsp");
  EXPECT_EQ(insns[2].mnemonic, "(bad)");
  EXPECT_EQ(insns[3].mnemonic, "ret");
}

TEST(Disassembler, AArch64) {
  auto d = Disassembler::Create(Architecture::kAArch64);
  ASSERT_TRUE(d.ok());
  // stp x29, x30, [sp, #-16]!; mov x29, sp; ret
  std::string code("\xfd\x7b\xbf\xa9\xfd\x03\x00\x91\xc0\x03\x5f\xd6", 12);
  auto insns = d->Decode(code, 0x4000);
  ASSERT_EQ(insns.size(), 3u);
  EXPECT_EQ(insns[0].mnemonic, "stp");
  EXPECT_EQ(insns[1].mnemonic, "mov");
  EXPECT_EQ(insns[2].mnemonic, "ret");
  EXPECT_EQ(insns[2].address, 0x4008u);
}

TEST(Disassembler, FunctionOfAModuleHasSourceLines) {
  SymbolizerOptions options;
  options.on_note = [](const std::string&) {};
  Symbolizer symbolizer(options);
  DwarfModule* module = symbolizer.ModuleFor(DEMO_BINARY, "");
  ASSERT_NE(module, nullptr);
  uint64_t start = 0, end = 0;
  ASSERT_TRUE(module->FindFunction("(anonymous namespace)::inline_mix_loop(double)", &start, &end));
  auto insns = DisassembleRange(*module, start, end);
  ASSERT_TRUE(insns.ok()) << insns.error().message();
  ASSERT_GT(insns->size(), 5u);
  EXPECT_EQ(insns->front().address, start);
  size_t with_lines = 0;
  for (const Instruction& insn : *insns) {
    EXPECT_NE(insn.mnemonic, "(bad)");
    if (insn.file.ends_with("demo.cpp") && insn.line > 0) ++with_lines;
  }
  EXPECT_GT(with_lines, insns->size() / 2);
}

ResolvedFrame SampleFrame(const std::string& name, bool with_inline) {
  ResolvedFrame f;
  f.function = name;
  f.mangled = "_Z" + name;
  f.module = "prog";
  f.resolved = true;
  if (with_inline) f.frames.push_back({"inner", "_Zinner", "/src/a.h", 12, 3, true});
  f.frames.push_back({name, "_Z" + name, "/src/a.cpp", 40, 0, false});
  return f;
}

TEST(SymbolSection, RoundTripsAndSplits) {
  SymbolTable table;
  Mapping m;
  m.start = 0x555500000000;
  m.end = m.start + 0x10000;
  m.page_offset = 0x1000;
  m.filename = "/usr/bin/prog";
  m.build_id = "\x01\x02\x03";
  for (uint64_t i = 0; i < 500; ++i)
    table.Add(SymbolKeyOf(1, &m, m.start + 16 * i),
              SampleFrame("f" + std::to_string(i % 7), i % 2));
  table.Add(SymbolKeyOf(1, nullptr, 0xffffffff81000010), SampleFrame("do_syscall_64", false));
  table.Add(SymbolKeyOf(99, nullptr, 0x7f0000001000), SampleFrame("jitted", false));
  ASSERT_EQ(table.size(), 502u);
  std::vector<std::string> payloads = table.Encode(/*max_payload_bytes=*/2000);
  EXPECT_GT(payloads.size(), 1u);
  SymbolTable decoded;
  for (const std::string& p : payloads) ASSERT_TRUE(decoded.Decode(p).ok());
  ASSERT_EQ(decoded.size(), table.size());
  // A different process mapping the same file elsewhere finds the same entries.
  Mapping other = m;
  other.start = 0x7f1200000000;
  other.end = other.start + 0x10000;
  EmbeddedSymbolResolver resolver(std::move(decoded));
  ResolvedFrame f = resolver.ResolveInProcess(2, &other, other.start + 16 * 3);
  ResolvedFrame expected = SampleFrame("f3", true);
  expected.build_id = m.build_id;
  EXPECT_EQ(f, expected);
  EXPECT_EQ(resolver.Resolve(nullptr, 0xffffffff81000010).function, "do_syscall_64");
  EXPECT_EQ(resolver.ResolveInProcess(99, nullptr, 0x7f0000001000).function, "jitted");
  ResolvedFrame miss = resolver.ResolveInProcess(2, &other, other.start + 8);
  EXPECT_FALSE(miss.resolved);
  EXPECT_EQ(miss.function, "[prog+0x1008]");
}

// The names the kernel gives mappings without a file (/proc/PID/maps, the MMAP records perf and
// tprof write) and names of real files, some sharing a first character or a prefix with them.
TEST(FilelessMapping, NamesWithoutAFileAndOnlyThose) {
  for (const char* name : {"", "//anon", "//anon (deleted)", "[anon:dalvik-jit]", "[anon_shmem]",
                           "/memfd:jit-cache (deleted)", "[heap]", "[stack]", "[stack:1234]",
                           "/dev/zero", "/dev/zero (deleted)", "[jit]", "[jitted-1-2.so]"}) {
    EXPECT_TRUE(IsFilelessMapping(name)) << "'" << name << "'";
  }
  for (const char* name :
       {"/usr/lib/libc.so.6", "/anon", "/memfd", "/dev/shm/x", "[vdso]", "[vsyscall]",
        "[kernel.kallsyms]_text", "[heapx]", "[hea", "jitted-12-3.so", "a", "/", "["}) {
    EXPECT_FALSE(IsFilelessMapping(name)) << "'" << name << "'";
  }
}

TEST(FilelessMapping, KernelMappingNamesAndOnlyThose) {
  for (const char* name : {"[kernel.kallsyms]", "[kernel.kallsyms]_text", "[kernel]",
                           "[guest.kernel.kallsyms]", "[guest.kernel.kallsyms.1234]"})
    EXPECT_TRUE(IsKernelMappingName(name)) << "'" << name << "'";
  for (const char* name : {"", "[", "[kerne", "[vdso]", "/kernel", "kernel", "[guest.kerne",
                           "[guest]", "/lib/modules/6.1/kernel/x.ko"})
    EXPECT_FALSE(IsKernelMappingName(name)) << "'" << name << "'";
}

// FindHeld keeps what it learnt of each mapping (its module in the table, whether it has a file
// at all): a mapping without a file is looked up by address as its process's JIT code, and a
// mapping object that names a file the next time it is asked of is looked up by file offset.
TEST(SymbolSection, FindHeldKeysFilelessMappingsByAddressAndNoticesAMappingReused) {
  Mapping jit;
  jit.start = 0x7f0000000000;
  jit.end = jit.start + 0x10000;
  jit.filename = "//anon";
  Mapping file = jit;
  file.filename = "/usr/bin/prog";
  file.build_id = "\x01\x02";
  SymbolTable table;
  table.Add(SymbolKeyOf(99, &jit, jit.start + 0x40), SampleFrame("jitted", false));
  table.Add(SymbolKeyOf(99, &file, file.start + 0x40), SampleFrame("compiled", false));
  SymbolTable decoded;
  for (const std::string& p : table.Encode()) ASSERT_TRUE(decoded.Decode(p).ok());
  EmbeddedSymbolResolver resolver(std::move(decoded));
  Mapping reused = jit;
  for (int pass = 0; pass < 2; ++pass) {  // the second time from what it kept of the mapping
    const ResolvedFrame* frame = resolver.FindHeld(99, &reused, jit.start + 0x40);
    ASSERT_NE(frame, nullptr);
    EXPECT_EQ(frame->function, "jitted");
    EXPECT_EQ(resolver.FindHeld(99, &reused, jit.start + 0x80), nullptr);
    EXPECT_EQ(resolver.FindHeld(98, &reused, jit.start + 0x40), nullptr) << "another's JIT code";
  }
  reused.filename = file.filename;
  reused.build_id = file.build_id;
  const ResolvedFrame* frame = resolver.FindHeld(99, &reused, jit.start + 0x40);
  ASSERT_NE(frame, nullptr);
  EXPECT_EQ(frame->function, "compiled");
  EXPECT_EQ(resolver.FindHeld(98, &reused, jit.start + 0x40), frame) << "a file is any process's";
}

// Lookups search a module's entries through an index of offset ranges; offsets that cluster
// (a few hot functions far apart, the kernel's addresses) and ones between or beyond the entries
// must find exactly what was added, in tables added to by several payloads.
TEST(SymbolSection, LookupsFindEveryEntryAndNothingElseWhereverOffsetsCluster) {
  std::vector<uint64_t> offsets;
  for (uint64_t i = 0; i < 300; ++i) offsets.push_back(0x1000 + 4 * i);              // dense
  for (uint64_t i = 0; i < 40; ++i) offsets.push_back(0x9000000 + 0x1000 * i);       // sparse
  for (uint64_t i = 0; i < 300; ++i) offsets.push_back(0xffffffff81000000 + 2 * i);  // far away
  SymbolTable first, second;
  for (size_t i = 0; i < offsets.size(); ++i)
    (i % 3 == 0 ? second : first)
        .Add({"/usr/bin/prog", "", offsets[i]}, SampleFrame("f" + std::to_string(i), false));
  SymbolTable decoded;
  for (const SymbolTable* t : {&first, &second})
    for (const std::string& p : t->Encode(/*max_payload_bytes=*/1500)) {
      ASSERT_TRUE(decoded.Decode(p).ok());
      // Looked up between payloads too: an index built now must not outlive the next payload.
      EXPECT_NE(decoded.Find({"/usr/bin/prog", "", offsets[1]}), nullptr);
    }
  ASSERT_EQ(decoded.size(), offsets.size());
  for (size_t i = 0; i < offsets.size(); ++i) {
    const ResolvedFrame* f = decoded.Find({"/usr/bin/prog", "", offsets[i]});
    ASSERT_NE(f, nullptr) << std::hex << offsets[i];
    EXPECT_EQ(f->function, "f" + std::to_string(i));
  }
  for (uint64_t miss : {uint64_t{0}, uint64_t{0xfff}, uint64_t{0x1002}, uint64_t{0x8fff000},
                        uint64_t{0x9000001}, uint64_t{0xffffffff80ffffff},
                        uint64_t{0xffffffff81000001}, uint64_t{0xffffffff81000258}, UINT64_MAX})
    EXPECT_EQ(decoded.Find({"/usr/bin/prog", "", miss}), nullptr) << std::hex << miss;
}

// FindManyAt answers each query as FindAt does: entries built or not yet, an address asked twice
// in one batch, misses between, before and beyond the entries, an entry added rather than
// decoded, a module the table lacks.
TEST(SymbolSection, ManyLookupsAtOnceAnswerAsOneByOne) {
  std::vector<uint64_t> offsets;
  for (uint64_t i = 0; i < 300; ++i) offsets.push_back(0x1000 + 4 * i);         // dense
  for (uint64_t i = 0; i < 40; ++i) offsets.push_back(0x9000000 + 0x1000 * i);  // sparse
  SymbolTable source;
  for (size_t i = 0; i < offsets.size(); ++i)
    source.Add({"/usr/bin/prog", "", offsets[i]},
               SampleFrame("f" + std::to_string(i % 50), i % 3 == 0));
  source.Add({"/lib/small.so", "", 0x40}, SampleFrame("s", false));
  SymbolTable one_by_one, at_once;
  for (const std::string& p : source.Encode(/*max_payload_bytes=*/3000)) {
    ASSERT_TRUE(one_by_one.Decode(p).ok());
    ASSERT_TRUE(at_once.Decode(p).ok());
  }
  for (SymbolTable* t : {&one_by_one, &at_once})
    t->Add({"/usr/bin/prog", "", 0x8000}, SampleFrame("added", false));
  std::vector<std::pair<std::string, uint64_t>> asked;
  for (size_t i = 0; i < offsets.size(); i += 3) asked.push_back({"/usr/bin/prog", offsets[i]});
  for (uint64_t miss : {uint64_t{0}, uint64_t{0x1002}, uint64_t{0x8fff000}, UINT64_MAX})
    asked.push_back({"/usr/bin/prog", miss});
  asked.push_back({"/usr/bin/prog", 0x8000});
  asked.push_back({"/usr/bin/prog", offsets[3]});  // twice in one batch
  asked.push_back({"/lib/small.so", 0x40});
  asked.push_back({"/lib/small.so", 0x41});
  asked.push_back({"/lib/none.so", 0x40});
  // A few built beforehand, the rest first asked for in the batch.
  for (size_t i = 0; i < asked.size(); i += 5)
    (void)at_once.FindAt(at_once.FindModule(asked[i].first, ""), asked[i].second);
  std::vector<SymbolTable::OffsetQuery> queries;
  for (const auto& [module, offset] : asked)
    queries.push_back({at_once.FindModule(module, ""), offset});
  at_once.FindManyAt(queries);
  size_t found = 0;
  for (size_t i = 0; i < asked.size(); ++i) {
    const ResolvedFrame* expected =
        one_by_one.FindAt(one_by_one.FindModule(asked[i].first, ""), asked[i].second);
    const ResolvedFrame* frame = queries[i].frame;
    ASSERT_EQ(frame == nullptr, expected == nullptr) << asked[i].first << "+" << asked[i].second;
    if (!frame) continue;
    ++found;
    EXPECT_EQ(*frame, *expected) << asked[i].first << "+" << asked[i].second;
    EXPECT_EQ(frame, at_once.FindAt(queries[i].module, asked[i].second)) << "the same frame";
  }
  EXPECT_EQ(found, (offsets.size() + 2) / 3 + 3);  // every third, the added, the twice, small
}

// Names each address after itself, and notes which threads asked.
class AddressNamer : public FrameResolver {
 public:
  ResolvedFrame Resolve(const Mapping* mapping, uint64_t address) override {
    return ResolveInProcess(0, mapping, address);
  }
  ResolvedFrame ResolveInProcess(uint32_t pid, const Mapping* mapping, uint64_t address) override {
    threads.insert(std::this_thread::get_id());
    ResolvedFrame f;
    f.resolved = true;
    f.module = mapping ? mapping->filename : "[none]";
    f.function = std::to_string(pid) + "@" + std::to_string(address);
    return f;
  }
  std::set<std::thread::id> threads;
};

// Resolving on the builder's worker thread (as an import does) gives the table resolving in line
// gives: the same addresses, each resolved once, with the kernel's left to Finish; a mapping
// replaced meanwhile is still the one its samples were taken in.
TEST(SymbolTableBuilder, WorkerThreadBuildsTheSameTable) {
  auto feed = [](SymbolTableBuilder& builder) {
    MmapRecord first;
    first.pid = 7;
    first.start = 0x400000;
    first.length = 0x10000;
    first.filename = "/bin/first";
    builder.OnMmap(first);
    for (uint64_t i = 0; i < 3000; ++i) {
      Sample s;
      s.pid = s.tid = 7;
      s.ip = 0x400000 + (i % 900) * 4;
      s.callchain = {kContextKernel, 0xffffffff81000000 + (i % 13) * 8, kContextUser, s.ip,
                     0x400100 + (i % 5)};
      builder.OnSample(s);
      if (i == 1500) {  // the same range now holds another file
        MmapRecord second = first;
        second.filename = "/bin/second";
        builder.OnMmap(second);
      }
    }
  };
  auto entries = [](const SymbolTable& table) {
    std::vector<std::string> payloads = table.Encode();
    SymbolTable decoded;
    for (const std::string& p : payloads) EXPECT_TRUE(decoded.Decode(p).ok());
    return decoded.size();
  };
  AddressNamer in_line_namer, worker_namer;
  SymbolTableBuilder in_line(in_line_namer);
  SymbolTableBuilder worker(worker_namer, SymbolTableBuilder::ResolveOn::kWorkerThread);
  feed(in_line);
  feed(worker);
  SymbolTable a = in_line.Finish();
  SymbolTable b = worker.Finish();
  EXPECT_EQ(worker.distinct_addresses(), in_line.distinct_addresses());
  EXPECT_EQ(a.size(), b.size());
  EXPECT_EQ(entries(a), entries(b));
  Mapping first;
  first.start = 0x400000;
  first.end = 0x410000;
  first.filename = "/bin/first";
  Mapping second = first;
  second.filename = "/bin/second";
  for (uint64_t address : {uint64_t{0x400000}, uint64_t{0x400104}, uint64_t{0x400ffc}}) {
    for (const Mapping* m : {&first, &second}) {
      const ResolvedFrame* fa = a.Find(SymbolKeyOf(7, m, address));
      const ResolvedFrame* fb = b.Find(SymbolKeyOf(7, m, address));
      ASSERT_EQ(fa == nullptr, fb == nullptr) << m->filename << " " << address;
      if (fa) {
        EXPECT_EQ(*fa, *fb);
      }
    }
  }
  for (uint64_t k = 0; k < 13; ++k) {
    const ResolvedFrame* kernel = b.Find(SymbolKeyOf(7, nullptr, 0xffffffff81000000 + k * 8));
    ASSERT_NE(kernel, nullptr) << k;
    EXPECT_EQ(kernel->function, "7@" + std::to_string(0xffffffff81000000 + k * 8));
  }
  EXPECT_TRUE(b.Find(SymbolKeyOf(7, &second, 0x400000 + 899 * 4)));
  EXPECT_EQ(in_line_namer.threads.size(), 1u);
  EXPECT_EQ(worker_namer.threads.size(), 2u);  // the worker's, and Finish's for the kernel's
}

// Names addresses as AddressNamer does, and logs the module of each resolution and each
// release, in order.
class ModuleLoggingNamer : public AddressNamer {
 public:
  ResolvedFrame ResolveInProcess(uint32_t pid, const Mapping* mapping, uint64_t address) override {
    log.push_back(IsKernelCode(mapping, address) ? "kernel" : mapping ? mapping->filename : "-");
    return AddressNamer::ResolveInProcess(pid, mapping, address);
  }
  void ReleaseModules() override { log.push_back("release"); }
  std::vector<std::string> log;
};

// A recorder's symbol step resolves module by module, releasing each before the next opens, and
// builds the table that resolving in line builds.
TEST(SymbolTableBuilder, ByModuleResolvesEachModuleOnceInOneRun) {
  auto feed = [](SymbolTableBuilder& builder) {
    MmapRecord a, b;
    a.pid = b.pid = 9;
    a.start = 0x400000;
    a.length = b.length = 0x10000;
    a.filename = "/bin/a";
    b.start = 0x500000;
    b.filename = "/lib/b.so";
    builder.OnMmap(a);
    builder.OnMmap(b);
    for (uint64_t i = 0; i < 2000; ++i) {  // the modules interleave in every stack
      Sample s;
      s.pid = s.tid = 9;
      s.ip = (i % 2 ? 0x400000 : 0x500000) + (i % 300) * 4;
      s.callchain = {kContextKernel,      0xffffffff81000000 + (i % 7) * 8,
                     kContextUser,        s.ip,
                     0x400200 + (i % 11), 0x500300 + (i % 3)};
      builder.OnSample(s);
    }
  };
  AddressNamer in_line_namer;
  ModuleLoggingNamer by_module_namer;
  SymbolTableBuilder in_line(in_line_namer);
  SymbolTableBuilder by_module(by_module_namer, SymbolTableBuilder::ResolveOn::kFinishByModule);
  feed(in_line);
  feed(by_module);
  SymbolTable expected = in_line.Finish();
  SymbolTable got = by_module.Finish();
  EXPECT_EQ(got.size(), expected.size());
  EXPECT_EQ(by_module.distinct_addresses(), in_line.distinct_addresses());
  Mapping a;
  a.start = 0x400000;
  a.end = 0x410000;
  a.filename = "/bin/a";
  Mapping b = a;
  b.start = 0x500000;
  b.end = 0x510000;
  b.filename = "/lib/b.so";
  size_t compared = 0;
  for (const Mapping* m : {&a, &b})
    for (uint64_t address = m->start; address < m->start + 0x1000; ++address) {
      const ResolvedFrame* want = expected.Find(SymbolKeyOf(9, m, address));
      const ResolvedFrame* have = got.Find(SymbolKeyOf(9, m, address));
      ASSERT_EQ(want == nullptr, have == nullptr) << m->filename << " " << address;
      if (want) {
        EXPECT_EQ(*have, *want);
        ++compared;
      }
    }
  EXPECT_EQ(compared + 7, expected.size());  // every entry but the 7 kernel addresses
  // Three modules (a, b.so, the kernel), each in one run of resolutions closed by a release.
  std::vector<std::string> runs;
  for (const std::string& entry : by_module_namer.log)
    if (runs.empty() || runs.back() != entry) runs.push_back(entry);
  ASSERT_EQ(runs.size(), 6u) << ::testing::PrintToString(runs);
  EXPECT_EQ(std::set<std::string>({runs[0], runs[2], runs[4]}),
            std::set<std::string>({"/bin/a", "/lib/b.so", "kernel"}));
  EXPECT_EQ(runs[1], "release");
  EXPECT_EQ(runs[3], "release");
  EXPECT_EQ(runs[5], "release");
}

// RecordCopier does not show the builder a sample whose callchain the writer matched in its
// chunk when pid, ip and address spaces are unchanged since it showed one. Each sample below
// that must still be shown comes once, so skipping it would lose its addresses: the same
// callchain in another process (whose file differs), with another ip, as the first chain of a
// new chunk (whose ids restart), and after the mapping under it was replaced. The table equals
// the one from showing the builder every sample.
TEST(RecordCopier, ShowsTheBuilderEverySampleThatAddsAddresses) {
  MmapRecord first;
  first.pid = 7;
  first.start = 0x400000;
  first.length = 0x10000;
  first.filename = "/bin/first";
  MmapRecord other = first;
  other.pid = 8;
  other.filename = "/bin/other";
  MmapRecord second = first;
  second.filename = "/bin/second";
  auto sample = [](uint32_t pid, uint64_t ip, std::vector<uint64_t> chain) {
    Sample s;
    s.pid = s.tid = pid;
    s.ip = ip;
    s.callchain = std::move(chain);
    return s;
  };
  const std::vector<uint64_t> c1 = {kContextUser, 0x400100, 0x400200};
  const std::vector<uint64_t> c2 = {kContextUser, 0x400300, 0x400400};
  const uint64_t a = 0x400010, b = 0x400020;  // ips outside the callchains
  // Fed to both builders; "flush" ends the writer's chunk.
  auto feed = [&](RecordVisitor& to, const std::function<void()>& flush) {
    to.OnMmap(first);
    to.OnMmap(other);
    to.OnSample(sample(7, a, c1));
    to.OnSample(sample(7, b, c1));                                // another ip
    to.OnSample(sample(8, b, c1));                                // another process
    for (int i = 0; i < 100; ++i) to.OnSample(sample(7, a, c1));  // nothing new
    flush();
    to.OnSample(sample(7, a, c2));  // id 0 of the new chunk, as c1 was of the first
    to.OnMmap(second);
    to.OnSample(sample(7, a, c2));  // another file under the same addresses
  };
  auto entries = [](const SymbolTable& table) {
    std::vector<std::string> payloads = table.Encode();
    SymbolTable decoded;
    for (const std::string& p : payloads) EXPECT_TRUE(decoded.Decode(p).ok());
    return decoded.size();
  };
  AddressNamer namer;
  SymbolTableBuilder every(namer);
  feed(every, [] {});

  std::string bytes;
  auto writer =
      ProfileWriter::Create(std::make_unique<StringSink>(bytes), Metadata{}, {EventDesc{}});
  ASSERT_TRUE(writer.ok());
  SymbolTableBuilder copied(namer);
  RecordCopier copier(**writer, copied);
  feed(copier, [&] { ASSERT_TRUE((*writer)->Flush().ok()); });
  ASSERT_TRUE(copier.status().ok());
  SymbolTable all = every.Finish();
  SymbolTable got = copied.Finish();
  EXPECT_EQ(copied.distinct_addresses(), every.distinct_addresses());
  EXPECT_EQ(got.size(), all.size());
  EXPECT_EQ(entries(got), entries(all));
  Mapping in_first{0x400000, 0x410000, 0, "/bin/first", ""};
  Mapping in_other = in_first, in_second = in_first;
  in_other.filename = "/bin/other";
  in_second.filename = "/bin/second";
  EXPECT_TRUE(got.Find(SymbolKeyOf(8, &in_other, b)));
  EXPECT_TRUE(got.Find(SymbolKeyOf(7, &in_first, b)));
  EXPECT_TRUE(got.Find(SymbolKeyOf(7, &in_first, 0x400300)));
  EXPECT_TRUE(got.Find(SymbolKeyOf(7, &in_second, 0x400300)));
}

// Our encoder writes each module's entries together and by offset, and a decoded run like that
// is taken whole. Other payloads (a module's entries in two runs, out of order, an address twice)
// are read entry by entry as before: every address found, the first entry for one kept, and
// encoded again as the same table.
TEST(SymbolSection, PayloadsNotInTheEncodersOrderReadAsTheirEntriesSay) {
  std::string payload;
  ByteWriter out(payload);
  out.PutVarint(1);  // section version
  const std::vector<std::string> strings = {"", "/bin/a", "/bin/b", "f1", "f2", "f3", "g"};
  out.PutVarint(strings.size());
  for (const std::string& s : strings) out.PutBytes(s);
  out.PutVarint(2);  // modules: /bin/a, /bin/b
  out.PutVarint(1);
  out.PutBytes("");
  out.PutVarint(2);
  out.PutBytes("");
  struct Entry {
    uint64_t module, delta, function;
  };
  const std::vector<Entry> entries = {
      {0, 0x30, 3},                      // a+0x30 f1
      {0, 0x10, 4},                      // a+0x40 f2
      {0, 0, 5},                         // a+0x40 again (f3): the first stays
      {0, UINT64_MAX - 0x40 + 0x29, 3},  // a+0x28 f1: the offset wrapped, below the last
      {1, 0x20, 6},                      // b+0x20 g
      {0, 0x10, 5},                      // a+0x10 f3, in a second run of a
  };
  out.PutVarint(entries.size());
  for (const Entry& e : entries) {
    out.PutVarint(e.module);
    out.PutVarint(e.delta);
    out.PutVarint(1);           // resolved
    out.PutVarint(e.function);  // function
    out.PutVarint(0);           // mangled
    out.PutVarint(e.module + 1);
    out.PutVarint(0);  // no source frames
  }
  SymbolTable table;
  ASSERT_TRUE(table.Decode(payload).ok());
  EXPECT_EQ(table.size(), 5u);
  const std::vector<std::tuple<std::string, uint64_t, std::string>> expected = {
      {"/bin/a", 0x10, "f3"},
      {"/bin/a", 0x28, "f1"},
      {"/bin/a", 0x30, "f1"},
      {"/bin/a", 0x40, "f2"},
      {"/bin/b", 0x20, "g"}};
  auto check = [&](const SymbolTable& t) {
    for (const auto& [module, offset, function] : expected) {
      const ResolvedFrame* frame = t.Find({module, "", offset});
      ASSERT_NE(frame, nullptr) << module << "+" << std::hex << offset;
      EXPECT_EQ(frame->function, function) << module << "+" << std::hex << offset;
      EXPECT_EQ(frame->module, module);
    }
    for (uint64_t miss : {uint64_t{0x20}, uint64_t{0x38}, uint64_t{0x41}})
      EXPECT_EQ(t.Find({"/bin/a", "", miss}), nullptr) << std::hex << miss;
  };
  check(table);
  SymbolTable again;
  for (const std::string& p : table.Encode()) ASSERT_TRUE(again.Decode(p).ok());
  EXPECT_EQ(again.size(), 5u);
  check(again);
}

TEST(SymbolSection, CorruptPayloadsAreErrorsNotCrashes) {
  SymbolTable table;
  table.Add({"/bin/x", "", 0x10}, SampleFrame("f", true));
  std::string payload = table.Encode().front();
  for (size_t cut = 0; cut < payload.size(); ++cut) {
    SymbolTable t;
    EXPECT_FALSE(t.Decode(payload.substr(0, cut)).ok()) << cut;
  }
  for (size_t i = 0; i < payload.size(); ++i) {
    std::string bad = payload;
    bad[i] = static_cast<char>(bad[i] ^ 0xff);
    SymbolTable t;
    (void)t.Decode(bad);  // must not crash or over-allocate
  }
}

TEST(SymbolSection, WrittenAndReadThroughTheProfileFile) {
  std::string path = TempPath("symtest", "symbols.tprof");
  Metadata metadata;
  auto writer = ProfileWriter::CreateFile(path, metadata, {});
  ASSERT_TRUE(writer.ok());
  SymbolTable table;
  table.Add({"/bin/x", "id", 0x10}, SampleFrame("f", true));
  ASSERT_TRUE(WriteSymbolSection(**writer, table).ok());
  ASSERT_TRUE((*writer)->Finish({}).ok());
  auto reader = ProfileReader::OpenFile(path);
  ASSERT_TRUE(reader.ok());
  auto read = ReadSymbolSection(*reader);
  ASSERT_TRUE(read.ok()) << read.error().message();
  ASSERT_NE(read->Find({"/bin/x", "id", 0x10}), nullptr);
  EXPECT_EQ(read->Find({"/bin/x", "id", 0x10})->frames.size(), 2u);
  // Records still read: the section is skipped by the record walk.
  struct Count : RecordVisitor {
  } visitor;
  EXPECT_TRUE(reader->ReadRecords(visitor).ok());
  ::unlink(path.c_str());
}

// A .tprof file's source reads the symbols section on a thread of its own; its resolver answers
// from the whole table (the first question waits for it), and from the fallback what the table
// lacks, all of it when the section cannot be decoded: the names from this machine, not none,
// and the frames the fallback holds, as when it answered alone.
TEST(SymbolSection, TheSourcesResolverAnswersFromTheSectionReadBesideIt) {
  struct Namer : FrameResolver {
    ResolvedFrame Resolve(const Mapping*, uint64_t address) override {
      ResolvedFrame f;
      f.function = "live@" + std::to_string(address);
      return f;
    }
    const ResolvedFrame* FindHeld(uint32_t, const Mapping* mapping, uint64_t address) override {
      return &held.try_emplace(address, Resolve(mapping, address)).first->second;
    }
    std::map<uint64_t, ResolvedFrame> held;
  } live;
  Mapping mapping{0x400000, 0x410000, 0, "/bin/x", "id"};
  for (const bool intact : {true, false}) {
    const std::string path = TempPath("symtest", intact ? "intact.tprof" : "undecodable.tprof");
    auto writer = ProfileWriter::CreateFile(path, Metadata{}, {});
    ASSERT_TRUE(writer.ok());
    SymbolTable table;
    for (uint64_t i = 0; i < 5000; ++i)
      table.Add({"/bin/x", "id", 0x10 + 4 * i}, SampleFrame("f" + std::to_string(i), false));
    if (intact) {
      ASSERT_TRUE(WriteSymbolSection(**writer, table).ok());
    } else {  // checksums right, contents not a section
      ASSERT_TRUE((*writer)
                      ->WriteOpaqueChunk(static_cast<uint16_t>(format::ChunkKind::kSymbols),
                                         "\x01\x05not a section")
                      .ok());
    }
    ASSERT_TRUE((*writer)->Finish({}).ok());
    SourceOptions options;
    options.symbol_fallback = &live;
    auto source = ProfileSource::OpenFile(path, options);
    ASSERT_TRUE(source.ok()) << source.error().message();
    FrameResolver* embedded = (*source)->embedded_frames();
    ASSERT_NE(embedded, nullptr);
    for (uint64_t i : {uint64_t{0}, uint64_t{4999}}) {
      const uint64_t address = mapping.start + 0x10 + 4 * i;
      const std::string name = intact ? "f" + std::to_string(i) : "live@" + std::to_string(address);
      const ResolvedFrame* held = embedded->FindHeld(1, &mapping, address);
      ASSERT_NE(held, nullptr) << i;
      EXPECT_EQ(held->function, name);
      const auto own = live.held.find(address);
      EXPECT_EQ(own != live.held.end() && held == &own->second, !intact)
          << "the fallback's own frame";
      FrameResolver::HeldQuery query{1, &mapping, address};
      embedded->FindHeldMany(std::span(&query, 1));
      EXPECT_EQ(query.frame, held);
      EXPECT_EQ(embedded->ResolveInProcess(1, &mapping, address).function, name);
    }
    EXPECT_EQ(embedded->ResolveInProcess(1, &mapping, mapping.start + 0x8).function,
              "live@" + std::to_string(mapping.start + 0x8));
    ::unlink(path.c_str());
  }
}

}  // namespace
}  // namespace tprof
