// One binary opened through libdwfl: its symbol table, and its DWARF from the file itself or
// from a separate debug file found by build-id or .gnu_debuglink. Answers "which function,
// source line and inline chain hold this address" for addresses in the file's own layout.
#pragma once

#include <elfutils/libdwfl.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/base/error.h"
#include "core/model/frame_resolver.h"
#include "symbolize/debug_file.h"

namespace tprof {

class DwarfModule {
 public:
  // `search` says where separate debug files are looked for (see debug_file.h).
  static Result<std::unique_ptr<DwarfModule>> OpenFile(const std::string& path,
                                                       const DebugFileSearch& search);
  // An ELF image held in memory (the vdso); the module keeps its own copy.
  static Result<std::unique_ptr<DwarfModule>> OpenImage(const std::string& name,
                                                        std::string_view image);
  ~DwarfModule();
  DwarfModule(const DwarfModule&) = delete;
  DwarfModule& operator=(const DwarfModule&) = delete;

  const std::string& path() const { return path_; }
  const std::string& build_id() const { return build_id_; }  // raw bytes, empty when none
  uint16_t machine() const { return machine_; }              // ELF e_machine

  // Maps a file offset to the virtual address the program headers give it.
  bool FileOffsetToAddress(uint64_t file_offset, uint64_t* address) const;
  // Symbol, source line and inline chain at `address` (the file's own layout). Sets
  // frame->function, mangled, frames and resolved; leaves module and build_id alone.
  void Lookup(uint64_t address, ResolvedFrame* frame);
  // The bytes of the file's loaded code at [address, address + size), clipped to the segment
  // holding `address`; empty when it holds none.
  std::string_view CodeAt(uint64_t address, uint64_t size);
  // The source line of one address, for disassembly listings.
  bool LineAt(uint64_t address, std::string* file, uint32_t* line);
  // The [start, end) of the function symbol named `name` (mangled, or demangled as Lookup
  // gives it), for disassembling a whole function. False when there is none.
  bool FindFunction(const std::string& name, uint64_t* start, uint64_t* end);
  // True when DWARF line or scope information was found (in the file or a debug file).
  bool has_dwarf();

 private:
  struct Symbol {
    uint64_t address;
    uint64_t size;
    const char* name;  // owned by libelf
    int rank;          // among aliases the lowest wins: global, weak, then local
  };
  struct FunctionRange {
    uint64_t low, high;
    Dwarf_Die die;  // the DW_TAG_subprogram
  };
  struct LineRow {
    uint64_t low, high;  // addresses the row covers (DWARF addresses of the unit)
    const char* file;    // a SourcePath
    uint32_t line, column;
  };
  struct CuIndex {
    std::vector<FunctionRange> functions;  // sorted by low
    std::vector<LineRow> lines;            // sorted by low, non-overlapping
    const char* name = nullptr;            // the unit's DW_AT_name, as a SourcePath
    const char* comp_dir = nullptr;        // DW_AT_comp_dir; owned by libdw
  };
  struct Segment {
    uint64_t offset, vaddr, filesz;
  };

  DwarfModule() = default;
  Status Open(const std::string& name, const std::string& path, int fd);
  void LoadSymbols();
  const Symbol* FindSymbol(uint64_t address) const;
  // True when the CFI covering `address` (a file address) is a signal frame's (augmentation
  // "S") and covers address + 1 too: the byte before a sigreturn trampoline's entry.
  bool InSignalFrameCfi(uint64_t address) const;
  const CuIndex& IndexFor(Dwarf_Die* cudie);
  // The unit holding `address` (file layout) and the unit's address of it; null when none.
  const CuIndex* UnitAt(uint64_t address, Dwarf_Die** cudie, uint64_t* pc);
  // The unit whose DW_AT_ranges or low_pc/high_pc hold `pc` (a DWARF address), from every
  // unit's ranges: libdwfl (elfutils 0.188) finds units through .debug_aranges alone, which
  // clang and rustc do not emit. Null when no unit holds it.
  Dwarf_Die* UnitByRanges(Dwarf* dwarf, uint64_t pc);
  static const LineRow* RowAt(const CuIndex& index, uint64_t pc);
  bool DwarfChain(uint64_t address, const Symbol* symbol, std::vector<SourceFrame>* frames);
  const std::string& DemangledName(const char* mangled);
  // A function without a linkage name, qualified by the scopes it is declared in.
  const std::string& ScopedName(Dwarf_Die* die);
  // A file name of the unit's line table or DIEs as a path that names the file from anywhere:
  // a relative name (a compiler run on "../src/a.c", or ccache's CCACHE_BASEDIR) is joined to
  // the unit's compilation directory as addr2line joins it ("/b/build/../src/a.c"; not tidied,
  // which would be wrong where build/ is a symbolic link). Owned by libdw or by this module.
  const char* SourcePath(const char* name, const char* comp_dir);

  std::string path_;
  DebugFileSearch search_;
  char* debuginfo_path_ptr_ = nullptr;  // libdwfl wants a char** that outlives the session
  Dwfl_Callbacks callbacks_{};
  Dwfl* dwfl_ = nullptr;
  Dwfl_Module* module_ = nullptr;
  uint64_t bias_ = 0;  // libdwfl address = file address + bias
  std::string build_id_;
  uint16_t machine_ = 0;
  std::vector<Segment> segments_;
  std::unordered_map<uint64_t, std::string> scoped_names_;  // by declaration DIE offset
  std::vector<Symbol> symbols_;                             // functions, sorted by address
  std::unordered_map<uint64_t, CuIndex> cu_index_;          // by CU DIE offset
  // By the mangled name's pointer (libelf's or .debug_str's, valid while the module is open): no
  // string is built or hashed per call. Node-based: DemangledName hands out references.
  std::unordered_map<const char*, std::string> demangled_;
  // SourcePath's joined names, by libdw's name; node-based, so the c_str()s handed out stay valid.
  std::unordered_map<const char*, std::string> joined_paths_;
  int dwarf_state_ = -1;  // -1 unknown, 0 none, 1 present
  struct UnitRange {
    uint64_t low, high;    // DWARF addresses
    Dwarf_Off die_offset;  // of the unit's DIE
  };
  std::vector<UnitRange> unit_ranges_;  // sorted by low; built on the first address aranges miss
  bool unit_ranges_built_ = false;
  Dwarf_Die unit_by_ranges_{};  // the unit UnitByRanges last found
};

}  // namespace tprof
