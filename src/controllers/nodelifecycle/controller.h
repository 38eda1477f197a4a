// The node lifecycle controller (kube-controller-manager's `node-lifecycle-controller`,
// semantics.md §7): it watches nodes' heartbeats, marks silent nodes Unknown, keeps the
// condition taints on nodes, and taints not-ready and unreachable nodes NoExecute — zone by zone,
// at a safe rate — so that the taint eviction controller moves their pods.
//
//   Controller::Options o;
//   o.clock = clock; o.client = client;
//   o.nodes = NewCacheListerWatcher(&registry.cache(Resource::kNodes));
//   o.pods = NewCacheListerWatcher(&registry.cache(Resource::kPods));
//   o.leases = NewCacheListerWatcher(&registry.cache(Resource::kLeases));
//   auto c = std::make_unique<Controller>(std::move(o));
//   c->Start();                      // lists, watches, and runs on its own thread
//
// What it does (upstream node_lifecycle_controller.go, Kubernetes 1.35):
//   - Health, every node_monitor_period: a node's probe time moves on when its Ready
//     condition's lastHeartbeatTime changes or its Lease (kube-node-lease/<node>) is renewed.
//     Once now is past probe time + node_monitor_grace_period (node_startup_grace_period while
//     the node never posted Ready), Ready, MemoryPressure, DiskPressure and PIDPressure become
//     Unknown through nodes/status (reasons NodeStatusNeverUpdated / NodeStatusUnknown). When
//     Ready leaves True, the event NodeNotReady and Ready=False on the node's pods (pods/status).
//     New and removed nodes get the events RegisteredNode and RemovingNode.
//   - NoSchedule taints, on every node change: not-ready, unreachable, memory-pressure,
//     disk-pressure, network-unavailable and pid-pressure from the conditions, unschedulable for
//     a cordoned node (taints.h).
//   - NoExecute taints: a node whose Ready was False (Unknown) at the start of a pass gets
//     node.kubernetes.io/not-ready (unreachable):NoExecute through its zone's rate-limited queue,
//     or at once when it has the other one; a Ready node loses both. The queues are tried every
//     100 ms, each with a token bucket of burst 1 at the rate its zone's state calls for
//     (zones.h); when every zone is in FullDisruption the NoExecute taints are removed from all
//     nodes and tainting stops until a node is Ready again, when every probe time restarts. A
//     node seen for the first time (so every node when the controller starts) loses these two
//     taints too, and gets them back through the queue if it is still not Ready.
//
// Taint writes are merge patches of the whole spec.taints with the resourceVersion they were
// computed from as a precondition, so a taint another client added meanwhile is never lost: a
// conflict re-reads the node and applies the change again (up to 5 tries, 100 ms apart).
// Writes to one node's taints run one at a time. Status writes are updates (with their
// resourceVersion), retried for 100 ms on a fresh read, as upstream.
//
// Where this differs from upstream, on purpose: a node deleted and re-created under its name
// (another UID) counts as removed and registered; health records of removed nodes are dropped; an
// added taint whose key, effect and value are already there keeps its timeAdded; a failed
// NoSchedule write is retried with backoff (upstream waits for the next node change); the add and
// the removal of a swap are one write.
//
// Threading: the controller runs on one thread of its own (Start), which dispatches its
// informers and handles every event, timer and write completion; or, with `manual`, wherever
// RunPending is called (tests and simulations). Public methods are thread-safe, but the
// introspection ones must be called from the controller's thread, or between RunPending calls.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "api/types.h"
#include "client/client.h"
#include "client/clock.h"
#include "client/event_recorder.h"
#include "client/informer.h"
#include "client/rate_limiter.h"
#include "controllers/mailbox.h"
#include "controllers/nodelifecycle/rate_limited_queue.h"
#include "controllers/nodelifecycle/taint_writer.h"
#include "controllers/nodelifecycle/taints.h"
#include "controllers/nodelifecycle/zones.h"

namespace kt::controllers::nodelifecycle {

inline constexpr std::string_view kControllerName = "node-lifecycle-controller";
// The events' source component (upstream's recorder for this controller).
inline constexpr std::string_view kEventComponent = "node-controller";
inline constexpr std::string_view kNodeLeaseNamespace = "kube-node-lease";

// Upstream's NodeEvictionPeriod: how often the zones' NoExecute queues are tried.
inline constexpr client::Duration kNodeEvictionPeriod = std::chrono::milliseconds(100);

class Controller {
 public:
  struct Options {
    client::Clock* clock = nullptr;
    client::Client* client = nullptr;
    std::unique_ptr<client::ListerWatcher> nodes;
    std::unique_ptr<client::ListerWatcher> pods;
    // Leases; only those in kube-node-lease are read.
    std::unique_ptr<client::ListerWatcher> leases;
    // kube-controller-manager's flags, with their defaults.
    client::Duration node_monitor_period = std::chrono::seconds(5);
    client::Duration node_monitor_grace_period = std::chrono::seconds(50);
    client::Duration node_startup_grace_period = std::chrono::seconds(60);
    float node_eviction_rate = 0.1f;
    float secondary_node_eviction_rate = 0.01f;
    float unhealthy_zone_threshold = 0.55f;
    int32_t large_cluster_size_threshold = 50;
    // The event source's host; upstream's controller leaves it empty.
    std::string host;
    // No thread: RunPending drives the controller (tests, simulations).
    bool manual = false;
    // Where the events go; default: a core/v1 recorder with source component node-controller.
    std::unique_ptr<client::EventRecorder> recorder;
  };

