#include "report/pprof_exporter.h"

#include <zlib.h>

#include <algorithm>
#include <map>
#include <unordered_map>

#include "core/analysis/function_attribution.h"
#include "core/base/build_id.h"
#include "core/base/file_paths.h"
#include "core/base/version.h"
#include "core/base/visible_text.h"
#include "core/model/event_unit.h"
#include "report/protobuf_writer.h"

namespace tprof {
namespace {

// Field numbers of profile.proto.
namespace field {
namespace profile {
constexpr uint32_t kSampleType = 1, kSample = 2, kMapping = 3, kLocation = 4, kFunction = 5,
                   kStringTable = 6, kTimeNanos = 9, kDurationNanos = 10, kPeriodType = 11,
                   kPeriod = 12, kComment = 13;
}
namespace value_type {
constexpr uint32_t kType = 1, kUnit = 2;
}
namespace sample {
constexpr uint32_t kLocationId = 1, kValue = 2, kLabel = 3;
}
namespace label {
constexpr uint32_t kKey = 1, kStr = 2, kNum = 3;
}
namespace mapping {
constexpr uint32_t kId = 1, kMemoryStart = 2, kMemoryLimit = 3, kFileOffset = 4, kFilename = 5,
                   kBuildId = 6, kHasFunctions = 7, kHasFilenames = 8, kHasLineNumbers = 9,
                   kHasInlineFrames = 10;
}
namespace location {
constexpr uint32_t kId = 1, kMappingId = 2, kAddress = 3, kLine = 4;
}
namespace line {
constexpr uint32_t kFunctionId = 1, kLine = 2;
}
namespace function {
constexpr uint32_t kId = 1, kName = 2, kSystemName = 3, kFilename = 4;
}
}  // namespace field

// profile.proto's strings are proto3 `string`s, which must be UTF-8 (protoc and the other
// strict parsers refuse the file otherwise): a name's other bytes are written as every output
// writes them (core/base/visible_text.h). Two names that differ only there stay two strings.
class PprofStringTable {
 public:
  PprofStringTable() { Index(""); }  // index 0 is the empty string, as the format requires
  uint64_t Index(const std::string& s) {
    auto [it, inserted] = index_.try_emplace(s, strings_.size());
    if (inserted) strings_.push_back(IsWellFormedUtf8(s) ? s : VisibleText(s));
    return it->second;
  }
  const std::vector<std::string>& strings() const { return strings_; }

