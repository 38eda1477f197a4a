// `kubetaint check`: "why can — or can't — my pod run there, and where will it go?"
//
// Evaluates pods with the scheduler's own framework and plugins (scheduler/evaluate.h), so the
// answer equals the live scheduler's: per node, every Filter plugin's verdict and every Score
// plugin's score; the node the scheduler would pick; and when none fits, the FailedScheduling
// message and what preemption would do. It also says what a node's NoExecute taints mean for a
// pod running there (evict now, after N seconds, or stay), as the taint eviction controller.
//
// The cluster comes from manifests (-f), from a live API server (--server, --kubeconfig), or
// both: manifest nodes replace the server's of the same name, and --taint what-ifs change nodes
// before evaluating. Pods bound to nodes occupy their resources; the pods reported are the
// manifests' pods, or with a server and no pod manifests, the server's pending pods.
//
// Thread safety: pure functions over their arguments (RunCheck does network I/O with --server).
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

// What the taint eviction controller would do to `pod` on `node` (first matching toleration per
// NoExecute taint, then the smallest tolerationSeconds).
EvictionVerdict EvictionFor(const api::Pod& pod, const api::Node& node, const FeatureGates& gates);

struct PluginVerdict {
  std::string plugin;
  std::string code;  // "Success", "Unschedulable", "UnschedulableAndUnresolvable", "Skip"
  std::vector<std::string> reasons;
};

struct PluginScore {
  std::string plugin;
  int64_t raw = 0;
  int64_t normalized = 0;
  int64_t weight = 0;
  int64_t weighted = 0;
};

struct NodeVerdict {
  std::string node;
  bool feasible = true;
  std::vector<std::string> reasons;        // why not, one per failing plugin; empty when feasible
  std::vector<PluginVerdict> filters;      // every Filter plugin's verdict
  std::optional<Taint> untolerated_taint;  // first untolerated NoSchedule/NoExecute taint
  int prefer_no_schedule_untolerated = 0;
  std::optional<int64_t> score;     // total, for feasible nodes
  std::vector<PluginScore> scores;  // for feasible nodes
  bool bound_here = false;          // the pod's spec.nodeName is this node
  EvictionVerdict if_running;       // for every node; reported for the bound one
};

struct PodReport {
  std::string namespace_;
  std::string name;
  std::string node_name;  // spec.nodeName, empty when unbound
  std::string scheduler_name;
  bool handled = true;  // a profile has the pod's schedulerName
  std::vector<NodeVerdict> nodes;
  std::string selected_node;         // where the scheduler would put it now
  std::string message;               // the FailedScheduling message when no node fits
  std::string nominated_node;        // preemption's choice, if it would help
  std::vector<std::string> victims;  // the pods preemption would evict there

  bool HasFeasibleNode() const;
};

// What a --taint what-if on a node means for the pods running there, as the taint eviction
// controller would act on it.
struct PodEviction {
  std::string namespace_;
  std::string name;
  EvictionVerdict verdict;
  // The node had NoExecute taints the pod tolerates for a while already: the controller keeps
  // the countdown it started then, which ends at most `verdict.after_seconds` from now.
  bool countdown_running = false;
};

struct NodeEvictionPreview {
  std::string node;
  std::vector<Taint> no_execute;  // the node's NoExecute taints after the change
  std::vector<PodEviction> pods;  // the pods bound to it, by namespace and name
};

struct CheckReport {
  std::vector<PodReport> pods;
  std::vector<NodeEvictionPreview> evictions;  // for each node a --taint changed
  size_t node_count = 0;
  std::vector<std::string> notes;  // things worth knowing about the input
};

struct CheckOptions {
  std::vector<std::string> files;
  std::string output = "text";  // text | json
  FeatureGates gates;
  // What-if taint changes, each "NODE=SPEC" or the two values "NODE" "SPEC", with SPEC in the
  // `kubectl taint` grammar (key=value:Effect, key:Effect-, key-), as with --overwrite.
  std::vector<std::string> taint_changes;
  // A live cluster: --server URL, or --kubeconfig (and --context).
  bool live = false;
  std::string server;
  std::string kubeconfig;
  std::string context;
  std::string scheduler_config;  // --config: the scheduler's KubeSchedulerConfiguration
};

// Loads the input, validates nodes' taints and pods' tolerations as the API server would,
// applies the what-ifs and evaluates. Bad input is an error naming the file, the document and
// the field; the caller prints it and exits 2.
Result<CheckReport> RunCheck(const CheckOptions& options);

// 0 when every unbound pod the scheduler handles has a feasible node, 1 otherwise.
int CheckExitCode(const CheckReport& report);

void WriteCheckText(const CheckReport& report, std::ostream& out);
void WriteCheckJson(const CheckReport& report, std::ostream& out);

}  // namespace kt::cli
