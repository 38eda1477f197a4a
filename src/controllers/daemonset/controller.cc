#include "controllers/daemonset/controller.h"

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "api/codec.h"
#include "api/selector.h"
#include "api/table.h"
#include "core/thread_name.h"
#include "core/time.h"

namespace kt::controllers::daemonset {

namespace {

using rapidjson::Document;
using rapidjson::Value;
using server::ObjectPtr;
using server::Resource;

constexpr std::string_view kNodeNameIndex = "spec.nodeName";
// A pod's controllerRef UID, or "orphan/<namespace>" for a pod without a controller (upstream
// AddPodControllerIndexer / FilterPodsByOwner).
constexpr std::string_view kControllerIndex = "controller";
// Upstream controller.SlowStartInitialBatchSize.
constexpr int kSlowStartInitialBatchSize = 1;
// How often the failed-pods backoff forgets expired entries (upstream BackoffGCInterval).
constexpr client::Duration kBackoffGCInterval = std::chrono::minutes(1);

std::string OrphanKey(std::string_view namespace_) {
  std::string k = "orphan/";
  k.append(namespace_);
  return k;
}

std::string KeyOf(const api::ObjectMeta& meta) { return meta.namespace_ + "/" + meta.name; }

// metav1.GetControllerOf.
const api::OwnerReference* ControllerOf(const api::ObjectMeta& meta) {
  for (const api::OwnerReference& r : meta.owner_references) {
    if (r.controller) return &r;
  }
  return nullptr;
}

bool SameRef(const api::OwnerReference* a, const api::OwnerReference* b) {
  if (a == nullptr || b == nullptr) return a == b;
  return *a == *b;
}

const api::Pod& PodOf(const ObjectPtr& o) { return *o->As<api::Pod>(); }

// podByCreationTimestampAndPhase: bound pods first, then the oldest, then by name.
bool OlderPod(const ObjectPtr& a, const ObjectPtr& b) {
  const api::Pod& x = PodOf(a);
  const api::Pod& y = PodOf(b);
  const bool xs = !x.spec.node_name.empty();
  const bool ys = !y.spec.node_name.empty();
  if (xs != ys) return xs;
  const api::Timestamp tx = api::ParseTimestamp(x.meta.creation_timestamp);
  const api::Timestamp ty = api::ParseTimestamp(y.meta.creation_timestamp);
  if (tx.seconds != ty.seconds || tx.nanos != ty.nanos) {
    return std::pair(tx.seconds, tx.nanos) < std::pair(ty.seconds, ty.nanos);
  }
  return x.meta.name < y.meta.name;
}

// util.IsPodUpdated. Upstream also accepts a pod-template-generation label equal to the
// DaemonSet's template generation, but prints the generation's pointer (fmt.Sprint of an *int64)
// for the comparison, so that half never matches: the hash alone decides, here too.
bool IsPodUpdated(const api::Pod& pod, std::string_view hash) {
  const std::string* h = pod.meta.labels.Get(kControllerRevisionHashLabel);
  return !hash.empty() && h != nullptr && *h == hash;
}

// findUpdatedPodsOnNode: the new and the old pod among the node's pods that are not being
// deleted; false when there is more than one of either.
bool FindUpdatedPodsOnNode(const std::vector<ObjectPtr>& pods, std::string_view hash,
                           ObjectPtr* new_pod, ObjectPtr* old_pod) {
  for (const ObjectPtr& o : pods) {
    const api::Pod& pod = PodOf(o);
    if (pod.meta.deletion_timestamp) continue;
    ObjectPtr& slot = IsPodUpdated(pod, hash) ? *new_pod : *old_pod;
    if (slot) {
      *new_pod = nullptr;
      *old_pod = nullptr;
      return false;
    }
    slot = o;
  }
  return true;
}

bool HasCause(const server::ApiError& e, std::string_view reason) {
  if (!e.details) return false;
  for (const server::StatusCause& c : e.details->causes) {
    if (c.reason == reason) return true;
  }
  return false;
}

std::string Quoted(std::string_view s) {
  std::string out = "\"";
  out.append(s);
  return out + "\"";
}

// The patches of upstream's PodControllerRefManager (AdoptPod, ReleasePod).
std::string AdoptPatch(const api::DaemonSet& ds, std::string_view pod_uid) {
  return R"({"metadata":{"ownerReferences":[{"apiVersion":"apps/v1","kind":"DaemonSet","name":)" +
         Quoted(ds.meta.name) + R"(,"uid":)" + Quoted(ds.meta.uid) +
         R"(,"controller":true,"blockOwnerDeletion":true}],"uid":)" + Quoted(pod_uid) + "}}";
}
std::string ReleasePatch(std::string_view ds_uid, std::string_view pod_uid) {
  return R"({"metadata":{"ownerReferences":[{"$patch":"delete","uid":)" + Quoted(ds_uid) +
         R"(}],"uid":)" + Quoted(pod_uid) + "}}";
}

// Waits for `count` asynchronous calls to finish.
class Latch {
 public:
  explicit Latch(int count) : pending_(count) {}
  void Done() {
    std::lock_guard<std::mutex> lock(mu_);
    if (--pending_ == 0) cv_.notify_all();
  }
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return pending_ <= 0; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int pending_;  // guarded by mu_
};

void AddInt(Value& obj, const char* name, int64_t v, Document::AllocatorType& alloc) {
  obj.AddMember(rapidjson::StringRef(name), Value(v), alloc);
}

// `ds_json` with its status counts set as storeDaemonSetStatus sets them, in apps/v1's field order
// (the four counts always, the rest omitted when 0); collisionCount and conditions are kept.
std::string StatusUpdateBody(const Value& ds_json, const api::DaemonSet& counts,
                             int64_t observed_generation) {
  Document doc;
  doc.CopyFrom(ds_json, doc.GetAllocator());
  auto& alloc = doc.GetAllocator();
  Value status(rapidjson::kObjectType);
  AddInt(status, "currentNumberScheduled", counts.current_number_scheduled, alloc);
  AddInt(status, "numberMisscheduled", counts.number_misscheduled, alloc);
  AddInt(status, "desiredNumberScheduled", counts.desired_number_scheduled, alloc);
  AddInt(status, "numberReady", counts.number_ready, alloc);
  if (observed_generation != 0) AddInt(status, "observedGeneration", observed_generation, alloc);
  if (counts.updated_number_scheduled != 0) {
    AddInt(status, "updatedNumberScheduled", counts.updated_number_scheduled, alloc);
  }
  if (counts.number_available != 0) {
    AddInt(status, "numberAvailable", counts.number_available, alloc);
  }
  if (counts.number_unavailable != 0) {
    AddInt(status, "numberUnavailable", counts.number_unavailable, alloc);
  }
  if (auto old = doc.FindMember("status"); old != doc.MemberEnd() && old->value.IsObject()) {
    for (const char* keep : {"collisionCount", "conditions"}) {
      if (auto m = old->value.FindMember(keep); m != old->value.MemberEnd()) {
        status.AddMember(rapidjson::StringRef(keep), Value(m->value, alloc), alloc);
      }
    }
    doc.RemoveMember(old);
  }
  doc.AddMember("status", std::move(status), alloc);
  return api::EncodeJson(doc);
}

}  // namespace

server::ObjectFilter PodsFilter() {
  server::ObjectFilter f;
  f.predicate = [](const server::StoredObject& o) {
    const api::OwnerReference* ref = ControllerOf(o.meta());
    return ref == nullptr || (ref->kind == "DaemonSet" && ref->api_version == "apps/v1");
  };
  return f;
}

struct Controller::SyncContext {
  std::string key;
  ObjectPtr object;
  const api::DaemonSet* ds = nullptr;
  Document json;
  std::optional<api::labels::Selector> selector;  // nullopt: selects nothing
  std::string hash;
  std::unique_ptr<DaemonPlacement> placement;
  std::vector<ObjectPtr> nodes;  // by name
  std::unordered_map<std::string, const api::Node*> node_by_name;
  std::unordered_map<std::string, ShouldRun> decisions;
  std::optional<Status> can_adopt;  // upstream RecheckDeletionTimestamp, once per sync

