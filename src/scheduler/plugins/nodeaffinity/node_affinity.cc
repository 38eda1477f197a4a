#include "scheduler/plugins/nodeaffinity/node_affinity.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "api/node_affinity.h"
#include "scheduler/plugins/helper/normalize_score.h"
#include "scheduler/set_ids.h"

namespace kt::scheduler {

namespace {

class NodeAffinity : public PreFilterPlugin,
                     public FilterPlugin,
                     public PreScorePlugin,
                     public ScorePlugin,
                     public EnqueueExtensions {
 public:
  NodeAffinity(const NodeAffinityArgs& args, Handle* handle) : args_(args), handle_(handle) {
    if (args_.added_affinity && args_.added_affinity->required) {
      added_selector_.emplace(*args_.added_affinity->required);
    }
  }

  std::string_view Name() const override { return kNodeAffinityName; }

  Status PreFilter(const PodInfo& pod, PreFilterResult* result) override {
    const api::PodSpec& spec = pod.pod().spec;
    const bool has_required = spec.node_affinity && spec.node_affinity->required;
    if (!has_required && !added_selector_ && spec.node_selector.empty()) return Status::Skip();
    Prepare(pod);
    if (!has_required || spec.node_affinity->required->terms.empty()) return Status();
    std::optional<std::set<std::string>> names;
    for (const api::NodeSelectorTerm& term : spec.node_affinity->required->terms) {
      std::optional<std::set<std::string>> term_names;
      for (const api::SelectorRequirement& r : term.match_fields) {
        if (r.key != "metadata.name" || r.op != "In") continue;
        std::set<std::string> values(r.values.begin(), r.values.end());
        if (!term_names) {
          term_names = std::move(values);
        } else {
          std::set<std::string> both;
          std::set_intersection(term_names->begin(), term_names->end(), values.begin(),
                                values.end(), std::inserter(both, both.begin()));
          term_names = std::move(both);
        }
      }
      // A term without a node name admits every node: the terms are ORed.
      if (!term_names) return Status();
      if (!names) names.emplace();
      names->insert(term_names->begin(), term_names->end());
    }
    if (names && names->empty()) return Status::Unresolvable(std::string(kErrReasonConflict));
    if (names) result->node_names = std::move(names);
    return Status();
  }

  Status Filter(const PodInfo& pod, const NodeInfo& node) override {
    const api::Node* n = node.node();
    if (n == nullptr) return Status::Error("node not found");
    if (added_selector_ && !added_selector_->Match(*n)) {
      static const Status* s = new Status(Status::Unresolvable(std::string(kErrReasonEnforced)));
      return *s;
    }
    PrepareFor(pod);
    if (!RequiredMatch(node)) {
      static const Status* s = new Status(Status::Unresolvable(std::string(kErrReasonPod)));
      return *s;
    }
    return Status();
  }

  // The nodes' label sets looked up in the cycle's verdicts, where the pod's requirements allow.
  bool FilterBatch(const PodInfo& pod, std::span<const NodeInfo* const> nodes,
                   std::span<uint8_t> rejected) override {
    if (nodes.empty()) return true;
    PrepareFor(pod);
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (rejected[i]) continue;
      const NodeInfo& node = *nodes[i];
      const api::Node* n = node.node();
      if (n == nullptr || (added_selector_ && !added_selector_->Match(*n)) ||
          !RequiredMatch(node)) {
        rejected[i] = 1;
      }
    }
    return true;
  }

  Status PreScore(const PodInfo& pod, std::span<const NodeInfo* const>) override {
    score_pod_ = &pod;
    score_cycle_ = handle_->SchedulingCycle();
    preferred_.reset();
    added_preferred_.reset();
    const api::PodSpec& spec = pod.pod().spec;
    const bool has_pod_terms = spec.node_affinity && !spec.node_affinity->preferred.empty();
    const bool has_added_terms = args_.added_affinity && !args_.added_affinity->preferred.empty();
    if (!has_pod_terms && !has_added_terms) return Status::Skip();
    if (has_pod_terms) {
      auto terms = api::PreferredSchedulingTerms::Create(spec.node_affinity->preferred);
      if (!terms) return Status::Error(terms.error().message());
      preferred_ = std::move(*terms);
    }
    if (has_added_terms) {
      auto terms = api::PreferredSchedulingTerms::Create(args_.added_affinity->preferred);
      if (!terms) return Status::Error(terms.error().message());
      added_preferred_ = std::move(*terms);
    }
    return Status();
  }

