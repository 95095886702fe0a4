// The differential flame graph's model (core/analysis/diff_flame_tree) and its page data
// (report/flamegraph_html's ColorFramesByDelta) on folded stacks written here, so that every
// expected width and delta is worked out by hand from the input in the test.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "core/analysis/call_tree.h"
#include "core/analysis/diff_flame_tree.h"
#include "core/source/profile_source.h"
#include "report/flamegraph_html.h"

namespace tprof {
namespace {

// A folded input's call tree; the source owns the resolver the builder reads through.
CallNode TreeOf(const std::string& folded) {
  auto source = ProfileSource::OpenBytes(folded);
  EXPECT_TRUE(source.ok()) << source.error().message();
  CallTreeBuilder builder((*source)->events(), *(*source)->embedded_frames(), CallTreeOptions{});
  EXPECT_TRUE((*source)->ReadRecords(builder).ok());
  return SelectCallTreeEvents(builder.root(), {0});
}

DiffFlameTree Build(const std::string& old_folded, const std::string& new_folded,
                    FlameWidthSide width = FlameWidthSide::kNew,
                    Normalization normalize = Normalization::kNone) {
  const CallNode old_tree = TreeOf(old_folded), new_tree = TreeOf(new_folded);
  const DiffCallNode merged = MergeCallTrees(old_tree, new_tree, 1);
  DiffFlameOptions options;
  options.width = width;
  auto scale = DiffFlameNewScale(merged, normalize, 0, 0);
  EXPECT_TRUE(scale.ok());
  options.new_scale = *scale;
  auto tree = BuildDiffFlameTree(merged, options);
  EXPECT_TRUE(tree.ok()) << tree.error().message();
  return std::move(tree).value();
}

// Frames by their path from the root, "main;a;b" (the root itself is "").
struct Frame {
  const CallNode* node;
  const DiffFrameValues* values;
};
void Collect(const DiffFlameTree& tree, const CallNode& node, const std::string& path,
             std::map<std::string, Frame>& out) {
  out[path] = {&node, &tree.frames.at(&node)};
  for (const auto& child : node.children)
    Collect(tree, *child, path.empty() ? child->name.str() : path + ";" + child->name.str(), out);
}
std::map<std::string, Frame> Frames(const DiffFlameTree& tree) {
  std::map<std::string, Frame> out;
  Collect(tree, *tree.root, "", out);
  return out;
}

// Old: main;a;b 10, main;c 30 (total 40). New: every stack twice as long (total 80).
constexpr const char* kOld2x = "main;a;b 10\nmain;c 30\n";
constexpr const char* kNew2x = "main;a;b 20\nmain;c 60\n";

TEST(DiffFlame, UniformlyTwiceSlowerGrowsEveryFrameByAHundredPercent) {
  DiffFlameTree tree = Build(kOld2x, kNew2x);
  EXPECT_EQ(tree.old_grand_total, 40);
  EXPECT_EQ(tree.new_grand_total, 80);
  auto f = Frames(tree);
  ASSERT_EQ(f.size(), 5u);  // all, main, main;a, main;a;b, main;c
  // Widths are the new periods.
  const std::map<std::string, uint64_t> widths = {
      {"", 80}, {"main", 80}, {"main;a", 20}, {"main;a;b", 20}, {"main;c", 60}};
  const std::map<std::string, double> old_totals = {
      {"", 40}, {"main", 40}, {"main;a", 10}, {"main;a;b", 10}, {"main;c", 30}};
  for (const auto& [path, frame] : f) {
    SCOPED_TRACE(path);
    EXPECT_EQ(frame.node->total[0], widths.at(path));
    const DiffValue& total = frame.values->total;
    EXPECT_EQ(total.old_value, old_totals.at(path));
    EXPECT_EQ(total.new_value, 2 * old_totals.at(path));
    EXPECT_EQ(total.delta, old_totals.at(path));
    ASSERT_TRUE(total.delta_pct.has_value());
    EXPECT_DOUBLE_EQ(*total.delta_pct, 100.0);  // every frame: +100% of itself
    // Points of the old total: the frame's old share, doubled minus itself.
    EXPECT_DOUBLE_EQ(total.delta_pt, 100.0 * old_totals.at(path) / 40);
    EXPECT_FALSE(frame.values->absent_on_width_side);
  }
  // Self: b and c are leaves (self = total); main has no self on either side.
  EXPECT_DOUBLE_EQ(f["main;a;b"].values->self.delta_pt, 25.0);  // (20 - 10) / 40
  EXPECT_DOUBLE_EQ(f["main;c"].values->self.delta_pt, 75.0);    // (60 - 30) / 40
  EXPECT_EQ(f["main"].values->self.delta, 0);
  EXPECT_FALSE(f["main"].values->self.delta_pct.has_value());  // old self 0: no % of frame
  EXPECT_EQ(f["main;c"].node->self[0], 60u);
}

// Every node of a diff flame tree is found under its parent by its names: the parent's index
// views its children's names, which must not be replaced after (under ASan a replaced name is
// a use after free here).
void ExpectChildrenFound(const CallNode& node, size_t* parents_indexed) {
  if (node.children.size() >= 2) ++*parents_indexed;
  for (const auto& child : node.children) {
    EXPECT_EQ(node.Find(child->name, child->module, child->kind), child.get()) << child->name;
    ExpectChildrenFound(*child, parents_indexed);
  }
}

TEST(DiffFlame, EveryFrameIsFoundUnderItsParentByItsNames) {
  DiffFlameTree tree = Build(kOld2x, kNew2x);  // main has two children: a and c
  size_t parents_indexed = 0;
  ExpectChildrenFound(*tree.root, &parents_indexed);
  EXPECT_GT(parents_indexed, 0u);  // the index (two children or more) was asked
}

TEST(DiffFlame, NormalizingByTotalHidesTheUniformSlowdown) {
  DiffFlameTree tree = Build(kOld2x, kNew2x, FlameWidthSide::kNew, Normalization::kTotal);
  EXPECT_EQ(tree.new_grand_total, 40);  // new scaled by 40 / 80
  for (const auto& [path, frame] : Frames(tree)) {
    SCOPED_TRACE(path);
    EXPECT_DOUBLE_EQ(frame.values->total.delta, 0);
    EXPECT_DOUBLE_EQ(frame.values->total.delta_pt, 0);
  }
  EXPECT_EQ(Frames(tree)["main;c"].node->total[0], 30u);  // 60 * 0.5
}

// Old: main;a 10, main;gone;deep 6, main 4 (self): 20. New: main;a 15, main 4, main;fresh 3: 22.
constexpr const char* kOldGone = "main;a 10\nmain;gone;deep 6\nmain 4\n";
constexpr const char* kNewGone = "main;a 15\nmain 4\nmain;fresh 3\n";

TEST(DiffFlame, AVanishedStackIsDrawnWithItsOldWidthAndMarked) {
  DiffFlameTree tree = Build(kOldGone, kNewGone);
  auto f = Frames(tree);
  ASSERT_EQ(f.size(), 6u);  // all, main, a, gone, gone;deep, fresh
  ASSERT_TRUE(f.count("main;gone;deep"));
  // Gone frames: old widths, marked; their ancestors widened by as much (new 22 + gone 6).
  EXPECT_TRUE(f["main;gone"].values->absent_on_width_side);
  EXPECT_TRUE(f["main;gone;deep"].values->absent_on_width_side);
  EXPECT_EQ(f["main;gone"].node->total[0], 6u);
  EXPECT_EQ(f["main;gone;deep"].node->total[0], 6u);
  EXPECT_EQ(f["main;gone;deep"].node->self[0], 6u);
  EXPECT_EQ(f["main"].node->total[0], 28u);
  EXPECT_EQ(f[""].node->total[0], 28u);
  EXPECT_EQ(f["main"].node->self[0], 4u);
  for (const char* present : {"", "main", "main;a", "main;fresh"})
    EXPECT_FALSE(f[present].values->absent_on_width_side) << present;
  EXPECT_EQ(f["main;a"].node->total[0], 15u);
  EXPECT_EQ(f["main;fresh"].node->total[0], 3u);

  const DiffValue& gone = f["main;gone"].values->total;
  EXPECT_EQ(gone.old_value, 6);
  EXPECT_EQ(gone.new_value, 0);
  EXPECT_EQ(gone.delta, -6);
  EXPECT_DOUBLE_EQ(*gone.delta_pct, -100.0);
  EXPECT_DOUBLE_EQ(gone.delta_pt, -30.0);  // -6 / 20
  const DiffValue& a = f["main;a"].values->total;
  EXPECT_DOUBLE_EQ(*a.delta_pct, 50.0);  // 10 -> 15
  EXPECT_DOUBLE_EQ(a.delta_pt, 25.0);    // +5 / 20
  const DiffValue& fresh = f["main;fresh"].values->total;
  EXPECT_FALSE(fresh.delta_pct.has_value());  // new: nothing to be a % of
  EXPECT_DOUBLE_EQ(fresh.delta_pt, 15.0);     // +3 / 20
  const DiffValue& main_total = f["main"].values->total;
  EXPECT_DOUBLE_EQ(main_total.delta_pt, 10.0);  // 20 -> 22
  EXPECT_EQ(f["main"].values->self.delta, 0);   // 4 -> 4
}

TEST(DiffFlame, OldWidthsMarkTheStacksThatAppeared) {
  DiffFlameTree tree = Build(kOldGone, kNewGone, FlameWidthSide::kOld);
  auto f = Frames(tree);
  EXPECT_FALSE(f["main;gone"].values->absent_on_width_side);
  EXPECT_EQ(f["main;gone"].node->total[0], 6u);
  EXPECT_TRUE(f["main;fresh"].values->absent_on_width_side);
  EXPECT_EQ(f["main;fresh"].node->total[0], 3u);  // its new width
  EXPECT_EQ(f["main;a"].node->total[0], 10u);
  EXPECT_EQ(f["main"].node->total[0], 23u);  // old 20 + fresh 3
}

TEST(DiffFlame, PageDataCarriesDeltasMarksAndASymmetricScale) {
  DiffFlameTree tree = Build(kOldGone, kNewGone);
  FlameGraphInput input;
  input.root = tree.root.get();
  input.event_name = "samples";
  ColorFramesByDelta(input, tree, 5);
  auto data = nlohmann::json::parse(FlameGraphJson(input));
  // Symmetric scale around white.
  EXPECT_EQ(data["scale"]["min"], -5);
  EXPECT_EQ(data["scale"]["max"], 5);
  bool white_at_zero = false;
  for (const auto& stop : data["scale"]["stops"])
    if (stop[0] == 0 && stop[1] == "#ffffff") white_at_zero = true;
  EXPECT_TRUE(white_at_zero);
  EXPECT_EQ(data["colorModes"], nlohmann::json({"total delta", "self delta"}));
  EXPECT_TRUE(data["noSamples"].get<bool>());
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < data["name"].size(); ++i)
    index[data["names"][data["name"][i].get<size_t>()].get<std::string>()] = i;
  const std::string marked = data["marked"];
  ASSERT_EQ(marked.size(), 6u);
  EXPECT_EQ(marked[index["gone"]], '1');
  EXPECT_EQ(marked[index["deep"]], '1');
  EXPECT_EQ(marked[index["a"]], '0');
  EXPECT_NE(data["markLabel"].get<std::string>().find("gone"), std::string::npos);
  EXPECT_EQ(data["total"][index["gone"]], 6);
  EXPECT_EQ(data["value"][index["gone"]], -30);  // total delta pt
  EXPECT_EQ(data["value2"][index["gone"]], 0);   // gone has no self: self delta 0
  EXPECT_EQ(data["value2"][index["deep"]], -30);
  const auto& names = data["columnNames"];
  auto column = [&](const std::string& name) {
    for (size_t k = 0; k < names.size(); ++k)
      if (names[k] == name) return data["columns"][k];
    ADD_FAILURE() << "no column " << name;
    return nlohmann::json();
  };
  EXPECT_EQ(column("old total")[index["a"]], 10);
  EXPECT_EQ(column("new total")[index["a"]], 15);
  EXPECT_EQ(column("delta total")[index["a"]], 5);
  EXPECT_EQ(column("delta total % of frame")[index["a"]], 50);
  EXPECT_EQ(column("delta total % of old total")[index["a"]], 25);
  EXPECT_TRUE(column("delta total % of frame")[index["fresh"]].is_null());
}

TEST(DiffFlame, OldSideWithoutPeriodIsAnError) {
  CallNode empty;  // a profile without samples: only the root, with no period
  empty.name = "all";
  empty.kind = FrameKind::kRoot;
  empty.self = empty.total = empty.self_samples = {0};
  const CallNode some = TreeOf("main 5\n");
  const DiffCallNode merged = MergeCallTrees(empty, some, 1);
  EXPECT_FALSE(BuildDiffFlameTree(merged, {}).ok());
  EXPECT_FALSE(DiffFlameNewScale(merged, Normalization::kTotal, 0, 0).ok());
}

// Repeated runs: the mean tree is each count's mean rounded; a frame's change is tested on its
// per-run totals (worked out here from the folded inputs) with the table's rule.
TEST(DiffFlame, RepeatedRunsColourOnlySignificantChanges) {
  // alpha: 100, 102, 98, 101 -> 140, 142, 139, 141 (+40 %, every new run above every old one);
  // beta: 50, 40, 60, 45 -> 52, 41, 58, 47 (the runs overlap: noise).
  const int alpha_old[] = {100, 102, 98, 101}, alpha_new[] = {140, 142, 139, 141};
  const int beta_old[] = {50, 40, 60, 45}, beta_new[] = {52, 41, 58, 47};
  std::vector<CallNode> olds, news;
  for (int r = 0; r < 4; ++r) {
    olds.push_back(TreeOf("main;alpha " + std::to_string(alpha_old[r]) + "\nmain;beta " +
                          std::to_string(beta_old[r]) + "\n"));
    news.push_back(TreeOf("main;alpha " + std::to_string(alpha_new[r]) + "\nmain;beta " +
                          std::to_string(beta_new[r]) + "\n"));
  }
  std::vector<const CallNode*> old_roots, new_roots;
  for (const CallNode& n : olds) old_roots.push_back(&n);
  for (const CallNode& n : news) new_roots.push_back(&n);
  const CallNode old_mean = MeanCallTree(old_roots), new_mean = MeanCallTree(new_roots);
  auto tree = BuildDiffFlameTree(MergeCallTrees(old_mean, new_mean, 1), DiffFlameOptions{});
  ASSERT_TRUE(tree.ok());
  std::map<std::string, Frame> frames = Frames(*tree);
  // alpha's old mean 401 / 4 = 100.25 -> 100; new 562 / 4 = 140.5 -> 141 (half away from 0).
  EXPECT_EQ(frames.at("main;alpha").values->total.old_value, 100);
  EXPECT_EQ(frames.at("main;alpha").values->total.new_value, 141);
  const SideRuns old_runs{old_roots, {1, 1, 1, 1}}, new_runs{new_roots, {1, 1, 1, 1}};
  auto changes = AssessFrameChanges(*tree, old_runs, new_runs, 0, 0.05, 5);
  const FrameChange& alpha = changes.at(frames.at("main;alpha").node);
  EXPECT_EQ(alpha.old_totals, (std::vector<double>{100, 102, 98, 101}));
  EXPECT_EQ(alpha.new_totals, (std::vector<double>{140, 142, 139, 141}));
  // Every new run above every old one: U = 0 and 16, the exact two-sided p of 4 vs 4 is
  // 2 / C(8, 4) = 2 / 70.
  EXPECT_NEAR(alpha.total_test.p_value, 2.0 / 70, 1e-12);
  EXPECT_TRUE(alpha.total_significant);
  const FrameChange& beta = changes.at(frames.at("main;beta").node);
  EXPECT_EQ(beta.total_test.p_value, MannWhitneyU({50, 40, 60, 45}, {52, 41, 58, 47}).p_value);
  EXPECT_FALSE(beta.total_significant);
  // main: its total is alpha's plus beta's, per run; it grew by 28 % (significant).
  EXPECT_EQ(changes.at(frames.at("main").node).old_totals,
            (std::vector<double>{150, 142, 158, 146}));
  EXPECT_TRUE(changes.at(frames.at("main").node).total_significant);

  // The page: alpha keeps its colour, beta is white, and each carries its p-value.
  FlameGraphInput input;
  input.root = tree->root.get();
  ColorFramesBySignificantDelta(input, *tree, 5, changes, "rule");
  EXPECT_GT(*input.details.at(frames.at("main;alpha").node).color_value, 0);
  EXPECT_EQ(*input.details.at(frames.at("main;beta").node).color_value, 0);
  EXPECT_NE(input.scale->title.find("only where the change is significant (rule)"),
            std::string::npos);
  EXPECT_NEAR(input.details.at(frames.at("main;alpha").node).columns.at(10), 2.0 / 70, 1e-12);
}

}  // namespace
}  // namespace tprof
