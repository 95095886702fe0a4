#include "report/annotate_report.h"

#include <algorithm>
#include <cstdio>

#include "report/printf.h"

namespace tprof {
namespace {

std::string HexBytes(const std::string& bytes) {
  std::string hex;
  for (unsigned char c : bytes) hex += Printf("%02x", c);
  return hex;
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

void AnnotateOne(const InstructionProfile& profile, const FunctionAnnotation& annotation,
                 std::ostream& out) {
  const FunctionSamples& function = *annotation.function;
  const std::vector<size_t>& shown = annotation.shown_events;
  const CodeListing& listing = annotation.listing;
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

  std::string heading;
  for (size_t i = 0; i < shown.size(); ++i) heading += Printf("%9s %8s ", "Share%", "Samples");
  if (listing.instructions.empty()) {
    out << "# cannot disassemble: " << listing.unavailable << "; sampled "
        << (function.file_offsets ? "file offsets" : "addresses") << ":\n";
    out << heading << " Address\n";
    for (const auto& [address, counts] : annotation.counts)
      out << CountColumns(shown, &counts.period, &counts.samples, profile.total_period)
          << Printf(" %#llx\n", static_cast<unsigned long long>(address));
    out << '\n';
    return;
  }
  out << Printf("# range: %#llx-%#llx (addresses in the binary), %zu instructions\n",
                static_cast<unsigned long long>(listing.start),
                static_cast<unsigned long long>(listing.end), listing.instructions.size());
  out << heading << " Address           Instruction\n";
  const std::string indent(heading.size(), ' ');
  std::string file;
  uint32_t line = 0;
  for (const ListedInstruction& insn : listing.instructions) {
    if (!insn.file.empty() && (insn.file != file || insn.line != line)) {
      file = insn.file;
      line = insn.line;
      out << indent << " " << file << ':' << line;
      if (!insn.source_text.empty()) out << ":  " << insn.source_text;
      out << '\n';
    }
    auto it = annotation.counts.find(insn.address);
    out << (it == annotation.counts.end()
                ? CountColumns(shown, nullptr, nullptr, profile.total_period)
                : CountColumns(shown, &it->second.period, &it->second.samples,
                               profile.total_period))
        << Printf(" %16llx: %s %s\n", static_cast<unsigned long long>(insn.address),
                  insn.mnemonic.c_str(), insn.operands.c_str());
  }
  if (std::any_of(annotation.outside.samples.begin(), annotation.outside.samples.end(),
                  [](uint64_t s) { return s != 0; }))
    out << CountColumns(shown, &annotation.outside.period, &annotation.outside.samples,
                        profile.total_period)
        << " (pcs outside the symbol's range)\n";
  out << '\n';
}

}  // namespace

void RenderAnnotation(const InstructionProfile& profile,
                      const std::vector<FunctionAnnotation>& annotations, std::ostream& out) {
  for (const FunctionAnnotation& annotation : annotations) AnnotateOne(profile, annotation, out);
}

}  // namespace tprof