  int64_t Score(const PodInfo& pod, const NodeInfo& node) override {
    const api::Node* n = node.node();
    if (n == nullptr) return 0;
    if (score_pod_ != &pod || score_cycle_ != handle_->SchedulingCycle()) {
      // PreScore did not run for this pod (a profile can disable it): compute the terms here,
      // as upstream's Score does.
      (void)PreScore(pod, {});
    }
    int64_t score = 0;
    if (added_preferred_) score += added_preferred_->Score(*n);
    if (preferred_) score += preferred_->Score(*n);
    return score;
  }

  bool HasNormalizeScore() const override { return true; }
  void NormalizeScore(const PodInfo&, std::span<NodeScore> scores) override;

  std::vector<ClusterEventWithHint> EventsToRegister() override {
    return {{{EventResource::kNode, kAdd | kUpdateNodeLabel},
             [this](const PodInfo& pod, const ObjectPtr& old_obj, const ObjectPtr& new_obj) {
               const api::Node* now = new_obj ? new_obj->As<api::Node>() : nullptr;
               if (now == nullptr) return QueueingHint::kQueue;
               if (old_obj && old_obj->As<api::Node>() == nullptr) return QueueingHint::kQueue;
               if (added_selector_ && !added_selector_->Match(*now)) {
                 return QueueingHint::kQueueSkip;
               }
               api::RequiredNodeAffinity required(pod.pod());
               if (!required.Match(*now)) return QueueingHint::kQueueSkip;
               const api::Node* before = old_obj ? old_obj->As<api::Node>() : nullptr;
               if (before == nullptr) return QueueingHint::kQueue;
               // Already matched before: this update did not make the pod schedulable.
               const bool matched_before =
                   (!added_selector_ || added_selector_->Match(*before)) && required.Match(*before);
               return matched_before ? QueueingHint::kQueueSkip : QueueingHint::kQueue;
             }}};
  }

 private:
  // Prepare, unless it already ran for this pod in this cycle (Filter without PreFilter).
  void PrepareFor(const PodInfo& pod) {
    if (prepared_cycle_ != handle_->SchedulingCycle() || prepared_pod_ != &pod) Prepare(pod);
  }

  void Prepare(const PodInfo& pod) {
    required_.emplace(pod.pod());
    prepared_pod_ = &pod;
    prepared_cycle_ = handle_->SchedulingCycle();
    // Nodes that differ only in their hostname label share a label set (Cache::ClassifyLabels):
    // when the requirements read neither that label nor the node's name, one verdict per label
    // set answers for all of them.
    by_label_set_ = !required_->ReadsNameOrLabel(api::kLabelHostname);
    ++epoch_;
  }

  // The pod's nodeSelector and required terms against the node (Prepare has run for the pod).
  bool RequiredMatch(const NodeInfo& node) {
    const uint32_t set = node.label_set();
    if (!by_label_set_ || set == 0) return required_->Match(*node.node());
    if (const bool* match = verdicts_.Find(set, epoch_)) [[likely]] {
      return *match;
    }
    return Decide(node);
  }

  [[gnu::noinline]] bool Decide(const NodeInfo& node) {
    const bool match = required_->Match(*node.node());
    verdicts_.Put(node.label_set(), epoch_, match);
    return match;
  }

  const NodeAffinityArgs args_;
  Handle* handle_;
  std::optional<api::NodeSelectorMatcher> added_selector_;
  // Per cycle.
  std::optional<api::RequiredNodeAffinity> required_;
  const PodInfo* prepared_pod_ = nullptr;
  uint64_t prepared_cycle_ = 0;
  bool by_label_set_ = false;
  uint64_t epoch_ = 0;     // one per Prepare
  PerSet<bool> verdicts_;  // of required_ by label set, for epoch_
  const PodInfo* score_pod_ = nullptr;
  uint64_t score_cycle_ = 0;
  std::optional<api::PreferredSchedulingTerms> preferred_;
  std::optional<api::PreferredSchedulingTerms> added_preferred_;
};

}  // namespace

void NodeAffinity::NormalizeScore(const PodInfo&, std::span<NodeScore> scores) {
  DefaultNormalizeScore(kMaxNodeScore, /*reverse=*/false, scores);
}

Result<std::unique_ptr<Plugin>> NewNodeAffinity(const PluginArgs& args, Handle* handle) {
  return std::unique_ptr<Plugin>(new NodeAffinity(args.node_affinity, handle));
}

}  // namespace kt::scheduler
