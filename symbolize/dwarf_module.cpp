#include "symbolize/dwarf_module.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "symbolize/debug_file.h"
#include "symbolize/demangle.h"

namespace tprof {
namespace {

std::string DwflError() {
  const char* message = dwfl_errmsg(-1);
  return message ? message : "unknown libdwfl error";
}

// A DIE's function name: the linkage name when there is one (demangled by the caller), else
// the plain name. Both follow DW_AT_abstract_origin and DW_AT_specification.
const char* LinkageName(Dwarf_Die* die) {
  Dwarf_Attribute attr;
  if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) ||
      dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr))
    return dwarf_formstring(&attr);
  return nullptr;
}

// The DIE that declares a function: an inlined call or a concrete instance points at its
// abstract instance, which may point at the declaration inside a class.
Dwarf_Die DeclarationOf(Dwarf_Die* die) {
  Dwarf_Die decl = *die;
  for (int hops = 0; hops < 4; ++hops) {
    Dwarf_Attribute attr;
    Dwarf_Die next;
    if ((dwarf_attr(&decl, DW_AT_abstract_origin, &attr) ||
         dwarf_attr(&decl, DW_AT_specification, &attr)) &&
        dwarf_formref_die(&attr, &next)) {
      decl = next;
    } else {
      break;
    }
  }
  return decl;
}

bool IsTypeScope(int tag) {
  return tag == DW_TAG_class_type || tag == DW_TAG_structure_type || tag == DW_TAG_union_type;
}

bool IsCodeScope(int tag) {
  return tag == DW_TAG_inlined_subroutine || tag == DW_TAG_lexical_block ||
         tag == DW_TAG_try_block || tag == DW_TAG_catch_block || tag == DW_TAG_subprogram ||
         tag == DW_TAG_entry_point;
}

uint32_t UdataAttr(Dwarf_Die* die, unsigned name) {
  Dwarf_Attribute attr;
  Dwarf_Word value = 0;
  if (!dwarf_attr(die, name, &attr) || dwarf_formudata(&attr, &value) != 0) return 0;
  return static_cast<uint32_t>(value);
}

// True when `symbol` (file layout; `delta` converts to the unit's addresses) starts at the
// entry of the DW_TAG_subprogram `function`.
bool SymbolStartsFunction(const auto& symbol, Dwarf_Die& function, uint64_t delta) {
  Dwarf_Addr entry = 0;
  return dwarf_entrypc(&function, &entry) == 0 && entry == symbol.address + delta;
}

}  // namespace

DwarfModule::~DwarfModule() {
  if (dwfl_) dwfl_end(dwfl_);
}

Result<std::unique_ptr<DwarfModule>> DwarfModule::OpenFile(const std::string& path,
                                                           const DebugFileSearch& search) {
  std::unique_ptr<DwarfModule> module(new DwarfModule());
  module->search_ = search;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error("cannot open " + path + ": " + std::strerror(errno));
  Status status = module->Open(path, path, fd);
  if (!status.ok()) return status.error();
  return module;
}

Result<std::unique_ptr<DwarfModule>> DwarfModule::OpenImage(const std::string& name,
                                                            std::string_view image) {
  // libdwfl opens modules from descriptors; an anonymous memory file gives it one without
  // touching the disk.
  int fd = ::memfd_create("tprof-image", MFD_CLOEXEC);
  if (fd < 0) return Error("memfd_create: " + std::string(std::strerror(errno)));
  size_t done = 0;
  while (done < image.size()) {
    ssize_t n = ::write(fd, image.data() + done, image.size() - done);
    if (n <= 0) {
      ::close(fd);
      return Error("writing the image of " + name + " failed");
    }
    done += static_cast<size_t>(n);
  }
  std::unique_ptr<DwarfModule> module(new DwarfModule());
  Status status = module->Open(name, "/proc/self/fd/" + std::to_string(fd), fd);
  if (!status.ok()) return status.error();
  module->path_ = name;
  return module;
}

