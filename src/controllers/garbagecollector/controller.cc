#include "controllers/garbagecollector/controller.h"

#include <algorithm>

#include "api/types.h"
#include "core/strings.h"
#include "server/registry.h"

namespace kt::controllers::garbagecollector {

namespace {

using server::ObjectPtr;
using server::Resource;

constexpr std::string_view kOwnerIndex = "owner-uid";
constexpr Resource kDependents[] = {Resource::kPods, Resource::kLeases, Resource::kDaemonSets};

// The served kind an ownerReference names, if kubetaint serves it.
std::optional<Resource> OwnerResource(const api::OwnerReference& ref) {
  if (ref.api_version == "v1" && ref.kind == "Node") return Resource::kNodes;
  if (ref.api_version == "apps/v1" && ref.kind == "DaemonSet") return Resource::kDaemonSets;
  return std::nullopt;
}

bool Namespaced(Resource r) { return r != Resource::kNodes; }

bool HasFinalizer(const api::ObjectMeta& meta, std::string_view f) {
  return std::find(meta.finalizers.begin(), meta.finalizers.end(), f) != meta.finalizers.end();
}

std::string OwnerReferenceJson(const api::OwnerReference& r) {
  std::string out = R"({"apiVersion":)";
  AppendJsonString(out, r.api_version);
  out.append(R"(,"kind":)");
  AppendJsonString(out, r.kind);
  out.append(R"(,"name":)");
  AppendJsonString(out, r.name);
  out.append(R"(,"uid":)");
  AppendJsonString(out, r.uid);
  if (r.controller) out.append(R"(,"controller":true)");
  if (r.block_owner_deletion) out.append(R"(,"blockOwnerDeletion":true)");
  out.push_back('}');
  return out;
}

}  // namespace

server::ObjectFilter DependentFilter() {
  server::ObjectFilter f;
  f.predicate = [](const server::StoredObject& o) {
    const auto& refs = o.meta().owner_references;
    return std::any_of(refs.begin(), refs.end(),
                       [](const api::OwnerReference& r) { return OwnerResource(r).has_value(); });
  };
  return f;
}

Controller::Controller(Options options)
    : options_(std::move(options)), clock_(options_.clock), client_(options_.client) {
  loop_ = std::make_unique<client::Loop>(
      clock_, client::Loop::Options{.name = "kt-gc", .poll = [this] {
                                      size_t n = nodes_->DispatchPending() +
                                                 daemonsets_->DispatchPending() +
                                                 leases_->DispatchPending() +
                                                 pods_->DispatchPending();
                                      return n + Drain();
                                    }});
  auto wake = [loop = loop_.get()] { loop->Wake(); };
  auto make = [&](std::unique_ptr<client::ListerWatcher> source, const char* name) {
    client::Informer::Options o = client::Informer::Options::Manual(clock_, name);
    o.on_pending = wake;
    return std::make_unique<client::Informer>(std::move(source), o);
  };
  // The dependents' handlers act only on objects with owner references (OnDependent,
  // EnqueueOwnersOf): the others need not wake the loop.
  auto dependent = [&](std::unique_ptr<client::ListerWatcher> source, const char* name) {
    client::Informer::Options o = client::Informer::Options::Manual(clock_, name);
    o.on_pending = wake;
    o.wake_for = [](server::WatchEventType, const server::StoredObject& object) {
      return !object.meta().owner_references.empty();
    };
    return std::make_unique<client::Informer>(std::move(source), o);
  };
  pods_ = dependent(std::move(options_.pods), "gc-pods");
  leases_ = dependent(std::move(options_.leases), "gc-leases");
  nodes_ = make(std::move(options_.nodes), "gc-nodes");
  daemonsets_ = make(std::move(options_.daemonsets), "gc-daemonsets");
  // Dependents by the UIDs of their owners.
  auto owner_uids = [](const server::StoredObject& o) {
    std::vector<std::string> uids;
    for (const api::OwnerReference& r : o.meta().owner_references) uids.push_back(r.uid);
    return uids;
  };
  for (Resource r : kDependents) InformerOf(r)->AddIndexer(std::string(kOwnerIndex), owner_uids);
  for (Resource r : kDependents) {
    InformerOf(r)->AddEventHandler(client::EventHandler{
        .on_add = [this, r](const ObjectPtr& o, bool) { OnDependent(r, o); },
        .on_update = [this, r](const ObjectPtr&, const ObjectPtr& o) { OnDependent(r, o); },
        .on_delete = [this](const ObjectPtr& o) { EnqueueOwnersOf(o); },
    });
  }
  for (Resource r : {Resource::kNodes, Resource::kDaemonSets}) {
    InformerOf(r)->AddEventHandler(client::EventHandler{
        .on_add = [this, r](const ObjectPtr& o, bool) { OnOwner(r, o); },
        .on_update = [this, r](const ObjectPtr&, const ObjectPtr& o) { OnOwner(r, o); },
        .on_delete = [this](const ObjectPtr& o) { EnqueueDependentsOf(o->meta().uid); },
    });
  }
}

Controller::~Controller() { Stop(); }

client::Informer* Controller::InformerOf(Resource r) const {
  switch (r) {
    case Resource::kPods:
      return pods_.get();
    case Resource::kLeases:
      return leases_.get();
    case Resource::kNodes:
      return nodes_.get();
    case Resource::kDaemonSets:
      return daemonsets_.get();
    default:
      return nullptr;
  }
}

bool Controller::HasSynced() const {
  return pods_->HasSynced() && leases_->HasSynced() && nodes_->HasSynced() &&
         daemonsets_->HasSynced();
}

void Controller::Start() {
  pods_->Start();
  leases_->Start();
  nodes_->Start();
  daemonsets_->Start();
  if (!options_.manual) loop_->Start();
}

void Controller::Stop() {
  if (loop_) loop_->Stop();
  for (auto* i : {pods_.get(), leases_.get(), nodes_.get(), daemonsets_.get()}) {
    if (i != nullptr) i->Stop();
  }
}

size_t Controller::RunPending() { return loop_->RunPending(); }

client::WriteDone Controller::Tracked(client::WriteDone done) {
  in_flight_.fetch_add(1, std::memory_order_acq_rel);
  return [this, done = std::move(done)](server::ApiResult<store::Bytes> r) mutable {
    if (done) done(std::move(r));
    in_flight_.fetch_sub(1, std::memory_order_acq_rel);
  };
}

void Controller::Enqueue(Item item) {
  if (queued_.insert(item).second) queue_.push_back(std::move(item));
}

void Controller::OnDependent(Resource r, const ObjectPtr& o) {
  const api::ObjectMeta& m = o->meta();
  if (!m.owner_references.empty() && !m.deletion_timestamp) {
    Enqueue(Item{.owner = false, .resource = r, .namespace_ = m.namespace_, .name = m.name});
  }
}

void Controller::OnOwner(Resource r, const ObjectPtr& o) {
  const api::ObjectMeta& m = o->meta();
  if (m.deletion_timestamp && (HasFinalizer(m, server::kFinalizerOrphan) ||
                               HasFinalizer(m, server::kFinalizerForeground))) {
    Enqueue(Item{.owner = true, .resource = r, .namespace_ = m.namespace_, .name = m.name});
  }
}

void Controller::EnqueueDependentsOf(std::string_view uid) {
  for (const ObjectPtr& d : DependentsOf(uid)) {
    OnDependent(d->resource, d);
  }
}

void Controller::EnqueueOwnersOf(const ObjectPtr& dependent) {
  // A foreground deletion waits for its dependents to go.
  const api::ObjectMeta& m = dependent->meta();
  for (const api::OwnerReference& ref : m.owner_references) {
    const std::optional<Resource> r = OwnerResource(ref);
    if (!r) continue;
    const std::string ns = Namespaced(*r) ? m.namespace_ : "";
    if (ObjectPtr owner = InformerOf(*r)->Get(ns, ref.name)) OnOwner(*r, owner);
  }
}

std::vector<ObjectPtr> Controller::DependentsOf(std::string_view uid) const {
  std::vector<ObjectPtr> out;
  for (Resource r : kDependents) {
    std::vector<ObjectPtr> d = InformerOf(r)->ByIndex(kOwnerIndex, uid);
    out.insert(out.end(), d.begin(), d.end());
  }
  return out;
}

size_t Controller::Drain() {
  if (!synced_) {
    // Upstream waits for its informers before collecting anything; then it looks at all.
    if (!HasSynced()) return 0;
    synced_ = true;
    for (Resource r : kDependents) {
      for (const ObjectPtr& o : InformerOf(r)->List()) OnDependent(r, o);
    }
    for (Resource r : {Resource::kNodes, Resource::kDaemonSets}) {
      for (const ObjectPtr& o : InformerOf(r)->List()) OnOwner(r, o);
    }
  }
  size_t n = 0;
  while (!queue_.empty()) {
    Item item = std::move(queue_.front());
    queue_.pop_front();
    queued_.erase(item);
    item.owner ? ProcessOwner(item) : ProcessDependent(item);
    ++n;
  }
  return n;
}

void Controller::RetryLater(Item item) {
  loop_->At(clock_->Now() + options_.retry, [this, item = std::move(item)] { Enqueue(item); });
}

void Controller::ProcessDependent(const Item& item) {
  ObjectPtr object = InformerOf(item.resource)->Get(item.namespace_, item.name);
  if (!object || object->meta().deletion_timestamp) return;
  const api::ObjectMeta& m = object->meta();
  if (m.owner_references.empty()) return;
  // Owners the informers do not show (or show under another UID) are read live before anything
  // is done: an informer may not have caught up with an owner made just before its dependent.
  struct Reads {
    size_t left = 0;
    std::vector<bool> gone;
    bool failed = false;
    ObjectPtr live;  // the dependent itself, read live
  };
  auto reads = std::make_shared<Reads>();
  reads->gone.assign(m.owner_references.size(), false);
  std::vector<size_t> to_read;
  for (size_t i = 0; i < m.owner_references.size(); ++i) {
    const api::OwnerReference& ref = m.owner_references[i];
    const std::optional<Resource> r = OwnerResource(ref);
    if (!r) return;  // an owner of a kind not served here: cannot be resolved
    const std::string ns = Namespaced(*r) ? m.namespace_ : "";
    ObjectPtr owner = InformerOf(*r)->Get(ns, ref.name);
    if (!owner || owner->meta().uid != ref.uid) to_read.push_back(i);
  }
  if (to_read.empty()) return;  // every owner is there
  // The dependent is read live too (upstream does the same): the informer's copy may predate a
  // change of its references, e.g. the removal of an orphaning owner's.
  reads->left = to_read.size() + 1;
  auto finish = [this, reads, item, object] {
    if (--reads->left > 0) return;
    if (reads->failed) return RetryLater(item);
    if (!reads->live) return;  // gone already
    const api::ObjectMeta& now = reads->live->meta();
    if (now.uid != object->meta().uid || now.deletion_timestamp) return;
    if (!(now.owner_references == object->meta().owner_references)) return RetryLater(item);
    Collect(item, reads->live, std::move(reads->gone));
  };
  ReadLive(item.resource, m.namespace_, m.name, [reads, finish](std::optional<ObjectPtr> got) {
    if (!got) reads->failed = true;
    reads->live = got.value_or(nullptr);
    finish();
  });
  for (size_t i : to_read) {
    const api::OwnerReference& ref = m.owner_references[i];
    const Resource r = *OwnerResource(ref);
    ReadLive(r, Namespaced(r) ? m.namespace_ : "", ref.name,
             [reads, i, uid = ref.uid, finish](std::optional<ObjectPtr> got) {
               if (!got) reads->failed = true;
               reads->gone[i] = got && (*got == nullptr || (*got)->meta().uid != uid);
               finish();
             });
  }
}

void Controller::ReadLive(Resource r, const std::string& ns, const std::string& name,
                          std::function<void(std::optional<ObjectPtr>)> done) {
  in_flight_.fetch_add(1, std::memory_order_acq_rel);
  client_->Get(r, ns, name, [this, done = std::move(done)](server::ApiResult<ObjectPtr> res) {
    std::optional<ObjectPtr> got;
    if (res) {
      got = *res;
    } else if (res.error().code == 404) {
      got = ObjectPtr();
    }
    loop_->Post([this, done, got = std::move(got)] {
      done(got);
      in_flight_.fetch_sub(1, std::memory_order_acq_rel);
    });
  });
}

void Controller::Collect(const Item& item, const ObjectPtr& object, std::vector<bool> gone) {
  if (std::none_of(gone.begin(), gone.end(), [](bool g) { return g; })) return;
  if (std::all_of(gone.begin(), gone.end(), [](bool g) { return g; })) {
    // Every owner is gone: the dependent goes (upstream's default, background propagation).
    return Delete(*object, item);
  }
  // Some owners remain: only the references to the others go.
  RemoveReferences(object, gone, [this, item](bool ok) {
    if (!ok) RetryLater(item);
  });
}

void Controller::RemoveReferences(const ObjectPtr& dependent, const std::vector<bool>& drop,
                                  std::function<void(bool)> done) {
  const api::ObjectMeta& m = dependent->meta();
  // A merge patch replaces the list; the UID makes it apply to this object only.
  std::string patch = R"({"metadata":{"uid":)";
  AppendJsonString(patch, m.uid);
  patch.append(R"(,"ownerReferences":)");
  std::string list = "[";
  for (size_t i = 0; i < m.owner_references.size(); ++i) {
    if (drop[i]) continue;
    if (list.size() > 1) list.push_back(',');
    list.append(OwnerReferenceJson(m.owner_references[i]));
  }
  list.push_back(']');
  patch.append(list == "[]" ? "null" : list).append("}}");
  client_->Patch(dependent->resource, m.namespace_, m.name, server::Subresource::kNone,
                 api::PatchType::kMergePatch, std::move(patch),
                 Tracked([this, done = std::move(done)](server::ApiResult<store::Bytes> r) {
                   const bool ok = r || r.error().code == 404;
                   loop_->Post([done, ok] { done(ok); });
                 }));
}

void Controller::ProcessOwner(const Item& item) {
  ObjectPtr owner = InformerOf(item.resource)->Get(item.namespace_, item.name);
  if (!owner || !owner->meta().deletion_timestamp) return;
  const api::ObjectMeta& m = owner->meta();
  const std::vector<ObjectPtr> dependents = DependentsOf(m.uid);
  if (HasFinalizer(m, server::kFinalizerOrphan)) {
    if (dependents.empty()) return RemoveFinalizer(owner, server::kFinalizerOrphan);
    // Every dependent loses its references to this owner; then the finalizer goes.
    auto left = std::make_shared<size_t>(dependents.size());
    auto failed = std::make_shared<bool>(false);
    for (const ObjectPtr& d : dependents) {
      std::vector<bool> drop;
      for (const api::OwnerReference& ref : d->meta().owner_references) {
        drop.push_back(ref.uid == m.uid);
      }
      RemoveReferences(d, drop, [this, item, owner, left, failed](bool ok) {
        if (!ok) *failed = true;
        if (--*left > 0) return;
        if (*failed) return RetryLater(item);
        RemoveFinalizer(owner, server::kFinalizerOrphan);
      });
    }
    return;
  }
  if (HasFinalizer(m, server::kFinalizerForeground)) {
    if (dependents.empty()) return RemoveFinalizer(owner, server::kFinalizerForeground);
    // The dependents go first; each one's deletion brings the owner back here.
    for (const ObjectPtr& d : dependents) {
      if (!d->meta().deletion_timestamp) Delete(*d, item);
    }
  }
}

void Controller::Delete(const server::StoredObject& object, const Item& retry) {
  const api::ObjectMeta& m = object.meta();
  server::DeleteOptions options;
  options.precondition_uid = m.uid;
  client_->Delete(object.resource, m.namespace_, m.name, std::move(options),
                  Tracked([this, retry](server::ApiResult<store::Bytes> r) {
                    // Gone already, or another object of that name now: nothing to retry.
                    if (!r && r.error().code != 404 && r.error().code != 409) {
                      loop_->Post([this, retry] { RetryLater(retry); });
                    }
                  }));
}

void Controller::RemoveFinalizer(const ObjectPtr& owner, std::string_view finalizer) {
  const api::ObjectMeta& m = owner->meta();
  // The resourceVersion makes it a compare-and-swap: a concurrent change of the finalizers is
  // not overwritten; the next event brings the owner back.
  std::string patch = R"({"metadata":{"resourceVersion":)";
  AppendJsonString(patch, std::to_string(owner->revision));
  patch.append(R"(,"finalizers":)");
  std::string list = "[";
  for (const std::string& f : m.finalizers) {
    if (f == finalizer) continue;
    if (list.size() > 1) list.push_back(',');
    AppendJsonString(list, f);
  }
  list.push_back(']');
  patch.append(list == "[]" ? "null" : list).append("}}");
  Item item{.owner = true, .resource = owner->resource, .namespace_ = m.namespace_, .name = m.name};
  client_->Patch(owner->resource, m.namespace_, m.name, server::Subresource::kNone,
                 api::PatchType::kMergePatch, std::move(patch),
                 Tracked([this, item](server::ApiResult<store::Bytes> r) {
                   if (!r && r.error().code != 404) {
                     loop_->Post([this, item] { RetryLater(item); });
                   }
                 }));
}

}  // namespace kt::controllers::garbagecollector
