#include "core/metrics/metric_table.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>

#include "core/metrics/embedded_metric_tables.h"
#include "core/model/metric_expression.h"

namespace tprof {
namespace {

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// "0x11" (the files' way of writing codes, MIDR fields and x86 models), at most `max`; throws on
// anything else, so that a table with a bad number is refused with its origin.
uint64_t Hex(const std::string& text, uint64_t max = UINT64_MAX) {
  const bool digits = text.size() > 2 && text.size() <= 18 && text.starts_with("0x") &&
                      text.find_first_not_of("0123456789abcdefABCDEF", 2) == std::string::npos;
  if (!digits) throw std::invalid_argument("not a hex number (0x...): " + text);
  const uint64_t value = std::stoull(text.substr(2), nullptr, 16);
  if (value > max) throw std::invalid_argument(text + " is out of range");
  return value;
}

}  // namespace

const MetricEvent* MetricTable::FindEvent(const std::string& event_name) const {
  const std::string lower = Lower(event_name);
  for (const MetricEvent& e : events)
    if (Lower(e.name) == lower) return &e;
  for (const MetricEvent& e : events)
    for (const std::string& alias : e.aliases)
      if (Lower(alias) == lower) return &e;
  return nullptr;
}

const MetricEvent* MetricTable::FindEventByCode(uint64_t code) const {
  for (const MetricEvent& e : events)
    if (e.code == code) return &e;
  return nullptr;
}

std::vector<std::string> MetricTable::GroupNames() const {
  std::vector<std::string> names;
  for (const Metric& m : metrics)
    for (const std::string& g : m.groups)
      if (std::find(names.begin(), names.end(), g) == names.end()) names.push_back(g);
  return names;
}

Result<std::vector<const Metric*>> MetricTable::Select(const std::string& selection) const {
  std::vector<const Metric*> selected;
  std::stringstream in(selection);
  std::string word;
  while (std::getline(in, word, ',')) {
    bool found = false;
    for (const Metric& m : metrics) {
      bool match = Lower(m.name) == Lower(word);
      for (const std::string& g : m.groups) match |= Lower(g) == Lower(word);
      if (match) {
        found = true;
        if (std::find(selected.begin(), selected.end(), &m) == selected.end())
          selected.push_back(&m);
      }
    }
    if (!found && !no_levels_reason.empty() && (Lower(word) == "l1" || Lower(word) == "l2"))
      return Error(no_levels_reason + "; metric groups for " + name + ": " + [&] {
        std::string known;
        for (const std::string& g : GroupNames()) known += (known.empty() ? "" : ", ") + g;
        return known;
      }());
    if (!found) {
      std::string known;
      for (const std::string& g : GroupNames()) known += (known.empty() ? "" : ", ") + g;
      return Error("no metric or metric group '" + word + "' for " + name + " (groups: " + known +
                   ")");
    }
  }
  if (selected.empty()) return Error("no metrics selected");
  return selected;
}

const std::vector<MetricTable>& BuiltinMetricTables() {
  static const std::vector<MetricTable> tables = [] {
    std::vector<MetricTable> parsed;
    for (const EmbeddedMetricTable& file : kEmbeddedMetricTables) {
      auto table = ParseMetricTable(file.text, std::string(file.name));
      // Every test run parses the files (MetricTableFiles in test/unit/topdown_test.cpp): one
      // that fails here was never built into a release.
      if (!table.ok()) {
        std::fprintf(stderr, "tprof: built-in metric table %s: %s\n",
                     std::string(file.name).c_str(), table.error().message().c_str());
        std::abort();
      }
      parsed.push_back(std::move(table).value());
    }
    return parsed;
  }();
  return tables;
}

Result<const MetricTable*> FindMetricTable(const std::string& key,
                                           const std::vector<MetricTable>& tables) {
  std::string k = Lower(key);
  if (k.rfind("0x", 0) == 0) {
    uint64_t midr = std::strtoull(k.c_str(), nullptr, 16);
    uint32_t implementer = static_cast<uint32_t>((midr >> 24) & 0xff);
    uint32_t part = static_cast<uint32_t>((midr >> 4) & 0xfff);
    uint32_t revision = static_cast<uint32_t>(((midr >> 20) & 0xf) << 4 | (midr & 0xf));
    for (const MetricTable& t : tables)
      if (t.midr_implementer == implementer && t.midr_part == part && revision >= t.min_revision &&
          revision <= t.max_revision)
        return &t;
    return Error("no metric table for MIDR " + key + " (implementer 0x" +
                 (std::stringstream() << std::hex << implementer).str() + ", part 0x" +
                 (std::stringstream() << std::hex << part).str() + "); see 'tprof list cpus'");
  }
  for (const MetricTable& t : tables)
    if (t.name == k || t.name == "neoverse-" + k) return &t;
  return Error("unknown CPU '" + key + "'; see 'tprof list cpus'");
}

Result<const MetricTable*> TableForCpu(const CpuDescription& cpu,
                                       const std::vector<MetricTable>& tables) {
  if (cpu.midr) {
    char midr[32];
    std::snprintf(midr, sizeof midr, "0x%llx", static_cast<unsigned long long>(cpu.midr));
    return FindMetricTable(midr, tables);
  }
  for (const MetricTable& t : tables)
    if (!t.x86_vendor.empty() && t.x86_vendor == cpu.vendor && t.x86_family == cpu.family &&
        std::find(t.x86_models.begin(), t.x86_models.end(), cpu.model) != t.x86_models.end())
      return &t;
  return Error("no metric table for this CPU (" +
               (cpu.model_name.empty() ? cpu.vendor : cpu.model_name) + ", family " +
               std::to_string(cpu.family) + " model " + std::to_string(cpu.model) +
               "); name one with --cpu (see 'tprof list cpus')");
}

Result<MetricTable> ParseMetricTable(std::string_view text, const std::string& origin) {
  auto json = nlohmann::ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) return Error(origin + ": not a JSON document");
  MetricTable t;
  try {
    // Arm's own files name their objects in no particular order: read in name order, as before
    // they were read through an ordered map, so that -M's columns stay where they were.
    const bool arm_spec = !json.contains("tprof");
    auto members = [&](const nlohmann::ordered_json& object) {
      std::vector<std::pair<std::string, const nlohmann::ordered_json*>> out;
      for (const auto& [key, value] : object.items()) out.push_back({key, &value});
      if (arm_spec)
        std::sort(out.begin(), out.end(),
                  [](const auto& a, const auto& b) { return a.first < b.first; });
      return out;
    };
    const auto& product = json.at("product_configuration");
    if (arm_spec) {
      t.title = product.at("product_name").get<std::string>() + " r" +
                product.value("major_revision", "0") + "p" + product.value("minor_revision", "0");
      t.name = Lower(product.at("product_name").get<std::string>());
      std::replace(t.name.begin(), t.name.end(), ' ', '-');
      t.source = origin;
    } else {
      t.title = product.at("product_name").get<std::string>();
    }
    if (product.contains("num_slots")) {
      const auto& slots = product.at("num_slots");
      if (!slots.is_number_unsigned() || slots.get<uint64_t>() > 64)
        throw std::invalid_argument("num_slots is not a count of slots: " + slots.dump());
      t.slots = slots.get<uint32_t>();
    }
    if (product.contains("part_num")) {
      t.midr_implementer = static_cast<uint32_t>(Hex(product.value("implementer", "0x41"), 0xff));
      t.midr_part = static_cast<uint32_t>(Hex(product.at("part_num").get<std::string>(), 0xfff));
    }
    for (const auto& [name, event] : members(json.at("events"))) {
      MetricEvent e{name, Hex(event->at("code").get<std::string>())};
      if (event->contains("aliases"))
        e.aliases = event->at("aliases").get<std::vector<std::string>>();
      t.events.push_back(std::move(e));
    }
    for (const auto& [name, metric] : members(json.at("metrics"))) {
      Metric m;
      m.name = name;
      m.formula = metric->at("formula").get<std::string>();
      std::string units = metric->value("units", "");
      m.unit = units.rfind("percent", 0) == 0 ? "%" : units;
      t.metrics.push_back(std::move(m));
    }
    // Arm's files may list a group member they define no formula for (it is left out); in
    // tprof's own tables that is a typo that would quietly drop a metric from -M.
    std::string unknown_member;
    auto add_group = [&](const std::string& metric, const std::string& group) {
      bool found = false;
      for (Metric& m : t.metrics)
        if (m.name == metric) m.groups.push_back(group), found = true;
      if (!found && unknown_member.empty()) unknown_member = metric + " (group " + group + ")";
    };
    const auto& groups = json.at("groups").at("metrics");
    for (const auto& [group, body] : members(groups))
      for (const auto& metric : body->at("metrics")) add_group(metric.get<std::string>(), group);
    if (arm_spec) {
      // Stage 1 of Arm's top-down methodology is what -M l1 selects.
      const auto& stage1 =
          json.at("methodologies").at("topdown_methodology").at("metric_grouping").at("stage_1");
      for (const auto& group : stage1)
        for (const auto& [g, body] : members(groups))
          if (g == group.get<std::string>())
            for (const auto& metric : body->at("metrics"))
              add_group(metric.get<std::string>(), "l1");
      return t;
    }
    if (!unknown_member.empty())
      return Error(origin + ": groups name a metric the table does not define: " + unknown_member);
    const auto& own = json.at("tprof");
    for (const auto& [key, value] : own.items())
      if (key != "name" && key != "source" && key != "revisions" && key != "x86" &&
          key != "event_groups" && key != "fixed_events" && key != "fixed_leads" &&
          key != "no_levels_reason")
        return Error(origin + ": unknown key tprof." + key);
    t.name = own.at("name").get<std::string>();
    t.source = own.at("source").get<std::string>();
    if (own.contains("revisions")) {
      // MIDR variant << 4 | revision, first and last covered.
      const auto& revisions = own.at("revisions");
      if (!revisions.is_array() || revisions.size() != 2)
        return Error(origin + ": tprof.revisions is not [first, last]");
      t.min_revision = static_cast<uint32_t>(Hex(revisions.at(0).get<std::string>(), 0xff));
      t.max_revision = static_cast<uint32_t>(Hex(revisions.at(1).get<std::string>(), 0xff));
      if (t.min_revision > t.max_revision)
        return Error(origin + ": tprof.revisions runs backwards");
    }
    if (own.contains("x86")) {
      const auto& x86 = own.at("x86");
      t.x86_vendor = x86.at("vendor").get<std::string>();
      t.x86_family = static_cast<uint32_t>(Hex(x86.at("family").get<std::string>(), 0xffff));
      for (const auto& model : x86.at("models"))
        t.x86_models.push_back(static_cast<uint32_t>(Hex(model.get<std::string>(), 0xffff)));
    }
    t.event_groups = own.at("event_groups").get<std::vector<std::vector<std::string>>>();
    t.fixed_events = own.value("fixed_events", std::vector<std::string>{});
    t.fixed_leads = own.value("fixed_leads", false);
    t.no_levels_reason = own.value("no_levels_reason", "");
    // A table that names an event it does not define would fail only when a CPU uses it.
    for (const auto& group : t.event_groups)
      for (const std::string& event : group)
        if (!t.FindEvent(event))
          return Error(origin + ": event group names unknown event " + event);
    for (const std::string& event : t.fixed_events)
      if (!t.FindEvent(event)) return Error(origin + ": fixed_events names unknown event " + event);
    for (const Metric& m : t.metrics) {
      auto formula = MetricExpression::Parse(m.formula);
      if (!formula.ok())
        return Error(origin + ": metric " + m.name + ": " + formula.error().message());
      for (const std::string& event : formula->variables())
        if (!t.FindEvent(event))
          return Error(origin + ": metric " + m.name + " names unknown event " + event);
    }
  } catch (const std::exception& e) {
    return Error(origin + ": not a metric table in the shape of Arm's telemetry specifications (" +
                 e.what() + ")");
  }
  return t;
}

Result<MetricTable> LoadArmTelemetrySpec(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error("cannot read " + path + ": " + std::strerror(errno));
  std::stringstream text;
  text << in.rdbuf();
  return ParseMetricTable(text.str(), path);
}

}  // namespace tprof
