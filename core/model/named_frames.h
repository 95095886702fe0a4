// Frames that arrive already named (perf script text, folded stacks) have no addresses a
// symbolizer could use. Each distinct (module, function) pair gets a made-up address here, the
// samples carry those addresses, and this table resolves them back: the rest of tprof sees
// ordinary samples and an ordinary FrameResolver. It is part of the model, not of the text
// parsers, because renderers that reproduce another tool's naming (stackcollapse-perf.pl) read
// the printed frames it keeps.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "core/base/append_only_table.h"
#include "core/model/frame_resolver.h"

namespace tprof {

// A frame as `perf script` printed it: what renderers that reproduce another tool's naming
// (stackcollapse-perf.pl) need beyond the resolved frame.
struct PrintedFrame {
  enum class Origin {
    kCallchainLine,  // a line of its own below the sample line
    kSampleLine,     // on the sample line itself (-F ip,sym without a callchain)
    kNone,           // the sample printed no frame; this one stands in for it
  };
  Origin origin = Origin::kCallchainLine;
  std::string symbol;  // as printed, without the "+0x" offset: "[unknown]", "f(int)", "" (none)
  std::string module_path;  // between the parentheses: "/usr/lib/libc.so.6", "[kernel.kallsyms]"
  // The printed address. NamedFrameTable keeps it for "[unknown]" symbols only (the one place
  // stackcollapse-perf shows it): a named frame is one entry whatever its addresses.
  uint64_t address = 0;
  bool has_address = false;
  bool kernel = false;  // judged from the module (see IsKernelModule in perf_script_parser.h)

  bool operator==(const PrintedFrame&) const = default;
};

class NamedFrameTable : public FrameResolver {
 public:
  // The text ended inside a sample, without the blank line that closes one:
  // stackcollapse-perf.pl never emits such a last sample; tprof's own views keep it.
  bool final_sample_unterminated = false;

  // Made-up addresses start here: low, user-space, and never 0.
  static constexpr uint64_t kBase = 0x10000;
  static constexpr uint64_t kStride = 16;

  // The address standing for this frame; the same pair always gets the same address.
  uint64_t Intern(std::string_view module, std::string_view function) {
    auto key = std::make_pair(std::string(module), std::string(function));
    auto it = index_.find(key);
    if (it != index_.end()) return it->second;
    // The middle of the frame's slot: callchain walkers look up return addresses at
    // address - 1 (the call instruction), which must still name the same frame.
    uint64_t address = kBase + kStride * frames_.size() + kStride / 2;
    ResolvedFrame frame;
    frame.module = key.first.empty() ? "[unknown]" : key.first;
    frame.function = key.second.empty() ? "[unknown]" : key.second;
    frame.resolved = frame.function != "[unknown]";
    if (!Append(std::move(frame), nullptr)) return 0;
    index_.emplace(std::move(key), address);
    return address;
  }

  // The address standing for a frame perf script printed. The printed details are kept (see
  // Printed); unknown symbols are told apart by their address, so that each keeps it.
  uint64_t InternPrinted(const PrintedFrame& printed, std::string_view module,
                         std::string_view function) {
    PrintedKey key{printed, std::string(module), std::string(function)};
    if (printed.symbol != "[unknown]" && !printed.symbol.empty()) {
      key.printed.address = 0;
      key.printed.has_address = false;
    }
    auto it = printed_index_.find(key);
    if (it != printed_index_.end()) return it->second;
    uint64_t address = kBase + kStride * frames_.size() + kStride / 2;
    ResolvedFrame frame;
    frame.module = module.empty() ? "[unknown]" : std::string(module);
    frame.function = function.empty() ? "[unknown]" : std::string(function);
    frame.resolved = frame.function != "[unknown]";
    if (!Append(std::move(frame), std::make_unique<PrintedFrame>(key.printed))) return 0;
    printed_index_.emplace(std::move(key), address);
    return address;
  }

  // How perf script printed the frame at this made-up address (or just below it); null for
  // frames that were not printed by perf script (folded stacks) and for other addresses.
  const PrintedFrame* Printed(uint64_t address) const {
    if (address < kBase || (address - kBase) / kStride >= frames_.size()) return nullptr;
    return printed_[(address - kBase) / kStride].get();
  }

  // A made-up address names its frame, and so do the bytes just below it: call-graph views
  // look callers up at the return address minus one, the call instruction.
  ResolvedFrame Resolve(const Mapping*, uint64_t address) override {
    if (address >= kBase && (address - kBase) / kStride < frames_.size())
      return frames_[(address - kBase) / kStride];
    ResolvedFrame unknown;
    unknown.module = unknown.function = "[unknown]";
    return unknown;
  }

  size_t size() const { return frames_.size(); }

 private:
  struct PrintedKey {
    PrintedFrame printed;
    std::string module, function;
    auto Tie() const {
      return std::tie(printed.origin, printed.symbol, printed.module_path, printed.address,
                      printed.has_address, printed.kernel, module, function);
    }
    bool operator<(const PrintedKey& o) const { return Tie() < o.Tie(); }
  };
  std::map<std::pair<std::string, std::string>, uint64_t> index_;
  std::map<PrintedKey, uint64_t> printed_index_;
  // A frame's entries: its printed form first, then the frame, whose count publishes both. False
  // when the table is full (an address of 0 then stands for the frame: "[unknown]").
  bool Append(ResolvedFrame frame, std::unique_ptr<PrintedFrame> printed) {
    if (frames_.size() >= AppendOnlyTable<ResolvedFrame>::kCapacity) return false;
    printed_.push_back(std::move(printed));
    return frames_.push_back(std::move(frame));
  }
  // Append-only: a source may name frames while it replays (perf script text), and visitors on
  // other threads resolve the frames of the samples they were handed meanwhile.
  AppendOnlyTable<ResolvedFrame> frames_;
  AppendOnlyTable<std::unique_ptr<PrintedFrame>> printed_;  // by frame; null when not printed
};

}  // namespace tprof
