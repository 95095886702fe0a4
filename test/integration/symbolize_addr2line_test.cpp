// The symbolizer against binutils' addr2line (-f -i -C) on binaries built with -O2 -g: every
// byte of the demo's functions and every instruction of the inline workload's functions (the
// addresses a sample can hit; padding between functions is left out) must get the same
// function, file and line, and the same inline chain, for at least 99% of the addresses.
// Differences are printed with both answers.
#include <fcntl.h>
#include <gelf.h>
#include <gtest/gtest.h>
#include <libelf.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "symbolize/disassembler.h"
#include "symbolize/symbolizer.h"
#include "test/support/run_command.h"

namespace tprof {
namespace {

struct TextSection {
  uint64_t address = 0;
  std::string bytes;
  uint64_t file_offset_delta = 0;  // file offset = address - delta
  struct Function {
    uint64_t start = 0, end = 0;  // [start, end) of a sized FUNC symbol
    std::string name;             // as in the symbol table (mangled)
  };
  std::vector<Function> functions;
  // Whether `a` is in a function whose symbol name contains `name_part` ("" for any).
  bool InFunction(uint64_t a, std::string_view name_part = "") const {
    for (const Function& f : functions)
      if (a >= f.start && a < f.end && f.name.find(name_part) != std::string::npos) return true;
    return false;
  }
};

TextSection ReadText(const std::string& path) {
  TextSection text;
  elf_version(EV_CURRENT);
  int fd = ::open(path.c_str(), O_RDONLY);
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  size_t shstrndx = 0;
  elf_getshdrstrndx(elf, &shstrndx);
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr sh;
    gelf_getshdr(scn, &sh);
    const char* name = elf_strptr(elf, shstrndx, sh.sh_name);
    if (sh.sh_type == SHT_SYMTAB) {
      Elf_Data* data = elf_getdata(scn, nullptr);
      for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; ++i) {
        GElf_Sym sym;
        gelf_getsym(data, static_cast<int>(i), &sym);
        if (GELF_ST_TYPE(sym.st_info) == STT_FUNC && sym.st_size > 0)
          text.functions.push_back(
              {sym.st_value, sym.st_value + sym.st_size, elf_strptr(elf, sh.sh_link, sym.st_name)});
      }
    }
    if (name && std::string(name) == ".text") {
      Elf_Data* data = elf_getdata(scn, nullptr);
      text.address = sh.sh_addr;
      text.bytes.assign(static_cast<const char*>(data->d_buf), data->d_size);
      text.file_offset_delta = sh.sh_addr - sh.sh_offset;
    }
  }
  elf_end(elf);
  ::close(fd);
  return text;
}

struct Location {
  std::string function, file;
  uint32_t line = 0;
  bool operator==(const Location&) const = default;
};

std::string Describe(const std::vector<Location>& chain) {
  std::string out;
  for (const Location& l : chain)
    out += "    " + l.function + " @ " + l.file + ":" + std::to_string(l.line) + "\n";
  return out;
}

