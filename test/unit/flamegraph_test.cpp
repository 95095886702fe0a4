// Per-frame ratios (IPC, CPI, stall share) and the flame graph page's data, on small trees built
// from constructed samples whose expected values are worked out by hand below.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/analysis/call_tree.h"
#include "core/analysis/frame_ratio.h"
#include "core/analysis/significance.h"
#include "core/source/profile_source.h"
#include "report/flamegraph_html.h"
#include "report/folded_stacks.h"

namespace tprof {
namespace {

// Names address 0xN00 "fN" (0x100 -> "f1"), and 0x900 a name that tries to end the script.
class NumberingResolver : public FrameResolver {
 public:
  ResolvedFrame Resolve(const Mapping*, uint64_t address) override {
    ResolvedFrame f;
    f.function = address == 0x900 ? "evil</script><b>" : "f" + std::to_string(address >> 8);
    f.module = "prog";
    return f;
  }
};

EventDesc Event(const std::string& name, uint32_t type = 4, uint64_t config = 0x1234) {
  EventDesc e;
  e.name = name;
  e.type = type;  // 4: PERF_TYPE_RAW, so that only the name can identify the event
  e.config = config;
  return e;
}

Sample At(uint32_t event, uint64_t period, std::vector<uint64_t> chain) {
  Sample s;
  s.pid = s.tid = 7;
  s.event = event;
  s.period = period;
  s.ip = chain.front();
  s.callchain = std::move(chain);  // leaf first
  return s;
}

TEST(FrameRatioTest, FindsEventsByGenericVendorAndHardwareNames) {
  auto ipc = FindRatioEvents({Event("instructions:u"), Event("cpu/cycles/")}, FrameRatioKind::kIpc);
  ASSERT_TRUE(ipc.ok()) << ipc.error().message();
  EXPECT_EQ(ipc->numerator, 0u);
  EXPECT_EQ(ipc->denominator, 1u);
  auto cpi = FindRatioEvents({Event("CPU_CLK_UNHALTED.THREAD"), Event("INST_RETIRED:ANY_P")},
                             FrameRatioKind::kCpi);
  ASSERT_TRUE(cpi.ok()) << cpi.error().message();
  EXPECT_EQ(cpi->numerator, 0u);  // cycles / instructions
  EXPECT_EQ(cpi->denominator, 1u);
  auto arm = FindRatioEvents(
      {Event("armv8_pmuv3_0/cpu_cycles/"), Event("STALL_FRONTEND"), Event("STALL_BACKEND")},
      FrameRatioKind::kStall);
  ASSERT_TRUE(arm.ok()) << arm.error().message();
  EXPECT_EQ(arm->numerator, 2u);  // the backend stalls are preferred
  EXPECT_EQ(arm->denominator, 0u);
  // perf_event_attr type 0 (hardware), config 1 (instructions), whatever it is called.
  auto by_config = FindRatioEvents({Event("a", 0, 0), Event("b", 0, 1)}, FrameRatioKind::kIpc);
  ASSERT_TRUE(by_config.ok());
  EXPECT_EQ(by_config->numerator, 1u);
}

TEST(FrameRatioTest, MissingEventsAreOneLineErrorsNamingWhatThereIs) {
  auto r = FindRatioEvents({Event("cpu-clock")}, FrameRatioKind::kIpc);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message().find("no cycles and instructions samples"), std::string::npos);
  EXPECT_NE(r.error().message().find("its events: cpu-clock"), std::string::npos);
  EXPECT_EQ(r.error().message().find('\n'), std::string::npos);
  auto stall = FindRatioEvents({Event("cycles"), Event("instructions")}, FrameRatioKind::kStall);
  ASSERT_FALSE(stall.ok());
  EXPECT_NE(stall.error().message().find("no stall cycles"), std::string::npos);
}

// Two events, cycles (0) and instructions (1), sampled on their own with period 100:
//   main -> work -> hot : 40 cycles samples, 80 instructions samples  (IPC 2)
//   main -> work        : 10 cycles samples,  5 instructions samples
//   main -> cold        :  2 cycles samples,  1 instructions sample   (too few)
// so work = 50 cycles, 85 instructions samples (IPC 1.7), main = 52 / 86 (IPC 86/52).
class RatioTreeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < 40; ++i) builder.OnSample(At(0, 100, {0x300, 0x201, 0x101}));
    for (int i = 0; i < 80; ++i) builder.OnSample(At(1, 100, {0x300, 0x201, 0x101}));
    for (int i = 0; i < 10; ++i) builder.OnSample(At(0, 100, {0x200, 0x101}));
    for (int i = 0; i < 5; ++i) builder.OnSample(At(1, 100, {0x200, 0x101}));
    for (int i = 0; i < 2; ++i) builder.OnSample(At(0, 100, {0x400, 0x101}));
    builder.OnSample(At(1, 100, {0x400, 0x101}));
  }
  const CallNode* Find(const std::vector<std::string>& path) {
    const CallNode* node = &builder.root();
    for (const std::string& name : path) {
      const CallNode* next = nullptr;
      for (const auto& c : node->children)
        if (c->name == name) next = c.get();
      if (!next) return nullptr;
      node = next;
    }
    return node;
  }
  NumberingResolver resolver;
  CallTreeBuilder builder{{Event("cycles"), Event("instructions")}, resolver, {}};
};

