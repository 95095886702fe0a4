#include "report/flamegraph_html.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "core/base/absl_view.h"
#include "core/base/visible_text.h"
#include "report/flamegraph_template.h"  // generated from report/flamegraph.html.in
#include "report/printf.h"

namespace tprof {
namespace {

// A JSON string that is also safe inside <script>: no "</script>", no "<!--".
void AppendJsonString(std::string& out, const std::string& text) {
  nlohmann::json json = text;
  std::string quoted = DumpVisibleJson(json);
  for (char c : quoted) {
    if (c == '<')
      out += "\\u003c";
    else if (c == '>')
      out += "\\u003e";
    else
      out.push_back(c);
  }
}

void AppendNumber(std::string& out, double value) {
  char buffer[32];
  if (std::isfinite(value) && value == std::floor(value) && std::fabs(value) < 9e15) {
    std::snprintf(buffer, sizeof buffer, "%.0f", value);
  } else if (std::isfinite(value)) {
    std::snprintf(buffer, sizeof buffer, "%.6g", value);
  } else {
    std::snprintf(buffer, sizeof buffer, "null");
  }
  out += buffer;
}

const char* KindName(FrameKind kind) {
  switch (kind) {
    case FrameKind::kUser:
      return "u";
    case FrameKind::kKernel:
      return "k";
    case FrameKind::kInlined:
      return "i";
    case FrameKind::kRoot:
      return "r";
  }
  return "u";
}

// Interns strings into a table; index 0.. in order of first use. The strings (the tree's nodes'
// names, the input's reasons) outlive the table: it keeps views of them, not copies.
class PageStringTable {
 public:
  uint32_t Intern(std::string_view s) {
    auto [it, added] = index_.try_emplace(AbslView(s), static_cast<uint32_t>(strings_.size()));
    if (added) strings_.push_back(s);
    return it->second;
  }
  bool empty() const { return strings_.empty(); }
  void AppendJson(std::string& out) const {
    out.push_back('[');
    for (size_t i = 0; i < strings_.size(); ++i) {
      if (i) out.push_back(',');
      AppendJsonString(out, std::string(strings_[i]));
    }
    out.push_back(']');
  }

