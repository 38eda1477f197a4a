// The DaemonSet controller (kube-controller-manager's `daemonset-controller`, k/k
// pkg/controller/daemon, semantics.md §8.6): one pod per node that should run the DaemonSet's
// pod, status counts as upstream, rolling updates.
//
//   Controller::Options o;
//   o.clock = clock; o.client = client;
//   o.daemonsets = NewCacheListerWatcher(&registry.cache(Resource::kDaemonSets));
//   o.pods = NewCacheListerWatcher(&registry.cache(Resource::kPods));
//   o.nodes = NewCacheListerWatcher(&registry.cache(Resource::kNodes));
//   auto c = std::make_unique<Controller>(std::move(o));
//   c->Start();              // informers on their threads; workers start once they have synced
//
// Structure, as upstream (client-go style): informer handlers only enqueue keys — DaemonSet keys
// ("ns/name") into the sync queue, node names into a node queue whose worker enqueues the
// DaemonSets that node changes something for — and a worker reconciles one DaemonSet at a time
// from the informers' state, level-triggered:
//   - pods are claimed by controllerRef (orphans matching the selector adopted, owned pods that no
//     longer match released) and grouped by target node (spec.nodeName, or the metadata.name node
//     affinity the controller gives its pods);
//   - per node, NodeShouldRunDaemonPod decides: create a pod where one should run and none is;
//     delete failed (with a per-node backoff, 1 s doubling to 15 min, and a FailedDaemonPod
//     event) and succeeded pods; keep the oldest of several; delete every pod where the node
//     should not continue running one (an untolerated NoExecute taint, a selector or affinity
//     that no longer matches); delete unscheduled pods whose node is gone. Bound pods on deleted
//     nodes are left to the pod garbage collector, as upstream;
//   - creates go in slow-start batches (1, 2, 4, ...) of at most 250 per sync, and expectations
//     hold the next sync back until the informer has seen every create and delete;
//   - RollingUpdate (maxUnavailable, or maxSurge) replaces pods whose controller-revision-hash is
//     not the template's; OnDelete waits for the user to delete them;
//   - status (desired/current/misscheduled/ready/updated/available/unavailable and
//     observedGeneration) goes through daemonsets/status when it changed.
// Pods are created with the daemon tolerations and a required node affinity on metadata.name, so
// the default scheduler binds them; events SuccessfulCreate/SuccessfulDelete/FailedCreate/
// FailedDelete/FailedDaemonPod/SucceededDaemonPod/SelectingAll about the DaemonSet, source
// `daemonset-controller`.
//
// Not as upstream: apps/v1 ControllerRevisions are not served, so no history is kept (`kubectl
// rollout history/undo` do not work) and the hash is util.h's ComputeHash of the template.
//
// Threading: with a thread (Start), the informers dispatch on their own threads and two workers
// (DaemonSets, nodes) block on the queues; writes are blocking calls from the workers. With
// `manual`, RunPending does all of it on the calling thread (tests, simulations). Public methods
// are thread-safe.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "api/types.h"
#include "client/client.h"
#include "client/clock.h"
#include "client/event_recorder.h"
#include "client/informer.h"
#include "client/work_queue.h"
#include "controllers/daemonset/expectations.h"
#include "controllers/daemonset/util.h"
#include "core/feature_gates.h"
#include "core/status.h"

namespace kt::controllers::daemonset {

// The pods the controller can act on: those a DaemonSet controls, and orphans (no controller),
// which a DaemonSet may adopt. A pod another controller owns is never looked at (upstream
// ignores them too), so its pods informer need not hold them; a pod whose controller changes
// leaves or joins the informer as a delete or an add.
server::ObjectFilter PodsFilter();

class Controller {
 public:
  struct Options {
    client::Clock* clock = nullptr;
    client::Client* client = nullptr;
    std::unique_ptr<client::ListerWatcher> daemonsets;
    std::unique_ptr<client::ListerWatcher> pods;  // PodsFilter() is enough
    std::unique_ptr<client::ListerWatcher> nodes;
    FeatureGates gates;
    // The event source's host; upstream's controller leaves it empty.
    std::string host;
    // No threads: RunPending drives the controller (tests, simulations).
    bool manual = false;
    // Where the events go; default: a core/v1 recorder with the controller's name as source.
    std::unique_ptr<client::EventRecorder> recorder;
    // kube-controller-manager's failed-pods backoff (flowcontrol.NewBackOff(1s, 15m)).
    client::Duration failed_pods_backoff_initial = std::chrono::seconds(1);
    client::Duration failed_pods_backoff_max = std::chrono::minutes(15);
    // Creates (and deletes) per sync at most (upstream BurstReplicas).
    int burst_replicas = 250;
  };

