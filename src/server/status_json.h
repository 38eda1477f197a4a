// metav1.Status response bodies: what the API server answers for an error (and for the few
// operations that answer success with a Status, such as an eviction), with upstream's `reason`,
// HTTP `code`, message text and `details`, so that kubectl prints what users know
// (kubectl-protocol.md §8):
//
//   StatusError e = NewNotFound("coordination.k8s.io", "leases", "node-1");
//   responder->Respond(e.code, "application/json", MakeBody(e.Json()));
//   // 404 {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
//   //      "message":"leases.coordination.k8s.io \"node-1\" not found","reason":"NotFound",
//   //      "details":{"name":"node-1","group":"coordination.k8s.io","kind":"leases"},"code":404}
//
// The New* constructors are named after and mirror k8s.io/apimachinery pkg/api/errors/errors.go
// (and the few API server handlers noted at each one); names are quoted as Go's %q does.
// `details.kind` is the resource (plural) for NotFound / AlreadyExists / Conflict / Forbidden
// and the Kind for Invalid, as upstream.
//
// Thread safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "core/validation.h"

namespace kt::server {

// metav1.StatusCause.
struct StatusCause {
  std::string reason;  // CauseType: "FieldValueInvalid", "NamespaceTerminating", ...
  std::string message;
  std::string field;
};

// metav1.StatusDetails; empty members are omitted from the JSON.
struct StatusDetails {
  std::string name;
  std::string group;
  std::string kind;
  std::string uid;
  std::vector<StatusCause> causes;
  int32_t retry_after_seconds = 0;
};

// A failure Status. `reason` and `code` are free-standing (not only a kt::StatusCode) because
// some upstream answers have no StatusCode of their own (406 NotAcceptable, 410 Gone).
struct StatusError {
  int code = 500;
  std::string reason;  // metav1.StatusReason: "NotFound", "Invalid", "Expired", ...
  std::string message;
  std::optional<StatusDetails> details;  // nullopt: no "details" member

  // The response body.
  std::string Json() const;
  // Back to a kt::Status (the StatusCode whose HttpCode/ReasonName match, else kInternal), for
  // code paths that carry Status values.
  Status ToStatus() const;
};

// A kt::Status as a Status body without details: reason from ReasonName, code from HttpCode.
// For statuses produced elsewhere (decode errors, selector parse errors, store failures) whose
// message is already the upstream text. An OK status becomes a 500, since it is not an error.
StatusError FromStatus(const Status& status);

// `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","code":<code>}`: the
// answer to an eviction (201) and other operations that return no object.
std::string SuccessStatusJson(int code);

// --- Upstream errors ---------------------------------------------------------------------------
// `group` is "" for the core group; `resource` is the plural ("pods"). The qualified resource in
// messages is "pods" or "leases.coordination.k8s.io".

// 404 `pods "demo" not found`.
StatusError NewNotFound(std::string_view group, std::string_view resource, std::string_view name);
// 409 `pods "demo" already exists`.
StatusError NewAlreadyExists(std::string_view group, std::string_view resource,
                             std::string_view name);
// 409 `Operation cannot be fulfilled on nodes "node-1": <err>`.
StatusError NewConflict(std::string_view group, std::string_view resource, std::string_view name,
                        std::string_view err);
// The <err> of a stale resourceVersion (k8s.io/apiserver pkg/registry/generic/registry
// OptimisticLockErrorMsg).
inline constexpr std::string_view kOptimisticLockErrorMsg =
    "the object has been modified; please apply your changes to the latest version and try again";
// 422 `Pod "bad" is invalid: <aggregate>` with one cause per field error (reason = the error's
// type, message = its body without the field, field = its path). `kind` is the Kind ("Pod");
// the qualified kind in the message is "Lease.coordination.k8s.io" for grouped kinds.
StatusError NewInvalid(std::string_view group, std::string_view kind, std::string_view name,
                       std::span<const FieldError> errors);
// 403 `pods "demo" is forbidden: <err>` (`pods is forbidden: <err>` without a name).
StatusError NewForbidden(std::string_view group, std::string_view resource, std::string_view name,
                         std::string_view err);
// 401 with `reason` as the message ("not authorized" when empty). kube-apiserver answers every
// request it cannot authenticate with NewUnauthorized("Unauthorized") (k8s.io/apiserver
// pkg/endpoints/filters/authentication.go Unauthorized); see server/authn.h.
StatusError NewUnauthorized(std::string_view reason);
// 405 `<action> is not supported on resources of kind "pods"`.
StatusError NewMethodNotSupported(std::string_view group, std::string_view resource,
                                  std::string_view action);
// 415 `the body of the request was in an unknown format - accepted media types include: ...`
// (k8s.io/apiserver pkg/endpoints/handlers/negotiation errors.go).
StatusError NewUnsupportedMediaType(std::span<const std::string_view> accepted);
// What a create/update body may be (the serializers kube-apiserver registers; CBOR is behind an
// alpha gate in 1.35 and off).
inline constexpr std::string_view kBodyMediaTypes[] = {"application/json", "application/yaml",
                                                       "application/vnd.kubernetes.protobuf"};
// What a PATCH body may be for built-in kinds (handlers/patch.go, in that order; apply-patch+cbor
// is behind the CBOR gate, off).
inline constexpr std::string_view kPatchMediaTypes[] = {
    "application/json-patch+json", "application/merge-patch+json",
    "application/strategic-merge-patch+json", "application/apply-patch+yaml"};
// 406 `only the following media types are accepted: ...` (negotiation errNotAcceptable).
StatusError NewNotAcceptable(std::span<const std::string_view> accepted);
// 410 Expired with `message` (NewResourceExpired).
StatusError NewResourceExpired(std::string_view message);
// 410 Expired `too old resource version: 1 (200)`: a watch or list from a compacted revision
// (k8s.io/apiserver pkg/storage errors / the watch cache).
StatusError NewTooOldResourceVersion(int64_t requested, int64_t oldest);
// 400 with `message` (NewBadRequest).
StatusError NewBadRequest(std::string_view message);
// 400 `field label not supported: spec.bogus` (the field-selector conversion error the list
// handler wraps with NewBadRequest).
StatusError NewFieldLabelNotSupported(std::string_view field);
// 500 `Internal error occurred: <err>` with the error as the one cause.
StatusError NewInternalError(std::string_view err);
// 429 with `message` and details.retryAfterSeconds (eviction refusals, rate limits).
StatusError NewTooManyRequests(std::string_view message, int32_t retry_after_seconds);
// 503 with `message`.
StatusError NewServiceUnavailable(std::string_view message);
// 504 `Timeout: <message>`.
StatusError NewTimeoutError(std::string_view message, int32_t retry_after_seconds);
// 422 Invalid `the server rejected our request due to an error in our request` with empty
// details: what kube-apiserver answers when a JSON or strategic merge patch cannot be applied (a
// failed `test`, a path that is not there), NewGenericServerResponse(422) with no resource.
StatusError NewPatchNotApplicable();

}  // namespace kt::server
