#include "symbolize/symbolizer.h"

#include <elf.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "core/base/build_id.h"
#include "core/base/file_paths.h"
#include "symbolize/debug_file.h"
#include "symbolize/vdso_image.h"

namespace tprof {
namespace {

const char kKernelMemo = 0;  // memo keys of kernel addresses use this address as their module

}  // namespace

std::string UnresolvedName(const std::string& module, uint64_t offset) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "+0x%llx]", static_cast<unsigned long long>(offset));
  // "[vdso]" becomes "[vdso+0x10]", not "[[vdso]+0x10]".
  bool bracketed = module.size() >= 2 && module.front() == '[' && module.back() == ']';
  return "[" + (bracketed ? module.substr(1, module.size() - 2) : module) + buf;
}

std::string DefaultBuildIdDir() {
  if (const char* dir = std::getenv("PERF_BUILDID_DIR"); dir && *dir) return dir;
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.debug";
  return "";
}

Symbolizer::Symbolizer(SymbolizerOptions options) : options_(std::move(options)) {}
Symbolizer::~Symbolizer() = default;

void Symbolizer::ReleaseModules() {
  // The memo points into the modules' frames; the notes stay, so none is said twice.
  memo_.clear();
  frames_ = FrameInterner();
  modules_.clear();
  last_module_valid_ = false;
  if (kernel_loading_.valid()) return;  // a preload still running keeps its result
  kernel_.reset();
  kernel_usable_ = false;
}

void Symbolizer::Note(const std::string& message) {
  for (const std::string& seen : notes_)
    if (seen == message) return;
  notes_.push_back(message);
  if (options_.on_note)
    options_.on_note(message);
  else
    std::cerr << "tprof: note: " << message << '\n';
}

std::unique_ptr<DwarfModule> Symbolizer::OpenVdso(const std::string& build_id) {
  std::string_view image = RunningVdsoImage();
  if (image.empty()) return nullptr;
  auto module = DwarfModule::OpenImage("[vdso]", image);
  if (!module.ok()) return nullptr;
  if (!build_id.empty() && !(*module)->build_id().empty() &&
      !SameBuildId(build_id, (*module)->build_id())) {
    Note("[vdso]: the recorded vdso (build-id " + BuildIdHex(build_id) +
         ") is not this kernel's; its addresses are shown as [vdso+0xoffset]");
    return nullptr;
  }
  return std::move(module).value();
}

std::unique_ptr<DwarfModule> Symbolizer::OpenModule(const std::string& recorded_path,
                                                    const std::string& build_id) {
  if (recorded_path == "[vdso]") return options_.use_vdso ? OpenVdso(build_id) : nullptr;
  std::string path = StripDeleted(recorded_path);
  if (path.empty() || path[0] == '[') return nullptr;  // [vsyscall], [uprobes], ...
  // A path that is not absolute (from a tool that writes its own mapping records, as
  // bench/synth_perf_data does when given one) is read from the current directory, as perf reads
  // it; not found, it gets the note below. It was left unresolved without a word.
  const bool relative = path[0] != '/';
  // The kernel's names of files without a path (anon_inode:[perf_event], socket:[123],
  // pipe:[456], dmabuf:): no file to read, as before.
  if (relative && path.find(':') != std::string::npos) return nullptr;
  std::vector<std::string> candidates;
  if (!options_.symfs.empty()) {
    candidates.push_back(options_.symfs + (relative ? "/" : "") + path);
    candidates.push_back(options_.symfs + "/" + BaseName(path));
  } else {
    candidates.push_back(path);
  }
  for (const std::string& dir : options_.search_path)
    candidates.push_back(dir + "/" + BaseName(path));
  // perf's copy of what it recorded: the binary as it was, should it have been rebuilt since.
  if (std::string cached = CachedCopy(recorded_path, build_id); !cached.empty())
    candidates.push_back(std::move(cached));
  // A debug file found by build-id keeps the program headers, symbols and DWARF: enough to
  // name addresses when the binary itself is gone.
  if (build_id.size() >= 2) {
    std::string hex = BuildIdHex(build_id);
    while (hex.size() > 2 && hex.ends_with("00")) hex.resize(hex.size() - 2);  // perf padding
    for (const std::string& dir : options_.debug_dirs) {
      std::string relative = "/.build-id/" + hex.substr(0, 2) + "/" + hex.substr(2) + ".debug";
      if (!options_.symfs.empty()) candidates.push_back(options_.symfs + dir + relative);
      candidates.push_back(dir + relative);
    }
  }
  const DebugFileSearch search{DebugSearchPath(options_.symfs, options_.debug_dirs),
                               options_.cache_dir};
  for (const std::string& candidate : candidates) {
    if (!IsFile(candidate)) continue;
    auto module = DwarfModule::OpenFile(candidate, search);
    if (!module.ok()) continue;
    if (!build_id.empty() && !(*module)->build_id().empty() &&
        !SameBuildId(build_id, (*module)->build_id())) {
      Note(candidate + ": build-id " + BuildIdHex((*module)->build_id()) +
           " differs from the recorded " + BuildIdHex(build_id) + "; not used");
      continue;
    }
    return std::move(module).value();
  }
  Note("no usable file for " + recorded_path + "; its addresses are shown as [" +
       BaseName(recorded_path) + "+0xoffset]");
  return nullptr;
}

