#include "controllers/nodelifecycle/controller.h"

#include <algorithm>
#include <utility>

#include "api/codec.h"
#include "api/table.h"
#include "core/thread_name.h"
#include "core/time.h"

namespace kt::controllers::nodelifecycle {

namespace {

using server::ObjectPtr;
using server::Resource;
using std::chrono::milliseconds;

constexpr std::string_view kNodeNameIndex = "spec.nodeName";

// tryUpdateNodeHealth is retried on a fresh read every 20 ms for 100 ms (retrySleepTime,
// NodeHealthUpdateRetry): six attempts in all.
constexpr client::Duration kRetrySleepTime = milliseconds(20);
constexpr int kNodeHealthUpdateAttempts = 6;
// A queued node without a Ready condition is tried again after 50 ms (doNoExecuteTaintingPass).
constexpr client::Duration kNoConditionRetry = milliseconds(50);

// The conditions forced to Unknown (not NetworkUnavailable, which the control plane manages).
constexpr std::string_view kForcedConditions[] = {"Ready", "MemoryPressure", "DiskPressure",
                                                  "PIDPressure"};

const api::Condition* FindCondition(const std::vector<api::Condition>& conditions,
                                    std::string_view type) {
  for (const api::Condition& c : conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

api::Condition* FindCondition(std::vector<api::Condition>& conditions, std::string_view type) {
  for (api::Condition& c : conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

// apiequality.Semantic.DeepEqual of two node conditions.
bool SameCondition(const api::Condition& a, const api::Condition& b) {
  return a.type == b.type && a.status == b.status && a.reason == b.reason &&
         a.message == b.message && a.last_heartbeat_time == b.last_heartbeat_time &&
         a.last_transition_time == b.last_transition_time;
}

std::optional<client::Time> ParseTime(std::string_view rfc3339) {
  const api::Timestamp t = api::ParseTimestamp(rfc3339);
  if (t.zero) return std::nullopt;
  return client::Time(std::chrono::seconds(t.seconds) + std::chrono::nanoseconds(t.nanos));
}

std::optional<client::Time> RenewTime(const ObjectPtr& lease) {
  const api::Lease* l = lease->As<api::Lease>();
  if (l == nullptr) return std::nullopt;
  return ParseTime(l->renew_time);
}

std::string PodKeyString(std::string_view ns, std::string_view name) {
  std::string key(ns);
  key.push_back('/');
  key.append(name);
  return key;
}

}  // namespace

Controller::Controller(Options options)
    : options_(std::move(options)),
      clock_(options_.clock),
      client_(options_.client),
      recorder_(std::move(options_.recorder)),
      noschedule_backoff_(milliseconds(5), std::chrono::seconds(1000)),
      box_(std::make_shared<Mailbox>()) {
  rates_.healthy = options_.node_eviction_rate;
  rates_.secondary = options_.secondary_node_eviction_rate;
  rates_.large_cluster_size_threshold = options_.large_cluster_size_threshold;
  if (!recorder_) {
    recorder_ =
        client::NewCoreV1Recorder(client_, clock_, std::string(kEventComponent), options_.host);
  }
  pod_backoff_ = client::DefaultControllerRateLimiter(clock_);
  TaintWriter::Options wo;
  wo.client = client_;
  wo.clock = clock_;
  wo.box = box_;
  wo.in_flight = &in_flight_;
  wo.cached = [this](const std::string& node) { return nodes_->Get("", node); };
  // A NoSchedule pass that found the node's taints being written runs once they are.
  wo.idle = [this](const std::string& node) {
    if (noschedule_waiting_.erase(node) > 0 && noschedule_queued_.insert(node).second) {
      noschedule_queue_.push_back(node);
    }
  };
  taint_writer_ = std::make_unique<TaintWriter>(std::move(wo));
  nodes_ = std::make_unique<client::Informer>(std::move(options_.nodes),
                                              client::Informer::Options::Manual(clock_, "nodes"));
  client::Informer::Options pod_options = client::Informer::Options::Manual(clock_, "pods");
  // OnPodChange acts only on pods bound to a node, and nothing on a deletion: other changes
  // wait for the next wake-up (every Round dispatches what waits before it reads the pods).
  pod_options.wake_for = [](server::WatchEventType type, const server::StoredObject& object) {
    if (type == server::WatchEventType::kDeleted) return false;
    const api::Pod* pod = object.As<api::Pod>();
    return pod == nullptr || !pod->spec.node_name.empty();
  };
  pods_ = std::make_unique<client::Informer>(std::move(options_.pods), std::move(pod_options));
  leases_ = std::make_unique<client::Informer>(std::move(options_.leases),
                                               client::Informer::Options::Manual(clock_, "leases"));
  pods_->AddIndexer(std::string(kNodeNameIndex), [](const server::StoredObject& o) {
    const api::Pod* p = o.As<api::Pod>();
    if (p == nullptr || p->spec.node_name.empty()) return std::vector<std::string>{};
    return std::vector<std::string>{p->spec.node_name};
  });
  // The handlers keep infos_ in step with the informers, so that a health pass walks its own
  // map (upstream lists the node lister) without one lookup per node.
  client::EventHandler node_handler;
  node_handler.on_add = [this](const ObjectPtr& o, bool) { OnNodeChange(o); };
  node_handler.on_update = [this](const ObjectPtr&, const ObjectPtr& o) { OnNodeChange(o); };
  node_handler.on_delete = [this](const ObjectPtr& o) {
    const std::string& name = o->meta().name;
    auto info = infos_.find(name);
    if (info != infos_.end()) {
      info->second.node = nullptr;
      info->second.retry = false;
    }
    taint_writer_->Forget(name);
    noschedule_waiting_.erase(name);
  };
  nodes_->AddEventHandler(std::move(node_handler));
  client::EventHandler lease_handler;
  lease_handler.on_add = [this](const ObjectPtr& o, bool) { OnLeaseChange(o, o); };
  lease_handler.on_update = [this](const ObjectPtr&, const ObjectPtr& o) { OnLeaseChange(o, o); };
  lease_handler.on_delete = [this](const ObjectPtr& o) { OnLeaseChange(o, nullptr); };
  leases_->AddEventHandler(std::move(lease_handler));
  client::EventHandler pod_handler;
  pod_handler.on_add = [this](const ObjectPtr& o, bool) { OnPodChange(nullptr, o); };
  pod_handler.on_update = [this](const ObjectPtr& a, const ObjectPtr& b) { OnPodChange(a, b); };
  pods_->AddEventHandler(std::move(pod_handler));
  auto wake = [box = box_] { box->Wake(); };
  nodes_->SetOnPending(wake);
  pods_->SetOnPending(wake);
  leases_->SetOnPending(wake);
}

Controller::~Controller() { Stop(); }

void Controller::Start() {
  nodes_->Start();
  pods_->Start();
  leases_->Start();
  if (!options_.manual) {
    thread_ = std::thread([this] {
      core::NameBackgroundThread("kt-node-lifecyc");
      Run();
    });
  }
}

void Controller::Stop() {
  if (!box_->Stop()) return;
  if (thread_.joinable()) thread_.join();
  if (pass_timer_ != 0) clock_->Cancel(pass_timer_);
  if (tick_timer_ != 0) clock_->Cancel(tick_timer_);
  nodes_->Stop();
  pods_->Stop();
  leases_->Stop();
  recorder_->Stop();
}

bool Controller::HasSynced() const {
  return nodes_->HasSynced() && pods_->HasSynced() && leases_->HasSynced();
}

void Controller::Run() {
  for (;;) {
    if (Round() > 0) continue;
    if (!box_->Wait()) return;
  }
}

size_t Controller::RunPending() {
  size_t total = 0;
  for (size_t n; (n = Round()) > 0;) total += n;
  return total;
}

size_t Controller::Round() {
  std::deque<std::function<void()>> inbox;
  if (!box_->Take(&inbox)) return 0;
  size_t done = nodes_->DispatchPending() + pods_->DispatchPending() + leases_->DispatchPending();
  if (!started_ && HasSynced()) {
    // Upstream's Run: workers and the tainting loop start once the caches have synced, and
    // the first health pass runs at once.
    started_ = true;
    tick_origin_ = clock_->Now();
    MonitorNodeHealth();
    ++done;
  }
  while (started_ && !noschedule_queue_.empty()) {
    std::string name = std::move(noschedule_queue_.front());
    noschedule_queue_.pop_front();
    noschedule_queued_.erase(name);
    DoNoScheduleTaintingPass(name);
    ++done;
  }
  while (started_ && !pod_queue_.empty()) {
    PodKey key = std::move(pod_queue_.front());
    pod_queue_.pop_front();
    pod_queued_.erase(PodKeyString(key.namespace_, key.name));
    ProcessPod(key);
    ++done;
  }
  for (auto& fn : inbox) {
    fn();
    ++done;
  }
  return done;
}

// --- Health ------------------------------------------------------------------------------------

Controller::ReadyStatus Controller::ReadyStatusOf(const api::Condition* ready) {
  if (ready == nullptr) return ReadyStatus::kNone;
  if (ready->status == "True") return ReadyStatus::kTrue;
  if (ready->status == "False") return ReadyStatus::kFalse;
  if (ready->status == "Unknown") return ReadyStatus::kUnknown;
  return ReadyStatus::kOther;
}

void Controller::Refresh(NodeInfo& info) {
  if (info.cached_revision == info.node->revision) return;
  info.cached_revision = info.node->revision;
  const api::ObjectMeta& meta = info.node->meta();
  std::string zone = ZoneKey(meta);
  if (zone != info.zone || zone_names_.empty()) {
    auto [it, inserted] = zone_ids_.try_emplace(zone, static_cast<int>(zone_names_.size()));
    if (inserted) zone_names_.push_back(zone);
    info.zone_id = it->second;
    info.zone = std::move(zone);
  }
  info.excluded = meta.labels.Has(kLabelExcludeDisruption);
  const api::Node& n = *info.node->As<api::Node>();
  info.ready = FindCondition(n.status.conditions, "Ready");
  info.ready_status = ReadyStatusOf(info.ready);
  info.noexecute_tainted = TaintExists(n.spec.taints, UnreachableNoExecute()) ||
                           TaintExists(n.spec.taints, NotReadyNoExecute());
}

void Controller::OnLeaseChange(const ObjectPtr& old_lease, const ObjectPtr& lease) {
  const api::ObjectMeta& meta = old_lease->meta();
  if (meta.namespace_ != kNodeLeaseNamespace) return;
  if (lease) {
    // Read now, while the object is at hand: a health pass reads only this.
    infos_[meta.name].lease = SavedLease{lease->revision, RenewTime(lease)};
    return;
  }
  auto it = infos_.find(meta.name);
  if (it == infos_.end()) return;
  it->second.lease = SavedLease{};
  if (!it->second.node && !it->second.known) infos_.erase(it);
}

void Controller::MonitorNodeHealth() {
  if (!started_ || pass_) return;
  if (pass_timer_ != 0) {
    clock_->Cancel(pass_timer_);
    pass_timer_ = 0;
  }
  const client::Time now = clock_->Now();
  pass_ = std::make_unique<Pass>();
  pass_->nodes.reserve(infos_.size());

  // classifyNodes: nodes registered and removed since the last pass (a node deleted and created
  // again under its name counts as both), and known nodes in a zone without a state.
  std::vector<size_t> added;
  std::vector<std::pair<std::string, std::string>> removed;  // name, uid
  for (auto it = infos_.begin(); it != infos_.end();) {
    NodeInfo& info = it->second;
    // An object of the revision seen before has the UID seen before.
    if (info.known && (!info.node || info.recreated)) {
      removed.emplace_back(it->first, info.uid);
      info.known = false;
      info.has_health = false;
      info.health = NodeHealth{};
      info.retry = false;
    }
    info.recreated = false;
    if (!info.node) {
      // Gone: forgotten, unless its Lease is still there.
      if (info.lease.revision == 0) {
        it = infos_.erase(it);
      } else {
        ++it;
      }
      continue;
    }
    if (!info.known) {
      added.push_back(pass_->nodes.size());
    } else if (!zone_states_.contains(info.zone)) {
      AddZone(info.zone);
    }
    PassNode& pn = pass_->nodes.emplace_back();
    pn.node = info.node;
    pn.info = &info;
    pn.name = &it->first;
    ++it;
  }
  for (size_t i : added) {
    PassNode& pn = pass_->nodes[i];
    const api::ObjectMeta& meta = pn.node->meta();
    NodeEvent(meta.name, meta.uid, "RegisteredNode",
              "Node " + meta.name + " event: Registered Node " + meta.name + " in Controller");
    pn.info->known = true;
    pn.info->uid = meta.uid;
    AddZone(pn.info->zone);
    MarkNodeAsReachable(pn.node, *pn.info);
  }
  for (const auto& [name, uid] : removed) {
    NodeEvent(name, uid, "RemovingNode",
              "Node " + name + " event: Removing Node " + name + " from Controller");
  }

  for (size_t i = 0; i < pass_->nodes.size(); ++i) {
    PassNode& pn = pass_->nodes[i];
    if (TryUpdateNodeHealth(pn, *pn.info, now)) {
      ++pass_->pending;
      WriteStatus(i);
    }
  }
  if (pass_->pending == 0) FinishPass();
}

bool Controller::TryUpdateNodeHealth(PassNode& pn, NodeInfo& info, client::Time now) {
  NodeHealth& h = info.health;
  // The informer's object (the usual case) was read when it arrived (Refresh): the pass reads
  // only `info`. A fresh read (a retried status write) is read here.
  const bool informers = pn.node == info.node;
  const store::Revision revision = informers ? info.cached_revision : pn.node->revision;
  auto node = [&]() -> const api::Node& { return *pn.node->As<api::Node>(); };
  const api::Condition* current =
      informers ? info.ready : FindCondition(node().status.conditions, "Ready");
  pn.current_status = informers ? info.ready_status : ReadyStatusOf(current);
  client::Duration grace_period;
  if (current == nullptr) {
    // Never posted: a fake Ready Unknown dated from the node's creation, and the longer grace.
    if (!pn.forced) pn.forced = std::make_unique<Forced>();
    api::Condition& never = pn.forced->never_posted;
    never = api::Condition{};
    never.type = "Ready";
    never.status = "Unknown";
    const api::Node& n = node();
    never.last_heartbeat_time = n.meta.creation_timestamp;
    never.last_transition_time = n.meta.creation_timestamp;
    pn.observed = &never;
    pn.observed_status = ReadyStatus::kUnknown;
    grace_period = options_.node_startup_grace_period;
    if (info.has_health) {
      h.ready.reset();
    } else {
      const client::Time created = ParseTime(n.meta.creation_timestamp).value_or(client::Time{});
      h = NodeHealth{created, created, {}, nullptr, 0};
      info.has_health = true;
    }
  } else {
    pn.observed = current;
    pn.observed_status = pn.current_status;
    grace_period = options_.node_monitor_grace_period;
  }
  // What was saved (read before the record is replaced below).
  const api::Condition* saved = info.has_health ? h.ready.get() : nullptr;
  SavedLease saved_lease;
  if (info.has_health) saved_lease = h.lease;
  // A new record (first sight, first Ready, or a new heartbeat) starts the probe time now and
  // forgets the Lease seen so far, as upstream's fresh nodeHealthData does. A heartbeat is
  // compared only when the node changed since the Ready condition was saved.
  if (!info.has_health) {
    h = NodeHealth{now, now, {}, std::make_unique<api::Condition>(*current), revision};
    info.has_health = true;
  } else if (saved == nullptr && current != nullptr) {
    h = NodeHealth{now, now, {}, std::make_unique<api::Condition>(*current), revision};
  } else if (saved != nullptr && current != nullptr && h.ready_revision != revision &&
             saved->last_heartbeat_time != current->last_heartbeat_time) {
    const client::Time transition = saved->last_transition_time != current->last_transition_time
                                        ? now
                                        : h.ready_transition_timestamp;
    h = NodeHealth{now, transition, {}, std::make_unique<api::Condition>(*current), revision};
  }
  // A renewed Lease moves the probe time on too (a node that renews its Lease but never posts
  // status is taken as healthy, as upstream).
  pn.observed_lease = info.lease;
  if (info.lease.revision != 0) {
    // The same object (revision) was seen before: not renewed since. MicroTime.Before is false
    // when either time is unset.
    const bool same = saved_lease.revision == info.lease.revision;
    const bool renewed =
        saved_lease.revision == 0 || (!same && saved_lease.renew_time && info.lease.renew_time &&
                                      *saved_lease.renew_time < *info.lease.renew_time);
    if (renewed) {
      h.lease = info.lease;
      h.probe_timestamp = now;
    }
  }
  pn.current = current;
  if (pn.forced) pn.forced->write.clear();
  if (!(now > h.probe_timestamp + grace_period)) return false;

  // Silent for longer than the grace period: Ready and the pressure conditions become Unknown.
  if (!pn.forced) pn.forced = std::make_unique<Forced>();
  const api::Node& n = node();
  std::vector<api::Condition>& conditions = pn.forced->conditions;
  conditions = n.status.conditions;
  const std::string timestamp = FormatRfc3339(now);
  for (std::string_view type : kForcedConditions) {
    api::Condition* c = FindCondition(conditions, type);
    if (c == nullptr) {
      api::Condition never;
      never.type = std::string(type);
      never.status = "Unknown";
      never.reason = "NodeStatusNeverUpdated";
      never.message = "Kubelet never posted node status.";
      never.last_heartbeat_time = n.meta.creation_timestamp;
      never.last_transition_time = timestamp;
      conditions.push_back(never);
      pn.forced->write.push_back(std::move(never));
    } else if (c->status != "Unknown") {
      c->status = "Unknown";
      c->reason = "NodeStatusUnknown";
      c->message = "Kubelet stopped posting node status.";
      c->last_transition_time = timestamp;
      pn.forced->write.push_back(*c);
    }
  }
  pn.current = FindCondition(conditions, "Ready");
  pn.current_status = ReadyStatus::kUnknown;
  // Written only when Ready itself changed (upstream compares the Ready conditions).
  return !SameCondition(*pn.current, *pn.observed);
}

void Controller::WriteStatus(size_t index) {
  PassNode& pn = pass_->nodes[index];
  Result<rapidjson::Document> doc = api::ParseTrustedJson(*pn.node->json);
  if (!doc) {
    pn.skip = true;
    return StatusDone(index);
  }
  for (const api::Condition& c : pn.forced->write) {
    if (!api::SetNodeCondition(*doc, c).ok()) {
      pn.skip = true;
      return StatusDone(index);
    }
  }
  ++pn.attempts;
  in_flight_.fetch_add(1, std::memory_order_acq_rel);
  client_->Update(Resource::kNodes, "", pn.node->meta().name, server::Subresource::kStatus,
                  api::EncodeJson(*doc),
                  [this, box = box_, index](server::ApiResult<store::Bytes> r) {
                    box->Post([this, index, r = std::move(r)]() mutable {
                      in_flight_.fetch_sub(1, std::memory_order_acq_rel);
                      StatusWritten(index, std::move(r));
                    });
                  });
}

void Controller::StatusWritten(size_t index, server::ApiResult<store::Bytes> result) {
  PassNode& pn = pass_->nodes[index];
  if (result) {
    NodeHealth& h = pn.info->health;
    h.ready = std::make_unique<api::Condition>(*pn.current);
    h.ready_revision = 0;
    h.ready_transition_timestamp = clock_->Now();
    h.lease = pn.observed_lease;
    return StatusDone(index);
  }
  if (pn.attempts >= kNodeHealthUpdateAttempts) {
    // "Update health of Node from Controller error, Skipping - no pods will be evicted".
    pn.skip = true;
    return StatusDone(index);
  }
  RetryStatus(index);
}

void Controller::RetryStatus(size_t index) {
  // Upstream reads the node again at once and tries again 20 ms later.
  const std::string name = pass_->nodes[index].node->meta().name;
  in_flight_.fetch_add(1, std::memory_order_acq_rel);
  client_->Get(Resource::kNodes, "", name,
               [this, box = box_, index](server::ApiResult<ObjectPtr> r) {
                 box->Post([this, box, index, r = std::move(r)]() mutable {
                   in_flight_.fetch_sub(1, std::memory_order_acq_rel);
                   PassNode& pn = pass_->nodes[index];
                   if (!r || (*r)->As<api::Node>() == nullptr) {
                     // "Probably Node was deleted": the node is left out of this pass.
                     pn.skip = true;
                     return StatusDone(index);
                   }
                   pn.node = std::move(*r);
                   clock_->AfterFunc(kRetrySleepTime, [this, box, index] {
                     box->Post([this, index] {
                       PassNode& pn = pass_->nodes[index];
                       if (TryUpdateNodeHealth(pn, *pn.info, clock_->Now())) {
                         return WriteStatus(index);
                       }
                       StatusDone(index);
                     });
                   });
                 });
               });
}

void Controller::StatusDone(size_t index) {
  (void)index;
  if (--pass_->pending == 0) FinishPass();
}

void Controller::FinishPass() {
  // Ready and not-Ready nodes per zone (by zone id), excluded nodes left out.
  std::vector<std::pair<int, int>> counts(zone_names_.size());
  for (PassNode& pn : pass_->nodes) {
    if (pn.skip) continue;
    const std::string& name = *pn.name;
    if (!pn.info->excluded) {
      auto& [ready, not_ready] = counts[pn.info->zone_id];
      if (pn.current_status == ReadyStatus::kTrue) {
        ++ready;
      } else {
        ++not_ready;
      }
    }
    if (pn.current) {
      ProcessTaintBaseEviction(pn.node, *pn.info, pn.observed_status);
      const bool needs_retry = pn.info->retry;
      const bool became_not_ready =
          pn.current_status != ReadyStatus::kTrue && pn.observed_status == ReadyStatus::kTrue;
      if (became_not_ready) {
        NodeEvent(name, pn.node->meta().uid, "NodeNotReady",
                  "Node " + name + " status is now: NodeNotReady");
      }
      if (became_not_ready || (needs_retry && pn.observed_status != ReadyStatus::kTrue)) {
        MarkPodsNotReady(name, pods_->ByIndex(kNodeNameIndex, name), [this, name](bool ok) {
          auto it = infos_.find(name);
          if (!ok && it != infos_.end() && it->second.node) it->second.retry = true;
        });
      }
    }
    pn.info->retry = false;
  }
  std::map<std::string, std::pair<int, int>> zones;
  for (size_t id = 0; id < counts.size(); ++id) {
    if (counts[id].first + counts[id].second > 0) zones.emplace(zone_names_[id], counts[id]);
  }
  HandleDisruption(zones);
  ++passes_;
  pass_.reset();
  SchedulePass();
  ArmTick();
}

void Controller::SchedulePass() {
  // wait.UntilWithContext: the next pass a period after this one ended.
  pass_timer_ = clock_->AfterFunc(options_.node_monitor_period, [this, box = box_] {
    box->Post([this] {
      pass_timer_ = 0;
      MonitorNodeHealth();
    });
  });
}

void Controller::ProcessTaintBaseEviction(const ObjectPtr& node, NodeInfo& info,
                                          ReadyStatus observed) {
  if (observed == ReadyStatus::kTrue) return MarkNodeAsReachable(node, info);
  if (observed != ReadyStatus::kFalse && observed != ReadyStatus::kUnknown) return;
  const std::string_view status = observed == ReadyStatus::kFalse ? "False" : "Unknown";
  std::optional<TaintChange> change = NoExecuteChange(status, FormatRfc3339(clock_->Now()));
  if (!change) return;
  const api::Node& n = *node->As<api::Node>();
  // Tainted for the other state: swapped at once, without waiting for a token.
  if (TaintExists(n.spec.taints, change->remove[0])) {
    taint_writer_->Change(n.meta.name, std::move(*change), nullptr);
  } else {
    MarkNodeForTainting(node, info, status);
  }
}

bool Controller::MarkNodeForTainting(const ObjectPtr& node, NodeInfo& info,
                                     std::string_view status) {
  const api::Node& n = *node->As<api::Node>();
  auto it = tainters_.find(info.zone);
  if (it == tainters_.end()) {
    AddZone(info.zone);
    it = tainters_.find(info.zone);
  }
  RateLimitedTimedQueue& q = *it->second;
  // A node that lacks the taint of its state is queued afresh (it may have been processed for
  // the other state).
  if (status == "False" && !TaintExists(n.spec.taints, NotReadyNoExecute())) q.Remove(n.meta.name);
  if (status == "Unknown" && !TaintExists(n.spec.taints, UnreachableNoExecute())) {
    q.Remove(n.meta.name);
  }
  info.tainting = true;
  return q.Add(n.meta.name, n.meta.uid);
}

void Controller::MarkNodeAsReachable(const ObjectPtr& node, NodeInfo& info) {
  // The common case (a Ready node of the informer's, untainted, never queued) reads nothing.
  if (node == info.node && !info.noexecute_tainted && !info.tainting) {
    return;
  }
  const api::Node& n = *node->As<api::Node>();
  TaintChange change;
  for (const Taint* t : {&UnreachableNoExecute(), &NotReadyNoExecute()}) {
    if (TaintExists(n.spec.taints, *t)) change.remove.push_back(*t);
  }
  // Out of the queue now, as upstream's synchronous removal has it before anything else of the
  // pass queues the node again (upstream leaves it queued if the removal fails; the next pass
  // queues it again if it still needs a taint).
  if (info.tainting) {
    info.tainting = false;
    auto it = tainters_.find(info.zone);
    if (it != tainters_.end()) it->second->Remove(n.meta.name);
  }
  if (!change.empty()) taint_writer_->Change(n.meta.name, std::move(change), nullptr);
}

void Controller::AddZone(const std::string& zone) {
  if (zone_states_.contains(zone)) return;
  zone_states_[zone] = ZoneState::kInitial;
  // A zone that comes back gets a new queue, as upstream's addPodEvictorForNewZone does.
  tainters_[zone] = std::make_unique<RateLimitedTimedQueue>(clock_, rates_.healthy);
}

void Controller::HandleDisruption(const std::map<std::string, std::pair<int, int>>& zones) {
  std::map<std::string, ZoneState> new_states;
  bool all_are_fully_disrupted = true;
  for (const auto& [zone, counts] : zones) {
    const ZoneState state =
        ComputeZoneState(counts.first, counts.second, options_.unhealthy_zone_threshold);
    if (state != ZoneState::kFullDisruption) all_are_fully_disrupted = false;
    new_states[zone] = state;
    AddZone(zone);  // upstream: "Setting initial state for unseen zone"
  }
  // Zones without nodes (left) lose their state; their queues stay, as upstream's.
  bool all_were_fully_disrupted = true;
  for (auto it = zone_states_.begin(); it != zone_states_.end();) {
    if (!zones.contains(it->first)) {
      it = zone_states_.erase(it);
      continue;
    }
    if (it->second != ZoneState::kFullDisruption) all_were_fully_disrupted = false;
    ++it;
  }
  if (all_are_fully_disrupted && all_were_fully_disrupted) return;
  if (all_are_fully_disrupted) {
    // "Controller detected that all Nodes are not-Ready. Entering master disruption mode": the
    // control plane, not the nodes, is likely cut off. No node is tainted NoExecute meanwhile.
    for (const PassNode& pn : pass_->nodes) MarkNodeAsReachable(pn.node, *pn.info);
    for (auto& [zone, state] : zone_states_) {
      tainters_.at(zone)->SwapLimiter(0);
      state = ZoneState::kFullDisruption;
    }
    return;
  }
  if (all_were_fully_disrupted) {
    // "Controller detected that some Nodes are Ready. Exiting master disruption mode": every
    // node gets a full grace period again before it can be found silent.
    const client::Time now = clock_->Now();
    for (const PassNode& pn : pass_->nodes) {
      if (!pn.info->has_health) continue;
      pn.info->health.probe_timestamp = now;
      pn.info->health.ready_transition_timestamp = now;
    }
    for (auto& [zone, state] : zone_states_) {
      const ZoneState next = new_states.at(zone);
      auto it = zones.find(zone);
      SetLimiterInZone(zone, it->second.first + it->second.second, next);
      state = next;
    }
    return;
  }
  for (auto& [zone, state] : zone_states_) {
    const ZoneState next = new_states.at(zone);
    if (state == next) continue;
    auto it = zones.find(zone);
    SetLimiterInZone(zone, it->second.first + it->second.second, next);
    state = next;
  }
}

void Controller::SetLimiterInZone(const std::string& zone, int zone_size, ZoneState state) {
  const std::optional<float> rate = ZoneEvictionRate(state, zone_size, rates_);
  if (rate) tainters_.at(zone)->SwapLimiter(*rate);
}

void Controller::MarkPodsNotReady(const std::string& node, const std::vector<ObjectPtr>& pods,
                                  std::function<void(bool ok)> done) {
  struct Writes {
    int left = 0;
    bool ok = true;
    std::function<void(bool)> done;
  };
  auto writes = std::make_shared<Writes>();
  writes->done = std::move(done);
  const std::string now = FormatRfc3339(clock_->Now());
  for (const ObjectPtr& object : pods) {
    const api::Pod* p = object->As<api::Pod>();
    if (p == nullptr || p->spec.node_name != node) continue;
    const api::Condition* ready = FindCondition(p->status.conditions, "Ready");
    // Only a Ready condition that is not already False changes (UpdatePodCondition).
    if (ready == nullptr || ready->status == "False") continue;
    api::Condition next = *ready;
    next.status = "False";
    next.last_transition_time = now;
    Result<rapidjson::Document> doc = api::ParseTrustedJson(*object->json);
    if (!doc || !api::SetPodCondition(*doc, next).ok()) continue;
    ++writes->left;
    in_flight_.fetch_add(1, std::memory_order_acq_rel);
    client_->Update(Resource::kPods, p->meta.namespace_, p->meta.name, server::Subresource::kStatus,
                    api::EncodeJson(*doc),
                    [this, box = box_, writes, object](server::ApiResult<store::Bytes> r) {
                      box->Post([this, writes, object, r = std::move(r)] {
                        in_flight_.fetch_sub(1, std::memory_order_acq_rel);
                        const bool gone = !r && r.error().code == 404;
                        if (!r && !gone) writes->ok = false;
                        // Upstream records the event after the write, unless the pod is gone.
                        if (!gone) {
                          recorder_->Eventf(client::RefOf(*object), nullptr,
                                            client::kEventTypeWarning, "NodeNotReady", "",
                                            "Node is not ready");
                        }
                        if (--writes->left == 0 && writes->done) writes->done(writes->ok);
                      });
                    });
  }
  if (writes->left == 0 && writes->done) writes->done(true);
}

// --- NoSchedule taints and pods newly on a node ------------------------------------------------

void Controller::OnNodeChange(const ObjectPtr& object) {
  const api::ObjectMeta& meta = object->meta();
  const std::string& name = meta.name;
  NodeInfo& info = infos_[name];
  if (info.known && info.uid != meta.uid) info.recreated = true;
  info.node = object;
  // Read now, while the object is at hand: a health pass reads only what this keeps.
  Refresh(info);
  if (noschedule_queued_.insert(name).second) noschedule_queue_.push_back(name);
}

void Controller::DoNoScheduleTaintingPass(const std::string& name) {
  if (taint_writer_->Busy(name)) {
    // One write at a time per node: looked at again once the node's writes end.
    noschedule_waiting_.insert(name);
    return;
  }
  ObjectPtr object = nodes_->Get("", name);
  const api::Node* n = object ? object->As<api::Node>() : nullptr;
  if (n == nullptr) return;
  TaintChange change = NoScheduleTaintChange(*n);
  if (change.empty()) {
    noschedule_backoff_.Forget(name);
    return;
  }
  const client::Time now = clock_->Now();
  for (Taint& t : change.add) t.time_added = FormatRfc3339(now);
  taint_writer_->Change(name, std::move(change), [this, name](bool ok) {
    if (ok) return noschedule_backoff_.Forget(name);
    clock_->AfterFunc(noschedule_backoff_.When(name), [this, box = box_, name] {
      box->Post([this, name] {
        if (noschedule_queued_.insert(name).second) noschedule_queue_.push_back(name);
      });
    });
  });
}

void Controller::OnPodChange(const ObjectPtr& old_pod, const ObjectPtr& new_pod) {
  const api::Pod* p = new_pod->As<api::Pod>();
  if (p == nullptr || p->spec.node_name.empty()) return;
  if (old_pod) {
    const api::Pod* o = old_pod->As<api::Pod>();
    if (o != nullptr && o->spec.node_name == p->spec.node_name) return;
  }
  if (pod_queued_.insert(PodKeyString(p->meta.namespace_, p->meta.name)).second) {
    pod_queue_.push_back(PodKey{p->meta.namespace_, p->meta.name});
  }
}

void Controller::ProcessPod(const PodKey& key) {
  ObjectPtr object = pods_->Get(key.namespace_, key.name);
  const api::Pod* p = object ? object->As<api::Pod>() : nullptr;
  if (p == nullptr) return;
  const std::string node = p->spec.node_name;
  auto info = infos_.find(node);
  // Not seen by a health pass yet, or removed: the next pass looks at its pods.
  if (info == infos_.end() || !info->second.has_health) return;
  if (!nodes_->Get("", node)) return RetryPod(key);
  const api::Condition* ready = info->second.health.ready.get();
  if (!ready || ready->status == "True") return;
  MarkPodsNotReady(node, {object}, [this, key](bool ok) {
    if (ok) return pod_backoff_->Forget(PodKeyString(key.namespace_, key.name));
    RetryPod(key);
  });
}

void Controller::RetryPod(const PodKey& key) {
  const client::Duration delay = pod_backoff_->When(PodKeyString(key.namespace_, key.name));
  clock_->AfterFunc(delay, [this, box = box_, key] {
    box->Post([this, key] {
      if (pod_queued_.insert(PodKeyString(key.namespace_, key.name)).second) {
        pod_queue_.push_back(key);
      }
    });
  });
}

// --- NoExecute tainting ------------------------------------------------------------------------

namespace {

// More than one token per upstream's 100 ms NodeEvictionPeriod.
bool FasterThanTheTick(float qps) {
  return static_cast<double>(qps) * std::chrono::duration<double>(kNodeEvictionPeriod).count() > 1;
}

}  // namespace

void Controller::ArmTick() {
  if (!started_) return;
  // Upstream tries the queues every 100 ms and only a try that finds a token can do anything,
  // so a zone's next try is the first of those instants at which its token is there. A zone
  // whose rate gives more than one token per 100 ms is the exception: upstream's Try goes on
  // from one taint write to the next while it finds a token, and its API writes take longer
  // than such a rate's interval between tokens, so it taints at the rate. Writes here are
  // faster than that (well under a millisecond in process): waiting for the next 100 ms would cap
  // every rate at 10 nodes a second, so such a zone tries again as soon as its token is there.
  const int64_t period = kNodeEvictionPeriod.count();
  client::Time when = client::Time::max();
  for (const auto& [zone, q] : tainters_) {
    if (zone_busy_.contains(zone)) continue;
    const client::Time token = q->NextTokenAt();
    if (token == client::Time::max()) continue;
    const client::Time from = std::max(token, clock_->Now());
    if (FasterThanTheTick(q->qps())) {
      when = std::min(when, from);
      continue;
    }
    const int64_t since = (from - tick_origin_).count();
    when = std::min(when, tick_origin_ + client::Duration((since + period - 1) / period * period));
  }
  if (when == client::Time::max()) {
    if (tick_timer_ != 0) clock_->Cancel(tick_timer_);
    tick_timer_ = 0;
    return;
  }
  if (tick_timer_ != 0 && tick_armed_for_ == when) return;
  if (tick_timer_ != 0) clock_->Cancel(tick_timer_);
  tick_armed_for_ = when;
  const uint64_t generation = ++tick_generation_;
  const bool on_grid = (when - tick_origin_).count() % period == 0;
  tick_timer_ = clock_->At(when, [this, box = box_, generation, on_grid] {
    box->Post([this, generation, on_grid] {
      if (generation != tick_generation_) return;
      tick_timer_ = 0;
      Tick(on_grid);
    });
  });
}

void Controller::Tick(bool on_grid) {
  std::vector<std::string> zones;
  zones.reserve(tainters_.size());
  for (const auto& [zone, q] : tainters_) {
    // Between the 100 ms instants only the zones faster than them are tried.
    if (on_grid || FasterThanTheTick(q->qps())) zones.push_back(zone);
  }
  std::sort(zones.begin(), zones.end());
  for (const std::string& zone : zones) {
    if (!zone_busy_.contains(zone)) TryZone(zone);
  }
  ArmTick();
}

void Controller::TryZone(const std::string& zone) {
  auto it = tainters_.find(zone);
  if (it == tainters_.end()) return;
  RateLimitedTimedQueue& q = *it->second;
  while (std::optional<RateLimitedTimedQueue::Value> value = q.Next()) {
    ObjectPtr object = nodes_->Get("", value->node);
    const api::Node* n = object ? object->As<api::Node>() : nullptr;
    if (n == nullptr) {
      q.Done(*value, true, {});  // "Node no longer present in nodeLister"
      continue;
    }
    const api::Condition* ready = FindCondition(n->status.conditions, "Ready");
    if (ready == nullptr) {
      q.Done(*value, false, kNoConditionRetry);
      continue;
    }
    std::optional<TaintChange> change =
        NoExecuteChange(ready->status, FormatRfc3339(clock_->Now()));
    if (!change) {
      q.Done(*value, true, {});  // Ready again: nothing to taint
      continue;
    }
    zone_busy_.insert(zone);
    taint_writer_->Change(value->node, std::move(*change),
                          [this, zone, value = *value](bool ok) { Tainted(zone, value, ok, {}); });
    return;
  }
}

void Controller::Tainted(const std::string& zone, const RateLimitedTimedQueue::Value& value,
                         bool ok, client::Duration retry_after) {
  zone_busy_.erase(zone);
  auto it = tainters_.find(zone);
  if (it != tainters_.end()) it->second->Done(value, ok, retry_after);
  // Upstream's Try goes on with the next item at once.
  TryZone(zone);
  ArmTick();
}

// --- Events and introspection ------------------------------------------------------------------

void Controller::NodeEvent(const std::string& name, const std::string& uid, std::string_view reason,
                           std::string message) {
  client::ObjectRef ref;
  ref.api_version = "v1";
  ref.kind = "Node";
  ref.name = name;
  ref.uid = uid;
  recorder_->Eventf(ref, nullptr, client::kEventTypeNormal, reason, "", std::move(message));
}

std::optional<ZoneState> Controller::ZoneStateOf(std::string_view zone) const {
  auto it = zone_states_.find(zone);
  if (it == zone_states_.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> Controller::Zones() const {
  std::vector<std::string> out;
  for (const auto& [zone, state] : zone_states_) out.push_back(zone);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> Controller::QueuedForTainting(std::string_view zone) const {
  auto it = tainters_.find(zone);
  if (it == tainters_.end()) return {};
  return it->second->QueuedNodes();
}

std::optional<float> Controller::EvictionRateOf(std::string_view zone) const {
  auto it = tainters_.find(zone);
  if (it == tainters_.end()) return std::nullopt;
  return it->second->qps();
}

std::optional<client::Time> Controller::ProbeTimestamp(std::string_view node) const {
  auto it = infos_.find(node);
  if (it == infos_.end() || !it->second.has_health) return std::nullopt;
  return it->second.health.probe_timestamp;
}

}  // namespace kt::controllers::nodelifecycle
