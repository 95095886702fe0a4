#include "symbolize/symbolizer.h"

#include <cstdio>

#include "symbolize/demangle.h"

namespace tprof {
namespace {

std::string BaseName(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string OffsetName(const std::string& module, uint64_t offset) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "+0x%llx]", static_cast<unsigned long long>(offset));
  // "[vdso]" becomes "[vdso+0x10]", not "[[vdso]+0x10]".
  bool bracketed = module.size() >= 2 && module.front() == '[' && module.back() == ']';
  return "[" + (bracketed ? module.substr(1, module.size() - 2) : module) + buf;
}

}  // namespace

const ElfSymbols* ElfSymbolizer::SymbolsFor(const Mapping& mapping) {
  auto it = tables_.find(mapping.filename);
  if (it != tables_.end()) return it->second.get();
  std::unique_ptr<ElfSymbols> table;
  if (!mapping.filename.empty() && mapping.filename[0] == '/') {
    auto loaded = ElfSymbols::Load(mapping.filename);
    if (loaded.ok() && (mapping.build_id.empty() || loaded->build_id().empty() ||
                        loaded->build_id() == mapping.build_id))
      table = std::make_unique<ElfSymbols>(std::move(loaded).value());
  }
  return tables_.emplace(mapping.filename, std::move(table)).first->second.get();
}

ResolvedFrame ElfSymbolizer::Resolve(const Mapping* mapping, uint64_t address) {
  ResolvedFrame frame;
  if (!mapping) {
    if (IsKernelAddress(address)) {
      frame.module = "[kernel]";
      frame.function = "[kernel]";
    } else {
      frame.module = "[unknown]";
      frame.function = "[unknown]";
    }
    return frame;
  }
  frame.module = BaseName(mapping->filename);
  uint64_t offset = mapping->FileOffset(address);
  if (const ElfSymbols* symbols = SymbolsFor(*mapping)) {
    if (const ElfSymbol* symbol = symbols->FindByFileOffset(offset)) {
      frame.function = Demangle(symbol->name);
      frame.resolved = true;
      return frame;
    }
  }
  frame.function = OffsetName(frame.module, offset);
  return frame;
}

}  // namespace tprof
