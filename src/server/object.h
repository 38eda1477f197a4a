// Objects as the API server holds them.
//
// Storage format: the store keeps each object as JSON whose first three members are "kind",
// "apiVersion" and "metadata", and whose metadata opens with "resourceVersion":"<revision>",
// the store revision of the write that stored it. That revision is known only once the store's
// committer accepts the write, so the registry hands the store the object without it
// (EncodeForStorage) plus a stamp (StampResourceVersion, a store::ValueStamp) that splices it in
// right after `"metadata":{`. The store keeps, persists, returns and watches those stamped bytes,
// and the watch cache serves them as they are: each object's bytes exist once, shared by the
// store, its history, the cache, every GET, LIST and watch event.
// Values stored before the stamp existed carry no resourceVersion: MakeStoredObject splices it
// into a copy of those (as it did for every object then), so old data dirs keep working. (The
// other way round, a kubetaint from before the stamp would serve stamped values with a second,
// equal resourceVersion member spliced in front of the first.)
//
// Thread safety: a StoredObject is immutable once built and shared by shared_ptr.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
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

// The typed view of one object: one of the kinds below, or empty. Held by pointer, so that an
// object pays for its own kind's view and not for the largest one (a DaemonSet is a third larger
// than a Pod), and so that copies of a StoredObject (DELETED events) share it. Immutable.
class TypedObject {
 public:
  TypedObject() = default;
  template <class T>
  explicit TypedObject(T view) : view_(std::make_shared<const T>(std::move(view))) {}

  // The view if it is a T, else nullptr.
  template <class T>
  const T* Get() const {
    const auto* p = std::get_if<std::shared_ptr<const T>>(&view_);
    return p != nullptr ? p->get() : nullptr;
  }
  bool empty() const { return view_.index() == 0; }
  // The object's metadata; nullptr when empty.
  const api::ObjectMeta* meta() const;
  // Sets metadata.resourceVersion of a view that nothing else shares yet (a write's view before
  // it is published); false, and nothing changed, if the view is empty or shared.
  bool SetResourceVersion(store::Revision revision);
  // A copy of the view with `change(api::ObjectMeta&)` applied to its metadata (this view, which
  // others may share, stays as it is); empty if this is.
  template <class F>
  TypedObject WithMeta(F&& change) const {
    return std::visit(
        [&](const auto& v) -> TypedObject {
          if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::monostate>) {
            return TypedObject();
          } else {
            auto copy = *v;
            change(copy.meta);
            return TypedObject(std::move(copy));
          }
        },
        view_);
  }

 private:
  template <class... T>
  using Views = std::variant<std::monostate, std::shared_ptr<const T>...>;
  Views<api::Namespace, api::Node, api::Pod, api::Event, api::Lease, api::PriorityClass,
        api::DaemonSet>
      view_;
};

struct StoredObject {
  Resource resource;
  // Served bytes, metadata.resourceVersion included; normally the store's own buffer.
  store::Bytes json;
  store::Revision revision;  // the object's mod revision = resourceVersion
  store::Revision create_revision;
  std::string key;
  TypedObject typed;

  // name, namespace, uid, labels, ... (resourceVersion set), from the typed view.
  const api::ObjectMeta& meta() const;
  // The value of a field label of the object's kind, as upstream's field set has it ("" for a
  // field the kind does not have), computed from the typed view. Valid as long as the object.
  std::string_view Field(api::fields::Field f) const;
  template <class T>
  const T* As() const {
    return typed.Get<T>();
  }
};

using ObjectPtr = std::shared_ptr<const StoredObject>;

// The served form of stored bytes: `"resourceVersion":"<rev>"` as the first member of metadata,
// inserted after `"metadata":{` (or replacing one already there). Falls back to a parse and
// rewrite if the bytes are not in the storage format.
std::string WithResourceVersion(std::string_view stored, store::Revision revision);
// Whether `bytes` already carry `revision` as their resourceVersion, in the storage format.
bool HasResourceVersion(std::string_view bytes, store::Revision revision);
// Where the metadata object of bytes in the storage format lies: the offset of its `{` and one
// past its `}`; nullopt when the bytes are not in that format.
std::optional<std::pair<size_t, size_t>> MetadataObject(std::string_view bytes);
// `bytes` in the storage format with `metadata` (an object) in place of the metadata object at
// `span` (MetadataObject's), written as EncodeForStorage writes it: without resourceVersion.
std::string WithMetadata(std::string_view bytes, std::pair<size_t, size_t> span,
                         const rapidjson::Value& metadata);