// Runs addr2line once for all addresses; returns one chain per address, innermost first.
//
// binutils names the innermost function of its *first* lookup in each function or inlined
// instance that has no DW_AT_linkage_name (internal linkage, extern "C", lambdas) after the
// enclosing ELF symbol, and from then on by its DWARF name (bfd/dwarf2.c,
// _bfd_dwarf2_find_nearest_line_with_alt sets is_linkage after that first lookup). The answer
// thus depends on lookup order. With `settled`, every address is asked twice in one run and
// the second answers are kept: addr2line's order-independent answer.
std::vector<std::vector<Location>> Addr2Line(const std::string& binary,
                                             const std::vector<uint64_t>& addresses, bool settled) {
  std::vector<std::string> argv = {"/usr/bin/addr2line", "-f", "-i", "-C", "-a", "-e", binary};
  for (int pass = 0; pass < (settled ? 2 : 1); ++pass)
    for (uint64_t a : addresses) {
      char buf[24];
      std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(a));
      argv.push_back(buf);
    }
  auto result = testing::RunningCommand(argv).Wait();
  std::vector<std::vector<Location>> chains;
  std::istringstream in(result.out);
  std::string line;
  std::vector<std::string> pending;
  auto flush = [&] {
    if (pending.empty()) return;
    std::vector<Location> chain;
    for (size_t i = 1; i + 1 < pending.size(); i += 2) {
      Location l;
      l.function = pending[i] == "??" ? "" : pending[i];
      std::string where = pending[i + 1];
      if (size_t d = where.find(" (discriminator"); d != std::string::npos) where.resize(d);
      size_t colon = where.rfind(':');
      l.file = where.substr(0, colon);
      if (l.file == "??") l.file.clear();
      l.line = static_cast<uint32_t>(std::strtoul(where.c_str() + colon + 1, nullptr, 10));
      chain.push_back(l);
    }
    chains.push_back(chain);
    pending.clear();
  };
  while (std::getline(in, line)) {
    if (line.starts_with("0x") && (pending.size() % 2 == 1 || pending.empty())) flush();
    pending.push_back(line);
  }
  flush();
  if (settled && chains.size() == 2 * addresses.size())
    chains.erase(chains.begin(), chains.begin() + static_cast<std::ptrdiff_t>(addresses.size()));
  return chains;
}

// llvm-symbolizer's chains for `addresses`, innermost first: the reference for clang's binaries,
// whose DWARF 5 inlined calls binutils 2.40's addr2line reads short (it drops the innermost
// inlined frames at many addresses where llvm-symbolizer and tprof agree).
std::vector<std::vector<Location>> LlvmSymbolizer(const std::string& binary,
                                                  const std::vector<uint64_t>& addresses) {
  std::vector<std::string> argv = {"/usr/bin/llvm-symbolizer-14", "--obj=" + binary, "--inlines",
                                   "--demangle", "--functions=linkage"};
  for (uint64_t a : addresses) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(a));
    argv.push_back(buf);
  }
  auto result = testing::RunningCommand(argv).Wait();
  std::vector<std::vector<Location>> chains(1);
  std::istringstream in(result.out);
  std::string function, where;
  while (std::getline(in, function)) {
    if (function.empty()) {  // an empty line ends an address's frames
      chains.emplace_back();
      continue;
    }
    if (!std::getline(in, where)) break;
    Location l;
    l.function = function == "??" ? "" : function;
    // "file:line:column"
    size_t column = where.rfind(':');
    size_t line = column == std::string::npos ? column : where.rfind(':', column - 1);
    if (line != std::string::npos) {
      l.file = where.substr(0, line);
      l.line = static_cast<uint32_t>(std::strtoul(where.c_str() + line + 1, nullptr, 10));
    }
    if (l.file == "??") l.file.clear();
    chains.back().push_back(l);
  }
  while (!chains.empty() && chains.back().empty()) chains.pop_back();
  return chains;
}

struct Agreement {
  size_t total = 0, same = 0;
};

enum class Reference { kAddr2Line, kLlvmSymbolizer };