DwarfModule* Symbolizer::ModuleFor(const std::string& recorded_path, const std::string& build_id) {
  if (last_module_valid_ && recorded_path == last_module_path_ &&
      build_id == last_module_build_id_)
    return last_module_;
  DwarfModule* module = FindOrOpenModule(recorded_path, build_id);
  last_module_path_ = recorded_path;
  last_module_build_id_ = build_id;
  last_module_ = module;
  last_module_valid_ = true;
  return module;
}

const std::string& Symbolizer::ModuleName(const std::string& recorded_path) {
  if (recorded_path != module_name_path_) {
    module_name_path_ = recorded_path;
    module_name_ = BaseName(StripDeleted(recorded_path));
  }
  return module_name_;
}

DwarfModule* Symbolizer::FindOrOpenModule(const std::string& recorded_path,
                                          const std::string& build_id) {
  std::string key = recorded_path;
  key.push_back('\0');
  key += build_id;
  auto it = modules_.find(key);
  if (it == modules_.end()) {
    ModuleEntry entry;
    entry.module = OpenModule(recorded_path, build_id);
    if (entry.module) ++stats_.modules_opened;
    it = modules_.emplace(std::move(key), std::move(entry)).first;
  }
  return it->second.module.get();
}

ResolvedFrame Symbolizer::Resolve(const Mapping* mapping, uint64_t address) {
  return ResolveInProcess(0, mapping, address);
}

ResolvedFrame Symbolizer::ResolveInProcess(uint32_t pid, const Mapping* mapping, uint64_t address) {
  ++stats_.lookups;
  if (IsKernelCode(mapping, address)) return ResolveKernel(mapping, address);
  if (!mapping || IsFilelessMapping(mapping->filename)) return ResolveJit(pid, mapping, address);
  return ResolveFile(*mapping, address);
}

std::string BuildIdCacheCopy(const std::string& build_id_dir, const std::string& recorded_path,
                             const std::string& build_id) {
  if (build_id_dir.empty() || build_id.empty()) return "";
  // DIR/.build-id/xx/yyyy links to the directory of the copy: "elf", or the kernel's "kallsyms".
  const char* file = IsKernelMappingName(recorded_path) ? "/kallsyms" : "/elf";
  std::string hex = BuildIdHex(build_id);
  for (;;) {
    std::string path = build_id_dir + "/.build-id/" + hex.substr(0, 2) + "/" + hex.substr(2) + file;
    if (IsFile(path)) return path;
    // perf pads short ids with zeros; the cache names them unpadded.
    if (hex.size() <= 2 || !hex.ends_with("00")) return "";
    while (hex.size() > 2 && hex.ends_with("00")) hex.resize(hex.size() - 2);
  }
}

std::string Symbolizer::CachedCopy(const std::string& recorded_path,
                                   const std::string& build_id) const {
  return BuildIdCacheCopy(options_.build_id_dir, recorded_path, build_id);
}

Symbolizer::KernelSymbolsFile Symbolizer::KernelSymbolsFor(
    const std::string& recorded_build_id) const {
  if (std::string cached = CachedCopy("[kernel.kallsyms]", recorded_build_id); !cached.empty())
    return {cached, recorded_build_id};
  return {options_.kallsyms, RunningKernelBuildId(options_.kernel_notes)};
}

void Symbolizer::PreloadKernelSymbols(const std::string& recorded_build_id) {
  if (kernel_ || kernel_loading_.valid()) return;
  KernelSymbolsFile file = KernelSymbolsFor(recorded_build_id);
  kernel_build_id_ = file.build_id;
  kernel_loading_ = std::async(std::launch::async, KernelSymbols::Load, file.path);
}

ResolvedFrame Symbolizer::ResolveKernel(const Mapping* mapping, uint64_t address) {
  if (!kernel_) {
    if (kernel_loading_.valid()) {
      kernel_ = kernel_loading_.get();
    } else {
      KernelSymbolsFile file = KernelSymbolsFor(mapping ? mapping->build_id : "");
      kernel_build_id_ = file.build_id;
      kernel_ = KernelSymbols::Load(file.path);
    }
    kernel_usable_ = kernel_->available();
    if (!kernel_usable_) {
      Note("kernel symbols unavailable: " + kernel_->unavailable_reason() +
           "; kernel addresses are shown as [kernel.kallsyms+0xADDRESS]");
    } else if (mapping && !mapping->build_id.empty() && !kernel_build_id_.empty() &&
               !SameBuildId(kernel_build_id_, mapping->build_id)) {
      kernel_usable_ = false;
      Note("the profile was recorded on another kernel (build-id " + BuildIdHex(mapping->build_id) +
           ", symbols at hand are of " + BuildIdHex(kernel_build_id_) +
           "); kernel addresses are shown unresolved");
    }
  }
  MemoKey key{&kKernelMemo, address};
  if (auto it = memo_.find(key); it != memo_.end()) {
    ++stats_.cache_hits;
    return *it->second;
  }
  ResolvedFrame frame;
  frame.module = "[kernel.kallsyms]";
  const std::optional<KernelSymbols::Symbol> symbol =
      kernel_usable_ ? kernel_->Find(address) : std::nullopt;
  if (symbol) {
    frame.module = symbol->module;
    frame.function = symbol->name;
    frame.resolved = true;
    SourceFrame only;
    only.function = symbol->name;
    frame.frames.push_back(std::move(only));
  } else {
    frame.function = UnresolvedName(frame.module, address);
  }
  return *memo_.emplace(key, frames_.Intern(std::move(frame))).first->second;
}

