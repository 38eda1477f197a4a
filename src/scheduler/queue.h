// SchedulingQueue: the pods waiting to be scheduled, as kube-scheduler's PriorityQueue
// (pkg/scheduler/backend/queue):
//   - activeQ: ready now, ordered by the profile's QueueSort (priority, then queue time);
//   - backoffQ: failed recently; each waits initial·2^(failures-1) (1 s → 10 s by default),
//     rounded to the second as upstream, before returning to activeQ;
//   - unschedulable pods: rejected by some plugins; they stay parked until a cluster event that one
//     of those plugins says may help (its queueing hint), or 5 minutes pass. Pods kept out by a
//     PreEnqueue plugin (scheduling gates) wait here too, for their gate's events only.
// It also holds the nominator: pods nominated to nodes by preemption.
//
// Time comes from the Clock; the owner calls FlushBackoffQCompleted every second and
// FlushUnschedulablePodsLeftover every 30 s (upstream's periods).
//
// Thread safety: none; the scheduler uses it from its own thread only.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "client/clock.h"
#include "scheduler/framework/framework.h"

namespace kt::scheduler {

using QueuedPodInfoPtr = std::shared_ptr<QueuedPodInfo>;

class SchedulingQueue : public Nominator {
 public:
  struct Options {
    Duration initial_backoff = std::chrono::seconds(1);
    Duration max_backoff = std::chrono::seconds(10);
    Duration max_in_unschedulable = std::chrono::minutes(5);
  };
  // `framework_for` returns the framework of a pod's scheduler name (every pod added has one).
  SchedulingQueue(client::Clock* clock, Options options,
                  std::function<Framework*(const PodInfo&)> framework_for);

  // A new pod (or one back from an update that found it in no queue): to activeQ, unless a
  // PreEnqueue plugin gates it.
  void Add(PodInfoPtr pod);
  // The pod changed: updated in place where it waits; a parked pod is re-checked against the
  // events the change stands for.
  void Update(const PodInfoPtr& old_pod, PodInfoPtr new_pod);
  void Delete(const std::string& uid);

  // The next pod to schedule, or null. With activeQ empty, a pod still backing off after a
  // rejection is tried early (upstream SchedulerPopFromBackoffQ).
  QueuedPodInfoPtr Pop();

  // After a failed attempt (upstream AddUnschedulableIfNotPresent): a pod that some plugin
  // rejected is parked; one that failed with an error backs off.
  void AddUnschedulableIfNotPresent(QueuedPodInfoPtr pod);

  // A cluster event: parked pods that a rejecting plugin's hint says it may help move to
  // backoffQ (still backing off) or activeQ. `pre_check` (optional) limits the pods considered.
  void MoveAllToActiveOrBackoffQueue(const ClusterEvent& event, const ObjectPtr& old_object,
                                     const ObjectPtr& new_object,
                                     const std::function<bool(const PodInfo&)>& pre_check = {});
  // Moves a parked or backing-off pod to activeQ now (upstream Activate).
  void Activate(const std::string& uid);

  void FlushBackoffQCompleted();
  void FlushUnschedulablePodsLeftover();

  bool HasActive() const { return !active_.empty(); }
  size_t NumActive() const { return active_.size(); }
  size_t NumBackoff() const { return backoff_.size(); }
  size_t NumUnschedulable() const { return unschedulable_.size(); }
  bool Contains(const std::string& uid) const { return Contains(api::UidKeyOf(uid)); }
  bool Contains(const api::UidKey& uid) const;
  // Whether the pod waits in the unschedulable pool (gated pods included).
  bool IsParked(const std::string& uid) const {
    return unschedulable_.count(api::UidKeyOf(uid)) != 0;
  }

  // --- Nominator -------------------------------------------------------------------------------
  // ModeOverride sets or clears the pod's nomination; ModeNoop keeps status.nominatedNodeName.
  void AddNominatedPod(const PodInfoPtr& pod, const NominatingInfo& info);
  void DeleteNominatedPodIfExists(const api::UidKey& uid);
  // Valid until the nominations change.
  std::span<const PodInfoPtr> NominatedPodsForNode(std::string_view node) const override;
  bool Empty() const override { return nominated_.empty(); }
  // The node the pod is nominated to ("" when none).
  std::string NominatedNodeOf(const std::string& uid) const;

 private:
  enum class Hint : uint8_t { kSkip, kAfterBackoff, kImmediately };

  struct ActiveLess {
    bool operator()(const QueuedPodInfoPtr& a, const QueuedPodInfoPtr& b) const;
  };

  // Runs PreEnqueue; true (and the gating plugin and its events noted) if a plugin holds the
  // pod back.
  bool Gate(QueuedPodInfo& pod);
  // Runs PreEnqueue; if it passes, the pod enters activeQ, else it is parked as gated.
  void MoveToActive(QueuedPodInfoPtr pod);
  void MoveToBackoff(QueuedPodInfoPtr pod);
  void Park(QueuedPodInfoPtr pod);
  void Requeue(QueuedPodInfoPtr pod, Hint hint);
  Hint IsPodWorthRequeuing(const QueuedPodInfo& pod, const ClusterEvent& event,
                           const ObjectPtr& old_object, const ObjectPtr& new_object) const;
  client::Time BackoffExpiration(QueuedPodInfo& pod) const;
  bool IsBackingOff(QueuedPodInfo& pod) const;
  void RemoveFromActive(const api::UidKey& uid);
  void RemoveFromBackoff(const api::UidKey& uid);

  client::Clock* clock_;
  Options options_;
  std::function<Framework*(const PodInfo&)> framework_for_;

  // activeQ: an ordered set (by QueueSort, then a sequence for stability) and an index by UID.
  std::set<QueuedPodInfoPtr, ActiveLess> active_;
  // The maps by UID key pods by PodInfo::uid_key: no string hashed, copied or compared.
  std::unordered_map<api::UidKey, QueuedPodInfoPtr, api::UidKeyHash> active_by_uid_;
  // backoffQ: by expiration, then queue order.
  std::multimap<client::Time, QueuedPodInfoPtr> backoff_;
  std::unordered_map<api::UidKey, std::multimap<client::Time, QueuedPodInfoPtr>::iterator,
                     api::UidKeyHash>
      backoff_by_uid_;
  std::unordered_map<api::UidKey, QueuedPodInfoPtr, api::UidKeyHash> unschedulable_;
  uint64_t sequence_ = 0;

  // Nominator: node → pods, and pod UID → node.
  std::map<std::string, std::vector<PodInfoPtr>, std::less<>> nominated_;
  std::unordered_map<api::UidKey, std::string, api::UidKeyHash> nominated_node_of_;
};

}  // namespace kt::scheduler
