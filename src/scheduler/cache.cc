#include "scheduler/cache.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <new>

#include "api/node_affinity.h"

namespace kt::scheduler {

std::string Cache::ZoneKey(const api::Node& node) {
  const api::StringMap& labels = node.meta.labels;
  const std::string* zone = labels.Get("failure-domain.beta.kubernetes.io/zone");
  if (zone == nullptr) zone = labels.Get("topology.kubernetes.io/zone");
  const std::string* region = labels.Get("failure-domain.beta.kubernetes.io/region");
  if (region == nullptr) region = labels.Get("topology.kubernetes.io/region");
  const std::string z = zone ? *zone : "";
  const std::string r = region ? *region : "";
  if (r.empty() && z.empty()) return "";
  std::string key = r;
  key += ":";
  key += '\0';
  key += ":";
  key += z;
  return key;
}

namespace {

// Equal for the taint sets: key, value and effect in order, timeAdded aside.
bool SameTaints(const std::vector<Taint>& a, const std::vector<Taint>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const Taint& x, const Taint& y) {
    return x.key == y.key && x.value == y.value && x.effect == y.effect;
  });
}

}  // namespace

void Cache::ClassifyTaints(NodeInfo& info) {
  const api::Node* node = info.node();  // AddNode has set it
  const uint32_t before = info.taint_set();
  if (node->spec.taints.empty()) {
    info.set_taint_set(0);
  } else {
    std::vector<std::string> key;
    key.reserve(node->spec.taints.size() * 3);
    for (const Taint& t : node->spec.taints) {
      key.push_back(t.key);
      key.push_back(t.value);
      key.push_back(t.effect);
    }
    info.set_taint_set(taint_sets_.Acquire(std::move(key)));
  }
  taint_sets_.Release(before);  // after the Acquire: a list the node keeps keeps its id
}

void Cache::ClassifyLabels(NodeInfo& info) {
  const api::Node* node = info.node();  // AddNode has set it
  const uint32_t before = info.label_set();
  std::vector<std::string> key;
  key.reserve(node->meta.labels.size() * 2);
  for (const auto& [label, value] : node->meta.labels) {
    if (label == api::kLabelHostname) continue;
    key.push_back(label);
    key.push_back(value);
  }
  info.set_label_set(label_sets_.Acquire(std::move(key)));
  label_sets_.Release(before);
}

void Cache::ReleaseSets(NodeInfo& info) {
  taint_sets_.Release(info.taint_set());
  label_sets_.Release(info.label_set());
  info.set_taint_set(0);
  info.set_label_set(0);
}

void Cache::SlabDeleter::operator()(NodeInfo* slab) const {
  for (size_t i = 0; i < kSlabSize; ++i) slab[i].~NodeInfo();
  std::free(slab);
}

NodeInfo* Cache::NewNodeInfo() {
  if (free_.empty()) {
    void* raw = std::aligned_alloc(kSlabBytes, kSlabBytes);
    if (raw == nullptr) throw std::bad_alloc();
    ::madvise(raw, kSlabBytes, MADV_HUGEPAGE);  // advice only: fine if refused
    NodeInfo* slab = static_cast<NodeInfo*>(raw);
    for (size_t i = 0; i < kSlabSize; ++i) new (&slab[i]) NodeInfo();
    slabs_.emplace_back(slab);
    for (size_t i = kSlabSize; i > 0; --i) free_.push_back(&slab[i - 1]);
  }
  NodeInfo* info = free_.back();
  free_.pop_back();
  return info;
}

void Cache::FreeNodeInfo(NodeInfo* info) {
  *info = NodeInfo();
  free_.push_back(info);
}

NodeInfo& Cache::NodeForPods(const std::string& name) {
  auto it = nodes_.find(name);
  if (it != nodes_.end()) return *it->second;
  // A pod bound to a node the cache has not seen yet: a placeholder until the node arrives.
  NodeInfo* info = NewNodeInfo();
  info->set_name(name);
  nodes_.emplace(name, info);
  return *info;
}

void Cache::AddNode(const ObjectPtr& node) {
  const api::Node* n = node->As<api::Node>();
  if (n == nullptr) return;
  const std::string& name = n->meta.name;
  NodeInfo& info = NodeForPods(name);
  // A node update (a heartbeat's status, most often) rarely changes the taints or the labels:
  // their sets stand.
  const api::Node* before = info.node();
  const bool same_taints = before != nullptr && SameTaints(before->spec.taints, n->spec.taints);
  const bool same_labels = before != nullptr && before->meta.labels == n->meta.labels;
  info.SetNode(node);
  if (!same_taints) ClassifyTaints(info);
  if (!same_labels) ClassifyLabels(info);
  std::string zone = ZoneKey(*n);
  if (auto listed = zone_of_.find(name); listed != zone_of_.end()) {
    if (listed->second == zone) return;
    Unlist(name);  // its zone changed
  }
  auto& names = zones_[zone];
  if (names.empty()) zone_order_.push_back(zone);
  names.push_back(name);
  zone_of_[name] = std::move(zone);
  list_dirty_ = true;
}

