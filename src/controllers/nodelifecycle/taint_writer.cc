#include "controllers/nodelifecycle/taint_writer.h"

#include <utility>
#include <vector>

#include "api/codec.h"

namespace kt::controllers::nodelifecycle {

namespace {

using server::ObjectPtr;

constexpr int kUpdateTaintAttempts = 5;
constexpr client::Duration kUpdateTaintBackoff = std::chrono::milliseconds(100);

// A merge patch that sets spec.taints to `taints` if the node is still at `revision`.
std::string TaintsPatch(store::Revision revision, const std::vector<Taint>& taints) {
  rapidjson::Document doc(rapidjson::kObjectType);
  auto& alloc = doc.GetAllocator();
  rapidjson::Value meta(rapidjson::kObjectType);
  const std::string rv = std::to_string(revision);
  meta.AddMember("resourceVersion", rapidjson::Value(rv.c_str(), alloc), alloc);
  rapidjson::Value list;  // null removes the field, as upstream's patch does for no taints
  if (!taints.empty()) {
    list.SetArray();
    for (const Taint& t : taints) list.PushBack(api::TaintToValue(t, alloc), alloc);
  }
  rapidjson::Value spec(rapidjson::kObjectType);
  spec.AddMember("taints", list, alloc);
  doc.AddMember("metadata", meta, alloc);
  doc.AddMember("spec", spec, alloc);
  return api::EncodeJson(doc);
}

}  // namespace

void TaintWriter::Change(const std::string& node, TaintChange change,
                         std::function<void(bool ok)> done) {
  writers_[node].ops.push_back(Op{std::move(change), std::move(done)});
  Start(node);
}

bool TaintWriter::Busy(std::string_view node) const {
  auto it = writers_.find(node);
  return it != writers_.end() && (it->second.busy || !it->second.ops.empty());
}

void TaintWriter::Forget(std::string_view node) {
  auto it = writers_.find(node);
  if (it != writers_.end() && !it->second.busy && it->second.ops.empty()) writers_.erase(it);
}

void TaintWriter::Start(const std::string& node) {
  auto it = writers_.find(node);
  if (it == writers_.end()) return;
  Writer& w = it->second;
  if (w.busy) return;
  if (w.ops.empty()) {
    if (options_.idle) options_.idle(node);
    return;
  }
  w.busy = true;
  w.attempt = 1;
  ObjectPtr object = options_.cached ? options_.cached(node) : nullptr;
  if (object && object->revision > w.written_over) return Apply(node, object);
  Read(node);
}

void TaintWriter::Read(const std::string& node) {
  options_.in_flight->fetch_add(1, std::memory_order_acq_rel);
  options_.client->Get(server::Resource::kNodes, "", node,
                       [this, box = options_.box, node](server::ApiResult<ObjectPtr> r) {
                         box->Post([this, node, r = std::move(r)] {
                           options_.in_flight->fetch_sub(1, std::memory_order_acq_rel);
                           if (!r) return Finish(node, false);
                           Apply(node, *r);
                         });
                       });
}

void TaintWriter::Apply(const std::string& node, const ObjectPtr& object) {
  Writer& w = writers_.at(node);
  const api::Node* n = object->As<api::Node>();
  if (n == nullptr) return Finish(node, false);
  std::optional<std::vector<Taint>> next = ApplyTaintChange(n->spec.taints, w.ops.front().change);
  if (!next) return Finish(node, true);  // already as wanted: no write
  w.written_over = object->revision;
  options_.in_flight->fetch_add(1, std::memory_order_acq_rel);
  options_.client->Patch(server::Resource::kNodes, "", node, server::Subresource::kNone,
                         api::PatchType::kMergePatch, TaintsPatch(object->revision, *next),
                         [this, box = options_.box, node](server::ApiResult<store::Bytes> r) {
                           box->Post([this, node, r = std::move(r)]() mutable {
                             options_.in_flight->fetch_sub(1, std::memory_order_acq_rel);
                             Patched(node, std::move(r));
                           });
                         });
}

void TaintWriter::Patched(const std::string& node, server::ApiResult<store::Bytes> result) {
  if (result) return Finish(node, true);
  Writer& w = writers_.at(node);
  if (!server::IsConflict(result.error()) || w.attempt >= kUpdateTaintAttempts) {
    return Finish(node, false);
  }
  // Someone else wrote the node since it was read: read it again and apply the change to that.
  // (Upstream's backoff jitters; this one does not, so that simulated runs repeat exactly.)
  ++w.attempt;
  options_.clock->AfterFunc(kUpdateTaintBackoff, [this, box = options_.box, node] {
    box->Post([this, node] { Read(node); });
  });
}

void TaintWriter::Finish(const std::string& node, bool ok) {
  std::function<void(bool)> done;
  {
    Writer& w = writers_.at(node);
    done = std::move(w.ops.front().done);
    w.ops.pop_front();
    w.busy = false;
  }
  if (done) done(ok);
  Start(node);
}

}  // namespace kt::controllers::nodelifecycle