Status DwarfModule::Open(const std::string& name, const std::string& path, int fd) {
  path_ = path;
  debuginfo_path_ptr_ = search_.path.empty() ? nullptr : search_.path.data();
  callbacks_.find_elf = dwfl_build_id_find_elf;
  callbacks_.find_debuginfo = FindDebugFile;
  callbacks_.section_address = dwfl_offline_section_address;
  callbacks_.debuginfo_path = debuginfo_path_ptr_ ? &debuginfo_path_ptr_ : nullptr;
  dwfl_ = dwfl_begin(&callbacks_);
  if (!dwfl_) {
    ::close(fd);
    return Error("dwfl_begin: " + DwflError());
  }
  dwfl_report_begin(dwfl_);
  // Base 0 and p_vaddr added: libdwfl addresses are the file's own virtual addresses.
  module_ = dwfl_report_elf(dwfl_, name.c_str(), path.c_str(),
                            WithSectionsInflated(fd, search_.cache_dir), 0,
                            true);  // takes the descriptor
  dwfl_report_end(dwfl_, nullptr, nullptr);
  if (!module_) return Error(path + ": " + DwflError());
  // Images (the vdso) search an empty path: nothing local, and no debuginfod either.
  SetDebugFileSearch(module_, &search_);
  Dwarf_Addr bias = 0;
  Elf* elf = dwfl_module_getelf(module_, &bias);
  if (!elf) return Error(path + ": " + DwflError());
  bias_ = bias;
  GElf_Ehdr ehdr;
  if (gelf_getehdr(elf, &ehdr)) machine_ = ehdr.e_machine;
  size_t phnum = 0;
  elf_getphdrnum(elf, &phnum);
  for (size_t i = 0; i < phnum; ++i) {
    GElf_Phdr ph;
    if (gelf_getphdr(elf, static_cast<int>(i), &ph) && ph.p_type == PT_LOAD)
      segments_.push_back({ph.p_offset, ph.p_vaddr, ph.p_filesz});
  }
  const unsigned char* bits = nullptr;
  GElf_Addr vaddr;
  int length = dwfl_module_build_id(module_, &bits, &vaddr);
  if (length > 0) build_id_.assign(reinterpret_cast<const char*>(bits), length);
  LoadSymbols();
  return Status::Ok();
}

void DwarfModule::LoadSymbols() {
  // libdwfl takes the best symbol table it has: .symtab of the file or of its debug file, else
  // .gnu_debugdata (MiniDebugInfo), else .dynsym. Its own address lookup scans every symbol,
  // so the functions are copied once into a sorted table.
  int count = dwfl_module_getsymtab(module_);
  for (int i = 1; i < count; ++i) {
    GElf_Sym sym;
    GElf_Addr address;
    GElf_Word shndx;
    const char* name =
        dwfl_module_getsym_info(module_, i, &sym, &address, &shndx, nullptr, nullptr);
    if (!name || !*name || shndx == SHN_UNDEF) continue;
    int type = GELF_ST_TYPE(sym.st_info);
    if (type != STT_FUNC && type != STT_GNU_IFUNC) continue;
    int binding = GELF_ST_BIND(sym.st_info);
    int rank = binding == STB_GLOBAL ? 0 : binding == STB_WEAK ? 1 : 2;
    symbols_.push_back({address - bias_, sym.st_size, name, rank});
  }
  std::sort(symbols_.begin(), symbols_.end(), [](const Symbol& a, const Symbol& b) {
    if (a.address != b.address) return a.address < b.address;
    if (a.size != b.size) return a.size > b.size;
    return a.rank < b.rank;
  });
  // Aliases share an address; keep the first (sized, then global).
  symbols_.erase(
      std::unique(symbols_.begin(), symbols_.end(),
                  [](const Symbol& a, const Symbol& b) { return a.address == b.address; }),
      symbols_.end());
}

