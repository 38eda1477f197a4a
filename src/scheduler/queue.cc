#include "scheduler/queue.h"

#include <algorithm>

namespace kt::scheduler {

namespace {

// Upstream aligns backoff expirations to whole seconds (backoffQOrderingWindowDuration).
client::Time AlignToSecond(client::Time t) { return std::chrono::floor<std::chrono::seconds>(t); }

}  // namespace

bool SchedulingQueue::ActiveLess::operator()(const QueuedPodInfoPtr& a,
                                             const QueuedPodInfoPtr& b) const {
  if (a->framework->QueueSortLess(*a, *b)) return true;
  if (b->framework->QueueSortLess(*b, *a)) return false;
  return a->sequence < b->sequence;
}

SchedulingQueue::SchedulingQueue(client::Clock* clock, Options options,
                                 std::function<Framework*(const PodInfo&)> framework_for)
    : clock_(clock),
      options_(options),
      framework_for_(std::move(framework_for)),
      active_(ActiveLess{}) {}

bool SchedulingQueue::Contains(const api::UidKey& uid) const {
  return active_by_uid_.count(uid) || backoff_by_uid_.count(uid) || unschedulable_.count(uid);
}

void SchedulingQueue::Add(PodInfoPtr pod) {
  auto qp = std::make_shared<QueuedPodInfo>();
  qp->framework = framework_for_(*pod);
  qp->timestamp = clock_->Now();
  qp->pod = std::move(pod);
  if (!qp->pod->pod().status.nominated_node_name.empty()) {
    AddNominatedPod(qp->pod, NominatingInfo::Noop());
  }
  MoveToActive(std::move(qp));
}

bool SchedulingQueue::Gate(QueuedPodInfo& qp) {
  Status s = qp.framework->RunPreEnqueuePlugins(*qp.pod);
  if (s.IsSuccess()) {
    qp.gating_plugin.clear();
    qp.gating_events.clear();
    return false;
  }
  qp.unschedulable_plugins.insert(std::string(s.plugin()));
  if (qp.gating_plugin != s.plugin()) {
    qp.gating_plugin = std::string(s.plugin());
    qp.gating_events = qp.framework->EventsOf(s.plugin());
  }
  return true;
}

void SchedulingQueue::MoveToActive(QueuedPodInfoPtr qp) {
  if (Gate(*qp)) {
    Park(std::move(qp));
    return;
  }
  const api::UidKey uid = qp->pod->uid_key;
  if (active_by_uid_.count(uid)) return;
  qp->sequence = ++sequence_;
  active_by_uid_[uid] = qp;
  active_.insert(std::move(qp));
}

void SchedulingQueue::MoveToBackoff(QueuedPodInfoPtr qp) {
  const api::UidKey uid = qp->pod->uid_key;
  const client::Time expiry = BackoffExpiration(*qp);
  qp->sequence = ++sequence_;
  backoff_by_uid_[uid] = backoff_.emplace(expiry, std::move(qp));
}

void SchedulingQueue::Park(QueuedPodInfoPtr qp) {
  const api::UidKey uid = qp->pod->uid_key;
  unschedulable_[uid] = std::move(qp);
}

void SchedulingQueue::Requeue(QueuedPodInfoPtr qp, Hint hint) {
  if (hint == Hint::kSkip) return Park(std::move(qp));
  if (hint == Hint::kAfterBackoff && IsBackingOff(*qp)) return MoveToBackoff(std::move(qp));
  MoveToActive(std::move(qp));
}

void SchedulingQueue::RemoveFromActive(const api::UidKey& uid) {
  auto it = active_by_uid_.find(uid);
  if (it == active_by_uid_.end()) return;
  active_.erase(it->second);
  active_by_uid_.erase(it);
}

void SchedulingQueue::RemoveFromBackoff(const api::UidKey& uid) {
  auto it = backoff_by_uid_.find(uid);
  if (it == backoff_by_uid_.end()) return;
  backoff_.erase(it->second);
  backoff_by_uid_.erase(it);
}

void SchedulingQueue::Update(const PodInfoPtr& old_pod, PodInfoPtr new_pod) {
  const api::UidKey uid = new_pod->uid_key;
  if (!new_pod->pod().status.nominated_node_name.empty() || nominated_node_of_.count(uid)) {
    AddNominatedPod(new_pod, NominatingInfo::Noop());
  }
  if (auto it = active_by_uid_.find(uid); it != active_by_uid_.end()) {
    it->second->pod = std::move(new_pod);  // priority and queue time unchanged: order holds
    return;
  }
  if (auto it = backoff_by_uid_.find(uid); it != backoff_by_uid_.end()) {
    it->second->second->pod = std::move(new_pod);
    return;
  }
  if (auto it = unschedulable_.find(uid); it != unschedulable_.end()) {
    QueuedPodInfoPtr qp = it->second;
    qp->pod = new_pod;
    std::vector<ClusterEvent> events =
        PodSchedulingPropertiesChange(new_pod->pod(), old_pod ? old_pod->pod() : new_pod->pod());
    for (const ClusterEvent& e : events) {
      Hint hint;
      if (!qp->gating_plugin.empty()) {
        // A gated pod moves only on its gating plugin's events.
        bool matches = false;
        for (const ClusterEvent& g : qp->gating_events)
          matches = matches || MatchClusterEvents(g, e);
        if (!matches) continue;
      }
      hint = IsPodWorthRequeuing(*qp, e, old_pod ? old_pod->object : nullptr, new_pod->object);
      if (hint == Hint::kSkip) continue;
      unschedulable_.erase(uid);
      Requeue(qp, hint);
      return;
    }
    return;
  }
  Add(std::move(new_pod));
}

void SchedulingQueue::Delete(const std::string& uid_text) {
  const api::UidKey uid = api::UidKeyOf(uid_text);
  DeleteNominatedPodIfExists(uid);
  RemoveFromActive(uid);
  RemoveFromBackoff(uid);
  unschedulable_.erase(uid);
}

QueuedPodInfoPtr SchedulingQueue::Pop() {
  QueuedPodInfoPtr qp;
  if (!active_.empty()) {
    qp = *active_.begin();
    active_.erase(active_.begin());
    active_by_uid_.erase(qp->pod->uid_key);
  } else {
    // Nothing ready: try the earliest pod backing off after a rejection (not after an error),
    // unless a PreEnqueue plugin holds it.
    for (auto it = backoff_.begin(); it != backoff_.end();) {
      if (it->second->unschedulable_plugins.empty() && it->second->pending_plugins.empty()) {
        ++it;
        continue;
      }
      QueuedPodInfoPtr candidate = it->second;
      backoff_by_uid_.erase(candidate->pod->uid_key);
      it = backoff_.erase(it);
      if (Gate(*candidate)) {
        Park(std::move(candidate));
        continue;
      }
      qp = std::move(candidate);
      break;
    }
    if (!qp) return nullptr;
  }
  ++qp->attempts;
  if (qp->attempts == 1) qp->initial_attempt = clock_->Now();
  // The plugins that rejected it last time are forgotten: this attempt decides anew.
  qp->unschedulable_plugins.clear();
  qp->pending_plugins.clear();
  return qp;
}

void SchedulingQueue::AddUnschedulableIfNotPresent(QueuedPodInfoPtr qp) {
  if (Contains(qp->pod->uid_key)) return;
  if (qp->unschedulable_plugins.empty() && qp->pending_plugins.empty()) {
    ++qp->consecutive_errors;
  } else {
    ++qp->unschedulable_count;
    qp->consecutive_errors = 0;
  }
  qp->timestamp = clock_->Now();
  qp->backoff_expiration = client::Time{};
  // No cluster event can have arrived during the attempt (events are handled between attempts),
  // so a rejected pod waits for one; an error backs off.
  const bool rejected = !qp->unschedulable_plugins.empty() || !qp->pending_plugins.empty();
  Requeue(std::move(qp), rejected ? Hint::kSkip : Hint::kAfterBackoff);
}

SchedulingQueue::Hint SchedulingQueue::IsPodWorthRequeuing(const QueuedPodInfo& qp,
                                                           const ClusterEvent& event,
                                                           const ObjectPtr& old_object,
                                                           const ObjectPtr& new_object) const {
  if (qp.unschedulable_plugins.empty() && qp.pending_plugins.empty()) return Hint::kAfterBackoff;
  if (event.IsWildcard()) {
    // A wildcard aimed at another pod (Activate) does not concern this one.
    if (const api::Pod* p = new_object ? new_object->As<api::Pod>() : nullptr) {
      if (p->meta.uid != qp.pod->uid()) return Hint::kSkip;
    }
    return Hint::kAfterBackoff;
  }
  Hint result = Hint::kSkip;
  for (const Framework::RegisteredEvent& r : qp.framework->RegisteredEvents()) {
    const bool pending = qp.pending_plugins.count(r.plugin) != 0;
    if (!pending && qp.unschedulable_plugins.count(r.plugin) == 0) continue;
    if (!MatchClusterEvents(r.event.event, event)) continue;
    const QueueingHint h =
        r.event.hint ? r.event.hint(*qp.pod, old_object, new_object) : QueueingHint::kQueue;
    if (h == QueueingHint::kQueueSkip) continue;
    if (pending) return Hint::kImmediately;
    result = Hint::kAfterBackoff;
    if (qp.pending_plugins.empty()) return result;
  }
  return result;
}

void SchedulingQueue::MoveAllToActiveOrBackoffQueue(
    const ClusterEvent& event, const ObjectPtr& old_object, const ObjectPtr& new_object,
    const std::function<bool(const PodInfo&)>& pre_check) {
  std::vector<std::pair<QueuedPodInfoPtr, Hint>> moving;
  for (const auto& [uid, qp] : unschedulable_) {
    if (pre_check && !pre_check(*qp->pod)) continue;
    if (!qp->gating_plugin.empty()) {
      bool matches = false;
      for (const ClusterEvent& g : qp->gating_events) {
        matches = matches || (!event.IsWildcard() && MatchClusterEvents(g, event));
      }
      if (!matches) continue;
    }
    const Hint hint = IsPodWorthRequeuing(*qp, event, old_object, new_object);
    if (hint != Hint::kSkip) moving.emplace_back(qp, hint);
  }
  // In queue order, so that pods moved by one event keep their relative order.
  std::sort(moving.begin(), moving.end(),
            [](const auto& a, const auto& b) { return a.first->sequence < b.first->sequence; });
  for (auto& [qp, hint] : moving) {
    unschedulable_.erase(qp->pod->uid_key);
    Requeue(qp, hint);
  }
}

void SchedulingQueue::Activate(const std::string& uid_text) {
  const api::UidKey uid = api::UidKeyOf(uid_text);
  QueuedPodInfoPtr qp;
  if (auto it = unschedulable_.find(uid); it != unschedulable_.end()) {
    qp = it->second;
    unschedulable_.erase(it);
  } else if (auto b = backoff_by_uid_.find(uid); b != backoff_by_uid_.end()) {
    qp = b->second->second;
    RemoveFromBackoff(uid);
  }
  if (qp) MoveToActive(std::move(qp));
}

client::Time SchedulingQueue::BackoffExpiration(QueuedPodInfo& qp) const {
  if (qp.backoff_expiration != client::Time{}) return qp.backoff_expiration;
  const int count = qp.consecutive_errors > 0 ? qp.consecutive_errors : qp.unschedulable_count;
  if (options_.max_backoff == Duration::zero() || count == 0) return qp.timestamp;
  Duration d = options_.initial_backoff;
  for (int i = 1; i < count && d < options_.max_backoff; ++i) d *= 2;
  d = std::min(d, options_.max_backoff);
  qp.backoff_expiration = AlignToSecond(qp.timestamp + d);
  return qp.backoff_expiration;
}

bool SchedulingQueue::IsBackingOff(QueuedPodInfo& qp) const {
  const int count = qp.consecutive_errors > 0 ? qp.consecutive_errors : qp.unschedulable_count;
  if (options_.max_backoff == Duration::zero() || count == 0) return false;
  return BackoffExpiration(qp) >= AlignToSecond(clock_->Now());
}

void SchedulingQueue::FlushBackoffQCompleted() {
  while (!backoff_.empty()) {
    QueuedPodInfoPtr qp = backoff_.begin()->second;
    if (IsBackingOff(*qp)) break;
    backoff_by_uid_.erase(qp->pod->uid_key);
    backoff_.erase(backoff_.begin());
    MoveToActive(std::move(qp));
  }
}

void SchedulingQueue::FlushUnschedulablePodsLeftover() {
  const client::Time now = clock_->Now();
  std::vector<QueuedPodInfoPtr> stale;
  for (const auto& [uid, qp] : unschedulable_) {
    if (!qp->gating_plugin.empty()) continue;  // gated pods wait for their gates only
    if (now - qp->timestamp > options_.max_in_unschedulable) stale.push_back(qp);
  }
  std::sort(stale.begin(), stale.end(),
            [](const auto& a, const auto& b) { return a->sequence < b->sequence; });
  for (QueuedPodInfoPtr& qp : stale) {
    unschedulable_.erase(qp->pod->uid_key);
    Requeue(qp, IsPodWorthRequeuing(*qp, ClusterEvent{EventResource::kWildcard, kAll}, nullptr,
                                    nullptr));
  }
}

void SchedulingQueue::AddNominatedPod(const PodInfoPtr& pod, const NominatingInfo& info) {
  const api::UidKey uid = pod->uid_key;
  std::string node = info.mode == NominatingInfo::Mode::kOverride
                         ? info.nominated_node_name
                         : pod->pod().status.nominated_node_name;
  if (info.mode == NominatingInfo::Mode::kNoop) {
    // Keep an existing in-memory nomination when the pod's status has none yet.
    if (auto it = nominated_node_of_.find(uid); it != nominated_node_of_.end() && node.empty()) {
      node = it->second;
    }
  }
  DeleteNominatedPodIfExists(uid);
  if (node.empty()) return;
  nominated_[node].push_back(pod);
  nominated_node_of_[uid] = node;
}

void SchedulingQueue::DeleteNominatedPodIfExists(const api::UidKey& uid) {
  auto it = nominated_node_of_.find(uid);
  if (it == nominated_node_of_.end()) return;
  auto n = nominated_.find(it->second);
  if (n != nominated_.end()) {
    auto& pods = n->second;
    pods.erase(std::remove_if(pods.begin(), pods.end(),
                              [&](const PodInfoPtr& p) { return p->uid_key == uid; }),
               pods.end());
    if (pods.empty()) nominated_.erase(n);
  }
  nominated_node_of_.erase(it);
}

std::span<const PodInfoPtr> SchedulingQueue::NominatedPodsForNode(std::string_view node) const {
  auto it = nominated_.find(node);
  if (it == nominated_.end()) return {};
  return it->second;
}

std::string SchedulingQueue::NominatedNodeOf(const std::string& uid) const {
  auto it = nominated_node_of_.find(api::UidKeyOf(uid));
  return it == nominated_node_of_.end() ? std::string() : it->second;
}

}  // namespace kt::scheduler
