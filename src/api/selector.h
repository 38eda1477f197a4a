// Label selectors and field selectors, as the API server parses the `labelSelector` and
// `fieldSelector` query parameters (apimachinery pkg/labels/selector.go, pkg/fields/selector.go)
// and as k/k restricts field selectors per kind (pkg/apis/core/v1/conversion.go).
//
//   Result<labels::Selector> ls = labels::Parse("app in (web,api),!canary");
//   if (!ls) return ls.error();                 // 400 with the upstream message
//   bool hit = ls->Matches(pod.meta.labels);    // StringMap, binary searches
//
//   Result<fields::Selector> fs = fields::ParseSelector("spec.nodeName=node-1", "Pod");
//   bool hit = fs->Matches([&](fields::Field f) { return fields::FieldValue(pod_json, f); });
//   if (auto node = fs->RequiresExactMatch(fields::Field::kSpecNodeName)) ...  // use an index
//
// Contract:
// * Parse errors are kBadRequest with upstream's message text ("unable to parse requirement: …",
//   "invalid selector: …", "field label not supported: <field>").
// * Parsing is where the cost is paid: field names are resolved to a `Field` enum and label
//   values are sorted once, so matching over 150k objects allocates nothing and compares no
//   field names.
// * A parsed selector is a plain value, immutable once built; safe to share between threads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <rapidjson/fwd.h>

#include "api/types.h"
#include "core/status.h"

namespace kt::api {

namespace labels {

// selection.Operator, restricted to what a label selector can say.
enum class Operator : uint8_t {
  kIn,
  kNotIn,
  kEquals,        // =
  kDoubleEquals,  // ==
  kNotEquals,     // !=
  kExists,        // k
  kDoesNotExist,  // !k
  kGreaterThan,   // k>1
  kLessThan,      // k<1
};

// One term of a label selector (labels.Requirement).
struct Requirement {
  std::string key;
  Operator op = Operator::kExists;
  // Sorted and without duplicates, as upstream's sets.String.List(); one value for =, ==, !=,
  // > and <; none for exists / does-not-exist.
  std::vector<std::string> values;
  // The parsed integer for > and < (validated at parse time, as upstream).
  int64_t number = 0;

  bool Matches(const StringMap& labels) const;
  // Upstream's canonical text: "k in (a,b)", "!k", "k!=v".
  std::string String() const;

  bool operator==(const Requirement&) const = default;
};

// A parsed label selector: the AND of its requirements, sorted by key (stable), as upstream.
class Selector {
 public:
  Selector() = default;  // matches everything
  explicit Selector(std::vector<Requirement> requirements)
      : requirements_(std::move(requirements)) {}

  bool Matches(const StringMap& labels) const {
    for (const Requirement& r : requirements_) {
      if (!r.Matches(labels)) return false;
    }
    return true;
  }
  // True when it selects everything (no requirement).
  bool Empty() const { return requirements_.empty(); }
  // The single value the selector demands for `key` (`k=v`, `k==v` or `k in (v)`), if any; the
  // first requirement on that key decides, as upstream RequiresExactMatch.
  std::optional<std::string_view> RequiresExactMatch(std::string_view key) const;
  // Upstream's String(): requirements joined by ",".
  std::string String() const;
  const std::vector<Requirement>& requirements() const { return requirements_; }