const DwarfModule::Symbol* DwarfModule::FindSymbol(uint64_t address) const {
  auto it = std::upper_bound(symbols_.begin(), symbols_.end(), address,
                             [](uint64_t a, const Symbol& s) { return a < s.address; });
  if (it == symbols_.begin()) return nullptr;
  --it;
  // A symbol without a size covers up to the next one.
  uint64_t end = it->size ? it->address + it->size
                          : (std::next(it) != symbols_.end() ? std::next(it)->address : UINT64_MAX);
  return address < end ? &*it : nullptr;
}

bool DwarfModule::FindFunction(const std::string& name, uint64_t* start, uint64_t* end) {
  for (const Symbol& symbol : symbols_) {
    if (name != symbol.name && name != DemangledName(symbol.name)) continue;
    *start = symbol.address;
    *end = symbol.address + std::max<uint64_t>(symbol.size, 1);
    return true;
  }
  return false;
}

bool DwarfModule::FileOffsetToAddress(uint64_t file_offset, uint64_t* address) const {
  for (const Segment& s : segments_) {
    if (file_offset >= s.offset && file_offset < s.offset + s.filesz) {
      *address = file_offset - s.offset + s.vaddr;
      return true;
    }
  }
  return false;
}

std::string_view DwarfModule::CodeAt(uint64_t address, uint64_t size) {
  Dwarf_Addr bias = 0;
  Elf* elf = dwfl_module_getelf(module_, &bias);
  if (!elf) return {};
  for (const Segment& s : segments_) {
    if (address < s.vaddr || address >= s.vaddr + s.filesz) continue;
    size_t file_size = 0;
    const char* raw = elf_rawfile(elf, &file_size);
    if (!raw || s.offset + s.filesz > file_size) return {};
    uint64_t start = address - s.vaddr;
    return std::string_view(raw + s.offset + start, std::min(size, s.filesz - start));
  }
  return {};
}

bool DwarfModule::has_dwarf() {
  if (dwarf_state_ < 0) {
    Dwarf_Addr bias;
    dwarf_state_ = dwfl_module_getdwarf(module_, &bias) != nullptr ? 1 : 0;
  }
  return dwarf_state_ == 1;
}

bool DwarfModule::LineAt(uint64_t address, std::string* file, uint32_t* line) {
  Dwarf_Die* cudie = nullptr;
  uint64_t pc = 0;
  const CuIndex* index = UnitAt(address, &cudie, &pc);
  if (!index) return false;
  const LineRow* row = RowAt(*index, pc);
  if (!row) return false;
  *file = row->file;
  *line = row->line;
  return true;
}

const DwarfModule::CuIndex* DwarfModule::UnitAt(uint64_t address, Dwarf_Die** cudie, uint64_t* pc) {
  if (!has_dwarf()) return nullptr;
  Dwarf_Addr dwarf_bias = 0;
  *cudie = dwfl_module_addrdie(module_, address + bias_, &dwarf_bias);
  if (!*cudie) {
    Dwarf* dwarf = dwfl_module_getdwarf(module_, &dwarf_bias);
    if (!dwarf) return nullptr;
    *cudie = UnitByRanges(dwarf, address + bias_ - dwarf_bias);
    if (!*cudie) return nullptr;
  }
  *pc = address + bias_ - dwarf_bias;
  // libdwfl may offer a unit for code that is not in it (crt1's _start after the last unit's
  // rows): a unit that states its ranges must hold the address.
  if ((dwarf_hasattr(*cudie, DW_AT_ranges) || dwarf_hasattr(*cudie, DW_AT_low_pc)) &&
      dwarf_haspc(*cudie, *pc) != 1)
    return nullptr;
  return &IndexFor(*cudie);
}

