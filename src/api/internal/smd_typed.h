// Internal to api/managed_fields: structured-merge-diff's typed operations (typed/*.go) over
// rapidjson values and the served schema. Not for use outside src/api.
//
// The schema is read as SMD's schema converter (kube-openapi pkg/schemaconv) reads upstream's
// OpenAPI document:
// * a struct (`$ref` to a definition with properties) is a map with named fields, granular
//   unless `x-kubernetes-map-type: atomic` is on the field or the definition;
// * a map (`additionalProperties`) is granular unless `x-kubernetes-map-type: atomic`;
// * a list is atomic unless `x-kubernetes-list-type` is `set` (associative, items are their own
//   key) or `map` (associative by `x-kubernetes-list-map-keys`); a list with no list-type but
//   `x-kubernetes-patch-strategy` containing `merge` is associative by its
//   `x-kubernetes-patch-merge-key` (a set when there is none: `finalizers`);
// * every other value (strings, numbers, IntOrString, Quantity, Time, and untyped values such
//   as FieldsV1, which built-in types read as `__untyped_atomic_`) is a leaf.
//
// `null` where a struct, map or list belongs is read as SMD reads it: as absent for merging
// and comparing inside, but a present leaf for ToFieldSet (tofieldset.go inserts the path).
#pragma once

#include <string>
#include <vector>

#include <rapidjson/document.h>

#include "api/fieldpath.h"
#include "api/schema.h"

namespace kt::api::internal {

// A position in the schema: the value's shape, plus the struct field that holds it (the list
// and map extensions live on the field).
struct TypedNode {
  const ValueSchema* value = nullptr;  // null: not in the schema (a leaf)
  const SchemaField* field = nullptr;
};

inline TypedNode RootNode(TypeRef type) { return TypedNode{type ? type->value : nullptr, nullptr}; }

using Allocator = rapidjson::Document::AllocatorType;

// SMD ValidationErrors as text: "<path>: <message>", e.g.
// `.spec.containers: element 0: associative list with keys has an element that omits all key
// fields ["name"] (and doesn't have default values for any key fields)`.
using TypedErrors = std::vector<std::string>;
// One error as is; several as "errors:\n  <e1>\n  <e2>" (helpers.go ValidationErrors.Error).
std::string JoinTypedErrors(const TypedErrors& errors);

// value.Equals: numbers by value (1 == 1.0), maps regardless of member order.
bool JsonEquals(const rapidjson::Value& a, const rapidjson::Value& b);

// typed.TypedValue.ToFieldSet, adding to `out`. Key errors (an item without any key field, a
// null item, a map in a set) and, when `report_duplicates`, duplicate keys (validate.go) are
// appended to `errors`; the items concerned are skipped.
void ToFieldSet(const rapidjson::Value& v, TypedNode node, FieldSet* out, TypedErrors* errors,
                bool report_duplicates);

// typed.Comparison: what changed from lhs to rhs.
struct Comparison {
  FieldSet removed;
  FieldSet modified;
  FieldSet added;
};
// typed.TypedValue.Compare (compare.go). `lhs` may be null (nothing before).
void Compare(const rapidjson::Value* lhs, const rapidjson::Value& rhs, TypedNode node,
             Comparison* out);

// typed.TypedValue.Merge with ruleKeepRHS (merge.go): rhs wins on leaves, atomic lists and
// maps; structs and granular maps merge member by member; associative lists merge item by item
// by key, in upstream's order. `lhs` may be null. Duplicate keys in `rhs` are errors.
bool Merge(const rapidjson::Value* lhs, const rapidjson::Value& rhs, TypedNode node,
           rapidjson::Value* out, Allocator& alloc, TypedErrors* errors);

// typed.TypedValue.RemoveItems (remove.go): `v` without the paths of `to_remove`. A map or
// list left empty becomes null, as upstream's does.
void RemoveItems(const rapidjson::Value& v, const FieldSet& to_remove, TypedNode node,
                 rapidjson::Value* out, Allocator& alloc);

// Removes, recursively, members whose value is null (what converting the typed result back to
// a Go object and serializing it with omitempty does).
void DropNullMembers(rapidjson::Value* v);

}  // namespace kt::api::internal