// Compares the answers at the addresses of `binary`'s functions (those whose symbol name contains
// `function_part`, when given).
Agreement Compare(const std::string& binary, bool every_byte, bool settled = true,
                  Reference reference = Reference::kAddr2Line,
                  std::string_view function_part = "") {
  TextSection text = ReadText(binary);
  EXPECT_FALSE(text.bytes.empty()) << binary;
  std::vector<uint64_t> addresses;
  if (every_byte) {
    for (uint64_t i = 0; i < text.bytes.size(); ++i)
      if (text.InFunction(text.address + i, function_part)) addresses.push_back(text.address + i);
  } else {
    auto disassembler = Disassembler::Create(Architecture::kX86_64);
    for (const Instruction& insn : disassembler->Decode(text.bytes, text.address))
      if (text.InFunction(insn.address, function_part)) addresses.push_back(insn.address);
  }
  const char* reference_name = reference == Reference::kAddr2Line ? "addr2line" : "llvm-symbolizer";
  std::vector<std::vector<Location>> expected = reference == Reference::kAddr2Line
                                                    ? Addr2Line(binary, addresses, settled)
                                                    : LlvmSymbolizer(binary, addresses);
  EXPECT_EQ(expected.size(), addresses.size());

  SymbolizerOptions options;
  options.on_note = [](const std::string& note) { std::cerr << "note: " << note << '\n'; };
  Symbolizer symbolizer(options);
  Mapping mapping;
  mapping.start = 0x555555554000;
  mapping.end = mapping.start + (1u << 30);
  mapping.filename = binary;
  Agreement agreement;
  size_t shown = 0;
  for (size_t i = 0; i < addresses.size() && i < expected.size(); ++i) {
    uint64_t runtime = mapping.start + addresses[i] - text.file_offset_delta;
    ResolvedFrame frame = symbolizer.Resolve(&mapping, runtime);
    std::vector<Location> got;
    for (const SourceFrame& f : frame.frames) got.push_back({f.function, f.file, f.line});
    // addr2line names a function declared inside another one (a lambda's operator()) by its
    // bare DWARF name; tprof adds the scopes it is declared in ("f::{lambda at x.cpp:4}::g"),
    // so the same function counts as agreeing when tprof's name ends in "::" + addr2line's.
    for (size_t k = 0; k < got.size() && k < expected[i].size(); ++k) {
      const std::string& bare = expected[i][k].function;
      if (!bare.empty() && got[k].function.ends_with("::" + bare) &&
          got[k].function.find("::{lambda at ") != std::string::npos)
        got[k].function = bare;
    }
    // LLVM's demangler spells some names otherwise than GNU's (tprof's, addr2line's), the
    // same functions: "operator<<T>" for "operator< <T>", "decltype(new" for
    // "decltype (::new", "<T, void>" for an empty pack's "<T, , void>". Compared without
    // spaces, then.
    std::vector<Location> want = expected[i];
    if (reference == Reference::kLlvmSymbolizer) {
      auto spelling = [](std::string name) {
        std::erase(name, ' ');
        for (auto [from, to] : {std::pair{"decltype(::new", "decltype(new"}, {",,", ","}})
          for (size_t at; (at = name.find(from)) != std::string::npos;)
            name.replace(at, std::string_view(from).size(), to);
        return name;
      };
      for (std::vector<Location>* chain : {&got, &want})
        for (Location& l : *chain) l.function = spelling(l.function);
    }
    ++agreement.total;
    if (got == want) {
      ++agreement.same;
    } else if (shown++ < 100000) {
      std::cerr << "difference at 0x" << std::hex << addresses[i] << std::dec << "\n  tprof:\n"
                << Describe(got) << "  " << reference_name << ":\n"
                << Describe(expected[i]);
    }
  }
  std::cerr << binary << (settled ? "" : " (addr2line's first answers)") << ": " << agreement.same
            << " of " << agreement.total << " addresses agree with " << reference_name << " ("
            << 100.0 * static_cast<double>(agreement.same) / static_cast<double>(agreement.total)
            << "%)\n";
  return agreement;
}

// The reference for the project's own workloads, built by the compiler the project is built
// with (the sanitizer build uses clang; see LlvmSymbolizer for why clang's need another).
constexpr Reference kWorkloadReference =
    WORKLOADS_BUILT_BY_CLANG ? Reference::kLlvmSymbolizer : Reference::kAddr2Line;

TEST(SymbolizeAddr2Line, DemoEveryByteOfText) {
  Agreement a = Compare(DEMO_BINARY, /*every_byte=*/true, /*settled=*/true, kWorkloadReference);
  EXPECT_GE(a.total, 2000u);
  EXPECT_GE(static_cast<double>(a.same), 0.99 * static_cast<double>(a.total));
}

TEST(SymbolizeAddr2Line, InlineWorkloadEveryInstruction) {
  Agreement a = Compare(INLINE_BINARY, /*every_byte=*/false, /*settled=*/true, kWorkloadReference);
  EXPECT_GE(a.total, 1000u);
  EXPECT_GE(static_cast<double>(a.same), 0.99 * static_cast<double>(a.total));
}