void Cache::Unlist(const std::string& name) {
  auto listed = zone_of_.find(name);
  if (listed == zone_of_.end()) return;
  auto& names = zones_[listed->second];
  auto it = std::find(names.begin(), names.end(), name);
  if (it != names.end()) {
    *it = std::move(names.back());  // upstream nodeTree.removeNode swaps with the last
    names.pop_back();
  }
  if (names.empty()) {
    zones_.erase(listed->second);
    zone_order_.erase(std::find(zone_order_.begin(), zone_order_.end(), listed->second));
  }
  zone_of_.erase(listed);
  list_dirty_ = true;
}

void Cache::RemoveNode(const std::string& name) {
  Unlist(name);
  auto it = nodes_.find(name);
  if (it == nodes_.end()) return;
  ReleaseSets(*it->second);
  if (it->second->pods().empty()) {
    FreeNodeInfo(it->second);
    nodes_.erase(it);
  } else {
    it->second->SetNode(nullptr);  // a ghost, until its pods are removed
  }
}

void Cache::DropIfGhost(NodeInfo* info) {
  if (info->node() != nullptr || !info->pods().empty()) return;
  auto it = nodes_.find(info->name());
  if (it == nodes_.end() || it->second != info) return;
  nodes_.erase(it);
  FreeNodeInfo(info);
}

void Cache::RebuildList() const {
  list_.clear();
  list_.reserve(zone_of_.size());
  // Round-robin over the zones: the i-th node of every zone, then the (i+1)-th, ...
  for (size_t i = 0; list_.size() < zone_of_.size(); ++i) {
    for (const std::string& zone : zone_order_) {
      const auto& names = zones_.at(zone);
      if (i < names.size()) list_.push_back(nodes_.at(names[i]));
    }
  }
  list_dirty_ = false;
}

std::span<NodeInfo* const> Cache::List() const {
  if (list_dirty_) RebuildList();
  return list_;
}

NodeInfo* Cache::Get(std::string_view name) const {
  auto it = nodes_.find(std::string(name));
  if (it == nodes_.end() || it->second->node() == nullptr) return nullptr;
  return it->second;
}

Status Cache::AssumePod(const PodInfoPtr& pod, const NodeInfo* node) {
  // Every NodeInfo is the cache's own, made mutable (NewNodeInfo); List and Get hand them out
  // so, and only a scheduling cycle views them as const.
  NodeInfo* info = const_cast<NodeInfo*>(node);
  if (!pods_.try_emplace(pod->uid_key, PodState{pod, info, true, false}).second) {
    return Status::Error("pod " + pod->namespace_() + "/" + pod->name() + "(" + pod->uid() +
                         ") is in the cache, so can't be assumed");
  }
  info->AddPod(pod);
  return Status();
}

void Cache::FinishBinding(const api::UidKey& uid) {
  auto it = pods_.find(uid);
  if (it != pods_.end() && it->second.assumed) it->second.binding_finished = true;
}

bool Cache::ForgetPod(const api::UidKey& uid) {
  auto it = pods_.find(uid);
  if (it == pods_.end() || !it->second.assumed) return false;
  NodeInfo* info = it->second.node;
  info->RemovePod(it->second.pod.get());
  pods_.erase(it);
  DropIfGhost(info);
  return true;
}

bool Cache::IsAssumedPod(const api::UidKey& uid) const {
  auto it = pods_.find(uid);
  return it != pods_.end() && it->second.assumed;
}

void Cache::AddPod(const PodInfoPtr& pod) {
  const std::string& node_name = pod->pod().spec.node_name;
  auto it = pods_.find(pod->uid_key);
  if (it != pods_.end()) {
    // Confirms an assumed pod (or replaces a known one): its accounting moves to the new object,
    // in place when the node is the same (a node's name has one NodeInfo while it has pods).
    PodState& known = it->second;
    NodeInfo* before = known.node;
    if (before->name() == node_name) {
      if (!before->ReplacePod(known.pod.get(), pod)) before->AddPod(pod);
      known = PodState{pod, before, false, false};
      return;
    }
    before->RemovePod(known.pod.get());
    pods_.erase(it);
    DropIfGhost(before);
  }
  NodeInfo& info = NodeForPods(node_name);
  info.AddPod(pod);
  pods_[pod->uid_key] = PodState{pod, &info, false, false};
}

void Cache::UpdatePod(const PodInfoPtr&, const PodInfoPtr& new_pod) { AddPod(new_pod); }

void Cache::RemovePod(const std::string& uid) {
  auto it = pods_.find(api::UidKeyOf(uid));
  if (it == pods_.end()) return;
  NodeInfo* info = it->second.node;
  info->RemovePod(it->second.pod.get());
  pods_.erase(it);
  DropIfGhost(info);  // the last pod of a deleted node takes the ghost with it
}

std::string Cache::NodeOfPod(const std::string& uid) const {
  auto it = pods_.find(api::UidKeyOf(uid));
  if (it == pods_.end()) return "";
  return it->second.node->node() ? it->second.node->name() : "";
}

}  // namespace kt::scheduler
