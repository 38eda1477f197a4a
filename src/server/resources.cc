#include "server/resources.h"

#include <array>
#include <cstring>

namespace kt::server {

namespace {

using api::fields::Field;

constexpr std::array<Field, 0> kNoFields = {};
constexpr std::array kPodFields = {Field::kSpecNodeName,      Field::kSpecRestartPolicy,
                                   Field::kSpecSchedulerName, Field::kSpecServiceAccountName,
                                   Field::kSpecHostNetwork,   Field::kStatusPhase,
                                   Field::kStatusPodIP,       Field::kStatusNominatedNodeName};
constexpr std::array kNodeFields = {Field::kSpecUnschedulable};
constexpr std::array kNamespaceFields = {Field::kStatusPhase};
constexpr std::array kEventFields = {Field::kInvolvedObjectKind,
                                     Field::kInvolvedObjectNamespace,
                                     Field::kInvolvedObjectName,
                                     Field::kInvolvedObjectUid,
                                     Field::kInvolvedObjectApiVersion,
                                     Field::kInvolvedObjectResourceVersion,
                                     Field::kInvolvedObjectFieldPath,
                                     Field::kReason,
                                     Field::kReportingComponent,
                                     Field::kSource,
                                     Field::kType};

const std::array<ResourceInfo, kResourceCount>& Table() {
  static const std::array<ResourceInfo, kResourceCount> table = {{
      {Resource::kNamespaces, "", "v1", "namespaces", "Namespace", "NamespaceList", "v1", false,
       "/registry/namespaces/", true, true, kNamespaceFields},
      {Resource::kNodes, "", "v1", "nodes", "Node", "NodeList", "v1", false, "/registry/minions/",
       true, true, kNodeFields},
      {Resource::kPods, "", "v1", "pods", "Pod", "PodList", "v1", true, "/registry/pods/", false,
       true, kPodFields},
      {Resource::kEvents, "", "v1", "events", "Event", "EventList", "v1", true, "/registry/events/",
       true, false, kEventFields},
      {Resource::kLeases, "coordination.k8s.io", "v1", "leases", "Lease", "LeaseList",
       "coordination.k8s.io/v1", true, "/registry/leases/", true, false, kNoFields},
      {Resource::kPriorityClasses, "scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass",
       "PriorityClassList", "scheduling.k8s.io/v1", false, "/registry/priorityclasses/", true,
       false, kNoFields},
      {Resource::kDaemonSets, "apps", "v1", "daemonsets", "DaemonSet", "DaemonSetList", "apps/v1",
       true, "/registry/daemonsets/", false, true, kNoFields},
  }};
  return table;
}

}  // namespace

std::string ResourceInfo::QualifiedResource() const {
  std::string out(plural);
  if (!group.empty()) out.append(".").append(group);
  return out;
}

const ResourceInfo& Info(Resource r) { return Table()[static_cast<size_t>(r)]; }

std::span<const ResourceInfo> AllResources() { return Table(); }

const ResourceInfo* FindResource(std::string_view group, std::string_view version,
                                 std::string_view plural) {
  for (const ResourceInfo& info : Table()) {
    if (info.group == group && info.version == version && info.plural == plural) return &info;
  }
  return nullptr;
}

const ResourceInfo* FindResourceByKind(std::string_view api_version, std::string_view kind) {
  for (const ResourceInfo& info : Table()) {
    if (info.api_version == api_version && info.kind == kind) return &info;
  }
  return nullptr;
}

namespace {

size_t ObjectKeySize(const ResourceInfo& info, std::string_view namespace_, std::string_view name) {
  return info.key_prefix.size() + (info.namespaced ? namespace_.size() + 1 : 0) + name.size();
}

}  // namespace

std::string ObjectKey(const ResourceInfo& info, std::string_view namespace_,
                      std::string_view name) {
  std::string key;
  key.reserve(ObjectKeySize(info, namespace_, name));
  key.append(info.key_prefix);
  if (info.namespaced) key.append(namespace_).append("/");
  key.append(name);
  return key;
}

ObjectKeyBuffer::ObjectKeyBuffer(const ResourceInfo& info, std::string_view namespace_,
                                 std::string_view name) {
  const size_t size = ObjectKeySize(info, namespace_, name);
  if (size > sizeof inline_) {
    spill_ = ObjectKey(info, namespace_, name);
    view_ = spill_;
    return;
  }
  char* p = inline_;
  auto put = [&p](std::string_view s) {
    if (!s.empty()) std::memcpy(p, s.data(), s.size());
    p += s.size();
  };
  put(info.key_prefix);
  if (info.namespaced) {
    put(namespace_);
    put("/");
  }
  put(name);
  view_ = std::string_view(inline_, size);
}

std::string NamespacePrefix(const ResourceInfo& info, std::string_view namespace_) {
  std::string key(info.key_prefix);
  if (info.namespaced && !namespace_.empty()) key.append(namespace_).append("/");
  return key;
}

}  // namespace kt::server