TEST(SymbolizeAddr2Line, FirstAnswersForTheRecord) {
  // Not a gate: how far addr2line's order-dependent first answers are (see Addr2Line).
  Compare(DEMO_BINARY, /*every_byte=*/true, /*settled=*/false);
  Compare(INLINE_BINARY, /*every_byte=*/false, /*settled=*/false);
}

// Looks up every byte address of a binary's .text with the DWARF module, in order, until
// `visit` returns false.
void LookUpEveryAddress(const std::string& binary,
                        const std::function<bool(const ResolvedFrame&)>& visit) {
  SymbolizerOptions options;
  options.on_note = [](const std::string&) {};
  Symbolizer symbolizer(options);
  DwarfModule* module = symbolizer.ModuleFor(binary, "");
  ASSERT_NE(module, nullptr);
  TextSection text = ReadText(binary);
  for (uint64_t a = text.address; a < text.address + text.bytes.size(); ++a) {
    ResolvedFrame frame;
    module->Lookup(a, &frame);
    if (!visit(frame)) return;
  }
}

// FindHeld hands out the symbolizer's own frame where ResolveInProcess would return a copy
// of it, and nothing where the copy would differ: checked against a second symbolizer that only
// copies, over every 7th byte of the demo's .text, through a mapping of the binary, a second
// process's mapping of it (memo hits, the recorded build-id empty as perf.data's often is) and
// a mapping under another name (a link to it), in turn.
TEST(SymbolizeAddr2Line, HeldFramesAreWhatResolvingGives) {
  const std::string link =
      (std::filesystem::temp_directory_path() / ("tprof_held_" + std::to_string(getpid())))
          .string();
  std::filesystem::remove(link);
  std::filesystem::create_symlink(DEMO_BINARY, link);
  SymbolizerOptions options;
  options.on_note = [](const std::string&) {};
  Symbolizer held(options), copying(options);
  Mapping first, second, linked;
  first.start = second.start = linked.start = 0x555555554000;
  first.end = second.end = linked.end = first.start + (1u << 30);
  first.filename = second.filename = DEMO_BINARY;
  linked.filename = link;
  const TextSection text = ReadText(DEMO_BINARY);
  ASSERT_FALSE(text.bytes.empty());
  size_t given = 0, refused = 0;
  for (uint64_t a = text.address; a < text.address + text.bytes.size(); a += 7) {
    const uint64_t runtime = first.start + a - text.file_offset_delta;
    for (const Mapping* mapping : {&first, &second, &linked}) {
      const ResolvedFrame expected = copying.ResolveInProcess(1, mapping, runtime);
      const ResolvedFrame* frame = held.FindHeld(1, mapping, runtime);
      if (frame) {
        ++given;
        EXPECT_TRUE(*frame == expected)
            << mapping->filename << " at 0x" << std::hex << a << ": held " << frame->function
            << " in " << frame->module << " (build-id of " << frame->build_id.size()
            << " bytes), resolved " << expected.function << " in " << expected.module
            << " (build-id of " << expected.build_id.size() << " bytes)";
      } else {
        ++refused;
        EXPECT_TRUE(held.ResolveInProcess(1, mapping, runtime) == expected)
            << mapping->filename << " at 0x" << std::hex << a;
      }
    }
  }
  // Each address's first lookup is given; a memo hit under another name, or without the
  // build-id the first one was given, is refused.
  EXPECT_GT(given, 0u);
  EXPECT_GT(refused, 0u);
  EXPECT_EQ(held.FindHeld(1, nullptr, 0x1000), nullptr);
  std::filesystem::remove(link);
}