 private:
  // Every node's name and module are interned: absl's own view (core/base/absl_view.h).
  absl::flat_hash_map<absl::string_view, uint32_t> index_;
  std::vector<std::string_view> strings_;
};

// The columns of the page's data, one entry per node in preorder.
struct PageColumns {
  std::vector<uint32_t> name, module, depth;
  std::string kind;  // one letter per node
  std::vector<uint64_t> total, self, samples;
  std::vector<const CallNode*> nodes;
};

uint64_t Flatten(const CallNode& node, uint32_t depth, size_t event, PageStringTable& names,
                 PageStringTable& modules, PageColumns& c) {
  const uint64_t total = node.total.size() > event ? node.total[event] : 0;
  const size_t at = c.nodes.size();
  c.nodes.push_back(&node);
  c.name.push_back(names.Intern(node.name));
  c.module.push_back(modules.Intern(node.module));
  c.depth.push_back(depth);
  c.kind += KindName(node.kind);
  c.total.push_back(total);
  c.self.push_back(node.self.size() > event ? node.self[event] : 0);
  c.samples.push_back(0);
  std::vector<const CallNode*> children;
  children.reserve(node.children.size());
  for (const auto& child : node.children)
    if (child->total.size() > event && child->total[event] > 0) children.push_back(child.get());
  // Alphabetical, as FlameGraph does: the layout of a name does not depend on sample order.
  std::sort(children.begin(), children.end(), [](const CallNode* a, const CallNode* b) {
    if (a->name != b->name) return a->name < b->name;
    if (a->kind != b->kind) return a->kind < b->kind;
    return a->module < b->module;
  });
  uint64_t samples = node.self_samples.size() > event ? node.self_samples[event] : 0;
  for (const CallNode* child : children)
    samples += Flatten(*child, depth + 1, event, names, modules, c);
  c.samples[at] = samples;
  return samples;
}

template <typename T>
void AppendArray(std::string& out, const char* key, const std::vector<T>& values) {
  out += ",\"";
  out += key;
  out += "\":[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out.push_back(',');
    AppendUint(out, values[i]);
  }
  out.push_back(']');
}

void AppendScale(std::string& out, const FlameColorScale& scale, const char* key = "scale") {
  out += ",\"";
  out += key;
  out += "\":{\"title\":";
  AppendJsonString(out, scale.title);
  out += ",\"min\":";
  AppendNumber(out, scale.min);
  out += ",\"max\":";
  AppendNumber(out, scale.max);
  for (const auto* list : {&scale.stops, &scale.marks}) {
    out += list == &scale.stops ? ",\"stops\":[" : ",\"marks\":[";
    for (size_t i = 0; i < list->size(); ++i) {
      if (i) out.push_back(',');
      out.push_back('[');
      AppendNumber(out, (*list)[i].first);
      out.push_back(',');
      AppendJsonString(out, (*list)[i].second);
      out.push_back(']');
    }
    out.push_back(']');
  }
  out += ",\"noValue\":";
  AppendJsonString(out, scale.no_value_rule);
  out += ",\"step\":";
  AppendNumber(out, scale.step);
  out.push_back('}');
}

// Numbers separated by commas, after a comma unless `first`.
void AppendUints(std::string& out, std::initializer_list<uint64_t> values, bool first) {
  for (uint64_t v : values) {
    if (!first) out.push_back(',');
    first = false;
    AppendUint(out, v);
  }
}

// "timeline": the buckets, the lanes (bucket, weight pairs flattened), the frames' cells (node
// index, bucket, weight, samples flattened) and the metric track.
void AppendTimeline(std::string& out, const FlameGraphInput& input, const PageColumns& c) {
  const FlameTimeline& t = *input.timeline;
  absl::flat_hash_map<const CallNode*, uint32_t> index;
  index.reserve(c.nodes.size());
  for (uint32_t i = 0; i < c.nodes.size(); ++i) index.emplace(c.nodes[i], i);
  out += ",\"timeline\":{\"bucketNs\":";
  AppendUint(out, t.bucket_ns);
  out += ",\"buckets\":";
  AppendUint(out, t.buckets);
  out += ",\"samples\":";
  AppendUint(out, t.samples);
  out += ",\"samplesBefore\":";
  AppendUint(out, t.samples_before);
  // The --time range the page's samples were kept in: [from, until), null where open. Written
  // to the last bit (six digits named a range one sample short of what the page held), since the
  // page names its ranges by these ends for report --time to read again.
  auto exact = [&out](const std::optional<double>& seconds) {
    if (!seconds || !std::isfinite(*seconds)) {
      out += "null";
      return;
    }
    char buffer[40];
    std::snprintf(buffer, sizeof buffer, "%.17g", *seconds);
    out += buffer;
  };
  out += ",\"kept\":[";
  exact(t.kept_from_s);
  out.push_back(',');
  exact(t.kept_until_s);
  out.push_back(']');
  out += ",\"lanes\":[";
  for (size_t l = 0; l < t.lanes.size(); ++l) {
    const FlameTimeline::Lane& lane = t.lanes[l];
    out += l ? ",{\"pid\":" : "{\"pid\":";
    AppendUint(out, lane.pid);
    out += ",\"tid\":";
    AppendUint(out, lane.tid);
    out += ",\"name\":";
    AppendJsonString(out, lane.name);
    out += ",\"total\":";
    AppendUint(out, lane.total);
    out += ",\"on\":[";
    for (size_t i = 0; i < lane.on_cpu.size(); ++i)
      AppendUints(out, {lane.on_cpu[i].first, lane.on_cpu[i].second}, i == 0);
    out += "],\"off\":[";  // bucket, weight, reason (an index into "offReasons")
    for (size_t i = 0; i < lane.off_cpu.size(); ++i) {
      const FlameTimeline::Lane::OffCpu& off = lane.off_cpu[i];
      AppendUints(out, {off.bucket, off.weight, static_cast<uint64_t>(off.reason)}, i == 0);
    }
    out.push_back(']');
    out.push_back('}');
  }
  out += "],\"offReasons\":[";
  for (size_t r = 0; r < kOffCpuReasons; ++r) {
    if (r) out.push_back(',');
    AppendJsonString(out, OffCpuReasonName(static_cast<OffCpuReason>(r)));
  }
  out += "],\"cells\":[";
  bool first = true;
  for (const FlameTimeline::Cell& cell : t.cells) {
    auto it = index.find(cell.node);
    if (it == index.end()) continue;
    AppendUints(out, {it->second, cell.bucket, cell.weight, cell.samples}, first);
    first = false;
  }
  out.push_back(']');
  if (!t.metric.empty()) {
    out += ",\"metric\":{\"name\":";
    AppendJsonString(out, t.metric_name);
    out += ",\"unit\":";
    AppendJsonString(out, t.metric_unit);
    PageStringTable reasons;
    std::string value = "[", half = "[", uncertain, reason_of = "[";
    for (size_t b = 0; b < t.metric.size(); ++b) {
      const MetricValue& m = t.metric[b];
      const char* sep = b ? "," : "";
      value += sep;
      half += sep;
      reason_of += sep;
      if (m.value)
        AppendNumber(value, *m.value);
      else
        value += "null";
      if (m.value && m.half_width)
        AppendNumber(half, *m.half_width);
      else
        half += "null";
      uncertain.push_back(m.low_confidence || m.bias ? '1' : '0');
      if (m.bias)
        AppendUint(reason_of, reasons.Intern(m.bias->reason));
      else
        reason_of += "null";
    }
    out += ",\"value\":" + value + "],\"half\":" + half + "],\"uncertain\":\"" + uncertain +
           "\",\"reasonOf\":" + reason_of + "],\"reasons\":";
    reasons.AppendJson(out);
    out.push_back('}');
  }
  if (input.range_delta_scale) AppendScale(out, *input.range_delta_scale, "deltaScale");
  out.push_back('}');
}

}  // namespace

