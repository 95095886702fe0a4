#include "symbolize/debug_file.h"

#include <elf.h>
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libdeflate.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/base/build_id.h"

namespace tprof {
namespace {

bool DebuginfodConfigured() {
  const char* urls = std::getenv("DEBUGINFOD_URLS");
  return urls && *urls;
}

bool SameFile(const struct stat& a, const std::string& path) {
  struct stat b {};
  return ::stat(path.c_str(), &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

// The build-id note of an open ELF file, empty when it has none.
std::string BuildIdOf(int fd) {
  std::string id;
  Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  if (!elf) return id;
  const void* bits = nullptr;
  ssize_t length = dwelf_elf_gnu_build_id(elf, &bits);
  if (length > 0) id.assign(static_cast<const char*>(bits), static_cast<size_t>(length));
  elf_end(elf);
  return id;
}

// The entries of a libdwfl debuginfo path ("-:.debug:/usr/lib/debug"), without the '-' or '+'
// (whether to check CRCs) that the whole path and each entry may start with.
std::vector<std::string> SearchPathEntries(std::string_view path) {
  if (!path.empty() && (path[0] == '-' || path[0] == '+')) path.remove_prefix(1);
  std::vector<std::string> entries;
  for (size_t start = 0; start <= path.size();) {
    size_t end = std::min(path.find(':', start), path.size());
    std::string_view entry = path.substr(start, end - start);
    start = end + 1;
    if (!entry.empty() && (entry[0] == '-' || entry[0] == '+')) entry.remove_prefix(1);
    entries.emplace_back(entry);
  }
  return entries;
}

// The candidate files of the .gnu_debuglink search, in dwfl_standard_find_debuginfo's order.
// Each entry of the path names the binary's own directory (empty), a directory under it
// (relative), or a root the binary's directory is looked up under (absolute), trying shorter
// tails of that directory too.
std::vector<std::string> DebuglinkCandidates(const std::string& search_path,
                                             const std::string& file, const std::string& link) {
  std::vector<std::string> out;
  const size_t slash = file.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : file.substr(0, slash);
  const std::string base = file.substr(slash == std::string::npos ? 0 : slash + 1);
  for (const std::string& entry : SearchPathEntries(search_path)) {
    if (entry.empty()) {
      out.push_back(dir + "/" + link);
    } else if (entry[0] != '/') {
      out.push_back(dir + "/" + entry + "/" + link);
      out.push_back(dir + "/" + entry + "/" + base);
    } else if (!dir.empty() && dir[0] == '/') {
      for (size_t tail = 0; tail != std::string::npos; tail = dir.find('/', tail + 1))
        out.push_back(entry + dir.substr(tail) + "/" + link);
    }
  }
  return out;
}

// The module's build-id (raw bytes), empty when it has none.
std::string ModuleBuildId(Dwfl_Module* module) {
  const unsigned char* bits = nullptr;
  GElf_Addr vaddr = 0;
  int length = dwfl_module_build_id(module, &bits, &vaddr);
  return length > 0 ? std::string(reinterpret_cast<const char*>(bits), static_cast<size_t>(length))
                    : std::string();
}

// Opens `candidate` unless it is the binary itself or its build-id is not `wanted` (CRCs are
// not checked: build-ids decide, as the path's leading '-' says).
int OpenIfMatches(const std::string& candidate, const struct stat& binary,
                  const std::string& wanted, char** debuginfo_file_name) {
  if (SameFile(binary, candidate)) return -1;
  int fd = ::open(candidate.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  if (!wanted.empty()) {
    std::string id = BuildIdOf(fd);
    if (!id.empty() && id != wanted) {
      ::close(fd);
      return -1;
    }
  }
  *debuginfo_file_name = ::strdup(candidate.c_str());
  return fd;
}

// dwfl_standard_find_debuginfo's local search: DIR/.build-id/xx/yyyy.debug under each absolute
// entry of the path, then the .gnu_debuglink candidates. (dwfl_build_id_find_debuginfo is not
// used: it keeps its own handle on what it finds, which would bypass WithSectionsInflated.)
int FindLocally(Dwfl_Module* module, const std::string& search_path, const char* file_name,
                const char* debuglink_file, char** debuginfo_file_name) {
  const std::string wanted = ModuleBuildId(module);
  struct stat binary {};
  if (!file_name || ::stat(file_name, &binary) != 0) binary = {};
  std::vector<std::string> candidates;
  if (wanted.size() >= 2) {
    const std::string hex = BuildIdHex(wanted);
    for (const std::string& entry : SearchPathEntries(search_path)) {
      if (!entry.empty() && entry[0] == '/')
        candidates.push_back(entry + "/.build-id/" + hex.substr(0, 2) + "/" + hex.substr(2) +
                             ".debug");
    }
  }
  if (file_name) {
    const std::string file = file_name;
    const std::string link =
        debuglink_file ? debuglink_file : file.substr(file.rfind('/') + 1) + ".debug";
    for (std::string& c : DebuglinkCandidates(search_path, file, link))
      candidates.push_back(std::move(c));
  }
  for (const std::string& candidate : candidates)
    if (int fd = OpenIfMatches(candidate, binary, wanted, debuginfo_file_name); fd >= 0) return fd;
  return -1;
}

struct Unmap {
  size_t size;
  void operator()(void* p) const { ::munmap(p, size); }
};

constexpr uint64_t kInflatedCacheLimit = uint64_t{1} << 30;
constexpr std::string_view kTemporaryPrefix = ".partial-";

// The cache file holding the inflated copy of the file open as `fd`: named by its build-id,
// size and modification time, since a binary and its debug file share a build-id. Empty when
// the file has no build-id.
std::string CachedCopyPath(const std::string& cache_dir, int fd, const struct stat& st) {
  elf_version(EV_CURRENT);
  const std::string id = BuildIdOf(fd);
  if (id.empty()) return "";
  char suffix[64];
  std::snprintf(suffix, sizeof suffix, "-%llx-%llx.debug",
                static_cast<unsigned long long>(st.st_size),
                static_cast<unsigned long long>(st.st_mtim.tv_sec) * 1000000000ull +
                    static_cast<unsigned long long>(st.st_mtim.tv_nsec));
  return cache_dir + "/inflated-debug/" + BuildIdHex(id) + suffix;
}

// Removes the least recently used copies (by modification time, which a hit renews) while the
// cache holds more than its limit, and temporary files an interrupted run left over an hour ago.
void TrimCache(const std::string& dir) {
  namespace fs = std::filesystem;
  struct Entry {
    fs::file_time_type used;
    uint64_t size;
    fs::path path;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  std::error_code error;
  const auto stale = fs::file_time_type::clock::now() - std::chrono::hours(1);
  for (const fs::directory_entry& e : fs::directory_iterator(dir, error)) {
    std::error_code ignored;
    const std::string name = e.path().filename().string();
    const uint64_t size = e.file_size(ignored);
    const auto used = e.last_write_time(ignored);
    if (ignored) continue;
    if (name.starts_with(kTemporaryPrefix)) {
      if (used < stale) fs::remove(e.path(), ignored);
    } else if (name.ends_with(".debug")) {
      entries.push_back({used, size, e.path()});
      total += size;
    }
  }
  if (total <= kInflatedCacheLimit) return;
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.used < b.used; });
  for (const Entry& e : entries) {
    if (total <= kInflatedCacheLimit) break;
    std::error_code ignored;
    if (fs::remove(e.path, ignored)) total -= e.size;
  }
}

// Where the inflated copy is written: a temporary file of the cache, renamed into place once
// whole so that no run maps a partial copy; else (no cache, or one that cannot be written) an
// anonymous memory file.
class InflatedCopy {
 public:
  InflatedCopy() = default;
  InflatedCopy(const InflatedCopy&) = delete;
  InflatedCopy& operator=(const InflatedCopy&) = delete;
  ~InflatedCopy() { Discard(); }

  // A file of `size` bytes, in the cache at `cache_path` when one is given and can be written,
  // else in memory, mapped for writing.
  bool Create(uint64_t size, const std::string& cache_path) {
    size_ = size;
    if (!cache_path.empty() && CreateInCache(cache_path) && Map()) return true;
    Discard();
    fd_ = ::memfd_create("tprof-inflated-debug", MFD_CLOEXEC);
    return fd_ >= 0 && ::ftruncate(fd_, static_cast<off_t>(size)) == 0 && Map();
  }

  char* data() { return map_; }

  // The copy's descriptor, now visible in the cache under its final name.
  int Commit() {
    ::munmap(map_, size_);
    map_ = nullptr;
    if (!temporary_.empty() && ::rename(temporary_.c_str(), final_.c_str()) == 0) {
      temporary_.clear();
      TrimCache(final_.substr(0, final_.rfind('/')));
    }
    return std::exchange(fd_, -1);
  }

 private:
  // The cache file's blocks are allocated first: writing through a mapping to a full disk would
  // kill the process with SIGBUS instead of returning an error.
  bool CreateInCache(const std::string& cache_path) {
    const std::string dir = cache_path.substr(0, cache_path.rfind('/'));
    std::error_code ignored;
    std::filesystem::create_directories(dir, ignored);
    std::string name = dir + "/" + std::string(kTemporaryPrefix) + "XXXXXX";
    fd_ = ::mkostemp(name.data(), O_CLOEXEC);
    if (fd_ < 0) return false;
    temporary_ = std::move(name);
    final_ = cache_path;
    return ::fallocate(fd_, 0, 0, static_cast<off_t>(size_)) == 0;
  }

  bool Map() {
    void* map = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    if (map == MAP_FAILED) return false;
    map_ = static_cast<char*>(map);
    return true;
  }

  // Back to nothing made: no mapping, descriptor or temporary file.
  void Discard() {
    if (map_) ::munmap(map_, size_);
    map_ = nullptr;
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    if (!temporary_.empty()) ::unlink(temporary_.c_str());
    temporary_.clear();
  }

  int fd_ = -1;
  char* map_ = nullptr;
  uint64_t size_ = 0;
  std::string temporary_, final_;
};

// A copy from an earlier run, its use recorded so that trimming keeps it; -1 when none.
int OpenCachedCopy(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) ::futimens(fd, nullptr);
  return fd;
}

template <typename Ehdr, typename Shdr, typename Chdr>
int Inflate(int fd, const char* file, const struct stat& st, const std::string& cache_dir) {
  const size_t file_size = static_cast<size_t>(st.st_size);
  Ehdr ehdr;
  std::memcpy(&ehdr, file, sizeof ehdr);
  if (ehdr.e_shnum == 0 || ehdr.e_shentsize != sizeof(Shdr) || ehdr.e_shoff > file_size ||
      (file_size - ehdr.e_shoff) / sizeof(Shdr) < ehdr.e_shnum)
    return fd;
  std::vector<Shdr> sections(ehdr.e_shnum);
  std::memcpy(sections.data(), file + ehdr.e_shoff, sections.size() * sizeof(Shdr));
  // Inflated sections go after the original bytes, then the new section header table.
  auto align = [](uint64_t at, uint64_t to) { return to > 1 ? (at + to - 1) / to * to : at; };
  uint64_t end = file_size;
  std::vector<size_t> compressed;
  std::vector<Chdr> headers;
  std::vector<uint64_t> placed;
  for (size_t i = 0; i < sections.size(); ++i) {
    const Shdr& s = sections[i];
    if (!(s.sh_flags & SHF_COMPRESSED) || s.sh_type == SHT_NOBITS) continue;
    Chdr header;
    if (s.sh_offset > file_size || s.sh_size < sizeof header || s.sh_size > file_size - s.sh_offset)
      return fd;
    std::memcpy(&header, file + s.sh_offset, sizeof header);
    // Deflate cannot expand data more than 1032 times: a larger claim is a damaged header,
    // which must not make tprof allocate what it says.
    const uint64_t compressed_size = s.sh_size - sizeof header;
    if (header.ch_type != ELFCOMPRESS_ZLIB || header.ch_size > compressed_size * 1032 + 64 ||
        header.ch_size > (uint64_t{1} << 32))
      return fd;
    // Alignments are small powers of two (1 to 16 in practice); a larger one is damage, and
    // would wrap the offsets computed from it.
    if (header.ch_addralign > 4096 || (header.ch_addralign & (header.ch_addralign - 1)) != 0)
      return fd;
    end = align(end, std::max<uint64_t>(header.ch_addralign, 8));
    compressed.push_back(i);
    headers.push_back(header);
    placed.push_back(end);
    end += header.ch_size;
  }
  // Sections may share compressed bytes in a damaged file: bound the total too.
  if (compressed.empty() || end - file_size > std::min<uint64_t>(file_size * 1032, 1ull << 32))
    return fd;
  const std::string cache_path = cache_dir.empty() ? "" : CachedCopyPath(cache_dir, fd, st);
  if (!cache_path.empty()) {
    if (int cached = OpenCachedCopy(cache_path); cached >= 0) {
      ::close(fd);
      return cached;
    }
  }
  const uint64_t shoff = align(end, 8);
  const uint64_t total = shoff + sections.size() * sizeof(Shdr);
  InflatedCopy image;
  if (!image.Create(total, cache_path)) return fd;
  char* out = image.data();
  // The original bytes, except the compressed data nothing will read: left as holes, which
  // cost no memory. The inflated sections' pages are allocated in one go rather than a fault
  // per page (MADV_POPULATE_WRITE, Linux 5.14; without it they fault in as written).
  uint64_t copied = 0;
  for (size_t index : compressed) {
    const Shdr& s = sections[index];
    if (s.sh_offset > copied) std::memcpy(out + copied, file + copied, s.sh_offset - copied);
    copied = std::max<uint64_t>(copied, s.sh_offset + s.sh_size);
  }
  if (file_size > copied) std::memcpy(out + copied, file + copied, file_size - copied);
  const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t first = (reinterpret_cast<uintptr_t>(out) + placed.front()) / page * page;
  ::madvise(reinterpret_cast<void*>(first), reinterpret_cast<uintptr_t>(out) + shoff - first,
            MADV_POPULATE_WRITE);
  std::unique_ptr<libdeflate_decompressor, void (*)(libdeflate_decompressor*)> inflater(
      libdeflate_alloc_decompressor(), libdeflate_free_decompressor);
  if (!inflater) return fd;
  for (size_t k = 0; k < compressed.size(); ++k) {
    Shdr& s = sections[compressed[k]];
    size_t got = 0;
    if (libdeflate_zlib_decompress(inflater.get(), file + s.sh_offset + sizeof(Chdr),
                                   s.sh_size - sizeof(Chdr), out + placed[k], headers[k].ch_size,
                                   &got) != LIBDEFLATE_SUCCESS ||
        got != headers[k].ch_size)
      return fd;  // damaged: libdw reports it when it reads the original
    s.sh_offset = placed[k];
    s.sh_size = headers[k].ch_size;
    s.sh_addralign = headers[k].ch_addralign;
    s.sh_flags &= ~static_cast<decltype(s.sh_flags)>(SHF_COMPRESSED);
  }
  std::memcpy(out + shoff, sections.data(), sections.size() * sizeof(Shdr));
  ehdr.e_shoff = shoff;
  std::memcpy(out, &ehdr, sizeof ehdr);
  ::close(fd);
  return image.Commit();
}

}  // namespace

std::string DebugSearchPath(const std::string& symfs, const std::vector<std::string>& debug_dirs) {
  std::string path = "-:.debug";
  for (const std::string& dir : debug_dirs) {
    if (!symfs.empty()) path += ":" + symfs + dir;
    path += ":" + dir;
  }
  return path;
}

std::string DefaultCacheDir() {
  if (const char* dir = std::getenv("TPROF_CACHE_DIR")) return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::string(xdg) + "/tprof";
  if (const char* home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.cache/tprof";
  return "";
}

void SetDebugFileSearch(Dwfl_Module* module, const DebugFileSearch* search) {
  void** user_data = nullptr;
  if (module &&
      dwfl_module_info(module, &user_data, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr) &&
      user_data)
    *user_data = const_cast<DebugFileSearch*>(search);
}

int FindDebugFile(Dwfl_Module* module, void** user_data, const char* module_name, Dwarf_Addr base,
                  const char* file_name, const char* debuglink_file, GElf_Word debuglink_crc,
                  char** debuginfo_file_name) {
  const auto* search = user_data ? static_cast<const DebugFileSearch*>(*user_data) : nullptr;
  int fd = -1;
  if (!search || DebuginfodConfigured()) {
    fd = dwfl_standard_find_debuginfo(module, user_data, module_name, base, file_name,
                                      debuglink_file, debuglink_crc, debuginfo_file_name);
  } else {
    fd = FindLocally(module, search->path, file_name, debuglink_file, debuginfo_file_name);
  }
  return fd < 0 ? fd : WithSectionsInflated(fd, search ? search->cache_dir : std::string());
}

int WithSectionsInflated(int fd, const std::string& cache_dir) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
      st.st_size < static_cast<off_t>(sizeof(Elf64_Ehdr)))
    return fd;
  const size_t size = static_cast<size_t>(st.st_size);
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (map == MAP_FAILED) return fd;
  std::unique_ptr<void, Unmap> unmap(map, Unmap{size});
  const auto* ident = static_cast<const unsigned char*>(map);
  const bool native =
      ident[EI_DATA] == (std::endian::native == std::endian::little ? ELFDATA2LSB : ELFDATA2MSB);
  if (std::memcmp(ident, ELFMAG, SELFMAG) != 0 || !native) return fd;
  const char* file = static_cast<const char*>(map);
  if (ident[EI_CLASS] == ELFCLASS64)
    return Inflate<Elf64_Ehdr, Elf64_Shdr, Elf64_Chdr>(fd, file, st, cache_dir);
  if (ident[EI_CLASS] == ELFCLASS32)
    return Inflate<Elf32_Ehdr, Elf32_Shdr, Elf32_Chdr>(fd, file, st, cache_dir);
  return fd;
}

}  // namespace tprof
