// The API schema of the kinds kubetaint serves, and field validation (`?fieldValidation=`) as
// kube-apiserver does it.
//
// The schema is upstream's OpenAPI v2 document trimmed to the served kinds
// (third_party/kubernetes-openapi/served-schema.json, made by generate.py there), compiled into
// the binary and parsed on first use into compact immutable structs: types by small index, each
// type's fields sorted by name for binary search, the descriptions kept for `kubectl explain`.
//
//   const Schema& schema = ServedSchema();
//   TypeRef pod = schema.FindKind("", "v1", "Pod");
//   const SchemaField* containers = pod->FindField("spec")->value->type->FindField("containers");
//   // containers->value->kind == ValueKind::kArray, containers->list_type == ListType::kMap,
//   // containers->list_map_keys == {"name"}, containers->value->element->type->name ==
//   // "io.k8s.api.core.v1.Container"
//
//   Result<FieldValidation> mode = ParseFieldValidation(query.fieldValidation);
//   FieldProblems problems;
//   PruneUnknownFields(body, pod, body.GetAllocator(), &problems);
//   if (*mode == FieldValidation::kStrict && !problems.messages.empty())
//     return BadRequest(CannotBeHandledAs("Pod", "v1", "Pod", StrictDecodingError(problems)));
//   // kWarn: each message becomes one `Warning: 299 - "unknown field \"spec.x\""` header.
//
// What upstream does, and so what this does (Kubernetes 1.35):
// * Decoding. With fieldValidation Strict or Warn, the body is decoded by sigs.k8s.io/json
//   UnmarshalStrict (apimachinery runtime/serializer/json/json.go `unmarshal`): case-sensitive
//   field names, DisallowUnknownFields and DisallowDuplicateFields. Each problem is recorded
//   where its key is read, so the list is in document order; decoding goes on after one, so all
//   are reported; identical messages are recorded once, and at most 100 are kept
//   (internal/golang/encoding/json/kubernetes_patch.go `saveStrictError`).
// * Messages: `unknown field "<path>"` and `duplicate field "<path>"`, the path Go-quoted
//   (strconv.Quote). The path is the JSON names from the root joined by dots, a list index as
//   `[i]` and a map key as a name: `spec.tolerations[0].tolerationSecond`,
//   `metadata.labels.app` (a label key given twice), `status.foo` (status is decoded like the
//   rest, though the server resets it). `metadata.labelz` is unknown: ObjectMeta is a typed
//   struct. A map's keys are never unknown. `apiVersion` and `kind` are fields of every kind.
//   An unknown member's value is skipped: nothing inside it is reported. Values of types with
//   their own decoder (Quantity, Time, MicroTime, IntOrString, FieldsV1 in managedFields) are
//   taken whole: nothing inside them is unknown or duplicate.
// * Duplicates: the later occurrence is decoded into the same Go field, so for a struct it is
//   merged into the earlier one (its members overwrite), a map gains or replaces keys, a list of
//   n items overwrites the first n items member by member and is cut to n, and a scalar is
//   replaced; a duplicate map key replaces the earlier value whole. PruneUnknownFields keeps
//   that winner in the earlier member's place and drops the later member. One approximation:
//   a later `null` replaces the value here, while Go leaves a non-pointer string, number, bool
//   or struct as it was (the schema does not say which fields are pointers).
// * The errors: create and update answer 400 BadRequest
//   `Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field
//   "spec.x", duplicate field "metadata.name"` (apiserver endpoints/handlers/rest.go
//   `transformDecodeError`; create.go, update.go). Patches (json merge, strategic) answer 422
//   Invalid ` "" is invalid: patch: Invalid value: "<patched object>": strict decoding error:
//   ...` (patch.go; the strategic path lists unknown fields in Go map order). With Warn, each
//   problem is one warning (`addStrictDecodingWarnings`), and the object is stored without
//   the unknown fields; with Ignore they are dropped silently. A JSON type error anywhere
//   (a string where a struct belongs) wins over all strict errors: decode types first.
//
// Thread safety: a Schema is immutable once parsed; ServedSchema() may be called from any thread.
// PruneUnknownFields touches only its arguments.
//
// The schema is implemented in schema.cc, field validation in field_validation.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "core/status.h"

