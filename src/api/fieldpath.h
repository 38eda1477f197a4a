// Field paths and sets of them, as structured-merge-diff (SMD) v6 `fieldpath` has them, with
// the FieldsV1 wire format of `metadata.managedFields[].fieldsV1`.
//
// A path names one node of an object: a struct field or map key (`.spec`, `.labels.app`), an
// item of an associative list by its key fields (`[name="nginx"]`), an item of a set by its
// value (`[="finalizer"]`), or (never produced for the served kinds) a list index (`[3]`).
// A FieldSet is a sorted trie of such paths; a path is a *member* when the node itself is in
// the set, and a *child* node holds the members below it.
//
//   FieldSet set;
//   set.Insert({PathElement::Field("spec"), PathElement::Field("replicas")});
//   std::string json = set.ToJson();  // {"f:spec":{"f:replicas":{}}}
//   Result<FieldSet> back = FieldSet::FromJson(json);
//
// Contract (all from SMD fieldpath/*.go):
// * Ordering (element.go `Compare`): field names < keys < values < indices; names bytewise;
//   keys field by field (name, then value); values by value.Compare: numbers (ints and floats
//   compared as numbers) < strings < booleans < lists < maps < null.
// * ToJson (serialize.go `emitContentsV1`) is byte-identical to upstream: members and children
//   merged in order; a node that is both a member and has children is written `{".":{},...}`;
//   keys are `f:<name>`, `k:<json object of the key fields, sorted by name>`, `v:<json>`,
//   `i:<n>`, JSON-escaped as Go's encoding/json does (HTML characters as \u003c etc.).
// * FromJson (readIterV1) accepts upstream's output and tolerates what upstream tolerates: keys
//   of an unknown type (`x:...`) are skipped; a node with no children is a member. Malformed
//   keys are errors with upstream's reason (`missing colon: ...`).
//
// Thread safety: values; no shared state.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "api/schema.h"
#include "core/status.h"

namespace kt::api {

// A value in a path element: a set item or a key field's value (SMD value.Value, trimmed to
// what keys and sets hold). Lists and maps are kept as their canonical JSON text.
struct PathValue {
  // In value.Compare order.
  enum class Kind : uint8_t { kNumber, kString, kBool, kList, kMap, kNull };
  Kind kind = Kind::kNull;
  bool is_int = false;  // kNumber held exactly as an int64 (decoded JSON numbers are floats)
  int64_t int_value = 0;
  double float_value = 0;
  bool bool_value = false;
  std::string text;  // kString: the string; kList, kMap: canonical JSON

  static PathValue FromJson(const rapidjson::Value& v);
  int Compare(const PathValue& o) const;
  bool operator==(const PathValue& o) const { return Compare(o) == 0; }
  // As JSON, as jsoniter writes it (value.ToJSON).
  void AppendJson(std::string* out) const;
  // As SMD's value.ToString prints it in a path: 80, "TCP", true.
  std::string ToString() const;
};

struct KeyField {
  std::string name;
  PathValue value;
};

// One step of a path (SMD fieldpath.PathElement).
struct PathElement {
  enum class Kind : uint8_t { kField, kKey, kValue, kIndex };
  Kind kind = Kind::kField;
  std::string name;           // kField
  std::vector<KeyField> key;  // kKey, sorted by name
  PathValue value;            // kValue
  int64_t index = 0;          // kIndex

  static PathElement Field(std::string_view name);
  static PathElement Key(std::vector<KeyField> fields);  // sorts the fields by name
  static PathElement Value(PathValue v);
  static PathElement Index(int64_t i);

  int Compare(const PathElement& o) const;
  bool operator==(const PathElement& o) const { return Compare(o) == 0; }
  bool operator<(const PathElement& o) const { return Compare(o) < 0; }
  // `.name`, `[name="c",port=80]`, `[="x"]`, `[3]` (element.go String).
  std::string ToString() const;
  // `f:name`, `k:{"name":"c"}`, `v:"x"`, `i:3` (serialize-pe.go).
  std::string Serialize() const;
  // The inverse of Serialize; an unknown type letter is kNotFound (upstream skips those).
  static Result<PathElement> Deserialize(std::string_view s);
};

using Path = std::vector<PathElement>;
// `.spec.containers[name="nginx"].image` (path.go String).
std::string PathToString(std::span<const PathElement> path);

// A set of paths (SMD fieldpath.Set).
class FieldSet {
 public:
  FieldSet() = default;

  void Insert(std::span<const PathElement> path);
  bool Has(std::span<const PathElement> path) const;
  bool Empty() const;
  // The number of paths.
  size_t Size() const;

  FieldSet Union(const FieldSet& o) const;
  FieldSet Intersection(const FieldSet& o) const;
  FieldSet Difference(const FieldSet& o) const;
  // Difference that also drops everything below a member of `o` (set.go RecursiveDifference):
  // how reset fields ("status") are taken out.
  FieldSet RecursiveDifference(const FieldSet& o) const;
  // The subset below `pe`; null when there is none.
  const FieldSet* WithPrefix(const PathElement& pe) const;
  // Adds each struct field that has children as a member too (set.go
  // EnsureNamedFieldsAreMembers), so that removing the set removes the field.
  FieldSet EnsureNamedFieldsAreMembers(const ValueSchema* schema) const;

  // Every path, members of a node before its children (set.go Iterate).
  void Iterate(const std::function<void(const Path&)>& fn) const;
  std::vector<std::string> PathStrings() const;

  std::string ToJson() const;
  void AppendJson(std::string* out) const;
  static Result<FieldSet> FromJson(std::string_view json);
  static Result<FieldSet> FromValue(const rapidjson::Value& fields_v1);

  bool operator==(const FieldSet& o) const;

  struct Child;
  const std::vector<PathElement>& members() const { return members_; }
  const std::vector<Child>& children() const { return children_; }

 private:
  FieldSet* Descend(const PathElement& pe);
  void IteratePrefix(Path* prefix, const std::function<void(const Path&)>& fn) const;
  void EmitContents(bool include_self, std::string* out) const;
  static Status Read(const rapidjson::Value& v, FieldSet* out, bool* is_member);

  std::vector<PathElement> members_;  // sorted
  std::vector<Child> children_;       // sorted by element
};

struct FieldSet::Child {
  PathElement element;
  FieldSet set;
};

// Appends `s` as a JSON string the way Go's encoding/json (and jsoniter's compatible mode)
// writes it: `<`, `>`, `&`, U+2028 and U+2029 escaped as \uXXXX.
void AppendGoJsonString(std::string_view s, std::string* out);

}  // namespace kt::api
