// Server-side apply and field management (`metadata.managedFields`), as kube-apiserver does it
// with structured-merge-diff v6 (SMD) and apimachinery's util/managedfields/internal.
//
// A registry that has the stored object and a decoded request body calls:
//
//   FieldManagerScope scope{.type = ServedSchema().FindKind("", "v1", "Pod"),
//                           .api_version = "v1", .subresource = "",
//                           .reset_fields = &ResetFields("", "Pod", ""), .time = now_rfc3339};
//   // create / update / patch (not apply): after the new object is final, before storing it.
//   UpdateObjectManagedFields(stored /*nullptr on create*/, &next, "kubectl-edit", scope);
//
//   // apply (PATCH application/apply-patch+yaml, the body decoded to JSON):
//   std::vector<ApplyConflict> conflicts;
//   Result<std::vector<ManagedFieldsEntry>> entries = DecodeManagedFields(stored_managed_fields);
//   if (!entries) return entries.error();                           // 500 upstream; see below
//   Result<ApplyResult> r = Apply(stored /*nullptr: create*/, body, "kubectl", force, scope,
//                                 *entries, &conflicts);
//   if (!r) return r.error();   // 409 kConflict with ConflictMessage(conflicts), or 400
//   // r->object carries the new metadata.managedFields; default, validate and store it as
//   // for an update (the strategy still resets status on the main resource).
//
// The manager chain upstream wraps around SMD (internal/fieldmanager.go
// NewDefaultFieldManager), and what each does here:
// * versioncheck.go: an applied object whose apiVersion/kind is not the scope's is a 400
//   `invalid object type: /v1, Kind=Node`.
// * skipnonapplied.go: an object with no managedFields (created before tracking, or with them
//   reset) is not tracked by updates; the first apply first gives every existing field to
//   `before-first-apply` (an Update entry). Creates are always tracked (probability 1).
// * capmanagers.go: after an update, at most 10 Update entries remain; the oldest (by time in
//   seconds, then manager identifier) are merged per apiVersion into `ancient-changes`.
// * buildmanagerinfo.go: an entry is identified by (manager, operation, apiVersion for Update
//   only, subresource); an empty manager is `unknown`. Apply entries keep one entry whatever
//   the apiVersion.
// * managedfieldsupdater.go: an update's changed fields are computed for a temporary
//   `current-operation` manager, then merged into the manager's entry, whose time becomes
//   `time` only if it took any field. An apply sets the time only if the object changed.
// * stripmeta.go: apiVersion, kind, metadata itself and metadata.{name, namespace,
//   creationTimestamp, selfLink, uid, clusterName, generation, managedFields, resourceVersion}
//   are never owned. (labels, annotations, finalizers, ownerReferences... are.)
// * structuredmerge.go: an applied object with metadata.managedFields set is a 400
//   `metadata.managedFields must be nil`. Reset fields (`GetResetFields` of the resource's
//   strategy: `status` on the main resource, `spec` on /status, ...) are excluded from what a
//   manager owns and from conflicts (SMD merge/update.go IgnoredFields).
// * managedfields.go: entries are written sorted by operation (Apply first), time (seconds),
//   manager, apiVersion, subresource; fieldsType is always FieldsV1.
// * conflict.go: the 409 text (see ConflictMessage).
// Not done (known gaps): lastappliedmanager.go/lastappliedupdater.go (the
// kubectl.kubernetes.io/last-applied-configuration upgrade path), conversion between
// apiVersions (entries of other versions are treated as if of the scope's version), default
// values of list-map keys (the v2 schema has none: a port applied without `protocol` is keyed
// by containerPort alone, where upstream's v3 schema defaults it to TCP), SMD's schema-change
// reconciliation, and Go struct zero values (a create compares against an object whose
// top-level structs are empty and whose required fields are null, as the zero Go object is).
//
// Errors: untrusted input (a malformed applied object or managedFields) is a 400 with
// upstream's text; upstream answers some of these 500, this server answers 400 (DESIGN.md
// invariant 5: bad input is a client error).
//
// Thread safety: pure functions of their arguments.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "api/fieldpath.h"
#include "api/schema.h"
#include "core/status.h"

namespace kt::api {

// metav1.ManagedFieldsEntry, with fieldsV1 decoded.
struct ManagedFieldsEntry {
  std::string manager;
  std::string operation;  // "Apply" | "Update"
  std::string api_version;
  std::string time;  // RFC 3339 as stored; "" when unset
  std::string subresource;
  FieldSet fields;