Dwarf_Die* DwarfModule::UnitByRanges(Dwarf* dwarf, uint64_t pc) {
  if (!unit_ranges_built_) {
    unit_ranges_built_ = true;
    Dwarf_CU* cu = nullptr;
    Dwarf_Half version = 0;
    uint8_t unit_type = 0;
    Dwarf_Die unit, subdie;
    while (dwarf_get_units(dwarf, cu, &cu, &version, &unit_type, &unit, &subdie) == 0) {
      if (unit_type != DW_UT_compile && unit_type != DW_UT_partial) continue;
      Dwarf_Addr base = 0, low = 0, high = 0;
      for (ptrdiff_t at = 0; (at = dwarf_ranges(&unit, at, &base, &low, &high)) > 0;)
        if (high > low) unit_ranges_.push_back({low, high, dwarf_dieoffset(&unit)});
    }
    std::sort(unit_ranges_.begin(), unit_ranges_.end(),
              [](const UnitRange& a, const UnitRange& b) { return a.low < b.low; });
  }
  auto it = std::upper_bound(unit_ranges_.begin(), unit_ranges_.end(), pc,
                             [](uint64_t a, const UnitRange& r) { return a < r.low; });
  // Ranges of different units do not overlap in a linked binary; a few steps back cover
  // anything odd (a unit's range that spans another's).
  for (int step = 0; step < 8 && it != unit_ranges_.begin(); ++step) {
    --it;
    if (pc >= it->low && pc < it->high)
      return dwarf_offdie(dwarf, it->die_offset, &unit_by_ranges_);
  }
  return nullptr;
}

const DwarfModule::LineRow* DwarfModule::RowAt(const CuIndex& index, uint64_t pc) {
  auto it = std::upper_bound(index.lines.begin(), index.lines.end(), pc,
                             [](uint64_t a, const LineRow& r) { return a < r.low; });
  if (it == index.lines.begin()) return nullptr;
  --it;
  return pc < it->high ? &*it : nullptr;
}

// GCC gives a lambda's operator() (and any member of a class local to a function) no linkage
// name, so its DWARF name alone is a bare "operator()" that every inlined lambda would share.
// Such a function declared inside another function is named by its scopes up to that
// function, an unnamed class shown by where it is declared ("Run(int)::{lambda at
// demo.cpp:45}::operator()"); any other keeps its DWARF name, as addr2line gives it.
const std::string& DwarfModule::ScopedName(Dwarf_Die* die) {
  static const std::string kNone;
  Dwarf_Die decl = DeclarationOf(die);
  const char* name = dwarf_diename(&decl);
  if (!name) return kNone;
  auto [it, inserted] = scoped_names_.try_emplace(dwarf_dieoffset(&decl));
  if (!inserted) return it->second;
  std::string qualified = name;
  bool local = false;  // declared inside a function
  Dwarf_Die* scopes = nullptr;
  int count = dwarf_getscopes_die(&decl, &scopes);
  for (int i = 1; i < count; ++i) {
    Dwarf_Die* scope = &scopes[i];
    int tag = dwarf_tag(scope);
    std::string part;
    if (tag == DW_TAG_subprogram) {
      if (const char* linkage = LinkageName(scope)) {
        part = DemangledName(linkage);
      } else {
        part = ScopedName(scope);
      }
      if (!part.empty()) qualified = part + "::" + qualified;
      local = true;
      break;  // the enclosing function's name carries its own scopes
    }
    if (tag == DW_TAG_namespace) {
      const char* ns = dwarf_diename(scope);
      part = ns ? ns : "(anonymous namespace)";
    } else if (IsTypeScope(tag)) {
      if (const char* type = dwarf_diename(scope)) {
        part = type;
      } else {
        int line = 0;
        const char* file = dwarf_decl_file(scope);
        dwarf_decl_line(scope, &line);
        const char* base = file ? std::strrchr(file, '/') : nullptr;
        part = std::string("{") + (std::string_view(name) == "operator()" ? "lambda" : "unnamed") +
               " at " + (base ? base + 1 : (file ? file : "?")) + ":" + std::to_string(line) + "}";
      }
    } else {
      continue;  // lexical blocks and the unit add nothing to a name
    }
    qualified = part + "::" + qualified;
  }
  free(scopes);
  return it->second = local ? std::move(qualified) : std::string(name);
}

