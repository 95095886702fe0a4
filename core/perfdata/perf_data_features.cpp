#include "core/perfdata/perf_data_features.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace tprof {
namespace {

using perf_data::ByteOrder;

// Bounds-checked reader over a feature payload; the first failed read sticks.
class FeatureCursor {
 public:
  FeatureCursor(std::string_view bytes, ByteOrder order) : bytes_(bytes), order_(order) {}
  uint32_t U32() { return Fixed<uint32_t>(); }
  uint64_t U64() { return Fixed<uint64_t>(); }
  // perf_header_string: u32 length (padded, including the NUL), then the bytes.
  std::string String() {
    uint32_t len = U32();
    if (!ok_ || len > bytes_.size() - pos_) {
      ok_ = false;
      return {};
    }
    std::string_view raw = bytes_.substr(pos_, len);
    pos_ += len;
    return std::string(raw.substr(0, raw.find('\0')));
  }
  std::string_view Bytes(size_t n) {
    if (!ok_ || n > bytes_.size() - pos_) {
      ok_ = false;
      return {};
    }
    std::string_view v = bytes_.substr(pos_, n);
    pos_ += n;
    return v;
  }
  // A NUL-terminated string (tracing data's layout, not perf_header_string's).
  std::string_view CString() {
    size_t end = bytes_.find('\0', pos_);
    if (!ok_ || end == std::string_view::npos) {
      ok_ = false;
      return {};
    }
    std::string_view s = bytes_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return s;
  }
  // For payloads that state their own byte order after a prefix (tracing data).
  void set_order(ByteOrder order) { order_ = order; }
  bool ok() const { return ok_; }
  size_t remaining() const { return bytes_.size() - pos_; }

 private:
  template <typename T>
  T Fixed() {
    if (!ok_ || sizeof(T) > bytes_.size() - pos_) {
      ok_ = false;
      return 0;
    }
    T v = order_.Read<T>(reinterpret_cast<const uint8_t*>(bytes_.data()) + pos_);
    pos_ += sizeof(T);
    return v;
  }

  std::string_view bytes_;
  ByteOrder order_;
  size_t pos_ = 0;
  bool ok_ = true;
};

uint8_t ReverseBits(uint8_t b) {
  b = static_cast<uint8_t>((b & 0xf0) >> 4 | (b & 0x0f) << 4);
  b = static_cast<uint8_t>((b & 0xcc) >> 2 | (b & 0x33) << 2);
  return static_cast<uint8_t>((b & 0xaa) >> 1 | (b & 0x55) << 1);
}

Status MalformedFeature(const char* what) {
  return Error(std::string("malformed ") + what + " feature");
}

}  // namespace

uint32_t PerfAttrSize(std::string_view bytes, ByteOrder order) {
  if (bytes.size() < perf_data::attr::kSize + 4) return 0;
  uint32_t size =
      order.U32(reinterpret_cast<const uint8_t*>(bytes.data()) + perf_data::attr::kSize);
  return size ? size : static_cast<uint32_t>(perf_data::attr::kSizeVer0);
}

PerfAttr ParsePerfAttr(std::string_view bytes, ByteOrder order) {
  namespace a = perf_data::attr;
  // Work on a zero-padded copy so every field of the newest ABI this reader knows can be read.
  uint8_t buf[a::kSampleRegsIntr + 8] = {};
  if (!bytes.empty()) std::memcpy(buf, bytes.data(), std::min(bytes.size(), sizeof buf));
  PerfAttr attr;
  attr.type = order.U32(buf + a::kType);
  attr.size = order.U32(buf + a::kSize);
  attr.config = order.U64(buf + a::kConfig);
  attr.sample_period = order.U64(buf + a::kSamplePeriod);
  attr.sample_type = order.U64(buf + a::kSampleType);
  attr.read_format = order.U64(buf + a::kReadFormat);
  if (order.swapped()) {
    // A big-endian compiler allocates bitfields from the most significant bit: perf swaps the
    // flags word by reversing the bits of each byte, not the byte order.
    uint8_t flags[8];
    for (int i = 0; i < 8; ++i) flags[i] = ReverseBits(buf[a::kFlags + i]);
    std::memcpy(&attr.flags, flags, 8);
  } else {
    std::memcpy(&attr.flags, buf + a::kFlags, 8);
  }
  attr.config1 = order.U64(buf + a::kConfig1);
  attr.config2 = order.U64(buf + a::kConfig2);
  attr.branch_sample_type = order.U64(buf + a::kBranchSampleType);
  attr.sample_regs_user = order.U64(buf + a::kSampleRegsUser);
  attr.sample_stack_user = order.U32(buf + a::kSampleStackUser);
  attr.sample_regs_intr = order.U64(buf + a::kSampleRegsIntr);
  return attr;
}