  explicit Controller(Options options);
  ~Controller();  // stops
  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

  // Lists and watches; with threads, starts them. Does not wait for the informers to sync.
  void Start();
  void Stop();
  bool HasSynced() const;

  // Manual mode: dispatches the informers and works off both queues until nothing is left
  // that is due now; returns how many things it handled.
  size_t RunPending();

  // Whether the last round of writes for `key` ("ns/name") has been observed.
  bool SatisfiedExpectations(const std::string& key) const {
    return expectations_.SatisfiedExpectations(key);
  }
  client::Informer& daemonset_informer() { return *daemonsets_; }
  client::Informer& pod_informer() { return *pods_; }
  client::Informer& node_informer() { return *nodes_; }

 private:
  // Everything one sync of one DaemonSet reads, computed once.
  struct SyncContext;
  using NodeToDaemonPods = std::map<std::string, std::vector<server::ObjectPtr>>;

  void RunWorker(client::WorkQueue* queue, bool nodes);
  void ProcessDaemonSet(const std::string& key);
  void ProcessNode(const std::string& name);

  // Handlers: they only enqueue.
  void OnDaemonSetAdd(const server::ObjectPtr& ds);
  void OnDaemonSetUpdate(const server::ObjectPtr& old_ds, const server::ObjectPtr& cur);
  void OnDaemonSetDelete(const server::ObjectPtr& ds);
  void OnPodAdd(const server::ObjectPtr& pod);
  void OnPodUpdate(const server::ObjectPtr& old_pod, const server::ObjectPtr& cur);
  void OnPodDelete(const server::ObjectPtr& pod);
  void OnNodeUpdate(const server::ObjectPtr& old_node, const server::ObjectPtr& cur);

  void Enqueue(const api::DaemonSet& ds);
  // The DaemonSet a pod's controllerRef names, if it still exists with that UID.
  server::ObjectPtr ResolveControllerRef(std::string_view namespace_,
                                         const api::OwnerReference& ref) const;
  // The DaemonSets of the pod's namespace whose selector matches its labels.
  std::vector<server::ObjectPtr> DaemonSetsForPod(const api::Pod& pod) const;

  // syncDaemonSet and what it calls.
  Status SyncDaemonSet(const std::string& key);
  Status UpdateDaemonSet(SyncContext& ctx);
  Status Manage(SyncContext& ctx);
  Status RollingUpdate(SyncContext& ctx);
  Status UpdateStatus(SyncContext& ctx, bool update_observed_generation);
  Result<NodeToDaemonPods> GetNodesToDaemonPods(SyncContext& ctx);
  Result<std::vector<server::ObjectPtr>> ClaimPods(SyncContext& ctx);
  void PodsShouldBeOnNode(SyncContext& ctx, const api::Node& node,
                          const NodeToDaemonPods& node_to_pods,
                          std::vector<std::string>* nodes_needing_pods,
                          std::vector<std::string>* pods_to_delete);
  Status SyncNodes(SyncContext& ctx, const std::vector<std::string>& pods_to_delete,
                   const std::vector<std::string>& nodes_needing_pods);
  Status StoreStatus(SyncContext& ctx, const api::DaemonSet& counts);
  void Event(const SyncContext& ctx, std::string_view type, std::string_view reason,
             std::string message);

  Options options_;
  client::Clock* clock_;
  client::Client* client_;
  std::unique_ptr<client::EventRecorder> recorder_;
  std::unique_ptr<client::Informer> daemonsets_;
  std::unique_ptr<client::Informer> pods_;
  std::unique_ptr<client::Informer> nodes_;
  client::WorkQueue queue_;       // DaemonSet keys
  client::WorkQueue node_queue_;  // node names
  ControllerExpectations expectations_;
  Backoff failed_pods_backoff_;  // the DaemonSet worker's
  client::Time last_backoff_gc_{};
  std::atomic<bool> stopping_{false};
  std::thread worker_;
  std::thread node_worker_;
};

}  // namespace kt::controllers::daemonset