TEST_F(RatioTreeTest, IpcOfEveryFrameFromTheSamplesThroughIt) {
  auto events = FindRatioEvents(builder.events(), FrameRatioKind::kIpc);
  ASSERT_TRUE(events.ok());
  auto ratios = ComputeFrameRatios(builder.root(), *events, builder.events(), 5);
  const CallNode* main_node = Find({"f1"});
  const CallNode* work = Find({"f1", "f2"});
  const CallNode* hot = Find({"f1", "f2", "f3"});
  const CallNode* cold = Find({"f1", "f4"});
  ASSERT_TRUE(main_node && work && hot && cold);
  EXPECT_DOUBLE_EQ(ratios[hot].value, 2.0);
  EXPECT_EQ(ratios[hot].denominator, 4000u);
  EXPECT_EQ(ratios[hot].numerator, 8000u);
  EXPECT_DOUBLE_EQ(ratios[work].value, 85.0 / 50.0);
  EXPECT_EQ(ratios[work].denominator_samples, 50u);
  EXPECT_EQ(ratios[work].numerator_samples, 85u);
  EXPECT_DOUBLE_EQ(ratios[main_node].value, 86.0 / 52.0);
  EXPECT_DOUBLE_EQ(ratios[&builder.root()].value, 86.0 / 52.0);
  EXPECT_TRUE(ratios[hot].reliable);
  EXPECT_FALSE(ratios[cold].reliable);  // 2 and 1 samples: below 5
  EXPECT_DOUBLE_EQ(ratios[cold].value, 0.5);
  auto cpi_events = FindRatioEvents(builder.events(), FrameRatioKind::kCpi);
  ASSERT_TRUE(cpi_events.ok());
  auto cpi = ComputeFrameRatios(builder.root(), *cpi_events, builder.events(), 5);
  EXPECT_DOUBLE_EQ(cpi[hot].value, 0.5);
}

