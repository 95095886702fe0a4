// Symbolization throughput: N distinct instruction addresses of a large binary with DWARF
// (default: this benchmark's own binary; pass e.g. build/sym/tprof), resolved to function,
// file:line and inline chain. "cold" includes opening the module and reading its symbol table
// and DWARF; "warm" asks for the same addresses again (the per-address memo) and "fresh" asks
// for N other addresses of the already open module.
//
//   symbolize_bench [BINARY] [N]
//
// bench/symbolize_vs_perf.sh compares with `perf script -F ip,sym,srcline`.
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "symbolize/disassembler.h"
#include "symbolize/symbolizer.h"

namespace {

struct Text {
  uint64_t address = 0, offset = 0;
  std::string bytes;
};

Text ReadText(const std::string& path) {
  Text text;
  elf_version(EV_CURRENT);
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return text;
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  size_t shstrndx = 0;
  elf_getshdrstrndx(elf, &shstrndx);
  for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf, scn)) != nullptr;) {
    GElf_Shdr sh;
    gelf_getshdr(scn, &sh);
    const char* name = elf_strptr(elf, shstrndx, sh.sh_name);
    if (name && std::string(name) == ".text") {
      Elf_Data* data = elf_getdata(scn, nullptr);
      text.address = sh.sh_addr;
      text.offset = sh.sh_offset;
      text.bytes.assign(static_cast<const char*>(data->d_buf), data->d_size);
    }
  }
  elf_end(elf);
  ::close(fd);
  return text;
}

double Seconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  std::string binary = argc > 1 ? argv[1] : "/proc/self/exe";
  size_t n = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 5000;
  Text text = ReadText(binary);
  if (text.bytes.empty()) {
    std::fprintf(stderr, "%s: no .text\n", binary.c_str());
    return 1;
  }
  auto disassembler = tprof::Disassembler::Create(tprof::Architecture::kX86_64);
  std::vector<tprof::Instruction> all = disassembler->Decode(text.bytes, text.address);
  // Two disjoint sets of N addresses spread over the whole text.
  std::vector<uint64_t> first, second;
  size_t stride = std::max<size_t>(1, all.size() / (2 * n));
  for (size_t i = 0; i < all.size() && second.size() < n; i += stride)
    ((i / stride) % 2 ? second : first).push_back(all[i].address);
  first.resize(std::min(first.size(), n));

  tprof::Mapping mapping;
  mapping.start = 0x555555554000;
  mapping.end = mapping.start + (uint64_t{1} << 32);
  char resolved_path[4096];
  mapping.filename = ::realpath(binary.c_str(), resolved_path) ? resolved_path : binary;
  auto runtime = [&](uint64_t a) { return mapping.start + a - text.address + text.offset; };

  tprof::SymbolizerOptions options;
  options.on_note = [](const std::string& note) {
    std::fprintf(stderr, "note: %s\n", note.c_str());
  };
  tprof::Symbolizer symbolizer(options);
  size_t resolved = 0, with_line = 0, inlined = 0;
  auto start = std::chrono::steady_clock::now();
  for (uint64_t a : first) {
    tprof::ResolvedFrame f = symbolizer.Resolve(&mapping, runtime(a));
    resolved += f.resolved;
    with_line += f.line() != 0;
    inlined += f.frames.size() > 1;
  }
  double cold = Seconds(start);
  start = std::chrono::steady_clock::now();
  for (uint64_t a : first) (void)symbolizer.Resolve(&mapping, runtime(a));
  double warm = Seconds(start);
  start = std::chrono::steady_clock::now();
  for (uint64_t a : second) (void)symbolizer.Resolve(&mapping, runtime(a));
  double fresh = Seconds(start);
  std::printf("binary: %s (%zu instructions in .text)\n", binary.c_str(), all.size());
  std::printf("cold:  %zu addresses in %.3f s (%.1f us/address; module open included)\n",
              first.size(), cold, 1e6 * cold / static_cast<double>(first.size()));
  std::printf("warm:  %zu addresses in %.4f s (%.2f us/address; memoized)\n", first.size(), warm,
              1e6 * warm / static_cast<double>(first.size()));
  std::printf("fresh: %zu other addresses in %.3f s (%.1f us/address; module already open)\n",
              second.size(), fresh, 1e6 * fresh / static_cast<double>(second.size()));
  std::printf("resolved %zu, with a source line %zu, in inlined code %zu\n", resolved, with_line,
              inlined);
  return 0;
}