  explicit Controller(Options options);
  ~Controller();  // stops
  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

  // Lists and watches; with a thread, starts it. The first health pass runs once the informers
  // have synced, then every node_monitor_period after the previous one ended.
  void Start();
  void Stop();
  bool HasSynced() const;

  // Manual mode: handles everything that has arrived (informer changes, due timers, finished
  // writes) without waiting; returns how many things it handled.
  size_t RunPending();
  // Calls to the API server under way (reads and writes; events are not counted).
  size_t InFlight() const { return in_flight_.load(std::memory_order_acquire); }

  // Manual mode: one health pass now, as the period timer runs it (for benchmarks); does nothing
  // while a pass waits for its status writes.
  void MonitorNodeHealth();

  // Introspection for tests and benchmarks (see Threading).
  std::optional<ZoneState> ZoneStateOf(std::string_view zone) const;
  // Zone keys with a state, sorted.
  std::vector<std::string> Zones() const;
  // Nodes queued for a NoExecute taint in `zone` (not yet tainted), in the queue's order.
  std::vector<std::string> QueuedForTainting(std::string_view zone) const;
  // The NoExecute tainting rate of `zone` now (nodes per second); nullopt for an unknown zone.
  std::optional<float> EvictionRateOf(std::string_view zone) const;
  // The probe timestamp of `node`, if the controller has a health record of it.
  std::optional<client::Time> ProbeTimestamp(std::string_view node) const;
  // Health passes completed so far.
  uint64_t passes() const { return passes_; }

 private:
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  template <class V>
  using StringMap = std::unordered_map<std::string, V, StringHash, std::equal_to<>>;

  // A Ready condition's status.
  enum class ReadyStatus : unsigned char { kNone, kTrue, kFalse, kUnknown, kOther };
  static ReadyStatus ReadyStatusOf(const api::Condition* ready);
  // A Lease as the health record keeps it: which version was seen, and its renewTime.
  struct SavedLease {
    store::Revision revision = 0;  // 0: none
    std::optional<client::Time> renew_time;
  };
  // Upstream's nodeHealthData: when the node was last heard of, and what was heard.
  struct NodeHealth {
    client::Time probe_timestamp{};
    client::Time ready_transition_timestamp{};
    SavedLease lease;                       // the saved Lease
    std::unique_ptr<api::Condition> ready;  // the saved status's Ready condition; null: none
    // The node revision `ready` was copied from (0: written by the controller): an object of
    // that revision has that very condition, so there is nothing to compare.
    store::Revision ready_revision = 0;
  };
  // Everything the controller keeps per node name. Entries live while the node or its Lease is
  // in the informers; a health pass forgets a deleted node. What every pass reads comes first.
  struct NodeInfo {
    server::ObjectPtr node;  // the informer's copy; null once deleted
    SavedLease lease;        // kube-node-lease/<name> (revision 0: none)
    // ready, ready_status, zone_id, excluded, noexecute_tainted and zone are read from the node
    // object of this revision when it arrives (Refresh).
    store::Revision cached_revision = 0;
    NodeHealth health;
    const api::Condition* ready = nullptr;  // the Ready condition, in *node; null: none
    ReadyStatus ready_status = ReadyStatus::kNone;
    int zone_id = 0;                 // index into zone_names_
    bool excluded = false;           // node.kubernetes.io/exclude-disruption
    bool noexecute_tainted = false;  // has unreachable or not-ready NoExecute
    bool known = false;              // in upstream's knownNodeSet (registered)
    bool has_health = false;
    bool retry = false;      // upstream's nodesToRetry: its pods still to be marked not Ready
    bool tainting = false;   // possibly known to its zone's NoExecute queue
    bool recreated = false;  // deleted and created again under its name since the last pass
    std::string uid;         // of the registered node
    std::string zone;
  };
  // What a pass keeps of a node that is (or may be) forced to Unknown.
  struct Forced {
    api::Condition never_posted;             // the stand-in Ready of a node without one
    std::vector<api::Condition> conditions;  // the node's, once forced to Unknown
    std::vector<api::Condition> write;       // those of them that changed, to write
  };
  // One node of a health pass. The Ready conditions point into the node object, or into
  // `forced`, which stays where it is.
  struct PassNode {
    server::ObjectPtr node;
    NodeInfo* info = nullptr;  // stable: entries of infos_ are erased only at a pass's start
    const std::string* name = nullptr;         // infos_'s key, as stable
    const api::Condition* observed = nullptr;  // Ready as the pass found it
    const api::Condition* current = nullptr;   // Ready after the pass; null: none
    ReadyStatus observed_status = ReadyStatus::kNone;
    ReadyStatus current_status = ReadyStatus::kNone;
    std::unique_ptr<Forced> forced;
    SavedLease observed_lease;
    int attempts = 0;
    bool skip = false;  // its status could not be written: left out of the pass (upstream)
  };
  struct Pass {
    std::vector<PassNode> nodes;
    size_t pending = 0;  // status writes not finished
  };
  struct PodKey {
    std::string namespace_;
    std::string name;
  };