 private:
  std::vector<Requirement> requirements_;
};

// labels.Parse. Whitespace (space, tab, CR, LF) separates tokens; keys are validated as label
// keys and values as label values, with upstream's messages.
Result<Selector> Parse(std::string_view text);

// metav1.LabelSelectorAsSelector for a set selector: matchLabels as `k=v` and matchExpressions
// (In, NotIn, Exists, DoesNotExist), ANDed; an empty selector selects everything. (A null
// selector selects nothing upstream: callers decide that case.) An unknown operator is
// `"<op>" is not a valid label selector operator`; In/NotIn need values, Exists/DoesNotExist
// take none.
Result<Selector> FromLabelSelector(const LabelSelector& selector);

}  // namespace labels

namespace fields {

// Every field label that some kind supports. Resolved at parse time, so matching compares
// enums, not strings.
enum class Field : uint8_t {
  kMetadataName,
  kMetadataNamespace,
  // Pod
  kSpecNodeName,
  kSpecRestartPolicy,
  kSpecSchedulerName,
  kSpecServiceAccountName,
  kSpecHostNetwork,
  kStatusPhase,  // Pod and Namespace
  kStatusPodIP,
  kStatusPodIPs,  // accepted upstream but never set in the field set: always ""
  kStatusNominatedNodeName,
  // Node
  kSpecUnschedulable,
  // Event
  kInvolvedObjectKind,
  kInvolvedObjectNamespace,
  kInvolvedObjectName,
  kInvolvedObjectUid,
  kInvolvedObjectApiVersion,
  kInvolvedObjectResourceVersion,
  kInvolvedObjectFieldPath,
  kReason,
  kReportingComponent,
  kSource,
  kType,
};

// The field label as clients write it: "spec.nodeName".
std::string_view FieldName(Field field);

// One term: `field=value` / `field==value` (equals) or `field!=value`.
struct Requirement {
  Field field = Field::kMetadataName;
  bool equals = true;
  std::string value;  // unescaped

  bool operator==(const Requirement&) const = default;
};

// A parsed field selector: the AND of its terms, in upstream's order (terms sorted as text).
class Selector {
 public:
  Selector() = default;  // matches everything
  explicit Selector(std::vector<Requirement> requirements)
      : requirements_(std::move(requirements)) {}

  // `get(Field)` returns the object's value of that field as text (std::string_view or
  // convertible); "" when unset, as upstream's fields.Set.
  template <class Getter>
  bool Matches(Getter&& get) const {
    for (const Requirement& r : requirements_) {
      if ((std::string_view(get(r.field)) == r.value) != r.equals) return false;
    }
    return true;
  }
  bool Empty() const { return requirements_.empty(); }
  // The value the selector pins `field` to with an equality term, if any (first such term, as
  // upstream). The watch cache uses it to answer from an index (spec.nodeName, metadata.name,
  // metadata.namespace); the full selector must still be applied to what the index returns.
  std::optional<std::string_view> RequiresExactMatch(Field field) const;
  // Upstream's String(), values escaped: "a=b,c!=d".
  std::string String() const;
  const std::vector<Requirement>& requirements() const { return requirements_; }

 private:
  std::vector<Requirement> requirements_;
};

// A term before its field label is checked against a kind.
struct Term {
  std::string field;
  bool equals = true;
  std::string value;  // unescaped

  bool operator==(const Term&) const = default;
};

// fields.ParseSelector alone: terms split on unescaped commas, sorted as text, empty terms
// skipped, values unescaped. No field is checked (see ParseSelector).
Result<std::vector<Term>> ParseTerms(std::string_view text);

// fields.ParseSelector followed by the kind's field label conversion. `kind` is the object kind
// ("Pod", "Node", "Event", "Namespace", ...); kinds without a list of their own accept
// metadata.name and metadata.namespace, as upstream's default conversion. Node accepts only
// metadata.name and spec.unschedulable, Namespace metadata.name and status.phase (upstream).
// Pods also accept the legacy `spec.host`, read as spec.nodeName.
Result<Selector> ParseSelector(std::string_view text, std::string_view kind);

// Whether `kind` supports `field` (for building field sets or documenting an index).
bool Supports(std::string_view kind, Field field);

// The value of `field` in an object's JSON, as upstream computes the field set: booleans as
// "true"/"false" (spec.hostNetwork and spec.unschedulable default to "false"), status.podIP from
// status.podIPs[0].ip or else status.podIP, an Event's `source` from source.component or else
// reportingComponent. The view points into `object` (or static storage).
std::string_view FieldValue(const rapidjson::Value& object, Field field);

// Escapes `\`, `,` and `=` in a value, as upstream fields.EscapeValue.
std::string EscapeValue(std::string_view value);

}  // namespace fields

}  // namespace kt::api
