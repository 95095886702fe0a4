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
// anonymous memory file with those sections already inflated.
#pragma once

#include <elfutils/libdwfl.h>

#include <string>
#include <string_view>

namespace tprof {

// Gives a reported module the debuginfo path FindDebugFile searches for it (libdwfl's syntax:
// "-:.debug:/usr/lib/debug"); libdwfl hands find_debuginfo the module's user data, where it
// is kept. `path` must outlive the module. A module without one gets libdwfl's standard search.
void SetDebugFileSearchPath(Dwfl_Module* module, const std::string* path);

// Lowercase hex of raw build-id bytes, as build-id directories name files.
std::string BuildIdHex(std::string_view bytes);
// perf pads build-ids to 20 bytes without recording their size, so a shorter id read from a
// file matches a recorded one that it prefixes when the rest is zero.
bool SameBuildId(std::string_view a, std::string_view b);

// A Dwfl_Callbacks::find_debuginfo.
int FindDebugFile(Dwfl_Module* module, void** user_data, const char* module_name, Dwarf_Addr base,
                  const char* file_name, const char* debuglink_file, GElf_Word debuglink_crc,
                  char** debuginfo_file_name);

// A descriptor reading the same ELF file as `fd` with its zlib-compressed sections inflated:
// `fd` itself when nothing is compressed (or the file is not one this can rewrite: another
// byte order, extended section numbering), else an anonymous memory file, and `fd` is closed.
int WithSectionsInflated(int fd);

}  // namespace tprof
