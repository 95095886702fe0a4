// How separate debug files are found and opened for libdwfl.
//
// Finding: libdwfl's standard search (build-id directories, then .gnu_debuglink) ends by asking
// a debuginfod server, and for that loads libdebuginfod with its network stack (some 25
// libraries, milliseconds) the first time any binary lacks local debug info, even when no
// server is configured. FindDebugFile searches the same local places itself and leaves the
// standard search, debuginfod included, to when DEBUGINFOD_URLS names a server.
//
// Opening: distributions compress every DWARF section of their debug files (SHF_COMPRESSED,
// zlib), and libdw inflates them all with zlib when it opens one. libdeflate inflates the same
// data in less than half the time, so a file with compressed sections is handed to libdw as an
// anonymous memory file with those sections already inflated. Inflating still costs more than
// all else tprof does with libc's debug file (some 25 ms, half of it the kernel handing out the
// memory), so with a cache directory the inflated copy is kept there, by build-id, and the next
// run maps it from the page cache instead.
#pragma once

#include <elfutils/libdwfl.h>

#include <string>
#include <vector>

namespace tprof {

// Where FindDebugFile looks for a module's debug file, and keeps inflated copies.
struct DebugFileSearch {
  std::string path;       // libdwfl's syntax: "-:.debug:/usr/lib/debug"
  std::string cache_dir;  // for inflated copies (see WithSectionsInflated); empty: none kept
};

// libdwfl's search path over `debug_dirs`, each also under `symfs` when that is set. '-': no
// CRC check of debuglink files (build-ids are checked instead when present); the empty entry
// and ".debug" are the binary's own directory and its .debug subdirectory.
std::string DebugSearchPath(const std::string& symfs, const std::vector<std::string>& debug_dirs);

// $TPROF_CACHE_DIR, else $XDG_CACHE_HOME/tprof, else ~/.cache/tprof. TPROF_CACHE_DIR set but
// empty turns the cache off (empty result).
std::string DefaultCacheDir();

// Gives a reported module the search FindDebugFile uses for it; libdwfl hands find_debuginfo
// the module's user data, where it is kept. `search` must outlive the module. A module without
// one gets libdwfl's standard search.
void SetDebugFileSearch(Dwfl_Module* module, const DebugFileSearch* search);

// A Dwfl_Callbacks::find_debuginfo.
int FindDebugFile(Dwfl_Module* module, void** user_data, const char* module_name, Dwarf_Addr base,
                  const char* file_name, const char* debuglink_file, GElf_Word debuglink_crc,
                  char** debuginfo_file_name);

// A descriptor reading the same ELF file as `fd` with its zlib-compressed sections inflated:
// `fd` itself when nothing is compressed (or the file is not one this can rewrite: another
// byte order, extended section numbering), else a new descriptor, and `fd` is closed.
// With a `cache_dir`, the inflated copy of a file with a build-id is read from
// CACHE_DIR/inflated-debug, or written there for the next run (renamed into place once whole;
// the least recently used copies go past 1 GiB); without one, or when the cache cannot be
// written (a full disk), it is an anonymous memory file.
int WithSectionsInflated(int fd, const std::string& cache_dir = {});

}  // namespace tprof