  ShouldRun Decide(const api::Node& node) {
    auto [it, inserted] = decisions.try_emplace(node.meta.name);
    if (inserted) it->second = placement->ForNode(node);
    return it->second;
  }
  bool Selects(const api::StringMap& labels) const { return selector && selector->Matches(labels); }
};

Controller::Controller(Options options)
    : options_(std::move(options)),
      clock_(options_.clock),
      client_(options_.client),
      recorder_(std::move(options_.recorder)),
      queue_(options_.clock, client::DefaultControllerRateLimiter(options_.clock)),
      node_queue_(options_.clock, client::DefaultControllerRateLimiter(options_.clock)),
      expectations_(options_.clock),
      failed_pods_backoff_(options_.failed_pods_backoff_initial, options_.failed_pods_backoff_max) {
  if (!recorder_) {
    recorder_ =
        client::NewCoreV1Recorder(client_, clock_, std::string(kControllerName), options_.host);
  }
  auto informer_options = [&](const char* name) {
    return options_.manual ? client::Informer::Options::Manual(clock_, name)
                           : client::Informer::Options::Threaded(clock_, name);
  };
  daemonsets_ = std::make_unique<client::Informer>(std::move(options_.daemonsets),
                                                   informer_options("daemonsets"));
  client::Informer::Options pod_options = informer_options("pods");
  // The pod handlers act on pods a DaemonSet controls, and on orphans some DaemonSet may
  // adopt: other pods (another controller's) wait for the next wake-up.
  pod_options.wake_for = [this](server::WatchEventType, const server::StoredObject& object) {
    const api::Pod* pod = object.As<api::Pod>();
    if (pod == nullptr) return true;
    const api::OwnerReference* ref = ControllerOf(pod->meta);
    if (ref != nullptr) return ref->kind == "DaemonSet";
    return daemonsets_->size() > 0;
  };
  pods_ = std::make_unique<client::Informer>(std::move(options_.pods), std::move(pod_options));
  nodes_ = std::make_unique<client::Informer>(std::move(options_.nodes), informer_options("nodes"));
  pods_->AddIndexer(std::string(kNodeNameIndex), [](const server::StoredObject& o) {
    const api::Pod* p = o.As<api::Pod>();
    if (p == nullptr || p->spec.node_name.empty()) return std::vector<std::string>{};
    return std::vector<std::string>{p->spec.node_name};
  });
  pods_->AddIndexer(std::string(kControllerIndex), [](const server::StoredObject& o) {
    const api::Pod* p = o.As<api::Pod>();
    if (p == nullptr) return std::vector<std::string>{};
    const api::OwnerReference* ref = ControllerOf(p->meta);
    return std::vector<std::string>{ref ? ref->uid : OrphanKey(p->meta.namespace_)};
  });

  client::EventHandler ds_handler;
  ds_handler.on_add = [this](const ObjectPtr& o, bool) { OnDaemonSetAdd(o); };
  ds_handler.on_update = [this](const ObjectPtr& a, const ObjectPtr& b) {
    OnDaemonSetUpdate(a, b);
  };
  ds_handler.on_delete = [this](const ObjectPtr& o) { OnDaemonSetDelete(o); };
  daemonsets_->AddEventHandler(std::move(ds_handler));

  client::EventHandler pod_handler;
  pod_handler.on_add = [this](const ObjectPtr& o, bool) { OnPodAdd(o); };
  pod_handler.on_update = [this](const ObjectPtr& a, const ObjectPtr& b) { OnPodUpdate(a, b); };
  pod_handler.on_delete = [this](const ObjectPtr& o) { OnPodDelete(o); };
  pods_->AddEventHandler(std::move(pod_handler));

  client::EventHandler node_handler;
  node_handler.on_add = [this](const ObjectPtr& o, bool) { node_queue_.Add(o->meta().name); };
  node_handler.on_update = [this](const ObjectPtr& a, const ObjectPtr& b) { OnNodeUpdate(a, b); };
  // Not upstream (which has no delete handler and leaves the pods to the pod GC): the
  // DaemonSets are synced, so that their status and unscheduled pods follow at once.
  node_handler.on_delete = [this](const ObjectPtr& o) { node_queue_.Add(o->meta().name); };
  nodes_->AddEventHandler(std::move(node_handler));
}

Controller::~Controller() { Stop(); }

void Controller::Start() {
  daemonsets_->Start();
  nodes_->Start();
  pods_->Start();
  if (options_.manual) return;
  worker_ = std::thread([this] {
    core::NameBackgroundThread("kt-daemonset");
    RunWorker(&queue_, false);
  });
  node_worker_ = std::thread([this] {
    core::NameBackgroundThread("kt-ds-nodes");
    RunWorker(&node_queue_, true);
  });
}

void Controller::Stop() {
  if (stopping_.exchange(true)) return;
  queue_.ShutDown();
  node_queue_.ShutDown();
  if (worker_.joinable()) worker_.join();
  if (node_worker_.joinable()) node_worker_.join();
  daemonsets_->Stop();
  pods_->Stop();
  nodes_->Stop();
  recorder_->Stop();
}

bool Controller::HasSynced() const {
  return daemonsets_->HasSynced() && pods_->HasSynced() && nodes_->HasSynced();
}

void Controller::RunWorker(client::WorkQueue* queue, bool nodes) {
  while (!stopping_.load() &&
         !client::WaitForCacheSync(
             {daemonsets_.get(), pods_.get(), nodes_.get()},
             std::chrono::steady_clock::now() + std::chrono::milliseconds(100))) {
  }
  std::string key;
  while (queue->Get(&key)) {
    if (nodes) {
      ProcessNode(key);
    } else {
      ProcessDaemonSet(key);
    }
    queue->Done(key);
  }
}

size_t Controller::RunPending() {
  size_t total = 0;
  for (;;) {
    // DaemonSets first, so that pod events resolve the DaemonSets they name.
    size_t n =
        daemonsets_->DispatchPending() + nodes_->DispatchPending() + pods_->DispatchPending();
    std::string key;
    while (node_queue_.TryGet(&key)) {
      ProcessNode(key);
      node_queue_.Done(key);
      ++n;
    }
    while (queue_.TryGet(&key)) {
      ProcessDaemonSet(key);
      queue_.Done(key);
      ++n;
    }
    if (n == 0) return total;
    total += n;
  }
}

void Controller::ProcessDaemonSet(const std::string& key) {
  const Status s = SyncDaemonSet(key);
  if (s.ok()) {
    queue_.Forget(key);
  } else {
    std::fprintf(stderr, "daemonset-controller: %s failed with: %s\n", key.c_str(),
                 s.message().c_str());
    queue_.AddRateLimited(key);
  }
  const client::Time now = clock_->Now();
  if (now - last_backoff_gc_ >= kBackoffGCInterval) {
    failed_pods_backoff_.GC(now);
    last_backoff_gc_ = now;
  }
}

// syncNodeUpdate: the DaemonSets for which the node now needs a pod created or deleted, or
// whose misscheduled count may change.
void Controller::ProcessNode(const std::string& name) {
  const std::vector<ObjectPtr> daemonsets = daemonsets_->List();
  const ObjectPtr node = nodes_->Get("", name);
  if (!node) {
    for (const ObjectPtr& ds : daemonsets) Enqueue(*ds->As<api::DaemonSet>());
    return;
  }
  std::unordered_set<std::string> scheduled;  // DaemonSet keys with a pod bound to the node
  for (const ObjectPtr& o : pods_->ByIndex(kNodeNameIndex, name)) {
    const api::OwnerReference* ref = ControllerOf(PodOf(o).meta);
    if (ref == nullptr || ref->kind != "DaemonSet") continue;
    scheduled.insert(PodOf(o).meta.namespace_ + "/" + ref->name);
  }
  const api::Node& n = *node->As<api::Node>();
  for (const ObjectPtr& o : daemonsets) {
    const api::DaemonSet& ds = *o->As<api::DaemonSet>();
    const ShouldRun r = NodeShouldRunDaemonPod(n, ds, options_.gates);
    const bool has = scheduled.count(KeyOf(ds.meta)) > 0;
    if ((r.should_run && !has) || (!r.should_continue_running && has) ||
        (has && ds.number_misscheduled > 0)) {
      Enqueue(ds);
    }
  }
}

// --- Handlers ----------------------------------------------------------------------------------

void Controller::Enqueue(const api::DaemonSet& ds) { queue_.Add(KeyOf(ds.meta)); }

void Controller::OnDaemonSetAdd(const ObjectPtr& ds) { Enqueue(*ds->As<api::DaemonSet>()); }

void Controller::OnDaemonSetUpdate(const ObjectPtr& old_ds, const ObjectPtr& cur) {
  // A DaemonSet deleted and created again under its name, seen as one update.
  if (old_ds->meta().uid != cur->meta().uid) OnDaemonSetDelete(old_ds);
  Enqueue(*cur->As<api::DaemonSet>());
}

void Controller::OnDaemonSetDelete(const ObjectPtr& ds) {
  const std::string key = KeyOf(ds->meta());
  // A DaemonSet created again under this name starts clean.
  expectations_.DeleteExpectations(key);
  queue_.Add(key);
}

ObjectPtr Controller::ResolveControllerRef(std::string_view namespace_,
                                           const api::OwnerReference& ref) const {
  if (ref.kind != "DaemonSet") return nullptr;
  ObjectPtr ds = daemonsets_->Get(namespace_, ref.name);
  if (!ds || ds->meta().uid != ref.uid) return nullptr;
  return ds;
}

std::vector<ObjectPtr> Controller::DaemonSetsForPod(const api::Pod& pod) const {
  std::vector<ObjectPtr> out;
  for (const ObjectPtr& o : daemonsets_->List()) {
    const api::DaemonSet& ds = *o->As<api::DaemonSet>();
    if (ds.meta.namespace_ != pod.meta.namespace_ || !ds.selector) continue;
    Result<api::labels::Selector> sel = api::labels::FromLabelSelector(*ds.selector);
    if (!sel || sel->Empty() || !sel->Matches(pod.meta.labels)) continue;
    out.push_back(o);
  }
  return out;
}

void Controller::OnPodAdd(const ObjectPtr& o) {
  const api::Pod& pod = PodOf(o);
  if (pod.meta.deletion_timestamp) {
    // Already being deleted when first seen (a restart): not a creation to observe.
    OnPodDelete(o);
    return;
  }
  if (const api::OwnerReference* ref = ControllerOf(pod.meta)) {
    ObjectPtr ds = ResolveControllerRef(pod.meta.namespace_, *ref);
    if (!ds) return;
    expectations_.CreationObserved(KeyOf(ds->meta()));
    Enqueue(*ds->As<api::DaemonSet>());
    return;
  }
  // An orphan: the DaemonSets that select it may adopt it.
  for (const ObjectPtr& ds : DaemonSetsForPod(pod)) Enqueue(*ds->As<api::DaemonSet>());
}

void Controller::OnPodUpdate(const ObjectPtr& old_o, const ObjectPtr& cur_o) {
  if (old_o->revision == cur_o->revision) return;
  const api::Pod& old_pod = PodOf(old_o);
  const api::Pod& cur = PodOf(cur_o);
  if (cur.meta.deletion_timestamp) {
    // Graceful deletion has begun: replace the pod now rather than when it is gone.
    OnPodDelete(cur_o);
    return;
  }
  const api::OwnerReference* cur_ref = ControllerOf(cur.meta);
  const api::OwnerReference* old_ref = ControllerOf(old_pod.meta);
  const bool ref_changed = !SameRef(cur_ref, old_ref);
  if (ref_changed && old_ref != nullptr) {
    if (ObjectPtr ds = ResolveControllerRef(old_pod.meta.namespace_, *old_ref)) {
      Enqueue(*ds->As<api::DaemonSet>());
    }
  }
  if (cur_ref != nullptr) {
    ObjectPtr o = ResolveControllerRef(cur.meta.namespace_, *cur_ref);
    if (!o) return;
    const api::DaemonSet& ds = *o->As<api::DaemonSet>();
    Enqueue(ds);
    // Availability needs minReadySeconds to pass after readiness: look again then (plus a
    // second against rounding).
    if (!IsPodReady(old_pod) && IsPodReady(cur) && ds.min_ready_seconds > 0) {
      queue_.AddAfter(KeyOf(ds.meta), std::chrono::seconds(ds.min_ready_seconds + 1));
    }
    return;
  }
  if (ref_changed || !(old_pod.meta.labels == cur.meta.labels)) {
    for (const ObjectPtr& ds : DaemonSetsForPod(cur)) Enqueue(*ds->As<api::DaemonSet>());
  }
}

void Controller::OnPodDelete(const ObjectPtr& o) {
  const api::Pod& pod = PodOf(o);
  const api::OwnerReference* ref = ControllerOf(pod.meta);
  if (ref == nullptr) return;
  ObjectPtr ds = ResolveControllerRef(pod.meta.namespace_, *ref);
  if (!ds) return;
  expectations_.DeletionObserved(KeyOf(ds->meta()));
  Enqueue(*ds->As<api::DaemonSet>());
}

void Controller::OnNodeUpdate(const ObjectPtr& old_o, const ObjectPtr& cur_o) {
  // shouldIgnoreNodeUpdate: only labels and taints matter to placement.
  const api::Node& a = *old_o->As<api::Node>();
  const api::Node& b = *cur_o->As<api::Node>();
  if (a.meta.labels == b.meta.labels && a.spec.taints == b.spec.taints) return;
  node_queue_.Add(b.meta.name);
}

// --- Sync --------------------------------------------------------------------------------------

Status Controller::SyncDaemonSet(const std::string& key) {
  const size_t slash = key.find('/');
  if (slash == std::string::npos) return Status::Ok();
  SyncContext ctx;
  ctx.key = key;
  ctx.object = daemonsets_->Get(std::string_view(key).substr(0, slash),
                                std::string_view(key).substr(slash + 1));
  if (!ctx.object) {
    expectations_.DeleteExpectations(key);
    return Status::Ok();
  }
  ctx.ds = ctx.object->As<api::DaemonSet>();
  const api::DaemonSet& ds = *ctx.ds;
  ctx.nodes = nodes_->List();
  std::sort(ctx.nodes.begin(), ctx.nodes.end(),
            [](const ObjectPtr& a, const ObjectPtr& b) { return a->meta().name < b->meta().name; });
  for (const ObjectPtr& n : ctx.nodes) ctx.node_by_name[n->meta().name] = n->As<api::Node>();

  if (ds.selector && ds.selector->match_labels.empty() && ds.selector->match_expressions.empty()) {
    Event(ctx, client::kEventTypeWarning, kSelectingAllReason,
          "This daemon set is selecting all pods. A non-empty selector is required.");
    return Status::Ok();
  }
  // Its status cannot be computed reliably while it is being deleted (upstream).
  if (ds.meta.deletion_timestamp) return Status::Ok();
  if (ds.selector) {
    Result<api::labels::Selector> sel = api::labels::FromLabelSelector(*ds.selector);
    if (!sel) return sel.error();
    ctx.selector = std::move(*sel);
  }
  Result<Document> json = api::ParseTrustedJson(*ctx.object->json);
  if (!json) return json.error();
  ctx.json = std::move(*json);
  static const Value kNull;
  const Value* tmpl = &kNull;
  if (auto spec = ctx.json.FindMember("spec");
      spec != ctx.json.MemberEnd() && spec->value.IsObject()) {
    if (auto t = spec->value.FindMember("template"); t != spec->value.MemberEnd()) {
      tmpl = &t->value;
    }
  }
  ctx.hash = ComputeHash(*tmpl, ds.collision_count);
  ctx.placement = std::make_unique<DaemonPlacement>(ds, options_.gates);

  if (!expectations_.SatisfiedExpectations(key)) {
    // Only the status: the controller has not acted on this generation.
    return UpdateStatus(ctx, false);
  }
  const Status err = UpdateDaemonSet(ctx);
  const Status status_err = UpdateStatus(ctx, true);
  if (!err.ok()) return err;
  return status_err;
}

Status Controller::UpdateDaemonSet(SyncContext& ctx) {
  if (Status s = Manage(ctx); !s.ok()) return s;
  // Roll only once the writes of manage have been observed.
  if (expectations_.SatisfiedExpectations(ctx.key) &&
      ctx.ds->update_strategy_type == "RollingUpdate") {
    return RollingUpdate(ctx);
  }
  return Status::Ok();
}

Result<std::vector<ObjectPtr>> Controller::ClaimPods(SyncContext& ctx) {
  const api::DaemonSet& ds = *ctx.ds;
  std::vector<ObjectPtr> candidates = pods_->ByIndex(kControllerIndex, ds.meta.uid);
  for (ObjectPtr& o : pods_->ByIndex(kControllerIndex, OrphanKey(ds.meta.namespace_))) {
    candidates.push_back(std::move(o));
  }
  std::vector<ObjectPtr> claimed;
  std::vector<std::string> errors;
  for (const ObjectPtr& o : candidates) {
    const api::Pod& pod = PodOf(o);
    if (pod.meta.namespace_ != ds.meta.namespace_) continue;
    const bool match = ctx.Selects(pod.meta.labels);
    if (const api::OwnerReference* ref = ControllerOf(pod.meta)) {
      if (ref->uid != ds.meta.uid) continue;  // someone else's
      if (match) {
        claimed.push_back(o);
        continue;
      }
      // Ours, but the selector no longer matches: release it.
      server::ApiResult<store::Bytes> r = client_->PatchSync(
          Resource::kPods, pod.meta.namespace_, pod.meta.name, server::Subresource::kNone,
          api::PatchType::kStrategicMergePatch, ReleasePatch(ds.meta.uid, pod.meta.uid));
      if (!r && r.error().code != 404) errors.push_back(r.error().message);
      continue;
    }
    if (!match || pod.meta.deletion_timestamp) continue;
    // An orphan the selector matches: adopt it, once the DaemonSet is known to be live.
    if (!ctx.can_adopt) {
      server::ApiResult<ObjectPtr> fresh =
          client_->GetSync(Resource::kDaemonSets, ds.meta.namespace_, ds.meta.name);
      if (!fresh) {
        ctx.can_adopt = Status(StatusCode::kInternal, fresh.error().message);
      } else if ((*fresh)->meta().uid != ds.meta.uid) {
        ctx.can_adopt = Internal("original DaemonSet " + ctx.key + " is gone: got uid " +
                                 (*fresh)->meta().uid + ", wanted " + ds.meta.uid);
      } else if ((*fresh)->meta().deletion_timestamp) {
        ctx.can_adopt =
            Internal(ctx.key + " has just been deleted at " + *(*fresh)->meta().deletion_timestamp);
      } else {
        ctx.can_adopt = Status::Ok();
      }
    }
    if (!ctx.can_adopt->ok()) {
      errors.push_back(ctx.can_adopt->message());
      continue;
    }
    server::ApiResult<store::Bytes> r = client_->PatchSync(
        Resource::kPods, pod.meta.namespace_, pod.meta.name, server::Subresource::kNone,
        api::PatchType::kStrategicMergePatch, AdoptPatch(ds, pod.meta.uid));
    if (!r) {
      if (r.error().code != 404) errors.push_back(r.error().message);
      continue;
    }
    claimed.push_back(o);
  }
  if (!errors.empty()) {
    std::string message = errors.front();
    for (size_t i = 1; i < errors.size(); ++i) message += ", " + errors[i];
    return Err(Internal(std::move(message)));
  }
  return claimed;
}

Result<Controller::NodeToDaemonPods> Controller::GetNodesToDaemonPods(SyncContext& ctx) {
  Result<std::vector<ObjectPtr>> claimed = ClaimPods(ctx);
  if (!claimed) {
    return Err(Internal("couldn't get node to daemon pod mapping for daemon set " +
                        Quoted(ctx.ds->meta.name) + ": " + claimed.error().message()));
  }
  NodeToDaemonPods out;
  for (const ObjectPtr& o : *claimed) {
    const api::Pod& pod = PodOf(o);
    // A finished pod being deleted is the kubelet's or the pod GC's to remove.
    if (IsPodTerminal(pod) && pod.meta.deletion_timestamp) continue;
    std::optional<std::string> node = GetTargetNodeName(pod);
    if (!node) continue;
    out[*node].push_back(o);
  }
  return out;
}

void Controller::PodsShouldBeOnNode(SyncContext& ctx, const api::Node& node,
                                    const NodeToDaemonPods& node_to_pods,
                                    std::vector<std::string>* nodes_needing_pods,
                                    std::vector<std::string>* pods_to_delete) {
  const api::DaemonSet& ds = *ctx.ds;
  const ShouldRun r = ctx.Decide(node);
  auto it = node_to_pods.find(node.meta.name);
  const bool exists = it != node_to_pods.end();
  if (r.should_run && !exists) {
    nodes_needing_pods->push_back(node.meta.name);
    return;
  }
  if (r.should_continue_running) {
    if (!exists) return;
    std::vector<ObjectPtr> running;
    for (const ObjectPtr& o : it->second) {
      const api::Pod& pod = PodOf(o);
      if (pod.meta.deletion_timestamp) continue;
      if (pod.status.phase == "Failed") {
        // The DaemonSet often fights a kubelet that rejects its pods: back off per node.
        const std::string backoff_key =
            ds.meta.uid + "/" + std::to_string(ds.observed_generation) + "/" + node.meta.name;
        const client::Time now = clock_->Now();
        if (failed_pods_backoff_.IsInBackOffSinceUpdate(backoff_key, now)) {
          queue_.AddAfter(ctx.key, failed_pods_backoff_.Get(backoff_key));
          continue;
        }
        failed_pods_backoff_.Next(backoff_key, now);
        Event(ctx, client::kEventTypeWarning, kFailedDaemonPodReason,
              "Found failed daemon pod " + pod.meta.namespace_ + "/" + pod.meta.name + " on node " +
                  node.meta.name + ", will try to kill it");
        pods_to_delete->push_back(pod.meta.name);
      } else if (pod.status.phase == "Succeeded") {
        Event(ctx, client::kEventTypeNormal, kSucceededDaemonPodReason,
              "Found succeeded daemon pod " + pod.meta.namespace_ + "/" + pod.meta.name +
                  " on node " + node.meta.name + ", will try to delete it");
        pods_to_delete->push_back(pod.meta.name);
      } else {
        running.push_back(o);
      }
    }
    Result<int> surge = SurgeCount(ds, 1);
    if (!surge || *surge <= 0) {
      // Without surge, one pod per node: all but the oldest go.
      if (running.size() <= 1) return;
      std::sort(running.begin(), running.end(), OlderPod);
      for (size_t i = 1; i < running.size(); ++i) {
        pods_to_delete->push_back(PodOf(running[i]).meta.name);
      }
      return;
    }
    if (running.size() <= 1) {
      // Surging needs at least one pod that is not being deleted.
      if (running.empty() && r.should_run) nodes_needing_pods->push_back(node.meta.name);
      return;
    }
    // With surge: keep the oldest new pod and, while it is not available, the oldest old pod if
    // that is ready; every other pod goes.
    ObjectPtr oldest_new;
    ObjectPtr oldest_old;
    std::sort(running.begin(), running.end(), OlderPod);
    for (const ObjectPtr& o : running) {
      const api::Pod& pod = PodOf(o);
      const std::string* h = pod.meta.labels.Get(kControllerRevisionHashLabel);
      ObjectPtr& slot = (h != nullptr && *h == ctx.hash) ? oldest_new : oldest_old;
      if (!slot) {
        slot = o;
        continue;
      }
      pods_to_delete->push_back(pod.meta.name);
    }
    if (oldest_new && oldest_old) {
      if (!IsPodReady(PodOf(oldest_old)) ||
          IsPodAvailable(PodOf(oldest_new), ds.min_ready_seconds, clock_->Now())) {
        pods_to_delete->push_back(PodOf(oldest_old).meta.name);
      }
    }
    return;
  }
  if (exists) {
    // The node must not run the pod (any more): every daemon pod on it goes.
    for (const ObjectPtr& o : it->second) {
      const api::Pod& pod = PodOf(o);
      if (!pod.meta.deletion_timestamp) pods_to_delete->push_back(pod.meta.name);
    }
  }
}

Status Controller::Manage(SyncContext& ctx) {
  Result<NodeToDaemonPods> node_to_pods = GetNodesToDaemonPods(ctx);
  if (!node_to_pods) return node_to_pods.error();
  std::vector<std::string> nodes_needing_pods;
  std::vector<std::string> pods_to_delete;
  for (const ObjectPtr& n : ctx.nodes) {
    PodsShouldBeOnNode(ctx, *n->As<api::Node>(), *node_to_pods, &nodes_needing_pods,
                       &pods_to_delete);
  }
  // getUnscheduledPodsWithoutNode: pods waiting for a node that is gone would never be
  // scheduled, and the pod GC does not look at unscheduled pods.
  for (const auto& [node, pods] : *node_to_pods) {
    if (ctx.node_by_name.count(node) > 0) continue;
    for (const ObjectPtr& o : pods) {
      if (PodOf(o).spec.node_name.empty()) pods_to_delete.push_back(PodOf(o).meta.name);
    }
  }
  return SyncNodes(ctx, pods_to_delete, nodes_needing_pods);
}

Status Controller::SyncNodes(SyncContext& ctx, const std::vector<std::string>& pods_to_delete,
                             const std::vector<std::string>& nodes_needing_pods) {
  const api::DaemonSet& ds = *ctx.ds;
  const std::string& ns = ds.meta.namespace_;
  const int burst = std::max(0, options_.burst_replicas);
  const int create_diff = std::min(static_cast<int>(nodes_needing_pods.size()), burst);
  const int delete_diff = std::min(static_cast<int>(pods_to_delete.size()), burst);
  // Before any write, so that no informer event can be missed.
  expectations_.SetExpectations(ctx.key, create_diff, delete_diff);

  std::vector<std::string> errors;
  // Creates in batches of 1, 2, 4, ...: a DaemonSet whose creates all fail (a quota, a webhook)
  // sends one request per sync, not hundreds, and as few events.
  int batch = std::min(create_diff, kSlowStartInitialBatchSize);
  for (int pos = 0; pos < create_diff;
       pos += batch, batch = std::min(2 * batch, create_diff - pos)) {
    std::vector<server::ApiResult<store::Bytes>> results(static_cast<size_t>(batch));
    Latch latch(batch);
    for (int i = 0; i < batch; ++i) {
      Document pod =
          NewDaemonPod(ctx.json, ds, nodes_needing_pods[static_cast<size_t>(pos + i)], ctx.hash);
      client_->Create(Resource::kPods, ns, std::move(pod),
                      [&results, &latch, i](server::ApiResult<store::Bytes> r) {
                        results[static_cast<size_t>(i)] = std::move(r);
                        latch.Done();
                      });
    }
    latch.Wait();
    const size_t errors_before = errors.size();
    for (server::ApiResult<store::Bytes>& r : results) {
      if (!r) {
        // Creates into a namespace being torn down fail for good: no event, no retry.
        if (HasCause(r.error(), "NamespaceTerminating")) continue;
        Event(ctx, client::kEventTypeWarning, kFailedCreateReason,
              "Error creating: " + r.error().message);
        expectations_.CreationObserved(ctx.key);
        errors.push_back(r.error().message);
        continue;
      }
      std::string name;
      if (Result<Document> doc = api::ParseTrustedJson(**r); doc && doc->IsObject()) {
        if (auto m = doc->FindMember("metadata"); m != doc->MemberEnd() && m->value.IsObject()) {
          if (auto n = m->value.FindMember("name");
              n != m->value.MemberEnd() && n->value.IsString()) {
            name = n->value.GetString();
          }
        }
      }
      Event(ctx, client::kEventTypeNormal, kSuccessfulCreateReason, "Created pod: " + name);
    }
    const int skipped = create_diff - (batch + pos);
    if (errors.size() > errors_before && skipped > 0) {
      // The pods never attempted are not expected; the next sync tries again.
      expectations_.LowerExpectations(ctx.key, skipped, 0);
      break;
    }
  }

  if (delete_diff > 0) {
    std::vector<server::ApiResult<store::Bytes>> results(static_cast<size_t>(delete_diff));
    Latch latch(delete_diff);
    for (int i = 0; i < delete_diff; ++i) {
      client_->Delete(Resource::kPods, ns, pods_to_delete[static_cast<size_t>(i)], {},
                      [&results, &latch, i](server::ApiResult<store::Bytes> r) {
                        results[static_cast<size_t>(i)] = std::move(r);
                        latch.Done();
                      });
    }
    latch.Wait();
    for (int i = 0; i < delete_diff; ++i) {
      const server::ApiResult<store::Bytes>& r = results[static_cast<size_t>(i)];
      const std::string& name = pods_to_delete[static_cast<size_t>(i)];
      if (r) {
        Event(ctx, client::kEventTypeNormal, kSuccessfulDeleteReason, "Deleted pod: " + name);
        continue;
      }
      expectations_.DeletionObserved(ctx.key);
      if (r.error().code == 404) continue;  // gone already
      Event(ctx, client::kEventTypeWarning, kFailedDeleteReason,
            "Error deleting: " + r.error().message);
      errors.push_back("unable to delete pods: " + r.error().message);
    }
  }
  if (errors.empty()) return Status::Ok();
  std::string message = errors.front();
  for (size_t i = 1; i < errors.size(); ++i) message += ", " + errors[i];
  return Internal(std::move(message));
}

Status Controller::RollingUpdate(SyncContext& ctx) {
  const api::DaemonSet& ds = *ctx.ds;
  Result<NodeToDaemonPods> mapping = GetNodesToDaemonPods(ctx);
  if (!mapping) return mapping.error();
  NodeToDaemonPods& node_to_pods = *mapping;
  // updatedDesiredNodeCounts: every node that should run a pod has an entry.
  int desired = 0;
  for (const ObjectPtr& n : ctx.nodes) {
    if (!ctx.Decide(*n->As<api::Node>()).should_run) continue;
    ++desired;
    node_to_pods.try_emplace(n->meta().name);
  }
  Result<int> max_unavailable = UnavailableCount(ds, desired);
  if (!max_unavailable) {
    return Internal("couldn't get unavailable numbers: invalid value for MaxUnavailable: " +
                    max_unavailable.error().message());
  }
  Result<int> max_surge = SurgeCount(ds, desired);
  if (!max_surge) {
    return Internal("couldn't get unavailable numbers: invalid value for MaxSurge: " +
                    max_surge.error().message());
  }
  // An impossible configuration (both 0) falls back to one unavailable pod.
  if (desired > 0 && *max_unavailable == 0 && *max_surge == 0) *max_unavailable = 1;
  const client::Time now = clock_->Now();
  auto available = [&](const ObjectPtr& o) {
    return IsPodAvailable(PodOf(o), ds.min_ready_seconds, now);
  };

  if (*max_surge == 0) {
    // Delete just enough old pods to stay within maxUnavailable; manage creates the new ones.
    // Unavailable old pods are replaced whatever the count.
    int num_unavailable = 0;
    std::vector<std::string> allowed_replacements;
    std::vector<std::string> candidates;
    for (const auto& [node, pods] : node_to_pods) {
      ObjectPtr new_pod;
      ObjectPtr old_pod;
      if (!FindUpdatedPodsOnNode(pods, ctx.hash, &new_pod, &old_pod)) {
        ++num_unavailable;  // manage prunes the excess first
        continue;
      }
      if ((!old_pod && !new_pod) || (old_pod && new_pod)) {
        ++num_unavailable;  // manage creates or deletes here
      } else if (new_pod) {
        if (!available(new_pod)) ++num_unavailable;
      } else if (!available(old_pod)) {
        allowed_replacements.push_back(PodOf(old_pod).meta.name);
        ++num_unavailable;
      } else if (num_unavailable < *max_unavailable) {
        candidates.push_back(PodOf(old_pod).meta.name);
      }
    }
    const int remaining =
        std::clamp(*max_unavailable - num_unavailable, 0, static_cast<int>(candidates.size()));
    std::vector<std::string> to_delete = std::move(allowed_replacements);
    to_delete.insert(to_delete.end(), candidates.begin(), candidates.begin() + remaining);
    return SyncNodes(ctx, to_delete, {});
  }

  // Surge: a new pod goes next to an old one (at once where the old one is unavailable, on up to
  // maxSurge more nodes otherwise), and the old one goes once the new one is available.
  std::vector<std::string> old_pods_to_delete;
  std::vector<std::string> should_not_run_pods_to_delete;
  std::vector<std::string> candidate_new_nodes;
  std::vector<std::string> allowed_new_nodes;
  int num_surge = 0;
  int num_available = 0;
  for (const auto& [node_name, pods] : node_to_pods) {
    ObjectPtr new_pod;
    ObjectPtr old_pod;
    if (!FindUpdatedPodsOnNode(pods, ctx.hash, &new_pod, &old_pod)) {
      ++num_surge;
      continue;
    }
    if (old_pod) {
      if (available(old_pod)) ++num_available;
    } else if (new_pod && available(new_pod)) {
      ++num_available;
    }
    if (!old_pod) continue;
    auto node_it = ctx.node_by_name.find(node_name);
    if (!new_pod) {
      if (node_it == ctx.node_by_name.end()) {
        return Internal("couldn't get node for nodeName " + Quoted(node_name) + ": node " +
                        Quoted(node_name) + " not found");
      }
      const bool should_run = ctx.Decide(*node_it->second).should_run;
      if (!available(old_pod)) {
        if (!should_run) {
          old_pods_to_delete.push_back(PodOf(old_pod).meta.name);
          continue;
        }
        allowed_new_nodes.push_back(node_name);
        continue;
      }
      if (!should_run) {
        should_not_run_pods_to_delete.push_back(PodOf(old_pod).meta.name);
        continue;
      }
      if (num_surge >= *max_surge) continue;
      candidate_new_nodes.push_back(node_name);
      continue;
    }
    // Surged here already: the old pod goes once the new one is available.
    if (!available(new_pod)) {
      ++num_surge;
      continue;
    }
    old_pods_to_delete.push_back(PodOf(old_pod).meta.name);
  }
  // With surge the owner expects full availability: pods on nodes that should no longer run
  // them go only as pods elsewhere become available.
  if (int deletable = num_available - desired; deletable > 0) {
    deletable = std::min(deletable, static_cast<int>(should_not_run_pods_to_delete.size()));
    for (int i = 0; i < deletable; ++i) {
      const std::string& name = should_not_run_pods_to_delete[static_cast<size_t>(i)];
      if (pods_->Get(ds.meta.namespace_, name)) old_pods_to_delete.push_back(name);
    }
  }
  const int remaining =
      std::clamp(*max_surge - num_surge, 0, static_cast<int>(candidate_new_nodes.size()));
  std::vector<std::string> new_nodes = std::move(allowed_new_nodes);
  new_nodes.insert(new_nodes.end(), candidate_new_nodes.begin(),
                   candidate_new_nodes.begin() + remaining);
  return SyncNodes(ctx, old_pods_to_delete, new_nodes);
}

Status Controller::UpdateStatus(SyncContext& ctx, bool update_observed_generation) {
  const api::DaemonSet& ds = *ctx.ds;
  Result<NodeToDaemonPods> mapping = GetNodesToDaemonPods(ctx);
  if (!mapping) return mapping.error();
  api::DaemonSet counts;
  const client::Time now = clock_->Now();
  for (const ObjectPtr& n : ctx.nodes) {
    const ShouldRun r = ctx.Decide(*n->As<api::Node>());
    auto it = mapping->find(n->meta().name);
    const bool scheduled = it != mapping->end() && !it->second.empty();
    if (!r.should_run) {
      if (scheduled) ++counts.number_misscheduled;
      continue;
    }
    ++counts.desired_number_scheduled;
    if (!scheduled) continue;
    ++counts.current_number_scheduled;
    std::vector<ObjectPtr>& pods = it->second;
    std::sort(pods.begin(), pods.end(), OlderPod);
    const api::Pod& pod = PodOf(pods.front());
    if (IsPodReady(pod)) {
      ++counts.number_ready;
      if (IsPodAvailable(pod, ds.min_ready_seconds, now)) ++counts.number_available;
    }
    if (IsPodUpdated(pod, ctx.hash)) ++counts.updated_number_scheduled;
  }
  counts.number_unavailable = counts.desired_number_scheduled - counts.number_available;
  counts.observed_generation =
      update_observed_generation ? ds.meta.generation : ds.observed_generation;
  if (Status s = StoreStatus(ctx, counts); !s.ok()) {
    return Internal("error storing status for daemon set " + Quoted(ds.meta.name) + ": " +
                    s.message());
  }
  // Look again once minReadySeconds have passed, in case no pod event comes then.
  if (ds.min_ready_seconds > 0 && counts.number_ready != counts.number_available) {
    queue_.AddAfter(ctx.key, std::chrono::seconds(ds.min_ready_seconds));
  }
  return Status::Ok();
}

Status Controller::StoreStatus(SyncContext& ctx, const api::DaemonSet& c) {
  const api::DaemonSet& ds = *ctx.ds;
  if (ds.desired_number_scheduled == c.desired_number_scheduled &&
      ds.current_number_scheduled == c.current_number_scheduled &&
      ds.number_misscheduled == c.number_misscheduled && ds.number_ready == c.number_ready &&
      ds.updated_number_scheduled == c.updated_number_scheduled &&
      ds.number_available == c.number_available && ds.number_unavailable == c.number_unavailable &&
      ds.observed_generation >= ds.meta.generation) {
    return Status::Ok();
  }
  server::ApiResult<store::Bytes> r = client_->UpdateSync(
      Resource::kDaemonSets, ds.meta.namespace_, ds.meta.name, server::Subresource::kStatus,
      StatusUpdateBody(ctx.json, c, c.observed_generation));
  if (r) return Status::Ok();
  // One retry on the object as it is now (upstream StatusUpdateRetries).
  server::ApiResult<ObjectPtr> fresh =
      client_->GetSync(Resource::kDaemonSets, ds.meta.namespace_, ds.meta.name);
  if (!fresh) return Status(StatusCode::kInternal, fresh.error().message);
  Result<Document> doc = api::ParseTrustedJson(*(*fresh)->json);
  if (!doc) return doc.error();
  r = client_->UpdateSync(Resource::kDaemonSets, ds.meta.namespace_, ds.meta.name,
                          server::Subresource::kStatus,
                          StatusUpdateBody(*doc, c, c.observed_generation));
  if (r) return Status::Ok();
  return Status(StatusCode::kInternal, r.error().message);
}

void Controller::Event(const SyncContext& ctx, std::string_view type, std::string_view reason,
                       std::string message) {
  recorder_->Eventf(client::RefOf(*ctx.object), nullptr, type, reason, "", std::move(message));
}

}  // namespace kt::controllers::daemonset
