// Objects as the API server holds them.
//
// Storage format: the store keeps each object as JSON whose first three members are "kind",
// "apiVersion" and "metadata", with no metadata.resourceVersion — like etcd behind
// kube-apiserver, the resourceVersion is the store revision, known only once the write commits.
// When an object enters the watch cache (or a write is answered) the revision is spliced into
// the bytes right after `"metadata":{`: one copy per write, and those served bytes are then
// shared by every GET, LIST and watch event.
//
// Thread safety: a StoredObject is immutable once built and shared by shared_ptr.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <rapidjson/document.h>

#include "api/selector.h"
#include "api/types.h"
#include "core/status.h"
#include "server/resources.h"
#include "store/store.h"

namespace kt::server {

using TypedObject = std::variant<std::monostate, api::Namespace, api::Node, api::Pod, api::Event,
                                 api::Lease, api::PriorityClass, api::DaemonSet>;

struct StoredObject {
  Resource resource;
  store::Bytes json;         // served bytes, metadata.resourceVersion included
  store::Revision revision;  // the object's mod revision = resourceVersion
  store::Revision create_revision;
  std::string key;
  // Values of the kind's field labels (besides metadata.name / metadata.namespace).
  std::vector<std::pair<api::fields::Field, std::string>> fields;
  TypedObject typed;

  // name, namespace, uid, labels, ... (resourceVersion set), from the typed view.
  const api::ObjectMeta& meta() const;
  std::string_view Field(api::fields::Field f) const;
  template <class T>
  const T* As() const {
    return std::get_if<T>(&typed);
  }
};

using ObjectPtr = std::shared_ptr<const StoredObject>;

// The served form of stored bytes: `"resourceVersion":"<rev>"` inserted after `"metadata":{`.
// Falls back to a parse and rewrite if the bytes are not in the storage format.
std::string WithResourceVersion(std::string_view stored, store::Revision revision);

// Encodes `object` in the storage format: kind, apiVersion, metadata first (resourceVersion
// dropped), then every other member as it is.
std::string EncodeForStorage(const rapidjson::Value& object);

// Builds the cached form of an object from its stored bytes and revisions: splices the
// resourceVersion, decodes the typed view and the field-selector values.
Result<ObjectPtr> MakeStoredObject(const ResourceInfo& info, std::string key,
                                   std::string_view stored, store::Revision revision,
                                   store::Revision create_revision);

// Decodes the typed view of a resource's object.
Result<TypedObject> DecodeTyped(Resource resource, const rapidjson::Value& object);
// The object's metadata from its typed view.
const api::ObjectMeta* MetaOf(const TypedObject& typed);

}  // namespace kt::server