std::string FlameGraphJson(const FlameGraphInput& input) {
  std::string out;
  if (!input.root) return "{}";
  PageStringTable names, modules;
  PageColumns c;
  Flatten(*input.root, 0, input.event, names, modules, c);

  out.reserve(c.nodes.size() * 40);
  out += "{\"version\":1,\"title\":";
  AppendJsonString(out, input.title);
  out += ",\"subtitle\":";
  AppendJsonString(out, input.subtitle);
  out += ",\"event\":";
  AppendJsonString(out, input.event_name);
  if (input.unit == EventUnit::kNanoseconds) out += ",\"unit\":\"ns\"";
  out += ",\"valueName\":";
  AppendJsonString(out, input.value_name.empty() ? input.event_name : input.value_name);
  if (input.diff) {
    out += ",\"diff\":{\"widthSide\":";
    out += input.diff->widths_new ? "\"new\"" : "\"old\"";
    out += ",\"oldTotal\":";
    AppendNumber(out, input.diff->old_total);
    out += ",\"newTotal\":";
    AppendNumber(out, input.diff->new_total);
    out.push_back('}');
  }
  out += ",\"icicle\":";
  out += input.icicle ? "true" : "false";
  out += ",\"names\":";
  names.AppendJson(out);
  out += ",\"modules\":";
  modules.AppendJson(out);
  out += ",\"kind\":";
  AppendJsonString(out, c.kind);
  AppendArray(out, "name", c.name);
  AppendArray(out, "module", c.module);
  AppendArray(out, "depth", c.depth);
  AppendArray(out, "total", c.total);
  AppendArray(out, "self", c.self);
  AppendArray(out, "samples", c.samples);
  if (input.scale) AppendScale(out, *input.scale);
  if (!input.ratio_label.empty()) {
    out += ",\"ratioLabel\":";
    AppendJsonString(out, input.ratio_label);
  }
  const bool any_details = !input.details.empty();
  if (any_details) {
    out += ",\"value\":[";
    for (size_t i = 0; i < c.nodes.size(); ++i) {
      if (i) out.push_back(',');
      auto it = input.details.find(c.nodes[i]);
      if (it != input.details.end() && it->second.color_value)
        AppendNumber(out, *it->second.color_value);
      else
        out += "null";
    }
    out += "],\"halfWidth\":[";
    for (size_t i = 0; i < c.nodes.size(); ++i) {
      if (i) out.push_back(',');
      auto it = input.details.find(c.nodes[i]);
      if (it != input.details.end() && it->second.color_value && it->second.half_width)
        AppendNumber(out, *it->second.half_width);
      else
        out += "null";
    }
    out += "],\"columnNames\":[";
    for (size_t k = 0; k < input.detail_columns.size(); ++k) {
      if (k) out.push_back(',');
      AppendJsonString(out, input.detail_columns[k]);
    }
    out += "],\"columns\":[";
    for (size_t k = 0; k < input.detail_columns.size(); ++k) {
      if (k) out.push_back(',');
      out.push_back('[');
      for (size_t i = 0; i < c.nodes.size(); ++i) {
        if (i) out.push_back(',');
        auto it = input.details.find(c.nodes[i]);
        if (it != input.details.end() && k < it->second.columns.size())
          AppendNumber(out, it->second.columns[k]);
        else
          out += "null";
      }
      out.push_back(']');
    }
    out.push_back(']');
    if (input.detail_columns_in_unit) out += ",\"columnsInUnit\":true";
    if (!input.alt_color_mode_label.empty()) {
      out += ",\"value2\":[";
      for (size_t i = 0; i < c.nodes.size(); ++i) {
        if (i) out.push_back(',');
        auto it = input.details.find(c.nodes[i]);
        if (it != input.details.end() && it->second.alt_color_value)
          AppendNumber(out, *it->second.alt_color_value);
        else
          out += "null";
      }
      out += "],\"colorModes\":[";
      AppendJsonString(out, input.color_mode_label);
      out.push_back(',');
      AppendJsonString(out, input.alt_color_mode_label);
      out.push_back(']');
    }
    if (!input.mark_label.empty()) {
      out += ",\"markLabel\":";
      AppendJsonString(out, input.mark_label);
      out += ",\"marked\":\"";
      for (const CallNode* node : c.nodes) {
        auto it = input.details.find(node);
        out.push_back(it != input.details.end() && it->second.marked ? '1' : '0');
      }
      out.push_back('"');
      // The reasons, each written once, and per frame with one the index of its reason.
      PageStringTable reasons;
      std::string reason_of;
      for (size_t i = 0; i < c.nodes.size(); ++i) {
        auto it = input.details.find(c.nodes[i]);
        if (it == input.details.end() || it->second.reason.empty()) continue;
        reason_of += (reason_of.empty() ? "\"" : ",\"") + std::to_string(i) +
                     "\":" + std::to_string(reasons.Intern(it->second.reason));
      }
      if (!reasons.empty()) {
        out += ",\"reasons\":";
        reasons.AppendJson(out);
        out += ",\"reasonOf\":{" + reason_of + "}";
      }
    }
  }
  if (!input.show_samples) out += ",\"noSamples\":true";
  if (input.timeline) AppendTimeline(out, input, c);
  out.push_back('}');
  return out;
}

