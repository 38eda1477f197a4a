// What the scheduler knows about pods and nodes (upstream framework PodInfo, NodeInfo,
// HostPortInfo) and the cluster events that wake parked pods (ClusterEvent, ActionType).
//
// A PodInfo is computed once per pod version and shared (immutable); a NodeInfo sums up the pods
// placed on a node (requests, host ports) so that filters and scores never walk the pods.
//
// Thread safety: PodInfo is immutable once built. NodeInfo is a value owned by the scheduler's
// cache and snapshot, touched by one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "api/types.h"
#include "api/uid_key.h"
#include "client/clock.h"
#include "scheduler/framework/resource.h"
#include "server/object.h"

namespace kt::scheduler {

using client::Duration;
using server::ObjectPtr;

// One host port a pod asks for or a node has in use.
struct HostPort {
  std::string ip;        // "0.0.0.0" when unset
  std::string protocol;  // "TCP" when unset
  int32_t port = 0;

  bool operator==(const HostPort&) const = default;
};

// The host ports in use on a node (upstream HostPortInfo).
class HostPortInfo {
 public:
  void Add(const HostPort& p) { ports_.push_back(p); }
  void Remove(const HostPort& p);
  // Whether `p` conflicts: same protocol and port on the same IP, where 0.0.0.0 on either side
  // matches every IP.
  bool CheckConflict(const HostPort& p) const;
  bool empty() const { return ports_.empty(); }

 private:
  std::vector<HostPort> ports_;
};

// A pod as the scheduler sees it. `object` holds the API object (JSON and typed view).
struct PodInfo {
  ObjectPtr object;
  Resource requests;                 // PodRequests: what filtering compares with allocatable
  NonZeroRequest non_zero;           // cpu and memory with scoring defaults
  std::vector<HostPort> host_ports;  // containers' and sidecars' hostPort > 0
  int32_t priority = 0;              // spec.priority, 0 when unset
  api::UidKey uid_key;               // metadata.uid as the cache's and queue's maps key it

  const api::Pod& pod() const { return *object->As<api::Pod>(); }
  const std::string& uid() const { return pod().meta.uid; }
  const std::string& name() const { return pod().meta.name; }
  const std::string& namespace_() const { return pod().meta.namespace_; }
};
using PodInfoPtr = std::shared_ptr<const PodInfo>;

// Builds a PodInfo from a pod object (which must hold an api::Pod).
PodInfoPtr NewPodInfo(ObjectPtr object);
// The pod's host ports, in upstream's order (sidecar init containers, then containers).
std::vector<HostPort> PodHostPorts(const api::Pod& pod);
// spec.priority, or 0 (upstream corev1helpers.PodPriority).
int32_t PodPriority(const api::Pod& pod);

// A node with the pods placed on it.
class NodeInfo {
 public:
  NodeInfo() = default;
  explicit NodeInfo(ObjectPtr node) { SetNode(std::move(node)); }

  // Sets (or replaces) the node object; allocatable is recomputed.
  void SetNode(ObjectPtr node);
  const api::Node* node() const { return node_; }
  const ObjectPtr& node_object() const { return node_object_; }
  const std::string& name() const { return name_; }
  // A placeholder's name, before its node arrives (SetNode sets it from the node).
  void set_name(std::string name);
  // FNV-1a of the name (the tie-break between equal scores mixes it with the pod's).
  uint64_t name_hash() const { return name_hash_; }
  // The node's spec.unschedulable and whether it has taints, kept here beside the totals so the
  // filters of a cycle read one NodeInfo, not the node's whole view.
  bool unschedulable() const { return unschedulable_; }
  bool has_taints() const { return has_taints_; }

  void AddPod(PodInfoPtr pod);
  // Removes the pod with this UID; false if it is not here.
  bool RemovePod(std::string_view uid);
  // The same for the very PodInfo added, found by address: no pod's UID is read (each compare
  // would load another pod's memory).
  bool RemovePod(const PodInfo* pod);
  // Puts `now` where `before` (the very PodInfo added) was, its requests and ports accounted in
  // place of the old ones; false, and nothing changed, if `before` is not here.
  bool ReplacePod(const PodInfo* before, PodInfoPtr now);
  const std::vector<PodInfoPtr>& pods() const { return pods_; }

  // Asks the CPU to load what the filters and scores read, ahead of a scan reaching this node.
  void Prefetch() const {
    const char* p = reinterpret_cast<const char*>(this);
    __builtin_prefetch(p);
    __builtin_prefetch(p + 64);
    __builtin_prefetch(p + 128);
    __builtin_prefetch(p + 192);
  }

  const Resource& allocatable() const { return allocatable_; }
  const Resource& requested() const { return requested_; }
  const NonZeroRequest& non_zero_requested() const { return non_zero_requested_; }
  const HostPortInfo& used_ports() const { return used_ports_; }

  // Changes whenever the node or its pods change.
  uint64_t generation() const { return generation_; }

  // A score one plugin computed for this node from what the node holds and a pod's request
  // (two numbers): it stands while the node's generation does, for the same plugin and request.
  // Replicas ask the same, and between two of them only the nodes they went to change, so a
  // scoring loop computes again only those. Scheduler thread only.
  struct ScoreMemo {
    uint64_t owner = 0;  // NewScoreMemoOwner's, one per plugin instance
    uint64_t generation = 0;
    int64_t a = 0, b = 0;
    int64_t score = 0;
  };
  enum MemoSlot : int { kResourcesFitSlot, kBalancedAllocationSlot, kMemoSlots };
  // The remembered score for (owner, a, b), if it stands.
  // A token for a plugin instance's memos, never handed out twice (nor 0).
  static uint64_t NewScoreMemoOwner();
  const int64_t* RememberedScore(MemoSlot slot, uint64_t owner, int64_t a, int64_t b) const {
    const ScoreMemo& m = memo_[slot];
    return m.owner == owner && m.generation == generation_ && m.a == a && m.b == b ? &m.score
                                                                                   : nullptr;
  }
  void RememberScore(MemoSlot slot, uint64_t owner, int64_t a, int64_t b, int64_t score) const {
    memo_[slot] = ScoreMemo{owner, generation_, a, b, score};
  }