// A pod's stamped bytes in the storage format with a condition added, without parsing them: the
// resourceVersion dropped (the write stamps its own), `condition` (a JSON object whose type is
// `type`) as the last element of status.conditions (the array made when there is none), and,
// when `node` is given (a JSON string, quotes included), `"nodeName":<node>` as the last member
// of spec. Nullopt when the bytes are not of the shape this handles (a condition of that type
// already there, spec.nodeName already there when a node is given, no spec or status object,
// ...): the caller then writes the change on a document.
std::optional<std::string> WithPodCondition(std::string_view stored, std::string_view type,
                                            std::string_view condition, std::string_view node = {});
// An object's stamped bytes in the storage format as a first graceful deletion marks them,
// without parsing them: the resourceVersion dropped, `"deletionTimestamp":"<timestamp>"` and
// `"deletionGracePeriodSeconds":<grace>` appended to metadata, and a positive integer
// `generation` raised by one (*generation_raised tells whether there was one). The bytes equal
// those of the metadata parsed, changed and written back with WithMetadata. Nullopt when the
// bytes are not of that shape (a deletionTimestamp or deletionGracePeriodSeconds already there,
// a generation that is not a plain integer, ...): the caller then changes a parsed metadata.
std::optional<std::string> WithDeletionMarks(std::string_view stored, std::string_view timestamp,
                                             int64_t grace, bool* generation_raised);
// What a binding to `node` writes: WithPodCondition with the PodScheduled `condition`.
inline std::optional<std::string> WithBinding(std::string_view stored, std::string_view node,
                                              std::string_view condition) {
  return WithPodCondition(stored, "PodScheduled", condition, node);
}
// The store::ValueStamp of the registry's writes: the WithResourceVersion form of `value`.
store::Bytes StampResourceVersion(store::Revision revision, const store::Bytes& value);
// Room a buffer for StampInPlace keeps past its bytes: `"resourceVersion":"<rev>",` fits.
inline constexpr size_t kStampRoom = 48;
// Makes `stored`, bytes about to be kept as a version of an object, hold kStampRoom past its
// bytes and not much more: a buffer grown by doubling while it was written would otherwise keep
// up to twice its size for as long as the version lives. Copies the bytes only when it must.
void FitForStorage(std::string& stored);
// WithResourceVersion done to `stored` itself, for bytes in the storage format without a
// resourceVersion: the member is inserted after `"metadata":{`, within the string's capacity
// when it has kStampRoom to spare (no new buffer, no copy of the bytes). False, and `stored`
// unchanged, for bytes of another form.
bool StampInPlace(std::string& stored, store::Revision revision);

// Encodes `object` in the storage format without its resourceVersion (which
// StampResourceVersion adds): kind, apiVersion, metadata first, then every other member as it is.
std::string EncodeForStorage(const rapidjson::Value& object);

// Builds the cached form of an object from its stored bytes and revisions, and decodes its
// typed view. Bytes stamped with `revision` are shared as they are; older, unstamped bytes are
// copied with the resourceVersion spliced in.
Result<ObjectPtr> MakeStoredObject(const ResourceInfo& info, std::string key,
                                   const store::Bytes& stored, store::Revision revision,
                                   store::Revision create_revision);

// MakeStoredObject for stamped bytes whose typed view the writer decoded already (with its
// resourceVersion set to `revision`): nothing is parsed. Falls back to MakeStoredObject when the
// bytes are not stamped with `revision` or `typed` is empty.
Result<ObjectPtr> MakeStoredObjectWithView(const ResourceInfo& info, std::string key,
                                           const store::Bytes& stored, store::Revision revision,
                                           store::Revision create_revision, TypedObject typed);

// Decodes the typed view of a resource's object.
Result<TypedObject> DecodeTyped(Resource resource, const rapidjson::Value& object);
// The object's metadata from its typed view.
inline const api::ObjectMeta* MetaOf(const TypedObject& typed) { return typed.meta(); }

}  // namespace kt::server