void RenderFlameGraphHtml(const FlameGraphInput& input, std::ostream& out) {
  constexpr std::string_view kPlaceholder = "/*@FLAME_DATA@*/null";
  const std::string_view page = kFlameGraphTemplate;
  const size_t at = page.find(kPlaceholder);
  if (at == std::string_view::npos) {  // the template is ours: this is a build defect
    out << page;
    return;
  }
  out << page.substr(0, at) << FlameGraphJson(input) << page.substr(at + kPlaceholder.size());
}

namespace {

const char* RatioName(FrameRatioKind kind) {
  switch (kind) {
    case FrameRatioKind::kIpc:
      return "IPC";
    case FrameRatioKind::kCpi:
      return "CPI";
    case FrameRatioKind::kStall:
      return "stall share";
  }
  return "";
}

}  // namespace

FlameColorScale RatioColorScale(FrameRatioKind kind, const std::string& numerator_event,
                                const std::string& denominator_event, uint64_t min_samples) {
  FlameColorScale scale;
  const std::string ratio = RatioName(kind);
  scale.title = ratio + " (" + numerator_event + " / " + denominator_event + "), fixed scale";
  // Red for frames that wait (low IPC), through amber at IPC 1, to blue for frames that retire
  // several instructions a cycle; CPI and the stall share use the same colours for the same
  // meaning, so "red" always means "stalled".
  const std::string red = "#c0182b", amber = "#f2b33d", green = "#8cc45a", blue = "#2166ac";
  switch (kind) {
    case FrameRatioKind::kIpc:
      scale.min = 0;
      scale.max = 4;
      scale.stops = {{0, red}, {1, amber}, {2, green}, {4, blue}};
      scale.marks = {{1, "IPC = 1"}};
      scale.step = 0.5;
      break;
    case FrameRatioKind::kCpi:
      scale.min = 0;
      scale.max = 4;
      scale.stops = {{0, blue}, {0.5, green}, {1, amber}, {4, red}};
      scale.marks = {{1, "CPI = 1"}};
      scale.step = 0.5;
      break;
    case FrameRatioKind::kStall:
      scale.min = 0;
      scale.max = 1;
      scale.stops = {{0, blue}, {0.3, green}, {0.5, amber}, {1, red}};
      scale.marks = {{0.5, "50% stalled"}};
      scale.step = 0.125;
      break;
  }
  scale.no_value_rule = "grey: fewer than " + std::to_string(min_samples) + " samples of " +
                        numerator_event + " or of " + denominator_event + " through the frame";
  return scale;
}

