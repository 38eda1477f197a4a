#include "scheduler/plugins/tainttoleration/taint_toleration.h"

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/taint.h"
#include "scheduler/plugins/helper/normalize_score.h"
#include "scheduler/set_ids.h"

namespace kt::scheduler {

namespace {

class TaintToleration final : public FilterPlugin,
                              public PreScorePlugin,
                              public ScorePlugin,
                              public EnqueueExtensions {
 public:
  explicit TaintToleration(Handle* handle)
      : gate_(handle->Gates().taint_toleration_comparison_operators) {}

  std::string_view Name() const override { return kTaintTolerationName; }

  Status Filter(const PodInfo& pod, const NodeInfo& node) override {
    if (!node.has_taints()) return Status();
    return Tolerated(pod, node, EpochFor(pod)) ? Status() : Untolerated();
  }

  // The nodes' taint sets looked up in the verdicts: about a nanosecond a node.
  bool FilterBatch(const PodInfo& pod, std::span<const NodeInfo* const> nodes,
                   std::span<uint8_t> rejected) override {
    if (nodes.empty()) return true;
    const uint64_t epoch = EpochFor(pod);
    for (size_t i = 0; i < nodes.size(); ++i) {
      const NodeInfo& node = *nodes[i];
      if (node.has_taints() && !Tolerated(pod, node, epoch)) rejected[i] = 1;
    }
    return true;
  }

  Status PreScore(const PodInfo& pod, std::span<const NodeInfo* const>) override {
    // Only tolerations with an empty or PreferNoSchedule effect count for scoring.
    prefer_tolerations_.clear();
    for (const Toleration& t : pod.pod().spec.tolerations) {
      if (t.effect.empty() || t.effect == kEffectPreferNoSchedule) prefer_tolerations_.push_back(t);
    }
    return Status();
  }

  int64_t Score(const PodInfo& pod, const NodeInfo& node) override {
    return node.has_taints() ? PreferUntolerated(pod, node, EpochFor(pod)) : 0;
  }

  // The counts looked up by taint set, as the filter's verdicts are.
  void ScoreNodes(const PodInfo& pod, std::span<const NodeInfo* const> nodes,
                  std::span<NodeScore> out) override {
    const uint64_t epoch = nodes.empty() ? 0 : EpochFor(pod);
    for (size_t i = 0; i < nodes.size(); ++i) {
      const NodeInfo& node = *nodes[i];
      out[i] = NodeScore{&node, node.has_taints() ? PreferUntolerated(pod, node, epoch) : 0};
    }
  }

  // A node without taints counts no untolerated PreferNoSchedule taint; if no node has any,
  // the reverse normalization gives every node the maximum.
  bool UniformScores(const PodInfo&, std::span<const NodeInfo* const> nodes) override {
    for (const NodeInfo* n : nodes) {
      if (n->has_taints()) return false;
    }
    return true;
  }

  bool HasNormalizeScore() const override { return true; }
  void NormalizeScore(const PodInfo&, std::span<NodeScore> scores) override {
    DefaultNormalizeScore(kMaxNodeScore, /*reverse=*/true, scores);
  }

  std::vector<ClusterEventWithHint> EventsToRegister() override {
    const bool gate = gate_;
    return {
        {{EventResource::kNode, kAdd | kUpdateNodeTaint},
         [gate](const PodInfo& pod, const ObjectPtr& old_obj, const ObjectPtr& new_obj) {
           // Queue only when the node's taints went from untolerated to tolerated.
           const api::Node* now = new_obj ? new_obj->As<api::Node>() : nullptr;
           if (now == nullptr) return QueueingHint::kQueue;
           const api::Node* before = old_obj ? old_obj->As<api::Node>() : nullptr;
           if (old_obj && before == nullptr) return QueueingHint::kQueue;  // not a node
           auto untolerated = [&](const api::Node& n) {
             return FindMatchingUntoleratedTaint(n.spec.taints, pod.pod().spec.tolerations,
                                                 TaintFilter::kNoScheduleOrNoExecute,
                                                 gate) != nullptr;
           };
           const bool was = before == nullptr || untolerated(*before);
           return was && !untolerated(*now) ? QueueingHint::kQueue : QueueingHint::kQueueSkip;
         }},
        {{EventResource::kPod, kUpdatePodToleration},
         [](const PodInfo& pod, const ObjectPtr&, const ObjectPtr& new_obj) {
           // Tolerations can only be added to a live pod: a change to the pod itself can help.
           const api::Pod* p = new_obj ? new_obj->As<api::Pod>() : nullptr;
           if (p == nullptr) return QueueingHint::kQueue;
           return p->meta.uid == pod.uid() ? QueueingHint::kQueue : QueueingHint::kQueueSkip;
         }},
    };
  }

 private:
  static const Status& Untolerated() {
    static const Status* s =
        new Status(Status::Unresolvable(std::string(kErrReasonUntoleratedTaint)));
    return *s;
  }

  // Whether the pod tolerates the NoSchedule and NoExecute taints of a node that has taints:
  // decided once per taint set and epoch, from whether it tolerates each of the set's taints,
  // decided once per distinct taint and epoch.
  bool Tolerated(const PodInfo& pod, const NodeInfo& node, uint64_t epoch) {
    if (const bool* tolerated = verdicts_.Find(node.taint_set(), epoch)) [[likely]] {
      return *tolerated;
    }
    return Decide(pod, node, epoch);
  }

  // Tolerated's verdict when none is cached; kept out of line, so that the cached path stays
  // inlined in the per-node loops.
  [[gnu::noinline]] bool Decide(const PodInfo& pod, const NodeInfo& node, uint64_t epoch) {
    const uint32_t set = node.taint_set();
    const CompiledSet* compiled = Compiled(node);
    if (compiled == nullptr) {  // a node the cache has not classified
      return FindMatchingUntoleratedTaint(node.node()->spec.taints, pod.pod().spec.tolerations,
                                          TaintFilter::kNoScheduleOrNoExecute, gate_) == nullptr;
    }
    bool tolerated = true;
    for (uint32_t id : compiled->no_schedule_or_execute) {
      if (!TaintTolerated(pod, id, epoch)) {
        tolerated = false;
        break;
      }
    }
    verdicts_.Put(set, epoch, tolerated);
    return tolerated;
  }

  // How many PreferNoSchedule taints of a node that has taints the pod does not tolerate: counted
  // once per taint set and epoch, as Tolerated decides.
  int64_t PreferUntolerated(const PodInfo& pod, const NodeInfo& node, uint64_t epoch) {
    if (const uint32_t* count = counts_.Find(node.taint_set(), epoch)) [[likely]] {
      return *count;
    }
    return CountPreferUntolerated(pod, node, epoch);
  }

  [[gnu::noinline]] int64_t CountPreferUntolerated(const PodInfo& pod, const NodeInfo& node,
                                                   uint64_t epoch) {
    uint32_t count = 0;
    const CompiledSet* compiled = Compiled(node);
    if (compiled == nullptr) {  // a node the cache has not classified
      for (const Taint& t : node.node()->spec.taints) {
        if (t.effect != kEffectPreferNoSchedule) continue;
        if (!TolerationsTolerateTaint(prefer_tolerations_, t, gate_)) ++count;
      }
      return count;
    }
    // Only a toleration with no effect or PreferNoSchedule can tolerate a PreferNoSchedule
    // taint, so the pod's whole list decides as prefer_tolerations_ would.
    for (uint32_t id : compiled->prefer) count += TaintTolerated(pod, id, epoch) ? 0 : 1;
    counts_.Put(node.taint_set(), epoch, count);
    return count;
  }

  // A taint set's taints by id (each distinct key, value and effect once): its NoSchedule and
  // NoExecute ones, and its PreferNoSchedule ones, in the node's order.
  struct CompiledSet {
    uint32_t set = 0;  // the taint set compiled; 0: none
    std::vector<uint32_t> no_schedule_or_execute;
    std::vector<uint32_t> prefer;
  };

  // The node's taint set, compiled the first time it is met; null for a node the cache has not
  // classified. Kept by the set's slot while that slot holds the same set; when the cache has
  // given the slot to another set, the compiled form is made again, and the distinct taints no
  // compiled set uses any more are forgotten.
  const CompiledSet* Compiled(const NodeInfo& node) {
    const uint32_t set = node.taint_set();
    const uint32_t slot = SetSlot(set);
    if (slot == 0) return nullptr;
    if (slot >= sets_.size()) sets_.resize(slot + 1);
    CompiledSet& c = sets_[slot];
    if (c.set == set) [[likely]] {
      return &c;
    }
    CompiledSet made{set, {}, {}};
    for (const Taint& t : node.node()->spec.taints) {
      if (TaintFilterKeeps(TaintFilter::kNoScheduleOrNoExecute, t)) {
        made.no_schedule_or_execute.push_back(TaintId(t));
      } else if (t.effect == kEffectPreferNoSchedule) {
        made.prefer.push_back(TaintId(t));
      }
    }
    // The set the slot held before lets go of its taints after the new one took its own, so
    // that the taints both share keep their records.
    for (uint32_t id : c.no_schedule_or_execute) DropTaint(id);
    for (uint32_t id : c.prefer) DropTaint(id);
    c = std::move(made);
    return &c;
  }

  // The id of a distinct taint (key, value and effect), held once more by the compiled set
  // asking for it. A new taint takes a freed id, whose tolerance record starts afresh.
  uint32_t TaintId(const Taint& t) {
    std::string key = TaintKey(t);
    auto it = taint_ids_.find(key);
    if (it != taint_ids_.end()) {
      ++taints_[it->second].holds;
      return it->second;
    }
    uint32_t id;
    if (!free_taints_.empty()) {
      id = free_taints_.back();
      free_taints_.pop_back();
    } else {
      id = static_cast<uint32_t>(taints_.size());
      taints_.emplace_back();
      tolerance_.emplace_back();
    }
    taint_ids_.emplace(std::move(key), id);
    taints_[id] = DistinctTaint{t, 1};
    tolerance_[id] = Tolerance{};
    return id;
  }

  static std::string TaintKey(const Taint& t) {
    std::string key = t.key;
    key.append(1, '\0').append(t.value).append(1, '\0').append(t.effect);
    return key;
  }

  // Gives up a compiled set's hold on a distinct taint; the last hold forgets it.
  void DropTaint(uint32_t id) {
    DistinctTaint& d = taints_[id];
    if (--d.holds > 0) return;
    taint_ids_.erase(TaintKey(d.taint));
    d = DistinctTaint{};
    free_taints_.push_back(id);
  }

  // Whether the pod's tolerations tolerate the taint `id`: matched once per epoch.
  bool TaintTolerated(const PodInfo& pod, uint32_t id, uint64_t epoch) {
    Tolerance& t = tolerance_[id];
    if (t.epoch != epoch) {
      t = Tolerance{epoch,
                    TolerationsTolerateTaint(pod.pod().spec.tolerations, taints_[id].taint, gate_)};
    }
    return t.tolerated;
  }

  // Verdicts are kept while pods come with the same toleration list: replicas of one template
  // share one list object (api/interned.h), so a new list object starts a new epoch. Held here,
  // the list cannot be freed and its address reused by another.
  uint64_t EpochFor(const PodInfo& pod) {
    const auto& tolerations = pod.pod().spec.tolerations;
    if (tolerations.data() != tolerations_.data() || tolerations.size() != tolerations_.size()) {
      tolerations_ = tolerations;
      ++epoch_;
    }
    return epoch_;
  }

  struct Tolerance {
    uint64_t epoch = 0;
    bool tolerated = false;
  };

  const bool gate_;
  api::SharedList<Toleration> tolerations_;  // the list the verdicts are for
  uint64_t epoch_ = 1;
  PerSet<bool> verdicts_;    // whether the tolerations tolerate a taint set, for `epoch_`
  PerSet<uint32_t> counts_;  // the same, the PreferNoSchedule taints they do not tolerate
  std::vector<Toleration> prefer_tolerations_;
  std::vector<CompiledSet> sets_;  // by taint set's slot
  // The distinct taints of the compiled sets, by id, with how many compiled sets hold each; the
  // ids by key, value and effect (used when a taint set is compiled, not per node); the ids
  // free for reuse; and per id whether the tolerations of an epoch tolerate it.
  struct DistinctTaint {
    Taint taint;
    uint32_t holds = 0;
  };
  std::vector<DistinctTaint> taints_;
  std::unordered_map<std::string, uint32_t> taint_ids_;
  std::vector<uint32_t> free_taints_;
  std::vector<Tolerance> tolerance_;
};

}  // namespace

Result<std::unique_ptr<Plugin>> NewTaintToleration(const PluginArgs&, Handle* handle) {
  return std::unique_ptr<Plugin>(new TaintToleration(handle));
}

}  // namespace kt::scheduler
