// A synthetic perf.data file for report benchmarks: N samples with callchains of about DEPTH
// frames, at addresses inside the functions of a real binary so that symbols resolve in both
// `perf report` and `tprof report`. The file is what `perf record -e cpu-clock -g` writes, at
// its smallest: the file header, one attribute, then COMM, one MMAP per executable segment,
// the samples, and a FINISHED_ROUND every 10000 samples; no feature sections.
//
//   synth_perf_data BINARY OUT.data [SAMPLES=1000000] [DEPTH=20] [SEED=1]
//
// Stacks are drawn from 20000 call paths with a skewed (Zipf-like) popularity, as real profiles
// look: a few hot paths and a long tail. Each function has 16 possible leaf pcs (its hot
// instructions), so a profile has tens of thousands of distinct addresses, as a real one of a
// program this size does, rather than one per sample.
#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <linux/perf_event.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace {

struct Function {
  uint64_t address, size;
};
struct Segment {
  uint64_t vaddr, offset, memsz;
};

struct BinaryLayout {
  std::vector<Function> functions;
  std::vector<Segment> executable;
  bool position_independent = false;
};

bool ReadLayout(const std::string& path, BinaryLayout* layout) {
  elf_version(EV_CURRENT);
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return false;
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  GElf_Ehdr ehdr;
  if (!elf || !gelf_getehdr(elf, &ehdr)) return false;
  layout->position_independent = ehdr.e_type == ET_DYN;
  size_t count = 0;
  elf_getphdrnum(elf, &count);
  for (size_t i = 0; i < count; ++i) {
    GElf_Phdr phdr;
    if (gelf_getphdr(elf, static_cast<int>(i), &phdr) && phdr.p_type == PT_LOAD &&
        (phdr.p_flags & PF_X))
      layout->executable.push_back({phdr.p_vaddr, phdr.p_offset, phdr.p_memsz});
  }
  for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf, scn));) {
    GElf_Shdr shdr;
    if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_SYMTAB) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    for (size_t i = 0; data && i < shdr.sh_size / shdr.sh_entsize; ++i) {
      GElf_Sym sym;
      if (!gelf_getsym(data, static_cast<int>(i), &sym)) continue;
      if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_size < 16 || sym.st_shndx == SHN_UNDEF)
        continue;
      for (const Segment& s : layout->executable)
        if (sym.st_value >= s.vaddr && sym.st_value + sym.st_size <= s.vaddr + s.memsz)
          layout->functions.push_back({sym.st_value, sym.st_size});
    }
  }
  elf_end(elf);
  ::close(fd);
  return !layout->functions.empty() && !layout->executable.empty();
}

class Out {
 public:
  void U16(uint16_t v) { Put(v); }
  void U32(uint32_t v) { Put(v); }
  void U64(uint64_t v) { Put(v); }
  void PaddedString(const std::string& s) {
    size_t padded = (s.size() + 1 + 7) / 8 * 8;
    bytes_.append(s);
    bytes_.append(padded - s.size(), '\0');
  }
  void Header(uint32_t type, uint16_t misc, size_t at) {  // patches the size in at the end
    std::memcpy(&bytes_[at], &type, 4);
    std::memcpy(&bytes_[at + 4], &misc, 2);
    uint16_t size = static_cast<uint16_t>(bytes_.size() - at);
    std::memcpy(&bytes_[at + 6], &size, 2);
  }
  size_t Begin() {
    size_t at = bytes_.size();
    U64(0);
    return at;
  }
  std::string& bytes() { return bytes_; }

 private:
  template <typename T>
  void Put(T v) {
    bytes_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  std::string bytes_;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s BINARY OUT.data [SAMPLES] [DEPTH] [SEED] [THREADS]\n", argv[0]);
    return 2;
  }
  const std::string binary = argv[1];
  const std::string out_path = argv[2];
  const uint64_t samples = argc > 3 ? std::stoull(argv[3]) : 1000000;
  const size_t depth = argc > 4 ? std::stoul(argv[4]) : 20;
  std::mt19937_64 rng(argc > 5 ? std::stoull(argv[5]) : 1);
  // Samples dealt to THREADS threads of the process in turn (1: the process's own thread only).
  const uint32_t threads = argc > 6 ? static_cast<uint32_t>(std::stoul(argv[6])) : 1;

  BinaryLayout layout;
  if (!ReadLayout(binary, &layout)) {
    std::fprintf(stderr, "%s: no function symbols or executable segments\n", binary.c_str());
    return 1;
  }
  const uint64_t base = layout.position_independent ? 0x555555554000ULL : 0;
  const uint32_t pid = 4242;
  const uint64_t period = 250000;  // cpu-clock at 4 kHz, in nanoseconds
  auto any = [&](uint64_t n) { return std::uniform_int_distribution<uint64_t>(0, n - 1)(rng); };
  auto address_in = [&](const Function& f) { return base + f.address + 1 + any(f.size - 1); };

