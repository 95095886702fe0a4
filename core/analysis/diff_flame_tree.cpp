#include "core/analysis/diff_flame_tree.h"

#include <cmath>

namespace tprof {
namespace {

template <typename Counts>  // a CallNode's EventCounts or a DiffCallNode's vector
uint64_t At(const Counts& v, size_t event) {
  return event < v.size() ? v[event] : 0;
}

uint64_t Width(double value) { return value > 0 ? static_cast<uint64_t>(std::llround(value)) : 0; }

DiffValue MakeValue(double old_value, double new_value, double old_grand_total) {
  DiffValue v;
  v.old_value = old_value;
  v.new_value = new_value;
  v.delta = new_value - old_value;
  if (old_value != 0) v.delta_pct = 100.0 * v.delta / old_value;
  v.delta_pt = 100.0 * v.delta / old_grand_total;
  return v;
}

class Builder {
 public:
  Builder(const DiffFlameOptions& options, const DiffCallNode& root, double old_grand_total,
          DiffFlameTree& out)
      : options_(options), root_(&root), old_grand_total_(old_grand_total), out_(out) {}

  // Fills `node` from `merged`; returns the width added to `node` by frames its width side lacks
  // (all of it when `node` itself is absent there).
  uint64_t Build(const DiffCallNode& merged, CallNode& node) {
    const size_t e = options_.event;
    const double old_total = static_cast<double>(At(merged.old_total, e));
    const double new_total = static_cast<double>(At(merged.new_total, e)) * options_.new_scale;
    const double old_self = static_cast<double>(At(merged.old_self, e));
    const double new_self = static_cast<double>(At(merged.new_self, e)) * options_.new_scale;
    const bool width_new = options_.width == FlameWidthSide::kNew;
    const double side_total = width_new ? new_total : old_total;
    const double side_self = width_new ? new_self : old_self;
    const double other_self = width_new ? old_self : new_self;

    DiffFrameValues values;
    values.total = MakeValue(old_total, new_total, old_grand_total_);
    values.self = MakeValue(old_self, new_self, old_grand_total_);
    values.absent_on_width_side = side_total == 0 && &merged != root_;

    // Only the root is named here: a child was named by Child, and its parent's index views its
    // names' text, which naming it again would free.
    if (&merged == root_) {
      node.name = merged.name;
      node.module = merged.module;
    }
    node.kind = merged.kind;
    node.self = {Width(values.absent_on_width_side ? other_self : side_self)};
    node.self_samples = {0};  // the merged tree carries periods only
    uint64_t extra = 0;
    for (const auto& merged_child : merged.children) {
      const uint64_t child_extra =
          Build(*merged_child,
                *node.Child(merged_child->name, merged_child->module, merged_child->kind, 1));
      extra += child_extra;
    }
    // An absent frame's own width is its self width plus its children's, all from the other side.
    if (values.absent_on_width_side) {
      node.total = {node.self[0] + extra};
      extra = node.total[0];
    } else {
      node.total = {Width(side_total) + extra};
    }
    out_.frames.emplace(&node, values);
    return extra;
  }

 private:
  const DiffFlameOptions& options_;
  const DiffCallNode* root_;  // "all": on both sides by definition
  double old_grand_total_;
  DiffFlameTree& out_;
};

}  // namespace

Result<double> DiffFlameNewScale(const DiffCallNode& merged, Normalization normalize, size_t event,
                                 size_t normalize_event) {
  if (normalize == Normalization::kNone) return 1.0;
  const size_t by = normalize == Normalization::kTotal ? event : normalize_event;
  const uint64_t old_total = At(merged.old_total, by), new_total = At(merged.new_total, by);
  if (old_total == 0 || new_total == 0)
    return Error("--normalize: the " + std::string(old_total == 0 ? "old" : "new") +
                 " profile has no period of the event to scale by");
  return static_cast<double>(old_total) / static_cast<double>(new_total);
}

Result<DiffFlameTree> BuildDiffFlameTree(const DiffCallNode& merged,
                                         const DiffFlameOptions& options) {
  DiffFlameTree tree;
  tree.width = options.width;
  tree.old_grand_total = static_cast<double>(At(merged.old_total, options.event));
  tree.new_grand_total =
      static_cast<double>(At(merged.new_total, options.event)) * options.new_scale;
  if (tree.old_grand_total == 0)
    return Error(
        "the old profile has no period of the event: no change can be stated as a "
        "share of its total");
  tree.root = std::make_unique<CallNode>();
  Builder builder(options, merged, tree.old_grand_total, tree);
  builder.Build(merged, *tree.root);
  return tree;
}

CallNode SelectCallTreeEvents(const CallNode& node, const std::vector<size_t>& events) {
  CallNode out;
  out.name = node.name;
  out.module = node.module;
  out.kind = node.kind;
  for (size_t e : events) {
    out.self.push_back(At(node.self, e));
    out.total.push_back(At(node.total, e));
    out.self_samples.push_back(At(node.self_samples, e));
  }
  for (const auto& child : node.children) {
    out.Adopt(std::make_unique<CallNode>(SelectCallTreeEvents(*child, events)));
  }
  return out;
}

namespace {

bool Counts(const MannWhitneyResult& test, const std::vector<double>& old_runs,
            const std::vector<double>& new_runs, double alpha, double min_effect_percent) {
  if (old_runs.size() < 2 || new_runs.size() < 2 || test.p_value >= alpha) return false;
  const double old_mean = Mean(old_runs), new_mean = Mean(new_runs);
  if (old_mean == 0) return new_mean != 0;
  return 100.0 * std::fabs(new_mean - old_mean) / old_mean >= min_effect_percent;
}

struct FrameChangeWalk {
  const SideRuns &old_runs, &new_runs;
  size_t event;
  double alpha, min_effect_percent;
  std::unordered_map<const CallNode*, FrameChange>& out;

