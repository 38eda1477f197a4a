// One scheduling decision: which node, if any, a pod goes to (upstream schedule_one.go
// schedulePod, findNodesThatFitPod, prioritizeNodes). Shared by the live scheduler and
// `kubetaint check`, so that offline answers equal live decisions.
//
//   1. PreFilter; a rejection there rejects the pod on every node.
//   2. A pod nominated to a node (by an earlier preemption) tries that node alone first.
//   3. Filter, from a rotating start index, until enough feasible nodes are found
//      (percentageOfNodesToScore: all below 100 nodes, else 50 − nodes/125 percent, at least 5 %
//      and at least 100 nodes).
//   4. One feasible node is taken as it is; more are scored and the best total wins.
//
// Ties among the best nodes: upstream takes whichever its parallel filter happened to finish
// first (effectively random). kubetaint breaks them with a hash of the pod and node names,
// which spreads equal pods over equal nodes like a random pick but gives the same answer every
// time, in `check` as in the scheduler.
//
// Thread safety: none (one framework cycle at a time).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "scheduler/framework/framework.h"

namespace kt::scheduler {

// upstream numFeasibleNodesToFind.
int NumFeasibleNodesToFind(std::optional<int32_t> percentage, int num_all_nodes);

struct ScheduleResult {
  // The chosen node; empty when the pod fits none (then `status` says why).
  std::string host;
  // The chosen node's NodeInfo, as the lister gave it (null with `host` empty).
  const NodeInfo* node = nullptr;
  Status status;
  Diagnosis diagnosis;
  int num_all_nodes = 0;
  int evaluated_nodes = 0;
  int feasible_nodes = 0;
  // Per feasible node scored, with every plugin's score: filled in with
  // ScheduleOptions::evaluate_all only (reports); a scheduling cycle keeps just the totals.
  std::vector<NodePluginScores> scores;
  bool fit_error = false;  // status is a FitError (diagnosis is meaningful)
};

struct ScheduleOptions {
  // Every node is evaluated and every feasible one scored (kubetaint check).
  bool evaluate_all = false;
};

// Decides for `pod` over `nodes`. `next_start_index` is the rotating scan offset kept between
// cycles (upstream nextStartNodeIndex).
ScheduleResult SchedulePod(Framework& fw, const NodeLister& nodes, const PodInfo& pod,
                           size_t* next_start_index, const ScheduleOptions& options = {});

// The node among the scored ones with the best total, ties broken as described above.
const NodeInfo* SelectHost(const PodInfo& pod, const std::vector<NodePluginScores>& scores);
// The same over `nodes` and their totals (same length, not empty).
const NodeInfo* SelectHost(const PodInfo& pod, std::span<const NodeInfo* const> nodes,
                           std::span<const int64_t> totals);

inline constexpr std::string_view kNoNodesAvailableMsg = "no nodes available to schedule pods";

}  // namespace kt::scheduler
