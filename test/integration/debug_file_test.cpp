// Separate debug files and compressed DWARF (symbolize/debug_file.h): compressed sections are
// inflated before libdw sees them, with the same bytes libelf's own inflation gives and the same
// lookups; inflated copies are kept in a cache directory, reused, and trimmed, and a cache that
// cannot be written leaves inflation in memory; debug files are found by .gnu_debuglink; and
// libdebuginfod is not loaded when no server is configured.
#include "symbolize/debug_file.h"

#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <vector>

#include "core/base/build_id.h"
#include "symbolize/dwarf_module.h"
#include "test/support/run_command.h"

namespace tprof {
namespace {

namespace fs = std::filesystem;

// The system's debug files, and no cache of inflated copies unless a test gives one.
const DebugFileSearch kSearch{"-:.debug:/usr/lib/debug", ""};
const char* const kFunctions[] = {"main", "(anonymous namespace)::compute_kernel(double)",
                                  "(anonymous namespace)::inline_mix_loop(double)",
                                  "(anonymous namespace)::child_spin(double)"};

// Section name -> contents, inflated by libelf where compressed; and how many were compressed.
struct Sections {
  std::map<std::string, std::string> contents;
  int compressed = 0;
};

Sections ReadSections(int fd) {
  Sections out;
  elf_version(EV_CURRENT);
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  EXPECT_NE(elf, nullptr);
  if (!elf) return out;
  size_t names = 0;
  elf_getshdrstrndx(elf, &names);
  for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf, scn));) {
    GElf_Shdr shdr;
    gelf_getshdr(scn, &shdr);
    if (shdr.sh_type == SHT_NOBITS) continue;
    if (shdr.sh_flags & SHF_COMPRESSED) {
      ++out.compressed;
      EXPECT_EQ(elf_compress(scn, 0, 0), 1);
    }
    Elf_Data* data = elf_getdata(scn, nullptr);
    out.contents[elf_strptr(elf, names, shdr.sh_name)] =
        data && data->d_buf ? std::string(static_cast<const char*>(data->d_buf), data->d_size)
                            : std::string();
  }
  elf_end(elf);
  return out;
}

// `fd` reads the sections libelf inflated from the original, none of them compressed.
void ExpectInflatedAs(int fd, const Sections& expected) {
  Sections got = ReadSections(fd);
  EXPECT_EQ(got.compressed, 0);
  EXPECT_EQ(got.contents, expected.contents);
}

std::string Where(DwarfModule& module, const char* function) {
  uint64_t start = 0, end = 0;
  if (!module.FindFunction(function, &start, &end)) return "(no symbol)";
  ResolvedFrame frame;
  module.Lookup(start + (end - start) / 2, &frame);
  std::ostringstream out;
  out << frame.function;
  for (const SourceFrame& f : frame.frames)
    out << " | " << f.function << " " << fs::path(f.file).filename().string() << ":" << f.line;
  return out.str();
}

TEST(DebugFile, CompressedSectionsAreInflatedAsLibelfWould) {
  int original = ::open(DEMO_GZ_BINARY, O_RDONLY | O_CLOEXEC);
  ASSERT_GE(original, 0);
  Sections expected = ReadSections(original);
  // The build gives this binary -gz=zlib (test/CMakeLists.txt): none would be a broken build.
  ASSERT_GT(expected.compressed, 0u) << "the compiler wrote no compressed sections";
  int inflated = WithSectionsInflated(::dup(original));
  ASSERT_GE(inflated, 0);
  ExpectInflatedAs(inflated, expected);
  ::close(inflated);
  ::close(original);

  // And the same lookups, function, inline chain and lines, as the uncompressed build.
  auto plain = DwarfModule::OpenFile(DEMO_BINARY, kSearch);
  auto gz = DwarfModule::OpenFile(DEMO_GZ_BINARY, kSearch);
  ASSERT_TRUE(plain.ok() && gz.ok());
  EXPECT_TRUE((*gz)->has_dwarf());
  for (const char* function : kFunctions) {
    std::string where = Where(**plain, function);
    // A source file and a line, not "??:0" (which of the demo's files the middle of a function
    // falls in is the compiler's choice: clang puts main's in an inlined std::vector call).
    EXPECT_TRUE(std::regex_search(where, std::regex(R"( [^ |?]+:[1-9][0-9]*$)")))
        << function << ": " << where;
    EXPECT_EQ(Where(**gz, function), where);
  }
}