  void Visit(const CallNode& frame, const std::vector<const CallNode*>& olds,
             const std::vector<const CallNode*>& news) {
    FrameChange change;
    auto values = [&](const std::vector<const CallNode*>& nodes, const SideRuns& runs,
                      std::vector<double>& totals, std::vector<double>& selfs) {
      for (size_t r = 0; r < nodes.size(); ++r) {
        const CallNode* n = nodes[r];
        const bool has = n && n->total.size() > event;
        totals.push_back(has ? static_cast<double>(n->total[event]) * runs.factors[r] : 0);
        selfs.push_back(has ? static_cast<double>(n->self[event]) * runs.factors[r] : 0);
      }
    };
    values(olds, old_runs, change.old_totals, change.old_selfs);
    values(news, new_runs, change.new_totals, change.new_selfs);
    change.total_test = MannWhitneyU(change.old_totals, change.new_totals);
    change.self_test = MannWhitneyU(change.old_selfs, change.new_selfs);
    change.total_significant =
        Counts(change.total_test, change.old_totals, change.new_totals, alpha, min_effect_percent);
    change.self_significant =
        Counts(change.self_test, change.old_selfs, change.new_selfs, alpha, min_effect_percent);
    out.emplace(&frame, std::move(change));
    for (const auto& child : frame.children) {
      auto step = [&](const std::vector<const CallNode*>& nodes) {
        std::vector<const CallNode*> next;
        next.reserve(nodes.size());
        for (const CallNode* n : nodes)
          next.push_back(n ? n->Find(child->name, child->module, child->kind) : nullptr);
        return next;
      };
      Visit(*child, step(olds), step(news));
    }
  }
};

}  // namespace

std::unordered_map<const CallNode*, FrameChange> AssessFrameChanges(const DiffFlameTree& tree,
                                                                    const SideRuns& old_runs,
                                                                    const SideRuns& new_runs,
                                                                    size_t event, double alpha,
                                                                    double min_effect_percent) {
  std::unordered_map<const CallNode*, FrameChange> out;
  if (!tree.root) return out;
  FrameChangeWalk walk{old_runs, new_runs, event, alpha, min_effect_percent, out};
  walk.Visit(*tree.root, old_runs.roots, new_runs.roots);
  return out;
}

namespace {
void AddCallTree(CallNode& into, const CallNode& from) {
  const size_t events = from.total.size();
  if (into.total.size() < events) {
    into.total.resize(events, 0);
    into.self.resize(events, 0);
    into.self_samples.resize(events, 0);
  }
  for (size_t e = 0; e < events; ++e) {
    into.total[e] += from.total[e];
    into.self[e] += from.self[e];
    if (e < from.self_samples.size()) into.self_samples[e] += from.self_samples[e];
  }
  for (const auto& child : from.children)
    AddCallTree(*into.Child(child->name, child->module, child->kind, events), *child);
}

void DivideCallTree(CallNode& node, double runs) {
  for (auto* counts : {&node.total, &node.self, &node.self_samples})
    for (uint64_t& v : *counts)
      v = static_cast<uint64_t>(std::llround(static_cast<double>(v) / runs));
  for (auto& child : node.children) DivideCallTree(*child, runs);
}
}  // namespace

CallNode MeanCallTree(const std::vector<const CallNode*>& runs) {
  CallNode mean;
  if (runs.empty()) return mean;
  mean.name = runs.front()->name;
  mean.module = runs.front()->module;
  mean.kind = runs.front()->kind;
  for (const CallNode* run : runs) AddCallTree(mean, *run);
  DivideCallTree(mean, static_cast<double>(runs.size()));
  return mean;
}

}  // namespace tprof
