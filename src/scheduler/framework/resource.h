// Resource amounts as the scheduler adds and compares them (upstream framework.Resource): cpu in
// millicores, memory and ephemeral storage in bytes, a pod count, and the "scalar" resources —
// extended resources such as nvidia.com/gpu, hugepages-*, kubernetes.io/* — by interned id, so
// that filtering and scoring never hash a resource name.
//
//   Resource r = PodRequests(pod);            // what the pod needs (NodeResourcesFit)
//   int64_t gpus = r.Scalar(ResourceNames::Intern("nvidia.com/gpu"));
//
// Thread safety: Resource is a value. ResourceNames is thread-safe; the names it returns live
// until exit.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/types.h"

namespace kt::scheduler {

using ResourceId = uint32_t;

// Interned names of scalar resources.
class ResourceNames {
 public:
  static ResourceId Intern(std::string_view name);
  static const std::string& Name(ResourceId id);
  // "Insufficient <name>", built once per resource.
  static const std::string& InsufficientReason(ResourceId id);
};

// Whether upstream counts `name` as a scalar resource (extended, hugepages-*, a prefixed
// native resource such as kubernetes.io/foo, attachable-volumes-*); cpu, memory,
// ephemeral-storage and pods are not scalar, and other unprefixed names are ignored.
bool IsScalarResourceName(std::string_view name);
// An extended resource: a scalar name outside the kubernetes.io domain (and not hugepages-*
// or attachable-volumes-*): the names NodeResourcesFit may be told to ignore.
bool IsExtendedResourceName(std::string_view name);

struct Resource {
  int64_t milli_cpu = 0;
  int64_t memory = 0;
  int64_t ephemeral_storage = 0;
  int64_t allowed_pods = 0;                             // node allocatable "pods"
  std::vector<std::pair<ResourceId, int64_t>> scalars;  // sorted by id; no zero entries needed

  int64_t Scalar(ResourceId id) const;
  void SetScalar(ResourceId id, int64_t value);
  void AddScalar(ResourceId id, int64_t value);

  // Adds `list` (a ResourceList of an API object) to these amounts.
  void AddList(const api::ResourceList& list);
  // this += o / this -= o, every field.
  void Add(const Resource& o);
  void Sub(const Resource& o);
  // this = max(this, o), field by field (upstream SetMaxResource).
  void SetMax(const Resource& o);

  bool IsZero() const {
    return milli_cpu == 0 && memory == 0 && ephemeral_storage == 0 && allowed_pods == 0 &&
           scalars.empty();
  }
  bool operator==(const Resource&) const = default;
};

// The amounts of a ResourceList (node capacity or allocatable).
Resource ResourceOf(const api::ResourceList& list);

// What a pod requests (upstream resource.PodRequests): the sum of its containers' requests, at
// least the largest init container's (each counted with the sidecars started before it;
// sidecars also add to the sum), pod-level cpu, memory and hugepages-* requests replacing the
// aggregate when set, plus the pod's overhead.
Resource PodRequests(const api::Pod& pod);

// The pod's cpu and memory requests with upstream's scoring defaults for containers that
// request none (100m cpu, 200Mi memory: NonMissingContainerRequests), aggregated as above.
struct NonZeroRequest {
  int64_t milli_cpu = 0;
  int64_t memory = 0;
};
NonZeroRequest PodNonZeroRequests(const api::Pod& pod);

inline constexpr int64_t kDefaultMilliCpuRequest = 100;                // 0.1 core
inline constexpr int64_t kDefaultMemoryRequest = 200LL * 1024 * 1024;  // 200 MiB

}  // namespace kt::scheduler