std::string DefaultPerfEventName(const PerfAttr& attr) {
  static const char* const kHardware[] = {"cycles",
                                          "instructions",
                                          "cache-references",
                                          "cache-misses",
                                          "branches",
                                          "branch-misses",
                                          "bus-cycles",
                                          "stalled-cycles-frontend",
                                          "stalled-cycles-backend",
                                          "ref-cycles"};
  static const char* const kSoftware[] = {
      "cpu-clock",        "task-clock",   "page-faults",  "context-switches",
      "cpu-migrations",   "minor-faults", "major-faults", "alignment-faults",
      "emulation-faults", "dummy",        "bpf-output",   "cgroup-switches"};
  char buf[64];
  if (attr.type == 0 && attr.config < std::size(kHardware)) return kHardware[attr.config];
  if (attr.type == 1 && attr.config < std::size(kSoftware)) return kSoftware[attr.config];
  if (attr.type == 4) {
    std::snprintf(buf, sizeof buf, "raw 0x%llx", static_cast<unsigned long long>(attr.config));
    return buf;
  }
  std::snprintf(buf, sizeof buf, "unknown %u/0x%llx", attr.type,
                static_cast<unsigned long long>(attr.config));
  return buf;
}

Status ParsePerfBuildIdEvent(uint16_t misc, std::string_view body, ByteOrder order,
                             PerfFeatures* out) {
  // pid (s32), build_id[24] (20 bytes, then the size when misc says so), filename.
  (void)order;
  if (body.size() < 4 + 24) return MalformedFeature("build-id");
  std::string_view id = body.substr(4, 20);
  if (misc & perf_data::kMiscBuildIdSize) {
    id = id.substr(0, std::min<size_t>(static_cast<uint8_t>(body[4 + 20]), 20));
  } else {
    // Older perf pads every build-id to 20 bytes with zeros and records no size; an 8-byte
    // --build-id=fast or md5 id is recovered by dropping the padding.
    while (!id.empty() && id.back() == '\0') id.remove_suffix(1);
  }
  std::string_view name = body.substr(4 + 24);
  name = name.substr(0, name.find('\0'));
  if (!name.empty() && !id.empty()) out->build_ids[std::string(name)] = std::string(id);
  return Status::Ok();
}

namespace {

// "name: sched_switch" / "ID: 91" in an event's format text.
std::string_view FormatField(std::string_view format, std::string_view key) {
  for (size_t at = format.find(key); at != std::string_view::npos; at = format.find(key, at + 1)) {
    if (at != 0 && format[at - 1] != '\n') continue;
    std::string_view value = format.substr(at + key.size());
    value = value.substr(0, value.find('\n'));
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    return value;
  }
  return {};
}

}  // namespace