namespace kt::api {

// What a JSON value must be.
enum class ValueKind : uint8_t {
  kObject,  // a struct: a JSON object with the fields of `type`
  kArray,   // a JSON array of `element`s
  kMap,     // a JSON object with any keys, each value an `element`
  kString,
  kInteger,
  kNumber,
  kBoolean,
  kIntOrString,      // intstr.IntOrString: a number or a string
  kQuantity,         // resource.Quantity: "100m", or a number
  kTime,             // metav1.Time, MicroTime: an RFC 3339 string
  kPreserveUnknown,  // anything, kept as it is (FieldsV1; x-kubernetes-preserve-unknown-fields)
};

// x-kubernetes-list-type.
enum class ListType : uint8_t { kUnspecified, kAtomic, kSet, kMap };
// x-kubernetes-map-type (on a map or a struct).
enum class MapType : uint8_t { kUnspecified, kAtomic, kGranular };

struct SchemaType;
// A type of a Schema; null when a lookup finds nothing. Valid as long as its Schema.
using TypeRef = const SchemaType*;

// The shape of a value: a field's, a list's items', a map's values'.
struct ValueSchema {
  ValueKind kind = ValueKind::kPreserveUnknown;
  std::string_view format;               // upstream `format`: "int32", "int64", "date-time", ...
  TypeRef type = nullptr;                // the definition a `$ref` names; null for inline values
  const ValueSchema* element = nullptr;  // kArray: the items; kMap: the values
};

// A property of a struct.
struct SchemaField {
  std::string_view name;
  std::string_view description;
  const ValueSchema* value = nullptr;
  std::string_view patch_merge_key;                 // x-kubernetes-patch-merge-key
  std::span<const std::string_view> list_map_keys;  // x-kubernetes-list-map-keys
  ListType list_type = ListType::kUnspecified;
  MapType map_type = MapType::kUnspecified;
  // x-kubernetes-patch-strategy, a comma-separated set upstream ("merge,retainKeys").
  bool patch_merge = false;
  bool patch_retain_keys = false;
  bool patch_replace = false;
  bool required = false;  // listed in the type's `required`
};

struct GroupVersionKind {
  std::string_view group;  // "" for the core group
  std::string_view version;
  std::string_view kind;
};

// A definition: "io.k8s.api.core.v1.Pod".
struct SchemaType {
  std::string_view name;
  std::string_view description;
  // This type as a value: kObject for structs, kQuantity, kTime, kIntOrString, kPreserveUnknown
  // for FieldsV1, ...; `value->type` is this type.
  const ValueSchema* value = nullptr;
  std::span<const SchemaField> fields;                    // sorted by name
  std::span<const GroupVersionKind> group_version_kinds;  // x-kubernetes-group-version-kind
  MapType map_type = MapType::kUnspecified;               // x-kubernetes-map-type
  bool preserve_unknown_fields = false;                   // x-kubernetes-preserve-unknown-fields
  uint16_t index = 0;                                     // in Schema::types()

  // The field named `name` (case-sensitive, as upstream decodes); null if there is none.
  const SchemaField* FindField(std::string_view name) const;
};

class SchemaLoader;

// A parsed schema document (swagger 2.0 `definitions`).
class Schema {
 public:
  // Parses a schema document such as served-schema.json. kBadRequest for malformed JSON, a
  // dangling `$ref`, or an extension value this code does not know (a newer Kubernetes may add
  // one: then teach Parse, so that no fact is silently dropped).
  static Result<std::unique_ptr<const Schema>> Parse(std::string_view json);