// A mapping recorded under a path that is not absolute is read from the current directory, as
// perf reads it, and one that names no file there gets the note of any unusable module: both
// were left unresolved without a word.
TEST(SymbolizeAddr2Line, ARelativePathIsReadFromTheCurrentDirectory) {
  std::vector<std::string> notes;
  SymbolizerOptions options;
  options.on_note = [&notes](const std::string& note) { notes.push_back(note); };
  Symbolizer symbolizer(options);
  const std::string relative = std::filesystem::relative(DEMO_BINARY).string();
  ASSERT_FALSE(relative.empty());
  ASSERT_NE(relative[0], '/');
  Mapping absolute, from_here, missing;
  absolute.start = from_here.start = missing.start = 0x555555554000;
  absolute.end = from_here.end = missing.end = absolute.start + (1u << 30);
  absolute.filename = DEMO_BINARY;
  from_here.filename = relative;
  missing.filename = "tprof_no_such_binary_" + std::to_string(getpid());
  const TextSection text = ReadText(DEMO_BINARY);
  ASSERT_FALSE(text.bytes.empty());
  size_t named = 0;
  for (uint64_t a = text.address; a < text.address + text.bytes.size(); a += 97) {
    const uint64_t runtime = absolute.start + a - text.file_offset_delta;
    const ResolvedFrame expected = symbolizer.ResolveInProcess(1, &absolute, runtime);
    const ResolvedFrame got = symbolizer.ResolveInProcess(2, &from_here, runtime);
    EXPECT_EQ(got.function, expected.function) << relative << " at 0x" << std::hex << a;
    named += !got.function.starts_with("[");
  }
  EXPECT_GT(named, 0u);
  EXPECT_TRUE(notes.empty()) << notes.front();
  const ResolvedFrame unresolved =
      symbolizer.ResolveInProcess(3, &missing, missing.start + text.address);
  EXPECT_TRUE(unresolved.function.starts_with("[" + missing.filename + "+0x"))
      << unresolved.function;
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("no usable file for " + missing.filename), std::string::npos) << notes[0];
  // A kernel pseudo-file's name is no path: nothing is looked for, and nothing is said.
  Mapping pseudo = missing;
  pseudo.filename = "anon_inode:[perf_event]";
  const ResolvedFrame in_pseudo = symbolizer.ResolveInProcess(4, &pseudo, pseudo.start + 0x10);
  EXPECT_TRUE(in_pseudo.function.starts_with("[anon_inode:[perf_event]+0x")) << in_pseudo.function;
  EXPECT_EQ(notes.size(), 1u);
}

TEST(SymbolizeAddr2Line, InlineChainOfDemoHelper) {
  // mix_helper is always inlined into inline_mix_loop's lambda: some address of that function
  // must show the helper as an inlined frame with a call-site line in its caller.
  bool found = false;
  LookUpEveryAddress(DEMO_BINARY, [&](const ResolvedFrame& frame) {
    if (frame.frames.size() >= 2 &&
        frame.frames[0].function.find("mix_helper") != std::string::npos) {
      EXPECT_TRUE(frame.frames[0].inlined);
      EXPECT_FALSE(frame.frames.back().inlined);
      EXPECT_NE(frame.frames[1].line, 0u);
      EXPECT_NE(frame.function.find("inline_mix_loop"), std::string::npos) << frame.function;
      EXPECT_FALSE(frame.mangled.empty());
      found = true;
    }
    return !found;
  });
  EXPECT_TRUE(found);
}

