#include "controllers/tainteviction/controller.h"

#include <algorithm>
#include <utility>

#include "core/thread_name.h"
#include "core/time.h"

namespace kt::controllers::tainteviction {

namespace {

using server::ObjectPtr;
using server::Resource;

constexpr std::string_view kNodeNameIndex = "spec.nodeName";

bool SameNoExecuteTaints(const api::Node* a, const api::Node* b) {
  auto next = [](const std::vector<Taint>& ts, size_t i) {
    while (i < ts.size() && ts[i].effect != kEffectNoExecute) ++i;
    return i;
  };
  const std::vector<Taint>& x = a->spec.taints;
  const std::vector<Taint>& y = b->spec.taints;
  size_t i = next(x, 0), j = next(y, 0);
  while (i < x.size() && j < y.size()) {
    if (!(x[i] == y[j])) return false;
    i = next(x, i + 1);
    j = next(y, j + 1);
  }
  return i == x.size() && j == y.size();
}

// The DisruptionTarget condition the controller sets before it deletes.
api::Condition DisruptionTarget(const api::Pod& pod, client::Time now) {
  api::Condition c;
  c.type = "DisruptionTarget";
  c.status = "True";
  c.observed_generation = pod.meta.generation;
  c.last_transition_time = FormatRfc3339(now);
  c.reason = std::string(kConditionReason);
  c.message = std::string(kConditionMessage);
  return c;
}

bool HasDisruptionTarget(const api::Pod& pod) {
  for (const api::Condition& c : pod.status.conditions) {
    if (c.type == "DisruptionTarget" && c.status == "True" && c.reason == kConditionReason) {
      return true;
    }
  }
  return false;
}

// The pod is gone, or another pod has its name: nothing of this eviction is left to do.
bool Moot(const server::ApiError& e) {
  return e.code == 404 ||
         (e.code == 409 && e.message.find("Precondition failed: UID") != std::string::npos);
}

// `t` plus `seconds`, saturating at the latest representable time (tolerationSeconds may be as
// large as kMaxTolerationSeconds, beyond what nanoseconds since 1970 can hold from now on).
client::Time After(client::Time t, int64_t seconds) {
  const int64_t ns_left = (client::Time::max() - t).count();
  if (seconds >= ns_left / 1'000'000'000) return client::Time::max();
  return t + std::chrono::seconds(seconds);
}

}  // namespace

Decision Decide(std::span<const Taint> no_execute_taints, std::span<const Toleration> tolerations,
                bool comparison_operators) {
  if (no_execute_taints.empty()) return {Decision::kNone, 0};
  std::optional<std::vector<const Toleration*>> used =
      GetMatchingTolerations(no_execute_taints, tolerations, comparison_operators);
  if (!used) return {Decision::kNow, 0};
  const int64_t seconds = MinTolerationSeconds(*used);
  if (seconds < 0) return {Decision::kStay, 0};
  if (seconds == 0) return {Decision::kNow, 0};
  return {Decision::kAfter, std::min(seconds, kMaxTolerationSeconds)};
}

std::vector<Taint> NoExecuteTaints(const api::Node& node) {
  std::vector<Taint> out;
  for (const Taint& t : node.spec.taints) {
    if (t.effect == kEffectNoExecute) out.push_back(t);
  }
  return out;
}

Controller::Controller(Options options)
    : options_(std::move(options)),
      clock_(options_.clock),
      client_(options_.client),
      recorder_(std::move(options_.recorder)),
      box_(std::make_shared<Mailbox>()) {
  comparison_operators_ = options_.gates.taint_toleration_comparison_operators;
  if (!recorder_) {
    recorder_ =
        client::NewCoreV1Recorder(client_, clock_, std::string(kControllerName), options_.host);
  }
  client::Informer::Options pod_options = client::Informer::Options::Manual(clock_, "pods");
  // A pod bound to no node has nothing to do with taints, nor has any pod while no node has a
  // NoExecute taint and no eviction is pending: its changes wait for the next wake-up
  // (OnPodChange still sees them, in order, then). Under a burst of scheduled pods this spares
  // a wake-up of this thread per pod.
  pod_options.wake_for = [this](server::WatchEventType, const server::StoredObject& object) {
    const api::Pod* pod = object.As<api::Pod>();
    return pod == nullptr ||
           (!pod->spec.node_name.empty() && attentive_.load(std::memory_order_acquire));
  };
  pods_ = std::make_unique<client::Informer>(std::move(options_.pods), std::move(pod_options));
  nodes_ = std::make_unique<client::Informer>(std::move(options_.nodes),
                                              client::Informer::Options::Manual(clock_, "nodes"));
  pods_->AddIndexer(std::string(kNodeNameIndex), [](const server::StoredObject& o) {
    const api::Pod* p = o.As<api::Pod>();
    if (p == nullptr || p->spec.node_name.empty()) return std::vector<std::string>{};
    return std::vector<std::string>{p->spec.node_name};
  });
  client::EventHandler pod_handler;
  pod_handler.on_add = [this](const ObjectPtr& o, bool) { OnPodChange(nullptr, o); };
  pod_handler.on_update = [this](const ObjectPtr& a, const ObjectPtr& b) { OnPodChange(a, b); };
  pod_handler.on_delete = [this](const ObjectPtr& o) { OnPodChange(o, nullptr); };
  pods_->AddEventHandler(std::move(pod_handler));
  client::EventHandler node_handler;
  node_handler.on_add = [this](const ObjectPtr& o, bool) { OnNodeChange(nullptr, o); };
  node_handler.on_update = [this](const ObjectPtr& a, const ObjectPtr& b) { OnNodeChange(a, b); };
  node_handler.on_delete = [this](const ObjectPtr& o) { OnNodeChange(o, nullptr); };
  nodes_->AddEventHandler(std::move(node_handler));
  auto wake = [box = box_] { box->Wake(); };
  pods_->SetOnPending(wake);
  nodes_->SetOnPending(wake);
}

Controller::~Controller() { Stop(); }

void Controller::Start() {
  nodes_->Start();
  pods_->Start();
  if (!options_.manual) {
    thread_ = std::thread([this] {
      core::NameBackgroundThread("kt-taint-evict");
      Run();
    });
  }
}

void Controller::Stop() {
  if (!box_->Stop()) return;
  if (thread_.joinable()) thread_.join();
  if (timer_ != 0) clock_->Cancel(timer_);
  pods_->Stop();
  nodes_->Stop();
  recorder_->Stop();
}

bool Controller::HasSynced() const { return pods_->HasSynced() && nodes_->HasSynced(); }

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
  size_t done = nodes_->DispatchPending() + pods_->DispatchPending();
  // Node items first, as upstream's workers drain them before pod items.
  while (!node_items_.empty()) {
    std::string name = std::move(node_items_.front());
    node_items_.pop_front();
    node_queued_.erase(name);
    HandleNode(name);
    ++done;
  }
  while (!pod_items_.empty()) {
    PodItem item = std::move(pod_items_.front());
    pod_items_.pop_front();
    HandlePod(item);
    ++done;
  }
  for (auto& fn : inbox) {
    fn();
    ++done;
  }
  // Due work, as far as the in-flight limit allows.
  while (!ready_.empty() &&
         in_flight_.load(std::memory_order_relaxed) < static_cast<size_t>(options_.max_in_flight)) {
    auto [key, token] = ready_.front();
    ready_.pop_front();
    StartEviction(key, token);
    ++done;
  }
  const bool attentive = !tainted_.empty() || !entries_.empty();
  if (attentive != attentive_.load(std::memory_order_relaxed)) {
    attentive_.store(attentive, std::memory_order_release);
    // Pod changes that came while this thread was not attentive did not wake it: a node
    // tainted in this round may have pods among them. Another round dispatches them.
    if (attentive) box_->Wake();
  }
  return done;
}

void Controller::OnNodeChange(const ObjectPtr& old_node, const ObjectPtr& new_node) {
  if (old_node && new_node) {
    const api::Node* a = old_node->As<api::Node>();
    const api::Node* b = new_node->As<api::Node>();
    if (a != nullptr && b != nullptr && SameNoExecuteTaints(a, b)) return;
  }
  const ObjectPtr& o = new_node ? new_node : old_node;
  std::string name = o->meta().name;
  if (node_queued_.insert(name).second) node_items_.push_back(std::move(name));
}

void Controller::OnPodChange(const ObjectPtr& old_pod, const ObjectPtr& new_pod) {
  const api::Pod* a = old_pod ? old_pod->As<api::Pod>() : nullptr;
  const api::Pod* b = new_pod ? new_pod->As<api::Pod>() : nullptr;
  if (a == nullptr && b == nullptr) return;
  PodItem item;
  if (a != nullptr && b != nullptr) {
    if (a->meta.uid == b->meta.uid && a->spec.node_name == b->spec.node_name &&
        a->spec.tolerations == b->spec.tolerations) {
      return;  // status or metadata only
    }
    if (a->meta.uid != b->meta.uid) item.deleted = old_pod;  // re-created under the same name
  } else if (b == nullptr) {
    item.deleted = old_pod;
  }
  const api::Pod* p = b != nullptr ? b : a;
  item.namespace_ = p->meta.namespace_;
  item.name = p->meta.name;
  item.node = p->spec.node_name;
  pod_items_.push_back(std::move(item));
}

const std::vector<Taint>* Controller::TaintsOf(std::string_view node) const {
  auto it = tainted_.find(node);
  return it == tainted_.end() ? nullptr : &it->second;
}

bool Controller::NodeTainted(std::string_view node) const { return TaintsOf(node) != nullptr; }

void Controller::HandleNode(const std::string& name) {
  ObjectPtr node = nodes_->Get("", name);
  const api::Node* n = node ? node->As<api::Node>() : nullptr;
  if (n == nullptr) {
    // Pending evictions of its pods stay: they end when they run (the node is gone, so they
    // find nothing to do) or when the pods go.
    tainted_.erase(name);
    return;
  }
  std::vector<Taint> taints = NoExecuteTaints(*n);
  if (taints.empty()) {
    tainted_.erase(name);
  } else {
    auto it = tainted_.find(name);
    if (it == tainted_.end()) {
      tainted_.emplace(name, std::move(taints));
    } else {
      it->second = std::move(taints);
    }
  }
  std::vector<ObjectPtr> pods = pods_->ByIndex(kNodeNameIndex, name);
  if (pods.empty()) return;
  const std::vector<Taint>* current = TaintsOf(name);
  if (current == nullptr) {
    for (const ObjectPtr& p : pods) CancelWork(KeyOf(p->meta().uid));
    return;
  }
  const client::Time now = clock_->Now();
  for (const ObjectPtr& p : pods) ProcessPodOnNode(p, *current, now);
}

void Controller::HandlePod(const PodItem& item) {
  if (item.deleted) {
    CancelWork(KeyOf(item.deleted->meta().uid));
    if (!pods_->Get(item.namespace_, item.name)) return;
  }
  ObjectPtr pod = pods_->Get(item.namespace_, item.name);
  const api::Pod* p = pod ? pod->As<api::Pod>() : nullptr;
  if (p == nullptr) return;
  // A stale item: the pod moved on (its newer item follows).
  if (p->spec.node_name != item.node || p->spec.node_name.empty()) return;
  const std::vector<Taint>* taints = TaintsOf(p->spec.node_name);
  if (taints == nullptr) return;
  ProcessPodOnNode(pod, *taints, clock_->Now());
}

void Controller::ProcessPodOnNode(const ObjectPtr& pod, std::span<const Taint> taints,
                                  client::Time now) {
  const api::Pod* p = pod->As<api::Pod>();
  // A pod already being deleted is leaving anyway.
  if (p == nullptr || p->meta.deletion_timestamp) return;
  const UidKey key = KeyOf(p->meta.uid);
  const Decision d = Decide(taints, p->spec.tolerations, comparison_operators_);
  switch (d.kind) {
    case Decision::kNone:
    case Decision::kStay:
      CancelWork(key);
      return;
    case Decision::kNow:
      CancelWork(key);
      AddWork(pod, now, now);
      return;
    case Decision::kAfter:
      break;
  }
  const client::Time trigger = After(now, d.seconds);
  auto it = entries_.find(key);
  if (it != entries_.end()) {
    Entry& e = it->second;
    if (e.state == State::kRunning) {
      e.recheck = true;
      return;
    }
    // An immediate eviction, or a countdown that started earlier: it stands.
    if (!e.timed || After(e.created_at, d.seconds) < trigger) return;
    const client::Time created = e.created_at;
    entries_.erase(it);
    AddWork(pod, created, trigger);
    return;
  }
  AddWork(pod, now, trigger);
}

void Controller::AddWork(const ObjectPtr& pod, client::Time created_at, client::Time fire_at) {
  const UidKey key = KeyOf(pod->meta().uid);
  auto [it, inserted] = entries_.try_emplace(key);
  Entry& e = it->second;
  if (!inserted) {
    // Work for this pod exists: a running one looks at the pod again when it ends.
    if (e.state == State::kRunning) e.recheck = true;
    return;
  }
  e.pod = pod;
  e.created_at = created_at;
  e.fire_at = fire_at;
  e.token = next_token_++;
  e.timed = fire_at > created_at;
  if (!e.timed || fire_at <= clock_->Now()) {
    ready_.emplace_back(key, e.token);
    return;
  }
  heap_.push_back(Due{fire_at, e.token, key});
  std::push_heap(heap_.begin(), heap_.end(), std::greater<Due>());
  Arm();
}

bool Controller::CancelWork(const UidKey& key) {
  auto it = entries_.find(key);
  if (it == entries_.end() || it->second.state == State::kRunning) return false;
  const bool timed = it->second.timed && it->second.failures == 0;
  ObjectPtr pod = std::move(it->second.pod);
  entries_.erase(it);
  if (!timed) return false;
  if (const api::Pod* p = pod->As<api::Pod>()) {
    Event(*p, "Cancelling deletion of Pod " + p->meta.namespace_ + "/" + p->meta.name);
  }
  return true;
}

void Controller::Arm() {
  // Drop stale tops (cancelled or replaced work), then make the clock's one timer match the
  // earliest deadline.
  while (!heap_.empty()) {
    const Due& top = heap_.front();
    auto it = entries_.find(top.key);
    if (it != entries_.end() && it->second.token == top.token &&
        it->second.state == State::kWaiting) {
      break;
    }
    std::pop_heap(heap_.begin(), heap_.end(), std::greater<Due>());
    heap_.pop_back();
  }
  if (heap_.empty()) {
    if (timer_ != 0) clock_->Cancel(timer_);
    timer_ = 0;
    return;
  }
  const client::Time when = heap_.front().when;
  if (timer_ != 0 && armed_for_ == when) return;
  if (timer_ != 0) clock_->Cancel(timer_);
  armed_for_ = when;
  const uint64_t generation = ++arm_generation_;
  timer_ = clock_->At(when, [this, box = box_, generation] {
    box->Post([this, generation] {
      if (generation == arm_generation_) timer_ = 0;
      FireDue();
    });
  });
}

void Controller::FireDue() {
  const client::Time now = clock_->Now();
  while (!heap_.empty() && heap_.front().when <= now) {
    const Due due = heap_.front();
    std::pop_heap(heap_.begin(), heap_.end(), std::greater<Due>());
    heap_.pop_back();
    auto it = entries_.find(due.key);
    if (it == entries_.end() || it->second.token != due.token ||
        it->second.state != State::kWaiting) {
      continue;
    }
    if (options_.on_fire && it->second.timed && it->second.failures == 0) {
      options_.on_fire(due.when, now);
    }
    ready_.emplace_back(due.key, due.token);
  }
  Arm();
}

void Controller::StartEviction(const UidKey& key, uint64_t token) {
  auto it = entries_.find(key);
  if (it == entries_.end() || it->second.token != token || it->second.state != State::kWaiting) {
    return;
  }
  Entry& e = it->second;
  e.state = State::kRunning;
  e.recheck = false;
  in_flight_.fetch_add(1, std::memory_order_acq_rel);
  const api::Pod* p = e.pod->As<api::Pod>();
  // Node and pod, read live and in parallel; the later answer posts both.
  struct Reads {
    std::mutex mu;
    int left = 2;
    server::ApiResult<ObjectPtr> node;
    server::ApiResult<ObjectPtr> pod;
  };
  auto reads = std::make_shared<Reads>();
  auto arrived = [this, box = box_, reads, key, token](bool is_node,
                                                       server::ApiResult<ObjectPtr> r) {
    {
      std::lock_guard<std::mutex> lock(reads->mu);
      (is_node ? reads->node : reads->pod) = std::move(r);
      if (--reads->left > 0) return;
    }
    box->Post([this, reads, key, token] {
      Verified(key, token, std::move(reads->node), std::move(reads->pod));
    });
  };
  client_->Get(Resource::kNodes, "", p->spec.node_name,
               [arrived](server::ApiResult<ObjectPtr> r) mutable { arrived(true, std::move(r)); });
  client_->Get(Resource::kPods, p->meta.namespace_, p->meta.name,
               [arrived](server::ApiResult<ObjectPtr> r) mutable { arrived(false, std::move(r)); });
}

void Controller::Verified(const UidKey& key, uint64_t token, server::ApiResult<ObjectPtr> node,
                          server::ApiResult<ObjectPtr> pod) {
  auto it = entries_.find(key);
  if (it == entries_.end() || it->second.token != token) {
    in_flight_.fetch_sub(1, std::memory_order_acq_rel);
    return;
  }
  Entry& e = it->second;
  const api::Pod* was = e.pod->As<api::Pod>();
  if (!pod) return Moot(pod.error()) ? Finish(key, token, false) : Retry(key, token);
  const api::Pod* live = (*pod)->As<api::Pod>();
  // Another pod of that name, one on another node, or one already leaving: not this eviction's.
  if (live == nullptr || live->meta.uid != was->meta.uid ||
      live->spec.node_name != was->spec.node_name || live->meta.deletion_timestamp) {
    return Finish(key, token, false);
  }
  if (!node) return node.error().code == 404 ? Finish(key, token, false) : Retry(key, token);
  const api::Node* n = (*node)->As<api::Node>();
  if (n == nullptr) return Finish(key, token, false);
  const std::vector<Taint> taints = NoExecuteTaints(*n);
  const Decision d = Decide(taints, live->spec.tolerations, comparison_operators_);
  // Tolerated for ever now, or the taints are gone: nothing to evict. A countdown that ran out
  // evicts even if tolerationSeconds grew meanwhile (upstream: it is never lengthened).
  if (d.kind == Decision::kNone || d.kind == Decision::kStay) return Finish(key, token, false);
  e.pod = *pod;
  const std::string ns = live->meta.namespace_;
  const std::string name = live->meta.name;
  const std::string uid = live->meta.uid;
  if (e.failures == 0) Event(*live, "Marking for deletion Pod " + ns + "/" + name);
  auto post_deleted = [this, box = box_, key, token](server::ApiResult<store::Bytes> r) {
    box->Post(
        [this, key, token, r = std::move(r)]() mutable { Deleted(key, token, std::move(r)); });
  };
  auto del = [client = client_, ns, name, uid, post_deleted]() {
    server::DeleteOptions opts;
    opts.precondition_uid = uid;
    client->Delete(Resource::kPods, ns, name, std::move(opts), post_deleted);
  };
  if (HasDisruptionTarget(*live)) return del();
  client_->AddPodCondition(ns, name, uid, DisruptionTarget(*live, clock_->Now()),
                           [del, post_deleted](server::ApiResult<store::Bytes> r) {
                             if (r) return del();
                             post_deleted(server::ApiErr(std::move(r.error())));
                           });
}

void Controller::Deleted(const UidKey& key, uint64_t token, server::ApiResult<store::Bytes> r) {
  if (r) return Finish(key, token, true);
  if (Moot(r.error())) return Finish(key, token, false);
  Retry(key, token);
}

void Controller::Finish(const UidKey& key, uint64_t token, bool evicted) {
  in_flight_.fetch_sub(1, std::memory_order_acq_rel);
  auto it = entries_.find(key);
  if (it == entries_.end() || it->second.token != token) return;
  ObjectPtr pod = std::move(it->second.pod);
  const bool recheck = it->second.recheck;
  entries_.erase(it);
  if (evicted || !recheck) return;
  // A change came while it ran and found the work busy: it is looked at now.
  const api::Pod* p = pod->As<api::Pod>();
  if (p == nullptr) return;
  pod_items_.push_back(PodItem{p->meta.namespace_, p->meta.name, p->spec.node_name, nullptr});
}

void Controller::Retry(const UidKey& key, uint64_t token) {
  in_flight_.fetch_sub(1, std::memory_order_acq_rel);
  auto it = entries_.find(key);
  if (it == entries_.end() || it->second.token != token) return;
  Entry& e = it->second;
  if (e.failures < UINT16_MAX) ++e.failures;
  client::Duration delay = options_.retry_base;
  for (int i = 1; i < e.failures && delay < options_.retry_max; ++i) delay *= 2;
  delay = std::min(delay, options_.retry_max);
  e.state = State::kWaiting;
  e.fire_at = clock_->Now() + delay;
  heap_.push_back(Due{e.fire_at, e.token, key});
  std::push_heap(heap_.begin(), heap_.end(), std::greater<Due>());
  Arm();
}

void Controller::Event(const api::Pod& pod, std::string message) {
  client::ObjectRef ref;
  ref.api_version = "v1";
  ref.kind = "Pod";
  ref.namespace_ = pod.meta.namespace_;
  ref.name = pod.meta.name;
  // Upstream names the pod without its UID, so `kubectl describe pod` (which selects events by
  // involvedObject.uid) never lists them; with it, describe shows them.
  ref.uid = pod.meta.uid;
  recorder_->Eventf(ref, nullptr, client::kEventTypeNormal, kEventReason, "", std::move(message));
}

std::vector<Controller::PendingEviction> Controller::Pending() const {
  std::vector<PendingEviction> out;
  out.reserve(entries_.size());
  for (const auto& [key, e] : entries_) {
    const api::ObjectMeta& m = e.pod->meta();
    out.push_back(PendingEviction{m.namespace_, m.name, m.uid, e.created_at, e.fire_at,
                                  e.state == State::kRunning});
  }
  std::sort(out.begin(), out.end(), [](const PendingEviction& a, const PendingEviction& b) {
    return a.namespace_ != b.namespace_ ? a.namespace_ < b.namespace_ : a.name < b.name;
  });
  return out;
}

}  // namespace kt::controllers::tainteviction
