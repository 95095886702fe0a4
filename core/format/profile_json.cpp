#include "core/format/profile_json.h"

#include <optional>
#include <string>

#include "core/base/build_id.h"
#include "core/base/visible_text.h"

namespace tprof {
namespace {

using nlohmann::json;

// JSON holds UTF-8 only, and a name may be any bytes (an event named in a perf.data file, a
// command line): such a string goes in as its visible form under `key`, what an older reader
// shows, and byte for byte in hex under `key`_hex, which a reader prefers. A UTF-8 string is
// written as it is, alone.
// The bytes of `hex`; nothing when it is not hex (a damaged file: the visible form stands).
std::optional<std::string> FromHex(const std::string& hex) {
  if (hex.size() % 2) return std::nullopt;
  auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  std::string out;
  for (size_t i = 0; i < hex.size(); i += 2) {
    const int high = digit(hex[i]), low = digit(hex[i + 1]);
    if (high < 0 || low < 0) return std::nullopt;
    out.push_back(static_cast<char>(high * 16 + low));
  }
  return out;
}

void PutBytes(json& j, const std::string& key, const std::string& bytes) {
  if (IsWellFormedUtf8(bytes)) {
    j[key] = bytes;
    return;
  }
  j[key] = VisibleText(bytes);
  j[key + "_hex"] = BuildIdHex(bytes);  // lowercase hex of any bytes
}

void PutBytes(json& j, const std::string& key, const std::vector<std::string>& list) {
  json visible = json::array(), hex = json::array();
  bool any = false;
  for (const std::string& bytes : list) {
    const bool utf8 = IsWellFormedUtf8(bytes);
    any |= !utf8;
    visible.push_back(utf8 ? bytes : VisibleText(bytes));
    hex.push_back(BuildIdHex(bytes));
  }
  j[key] = std::move(visible);
  if (any) j[key + "_hex"] = std::move(hex);
}

// Reads an optional field: a missing key keeps the default (older writers), a key of the wrong
// type is an error.
template <typename T>
void Get(const json& j, const char* key, T& out) {
  auto it = j.find(key);
  if (it != j.end() && !it->is_null()) it->get_to(out);
}

void GetBytes(const json& j, const std::string& key, std::string& out) {
  Get(j, key.c_str(), out);
  if (auto it = j.find(key + "_hex"); it != j.end() && it->is_string())
    if (auto bytes = FromHex(it->get<std::string>())) out = std::move(*bytes);
}

void GetBytes(const json& j, const std::string& key, std::vector<std::string>& out) {
  Get(j, key.c_str(), out);
  auto it = j.find(key + "_hex");
  if (it == j.end() || !it->is_array() || it->size() != out.size()) return;
  for (size_t i = 0; i < out.size(); ++i)
    if ((*it)[i].is_string())
      if (auto bytes = FromHex((*it)[i].get<std::string>())) out[i] = std::move(*bytes);
}

}  // namespace

json MetadataToJson(const Metadata& m) {
  json j{
      {"tprof_version", m.tprof_version},
      {"kernel_release", m.kernel_release},
      {"architecture", m.architecture},
      {"cpu_count", m.cpu_count},
      {"cpu",
       {{"vendor", m.cpu.vendor},
        {"family", m.cpu.family},
        {"model", m.cpu.model},
        {"stepping", m.cpu.stepping},
        {"midr", m.cpu.midr},
        {"model_name", m.cpu.model_name}}},
      {"clock", m.clock},
      {"start_time_unix_ns", m.start_time_unix_ns},
      {"start_timestamp", m.start_timestamp},
      {"duration_ns", m.duration_ns},
      {"source", m.source},
      {"off_cpu_summed", m.off_cpu_summed},
  };
  PutBytes(j, "command_line", m.command_line);
  PutBytes(j, "hostname", m.hostname);
  return j;
}

Result<Metadata> MetadataFromJson(const json& j) {
  if (!j.is_object()) return Error("metadata is not a JSON object");
  Metadata m;
  try {
    Get(j, "tprof_version", m.tprof_version);
    GetBytes(j, "command_line", m.command_line);
    GetBytes(j, "hostname", m.hostname);
    Get(j, "kernel_release", m.kernel_release);
    Get(j, "architecture", m.architecture);
    Get(j, "cpu_count", m.cpu_count);
    if (auto it = j.find("cpu"); it != j.end() && it->is_object()) {
      Get(*it, "vendor", m.cpu.vendor);
      Get(*it, "family", m.cpu.family);
      Get(*it, "model", m.cpu.model);
      Get(*it, "stepping", m.cpu.stepping);
      Get(*it, "midr", m.cpu.midr);
      Get(*it, "model_name", m.cpu.model_name);
    }
    Get(j, "clock", m.clock);
    Get(j, "start_time_unix_ns", m.start_time_unix_ns);
    Get(j, "start_timestamp", m.start_timestamp);
    Get(j, "duration_ns", m.duration_ns);
    Get(j, "source", m.source);
    Get(j, "off_cpu_summed", m.off_cpu_summed);
  } catch (const json::exception& e) {
    return Error(std::string("metadata: ") + e.what());
  }
  return m;
}

json EventsToJson(const std::vector<EventDesc>& events) {
  json out = json::array();
  for (const EventDesc& e : events) {
    json item{
        {"type", e.type},
        {"config", e.config},
        {"config1", e.config1},
        {"config2", e.config2},
        {"use_frequency", e.use_frequency},
        {"period_or_frequency", e.period_or_frequency},
        {"sample_type", e.sample_type},
        {"read_format", e.read_format},
        {"branch_sample_type", e.branch_sample_type},
        {"sample_regs_user", e.sample_regs_user},
        {"sample_stack_user", e.sample_stack_user},
        {"exclude_callchain_user", e.exclude_callchain_user},
        {"hf_sample_period", e.hf_sample_period},
        {"group_leader", e.group_leader},
        {"group_members", e.group_members},
        {"exclude_user", e.exclude_user},
        {"exclude_kernel", e.exclude_kernel},
        {"precise_ip", e.precise_ip},
    };
    PutBytes(item, "name", e.name);
    out.push_back(std::move(item));
  }
  return out;
}

Result<std::vector<EventDesc>> EventsFromJson(const json& j) {
  if (!j.is_array()) return Error("event descriptors are not a JSON array");
  std::vector<EventDesc> events;
  try {
    for (const json& item : j) {
      if (!item.is_object()) return Error("event descriptor is not a JSON object");
      EventDesc e;
      GetBytes(item, "name", e.name);
      Get(item, "type", e.type);
      Get(item, "config", e.config);
      Get(item, "config1", e.config1);
      Get(item, "config2", e.config2);
      Get(item, "use_frequency", e.use_frequency);
      Get(item, "period_or_frequency", e.period_or_frequency);
      Get(item, "sample_type", e.sample_type);
      Get(item, "read_format", e.read_format);
      Get(item, "branch_sample_type", e.branch_sample_type);
      Get(item, "sample_regs_user", e.sample_regs_user);
      Get(item, "sample_stack_user", e.sample_stack_user);
      // Before -g copied stacks to mend its chains, only --call-graph dwarf copied them.
      e.exclude_callchain_user = e.sample_stack_user != 0;
      Get(item, "exclude_callchain_user", e.exclude_callchain_user);
      Get(item, "hf_sample_period", e.hf_sample_period);
      Get(item, "group_leader", e.group_leader);
      Get(item, "group_members", e.group_members);
      Get(item, "exclude_user", e.exclude_user);
      Get(item, "exclude_kernel", e.exclude_kernel);
      Get(item, "precise_ip", e.precise_ip);
      events.push_back(std::move(e));
    }
  } catch (const json::exception& e) {
    return Error(std::string("event descriptors: ") + e.what());
  }
  for (const EventDesc& e : events) {
    if (e.group_leader >= static_cast<int32_t>(events.size()))
      return Error("event descriptor '" + e.name + "' names a group leader that does not exist");
    for (uint32_t m : e.group_members)
      if (m >= events.size())
        return Error("event descriptor '" + e.name + "' names a group member that does not exist");
  }
  return events;
}

}  // namespace tprof
