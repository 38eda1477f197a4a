// The JSON codec: bytes ⇄ RapidJSON documents, documents → typed views (api/types.h), fresh
// encoders for the objects the control plane creates, and setters that change one field of a
// stored object in place.
//
// The document is the object (DESIGN.md: "objects are JSON bytes plus a typed view"):
//   - ParseJson turns request bodies and stored bytes into a document.
//   - Decode* reads the fields kubetaint interprets into a view. Unknown fields are ignored and
//     stay in the document. A field of the wrong type is a kBadRequest naming its full path:
//       spec.tolerations[0].tolerationSeconds: expected integer, got string
//     A null field is unset, as with Go's decoder. No input crashes the decoder.
//   - Set* change a document in place (assigning existing members where they are, appending new
//     ones), leaving every other member byte-for-byte as it was; decode the view again after.
//   - Encode* write a view as a new upstream-shaped object (field order and omitempty rules of
//     k8s.io/api) for objects that kubetaint creates whole: Events, Leases, Namespaces, simulated
//     Nodes, test Pods. A view holds only interpreted fields, so never encode a view to replace
//     a stored object: that would drop everything else.
//
//   Result<rapidjson::Document> doc = ParseJson(body);
//   if (!doc) return doc.error();
//   Result<Pod> pod = DecodePod(*doc);
//   KT_RETURN_IF_ERROR(SetNodeName(*doc, "node-1"));
//   std::string bytes = EncodeJson(*doc);
//
// Limits: JSON nested deeper than kMaxJsonDepth is rejected (the writers and copies recurse).
// Setters allocate from the document's pool allocator, which frees only when the document is
// destroyed: fine for read-modify-write, not for a document edited forever.
//
// Thread safety: functions are reentrant; a document must not be read while it is set.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include <rapidjson/document.h>

#include "api/types.h"
#include "core/status.h"
#include "core/taint.h"