TEST(SymbolizeAddr2Line, InlinedLambdasAreNamedByTheFunctionTheyAreWrittenIn) {
  // GCC gives a lambda's operator() no linkage name, so addr2line calls every inlined lambda
  // "operator()". The demo's five hot loops are lambdas handed to RunFor: each must be a row of
  // its own, named by the function that holds it and the line the lambda is written on, read
  // here from the demo's source.
  std::ifstream source(DWARF_WORKLOADS_DIR "/../demo.cpp");
  ASSERT_TRUE(source.good());
  std::set<std::string> expected;
  std::string line, function;
  for (int number = 1; std::getline(source, line); ++number) {
    std::smatch m;
    if (std::regex_search(line, m, std::regex(R"(\bvoid (\w+)\()"))) function = m[1];
    if (line.find("RunFor(seconds, [&]") != std::string::npos)
      expected.insert(WORKLOADS_BUILT_BY_CLANG ? function
                                               : function + "::{lambda at demo.cpp:" +
                                                     std::to_string(number) + "}::operator()");
  }
  ASSERT_EQ(expected.size(), 5u);

  std::set<std::string> named;
  LookUpEveryAddress(DEMO_BINARY, [&](const ResolvedFrame& frame) {
    for (const SourceFrame& f : frame.frames) {
      std::smatch m;
      if (!WORKLOADS_BUILT_BY_CLANG && f.function.find("{lambda at ") != std::string::npos)
        named.insert(f.function);
      // clang does name the lambda, by the function that holds it and a number
      // ("(anonymous namespace)::inline_mix_loop(double)::$_4::operator()() const"), which the
      // name keeps: one row per lambda, known by its function.
      if (WORKLOADS_BUILT_BY_CLANG &&
          std::regex_search(f.function, m, std::regex(R"(::(\w+)\(.*\)::\$_\d+::operator\(\))")))
        named.insert(m[1]);
    }
    return true;
  });
  for (const std::string& name : expected) EXPECT_TRUE(named.contains(name)) << name;
}

// A scratch directory removed however the test ends.
struct ScratchDir {
  std::string path;
  ScratchDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "tprof-test-XXXXXX").string();
    if (mkdtemp(pattern.data())) path = pattern;
  }
  ~ScratchDir() {
    std::error_code error;
    if (!path.empty()) std::filesystem::remove_all(path, error);
  }
};

// clang and rustc emit no .debug_aranges, and libdwfl (elfutils 0.188) finds a unit through
// them alone: every address of such a binary lost its lines and inlined frames ("outer ??:0"
// where addr2line says "inner inl.c:2"). The inline workload built by clang, and by gcc with its
// .debug_aranges removed, must agree with llvm-symbolizer and addr2line -i respectively (both
// read the units' own ranges) at every instruction, inline chains included.
TEST(SymbolizeAddr2Line, BinariesWithoutArangesAgreeWithAddr2Line) {
  ScratchDir scratch;
  ASSERT_FALSE(scratch.path.empty());
  const std::string clang_binary = scratch.path + "/inline_clang";
  const std::string gcc_binary = scratch.path + "/inline_gcc_noaranges";
  auto clang = testing::RunningCommand({"/usr/bin/clang++", "-O2", "-g", "-fno-omit-frame-pointer",
                                        INLINE_SOURCE, "-o", clang_binary})
                   .Wait();
  ASSERT_EQ(clang.exit_code, 0) << "clang++ (scripts/setup.sh installs clang): " << clang.err;
  auto gcc =
      testing::RunningCommand(
          {"/bin/sh", "-c",
           "g++ -O2 -g -fno-omit-frame-pointer '" + std::string(INLINE_SOURCE) + "' -o '" +
               gcc_binary + "' && objcopy --remove-section .debug_aranges '" + gcc_binary + "'"})
          .Wait();
  ASSERT_EQ(gcc.exit_code, 0) << gcc.err;
  for (const std::string& binary : {clang_binary, gcc_binary}) {
    auto sections = testing::RunningCommand({"/usr/bin/readelf", "-S", "-W", binary}).Wait();
    ASSERT_EQ(sections.out.find(".debug_aranges"), std::string::npos) << binary;
    ASSERT_NE(sections.out.find(".debug_info"), std::string::npos) << binary;
    Agreement a =
        Compare(binary, /*every_byte=*/false, /*settled=*/true,
                binary == clang_binary ? Reference::kLlvmSymbolizer : Reference::kAddr2Line);
    EXPECT_GE(a.total, 500u) << binary;
    EXPECT_GE(static_cast<double>(a.same), 0.99 * static_cast<double>(a.total)) << binary;
    size_t with_lines = 0, inlined = 0;
    LookUpEveryAddress(binary, [&](const ResolvedFrame& frame) {
      with_lines += !frame.file().empty() && frame.line() > 0;
      inlined += frame.frames.size() >= 2;
      return true;
    });
    EXPECT_GT(with_lines, 500u) << binary;
    EXPECT_GT(inlined, 50u) << binary;
  }
}