void ParseTracingData(std::string_view data, PerfFeatures* out) {
  FeatureCursor c(data, ByteOrder());
  if (c.Bytes(3) != std::string_view("\027\010\104", 3) || c.Bytes(7) != "tracing") return;
  c.CString();  // version
  // One byte says whether the data is big-endian; the numbers after it follow it.
  const std::string_view big = c.Bytes(1);
  c.set_order(
      ByteOrder((!big.empty() && big[0] != 0) != (std::endian::native == std::endian::big)));
  c.Bytes(1);  // sizeof(long)
  c.U32();     // page size
  for (const char* block : {"header_page", "header_event"}) {
    if (c.CString() != block) return;
    c.Bytes(c.U64());
  }
  for (uint32_t n = c.U32(); c.ok() && n > 0; --n) c.Bytes(c.U64());  // ftrace formats
  for (uint32_t systems = c.U32(); c.ok() && systems > 0; --systems) {
    std::string_view system = c.CString();
    for (uint32_t n = c.U32(); c.ok() && n > 0; --n) {
      std::string_view format = c.Bytes(c.U64());
      std::string_view name = FormatField(format, "name:");
      std::string_view id = FormatField(format, "ID:");
      uint64_t value = 0;
      auto [end, ec] = std::from_chars(id.data(), id.data() + id.size(), value);
      if (c.ok() && !name.empty() && ec == std::errc() && end == id.data() + id.size())
        out->tracepoint_names[value] = std::string(system) + ":" + std::string(name);
    }
  }
}

Status ParsePerfFeature(uint32_t feature, std::string_view bytes, ByteOrder order,
                        PerfFeatures* out) {
  namespace pd = perf_data;
  FeatureCursor c(bytes, order);
  switch (feature) {
    case pd::kFeatHostname:
      out->hostname = c.String();
      break;
    case pd::kFeatTracingData:
      ParseTracingData(bytes, out);
      break;
    case pd::kFeatOsRelease:
      out->os_release = c.String();
      break;
    case pd::kFeatVersion:
      out->perf_version = c.String();
      break;
    case pd::kFeatArch:
      out->arch = c.String();
      break;
    case pd::kFeatCpuDesc:
      out->cpu_desc = c.String();
      break;
    case pd::kFeatCpuId:
      out->cpu_id = c.String();
      break;
    case pd::kFeatNrCpus:
      out->cpus_available = c.U32();
      out->cpus_online = c.U32();
      break;
    case pd::kFeatCmdline: {
      uint32_t n = c.U32();
      if (n > c.remaining() / 4) return MalformedFeature("cmdline");
      out->cmdline.clear();
      for (uint32_t i = 0; i < n && c.ok(); ++i) out->cmdline.push_back(c.String());
      break;
    }
    case pd::kFeatEventDesc: {
      uint32_t n = c.U32();
      uint32_t attr_size = c.U32();
      if (!c.ok() || attr_size < 8 || n > c.remaining() / attr_size)
        return MalformedFeature("event_desc");
      out->event_desc.clear();
      for (uint32_t i = 0; i < n && c.ok(); ++i) {
        PerfEventDescEntry e;
        e.attr = ParsePerfAttr(c.Bytes(attr_size), order);
        uint32_t nr_ids = c.U32();
        e.name = c.String();
        if (!c.ok() || nr_ids > c.remaining() / 8) return MalformedFeature("event_desc");
        for (uint32_t k = 0; k < nr_ids; ++k) e.ids.push_back(c.U64());
        out->event_desc.push_back(std::move(e));
      }
      break;
    }
    case pd::kFeatGroupDesc: {
      uint32_t n = c.U32();
      if (n > c.remaining() / 12) return MalformedFeature("group_desc");
      out->groups.clear();
      for (uint32_t i = 0; i < n && c.ok(); ++i) {
        PerfGroupDesc g;
        g.name = c.String();
        g.leader = c.U32();
        g.members = c.U32();
        out->groups.push_back(std::move(g));
      }
      break;
    }
    case pd::kFeatSampleTime:
      out->first_sample_time = c.U64();
      out->last_sample_time = c.U64();
      break;
    case pd::kFeatSimpleperfMetaInfo: {
      // key\0value\0 ... to the end of the section.
      std::string_view rest = bytes;
      while (!rest.empty()) {
        const size_t key_end = rest.find('\0');
        if (key_end == std::string_view::npos) return MalformedFeature("simpleperf meta_info");
        const size_t value_end = rest.find('\0', key_end + 1);
        if (value_end == std::string_view::npos) return MalformedFeature("simpleperf meta_info");
        out->simpleperf_meta[std::string(rest.substr(0, key_end))] =
            std::string(rest.substr(key_end + 1, value_end - key_end - 1));
        rest.remove_prefix(value_end + 1);
      }
      return Status::Ok();
    }
    case pd::kFeatBuildId: {
      // A sequence of build_id events, each with its own header.
      while (c.remaining() >= pd::kRecordHeaderSize) {
        std::string_view header = c.Bytes(pd::kRecordHeaderSize);
        auto h = pd::ReadRecordHeader(reinterpret_cast<const uint8_t*>(header.data()), order);
        if (h.size < pd::kRecordHeaderSize || h.size - pd::kRecordHeaderSize > c.remaining())
          return MalformedFeature("build_id");
        TPROF_RETURN_IF_ERROR(
            ParsePerfBuildIdEvent(h.misc, c.Bytes(h.size - pd::kRecordHeaderSize), order, out));
      }
      break;
    }
    default:
      return Status::Ok();  // known to perf, not needed here, or newer than this reader
  }
  if (!c.ok()) return Error("truncated feature section " + std::to_string(feature));
  return Status::Ok();
}