  // Call paths: the callers' return addresses, outermost first; depth varies a little.
  const size_t kPaths = 20000;
  std::vector<std::vector<uint64_t>> paths(kPaths);
  std::vector<std::vector<uint64_t>> trunks(64);  // shared outer frames, as main() and friends
  for (auto& trunk : trunks)
    for (size_t i = 0; i < depth / 2; ++i)
      trunk.push_back(address_in(layout.functions[any(layout.functions.size())]));
  for (auto& path : paths) {
    path = trunks[any(trunks.size())];
    size_t d = depth - 1 - path.size() + any(3) - 1;
    for (size_t i = 0; i < d; ++i)
      path.push_back(address_in(layout.functions[any(layout.functions.size())]));
  }
  std::vector<uint32_t> leaf_function(kPaths);
  for (auto& f : leaf_function) f = static_cast<uint32_t>(any(layout.functions.size()));
  const size_t kLeafPcs = 16;
  std::vector<std::vector<uint64_t>> leaf_pcs(layout.functions.size());
  for (size_t f = 0; f < layout.functions.size(); ++f)
    for (size_t i = 0; i < kLeafPcs; ++i) leaf_pcs[f].push_back(address_in(layout.functions[f]));
  // Zipf-like popularity: path k drawn with weight 1 / (k + 1).
  std::vector<double> weights(kPaths);
  for (size_t k = 0; k < kPaths; ++k) weights[k] = 1.0 / static_cast<double>(k + 1);
  std::discrete_distribution<size_t> pick(weights.begin(), weights.end());

  Out out;
  // perf_file_header: magic, size, attr_size, attrs, data, event_types, feature bits.
  const uint64_t attr_size = 128;  // PERF_ATTR_SIZE_VER7
  out.bytes().append("PERFILE2", 8);
  out.U64(104);
  out.U64(attr_size + 16);
  out.U64(104);  // attrs section: offset, size
  out.U64(attr_size + 16);
  const size_t data_section = out.bytes().size();
  out.U64(0);  // data offset and size, patched below
  out.U64(0);
  out.U64(0);  // event_types
  out.U64(0);
  for (int i = 0; i < 4; ++i) out.U64(0);  // no feature sections

  // perf_event_attr, then the (empty) ids section.
  const uint64_t sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                               PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN;
  const size_t attr_at = out.bytes().size();
  out.U32(PERF_TYPE_SOFTWARE);
  out.U32(static_cast<uint32_t>(attr_size));
  out.U64(PERF_COUNT_SW_CPU_CLOCK);
  out.U64(4000);  // sample_freq
  out.U64(sample_type);
  out.U64(0);  // read_format
  out.U64(1ull << 10 /* freq */ | 1ull << 18 /* sample_id_all */ | 1ull << 8 /* mmap */ |
          1ull << 9 /* comm */ | 1ull << 1 /* inherit */);
  while (out.bytes().size() - attr_at < attr_size) out.bytes().push_back('\0');
  out.U64(0);  // ids: offset, size
  out.U64(0);

  const uint64_t data_start = out.bytes().size();
  uint64_t time = 1000000000;
  auto sample_id = [&] {  // sample_id_all: pid, tid, time
    out.U32(pid);
    out.U32(pid);
    out.U64(time);
  };
  std::string comm = binary.substr(binary.rfind('/') + 1).substr(0, 15);
  size_t at = out.Begin();
  out.U32(pid);
  out.U32(pid);
  out.PaddedString(comm);
  sample_id();
  out.Header(PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC, at);
  for (const Segment& s : layout.executable) {
    at = out.Begin();
    out.U32(pid);
    out.U32(pid);
    const uint64_t start = base + (s.vaddr & ~0xfffULL);
    const uint64_t end = (base + s.vaddr + s.memsz + 0xfff) & ~0xfffULL;
    out.U64(start);
    out.U64(end - start);
    out.U64(s.offset & ~0xfffULL);
    out.PaddedString(binary);
    sample_id();
    out.Header(PERF_RECORD_MMAP, PERF_RECORD_MISC_USER, at);
  }

  std::ofstream file(out_path, std::ios::binary | std::ios::trunc);
  uint64_t frames = 0;
  for (uint64_t i = 0; i < samples; ++i) {
    time += period + any(1000);
    const size_t k = pick(rng);
    const std::vector<uint64_t>& path = paths[k];
    const uint64_t leaf = leaf_pcs[leaf_function[k]][any(kLeafPcs)];
    at = out.Begin();
    out.U64(leaf);
    out.U32(pid);
    out.U32(threads > 1 ? pid + 1 + static_cast<uint32_t>(i % threads) : pid);
    out.U64(time);
    out.U64(period);
    out.U64(2 + path.size());  // callchain: context, leaf, return addresses
    out.U64(PERF_CONTEXT_USER);
    out.U64(leaf);
    for (auto r = path.rbegin(); r != path.rend(); ++r) out.U64(*r);
    frames += 1 + path.size();
    out.Header(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, at);
    if ((i + 1) % 10000 == 0) {
      at = out.Begin();
      out.Header(68 /* PERF_RECORD_FINISHED_ROUND */, 0, at);
    }
    if (out.bytes().size() > (64u << 20)) {  // write in pieces; the header is patched at the end
      file.write(out.bytes().data(), static_cast<std::streamsize>(out.bytes().size()));
      out.bytes().clear();
    }
  }
  at = out.Begin();
  out.Header(68, 0, at);
  file.write(out.bytes().data(), static_cast<std::streamsize>(out.bytes().size()));
  const uint64_t data_end = static_cast<uint64_t>(file.tellp());
  file.seekp(static_cast<std::streamoff>(data_section));
  const uint64_t section[2] = {data_start, data_end - data_start};
  file.write(reinterpret_cast<const char*>(section), sizeof section);
  file.close();
  if (!file) {
    std::fprintf(stderr, "%s: write failed\n", out_path.c_str());
    return 1;
  }
  std::printf("%s: %llu samples, %.1f frames each on average, %zu functions of %s, %.1f MiB\n",
              out_path.c_str(), static_cast<unsigned long long>(samples),
              static_cast<double>(frames) / static_cast<double>(samples), layout.functions.size(),
              binary.c_str(), static_cast<double>(data_end) / (1 << 20));
  return 0;
}
