// The scheduling framework's extension points and plugin interfaces, after kube-scheduler's
// (pkg/scheduler/framework): QueueSort, PreEnqueue, PreFilter, Filter, PostFilter, PreScore,
// Score (with NormalizeScore), Reserve, Permit, PreBind and Bind, plus EnqueueExtensions — the
// cluster events (and queueing hints) that may make a rejected pod schedulable.
//
// A plugin implements the interfaces of the points it extends; the Framework (framework.h) runs
// them in the profile's order. Plugins are created per profile by a PluginRegistry factory and
// reach the rest of the scheduler through a Handle.
//
// Per-cycle state: one Framework runs one scheduling cycle at a time, so a plugin keeps what its
// PreFilter or PreScore computed for the pod in its own members until the next cycle (upstream
// keeps it in a CycleState). Filter may also be called again for the same pod on changed nodes
// (preemption's dry runs, nominated pods), never for another pod in between.
//
// Thread safety: plugin methods are called on the scheduler's thread only; queueing hints too.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "client/clock.h"
#include "core/feature_gates.h"
#include "scheduler/framework/status.h"
#include "scheduler/framework/types.h"

namespace kt::client {
class Client;
class EventRecorder;
}  // namespace kt::client

namespace kt::scheduler {

class Framework;
struct QueuedPodInfo;

// Upstream MaxNodeScore.
inline constexpr int64_t kMaxNodeScore = 100;

class Plugin {
 public:
  virtual ~Plugin() = default;
  virtual std::string_view Name() const = 0;
};

// Orders the active queue.
class QueueSortPlugin : public virtual Plugin {
 public:
  virtual bool Less(const QueuedPodInfo& a, const QueuedPodInfo& b) const = 0;
};

// Decides whether a pod may enter the active queue at all (scheduling gates).
class PreEnqueuePlugin : public virtual Plugin {
 public:
  virtual Status PreEnqueue(const PodInfo& pod) = 0;
};

// The nodes a PreFilter allows (nullopt: every node).
struct PreFilterResult {
  std::optional<std::set<std::string>> node_names;
  bool AllNodes() const { return !node_names.has_value(); }
  // Intersects with `other` (upstream PreFilterResult.Merge).
  void Merge(const PreFilterResult& other);
};

class PreFilterPlugin : public virtual Plugin {
 public:
  // Success, Skip (its Filter is not run this cycle) or a rejection of the pod everywhere.
  virtual Status PreFilter(const PodInfo& pod, PreFilterResult* result) = 0;
};

class FilterPlugin : public virtual Plugin {
 public:
  virtual Status Filter(const PodInfo& pod, const NodeInfo& node) = 0;
  // The batch form of Filter, for plugins whose verdict is cheap: sets rejected[i] to 1 for each
  // node Filter would not admit (a rejection or an error) and leaves the other entries as they
  // are. Returns false, having done nothing, when the plugin has no batch form. The framework
  // calls Filter on a rejected node to learn why. Given no nodes it must not read the pod: that is
  // how the framework asks, once, whether a plugin has a batch form.
  virtual bool FilterBatch(const PodInfo&, std::span<const NodeInfo* const>, std::span<uint8_t>) {
    return false;
  }
};

// Why each node failed Filter, and what to assume for nodes not evaluated.
//
// Filled on the hot path (one entry per rejecting node), read rarely: entries are appended, and
// the index by name is built on the first Get.
class NodeToStatus {
 public:
  // Records the status of a node that has none yet.
  void Add(const std::string& node, Status s) {
    entries_.emplace_back(node, std::move(s));
    index_.clear();
  }
  // Records or replaces the status of a node.
  void Set(const std::string& node, Status s);
  // The node's status; the absent status when the node was not evaluated.
  const Status& Get(const std::string& node) const;
  size_t Len() const { return entries_.size(); }
  void SetAbsentNodesStatus(Status s) { absent_ = std::move(s); }
  const Status& AbsentNodesStatus() const { return absent_; }
  // In the order recorded.
  const std::vector<std::pair<std::string, Status>>& entries() const { return entries_; }

 private:
  std::vector<std::pair<std::string, Status>> entries_;
  mutable std::unordered_map<std::string_view, size_t> index_;  // built by Get
  Status absent_ = Status(Code::kUnschedulableAndUnresolvable);
};

// What a failed cycle learned (upstream framework.Diagnosis).
struct Diagnosis {
  NodeToStatus node_to_status;
  std::set<std::string> unschedulable_plugins;
  std::set<std::string> pending_plugins;
  std::string pre_filter_msg;
  std::string post_filter_msg;

  // Records the plugin of a rejection (upstream AddPluginStatus).
  void AddPluginStatus(const Status& s);

 private:
  std::string_view last_rejector_;  // already in unschedulable_plugins
};

// "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 node(s) didn't match Pod's
// node affinity/selector. preemption: ..." (upstream FitError.Error()).
std::string FitErrorMessage(int num_all_nodes, const Diagnosis& diagnosis);

// The nominated node a PostFilter asks for.
struct NominatingInfo {
  enum class Mode : uint8_t { kNoop, kOverride } mode = Mode::kNoop;
  std::string nominated_node_name;
  // The pods a preemption evicts to make room (for reports; the plugin evicts them itself).
  std::vector<PodInfoPtr> victims;

