// The DaemonSet controller's rules that need no API server, each named after its upstream
// function (k/k pkg/controller/daemon/util/daemonset_util.go, daemon_controller.go,
// pkg/api/v1/pod/util.go, pkg/controller/controller_utils.go; semantics.md §8.6):
//
//   AddOrUpdateDaemonPodTolerations(&tolerations, host_network);   // the 6 (7) tolerations
//   DaemonPlacement placement(ds, gates);                          // once per DaemonSet sync
//   ShouldRun r = placement.ForNode(node);   // NodeShouldRunDaemonPod: shouldRun, continue
//   std::string hash = ComputeHash(template_json, ds.collision_count);
//
// Thread safety: pure functions; a DaemonPlacement is immutable once built.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "api/node_affinity.h"
#include "api/types.h"
#include "client/clock.h"
#include "core/feature_gates.h"
#include "core/status.h"
#include "core/taint.h"

namespace kt::controllers::daemonset {

inline constexpr std::string_view kControllerName = "daemonset-controller";

// apps/v1 label and annotation keys.
inline constexpr std::string_view kControllerRevisionHashLabel = "controller-revision-hash";
inline constexpr std::string_view kTemplateGenerationLabel = "pod-template-generation";
inline constexpr std::string_view kTemplateGenerationAnnotation =
    "deprecated.daemonset.template.generation";

// Event reasons (daemon_controller.go, controller_utils.go).
inline constexpr std::string_view kSelectingAllReason = "SelectingAll";
inline constexpr std::string_view kFailedDaemonPodReason = "FailedDaemonPod";
inline constexpr std::string_view kSucceededDaemonPodReason = "SucceededDaemonPod";
inline constexpr std::string_view kSuccessfulCreateReason = "SuccessfulCreate";
inline constexpr std::string_view kFailedCreateReason = "FailedCreate";
inline constexpr std::string_view kSuccessfulDeleteReason = "SuccessfulDelete";
inline constexpr std::string_view kFailedDeleteReason = "FailedDelete";

// Add-or-updates (by MatchToleration, replacing every match in place, else appending) the
// tolerations every daemon pod gets, in upstream's order: not-ready and unreachable NoExecute,
// disk-, memory-, pid-pressure and unschedulable NoSchedule, and network-unavailable NoSchedule
// when `host_network`; all `operator: Exists` without tolerationSeconds (semantics.md §8.6).
void AddOrUpdateDaemonPodTolerations(std::vector<Toleration>* tolerations, bool host_network);

// NodeShouldRunDaemonPod's answer for one node.
struct ShouldRun {
  bool should_run = false;               // a pod should be created if there is none
  bool should_continue_running = false;  // a pod that is there may stay

  bool operator==(const ShouldRun&) const = default;
};

// A DaemonSet's simulated daemon pod (upstream NewPod: the template with the daemon
// tolerations), built once and asked about each node. Holds its own copy of what it needs.
class DaemonPlacement {
 public:
  DaemonPlacement(const api::DaemonSet& ds, const FeatureGates& gates);
  DaemonPlacement(const DaemonPlacement&) = delete;
  DaemonPlacement& operator=(const DaemonPlacement&) = delete;

  // Upstream NodeShouldRunDaemonPod: a template nodeName or required node affinity (with
  // nodeSelector) that excludes the node → (false, false); an untolerated NoSchedule or
  // NoExecute taint → shouldRun false, and shouldContinueRunning only if no untolerated NoExecute
  // taint; else (true, true). spec.unschedulable is not looked at.
  ShouldRun ForNode(const api::Node& node) const;
  const std::vector<Toleration>& tolerations() const { return tolerations_; }

 private:
  api::Pod pod_;  // template spec with the daemon tolerations; affinity_ points into it
  std::vector<Toleration> tolerations_;
  std::string template_node_name_;
  std::optional<api::RequiredNodeAffinity> affinity_;
  bool comparison_operators_ = false;
};

// One call of NodeShouldRunDaemonPod (tests; a sync builds one DaemonPlacement).
ShouldRun NodeShouldRunDaemonPod(const api::Node& node, const api::DaemonSet& ds,
                                 const FeatureGates& gates = {});

// Upstream controller.ComputeHash: FNV-32a of the pod template, then the collision count, as
// rand.SafeEncodeString of the decimal sum. Upstream hashes Go's spew dump of the template
// struct; this hashes its JSON with object members sorted, so equal templates give equal hashes
// here but the strings differ from upstream's.
std::string ComputeHash(const rapidjson::Value& pod_template, std::optional<int32_t> collision);

// podutil.IsPodReady: the Ready condition is True.
bool IsPodReady(const api::Pod& pod);
// podutil.IsPodAvailable: ready, and for at least min_ready_seconds (by the Ready condition's
// lastTransitionTime) when that is > 0.
bool IsPodAvailable(const api::Pod& pod, int32_t min_ready_seconds, client::Time now);
// Upstream IsPodTerminal: phase Failed or Succeeded.
bool IsPodTerminal(const api::Pod& pod);

// util.GetTargetNodeName: spec.nodeName, or the single metadata.name value of an `In`
// matchFields requirement of the required node affinity; nullopt when neither says.
std::optional<std::string> GetTargetNodeName(const api::Pod& pod);

// intstr.GetScaledValueFromIntOrPercent(value, total, roundUp=true); an error for a string that
// is not "<digits>%".
Result<int> ScaledValueFromIntOrPercent(const api::IntOrString& value, int total);

// util.UnavailableCount and util.SurgeCount: 0 unless the strategy is RollingUpdate.
Result<int> UnavailableCount(const api::DaemonSet& ds, int number_to_schedule);
Result<int> SurgeCount(const api::DaemonSet& ds, int number_to_schedule);

// The pod the controller creates for `node` (upstream CreatePodTemplate, GetPodFromTemplate and
// ReplaceDaemonSetPodNodeNameNodeAffinity): the template's labels (plus controller-revision-hash
// and, with the DaemonSet's template generation annotation, pod-template-generation),
// annotations and finalizers; generateName "<ds>-"; the DaemonSet as controller owner
// (blockOwnerDeletion); the template's spec with the daemon tolerations and the required node
// affinity replaced by one term matching metadata.name of `node`. `ds_json` is the stored
// DaemonSet.
rapidjson::Document NewDaemonPod(const rapidjson::Value& ds_json, const api::DaemonSet& ds,
                                 std::string_view node, std::string_view hash);

}  // namespace kt::controllers::daemonset