// A Rust binary (Debian's rustc): legacy-mangled names with a hash, one unit per codegen unit,
// the standard library's units linked in beside the crate's, and core's iterator code inlined
// into the crate's functions. Every instruction of the crate's functions must get addr2line's
// function (binutils decodes Rust's legacy names as tprof does: no hash, "<impl ...>" paths),
// file, line and inline chain.
TEST(SymbolizeAddr2Line, RustBinaryAgreesWithAddr2Line) {
  ScratchDir scratch;
  ASSERT_FALSE(scratch.path.empty());
  const std::string binary = scratch.path + "/symbolize_inline";
  auto built =
      testing::RunningCommand({"/usr/bin/rustc", "-C", "opt-level=2", "-g", "-C",
                               "force-frame-pointers=yes", "-o", binary, RUST_INLINE_SOURCE})
          .Wait();
  ASSERT_EQ(built.exit_code, 0) << "rustc (scripts/setup.sh installs it): " << built.err;

  // Legacy Rust symbols name the crate as a path component: _ZN16symbolize_inline5outer17h...E.
  Agreement a = Compare(binary, /*every_byte=*/false, /*settled=*/true, Reference::kAddr2Line,
                        "16symbolize_inline");
  EXPECT_GE(a.total, 50u);
  EXPECT_GE(static_cast<double>(a.same), 0.99 * static_cast<double>(a.total));
  size_t inlined_inner = 0;
  LookUpEveryAddress(binary, [&](const ResolvedFrame& frame) {
    if (frame.frames.size() >= 2 && frame.frames[0].function == "symbolize_inline::inner" &&
        frame.frames.back().function == "symbolize_inline::outer" &&
        frame.frames[0].file == RUST_INLINE_SOURCE)
      ++inlined_inner;
    return true;
  });
  EXPECT_GT(inlined_inner, 3u);
}

// One lambda, two builds: compiled out of line GCC's symbol names it
// "main::{lambda()#1}::operator()() const", inlined tprof names it by where it is written,
// "main::{lambda at lambda.cpp:6}::operator()". Both builds must name it the same, so that
// tprof diff pairs the row instead of listing it as gone and new.
TEST(SymbolizeAddr2Line, ALambdaHasOneNameInlinedOrNot) {
  ScratchDir scratch;
  ASSERT_FALSE(scratch.path.empty());
  const std::string dir = scratch.path;
  std::ofstream(dir + "/lambda.cpp") << R"(#include <cstdio>
#ifndef HOW
#define HOW noinline
#endif
int main(int argc, char**) {
  volatile int n = 60000000 * argc; auto work = [&]() __attribute__((HOW)) { long s = 0; for (int i = 0; i < n; ++i) s += i ^ (s >> 3); return s; };
  std::printf("%ld\n", work());
}
)";
  for (const char* how : {"noinline", "always_inline"}) {
    const std::string out = dir + "/" + how;
    std::filesystem::create_directories(out);
    auto built = testing::RunningCommand({"/bin/sh", "-c",
                                          "cd '" + dir + "' && g++ -O2 -g -DHOW=" + how +
                                              " lambda.cpp -o '" + out + "/lambda'"})
                     .Wait();
    ASSERT_EQ(built.exit_code, 0) << built.err;
    auto nm = testing::RunningCommand({"/usr/bin/nm", "-C", out + "/lambda"}).Wait();
    // The case the test is about: out of line, GCC's symbol; inlined, none.
    EXPECT_EQ(nm.out.find("main::{lambda()#1}::operator()") != std::string::npos,
              std::string(how) == "noinline")
        << nm.out;
    auto recorded = testing::RunningCommand({TPROF_BINARY, "record", "-q", "-e", "cpu-clock", "-o",
                                             out + "/p.tprof", "--", out + "/lambda"})
                        .Wait();
    ASSERT_EQ(recorded.exit_code, 0) << recorded.err;
  }
  auto diff = testing::RunningCommand({TPROF_BINARY, "diff", dir + "/noinline/p.tprof",
                                       dir + "/always_inline/p.tprof", "--json"})
                  .Wait();
  ASSERT_EQ(diff.exit_code, 0) << diff.err;
  bool paired = false;
  const nlohmann::json json = nlohmann::json::parse(diff.out);
  for (const auto& f : json["events"][0]["functions"]) {
    const std::string name = f["function"];
    if (name.find("{lambda") == std::string::npos) continue;
    EXPECT_EQ(name, "main::{lambda at lambda.cpp:6}::operator()");
    EXPECT_EQ(f["status"], "both") << diff.out.substr(0, 3000);
    paired = paired || f["status"] == "both";
  }
  EXPECT_TRUE(paired) << diff.out.substr(0, 3000);
}