const std::string& DwarfModule::DemangledName(const char* mangled) {
  auto [it, added] = demangled_.try_emplace(mangled);
  if (added) it->second = Demangle(mangled);
  return it->second;
}

const char* DwarfModule::SourcePath(const char* name, const char* comp_dir) {
  if (!name || !name[0] || name[0] == '/' || !comp_dir || !comp_dir[0]) return name;
  // libdw hands out one pointer per file of a unit's tables, so the pointer is the key.
  auto [it, added] = joined_paths_.try_emplace(name, comp_dir);
  if (added) {
    if (it->second.back() != '/') it->second += '/';
    it->second += name;
  }
  return it->second.c_str();
}

const DwarfModule::CuIndex& DwarfModule::IndexFor(Dwarf_Die* cudie) {
  uint64_t key = dwarf_dieoffset(cudie);
  auto it = cu_index_.find(key);
  if (it != cu_index_.end()) return it->second;
  // One walk over the unit's top level (and namespaces) finds every concrete function and its
  // address ranges; later lookups in this unit are a binary search instead of a tree walk.
  CuIndex index;
  Dwarf_Attribute comp_dir;
  index.comp_dir = dwarf_formstring(dwarf_attr(cudie, DW_AT_comp_dir, &comp_dir));
  std::vector<Dwarf_Die> pending{*cudie};
  while (!pending.empty()) {
    Dwarf_Die parent = pending.back();
    pending.pop_back();
    Dwarf_Die child;
    if (dwarf_child(&parent, &child) != 0) continue;
    do {
      int tag = dwarf_tag(&child);
      if (tag == DW_TAG_namespace || tag == DW_TAG_module) {
        pending.push_back(child);
      } else if (tag == DW_TAG_subprogram) {
        Dwarf_Addr base, start, end;
        ptrdiff_t offset = 0;
        while ((offset = dwarf_ranges(&child, offset, &base, &start, &end)) > 0)
          if (end > start) index.functions.push_back({start, end, child});
      }
    } while (dwarf_siblingof(&child, &child) == 0);
  }
  std::sort(index.functions.begin(), index.functions.end(),
            [](const FunctionRange& a, const FunctionRange& b) { return a.low < b.low; });

  // The line table as address ranges. libdw sorts rows by address (sequence ends in place); a
  // row covers up to the next row, several rows at one address leave the last one in force,
  // and nothing after a sequence end belongs to the row before it. (libdw's own lookup gives
  // a sequence's last row to addresses past the end of the sequence.)
  Dwarf_Lines* lines = nullptr;
  size_t count = 0;
  if (dwarf_getsrclines(cudie, &lines, &count) == 0) {
    for (size_t i = 0; i + 1 < count; ++i) {
      Dwarf_Line* row = dwarf_onesrcline(lines, i);
      Dwarf_Line* next = dwarf_onesrcline(lines, i + 1);
      bool end_sequence = false;
      Dwarf_Addr low = 0, high = 0;
      if (!row || !next || dwarf_lineendsequence(row, &end_sequence) != 0 || end_sequence ||
          dwarf_lineaddr(row, &low) != 0 || dwarf_lineaddr(next, &high) != 0 || high <= low)
        continue;
      int line = 0, column = 0;
      dwarf_lineno(row, &line);
      dwarf_linecol(row, &column);
      const char* file = SourcePath(dwarf_linesrc(row, nullptr, nullptr), index.comp_dir);
      index.lines.push_back({low, high, file ? file : "", static_cast<uint32_t>(line),
                             static_cast<uint32_t>(column)});
    }
    std::sort(index.lines.begin(), index.lines.end(),
              [](const LineRow& a, const LineRow& b) { return a.low < b.low; });
  }
  index.name = SourcePath(dwarf_diename(cudie), index.comp_dir);
  return cu_index_.emplace(key, std::move(index)).first->second;
}

