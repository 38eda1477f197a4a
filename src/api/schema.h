// The API schema of the kinds kubetaint serves.
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
// Thread safety: a Schema is immutable once parsed; ServedSchema() may be called from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

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

}  // namespace kt::api
