#include "scheduler/framework/types.h"

#include <algorithm>
#include <atomic>

namespace kt::scheduler {

namespace {

std::atomic<uint64_t> next_generation{1};

HostPort MakeHostPort(const api::ContainerPort& p) {
  return HostPort{p.host_ip.empty() ? "0.0.0.0" : p.host_ip,
                  p.protocol.empty() ? "TCP" : p.protocol, p.host_port};
}

bool SameConditionStatuses(const std::vector<api::Condition>& a,
                           const std::vector<api::Condition>& b) {
  // Upstream compares the map of condition type → status; times and reasons are ignored.
  auto status_of = [](const std::vector<api::Condition>& cs, const std::string& type) {
    for (const auto& c : cs) {
      if (c.type == type) return &c.status;
    }
    return static_cast<const std::string*>(nullptr);
  };
  for (const auto& c : a) {
    const std::string* s = status_of(b, c.type);
    if (s == nullptr || *s != c.status) return false;
  }
  for (const auto& c : b) {
    if (status_of(a, c.type) == nullptr) return false;
  }
  return true;
}

}  // namespace

void HostPortInfo::Remove(const HostPort& p) {
  auto it = std::find(ports_.begin(), ports_.end(), p);
  if (it != ports_.end()) ports_.erase(it);
}

bool HostPortInfo::CheckConflict(const HostPort& p) const {
  if (p.port <= 0) return false;
  const bool any_ip = p.ip == "0.0.0.0";
  for (const HostPort& u : ports_) {
    if (u.port != p.port || u.protocol != p.protocol) continue;
    if (any_ip || u.ip == p.ip || u.ip == "0.0.0.0") return true;
  }
  return false;
}

std::vector<HostPort> PodHostPorts(const api::Pod& pod) {
  std::vector<HostPort> out;
  for (const api::Container& c : pod.spec.init_containers) {
    if (c.restart_policy != "Always") continue;
    for (const api::ContainerPort& p : c.ports) {
      if (p.host_port > 0) out.push_back(MakeHostPort(p));
    }
  }
  for (const api::Container& c : pod.spec.containers) {
    for (const api::ContainerPort& p : c.ports) {
      if (p.host_port > 0) out.push_back(MakeHostPort(p));
    }
  }
  return out;
}

int32_t PodPriority(const api::Pod& pod) { return pod.spec.priority.value_or(0); }

PodInfoPtr NewPodInfo(ObjectPtr object) {
  auto info = std::make_shared<PodInfo>();
  const api::Pod& pod = *object->As<api::Pod>();
  info->requests = PodRequests(pod);
  info->non_zero = PodNonZeroRequests(pod);
  info->host_ports = PodHostPorts(pod);
  info->priority = PodPriority(pod);
  info->uid_key = api::UidKeyOf(pod.meta.uid);
  info->object = std::move(object);
  return info;
}

uint64_t NodeInfo::NewScoreMemoOwner() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

void NodeInfo::Touch() { generation_ = next_generation.fetch_add(1, std::memory_order_relaxed); }

void NodeInfo::set_name(std::string name) {
  name_ = std::move(name);
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : name_) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  name_hash_ = h;
}

void NodeInfo::SetNode(ObjectPtr node) {
  node_object_ = std::move(node);
  node_ = node_object_ ? node_object_->As<api::Node>() : nullptr;
  if (node_ != nullptr) {
    set_name(node_->meta.name);
    allocatable_ = ResourceOf(node_->status.allocatable);
    unschedulable_ = node_->spec.unschedulable;
    has_taints_ = !node_->spec.taints.empty();
  } else {
    allocatable_ = Resource();
    unschedulable_ = has_taints_ = false;
  }
  Touch();
}

void NodeInfo::Account(const PodInfo& pod) {
  requested_.Add(pod.requests);
  non_zero_requested_.milli_cpu += pod.non_zero.milli_cpu;
  non_zero_requested_.memory += pod.non_zero.memory;
  for (const HostPort& p : pod.host_ports) used_ports_.Add(p);
}

void NodeInfo::Unaccount(const PodInfo& pod) {
  requested_.Sub(pod.requests);
  non_zero_requested_.milli_cpu -= pod.non_zero.milli_cpu;
  non_zero_requested_.memory -= pod.non_zero.memory;
  for (const HostPort& p : pod.host_ports) used_ports_.Remove(p);
}

void NodeInfo::AddPod(PodInfoPtr pod) {
  Account(*pod);
  pods_.push_back(std::move(pod));
  Touch();
}

bool NodeInfo::RemovePod(std::string_view uid) {
  for (const PodInfoPtr& p : pods_) {
    if (p->uid() == uid) return RemovePod(p.get());
  }
  return false;
}

bool NodeInfo::RemovePod(const PodInfo* pod) {
  for (size_t i = 0; i < pods_.size(); ++i) {
    if (pods_[i].get() != pod) continue;
    Unaccount(*pod);
    pods_[i] = std::move(pods_.back());
    pods_.pop_back();
    Touch();
    return true;
  }
  return false;
}