TEST_F(RatioTreeTest, PageDataIsPreorderWithAStringTableAndTheRatioColumns) {
  auto events = FindRatioEvents(builder.events(), FrameRatioKind::kIpc);
  ASSERT_TRUE(events.ok());
  FlameGraphInput input;
  input.root = &builder.root();
  input.event = 0;
  input.event_name = "cycles";
  ColorFramesByRatio(input, ComputeFrameRatios(builder.root(), *events, builder.events(), 5),
                     FrameRatioKind::kIpc, "instructions", "cycles", 5);
  auto data = nlohmann::json::parse(FlameGraphJson(input));
  // Preorder, children by name: all, f1, f2, f3, f4.
  std::vector<std::string> names;
  for (auto index : data["name"]) names.push_back(data["names"][index.get<size_t>()]);
  EXPECT_EQ(names, (std::vector<std::string>{"all", "f1", "f2", "f3", "f4"}));
  EXPECT_EQ(data["depth"], nlohmann::json({0, 1, 2, 3, 2}));
  EXPECT_EQ(data["total"], nlohmann::json({5200, 5200, 5000, 4000, 200}));
  EXPECT_EQ(data["self"], nlohmann::json({0, 0, 1000, 4000, 200}));
  EXPECT_EQ(data["samples"], nlohmann::json({52, 52, 50, 40, 2}));
  EXPECT_EQ(data["kind"], "ruuuu");
  ASSERT_EQ(data["value"].size(), 5u);
  EXPECT_DOUBLE_EQ(data["value"][3].get<double>(), 2.0);
  EXPECT_NEAR(data["value"][2].get<double>(), 1.7, 1e-6);
  EXPECT_TRUE(data["value"][4].is_null());  // grey: too few samples
  // Each coloured frame's 95 % interval, the two sample streams as Poisson counts, each to its
  // exact 97.5 % bound U(n) (as the table's): f3 has 40 cycles and 80 instructions samples, so
  // IPC 2 +- 2 * sqrt(r(40)^2 + r(80)^2) with r(n) = (U(n) - n) / n, +-0.873 (the normal
  // approximation's 1.96 / sqrt(n) would give +-0.759), wider than one legend step (0.5): marked
  // uncertain, as are f2 and f1. The page keeps 6 digits.
  auto r = [](uint64_t n) { return (PoissonUpper975(n) - static_cast<double>(n)) / n; };
  EXPECT_EQ(data["scale"]["step"], 0.5);
  EXPECT_NEAR(data["halfWidth"][3].get<double>(), 2 * std::hypot(r(40), r(80)), 1e-5);
  EXPECT_NEAR(data["halfWidth"][2].get<double>(), 1.7 * std::hypot(r(50), r(85)), 1e-5);
  EXPECT_TRUE(data["halfWidth"][4].is_null());
  EXPECT_EQ(data["marked"], "11110");
  EXPECT_NE(data["markLabel"].get<std::string>().find("uncertain"), std::string::npos);
  EXPECT_EQ(data["columnNames"],
            nlohmann::json({"cycles", "instructions", "cycles samples", "instructions samples"}));
  EXPECT_EQ(data["columns"][1], nlohmann::json({8600, 8600, 8500, 8000, 100}));
  EXPECT_EQ(data["scale"]["min"], 0);
  EXPECT_EQ(data["scale"]["max"], 4);
  EXPECT_EQ(data["scale"]["marks"][0][1], "IPC = 1");
  EXPECT_NE(data["scale"]["noValue"].get<std::string>().find("fewer than 5 samples"),
            std::string::npos);
  EXPECT_EQ(data["ratioLabel"], "IPC");

  // Sized by instructions instead: f4 has 100, and the widths follow.
  input.event = 1;
  auto by_instructions = nlohmann::json::parse(FlameGraphJson(input));
  EXPECT_EQ(by_instructions["total"], nlohmann::json({8600, 8600, 8500, 8000, 100}));
}