  static NominatingInfo Noop() { return {}; }
  // Sets the pod's nomination ("" clears it).
  static NominatingInfo Override(std::string node) {
    NominatingInfo n;
    n.mode = Mode::kOverride;
    n.nominated_node_name = std::move(node);
    return n;
  }
};

class PostFilterPlugin : public virtual Plugin {
 public:
  // Success with a nominated node when the pod can be made to fit; otherwise a rejection whose
  // message joins the FitError. `nominating` is set as the plugin decides.
  virtual Status PostFilter(const PodInfo& pod, const NodeToStatus& statuses,
                            NominatingInfo* nominating) = 0;
};

class PreScorePlugin : public virtual Plugin {
 public:
  // Success, Skip (its Score is not run this cycle) or an error.
  virtual Status PreScore(const PodInfo& pod, std::span<const NodeInfo* const> nodes) = 0;
};

struct NodeScore {
  const NodeInfo* node;
  int64_t score;
};

class ScorePlugin : public virtual Plugin {
 public:
  virtual int64_t Score(const PodInfo& pod, const NodeInfo& node) = 0;
  // Scores every node of `nodes` into `out` (same length): out[i] = {nodes[i], Score(nodes[i])}.
  // Plugins on the hot path override it with one tight loop; the result must be the same.
  virtual void ScoreNodes(const PodInfo& pod, std::span<const NodeInfo* const> nodes,
                          std::span<NodeScore> out) {
    for (size_t i = 0; i < nodes.size(); ++i) out[i] = NodeScore{nodes[i], Score(pod, *nodes[i])};
  }
  // True when every node of `nodes` is sure to get the same score (after normalization), so
  // that the plugin adds the same to every node's total and cannot change which node is
  // picked. The scheduling cycle then skips the plugin; reports still run it. Called after
  // PreScore.
  virtual bool UniformScores(const PodInfo&, std::span<const NodeInfo* const>) { return false; }
  // The scheduling cycle's form for a plugin without NormalizeScore: adds weight × each node's
  // score (which must lie in [0, 100]) to totals[i], keeping no score per node. False if the
  // plugin has no such form; ScoreNodes then runs.
  virtual bool AddWeightedScores(const PodInfo&, std::span<const NodeInfo* const>,
                                 int64_t /*weight*/, int64_t* /*totals*/) {
    return false;
  }
  // Whether NormalizeScore is to be called (upstream ScoreExtensions() != nil).
  virtual bool HasNormalizeScore() const { return false; }
  virtual void NormalizeScore(const PodInfo&, std::span<NodeScore>) {}
};

class ReservePlugin : public virtual Plugin {
 public:
  virtual Status Reserve(const PodInfo& pod, const std::string& node) = 0;
  virtual void Unreserve(const PodInfo& pod, const std::string& node) = 0;
};

class PermitPlugin : public virtual Plugin {
 public:
  // Success, a rejection, or Wait (not supported: no in-tree plugin waits).
  virtual Status Permit(const PodInfo& pod, const std::string& node) = 0;
};

class PreBindPlugin : public virtual Plugin {
 public:
  virtual Status PreBind(const PodInfo& pod, const std::string& node) = 0;
};

class BindPlugin : public virtual Plugin {
 public:
  // Binds asynchronously; `done` gets Success, Skip (try the next binder) or an error, on any
  // thread.
  virtual void Bind(const PodInfoPtr& pod, const std::string& node,
                    std::function<void(Status)> done) = 0;
};

// --- Queueing hints ---------------------------------------------------------------------------

enum class QueueingHint : uint8_t { kQueueSkip, kQueue };

// Whether `event` (with the object before and after; either may be null) may make `pod`
// schedulable for the plugin that rejected it.
using QueueingHintFn = std::function<QueueingHint(const PodInfo& pod, const ObjectPtr& old_object,
                                                  const ObjectPtr& new_object)>;

struct ClusterEventWithHint {
  ClusterEvent event;
  QueueingHintFn hint;  // null: always Queue
};

class EnqueueExtensions : public virtual Plugin {
 public:
  virtual std::vector<ClusterEventWithHint> EventsToRegister() = 0;
};

// --- What plugins reach through the framework ---------------------------------------------------

// The nodes of the current cycle, in the scheduler's scan order (zones interleaved).
class NodeLister {
 public:
  virtual ~NodeLister() = default;
  virtual std::span<NodeInfo* const> List() const = 0;
  virtual NodeInfo* Get(std::string_view name) const = 0;
};

// Pods nominated to nodes by preemption, whose resources are held for them.
class Nominator {
 public:
  virtual ~Nominator() = default;
  // Valid until the nominations change (not within a cycle).
  virtual std::span<const PodInfoPtr> NominatedPodsForNode(std::string_view node) const = 0;
  // No pod is nominated anywhere (the common case, checked once per node of a cycle).
  virtual bool Empty() const = 0;
};

class Handle {
 public:
  virtual ~Handle() = default;
  virtual const NodeLister& Nodes() const = 0;
  virtual const Nominator& Nominated() const = 0;
  // Null when the framework only evaluates (kubetaint check): plugins must not write then.
  virtual client::Client* ClientOrNull() = 0;
  virtual client::EventRecorder* RecorderOrNull() = 0;
  virtual client::Clock& Clock() = 0;
  virtual const FeatureGates& Gates() const = 0;
  // The current version of a pod known to the scheduler (upstream's pod lister), or null.
  virtual ObjectPtr GetPod(std::string_view namespace_, std::string_view name) const = 0;
  // A number that changes with every scheduling cycle (so plugins can cache per cycle).
  virtual uint64_t SchedulingCycle() const = 0;
  // The profile's framework (set once it is built).
  virtual Framework& Fw() = 0;
  // Runs `fn` on the scheduler's thread, between cycles (from any thread, e.g. a write's
  // completion). Evaluation-only handles run it at once.
  virtual void Post(std::function<void()> fn) = 0;
  // Moves a parked pod (by UID) back to the active queue, re-running PreEnqueue.
  virtual void Activate(const std::string& uid) = 0;
};

}  // namespace kt::scheduler
