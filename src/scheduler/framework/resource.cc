#include "scheduler/framework/resource.h"

#include <algorithm>
#include <deque>
#include <mutex>
#include <unordered_map>

namespace kt::scheduler {

namespace {

struct NameTable {
  std::mutex mu;
  std::unordered_map<std::string, ResourceId> ids;  // guarded by mu
  // Stable addresses: a deque never moves its elements.
  std::deque<std::string> names;         // guarded by mu
  std::deque<std::string> insufficient;  // guarded by mu
};

NameTable& Table() {
  static NameTable* table = new NameTable;  // used until exit
  return *table;
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// Whether the name is in the kubernetes.io domain ("kubernetes.io/foo", "x.kubernetes.io/foo").
bool IsPrefixedNativeResource(std::string_view name) {
  return name.find("kubernetes.io/") != std::string_view::npos;
}

bool IsNativeResource(std::string_view name) {
  return name.find('/') == std::string_view::npos || IsPrefixedNativeResource(name);
}

// A ResourceList keyed by our four fields plus scalars, without the cost of a Resource per
// container in the common case of cpu and memory only.
void AddEntry(Resource& r, std::string_view name, const api::Quantity& q) {
  if (name == "cpu") {
    r.milli_cpu += q.MilliValue();
  } else if (name == "memory") {
    r.memory += q.Value();
  } else if (name == "ephemeral-storage") {
    r.ephemeral_storage += q.Value();
  } else if (name == "pods") {
    r.allowed_pods += q.Value();
  } else if (IsScalarResourceName(name)) {
    r.AddScalar(ResourceNames::Intern(name), q.Value());
  }
}

template <class PerContainer>
Resource Aggregate(const api::Pod& pod, PerContainer requests_of) {
  Resource reqs;
  for (const api::Container& c : pod.spec.containers) reqs.Add(requests_of(c));
  Resource restartable;  // sidecars started so far
  Resource init_max;
  for (const api::Container& c : pod.spec.init_containers) {
    Resource own = requests_of(c);
    Resource candidate;
    if (c.restart_policy == "Always") {
      reqs.Add(own);  // a sidecar keeps running beside the containers
      restartable.Add(own);
      candidate = restartable;
    } else {
      candidate = own;
      candidate.Add(restartable);
    }
    init_max.SetMax(candidate);
  }
  reqs.SetMax(init_max);
  return reqs;
}

}  // namespace

ResourceId ResourceNames::Intern(std::string_view name) {
  NameTable& t = Table();
  std::lock_guard<std::mutex> lock(t.mu);
  auto it = t.ids.find(std::string(name));
  if (it != t.ids.end()) return it->second;
  const auto id = static_cast<ResourceId>(t.names.size());
  t.names.emplace_back(name);
  t.insufficient.push_back("Insufficient " + std::string(name));
  t.ids.emplace(std::string(name), id);
  return id;
}

const std::string& ResourceNames::Name(ResourceId id) {
  NameTable& t = Table();
  std::lock_guard<std::mutex> lock(t.mu);
  return t.names[id];
}

const std::string& ResourceNames::InsufficientReason(ResourceId id) {
  NameTable& t = Table();
  std::lock_guard<std::mutex> lock(t.mu);
  return t.insufficient[id];
}

bool IsExtendedResourceName(std::string_view name) {
  if (IsNativeResource(name) || StartsWith(name, "requests.")) return false;
  return true;
}

bool IsScalarResourceName(std::string_view name) {
  return IsExtendedResourceName(name) || StartsWith(name, "hugepages-") ||
         IsPrefixedNativeResource(name) || StartsWith(name, "attachable-volumes-");
}

int64_t Resource::Scalar(ResourceId id) const {
  for (const auto& [sid, v] : scalars) {
    if (sid == id) return v;
  }
  return 0;
}

void Resource::SetScalar(ResourceId id, int64_t value) {
  auto it = std::lower_bound(scalars.begin(), scalars.end(), id,
                             [](const auto& e, ResourceId k) { return e.first < k; });
  if (it != scalars.end() && it->first == id) {
    it->second = value;
  } else {
    scalars.emplace(it, id, value);
  }
}

void Resource::AddScalar(ResourceId id, int64_t value) {
  auto it = std::lower_bound(scalars.begin(), scalars.end(), id,
                             [](const auto& e, ResourceId k) { return e.first < k; });
  if (it != scalars.end() && it->first == id) {
    it->second += value;
  } else {
    scalars.emplace(it, id, value);
  }
}

void Resource::AddList(const api::ResourceList& list) {
  for (const auto& [name, q] : list) AddEntry(*this, name, q);
}

void Resource::Add(const Resource& o) {
  milli_cpu += o.milli_cpu;
  memory += o.memory;
  ephemeral_storage += o.ephemeral_storage;
  allowed_pods += o.allowed_pods;
  for (const auto& [id, v] : o.scalars) AddScalar(id, v);
}

void Resource::Sub(const Resource& o) {
  milli_cpu -= o.milli_cpu;
  memory -= o.memory;
  ephemeral_storage -= o.ephemeral_storage;
  allowed_pods -= o.allowed_pods;
  for (const auto& [id, v] : o.scalars) AddScalar(id, -v);
}

void Resource::SetMax(const Resource& o) {
  milli_cpu = std::max(milli_cpu, o.milli_cpu);
  memory = std::max(memory, o.memory);
  ephemeral_storage = std::max(ephemeral_storage, o.ephemeral_storage);
  allowed_pods = std::max(allowed_pods, o.allowed_pods);
  for (const auto& [id, v] : o.scalars) {
    if (v > Scalar(id)) SetScalar(id, v);
  }
}

Resource ResourceOf(const api::ResourceList& list) {
  Resource r;
  r.AddList(list);
  return r;
}

Resource PodRequests(const api::Pod& pod) {
  Resource reqs = Aggregate(pod, [](const api::Container& c) { return ResourceOf(c.requests); });
  // Pod-level requests (PodLevelResources) replace the aggregate for cpu and memory.
  if (const api::Quantity* cpu = pod.spec.resource_requests.Get("cpu")) {
    reqs.milli_cpu = cpu->MilliValue();
  }
  if (const api::Quantity* memory = pod.spec.resource_requests.Get("memory")) {
    reqs.memory = memory->Value();
  }
  for (const auto& [name, q] : pod.spec.resource_requests) {
    if (name.rfind("hugepages-", 0) == 0) reqs.SetScalar(ResourceNames::Intern(name), q.Value());
  }
  reqs.AddList(pod.spec.overhead);
  return reqs;
}

NonZeroRequest PodNonZeroRequests(const api::Pod& pod) {
  Resource reqs = Aggregate(pod, [](const api::Container& c) {
    Resource r;
    const api::Quantity* cpu = c.requests.Get("cpu");
    const api::Quantity* memory = c.requests.Get("memory");
    r.milli_cpu = cpu ? cpu->MilliValue() : kDefaultMilliCpuRequest;
    r.memory = memory ? memory->Value() : kDefaultMemoryRequest;
    return r;
  });
  // Pod-level requests take precedence; the default applies only when neither the pod level nor
  // the containers name the resource.
  if (const api::Quantity* cpu = pod.spec.resource_requests.Get("cpu")) {
    reqs.milli_cpu = cpu->MilliValue();
  }
  if (const api::Quantity* memory = pod.spec.resource_requests.Get("memory")) {
    reqs.memory = memory->Value();
  }
  if (const api::Quantity* cpu = pod.spec.overhead.Get("cpu")) reqs.milli_cpu += cpu->MilliValue();
  if (const api::Quantity* memory = pod.spec.overhead.Get("memory")) reqs.memory += memory->Value();
  return NonZeroRequest{reqs.milli_cpu, reqs.memory};
}

}  // namespace kt::scheduler