namespace kt::api {

// JSON nested deeper than this (arrays and objects) is rejected. Upstream Go allows 10000;
// Kubernetes objects nest a few dozen levels, and a lower bound keeps every recursive walk
// (writer, deep copy, comparison) safe on small thread stacks.
inline constexpr int kMaxJsonDepth = 1000;

// The JSON type of a value as Go names it in decode errors: "null", "boolean", "number",
// "string", "array", "object".
std::string_view JsonTypeName(const rapidjson::Value& value);

// --- Parsing ---------------------------------------------------------------------------------

// Parses one JSON value (the whole input, surrounding whitespace allowed). UTF-8 is validated.
// Errors are kBadRequest: "invalid JSON at offset 17: Missing a comma or '}' after an object
// member".
Result<rapidjson::Document> ParseJson(std::string_view bytes);

// ParseJson for bytes this process produced or already validated (stored objects): the same
// result, without re-validating UTF-8. (A string, for its terminating NUL.)
Result<rapidjson::Document> ParseTrustedJson(const std::string& bytes);
// ParseTrustedJson that parses `buffer` in place, the fast path of decoding stored objects: the
// document's strings are not copied but point into `buffer`, which the parse overwrites and
// which must outlive the document. Nesting is still limited (recursion is bounded by it).
Result<rapidjson::Document> ParseTrustedJsonInPlace(std::string& buffer);

// Parses the JSON value that starts at `bytes` and stops after it, setting *consumed to the
// number of bytes read (for streams of concatenated values). Offsets in errors are reported
// relative to `bytes` plus `base_offset`.
Result<rapidjson::Document> ParseJsonPrefix(std::string_view bytes, size_t* consumed,
                                            size_t base_offset = 0);

// --- Decoding into views ---------------------------------------------------------------------

// `object` is a whole object (the document root); its "metadata" is decoded.
Result<ObjectMeta> DecodeObjectMeta(const rapidjson::Value& object);
Result<Node> DecodeNode(const rapidjson::Value& object);
Result<Pod> DecodePod(const rapidjson::Value& object);
// The metadata and status of `object` (a whole pod) decoded, with the spec of `base`: what
// DecodePod gives for an object whose spec is the one `base` was decoded from.
Result<Pod> DecodePodKeepingSpec(const Pod& base, const rapidjson::Value& object);
Result<Namespace> DecodeNamespace(const rapidjson::Value& object);
Result<Event> DecodeEvent(const rapidjson::Value& object);  // core/v1 Event
Result<Lease> DecodeLease(const rapidjson::Value& object);
Result<PriorityClass> DecodePriorityClass(const rapidjson::Value& object);
Result<DaemonSet> DecodeDaemonSet(const rapidjson::Value& object);

// A NodeAffinity object on its own (a scheduler profile's addedAffinity); error paths are
// relative to it ("requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]...").
Result<NodeAffinity> DecodeNodeAffinity(const rapidjson::Value& value);

// A quantity as it appears in JSON: a string (surrounding whitespace trimmed, as upstream) or a
// number (upstream accepts both). Errors carry no path; callers prefix it.
Result<Quantity> DecodeQuantity(const rapidjson::Value& value);

// --- Encoding --------------------------------------------------------------------------------

// Compact JSON of any value.
std::string EncodeJson(const rapidjson::Value& value);
void AppendJson(const rapidjson::Value& value, std::string* out);

// Fresh objects from views, with kind and apiVersion set. Maps are written sorted, quantities in
// canonical form, and unset times the way Go writes them (null for struct times, omitted for
// pointers), so the bytes match what the upstream API server would store for the same object.
std::string EncodeNode(const Node& node);
std::string EncodePod(const Pod& pod);
std::string EncodeNamespace(const Namespace& ns);
std::string EncodeEvent(const Event& event);
std::string EncodeLease(const Lease& lease);
std::string EncodePriorityClass(const PriorityClass& pc);
// One element of a pod's status.conditions, as EncodePod writes it (both times always present,
// as the registry's NormalizeForStorage leaves them): what a binding or a status write splices
// into a pod's stored bytes (RegistryTest.ABindingWritesTheBytesOfTheDocumentPath).
std::string EncodePodCondition(const Condition& condition);
rapidjson::Document NodeToDocument(const Node& node);
rapidjson::Document PodToDocument(const Pod& pod);
rapidjson::Document NamespaceToDocument(const Namespace& ns);
rapidjson::Document EventToDocument(const Event& event);
rapidjson::Document LeaseToDocument(const Lease& lease);
rapidjson::Document PriorityClassToDocument(const PriorityClass& pc);

// Elements, as upstream writes them: a taint always has "key" and "effect"; value and timeAdded
// are omitted when empty. A toleration omits every empty field.
rapidjson::Value TaintToValue(const Taint& taint, rapidjson::Document::AllocatorType& alloc);
rapidjson::Value TolerationToValue(const Toleration& toleration,
                                   rapidjson::Document::AllocatorType& alloc);

// --- Setters on stored objects ---------------------------------------------------------------
//
// Each returns kBadRequest when the document (or an object on the way to the field) is not an
// object; a null on the way is replaced by an object. Empty values remove the member, as
// upstream's omitempty would.

// Node spec.taints (removed when empty) and spec.unschedulable (removed when false).
Status SetTaints(rapidjson::Document& node, std::span<const Taint> taints);
Status SetUnschedulable(rapidjson::Document& node, bool unschedulable);

// Pod spec.nodeName (removed when empty), spec.tolerations (removed when empty), status.phase.
Status SetNodeName(rapidjson::Document& pod, std::string_view node_name);
Status SetTolerations(rapidjson::Document& pod, std::span<const Toleration> tolerations);
Status SetPodPhase(rapidjson::Document& pod, std::string_view phase);

// Replaces the status.conditions element of the same type (updating its members in place, so
// fields kubetaint does not know survive) or appends one. Pods carry lastProbeTime, nodes
// lastHeartbeatTime; unset times are written as null, as upstream.
Status SetPodCondition(rapidjson::Document& pod, const Condition& condition);
Status SetNodeCondition(rapidjson::Document& node, const Condition& condition);
// The same change to a typed pod: decoding the document SetPodCondition changed gives the pod
// this changes.
void SetPodCondition(Pod& pod, const Condition& condition);

// metadata.labels / metadata.annotations. Removing the last entry removes the map.
Status SetLabel(rapidjson::Document& object, std::string_view key, std::string_view value);
Status RemoveLabel(rapidjson::Document& object, std::string_view key);
Status SetAnnotation(rapidjson::Document& object, std::string_view key, std::string_view value);
Status RemoveAnnotation(rapidjson::Document& object, std::string_view key);

// metadata fields the registry owns. Empty strings and a zero generation remove the member,
// except creationTimestamp, which Go writes as null when unset; deletionGracePeriodSeconds is
// always written (0 means "delete now").
Status SetName(rapidjson::Document& object, std::string_view name);
Status SetNamespace(rapidjson::Document& object, std::string_view namespace_);
Status SetResourceVersion(rapidjson::Document& object, std::string_view resource_version);
Status SetUID(rapidjson::Document& object, std::string_view uid);
Status SetCreationTimestamp(rapidjson::Document& object, std::string_view timestamp);
Status SetGeneration(rapidjson::Document& object, int64_t generation);
Status SetDeletionTimestamp(rapidjson::Document& object, std::string_view timestamp);
Status SetDeletionGracePeriodSeconds(rapidjson::Document& object, int64_t seconds);

}  // namespace kt::api