// GCC's and clang's demangled names of a lambda's operator(): "main::{lambda()#1}::operator()()
// const", "main::$_0::operator()() const".
static bool IsLambdaSymbol(std::string_view demangled) {
  return demangled.find("{lambda(") != std::string_view::npos ||
         demangled.find("::$_") != std::string_view::npos;
}

bool DwarfModule::DwarfChain(uint64_t address, const Symbol* symbol,
                             std::vector<SourceFrame>* frames) {
  Dwarf_Die* cudie = nullptr;
  uint64_t pc = 0;
  const CuIndex* unit = UnitAt(address, &cudie, &pc);
  if (!unit) return false;
  const CuIndex& index = *unit;
  // The innermost (smallest) function range holding pc.
  auto it = std::upper_bound(index.functions.begin(), index.functions.end(), pc,
                             [](Dwarf_Addr a, const FunctionRange& r) { return a < r.low; });
  const FunctionRange* best = nullptr;
  // Concrete functions do not overlap, so the range starting last before pc is the one; a few
  // more are checked in case a compiler nests them.
  for (int checked = 0; it != index.functions.begin() && checked < 8; ++checked) {
    --it;
    if (pc < it->high && (!best || it->high - it->low < best->high - best->low)) best = &*it;
  }
  std::string file;
  uint32_t line = 0, column = 0;
  if (const LineRow* row = RowAt(index, pc)) {
    file = row->file;
    line = row->line;
    column = row->column;
  } else if (index.name) {
    file = index.name;  // code of the unit without line rows (as addr2line says: "unit.c:0")
  }
  if (!best) {
    if (!symbol) return false;
    // Code the unit describes only by its line table: one frame from the symbol table.
    SourceFrame only;
    only.function = DemangledName(symbol->name);
    if (only.function != symbol->name) only.mangled = symbol->name;
    only.file = std::move(file);
    only.line = line;
    only.column = column;
    frames->push_back(std::move(only));
    return true;
  }
  Dwarf_Die function = best->die;

  // Descend through the scopes holding pc: the subprogram, then each inlined call inside it.
  std::vector<Dwarf_Die> chain{function};  // outermost first
  Dwarf_Die scope = function;
  for (;;) {
    Dwarf_Die child;
    if (dwarf_child(&scope, &child) != 0) break;
    bool found = false;
    do {
      if (IsCodeScope(dwarf_tag(&child)) && dwarf_haspc(&child, pc) == 1) {
        if (dwarf_tag(&child) == DW_TAG_inlined_subroutine) chain.push_back(child);
        scope = child;
        found = true;
        break;
      }
    } while (dwarf_siblingof(&child, &child) == 0);
    if (!found) break;
  }

  Dwarf_Files* files = nullptr;
  size_t file_count = 0;
  if (dwarf_getsrcfiles(cudie, &files, &file_count) != 0) files = nullptr;
  // Innermost first: each frame's location is the address's (for the innermost) or the call
  // site of the inlined call nested in it.
  for (size_t i = chain.size(); i-- > 0;) {
    Dwarf_Die* die = &chain[i];
    SourceFrame frame;
    if (const char* linkage = LinkageName(die)) {
      frame.mangled = linkage;
      frame.function = DemangledName(linkage);
      if (frame.function == frame.mangled) frame.mangled.clear();
    } else if (i == 0 && symbol && SymbolStartsFunction(*symbol, function, pc - address)) {
      // No linkage name (internal linkage, extern "C"): the symbol of the function's entry
      // names it with its scope and parameters, as binutils does. A lambda compiled out of line
      // is named as the same lambda inlined is ("main::{lambda at x.cpp:5}::operator()", not
      // "main::{lambda()#1}::operator()() const"), so that two builds that inline it
      // differently name one function.
      frame.function = DemangledName(symbol->name);
      if (frame.function != symbol->name) frame.mangled = symbol->name;
      if (IsLambdaSymbol(frame.function))
        if (const std::string& name = ScopedName(die);
            name.find("{lambda at ") != std::string::npos)
          frame.function = name;
    } else if (const std::string& name = ScopedName(die); !name.empty()) {
      frame.function = name;
    }
    frame.file = file;
    frame.line = line;
    frame.column = column;
    frame.inlined = i > 0;  // chain[0] is the subprogram, the rest inlined calls
    frames->push_back(std::move(frame));
    if (i > 0) {
      // The next (outer) frame is located at this inlined call's call site.
      uint32_t call_file = UdataAttr(die, DW_AT_call_file);
      const char* call_name =
          files ? SourcePath(dwarf_filesrc(files, call_file, nullptr, nullptr), index.comp_dir)
                : nullptr;
      file = call_name ? call_name : "";
      line = UdataAttr(die, DW_AT_call_line);
      column = UdataAttr(die, DW_AT_call_column);
    }
  }
  return true;
}

