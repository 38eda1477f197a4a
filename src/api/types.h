// Typed views of the Kubernetes objects the control plane interprets: Node, Pod, Namespace,
// Event, Lease, PriorityClass, DaemonSet.
//
// An object is JSON bytes plus a typed view (DESIGN.md). The view holds only the fields that
// kubetaint reads; everything else stays in the JSON document, which is what is stored and
// served. Views are decoded with api/codec.h and never encoded back over a document: changes to
// an existing object are made on its document (patches, or the setters in api/codec.h), and the
// view is decoded again.
//
// Thread safety: plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/interned.h"
#include "api/quantity.h"
#include "core/taint.h"

namespace kt::api {

// A string map kept sorted by key (labels, annotations, nodeSelector). Small and cache-friendly;
// lookups are binary searches. Its entries are a SharedList: equal maps share them once
// interned (Intern), and Set copies shared entries first.
class StringMap {
 public:
  using Entry = std::pair<std::string, std::string>;

  // Inserts or replaces.
  void Set(std::string key, std::string value);
  // The value for `key`, or nullptr.
  const std::string* Get(std::string_view key) const;
  bool Has(std::string_view key) const { return Get(key) != nullptr; }
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  const std::vector<Entry>& entries() const { return entries_; }
  auto begin() const { return entries_.begin(); }
  auto end() const { return entries_.end(); }
  // Shares the entries of an equal interned map (see api/interned.h).
  void Intern() { entries_.Intern(); }

  bool operator==(const StringMap&) const = default;

 private:
  SharedList<Entry> entries_;
};

// Resource name → quantity, sorted by name ("cpu", "memory", "pods", "nvidia.com/gpu", ...).
class ResourceList {
 public:
  using Entry = std::pair<std::string, Quantity>;
  void Set(std::string name, Quantity q);
  const Quantity* Get(std::string_view name) const;
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  const std::vector<Entry>& entries() const { return entries_; }
  auto begin() const { return entries_.begin(); }
  auto end() const { return entries_.end(); }

  // Same names and equal values (formats ignored, as upstream Quantity.Equal).
  bool operator==(const ResourceList&) const = default;

 private:
  std::vector<Entry> entries_;
};

struct OwnerReference {
  std::string api_version;
  std::string kind;
  std::string name;
  std::string uid;
  bool controller = false;
  bool block_owner_deletion = false;

  bool operator==(const OwnerReference&) const = default;
};
size_t HashValue(const OwnerReference& o);

struct ObjectMeta {
  std::string name;
  std::string generate_name;
  std::string namespace_;
  std::string uid;
  std::string resource_version;
  int64_t generation = 0;
  std::string creation_timestamp;                 // RFC 3339, empty when unset
  std::optional<std::string> deletion_timestamp;  // set once deletion has begun
  std::optional<int64_t> deletion_grace_period_seconds;
  StringMap labels;
  StringMap annotations;
  SharedList<OwnerReference> owner_references;
  SharedList<std::string> finalizers;
};

// A label selector requirement, as in nodeSelectorTerms and metav1.LabelSelector.
struct SelectorRequirement {
  std::string key;
  std::string op;  // In, NotIn, Exists, DoesNotExist, Gt, Lt
  std::vector<std::string> values;
};

struct NodeSelectorTerm {
  std::vector<SelectorRequirement> match_expressions;
  std::vector<SelectorRequirement> match_fields;  // only metadata.name is supported upstream
};

struct NodeSelector {
  std::vector<NodeSelectorTerm> terms;  // ORed
};

struct PreferredSchedulingTerm {
  int32_t weight = 0;
  NodeSelectorTerm preference;
};

struct NodeAffinity {
  std::optional<NodeSelector> required;  // requiredDuringSchedulingIgnoredDuringExecution
  std::vector<PreferredSchedulingTerm> preferred;
};

struct LabelSelector {
  StringMap match_labels;
  std::vector<SelectorRequirement> match_expressions;
};

// A container port; only host ports matter to the scheduler (NodePorts).
struct ContainerPort {
  int32_t container_port = 0;
  int32_t host_port = 0;
  std::string protocol;  // "" is TCP
  std::string host_ip;   // "" is 0.0.0.0

  bool operator==(const ContainerPort&) const = default;
};

struct Container {
  std::string name;
  ResourceList requests;
  ResourceList limits;
  std::vector<ContainerPort> ports;
  // Init containers only: "Always" makes it a sidecar (restartable init container).
  std::string restart_policy;

