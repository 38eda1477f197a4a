// Simulated kubelets (KWOK-like): N nodes in one process, each doing what a kubelet does to the
// API and nothing more. Through a client::Client, so they run inside `kubetaint serve` (in
// process) or as `kubetaint kubelet` against any API server (over HTTP).
//
//   Kubelets::Options o;
//   o.clock = clock; o.client = client;
//   o.pods = NewCacheListerWatcher(&registry.cache(Resource::kPods));
//   o.nodes = NewCacheListerWatcher(&registry.cache(Resource::kNodes));
//   o.node.prefix = "node"; o.node.count = 3;                 // node1, node2, node3
//   Kubelets kubelets(std::move(o));
//   kubelets.Start();
//
// Each node:
//   - registers: creates its Node (labels kubernetes.io/hostname, kubernetes.io/os,
//     kubernetes.io/arch, topology.kubernetes.io/zone when zones are given; capacity and
//     allocatable; the registration taints, upstream --register-with-taints; Ready and the
//     pressure conditions; addresses; a complete nodeInfo). A Node that exists already is taken
//     over, as a restarted kubelet does: its status is posted at once.
//   - renews its Lease kube-node-lease/<node> every quarter of the lease duration (10 s of 40 s,
//     upstream's defaults), creating it if missing (owned by the Node);
//   - computes its status every status_update_frequency (upstream --node-status-update-frequency,
//     10 s) and posts it (a strategic merge patch of nodes/status: the conditions, with fresh
//     heartbeat times) when it changed or status_report_frequency (upstream
//     --node-status-report-frequency, 5 min) has passed. A patch touches no capacity, so extended
//     resources a user advertised on the node stay;
//   - takes pods bound to it to Running and Ready (phase, conditions, hostIP(s), podIP(s),
//     startTime, containerStatuses) through pods/status;
//   - ends a pod's graceful deletion when its deletionTimestamp comes (after the grace period)
//     with a grace-period-0 delete carrying the pod's UID as precondition, as the kubelet does
//     once the containers have stopped.
//
// Failure injection: the node annotation kubetaint.io/simulate (kSimulateAnnotation) holds a
// comma-separated list of unreachable, not-ready, memory-pressure, disk-pressure, pid-pressure,
// network-unavailable, healthy. `unreachable`: the kubelet goes silent (no lease, no status, no
// pod work) as if the machine were cut off; the others set that condition. Removing the
// annotation, or `healthy`, heals the node.
//
// A node deleted from the API is forgotten (its kubelet stops), as the machine were gone.
//
// Threading: everything runs on one loop thread (Start), or with `manual` wherever RunPending is
// called (tests and simulations on a simulated clock). Public methods are thread-safe unless
// noted.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "api/types.h"
#include "api/uid_key.h"
#include "client/client.h"
#include "client/clock.h"
#include "client/informer.h"
#include "client/loop.h"
#include "core/status.h"
#include "core/taint.h"

namespace kt::kubelet {

inline constexpr std::string_view kSimulateAnnotation = "kubetaint.io/simulate";

// What the simulate annotation asks of a node.
struct Simulation {
  bool unreachable = false;
  bool not_ready = false;
  bool memory_pressure = false;
  bool disk_pressure = false;
  bool pid_pressure = false;
  bool network_unavailable = false;
  bool operator==(const Simulation&) const = default;
};
// Parses the annotation's value ("" is healthy); an unknown word is an error naming it.
Result<Simulation> ParseSimulation(std::string_view value);

// The nodes a Kubelets runs, all alike but for their name, index and zone.
struct NodeTemplate {
  std::string prefix = "node";
  int first = 1;  // nodes prefix<first> .. prefix<first + count - 1>
  int count = 0;
  // Node i (from 0) is in zones[i % size]; none: no zone label.
  std::vector<std::string> zones;
  // capacity = allocatable, by resource name; kept sorted by name.
  std::vector<std::pair<std::string, std::string>> capacity = {
      {"cpu", "4"}, {"ephemeral-storage", "100Gi"}, {"memory", "16Gi"}, {"pods", "110"}};
  std::vector<Taint> taints;  // registration taints
};

// "cpu=4,memory=16Gi,nvidia.com/gpu=1" (the flag's form) merged into the default capacity.
Status ParseCapacity(std::string_view text, NodeTemplate* node);
// "k=v:NoSchedule,k2:NoExecute" (kubelet --register-with-taints).
Result<std::vector<Taint>> ParseRegisterTaints(std::string_view text);

class Kubelets {
 public:
  struct Options {
    client::Clock* clock = nullptr;
    client::Client* client = nullptr;
    // Leases and node status go through this one when set (upstream's kubelet has a separate
    // HeartbeatClient too), so that pod work queued in `client` never delays a heartbeat.
    client::Client* heartbeat_client = nullptr;
    std::unique_ptr<client::ListerWatcher> pods;
    std::unique_ptr<client::ListerWatcher> nodes;
    NodeTemplate node;
    client::Duration status_update_frequency = std::chrono::seconds(10);
    client::Duration status_report_frequency = std::chrono::minutes(5);
    client::Duration lease_duration = std::chrono::seconds(40);
    // The version the nodes report (status.nodeInfo.kubeletVersion).
    std::string kubelet_version;
    bool manual = false;
  };