TEST(SymbolizeAddr2Line, RelativeSourceNamesAreJoinedToTheCompilationDirectory) {
  // A compiler run on "../src/relative.cpp" (or through ccache with CCACHE_BASEDIR) records
  // relative file names in the line table and the inlined calls' call_file; the unit's
  // DW_AT_comp_dir says where they are relative to. tprof must name the files by that path, as
  // addr2line does, so that annotate finds the source.
  ScratchDir scratch;
  ASSERT_FALSE(scratch.path.empty());
  const std::string dir = scratch.path;
  std::filesystem::create_directories(dir + "/src/include");
  std::filesystem::create_directories(dir + "/build");
  std::ofstream(dir + "/src/include/relative.h") << R"(#pragma once
__attribute__((always_inline)) inline unsigned long long Mix(unsigned long long x) {
  x ^= x >> 13;
  x *= 0x9e3779b97f4a7c15ull;
  return x ^ (x >> 29);
}
)";
  std::ofstream(dir + "/src/relative.cpp") << R"(#include "relative.h"
__attribute__((noinline)) unsigned long long Sum(unsigned long long n) {
  unsigned long long total = 0;
  for (unsigned long long i = 0; i < n; ++i) total += Mix(i);
  return total;
}
int main(int argc, char**) { return static_cast<int>(Sum(1000u * argc) & 1); }
)";
  auto built = testing::RunningCommand({"/bin/sh", "-c",
                                        "cd '" + dir +
                                            "/build' && g++ -O2 -g -I../src/include "
                                            "../src/relative.cpp -o relative"})
                   .Wait();
  ASSERT_EQ(built.exit_code, 0) << built.err;
  const std::string binary = dir + "/build/relative";

  // The unit's own name is relative indeed (readelf prints the DWARF as stored).
  auto info = testing::RunningCommand({"/usr/bin/readelf", "--debug-dump=info", binary}).Wait();
  ASSERT_TRUE(std::regex_search(info.out, std::regex(R"(DW_AT_name\s*:.*\.\./src/relative\.cpp)")))
      << info.out.substr(0, 2000);

  Agreement a = Compare(binary, /*every_byte=*/true);
  EXPECT_GE(a.total, 20u);
  EXPECT_GE(static_cast<double>(a.same), 0.99 * static_cast<double>(a.total));

  // Sum's code: Mix inlined from the header, called from the source file, both by full path.
  bool inlined_seen = false;
  LookUpEveryAddress(binary, [&](const ResolvedFrame& frame) {
    if (frame.frames.size() == 2 && frame.frames[0].function.starts_with("Mix")) {
      EXPECT_EQ(frame.frames[0].file, dir + "/build/../src/include/relative.h");
      EXPECT_EQ(frame.frames[1].file, dir + "/build/../src/relative.cpp");
      EXPECT_TRUE(std::filesystem::exists(frame.frames[1].file));
      inlined_seen = true;
    }
    return true;
  });
  EXPECT_TRUE(inlined_seen);
}

}  // namespace
}  // namespace tprof
