#include "report/annotate_report.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>

#include "report/printf.h"
#include "symbolize/disassembler.h"
#include "symbolize/dwarf_module.h"

namespace tprof {
namespace {

std::string HexBytes(const std::string& bytes) {
  std::string hex;
  for (unsigned char c : bytes) hex += Printf("%02x", c);
  return hex;
}

// Lines of source files, read once each; empty when a file cannot be read.
class SourceFiles {
 public:
  const std::string* Line(const std::string& file, uint32_t line) {
    auto [it, inserted] = files_.try_emplace(file);
    if (inserted) {
      std::ifstream in(file);
      for (std::string text; std::getline(in, text);) it->second.push_back(text);
    }
    if (line == 0 || line > it->second.size()) return nullptr;
    return &it->second[line - 1];
  }

 private:
  std::map<std::string, std::vector<std::string>> files_;
};

// Events shown: those with samples in the function.
std::vector<size_t> ShownEvents(const FunctionSamples& function) {
  std::vector<size_t> shown;
  for (size_t e = 0; e < function.self_samples.size(); ++e)
    if (function.self_samples[e]) shown.push_back(e);
  return shown;
}

std::string CountColumns(const std::vector<size_t>& shown, const std::vector<uint64_t>* period,
                         const std::vector<uint64_t>* samples, const std::vector<uint64_t>& total) {
  std::string out;
  for (size_t e : shown) {
    uint64_t p = period ? (*period)[e] : 0, s = samples ? (*samples)[e] : 0;
    if (s == 0) {
      out += Printf("%9s %8s ", "", "");
      continue;
    }
    out += Printf("%8.2f%% %8llu ", 100.0 * static_cast<double>(p) / static_cast<double>(total[e]),
                  static_cast<unsigned long long>(s));
  }
  return out;
}

void AnnotateOne(const InstructionProfile& profile, const FunctionSamples& function,
                 const ModuleOpener& open_module, SourceFiles& sources, std::ostream& out) {
  const std::vector<size_t> shown = ShownEvents(function);
  out << "# function: " << function.function << '\n';
  if (!function.inlined_into.empty())
    out << "# inlined into: " << function.inlined_into
        << " (its instructions are listed; shares are those of the inlined code)\n";
  out << "# module: " << function.module;
  if (!function.build_id.empty()) out << " (build-id " << HexBytes(function.build_id) << ')';
  out << '\n';
  for (size_t e : shown)
    out << Printf("# event %s: self %.2f%% of the total period, %llu samples\n",
                  profile.events[e].name.c_str(),
                  100.0 * static_cast<double>(function.self_period[e]) /
                      static_cast<double>(profile.total_period[e]),
                  static_cast<unsigned long long>(function.self_samples[e]));
  out << "# Share% is the instruction's share of the event's total period; they add up to the "
         "function's self share\n";

  // Sampled pcs in the binary's own address layout.
  DwarfModule* module =
      function.file_offsets ? open_module(function.module, function.build_id) : nullptr;
  std::string why;
  std::vector<Instruction> instructions;
  uint64_t start = 0, end = 0;
  if (!function.file_offsets) {
    why = "no file behind these addresses (kernel or anonymous memory)";
  } else if (!module) {
    why = "the binary was not found or its build-id differs (try --symfs or --binary)";
  } else if (!function.inlined_into.empty()
                 ? !module->FindFunction(function.inlined_into_mangled, &start, &end) &&
                       !module->FindFunction(function.inlined_into, &start, &end)
                 : !module->FindFunction(function.mangled, &start, &end) &&
                       !module->FindFunction(function.function, &start, &end)) {
    why = "the binary has no symbol for it";
  } else {
    auto decoded = DisassembleRange(*module, start, end);
    if (decoded.ok())
      instructions = std::move(decoded).value();
    else
      why = decoded.error().message();
  }
  // Period and samples per instruction start (or per sampled key when there is no listing).
  std::map<uint64_t, std::pair<std::vector<uint64_t>, std::vector<uint64_t>>> at;
  std::vector<uint64_t> outside_period(profile.events.size()),
      outside_samples(profile.events.size());
  for (const auto& [key, period] : function.period_by_offset) {
    const std::vector<uint64_t>& samples = function.samples_by_offset.at(key);
    uint64_t address = key;
    bool placed = false;
    if (!instructions.empty() && module->FileOffsetToAddress(key, &address) && address >= start &&
        address < end) {
      // The instruction holding the pc (a pc is normally an instruction's first byte).
      auto it =
          std::upper_bound(instructions.begin(), instructions.end(), address,
                           [](uint64_t a, const Instruction& insn) { return a < insn.address; });
      if (it != instructions.begin()) {
        address = std::prev(it)->address;
        placed = true;
      }
    }
    if (!instructions.empty() && !placed) {
      for (size_t e = 0; e < period.size(); ++e) {
        outside_period[e] += period[e];
        outside_samples[e] += samples[e];
      }
      continue;
    }
    auto& slot = at[address];
    if (slot.first.empty()) {
      slot.first.assign(period.size(), 0);
      slot.second.assign(period.size(), 0);
    }
    for (size_t e = 0; e < period.size(); ++e) {
      slot.first[e] += period[e];
      slot.second[e] += samples[e];
    }
  }

  std::string heading;
  for (size_t i = 0; i < shown.size(); ++i) heading += Printf("%9s %8s ", "Share%", "Samples");
  if (instructions.empty()) {
    out << "# cannot disassemble: " << why << "; sampled "
        << (function.file_offsets ? "file offsets" : "addresses") << ":\n";
    out << heading << " Address\n";
    for (const auto& [address, counts] : at)
      out << CountColumns(shown, &counts.first, &counts.second, profile.total_period)
          << Printf(" %#llx\n", static_cast<unsigned long long>(address));
    out << '\n';
    return;
  }
  out << Printf("# range: %#llx-%#llx (addresses in the binary), %zu instructions\n",
                static_cast<unsigned long long>(start), static_cast<unsigned long long>(end),
                instructions.size());
  out << heading << " Address           Instruction\n";
  const std::string indent(heading.size(), ' ');
  std::string file;
  uint32_t line = 0;
  for (const Instruction& insn : instructions) {
    if (!insn.file.empty() && (insn.file != file || insn.line != line)) {
      file = insn.file;
      line = insn.line;
      out << indent << " " << file << ':' << line;
      if (const std::string* text = sources.Line(file, line)) {
        size_t first = text->find_first_not_of(" \t");
        if (first != std::string::npos) out << ":  " << text->substr(first);
      }
      out << '\n';
    }
    auto it = at.find(insn.address);
    out << (it == at.end()
                ? CountColumns(shown, nullptr, nullptr, profile.total_period)
                : CountColumns(shown, &it->second.first, &it->second.second, profile.total_period))
        << Printf(" %16llx: %s %s\n", static_cast<unsigned long long>(insn.address),
                  insn.mnemonic.c_str(), insn.operands.c_str());
  }
  bool any_outside = false;
  for (uint64_t s : outside_samples) any_outside |= s != 0;
  if (any_outside)
    out << CountColumns(shown, &outside_period, &outside_samples, profile.total_period)
        << " (pcs outside the symbol's range)\n";
  out << '\n';
}

}  // namespace

Status RenderAnnotation(const InstructionProfile& profile, const std::string& query,
                        const ModuleOpener& open_module, std::ostream& out) {
  if (profile.functions.empty()) return Error("no sample fell in a function named '" + query + "'");
  SourceFiles sources;
  for (const FunctionSamples& function : profile.functions)
    AnnotateOne(profile, function, open_module, sources, out);
  return {};
}

}  // namespace tprof