  void Run();
  size_t Round();
  // Health (monitorNodeHealth, tryUpdateNodeHealth).
  // Brings the fields cached from info.node up to date.
  void Refresh(NodeInfo& info);
  bool TryUpdateNodeHealth(PassNode& pn, NodeInfo& info, client::Time now);
  void WriteStatus(size_t index);
  void StatusWritten(size_t index, server::ApiResult<store::Bytes> result);
  void RetryStatus(size_t index);
  void StatusDone(size_t index);
  void FinishPass();
  void SchedulePass();
  void ProcessTaintBaseEviction(const server::ObjectPtr& node, NodeInfo& info,
                                ReadyStatus observed);
  bool MarkNodeForTainting(const server::ObjectPtr& node, NodeInfo& info, std::string_view status);
  void MarkNodeAsReachable(const server::ObjectPtr& node, NodeInfo& info);
  void HandleDisruption(const std::map<std::string, std::pair<int, int>>& zones);
  void SetLimiterInZone(const std::string& zone, int zone_size, ZoneState state);
  void AddZone(const std::string& zone);
  void MarkPodsNotReady(const std::string& node, const std::vector<server::ObjectPtr>& pods,
                        std::function<void(bool ok)> done);

  // NoSchedule taints (doNoScheduleTaintingPass) and pods newly on a node (processPod).
  void OnNodeChange(const server::ObjectPtr& object);
  // `lease` null: `old_lease` was deleted.
  void OnLeaseChange(const server::ObjectPtr& old_lease, const server::ObjectPtr& lease);
  void DoNoScheduleTaintingPass(const std::string& name);
  void OnPodChange(const server::ObjectPtr& old_pod, const server::ObjectPtr& new_pod);
  void ProcessPod(const PodKey& key);
  void RetryPod(const PodKey& key);

  // NoExecute tainting (doNoExecuteTaintingPass), every kNodeEvictionPeriod while it has work.
  void ArmTick();
  // `on_grid`: at one of upstream's 100 ms instants (every zone is tried), or between them (only
  // the zones whose rate outpaces them, ArmTick).
  void Tick(bool on_grid);
  void TryZone(const std::string& zone);
  void Tainted(const std::string& zone, const RateLimitedTimedQueue::Value& value, bool ok,
               client::Duration retry_after);

  void NodeEvent(const std::string& name, const std::string& uid, std::string_view reason,
                 std::string message);

  Options options_;
  client::Clock* clock_;
  client::Client* client_;
  EvictionRates rates_;
  std::unique_ptr<client::EventRecorder> recorder_;
  std::unique_ptr<client::Informer> nodes_;
  std::unique_ptr<client::Informer> pods_;
  std::unique_ptr<client::Informer> leases_;

  // Controller-thread state.
  bool started_ = false;
  uint64_t passes_ = 0;
  StringMap<NodeInfo> infos_;
  StringMap<int> zone_ids_;  // zone key → index into zone_names_ (never shrinks)
  std::vector<std::string> zone_names_;
  std::unique_ptr<Pass> pass_;
  client::TimerId pass_timer_ = 0;
  StringMap<ZoneState> zone_states_;
  StringMap<std::unique_ptr<RateLimitedTimedQueue>> tainters_;
  std::unordered_set<std::string> zone_busy_;  // a zone's tainting write is under way
  client::Time tick_origin_{};
  client::TimerId tick_timer_ = 0;
  client::Time tick_armed_for_{};
  uint64_t tick_generation_ = 0;
  std::unique_ptr<TaintWriter> taint_writer_;
  // Nodes whose NoSchedule pass waits for their taint writes to end.
  std::unordered_set<std::string> noschedule_waiting_;
  std::deque<std::string> noschedule_queue_;
  std::unordered_set<std::string> noschedule_queued_;
  client::ItemExponentialFailureRateLimiter noschedule_backoff_;
  std::deque<PodKey> pod_queue_;
  std::unordered_set<std::string> pod_queued_;  // "namespace/name"
  std::unique_ptr<client::RateLimiter> pod_backoff_;

  // Where other threads (timers, write completions, informers) hand work to this one.
  std::shared_ptr<Mailbox> box_;
  std::atomic<size_t> in_flight_{0};
  std::thread thread_;
};

}  // namespace kt::controllers::nodelifecycle