bool DwarfModule::InSignalFrameCfi(uint64_t address) const {
  for (int debug = 0; debug < 2; ++debug) {
    Dwarf_Addr cfi_bias = 0;
    Dwarf_CFI* cfi =
        debug ? dwfl_module_dwarf_cfi(module_, &cfi_bias) : dwfl_module_eh_cfi(module_, &cfi_bias);
    if (!cfi) continue;
    const Dwarf_Addr at = address + bias_ - cfi_bias;
    Dwarf_Frame* frame = nullptr;
    if (dwarf_cfi_addrframe(cfi, at, &frame) != 0) continue;
    Dwarf_Addr start = 0, end = 0;
    bool signal = false;
    const bool known = dwarf_frame_info(frame, &start, &end, &signal) >= 0;
    std::free(frame);
    return known && signal && at + 1 < end;
  }
  return false;
}

void DwarfModule::Lookup(uint64_t address, ResolvedFrame* frame) {
  const Symbol* symbol = FindSymbol(address);
  // A return address is looked up at address - 1 (it names the call). A signal handler's
  // return into the sigreturn trampoline has no call before it: glibc leads __restore_rt with a
  // nop outside its symbol but inside its CFI, a signal frame's. There, the symbol starting at
  // address + 1 is named; nowhere else (code without a symbol before a function stays unnamed).
  if (!symbol && InSignalFrameCfi(address)) {
    const Symbol* next = FindSymbol(address + 1);
    if (next && next->address == address + 1) symbol = next;
  }
  std::vector<SourceFrame> chain;
  bool have_dwarf = DwarfChain(address, symbol, &chain);
  if (symbol) {
    frame->function = DemangledName(symbol->name);
    frame->mangled = frame->function == symbol->name ? "" : symbol->name;
    frame->resolved = true;
    // An out-of-line lambda: the name the DWARF chain gives it (see DwarfChain).
    if (have_dwarf && !chain.empty() && IsLambdaSymbol(frame->function) &&
        chain.back().function.find("{lambda at ") != std::string::npos)
      frame->function = chain.back().function;
  } else if (have_dwarf && !chain.empty() && !chain.back().function.empty()) {
    frame->function = chain.back().function;
    frame->mangled = chain.back().mangled;
    frame->resolved = true;
  }
  if (have_dwarf) {
    frame->frames = std::move(chain);
  } else if (symbol) {
    SourceFrame only;
    only.function = frame->function;
    only.mangled = frame->mangled;
    LineAt(address, &only.file, &only.line);
    frame->frames.push_back(std::move(only));
  }
}

}  // namespace tprof
