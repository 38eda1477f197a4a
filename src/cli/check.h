// `kubetaint check`: "why can — or can't — my pod run there?"
//
// Reads Nodes and Pods from manifests and, for every pod and node, reports whether the pod's
// tolerations admit it (naming the first untolerated NoSchedule/NoExecute taint), how many
// PreferNoSchedule taints it does not tolerate, whether nodeSelector and required node affinity
// match, whether a cordoned node admits it, and what the node's NoExecute taints mean for a pod
// running there (evict now, evict after N seconds, or stay).
//
// Thread safety: pure functions over their arguments.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "api/types.h"
#include "core/feature_gates.h"
#include "core/status.h"
#include "core/taint.h"

namespace kt::cli {

// What a node's NoExecute taints mean for a pod running on it.
enum class Eviction : unsigned char { kStays, kNow, kAfter };

struct EvictionVerdict {
  Eviction eviction = Eviction::kStays;
  int64_t after_seconds = 0;  // for kAfter
};

struct NodeVerdict {
  std::string node;
  bool feasible = true;
  std::vector<std::string> reasons;        // why not feasible; empty when feasible
  std::optional<Taint> untolerated_taint;  // first untolerated NoSchedule/NoExecute taint
  int prefer_no_schedule_untolerated = 0;
  bool bound_here = false;  // the pod's spec.nodeName is this node
  // What would happen to the pod if it ran on this node (computed for every node; the JSON
  // report shows it only for the node the pod is bound to).
  EvictionVerdict if_running;
};

struct PodReport {
  std::string namespace_;
  std::string name;
  std::string node_name;  // spec.nodeName, empty when unbound
  std::vector<NodeVerdict> nodes;

  bool HasFeasibleNode() const;
};

// The verdict for one pod on one node.
NodeVerdict CheckPodOnNode(const api::Pod& pod, const api::Node& node, const FeatureGates& gates);

// What `node`'s NoExecute taints mean for `pod` running on it (upstream taint eviction
// controller: first matching toleration per taint, then the smallest tolerationSeconds).
EvictionVerdict EvictionFor(const api::Pod& pod, const api::Node& node, const FeatureGates& gates);

std::vector<PodReport> CheckPods(const std::vector<api::Pod>& pods,
                                 const std::vector<api::Node>& nodes, const FeatureGates& gates);

// Exit status of `kubetaint check`: 0 when every unbound pod has a feasible node, 1 otherwise.
int CheckExitCode(const std::vector<PodReport>& reports);

void WriteCheckText(const std::vector<PodReport>& reports, size_t node_count, std::ostream& out);
void WriteCheckJson(const std::vector<PodReport>& reports, std::ostream& out);

struct CheckOptions {
  std::vector<std::string> files;
  std::string output = "text";  // text | json
  FeatureGates gates;
  // What-if taint changes applied before checking, each "NODE=SPEC" with SPEC in the
  // `kubectl taint` grammar (key=value:Effect, key:Effect-, key-), as with --overwrite.
  std::vector<std::string> taint_changes;
};

// Loads the manifests, validates the nodes' taints and the pods' tolerations, applies the
// what-if taint changes and checks. Bad input is an error naming the file, the document and the
// field; the caller prints it and exits 2.
Result<std::vector<PodReport>> RunCheck(const CheckOptions& options, size_t* node_count);

}  // namespace kt::cli