  explicit Kubelets(Options options);
  ~Kubelets();  // stops
  Kubelets(const Kubelets&) = delete;
  Kubelets& operator=(const Kubelets&) = delete;

  // Registers the nodes and runs them (on the loop thread unless manual).
  void Start();
  void Stop();
  // Manual mode: handles everything due now; returns how much was done.
  size_t RunPending();
  // Waits until every node has registered (or found its Node there); false at the deadline.
  bool WaitRegistered(std::chrono::steady_clock::time_point deadline);
  // Client calls under way (for tests that run everything to quiescence).
  size_t InFlight() const { return in_flight_.load(std::memory_order_acquire); }

  // Introspection (the loop's thread, or manual mode between RunPending calls).
  size_t Registered() const;
  size_t RunningPods() const { return pods_.size(); }
  std::string NodeName(int i) const;

 private:
  struct Condition {
    std::string status;
    std::string reason;
    std::string message;
    std::string last_transition;
  };
  enum class Phase : unsigned char { kRegistering, kRegistered, kGone };
  struct NodeState {
    std::string name;
    std::string zone;
    std::string host_ip;
    Phase phase = Phase::kRegistering;
    std::string uid;
    Simulation sim;
    bool lease_known = false;  // the lease exists (created, or renewed successfully)
    bool lease_busy = false;
    bool status_busy = false;
    bool status_dirty = true;  // conditions changed since the last post
    client::Time last_report{};
    std::vector<Condition> conditions;  // Ready, MemoryPressure, DiskPressure, PIDPressure,
                                        // NetworkUnavailable (kConditionTypes order)
    uint32_t next_ip = 0;
  };
  struct PodState {
    int node = -1;
    bool started = false;    // status posted
    bool finishing = false;  // the grace-0 delete is under way
    client::Loop::TimerHandle finish_timer = 0;
    client::Time finish_at{};
  };

  // `done`, counted in InFlight until it has run.
  client::WriteDone Tracked(client::WriteDone done);
  int IndexOf(std::string_view node_name) const;  // -1 if not ours
  void Register(int i);
  void Registered(int i, server::ApiResult<store::Bytes> r);
  void LeaseTick(int i);
  void StatusTick(int i);
  void RenewLease(int i);
  void PostStatus(int i);
  // Recomputes the conditions from the simulation; true if any changed.
  bool UpdateConditions(NodeState& n, client::Time now);
  std::string NodeJson(int i, client::Time now) const;
  std::string ConditionsJson(const NodeState& n, const std::string& heartbeat) const;
  void OnNode(const server::ObjectPtr& node);
  void OnNodeDeleted(const server::ObjectPtr& node);
  void OnPod(const server::ObjectPtr& pod);
  void OnPodDeleted(const server::ObjectPtr& pod);
  // Looks at every pod of node i again (it came back from silence).
  void ResyncPods(int i);
  void StartPod(const server::ObjectPtr& pod, PodState& state);
  void FinishPod(api::UidKey key);

  Options options_;
  client::Clock* clock_;
  client::Client* client_;
  client::Client*
      heartbeat_client_;  // leases and node status: options_.heartbeat_client or client_
  std::unique_ptr<client::Informer> pod_informer_;
  std::unique_ptr<client::Informer> node_informer_;
  std::unique_ptr<client::Loop> loop_;
  // Loop-thread state.
  std::vector<NodeState> nodes_;
  std::unordered_map<api::UidKey, PodState, api::UidKeyHash> pods_;

  std::mutex registered_mu_;
  std::condition_variable registered_cv_;
  int registered_ = 0;  // guarded by registered_mu_
  std::atomic<size_t> in_flight_{0};
};

}  // namespace kt::kubelet