 private:
  std::unordered_map<std::string, uint64_t> index_;
  std::vector<std::string> strings_;
};

struct MappingFacts {
  bool functions = false, filenames = false, lines = false, inlines = false;
};

// pprof takes the first mapping for the main binary (its name and build-id head every view):
// the recorded command's executable when it is mapped, else the mapping where the most period
// was sampled.
size_t MainMapping(const Metadata& metadata, const StackProfile& profile) {
  if (!metadata.command_line.empty()) {
    const std::string program = BaseName(metadata.command_line[0]);
    for (size_t i = 0; i < profile.mappings.size(); ++i)
      if (BaseName(profile.mappings[i].filename) == program) return i;
  }
  std::vector<uint64_t> period(profile.mappings.size());
  for (const Stack& stack : profile.stacks) {
    if (stack.locations.empty()) continue;
    uint32_t mapping = profile.locations[stack.locations[0]].mapping;
    if (mapping == kNoMapping) continue;
    for (uint64_t p : stack.period) period[mapping] += p;
  }
  return period.empty() ? 0 : std::max_element(period.begin(), period.end()) - period.begin();
}

}  // namespace

std::string PeriodUnit(const EventDesc& event) {
  return UnitOfEvent(event.name) == EventUnit::kNanoseconds ? "nanoseconds" : "count";
}

std::string EncodePprof(const Metadata& metadata, const StackProfile& profile) {
  PprofStringTable strings;
  ProtobufWriter out, message, sub;
  const size_t events = profile.events.size();

  for (const EventDesc& event : profile.events) {
    message.Clear();
    message.Varint(field::value_type::kType, strings.Index(event.name));
    message.Varint(field::value_type::kUnit, strings.Index(PeriodUnit(event)));
    out.Message(field::profile::kSampleType, message);
  }

  // Samples: location ids leaf first, one value per event, the thread as labels.
  const uint64_t pid_key = strings.Index("pid"), tid_key = strings.Index("tid"),
                 comm_key = strings.Index("comm");
  std::vector<uint64_t> ids;
  for (const Stack& stack : profile.stacks) {
    message.Clear();
    ids.clear();
    for (uint32_t location : stack.locations) ids.push_back(uint64_t{location} + 1);
    message.PackedVarints(field::sample::kLocationId, ids);
    message.PackedVarints(field::sample::kValue, stack.period);
    for (auto [key, num] : {std::pair{pid_key, stack.pid}, std::pair{tid_key, stack.tid}}) {
      sub.Clear();
      sub.Varint(field::label::kKey, key);
      sub.Varint(field::label::kNum, num);
      message.Message(field::sample::kLabel, sub);
    }
    sub.Clear();
    sub.Varint(field::label::kKey, comm_key);
    sub.Varint(field::label::kStr, strings.Index(stack.comm));
    message.Message(field::sample::kLabel, sub);
    out.Message(field::profile::kSample, message);
  }

  // Locations and the functions their lines name.
  std::map<std::tuple<std::string, std::string, std::string>, uint64_t> function_ids;
  std::vector<std::tuple<std::string, std::string, std::string>> functions;
  auto function_id = [&](const std::string& name, const std::string& mangled,
                         const std::string& file) {
    auto [it, inserted] = function_ids.try_emplace({name, mangled, file}, functions.size() + 1);
    if (inserted) functions.emplace_back(name, mangled, file);
    return it->second;
  };
  const FunctionAttribution attribution(InlineMode::kInnermost);
  std::vector<MappingFacts> facts(profile.mappings.size());
  // Mapping ids: the main binary's is 1, the others follow in their order.
  const size_t main_mapping = MainMapping(metadata, profile);
  std::vector<size_t> mapping_order;
  std::vector<uint64_t> mapping_id(profile.mappings.size());
  if (!profile.mappings.empty()) mapping_order.push_back(main_mapping);
  for (size_t i = 0; i < profile.mappings.size(); ++i)
    if (i != main_mapping) mapping_order.push_back(i);
  for (size_t i = 0; i < mapping_order.size(); ++i) mapping_id[mapping_order[i]] = i + 1;
  for (size_t i = 0; i < profile.locations.size(); ++i) {
    const StackLocation& location = profile.locations[i];
    const ResolvedFrame& frame = location.frame;
    message.Clear();
    message.Varint(field::location::kId, i + 1);
    if (location.mapping != kNoMapping) {
      message.Varint(field::location::kMappingId, mapping_id[location.mapping]);
      MappingFacts& f = facts[location.mapping];
      f.functions |= frame.resolved;
      f.filenames |= !frame.file().empty();
      f.lines |= frame.line() != 0;
      f.inlines |= frame.frames.size() > 1;
    }
    message.Varint(field::location::kAddress, location.address);
    // One line per function at the address, innermost first as Location.line wants, named as
    // every other view names them.
    attribution.ForEachLevel(frame, [&](uint32_t level) {
      const SourceFrame* source = level < frame.frames.size() ? &frame.frames[level] : nullptr;
      sub.Clear();
      sub.Varint(field::line::kFunctionId,
                 function_id(attribution.Name(frame, level), attribution.Mangled(frame, level),
                             source ? source->file : std::string()));
      if (source) sub.Varint(field::line::kLine, source->line);
      message.Message(field::location::kLine, sub);
    });
    out.Message(field::profile::kLocation, message);
  }
  for (size_t i = 0; i < functions.size(); ++i) {
    const auto& [name, mangled, file] = functions[i];
    message.Clear();
    message.Varint(field::function::kId, i + 1);
    message.Varint(field::function::kName, strings.Index(name));
    message.Varint(field::function::kSystemName, strings.Index(mangled.empty() ? name : mangled));
    message.Varint(field::function::kFilename, strings.Index(file));
    out.Message(field::profile::kFunction, message);
  }

  for (size_t i : mapping_order) {
    const StackMapping& mapping = profile.mappings[i];
    message.Clear();
    message.Varint(field::mapping::kId, mapping_id[i]);
    message.Varint(field::mapping::kMemoryStart, mapping.start);
    message.Varint(field::mapping::kMemoryLimit, mapping.end);
    message.Varint(field::mapping::kFileOffset, mapping.file_offset);
    message.Varint(field::mapping::kFilename, strings.Index(mapping.filename));
    message.Varint(field::mapping::kBuildId, strings.Index(BuildIdHex(mapping.build_id)));
    message.Varint(field::mapping::kHasFunctions, facts[i].functions);
    message.Varint(field::mapping::kHasFilenames, facts[i].filenames);
    message.Varint(field::mapping::kHasLineNumbers, facts[i].lines);
    message.Varint(field::mapping::kHasInlineFrames, facts[i].inlines);
    out.Message(field::profile::kMapping, message);
  }

  out.Varint(field::profile::kTimeNanos, metadata.start_time_unix_ns);
  out.Varint(field::profile::kDurationNanos, metadata.duration_ns);
  if (events > 0) {
    // The sampling period of the first event: fixed, or the mean one of a frequency.
    const EventDesc& first = profile.events[0];
    message.Clear();
    message.Varint(field::value_type::kType, strings.Index(first.name));
    message.Varint(field::value_type::kUnit, strings.Index(PeriodUnit(first)));
    out.Message(field::profile::kPeriodType, message);
    uint64_t period = first.period_or_frequency;
    if (first.use_frequency)
      period = profile.total_samples[0] ? profile.total_period[0] / profile.total_samples[0] : 0;
    out.Varint(field::profile::kPeriod, period);
  }
  std::string command;
  for (const std::string& arg : metadata.command_line)
    command += (command.empty() ? "" : " ") + arg;
  std::vector<uint64_t> comments = {
      strings.Index(std::string("tprof ") + kVersion + ", from " + metadata.source)};
  if (!command.empty()) comments.push_back(strings.Index("command: " + command));
  for (uint64_t c : comments) out.Varint(field::profile::kComment, c);
  // The string table last: every index above has been handed out by now.
  for (const std::string& s : strings.strings()) out.Bytes(field::profile::kStringTable, s);
  return out.Take();
}

Result<std::string> ExportPprof(const Metadata& metadata, const StackProfile& profile) {
  std::string raw = EncodePprof(metadata, profile);
  z_stream z{};
  // windowBits 15 + 16: a gzip wrapper rather than zlib's.
  if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    return Error("zlib: cannot start compression");
  std::string gz(deflateBound(&z, raw.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(raw.data());
  z.avail_in = static_cast<uInt>(raw.size());
  z.next_out = reinterpret_cast<Bytef*>(gz.data());
  z.avail_out = static_cast<uInt>(gz.size());
  int rc = deflate(&z, Z_FINISH);
  gz.resize(z.total_out);
  deflateEnd(&z);
  if (rc != Z_STREAM_END) return Error("zlib: compression failed");
  return gz;
}

}  // namespace tprof