  bool applied() const { return operation == "Apply"; }
  // BuildManagerIdentifier: the JSON of the entry without fieldsType, fieldsV1, time, and
  // without apiVersion for Apply: {"manager":"kubectl","operation":"Update","apiVersion":"v1"}.
  std::string Identifier() const;
};

// Decodes `metadata.managedFields` (an array, or null) as upstream's DecodeManagedFields:
// `operation must be `Apply` or `Update``, `apiVersion must not be empty`, `missing fieldsType
// in managed fields entry 0`, `invalid fieldsType "X" in managed fields entry 0`, and FieldsV1
// parse errors, as kBadRequest. Two entries with one identifier: the later wins.
Result<std::vector<ManagedFieldsEntry>> DecodeManagedFields(const rapidjson::Value& managed_fields);

// apimachinery meta/v1/validation ValidateManagedFields: the 422 causes of a request whose
// managedFields are malformed, as `<field>: Invalid value: "<v>": <reason>` texts.
std::vector<std::string> ValidateManagedFields(const rapidjson::Value& managed_fields);

// Writes `entries` as upstream does: sorted (see above), members in metav1 order (manager,
// operation, apiVersion, time, fieldsType, fieldsV1, subresource), empty strings omitted.
void EncodeManagedFields(const std::vector<ManagedFieldsEntry>& entries, rapidjson::Value* out,
                         rapidjson::Document::AllocatorType& alloc);

// The fields `object` sets (typed.ToFieldSet): every leaf, each associative list item and map
// entry with its `.` self-marker, atomic lists and maps as one path, empty structs and nulls.
FieldSet FieldsOf(const rapidjson::Value& object, TypeRef type);

// What an operation is about.
struct FieldManagerScope {
  TypeRef type = nullptr;                  // the kind's schema
  std::string_view api_version;            // the request's group/version: "v1", "apps/v1"
  std::string_view subresource;            // "" or "status"
  const FieldSet* reset_fields = nullptr;  // ResetFields(...); null for none
  std::string_view time;                   // now, RFC 3339 ("2025-01-02T03:04:05Z")
};

// The fields a resource's strategy resets (GetResetFields in pkg/registry/*/strategy.go):
// pods, nodes, namespaces (core) and daemonsets (apps): `status` on the main resource;
// pods/status: `spec`, `metadata.deletionTimestamp`, `metadata.ownerReferences`;
// nodes/status, namespaces/status, daemonsets/status: `spec`. Others: empty.
const FieldSet& ResetFields(std::string_view group, std::string_view kind,
                            std::string_view subresource);

// A non-apply write by `manager`: the fields that differ between `old` (null on create) and
// `next` become the manager's (an Update entry at scope.api_version), and are taken from every
// other entry; removed fields leave every entry; entries left empty are dropped; then the cap.
// `next` should not carry managedFields the caller has not decoded into `entries`.
void UpdateManagedFields(const rapidjson::Value* old, const rapidjson::Value& next,
                         std::string_view manager, const FieldManagerScope& scope,
                         std::vector<ManagedFieldsEntry>* entries);

// FieldManager.Update around UpdateManagedFields: takes the entries from `next`'s
// metadata.managedFields when they decode and are not empty (so a client may edit them), else
// from `live`'s (a subresource always uses live's); `[]` or `[{}]` in `next` resets them.
// Then writes the result into `next` (removing metadata.managedFields when none remain).
void UpdateObjectManagedFields(const rapidjson::Value* live, rapidjson::Document* next,
                               std::string_view manager, const FieldManagerScope& scope);

// One field `Apply` could not take.
struct ApplyConflict {
  std::string manager;      // the other manager's name
  std::string operation;    // its entry's "Apply" or "Update"
  std::string api_version;  // its entry's apiVersion ("" for Apply identifiers)
  std::string subresource;
  std::string path;  // ".spec.replicas", `.spec.containers[name="c"].image`
};

struct ApplyResult {
  rapidjson::Document object;  // the merged object, metadata.managedFields set
  std::vector<ManagedFieldsEntry> entries;
  bool changed = false;  // false: the apply changed no field (object is `live` as it was)
};

// Server-side apply of `applied` (the apply configuration) by `manager` onto `live` (null on
// create), with the entries decoded from live's managedFields. See the file comment. On
// conflicts, without `force`, fills `conflicts` (grouped by manager, managers sorted by
// identifier, paths in set order) and answers kConflict with ConflictMessage; with `force` the
// fields are taken from their owners.
Result<ApplyResult> Apply(const rapidjson::Value* live, const rapidjson::Value& applied,
                          std::string_view manager, bool force, const FieldManagerScope& scope,
                          const std::vector<ManagedFieldsEntry>& entries,
                          std::vector<ApplyConflict>* conflicts);

// conflict.go getConflictMessage:
//   Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using v1:
//   .spec.replicas
// and for several, one line per manager (sorted) and per path:
//   Apply failed with 2 conflicts: conflicts with "a":\n- .spec.x\nconflicts with "b" using
//   v1:\n- .spec.y
std::string ConflictMessage(const std::vector<ApplyConflict>& conflicts);
// A StatusCause message (type FieldManagerConflict, field = path): `conflict with "m" using v1`.
std::string ConflictCauseMessage(const ApplyConflict& conflict);

}  // namespace kt::api