  // The definition named `name`; null if there is none.
  TypeRef FindType(std::string_view name) const;
  // The definition whose x-kubernetes-group-version-kind lists (group, version, kind).
  TypeRef FindKind(std::string_view group, std::string_view version, std::string_view kind) const;
  // FindKind for an apiVersion as objects carry it: "v1", "apps/v1".
  TypeRef FindApiVersionKind(std::string_view api_version, std::string_view kind) const;

  std::span<const SchemaType> types() const { return types_; }  // sorted by name
  // The `info` block: "Kubernetes", "unversioned" for upstream's document.
  std::string_view info_title() const { return info_title_; }
  std::string_view info_version() const { return info_version_; }

  // Bytes held by this schema: structs and strings (descriptions included).
  size_t MemoryBytes() const;

  ~Schema();

 private:
  friend class SchemaLoader;
  Schema();
  struct Storage;
  std::unique_ptr<Storage> storage_;
  std::vector<SchemaType> types_;
  std::string_view info_title_;
  std::string_view info_version_;
};

// The schema of the served kinds, embedded in the binary, parsed on the first call (a few
// milliseconds) and kept for the life of the process. Thread-safe.
const Schema& ServedSchema();

// The embedded document itself, served-schema.json's bytes: besides the definitions, the
// upstream `paths` and `parameters` of the served resources, from which the API server makes
// its OpenAPI documents (server/openapi.h).
std::string_view ServedSchemaDocument();

// --- Field validation ------------------------------------------------------------------------

// metav1.FieldValidation{Ignore,Warn,Strict}.
enum class FieldValidation { kIgnore, kWarn, kStrict };

// The `fieldValidation` query parameter: "Ignore", "Warn", "Strict", or "" (absent), which is
// Warn (upstream handlers/rest.go `fieldValidation`; kubectl sends Strict by default).
// Case-sensitive. Anything else is a 422 kInvalid, as upstream's ValidateCreateOptions /
// ValidateUpdateOptions / ValidatePatchOptions answer it, `options_kind` naming which:
//   CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "strict":
//   supported values: "", "Ignore", "Strict", "Warn"
Result<FieldValidation> ParseFieldValidation(std::string_view query_value,
                                             std::string_view options_kind = "CreateOptions");

// What PruneUnknownFields found, upstream's messages in document order:
// `unknown field "spec.x"`, `duplicate field "metadata.name"`. Identical messages appear once;
// at most 100 are kept (later ones are dropped, as upstream drops them).
struct FieldProblems {
  std::vector<std::string> messages;
};

// Removes from `object` (a decoded body of `type`) every member the schema does not know, and
// of each member given twice keeps upstream's winner in the first one's place (see the file
// comment), recording each problem in `problems` (nullptr for fieldValidation=Ignore: nothing
// is recorded, the object is pruned all the same). Values whose JSON type does not match the
// schema are left alone: reporting them is the typed decoder's job. `alloc` is `object`'s
// document allocator (merging duplicates may add members). Costs one walk of the object and
// no allocation when there is nothing to report (a map of more than 16 keys aside).
void PruneUnknownFields(rapidjson::Value& object, TypeRef type,
                        rapidjson::Document::AllocatorType& alloc, FieldProblems* problems);

// Records `duplicate field "<path>"` for every member given twice in an object of `value`, at
// any depth, as sigs.k8s.io/json's UnmarshalStrict into a map does: what upstream's patch
// handler finds in a merge or strategic merge patch body before applying it.
void FindDuplicateFields(const rapidjson::Value& value, FieldProblems* problems);

// `strict decoding error: <m1>, <m2>, ...` (apimachinery runtime/error.go).
std::string StrictDecodingError(const FieldProblems& problems);

// The 400 message of a create or update whose body does not decode (upstream handlers/rest.go
// transformDecodeError): `<kind> in version "<version>" cannot be handled as a <into_kind>:
// <error>`. `kind` and `version` are the body's (defaulted from the URL), `into_kind` the
// resource's.
std::string CannotBeHandledAs(std::string_view kind, std::string_view version,
                              std::string_view into_kind, std::string_view error);

}  // namespace kt::api
