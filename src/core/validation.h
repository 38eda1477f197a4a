// API validation of names, node taints and pod tolerations, with upstream Kubernetes 1.35
// messages byte for byte (apimachinery `util/validation/field`, `api/validate/content`; k/k
// `pkg/apis/core/validation/validation.go`, `pkg/api/pod/util.go`).
//
// The API server runs these on every write, so they are cheap when the input is valid: no
// allocation happens unless there is something to report.
//
//   FieldErrorList errs = ValidateNodeTaints(node.taints, "metadata.taints");
//   if (!errs.empty()) return InvalidObjectStatus("Node", node.name, errs);
//   // 422: Node "n1" is invalid: metadata.taints[0].effect: Required value
//
// Contract:
// * Field paths are plain strings built by the caller's prefix: `<prefix>[i].key`. Node taints
//   live under `metadata.taints` upstream (a quirk kept for byte-exact messages), so the caller
//   passes the prefix.
// * A FieldError carries its bad value already rendered, the way upstream prints it: Go `%q`
//   for values of Go type `string` (GoQuote) and JSON for everything else, including the
//   named string types TaintEffect and TolerationOperator (JsonString). The two differ for
//   `<`, `>`, `&`, non-ASCII and control characters.
// * Errors come in upstream order; nothing here deduplicates except the aggregate message,
//   which, like upstream ToAggregate, prints each distinct message once.
//
// Thread safety: pure functions and plain values.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/feature_gates.h"
#include "core/status.h"
#include "core/taint.h"

namespace kt {

// One field-level validation error (apimachinery field.Error).
struct FieldError {
  enum class Type : unsigned char {
    kNotFound,
    kRequired,
    kDuplicate,
    kInvalid,
    kNotSupported,
    kForbidden,
    kTooLong,
    kTooMany,
    kInternal,
  };

  Type type = Type::kInvalid;
  std::string field;      // "spec.tolerations[0].operator"
  std::string bad_value;  // already rendered: "\"Equal\"", "{\"Key\":...}"; unused by some types
  std::string detail;

  // "<field>: <ErrorBody()>"
  std::string ToString() const;
  // What follows the field: `Invalid value: "x": detail`, `Required value`, `Forbidden: detail`,
  // `Unsupported value: "x": supported values: "A", "B"`, `Duplicate value: {...}: detail`.
  // This is also the `message` of the Status cause.
  std::string ErrorBody() const;
  // The Status cause `reason`: "FieldValueInvalid", "FieldValueRequired", ...
  std::string_view Reason() const;

  bool operator==(const FieldError&) const = default;

  // Constructors named like upstream's field.Invalid, field.Required, ...
  static FieldError Invalid(std::string field, std::string rendered_value, std::string detail);
  static FieldError Required(std::string field, std::string detail = {});
  static FieldError Forbidden(std::string field, std::string detail);
  static FieldError Duplicate(std::string field, std::string rendered_value);
  // The detail lists `valid_values`, each Go-quoted: `supported values: "A", "B"`.
  static FieldError NotSupported(std::string field, std::string rendered_value,
                                 std::span<const std::string_view> valid_values);
};

using FieldErrorList = std::vector<FieldError>;

// --- Value rendering -------------------------------------------------------------------------

// Go's strconv.Quote / `%q`: how upstream prints a bad value of Go type `string`.
std::string GoQuote(std::string_view s);
// Go's json.Marshal of a string: how upstream (>= 1.34) prints named string types
// (TaintEffect, TolerationOperator) and strings inside structs.
std::string JsonString(std::string_view s);
// The internal core.Taint as upstream's Duplicate error prints it (no json tags, so Go field
// names): {"Key":"k","Value":"v","Effect":"NoSchedule","TimeAdded":null}.
std::string InternalTaintJson(const Taint& taint);

// --- Aggregation -----------------------------------------------------------------------------

// The text of upstream ErrorList.ToAggregate(): each distinct "<field>: <body>" once, in order;
// one message alone, several as "[e1, e2]". Empty for an empty list.
std::string AggregateMessage(std::span<const FieldError> errors);
// `<Kind> "<name>" is invalid: <aggregate>` (`<Kind> "<name>" is invalid` when `errors` is empty),
// the message of the 422 Invalid status (apimachinery errors.NewInvalid).
std::string InvalidObjectMessage(std::string_view kind, std::string_view name,
                                 std::span<const FieldError> errors);
// Status(kInvalid, InvalidObjectMessage(...)). Callers that need the per-field causes keep the
// list itself.
Status InvalidObjectStatus(std::string_view kind, std::string_view name,
                           std::span<const FieldError> errors);

// --- Name helpers (apimachinery content validators, 1.35 wording) ---------------------------
// Each returns the upstream messages, empty when the value is valid.

// A label key / qualified name: `[prefix/]name`, prefix a DNS-1123 subdomain.
std::vector<std::string> IsQualifiedName(std::string_view value);
// A label value: empty, or up to 63 characters of [-A-Za-z0-9_.] starting and ending alnum.
std::vector<std::string> IsValidLabelValue(std::string_view value);
std::vector<std::string> IsDNS1123Subdomain(std::string_view value);
std::vector<std::string> IsDNS1123Label(std::string_view value);
// "0", or an optional '-' then 1-9 then digits (no range check).
std::vector<std::string> IsDecimalInteger(std::string_view value);

// --- Taints and tolerations ------------------------------------------------------------------

// Node.spec.taints (upstream validateNodeTaints). `path` is the list's path, e.g.
// "metadata.taints" (sic, upstream) or the legacy annotation's path.
FieldErrorList ValidateNodeTaints(std::span<const Taint> taints, std::string_view path);

// A toleration list (upstream ValidateTolerations), e.g. `path` = "spec.tolerations".
// `allow_comparison_operators` admits Lt/Gt; compute it with AllowComparisonOperators.
FieldErrorList ValidateTolerations(std::span<const Toleration> tolerations, std::string_view path,
                                   bool allow_comparison_operators);

// Whether Lt/Gt are admitted: the TaintTolerationComparisonOperators gate is on, or the old
// object already uses them (ratcheting, so an existing object stays updatable when the gate is
// turned off). `old_tolerations` is empty on create.
bool AllowComparisonOperators(const FeatureGates& gates,
                              std::span<const Toleration> old_tolerations);

// A pod update's tolerations (upstream validateOnlyAddedTolerations): every old toleration must
// still be present, compared on all fields but tolerationSeconds; otherwise the single error
// `<path>: Forbidden: existing toleration can not be modified except its tolerationSeconds`.
// Then the new list is validated as by ValidateTolerations, with ratcheting against the old list.
FieldErrorList ValidatePodTolerationsUpdate(std::span<const Toleration> old_tolerations,
                                            std::span<const Toleration> new_tolerations,
                                            const FeatureGates& gates,
                                            std::string_view path = "spec.tolerations");

}  // namespace kt