bool NodeInfo::ReplacePod(const PodInfo* before, PodInfoPtr now) {
  for (PodInfoPtr& p : pods_) {
    if (p.get() != before) continue;
    Unaccount(*p);
    Account(*now);
    p = std::move(now);
    Touch();
    return true;
  }
  return false;
}

std::string ClusterEvent::Label() const {
  std::string r;
  switch (resource) {
    case EventResource::kPod:
      r = "Pod";
      break;
    case EventResource::kAssignedPod:
      r = "AssignedPod";
      break;
    case EventResource::kUnschedulablePod:
      r = "UnschedulablePod";
      break;
    case EventResource::kNode:
      r = "Node";
      break;
    case EventResource::kWildcard:
      return "*";
  }
  if (action == kAll) return r + "All";
  if (action == kUpdate) return r + "Update";
  static constexpr std::pair<uint32_t, std::string_view> kNames[] = {
      {kAdd, "Add"},
      {kDelete, "Delete"},
      {kUpdateNodeAllocatable, "UpdateNodeAllocatable"},
      {kUpdateNodeLabel, "UpdateNodeLabel"},
      {kUpdateNodeTaint, "UpdateNodeTaint"},
      {kUpdateNodeCondition, "UpdateNodeCondition"},
      {kUpdateNodeAnnotation, "UpdateNodeAnnotation"},
      {kUpdatePodLabel, "UpdatePodLabel"},
      {kUpdatePodScaleDown, "UpdatePodScaleDown"},
      {kUpdatePodToleration, "UpdatePodToleration"},
      {kUpdatePodSchedulingGatesEliminated, "UpdatePodSchedulingGatesEliminated"},
  };
  std::string a;
  for (const auto& [bit, name] : kNames) {
    if (action & bit) {
      if (!a.empty()) a += "|";
      a += name;
    }
  }
  return r + a;
}

bool MatchClusterEvents(const ClusterEvent& registered, const ClusterEvent& incoming) {
  if (registered.IsWildcard()) return true;
  const bool resource_match = registered.resource == incoming.resource ||
                              (registered.resource == EventResource::kPod &&
                               (incoming.resource == EventResource::kAssignedPod ||
                                incoming.resource == EventResource::kUnschedulablePod));
  return resource_match && (registered.action & incoming.action) != 0 &&
         incoming.action <= registered.action;
}

std::vector<ClusterEvent> NodeSchedulingPropertiesChange(const api::Node& new_node,
                                                         const api::Node& old_node) {
  std::vector<ClusterEvent> events;
  auto add = [&](uint32_t action) { events.push_back({EventResource::kNode, action}); };
  if (old_node.spec.unschedulable != new_node.spec.unschedulable && !new_node.spec.unschedulable) {
    add(kUpdateNodeTaint);  // the node became schedulable
  }
  if (!(old_node.status.allocatable == new_node.status.allocatable)) add(kUpdateNodeAllocatable);
  if (!(old_node.meta.labels == new_node.meta.labels)) add(kUpdateNodeLabel);
  if (old_node.spec.taints != new_node.spec.taints) add(kUpdateNodeTaint);
  if (!SameConditionStatuses(old_node.status.conditions, new_node.status.conditions)) {
    add(kUpdateNodeCondition);
  }
  if (!(old_node.meta.annotations == new_node.meta.annotations)) add(kUpdateNodeAnnotation);
  return events;
}

std::vector<ClusterEvent> PodSchedulingPropertiesChange(const api::Pod& new_pod,
                                                        const api::Pod& old_pod) {
  const EventResource r = new_pod.spec.node_name.empty() ? EventResource::kUnschedulablePod
                                                         : EventResource::kAssignedPod;
  std::vector<ClusterEvent> events;
  auto add = [&](uint32_t action) { events.push_back({r, action}); };
  if (!(old_pod.meta.labels == new_pod.meta.labels)) add(kUpdatePodLabel);
  {
    // A request decreased or removed: compare the aggregated requests resource by resource.
    const Resource o = PodRequests(old_pod);
    const Resource n = PodRequests(new_pod);
    bool down = n.milli_cpu < o.milli_cpu || n.memory < o.memory ||
                n.ephemeral_storage < o.ephemeral_storage;
    for (const auto& [id, v] : o.scalars) down = down || n.Scalar(id) < v;
    if (down) add(kUpdatePodScaleDown);
  }
  if (!old_pod.spec.scheduling_gates.empty() && new_pod.spec.scheduling_gates.empty()) {
    add(kUpdatePodSchedulingGatesEliminated);
  }
  if (old_pod.spec.tolerations.size() != new_pod.spec.tolerations.size()) {
    add(kUpdatePodToleration);
  }
  if (events.empty()) add(kUpdate);
  return events;
}

}  // namespace kt::scheduler