void ApplyPerfFeatures(const PerfFeatures& f, Metadata* m) {
  m->hostname = f.hostname;
  m->kernel_release = f.os_release;
  m->architecture = f.arch;
  m->cpu_count = f.cpus_available ? f.cpus_available : f.cpus_online;
  m->cpu.model_name = f.cpu_desc;
  if (!f.cmdline.empty()) m->command_line = f.cmdline;
  // x86 CPUID: "vendor,family,model,stepping"; Arm: a MIDR in hex.
  if (!f.cpu_id.empty()) {
    std::vector<std::string> parts;
    std::stringstream in(f.cpu_id);
    for (std::string part; std::getline(in, part, ',');) parts.push_back(part);
    if (parts.size() >= 4) {
      m->cpu.vendor = parts[0];
      m->cpu.family = static_cast<uint32_t>(std::strtoul(parts[1].c_str(), nullptr, 10));
      m->cpu.model = static_cast<uint32_t>(std::strtoul(parts[2].c_str(), nullptr, 10));
      m->cpu.stepping = static_cast<uint32_t>(std::strtoul(parts[3].c_str(), nullptr, 10));
    } else if (f.cpu_id.rfind("0x", 0) == 0) {
      m->cpu.vendor = "ARM";
      m->cpu.midr = std::strtoull(f.cpu_id.c_str(), nullptr, 16);
    }
  }
  if (f.first_sample_time && f.last_sample_time >= f.first_sample_time) {
    m->start_timestamp = f.first_sample_time;
    m->duration_ns = f.last_sample_time - f.first_sample_time;
  }
  m->clock = "perf_clock";
  m->source = f.perf_version.empty() ? "perf.data import"
                                     : "perf.data import (perf " + f.perf_version + ")";
}

std::string SimpleperfEventName(const PerfFeatures& features, uint32_t type, uint64_t config) {
  auto it = features.simpleperf_meta.find("event_type_info");
  if (it == features.simpleperf_meta.end()) return "";
  std::string_view lines = it->second;
  while (!lines.empty()) {
    const size_t end = std::min(lines.find('\n'), lines.size());
    const std::string_view line = lines.substr(0, end);
    lines.remove_prefix(std::min(end + 1, lines.size()));
    // name,type,config: the name may hold commas of its own, the numbers do not.
    const size_t second = line.rfind(',');
    if (second == std::string_view::npos || second == 0) continue;
    const size_t first = line.rfind(',', second - 1);
    if (first == std::string_view::npos) continue;
    const std::string type_text(line.substr(first + 1, second - first - 1));
    const std::string config_text(line.substr(second + 1));
    char* type_end = nullptr;
    char* config_end = nullptr;
    const unsigned long long t = std::strtoull(type_text.c_str(), &type_end, 10);
    const unsigned long long c = std::strtoull(config_text.c_str(), &config_end, 10);
    if (type_text.empty() || config_text.empty() || *type_end || *config_end) continue;
    if (t == type && c == config) return std::string(line.substr(0, first));
  }
  return "";
}

}  // namespace tprof