ResolvedFrame Symbolizer::ResolveJit(uint32_t pid, const Mapping* mapping, uint64_t address) {
  ResolvedFrame frame;
  const PerfMap* map = nullptr;
  std::string map_path = options_.perf_map_dir + "/perf-" + std::to_string(pid) + ".map";
  if (pid != 0) {
    auto it = perf_maps_.find(pid);
    if (it == perf_maps_.end()) {
      std::unique_ptr<PerfMap> loaded;
      if (auto result = PerfMap::Load(map_path); result.ok())
        loaded = std::make_unique<PerfMap>(std::move(result).value());
      it = perf_maps_.emplace(pid, std::move(loaded)).first;
    }
    map = it->second.get();
  }
  if (map) {
    MemoKey key{map, address};
    if (auto it = memo_.find(key); it != memo_.end()) {
      ++stats_.cache_hits;
      return *it->second;
    }
    if (const PerfMap::Entry* entry = map->Find(address)) {
      frame.module = BaseName(map_path);
      frame.function = entry->name;
      frame.resolved = true;
      SourceFrame only;
      only.function = entry->name;
      frame.frames.push_back(std::move(only));
      return *memo_.emplace(key, frames_.Intern(std::move(frame))).first->second;
    }
  }
  if (mapping) {
    frame.module = mapping->filename.empty() ? "[anon]" : BaseName(mapping->filename);
    frame.function = UnresolvedName(frame.module, mapping->FileOffset(address));
  } else {
    frame.module = "[unknown]";
    frame.function = "[unknown]";
  }
  return frame;
}

const ResolvedFrame* Symbolizer::MemoFrame(const Mapping& mapping, uint64_t address, bool* first) {
  const uint64_t offset = mapping.FileOffset(address);
  DwarfModule* module = ModuleFor(mapping.filename, mapping.build_id);
  uint64_t file_address = 0;
  if (!module || !module->FileOffsetToAddress(offset, &file_address)) return nullptr;
  auto [it, added] = memo_.try_emplace(MemoKey{module, file_address}, nullptr);
  *first = added;
  if (!added) return it->second;
  // Nothing below touches memo_: `it` stays valid until the frame is in it.
  ResolvedFrame frame;
  frame.module = ModuleName(mapping.filename);
  frame.build_id = mapping.build_id.empty() ? module->build_id() : mapping.build_id;
  module->Lookup(file_address, &frame);
  if (!frame.resolved) frame.function = UnresolvedName(frame.module, offset);
  it->second = frames_.Intern(std::move(frame));
  return it->second;
}

ResolvedFrame Symbolizer::ResolveFile(const Mapping& mapping, uint64_t address) {
  bool first = false;
  const ResolvedFrame* memo = MemoFrame(mapping, address, &first);
  if (!memo) {
    ResolvedFrame frame;
    frame.module = ModuleName(mapping.filename);
    frame.build_id = mapping.build_id;
    frame.function = UnresolvedName(frame.module, mapping.FileOffset(address));
    return frame;
  }
  if (first) return *memo;
  ++stats_.cache_hits;
  // A memo hit names this mapping's module and build-id (as recorded: none when none was).
  ResolvedFrame hit = *memo;
  hit.module = ModuleName(mapping.filename);
  hit.build_id = mapping.build_id;
  return hit;
}

const ResolvedFrame* Symbolizer::FindHeld(uint32_t pid, const Mapping* mapping, uint64_t address) {
  (void)pid;
  if (!mapping || IsKernelCode(mapping, address) || IsFilelessMapping(mapping->filename))
    return nullptr;
  bool first = false;
  const ResolvedFrame* memo = MemoFrame(*mapping, address, &first);
  if (!memo) return nullptr;
  // As ResolveFile would answer: a new frame as made, a memo hit with this mapping's names.
  if (!first && (memo->module != ModuleName(mapping->filename) ||
                 memo->build_id != mapping->build_id))
    return nullptr;  // ResolveInProcess makes the copy with this mapping's names
  ++stats_.lookups;
  if (!first) ++stats_.cache_hits;
  return memo;
}

}  // namespace tprof