void ColorFramesByRatio(FlameGraphInput& input,
                        const std::unordered_map<const CallNode*, FrameRatio>& ratios,
                        FrameRatioKind kind, const std::string& numerator_event,
                        const std::string& denominator_event, uint64_t min_samples) {
  input.scale = RatioColorScale(kind, numerator_event, denominator_event, min_samples);
  input.ratio_label = RatioName(kind);
  input.detail_columns = {denominator_event, numerator_event, denominator_event + " samples",
                          numerator_event + " samples"};
  input.details.clear();
  input.details.reserve(ratios.size());
  char step[32];
  std::snprintf(step, sizeof step, "%g", input.scale->step);
  input.mark_label = std::string("uncertain: the 95% interval of ") + input.ratio_label +
                     " is wider than one legend step (\u00b1" + step +
                     "), or the value may be off beyond it (the frame's tooltip says why)";
  for (const auto& [node, r] : ratios) {
    FlameFrameDetail d;
    if (r.reliable) {
      d.color_value = r.value;
      d.half_width = r.half_width;
      d.marked = !r.half_width || *r.half_width > input.scale->step;
      if (!r.bias.empty()) {
        d.marked = true;
        d.reason = r.bias;
      }
    }
    d.columns = {static_cast<double>(r.denominator), static_cast<double>(r.numerator),
                 static_cast<double>(r.denominator_samples),
                 static_cast<double>(r.numerator_samples)};
    input.details.emplace(node, std::move(d));
  }
}

void ColorFramesByMetric(FlameGraphInput& input,
                         const std::unordered_map<const CallNode*, FrameMetric>& metrics,
                         const MetricColumn& column, const std::vector<std::string>& event_names,
                         uint64_t min_samples) {
  double largest = 0;
  for (const auto& [node, m] : metrics)
    if (m.reliable) largest = std::max(largest, *m.value.value);
  // 0 .. a round top: 1, 2 or 5 times a power of ten, at or above the largest frame.
  double top = 1;
  if (largest > 0) {
    const double power = std::pow(10.0, std::floor(std::log10(largest)));
    top = 10 * power;
    for (double f : {1.0, 2.0, 5.0})
      if (f * power >= largest) {
        top = f * power;
        break;
      }
  }
  FlameColorScale scale;
  scale.title = column.name + " (" + column.formula + "), 0 to " + Printf("%g", top);
  scale.min = 0;
  scale.max = top;
  scale.stops = {{0, "#440154"},
                 {0.25 * top, "#3b528b"},
                 {0.5 * top, "#21918c"},
                 {0.75 * top, "#5ec962"},
                 {top, "#fde725"}};
  scale.step = top / 10;
  std::string events;
  for (const std::string& e : event_names) events += (events.empty() ? "" : " or of ") + e;
  scale.no_value_rule = "grey: fewer than " + std::to_string(min_samples) + " samples of " +
                        events + " through the frame, or no value";
  input.scale = scale;
  input.ratio_label = column.name;
  input.detail_columns.clear();
  for (const std::string& e : event_names) input.detail_columns.push_back(e);
  for (const std::string& e : event_names) input.detail_columns.push_back(e + " samples");
  input.mark_label = "uncertain: the 95% interval of " + column.name +
                     " is wider than one legend step (\u00b1" + Printf("%g", scale.step) +
                     "), or the value may be off beyond it (the frame's tooltip says why)";
  input.details.clear();
  input.details.reserve(metrics.size());
  for (const auto& [node, m] : metrics) {
    FlameFrameDetail d;
    if (m.reliable) {
      d.color_value = m.value.value;
      d.half_width = m.value.half_width;
      d.marked = !m.value.half_width || *m.value.half_width > scale.step;
      if (m.value.bias) {
        d.marked = true;
        d.reason = m.value.bias->reason;
      }
    }
    for (uint64_t p : m.periods) d.columns.push_back(static_cast<double>(p));
    for (uint64_t n : m.samples) d.columns.push_back(static_cast<double>(n));
    input.details.emplace(node, std::move(d));
  }
}

