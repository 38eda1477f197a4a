#include "controllers/podgc/controller.h"

#include <algorithm>
#include <unordered_set>

#include "api/types.h"
#include "core/strings.h"
#include "core/taint.h"
#include "core/time.h"

namespace kt::controllers::podgc {

namespace {

using server::ObjectPtr;
using server::Resource;

bool Terminated(const api::Pod& p) {
  return p.status.phase == "Succeeded" || p.status.phase == "Failed";
}

bool NodeReady(const api::Node& n) {
  for (const api::Condition& c : n.status.conditions) {
    if (c.type == "Ready") return c.status == "True";
  }
  return false;
}

bool OutOfService(const api::Node& n) {
  for (const Taint& t : n.spec.taints) {
    if (t.key == kOutOfServiceTaint && t.effect == kEffectNoExecute) return true;
  }
  return false;
}

}  // namespace

Controller::Controller(Options options)
    : options_(std::move(options)), clock_(options_.clock), client_(options_.client) {
  loop_ = std::make_unique<client::Loop>(
      clock_, client::Loop::Options{.name = "kt-podgc", .poll = [this] {
                                      return nodes_->DispatchPending() + pods_->DispatchPending();
                                    }});
  auto wake = [loop = loop_.get()] { loop->Wake(); };
  client::Informer::Options po = client::Informer::Options::Manual(clock_, "podgc-pods");
  po.on_pending = wake;
  // Pods are collected by the periodic pass alone, which dispatches what waits first: no pod
  // change needs the loop woken for it.
  po.wake_for = [](server::WatchEventType, const server::StoredObject&) { return false; };
  pods_ = std::make_unique<client::Informer>(std::move(options_.pods), po);
  client::Informer::Options no = client::Informer::Options::Manual(clock_, "podgc-nodes");
  no.on_pending = wake;
  nodes_ = std::make_unique<client::Informer>(std::move(options_.nodes), no);
}

Controller::~Controller() { Stop(); }

void Controller::Start() {
  pods_->Start();
  nodes_->Start();
  loop_->At(clock_->Now() + options_.period, [this] { Pass(); });
  if (!options_.manual) loop_->Start();
}

void Controller::Stop() {
  if (loop_) loop_->Stop();
  if (pods_) pods_->Stop();
  if (nodes_) nodes_->Stop();
}

size_t Controller::RunPending() { return loop_->RunPending(); }

client::WriteDone Controller::Tracked(client::WriteDone done) {
  in_flight_.fetch_add(1, std::memory_order_acq_rel);
  return [this, done = std::move(done)](server::ApiResult<store::Bytes> r) mutable {
    if (done) done(std::move(r));
    in_flight_.fetch_sub(1, std::memory_order_acq_rel);
  };
}

void Controller::Pass() {
  loop_->At(clock_->Now() + options_.period, [this] { Pass(); });
  // Upstream waits for its informers before collecting anything.
  if (!HasSynced()) return;
  const std::vector<ObjectPtr> pods = pods_->List();
  if (options_.terminated_pod_gc_threshold > 0) GcTerminated(pods);
  for (const ObjectPtr& o : pods) {
    const api::Pod* p = o->As<api::Pod>();
    if (p == nullptr || !p->meta.deletion_timestamp) continue;
    if (p->spec.node_name.empty()) {
      // A terminating pod that was never scheduled: nothing else will end its deletion.
      MarkFailedAndDelete(o, false);
      continue;
    }
    // Non-graceful node shutdown: the node is down and marked out of service.
    const ObjectPtr node = nodes_->Get("", p->spec.node_name);
    const api::Node* n = node ? node->As<api::Node>() : nullptr;
    if (n != nullptr && OutOfService(*n) && !NodeReady(*n)) MarkFailedAndDelete(o, false);
  }
  GcOrphaned(pods);
}

void Controller::GcTerminated(const std::vector<ObjectPtr>& pods) {
  std::vector<const ObjectPtr*> terminated;
  for (const ObjectPtr& o : pods) {
    const api::Pod* p = o->As<api::Pod>();
    if (p != nullptr && Terminated(*p) && !p->meta.deletion_timestamp) terminated.push_back(&o);
  }
  const int64_t excess =
      static_cast<int64_t>(terminated.size()) - options_.terminated_pod_gc_threshold;
  if (excess <= 0) return;
  // The oldest first (upstream sorts by creation time).
  std::sort(terminated.begin(), terminated.end(), [](const ObjectPtr* a, const ObjectPtr* b) {
    const auto& ma = (*a)->meta();
    const auto& mb = (*b)->meta();
    return ma.creation_timestamp != mb.creation_timestamp
               ? ma.creation_timestamp < mb.creation_timestamp
               : ma.name < mb.name;
  });
  for (int64_t i = 0; i < excess; ++i) ForceDelete(*terminated[static_cast<size_t>(i)]);
}

void Controller::GcOrphaned(const std::vector<ObjectPtr>& pods) {
  const client::Time now = clock_->Now();
  std::unordered_set<std::string> missing;
  for (const ObjectPtr& o : pods) {
    const api::Pod* p = o->As<api::Pod>();
    if (p == nullptr || p->spec.node_name.empty()) continue;
    if (nodes_->Get("", p->spec.node_name)) continue;
    missing.insert(p->spec.node_name);
  }
  // Nodes that came back (or whose pods went) are forgotten.
  std::erase_if(missing_since_, [&](const auto& e) { return !missing.contains(e.first); });
  std::erase_if(confirmed_gone_, [&](const auto& e) { return !missing.contains(e.first); });
  for (const std::string& node : missing) {
    auto [it, added] = missing_since_.emplace(node, now);
    if (added || now - it->second < options_.quarantine) continue;
    if (confirmed_gone_[node]) {
      for (const ObjectPtr& o : pods) {
        const api::Pod* p = o->As<api::Pod>();
        if (p != nullptr && p->spec.node_name == node) MarkFailedAndDelete(o, true);
      }
      continue;
    }
    // The informer may lag: the node's absence is confirmed by a live read first; its pods go
    // at the next pass.
    in_flight_.fetch_add(1, std::memory_order_acq_rel);
    client_->Get(Resource::kNodes, "", node, [this, node](server::ApiResult<ObjectPtr> r) {
      const bool gone = !r && r.error().code == 404;
      loop_->Post([this, node, gone] {
        if (gone && missing_since_.contains(node)) {
          confirmed_gone_[node] = true;
          loop_->At(clock_->Now(), [this] { Pass(); });
        }
      });
      in_flight_.fetch_sub(1, std::memory_order_acq_rel);
    });
  }
}

void Controller::MarkFailedAndDelete(const ObjectPtr& object, bool disruption) {
  const api::Pod* p = object->As<api::Pod>();
  if (p == nullptr) return;
  if (Terminated(*p)) return ForceDelete(object);
  std::string patch = R"({"metadata":{"uid":)";
  AppendJsonString(patch, p->meta.uid);
  patch.append(R"(},"status":{"phase":"Failed")");
  if (disruption) {
    patch
        .append(R"(,"conditions":[{"type":"DisruptionTarget","status":"True",)"
                R"("reason":"DeletionByPodGC","message":"PodGC: node no longer exists",)"
                R"("lastTransitionTime":")")
        .append(FormatRfc3339(clock_->Now()))
        .append(R"("}])");
  }
  patch.append("}}");
  client_->Patch(Resource::kPods, p->meta.namespace_, p->meta.name, server::Subresource::kStatus,
                 api::PatchType::kStrategicMergePatch, std::move(patch),
                 Tracked([this, object](server::ApiResult<store::Bytes> r) {
                   if (r) ForceDelete(object);
                 }));
}

void Controller::ForceDelete(const ObjectPtr& object) {
  server::DeleteOptions options;
  options.grace_period_seconds = 0;
  options.precondition_uid = object->meta().uid;
  client_->Delete(Resource::kPods, object->meta().namespace_, object->meta().name,
                  std::move(options), Tracked(nullptr));
}

}  // namespace kt::controllers::podgc