TEST(DebugFile, NotCompressedOrNotElfIsLeftAlone) {
  int fd = ::open(DEMO_BINARY, O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(WithSectionsInflated(fd), fd);
  ::close(fd);
  std::string text = (fs::temp_directory_path() / "tprof_not_elf").string();
  std::ofstream(text) << std::string(200, 'x');
  fd = ::open(text.c_str(), O_RDONLY | O_CLOEXEC);
  EXPECT_EQ(WithSectionsInflated(fd), fd);
  ::close(fd);
  fs::remove(text);
}

// A damaged header claiming more than deflate can expand to is not believed: nothing is
// allocated for it, and libdw gets the file as it is.
TEST(DebugFile, ImplausibleInflatedSizesAreNotAllocated) {
  std::ifstream in(DEMO_GZ_BINARY, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Elf64_Ehdr ehdr;
  std::memcpy(&ehdr, bytes.data(), sizeof ehdr);
  bool patched = false;
  for (size_t i = 0; i < ehdr.e_shnum && !patched; ++i) {
    Elf64_Shdr shdr;
    std::memcpy(&shdr, bytes.data() + ehdr.e_shoff + i * sizeof shdr, sizeof shdr);
    if (!(shdr.sh_flags & SHF_COMPRESSED)) continue;
    Elf64_Chdr chdr;
    std::memcpy(&chdr, bytes.data() + shdr.sh_offset, sizeof chdr);
    chdr.ch_size = uint64_t{1} << 31;  // 2 GiB from a few kilobytes
    std::memcpy(bytes.data() + shdr.sh_offset, &chdr, sizeof chdr);
    patched = true;
  }
  ASSERT_TRUE(patched) << "the compiler wrote no compressed sections (the build asks for -gz=zlib)";
  int fd = ::memfd_create("damaged", MFD_CLOEXEC);
  ASSERT_EQ(::write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  auto peak_kb = [] {
    struct rusage usage {};
    ::getrusage(RUSAGE_SELF, &usage);
    return usage.ru_maxrss;
  };
  const long before = peak_kb();
  EXPECT_EQ(WithSectionsInflated(fd), fd);
  EXPECT_LT(peak_kb() - before, 100 * 1024) << "KiB more at peak";
  ::close(fd);
}

fs::path TemporaryDir(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / (name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// The files of a directory, by name.
std::vector<std::string> FilesIn(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ignored;
  for (const auto& e : fs::directory_iterator(dir, ignored)) names.push_back(e.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

std::string BuildIdHexOf(const char* path) {
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  elf_version(EV_CURRENT);
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  std::string hex;
  for (Elf_Scn* scn = nullptr; elf && (scn = elf_nextscn(elf, scn));) {
    GElf_Shdr shdr;
    gelf_getshdr(scn, &shdr);
    if (shdr.sh_type != SHT_NOTE) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    GElf_Nhdr note;
    size_t name_at = 0, desc_at = 0;
    for (size_t at = 0; data && (at = gelf_getnote(data, at, &note, &name_at, &desc_at)) > 0;) {
      if (note.n_type != NT_GNU_BUILD_ID) continue;
      hex = BuildIdHex(
          std::string_view(static_cast<const char*>(data->d_buf) + desc_at, note.n_descsz));
    }
  }
  if (elf) elf_end(elf);
  ::close(fd);
  return hex;
}

// The first run writes the inflated copy into the cache, named by build-id, and later runs map
// that copy: the same file, with the same sections as libelf's inflation and the same lookups.
TEST(DebugFile, InflatedCopyIsKeptInTheCacheAndReused) {
  const fs::path cache = TemporaryDir("tprof_inflated_cache");
  int original = ::open(DEMO_GZ_BINARY, O_RDONLY | O_CLOEXEC);
  ASSERT_GE(original, 0);
  Sections expected = ReadSections(original);
  // The build gives this binary -gz=zlib (test/CMakeLists.txt): none would be a broken build.
  ASSERT_GT(expected.compressed, 0u) << "the compiler wrote no compressed sections";

  int first = WithSectionsInflated(::dup(original), cache.string());
  ASSERT_NE(first, original);
  const std::vector<std::string> files = FilesIn(cache / "inflated-debug");
  ASSERT_EQ(files.size(), 1u);  // the copy, and no temporary file left behind
  const std::string hex = BuildIdHexOf(DEMO_GZ_BINARY);
  ASSERT_FALSE(hex.empty());
  EXPECT_TRUE(files[0].starts_with(hex + "-") && files[0].ends_with(".debug")) << files[0];
  const fs::path copy = cache / "inflated-debug" / files[0];
  struct stat first_stat {
  }, copy_stat{};
  ASSERT_EQ(::fstat(first, &first_stat), 0);
  ASSERT_EQ(::stat(copy.c_str(), &copy_stat), 0);
  EXPECT_EQ(first_stat.st_ino, copy_stat.st_ino);
  ExpectInflatedAs(first, expected);
  ::close(first);

  // The second run reads the same file, and renews its time so that trimming keeps it.
  const auto old_time = fs::file_time_type::clock::now() - std::chrono::hours(5);
  fs::last_write_time(copy, old_time);
  int second = WithSectionsInflated(::dup(original), cache.string());
  struct stat second_stat {};
  ASSERT_EQ(::fstat(second, &second_stat), 0);
  EXPECT_EQ(second_stat.st_ino, copy_stat.st_ino);
  EXPECT_GT(fs::last_write_time(copy), old_time + std::chrono::hours(4));
  ExpectInflatedAs(second, expected);
  ::close(second);
  ::close(original);

  // Modules opened through the cache, cold and warm, look up what the plain build does.
  auto plain = DwarfModule::OpenFile(DEMO_BINARY, kSearch);
  ASSERT_TRUE(plain.ok());
  fs::remove_all(cache);
  for (int run = 0; run < 2; ++run) {
    auto gz = DwarfModule::OpenFile(DEMO_GZ_BINARY, {kSearch.path, cache.string()});
    ASSERT_TRUE(gz.ok());
    for (const char* function : kFunctions)
      EXPECT_EQ(Where(**gz, function), Where(**plain, function)) << "run " << run;
    EXPECT_EQ(FilesIn(cache / "inflated-debug").size(), 1u);
  }
  fs::remove_all(cache);
}

// Past 1 GiB, the least recently used copies go, oldest first, and so do temporary files that
// an interrupted run left more than an hour ago. (Sparse files stand in for large copies.)
TEST(DebugFile, CacheKeepsTheRecentlyUsedCopiesUnderItsLimit) {
  const fs::path cache = TemporaryDir("tprof_inflated_trim");
  const fs::path dir = cache / "inflated-debug";
  fs::create_directories(dir);
  const auto now = fs::file_time_type::clock::now();
  auto make = [&](const std::string& name, uint64_t size, std::chrono::hours age) {
    std::ofstream(dir / name).close();
    fs::resize_file(dir / name, size);
    fs::last_write_time(dir / name, now - age);
  };
  const uint64_t kMiB = 1 << 20;
  make("oldest.debug", 400 * kMiB, std::chrono::hours(30));
  make("older.debug", 400 * kMiB, std::chrono::hours(20));
  make("recent.debug", 300 * kMiB, std::chrono::hours(1));
  make(".partial-stale", 1, std::chrono::hours(2));
  make(".partial-running", 1, std::chrono::hours(0));
  int fd = WithSectionsInflated(::open(DEMO_GZ_BINARY, O_RDONLY | O_CLOEXEC), cache.string());
  ASSERT_GE(fd, 0);
  ::close(fd);
  // 1100 MiB and the new copy: removing the oldest is enough.
  std::vector<std::string> files = FilesIn(dir);
  ASSERT_EQ(files.size(), 4u);
  EXPECT_EQ(files[0], ".partial-running");
  EXPECT_TRUE(files[1].ends_with(".debug") && files[1] != "older.debug") << files[1];
  EXPECT_EQ(files[2], "older.debug");
  EXPECT_EQ(files[3], "recent.debug");
  fs::remove_all(cache);
}

// A cache that cannot be written (here a full file system) does not stop inflation: the copy
// is made in memory, and no partial file is left in the cache.
TEST(DebugFile, FullCacheDiskLeavesInflationInMemory) {
  const fs::path cache = TemporaryDir("tprof_inflated_full");
  if (::mount("tmpfs", cache.c_str(), "tmpfs", 0, "size=64k") != 0)
    GTEST_SKIP() << "cannot mount a small file system here: " << std::strerror(errno);
  struct Unmount {
    fs::path dir;
    ~Unmount() {
      ::umount(dir.c_str());
      fs::remove_all(dir);
    }
  } unmount{cache};
  int original = ::open(DEMO_GZ_BINARY, O_RDONLY | O_CLOEXEC);
  Sections expected = ReadSections(original);
  int fd = WithSectionsInflated(::dup(original), cache.string());
  ASSERT_NE(fd, original);
  ExpectInflatedAs(fd, expected);
  EXPECT_TRUE(FilesIn(cache / "inflated-debug").empty());
  ::close(fd);
  ::close(original);
}

// The debug file sits where .gnu_debuglink says, beside the binary in .debug/, as
// `objcopy --only-keep-debug` and `--add-gnu-debuglink` leave it.
TEST(DebugFile, FoundThroughGnuDebuglink) {
  fs::path dir = fs::temp_directory_path() / ("tprof_debuglink_" + std::to_string(::getpid()));
  fs::create_directories(dir / ".debug");
  const std::string binary = (dir / "demo").string();
  const std::string debug = (dir / ".debug" / "demo.debug").string();
  fs::copy_file(DEMO_BINARY, binary);
  ASSERT_EQ(testing::RunCommand({"/usr/bin/objcopy", "--only-keep-debug", binary, debug}).exit_code,
            0);
  ASSERT_EQ(testing::RunCommand(
                {"/usr/bin/objcopy", "--strip-debug", "--add-gnu-debuglink=" + debug, binary})
                .exit_code,
            0);
  auto stripped = DwarfModule::OpenFile(binary, kSearch);
  auto plain = DwarfModule::OpenFile(DEMO_BINARY, kSearch);
  ASSERT_TRUE(stripped.ok() && plain.ok());
  EXPECT_TRUE((*stripped)->has_dwarf());
  const std::string where = Where(**plain, kFunctions[2]);
  EXPECT_NE(where.find("demo.cpp:"), std::string::npos) << where;
  EXPECT_EQ(Where(**stripped, kFunctions[2]), where);

  // Without the debug file the binary has no DWARF, and nothing else is made up.
  fs::remove(debug);
  auto alone = DwarfModule::OpenFile(binary, kSearch);
  ASSERT_TRUE(alone.ok());
  EXPECT_FALSE((*alone)->has_dwarf());
  fs::remove_all(dir);
}

// libdwfl's standard search loads libdebuginfod (and its network stack) for any binary without
// local debug info; with no server configured, tprof's search does not.
TEST(DebugFile, NoDebuginfodWithoutAServer) {
  ::unsetenv("DEBUGINFOD_URLS");
  fs::path dir = fs::temp_directory_path() / ("tprof_nodebug_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string binary = (dir / "demo").string();
  fs::copy_file(DEMO_BINARY, binary);
  ASSERT_EQ(testing::RunCommand({"/usr/bin/objcopy", "--strip-debug", binary}).exit_code, 0);
  auto module = DwarfModule::OpenFile(binary, kSearch);
  ASSERT_TRUE(module.ok());
  EXPECT_FALSE((*module)->has_dwarf());  // searched, found nothing
  std::ifstream maps("/proc/self/maps");
  std::string text((std::istreambuf_iterator<char>(maps)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text.find("libdebuginfod"), std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tprof