  bool operator==(const Container&) const = default;
};
size_t HashValue(const Container& c);
// Equal, with every quantity in the same format.
bool Identical(const Container& a, const Container& b);

struct PodSpec {
  std::string node_name;
  StringMap node_selector;
  std::optional<NodeAffinity> node_affinity;
  SharedList<Toleration> tolerations;
  std::optional<int32_t> priority;
  std::string priority_class_name;
  std::string scheduler_name;
  std::string preemption_policy;
  bool host_network = false;
  std::optional<int64_t> termination_grace_period_seconds;
  SharedList<Container> containers;
  SharedList<Container> init_containers;
  ResourceList overhead;
  // spec.resources.requests (pod-level resources).
  ResourceList resource_requests;
  // spec.schedulingGates[*].name
  SharedList<std::string> scheduling_gates;
  // Read only by field selectors (spec.restartPolicy, spec.serviceAccountName).
  std::string restart_policy;
  std::string service_account_name;
};

struct Condition {
  std::string type;
  std::string status;  // "True", "False", "Unknown"
  std::string reason;
  std::string message;
  std::string last_transition_time;
  std::string last_heartbeat_time;  // nodes only
  std::string last_probe_time;      // pods only
  int64_t observed_generation = 0;  // pods only; 0: unset
};

struct PodStatus {
  std::string phase;  // Pending, Running, Succeeded, Failed, Unknown
  std::vector<Condition> conditions;
  std::string nominated_node_name;
  std::string host_ip;
  std::string pod_ip;
  std::vector<std::string> pod_ips;  // status.podIPs[*].ip; [0] is the status.podIP field label
  std::string start_time;
};

struct Pod {
  ObjectMeta meta;
  PodSpec spec;
  PodStatus status;
};

struct NodeSpec {
  std::vector<Taint> taints;
  bool unschedulable = false;
  std::string pod_cidr;
  std::string provider_id;
};

struct NodeStatus {
  std::vector<Condition> conditions;
  ResourceList capacity;
  ResourceList allocatable;
  std::string kubelet_version;  // status.nodeInfo.kubeletVersion
};

struct Node {
  ObjectMeta meta;
  NodeSpec spec;
  NodeStatus status;
};

struct Namespace {
  ObjectMeta meta;
  std::string phase;  // Active, Terminating
};

struct ObjectReference {
  std::string api_version;
  std::string kind;
  std::string namespace_;
  std::string name;
  std::string uid;
  std::string resource_version;
  std::string field_path;

  bool operator==(const ObjectReference&) const = default;
};

struct Event {
  ObjectMeta meta;
  ObjectReference involved_object;
  std::string reason;
  std::string message;
  std::string type;  // Normal, Warning
  int32_t count = 0;
  std::string source_component;
  std::string source_host;
  std::string first_timestamp;
  std::string last_timestamp;
  std::string event_time;
  std::string reporting_component;
  std::string reporting_instance;
  std::string action;
  std::optional<ObjectReference> related;
  // series (events.k8s.io/v1 repeats); count 0: no series.
  int32_t series_count = 0;
  std::string series_last_observed_time;
};

struct Lease {
  ObjectMeta meta;
  std::string holder_identity;
  std::optional<int32_t> lease_duration_seconds;
  std::string acquire_time;
  std::string renew_time;
  std::optional<int32_t> lease_transitions;
};

struct PriorityClass {
  ObjectMeta meta;
  int32_t value = 0;
  bool global_default = false;
  std::string preemption_policy;
  std::string description;
};

struct PodTemplateSpec {
  ObjectMeta meta;
  PodSpec spec;
};

// intstr.IntOrString: `1` or `"10%"` (maxUnavailable, maxSurge).
struct IntOrString {
  bool is_string = false;
  int32_t int_value = 0;
  std::string string_value;

  bool operator==(const IntOrString&) const = default;
};

struct DaemonSet {
  ObjectMeta meta;
  std::optional<LabelSelector> selector;
  PodTemplateSpec template_;
  int32_t min_ready_seconds = 0;
  std::string update_strategy_type;  // RollingUpdate, OnDelete
  // spec.updateStrategy.rollingUpdate.maxUnavailable / maxSurge (the API server defaults them
  // to 1 and 0 for RollingUpdate).
  std::optional<IntOrString> max_unavailable;
  std::optional<IntOrString> max_surge;
  int32_t current_number_scheduled = 0;
  int32_t desired_number_scheduled = 0;
  int32_t number_misscheduled = 0;
  int32_t number_ready = 0;
  int64_t observed_generation = 0;
  int32_t updated_number_scheduled = 0;
  int32_t number_available = 0;
  int32_t number_unavailable = 0;
  std::optional<int32_t> collision_count;
};

}  // namespace kt::api
