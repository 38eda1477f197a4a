// The resources the API server serves, and how each is stored: one static table, so routing,
// discovery, storage keys, decoding and field selectors agree on every kind.
//
// Thread safety: immutable data.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "api/selector.h"

namespace kt::server {

enum class Resource : unsigned char {
  kNamespaces,
  kNodes,
  kPods,
  kEvents,
  kLeases,
  kPriorityClasses,
  kDaemonSets,
};
inline constexpr int kResourceCount = 7;

struct ResourceInfo {
  Resource resource;
  std::string_view group;    // "" for core
  std::string_view version;  // "v1"
  std::string_view plural;   // "pods"
  std::string_view kind;     // "Pod"
  std::string_view list_kind;
  std::string_view api_version;  // "v1", "apps/v1"
  bool namespaced;
  // Store keys are `prefix` + "<namespace>/<name>" (namespaced) or `prefix` + "<name>".
  std::string_view key_prefix;
  // Whether an update (PUT) without metadata.resourceVersion is allowed (upstream
  // AllowUnconditionalUpdate).
  bool unconditional_update;
  bool has_status;  // a /status subresource; the main resource ignores status changes
  // Field selectors this kind supports, besides metadata.name and metadata.namespace.
  std::span<const api::fields::Field> fields;

  // "pods" for core, "leases.coordination.k8s.io" otherwise: how errors name the resource.
  std::string QualifiedResource() const;
};

const ResourceInfo& Info(Resource r);
std::span<const ResourceInfo> AllResources();

// The resource served at /api/v1/<plural> or /apis/<group>/<version>/<plural>, or nullptr.
const ResourceInfo* FindResource(std::string_view group, std::string_view version,
                                 std::string_view plural);
const ResourceInfo* FindResourceByKind(std::string_view api_version, std::string_view kind);

// The store key of an object, and the prefix of every key of a resource in a namespace ("" =
// all namespaces).
std::string ObjectKey(const ResourceInfo& info, std::string_view namespace_, std::string_view name);
std::string NamespacePrefix(const ResourceInfo& info, std::string_view namespace_);

// ObjectKey built in place, for a lookup: no allocation unless the key is longer than its buffer
// (names and namespaces are at most 253 and 63 bytes, so few are).
//   index.Find(map, ObjectKeyBuffer(info, ns, name).view())
class ObjectKeyBuffer {
 public:
  ObjectKeyBuffer(const ResourceInfo& info, std::string_view namespace_, std::string_view name);
  ObjectKeyBuffer(const ObjectKeyBuffer&) = delete;
  ObjectKeyBuffer& operator=(const ObjectKeyBuffer&) = delete;
  std::string_view view() const { return view_; }

 private:
  char inline_[256];
  std::string spill_;
  std::string_view view_;
};

}  // namespace kt::server