  // Id of the node's taint list among the distinct taint lists the cache's nodes have: nodes
  // with equal taints (timeAdded aside) share an id, so a plugin can decide once per taint list.
  // A table by set is indexed by SetSlot(id) and checks the whole id (scheduler/set_ids.h).
  // 0: not classified (a node outside the cache).
  uint32_t taint_set() const { return taint_set_; }
  void set_taint_set(uint32_t id) { taint_set_ = id; }

  // Id of the node's labels, `kubernetes.io/hostname` aside, among the distinct label lists the
  // cache's nodes have: nodes that differ only in their hostname label share an id, so a plugin
  // whose verdict reads other labels only can decide once per id, as for taint_set. 0: not
  // classified.
  uint32_t label_set() const { return label_set_; }
  void set_label_set(uint32_t id) { label_set_ = id; }

 private:
  void Touch();
  // A pod's requests and host ports added to the node's totals, or taken off.
  void Account(const PodInfo& pod);
  void Unaccount(const PodInfo& pod);

  // What every filter and score of a cycle reads comes first, in the first three cache lines
  // (see Prefetch); the rest is read only on failures, binds and events.
  uint32_t taint_set_ = 0;
  uint32_t label_set_ = 0;
  uint64_t name_hash_ = 0;
  bool unschedulable_ = false;
  bool has_taints_ = false;
  std::vector<PodInfoPtr> pods_;
  Resource allocatable_;
  Resource requested_;
  NonZeroRequest non_zero_requested_;
  uint64_t generation_ = 0;
  mutable ScoreMemo memo_[kMemoSlots];
  std::string name_;
  HostPortInfo used_ports_;
  ObjectPtr node_object_;
  const api::Node* node_ = nullptr;
};

// --- Cluster events (upstream fwk.ClusterEvent) -----------------------------------------------

enum class EventResource : uint8_t {
  kPod,               // in registrations: any pod
  kAssignedPod,       // a pod bound to a node
  kUnschedulablePod,  // a pod not bound yet
  kNode,
  kWildcard,
};

// Action bits (upstream fwk.ActionType).
enum ActionType : uint32_t {
  kAdd = 1u << 0,
  kDelete = 1u << 1,
  kUpdateNodeAllocatable = 1u << 2,
  kUpdateNodeLabel = 1u << 3,
  kUpdateNodeTaint = 1u << 4,
  kUpdateNodeCondition = 1u << 5,
  kUpdateNodeAnnotation = 1u << 6,
  kUpdatePodLabel = 1u << 8,
  kUpdatePodScaleDown = 1u << 9,
  kUpdatePodToleration = 1u << 10,
  kUpdatePodSchedulingGatesEliminated = 1u << 11,
  kUpdate = kUpdateNodeAllocatable | kUpdateNodeLabel | kUpdateNodeTaint | kUpdateNodeCondition |
            kUpdateNodeAnnotation | kUpdatePodLabel | kUpdatePodScaleDown | kUpdatePodToleration |
            kUpdatePodSchedulingGatesEliminated,
  kAll = kAdd | kDelete | kUpdate,
};

struct ClusterEvent {
  EventResource resource = EventResource::kWildcard;
  uint32_t action = kAll;

  // Upstream's label: "NodeAdd", "AssignedPodDelete", "UnschedulableTimeout", ...
  std::string Label() const;
  bool IsWildcard() const { return resource == EventResource::kWildcard; }
};

// Whether an incoming event matches a plugin's registration (upstream MatchClusterEvents).
bool MatchClusterEvents(const ClusterEvent& registered, const ClusterEvent& incoming);

// The events a node update stands for (upstream NodeSchedulingPropertiesChange); none for an
// update that changes nothing the scheduler cares about (a heartbeat, a cordon).
std::vector<ClusterEvent> NodeSchedulingPropertiesChange(const api::Node& new_node,
                                                         const api::Node& old_node);
// The events a pod update stands for (upstream PodSchedulingPropertiesChange); a generic Update
// when nothing specific changed.
std::vector<ClusterEvent> PodSchedulingPropertiesChange(const api::Pod& new_pod,
                                                        const api::Pod& old_pod);

class Framework;

// A pod in the scheduling queue (upstream QueuedPodInfo).
struct QueuedPodInfo {
  PodInfoPtr pod;
  Framework* framework = nullptr;  // the profile that schedules it
  uint64_t sequence = 0;           // queue order among equals
  client::Time timestamp{};        // when it was (re-)added to the queue; orders equal priorities
  client::Time initial_attempt{};  // when it was first popped
  int attempts = 0;
  int unschedulable_count = 0;        // failures with a rejecting plugin
  int consecutive_errors = 0;         // failures with an error, since the last rejection
  client::Time backoff_expiration{};  // computed lazily; zero: not yet
  // The plugins that rejected it in its last attempt; only their events can help.
  std::set<std::string> unschedulable_plugins;
  std::set<std::string> pending_plugins;
  // The PreEnqueue plugin keeping it out of the active queue ("" when none), and its events.
  std::string gating_plugin;
  std::vector<ClusterEvent> gating_events;
};

}  // namespace kt::scheduler