void ColorFramesByOffCpuShare(FlameGraphInput& input, size_t on_cpu, size_t off_cpu) {
  FlameColorScale scale;
  scale.title = "off-CPU share of the frame's wall time: off-CPU / (on-CPU + off-CPU), 0 to 100 %";
  scale.min = 0;
  scale.max = 100;
  // Warm where the frame computes, blue where it waits, as Gregg's hot/cold flame graphs.
  scale.stops = {{0, "#e0542e"}, {50, "#b07aa1"}, {100, "#3a6fc4"}};
  scale.marks = {{0, "on-CPU"}, {50, "50 %"}, {100, "off-CPU"}};
  input.scale = scale;
  input.ratio_label = "off-CPU %";
  input.detail_columns = {"on-CPU", "off-CPU"};
  input.detail_columns_in_unit = true;
  // Clock samples plus blocked intervals count nothing that one number could say.
  input.show_samples = false;
  input.mark_label.clear();
  input.details.clear();
  std::vector<const CallNode*> pending{input.root};
  while (!pending.empty()) {
    const CallNode* node = pending.back();
    pending.pop_back();
    const double on = static_cast<double>(node->total[on_cpu]);
    const double off = static_cast<double>(node->total[off_cpu]);
    FlameFrameDetail d;
    if (on + off > 0) d.color_value = 100 * off / (on + off);
    d.columns = {on, off};
    input.details.emplace(node, std::move(d));
    for (const auto& child : node->children) pending.push_back(child.get());
  }
}

FlameColorScale DeltaColorScale(double points) {
  FlameColorScale scale;
  char limit[32];
  std::snprintf(limit, sizeof limit, "%g", points);
  scale.title = std::string(
                    "change in points of the old total (new - old) / old total, fixed "
                    "scale \u00b1") +
                limit + " pt";
  scale.min = -points;
  scale.max = points;
  // Diverging blue-white-red (ColorBrewer RdBu): white is "no change", the same colour is the
  // same change in any two graphs.
  scale.stops = {{-points, "#2166ac"},
                 {-points / 2, "#92c5de"},
                 {0, "#ffffff"},
                 {points / 2, "#f4a582"},
                 {points, "#b2182b"}};
  scale.marks = {{-points, std::string("\u2264 -") + limit + " pt (shrank)"},
                 {0, "0 (unchanged)"},
                 {points, std::string("\u2265 +") + limit + " pt (grew)"}};
  return scale;
}

void ColorFramesByDelta(FlameGraphInput& input, const DiffFlameTree& tree, double points) {
  input.scale = DeltaColorScale(points);
  input.color_mode_label = "total delta";
  input.alt_color_mode_label = "self delta";
  const bool width_new = tree.width == FlameWidthSide::kNew;
  input.mark_label = width_new ? "gone: in the old profile only, drawn with its old width"
                               : "new: in the new profile only, drawn with its new width";
  input.show_samples = false;
  input.diff = FlameGraphInput::DiffTotals{width_new, tree.old_grand_total, tree.new_grand_total};
  input.detail_columns = {"old total",
                          "new total",
                          "delta total",
                          "delta total % of frame",
                          "delta total % of old total",
                          "old self",
                          "new self",
                          "delta self",
                          "delta self % of frame",
                          "delta self % of old total"};
  input.details.clear();
  input.details.reserve(tree.frames.size());
  const double nan = std::nan("");
  for (const auto& [node, v] : tree.frames) {
    FlameFrameDetail d;
    d.color_value = v.total.delta_pt;
    d.alt_color_value = v.self.delta_pt;
    d.marked = v.absent_on_width_side;
    d.columns = {v.total.old_value,
                 v.total.new_value,
                 v.total.delta,
                 v.total.delta_pct.value_or(nan),
                 v.total.delta_pt,
                 v.self.old_value,
                 v.self.new_value,
                 v.self.delta,
                 v.self.delta_pct.value_or(nan),
                 v.self.delta_pt};
    input.details.emplace(node, std::move(d));
  }
}

void ColorFramesBySignificantDelta(FlameGraphInput& input, const DiffFlameTree& tree, double points,
                                   const std::unordered_map<const CallNode*, FrameChange>& changes,
                                   const std::string& rule) {
  ColorFramesByDelta(input, tree, points);
  input.scale->title +=
      "; coloured only where the change is significant (" + rule + "), the rest white";
  input.detail_columns.push_back("p total (runs)");
  input.detail_columns.push_back("p self (runs)");
  const double nan = std::nan("");
  for (auto& [node, d] : input.details) {
    auto it = changes.find(node);
    if (it == changes.end()) {
      d.columns.push_back(nan);
      d.columns.push_back(nan);
      continue;
    }
    const FrameChange& c = it->second;
    if (!c.total_significant) d.color_value = 0;
    if (!c.self_significant) d.alt_color_value = 0;
    d.columns.push_back(c.total_test.p_value);
    d.columns.push_back(c.self_test.p_value);
  }
}

}  // namespace tprof