// Gregg's CPI flame graph: stall cycles over cycles, 0 to 1, per frame.
TEST(FrameRatioTest, StallShareOfEachFrame) {
  NumberingResolver resolver;
  CallTreeBuilder builder({Event("cycles", 0, 0), Event("stalled-cycles-backend")}, resolver, {});
  for (int i = 0; i < 20; ++i) builder.OnSample(At(0, 1000, {0x200, 0x101}));  // f1 -> f2
  for (int i = 0; i < 15; ++i) builder.OnSample(At(1, 1000, {0x200, 0x101}));
  for (int i = 0; i < 20; ++i) builder.OnSample(At(0, 1000, {0x300, 0x101}));  // f1 -> f3
  auto events = FindRatioEvents(builder.events(), FrameRatioKind::kStall);
  ASSERT_TRUE(events.ok()) << events.error().message();
  auto ratios = ComputeFrameRatios(builder.root(), *events, builder.events(), 1);
  const CallNode& f1 = *builder.root().children[0];
  ASSERT_EQ(f1.name, "f1");
  ASSERT_EQ(f1.children.size(), 2u);
  EXPECT_DOUBLE_EQ(ratios[&f1].value, 15.0 / 40.0);
  for (const auto& child : f1.children) {
    if (child->name == "f2") {
      EXPECT_DOUBLE_EQ(ratios[child.get()].value, 0.75);
    } else {
      EXPECT_FALSE(ratios[child.get()].reliable);  // f3: no stall samples
    }
  }
  FlameColorScale scale =
      RatioColorScale(FrameRatioKind::kStall, "stalled-cycles-backend", "cycles", 1);
  EXPECT_EQ(scale.min, 0);
  EXPECT_EQ(scale.max, 1);
}

TEST(FlameGraphHtmlTest, NameModeHasNoScaleAndLeavesOutFramesWithoutTheEvent) {
  NumberingResolver resolver;
  CallTreeBuilder builder({Event("cycles"), Event("instructions")}, resolver, {});
  builder.OnSample(At(0, 7, {0x200, 0x101}));
  builder.OnSample(At(1, 9, {0x300, 0x101}));  // f3 has no cycles: no frame in a cycles graph
  FlameGraphInput input;
  input.root = &builder.root();
  auto data = nlohmann::json::parse(FlameGraphJson(input));
  EXPECT_EQ(data["total"], nlohmann::json({7, 7, 7}));
  EXPECT_FALSE(data.contains("scale"));
  EXPECT_FALSE(data.contains("value"));
  EXPECT_EQ(data["names"], nlohmann::json({"all", "f1", "f2"}));
}

TEST(FlameGraphHtmlTest, PageIsSelfContainedAndNamesCannotEndTheScript) {
  NumberingResolver resolver;
  CallTreeBuilder builder({Event("cycles")}, resolver, {});
  builder.OnSample(At(0, 3, {0x900, 0x101}));
  FlameGraphInput input;
  input.root = &builder.root();
  input.title = "t";
  std::ostringstream page;
  RenderFlameGraphHtml(input, page);
  const std::string html = page.str();
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(html.find("/*@FLAME_DATA@*/"), std::string::npos);  // the data replaced it
  EXPECT_EQ(html.find("evil</script>"), std::string::npos);
  EXPECT_NE(html.find("evil\\u003c/script\\u003e"), std::string::npos);
  // Nothing is fetched: no external scripts, styles or fonts.
  EXPECT_EQ(html.find("src=\"http"), std::string::npos);
  EXPECT_EQ(html.find("href=\"http"), std::string::npos);
  EXPECT_EQ(html.find("@import"), std::string::npos);
  // Exactly one <script>, and it ends once.
  EXPECT_EQ(html.find("</script>"), html.rfind("</script>"));
}

// Text inputs name their frames through made-up addresses; callers in a chain are looked up at
// address - 1, which must still find their names (it gave "[unknown]" for every caller).
TEST(FlameGraphHtmlTest, FoldedInputKeepsEveryCallerName) {
  const std::string folded = "main;a;b;c 5\nmain;a;x;c 3\nmain;y;b;c 2\n";
  auto source = ProfileSource::OpenBytes(folded);
  ASSERT_TRUE(source.ok()) << source.error().message();
  ASSERT_NE((*source)->embedded_frames(), nullptr);
  CallTreeBuilder builder((*source)->events(), *(*source)->embedded_frames(), {});
  ASSERT_TRUE((*source)->ReadRecords(builder).ok());
  FoldedOptions options;
  options.annotate = false;
  EXPECT_EQ(RenderFolded(builder.root(), options), "main;a;b;c 5\nmain;a;x;c 3\nmain;y;b;c 2\n");
}

}  // namespace
}  // namespace tprof
