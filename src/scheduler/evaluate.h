// Evaluator: the scheduler's decision for a pod over a fixed cluster, without writing anything —
// what `kubetaint check` reports, computed by the very framework and plugins the live scheduler
// runs (DESIGN.md: offline answers equal live decisions).
//
// For each pod: every Filter plugin's verdict on every node (all of them, not only up to the
// first rejection), every Score plugin's raw, normalized and weighted score on every feasible
// node, the node the scheduler picks (same tie-break as live), and when no node fits, the
// FailedScheduling message with what preemption would do (the node it would nominate and the
// pods it would evict).
//
// Differences from a live cycle, by design: every node is evaluated (the live scheduler stops
// at percentageOfNodesToScore — all nodes below 100 — and starts at a rotating offset), and each
// pod is evaluated alone against the cluster as given.
//
//   Evaluator ev(profiles, gates);
//   ev.AddNode(node); ev.AddPod(bound_pod);                  // the cluster
//   Result<PodEvaluation> r = ev.Evaluate(pending_pod);
//
// Thread safety: none.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/feature_gates.h"
#include "scheduler/cache.h"
#include "scheduler/framework/framework.h"

namespace kt::scheduler {

struct NodeEvaluation {
  const NodeInfo* node = nullptr;
  bool feasible = false;
  // Every filter plugin's status on the node, in profile order (Skip for plugins whose
  // PreFilter skipped them).
  std::vector<std::pair<std::string, Status>> filters;
  // For feasible nodes: the scores (empty when the pod fits nowhere).
  std::vector<NodePluginScores::PluginScore> scores;
  int64_t total_score = 0;
};

struct PodEvaluation {
  std::string scheduler_name;
  bool handled = true;                // false: no profile has the pod's schedulerName
  std::vector<NodeEvaluation> nodes;  // in the scheduler's node order
  std::string selected_node;          // empty when none fits
  // When none fits: the FailedScheduling message, and what preemption would do.
  std::string message;
  std::string nominated_node;
  std::vector<std::string> victims;  // "namespace/name" of the pods it would evict
  std::string pre_filter_message;    // a PreFilter rejection (the pod fits nowhere)
};

class Evaluator {
 public:
  Evaluator(std::vector<Profile> profiles, FeatureGates gates);
  ~Evaluator();

  // The cluster: nodes, and pods bound to them (spec.nodeName set) or nominated to them.
  void AddNode(const ObjectPtr& node);
  void AddPod(const ObjectPtr& pod);

  // Builds the profiles; the first error (an unknown plugin...) is returned.
  kt::Status Init();

  // Evaluates `pod` (bound or not: a bound pod is evaluated as if it were not, away from its own
  // place). `pod` must not carry spec.nodeName if it is to be scheduled; callers clear it.
  Result<PodEvaluation> Evaluate(const ObjectPtr& pod);

  const Cache& cache() const { return cache_; }

 private:
  class EvalHandle;
  struct Profiled {
    std::unique_ptr<EvalHandle> handle;
    std::unique_ptr<Framework> framework;
  };

  std::vector<Profile> profiles_;
  FeatureGates gates_;
  Cache cache_;
  std::vector<ObjectPtr> pods_;  // for GetPod
  std::vector<std::pair<std::string, PodInfoPtr>> nominated_;
  std::vector<Profiled> frameworks_;
  uint64_t cycle_ = 0;
};

}  // namespace kt::scheduler
