#include "server/status_json.h"

#include <rapidjson/writer.h>

#include "api/json_writer.h"
#include "api/patch.h"

namespace kt::server {

namespace {

using JsonWriter = api::JsonWriter;

void Put(JsonWriter& w, std::string_view s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

// Writes `"key":"value"` unless value is empty (Go's omitempty).
void PutNonEmpty(JsonWriter& w, std::string_view key, std::string_view value) {
  if (value.empty()) return;
  Put(w, key);
  Put(w, value);
}

// schema.GroupResource.String(): "pods", "leases.coordination.k8s.io".
std::string QualifiedResource(std::string_view group, std::string_view resource) {
  std::string out(resource);
  if (!group.empty()) out.append(".").append(group);
  return out;
}

StatusDetails ResourceDetails(std::string_view group, std::string_view resource,
                              std::string_view name) {
  StatusDetails d;
  d.name = name;
  d.group = group;
  d.kind = resource;
  return d;
}

std::string JoinComma(std::span<const std::string_view> items) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ", ";
    out.append(items[i]);
  }
  return out;
}

}  // namespace

std::string StatusError::Json() const {
  // Member order and omitempty rules of metav1.Status / StatusDetails / StatusCause.
  std::string buf;
  JsonWriter w(&buf);
  w.StartObject();
  Put(w, "kind");
  Put(w, "Status");
  Put(w, "apiVersion");
  Put(w, "v1");
  Put(w, "metadata");
  w.StartObject();
  w.EndObject();
  Put(w, "status");
  Put(w, "Failure");
  PutNonEmpty(w, "message", message);
  PutNonEmpty(w, "reason", reason);
  if (details) {
    Put(w, "details");
    w.StartObject();
    PutNonEmpty(w, "name", details->name);
    PutNonEmpty(w, "group", details->group);
    PutNonEmpty(w, "kind", details->kind);
    PutNonEmpty(w, "uid", details->uid);
    if (!details->causes.empty()) {
      Put(w, "causes");
      w.StartArray();
      for (const StatusCause& c : details->causes) {
        w.StartObject();
        PutNonEmpty(w, "reason", c.reason);
        PutNonEmpty(w, "message", c.message);
        PutNonEmpty(w, "field", c.field);
        w.EndObject();
      }
      w.EndArray();
    }
    if (details->retry_after_seconds != 0) {
      Put(w, "retryAfterSeconds");
      w.Int(details->retry_after_seconds);
    }
    w.EndObject();
  }
  if (code != 0) {
    Put(w, "code");
    w.Int(code);
  }
  w.EndObject();
  w.Finish();
  return buf;
}

Status StatusError::ToStatus() const {
  for (StatusCode c :
       {StatusCode::kBadRequest, StatusCode::kUnauthorized, StatusCode::kForbidden,
        StatusCode::kNotFound, StatusCode::kMethodNotAllowed, StatusCode::kAlreadyExists,
        StatusCode::kConflict, StatusCode::kGone, StatusCode::kRequestEntityTooLarge,
        StatusCode::kUnsupportedMediaType, StatusCode::kInvalid, StatusCode::kTooManyRequests,
        StatusCode::kInternal, StatusCode::kUnavailable, StatusCode::kTimeout}) {
    if (HttpCode(c) == code && ReasonName(c) == reason) return Status(c, message);
  }
  return Status(StatusCode::kInternal, message);
}

StatusError FromStatus(const Status& status) {
  if (status.ok()) return NewInternalError("an OK status was reported as an error");
  StatusError e;
  e.code = HttpCode(status.code());
  e.reason = ReasonName(status.code());
  e.message = status.message();
  return e;
}

std::string SuccessStatusJson(int code) {
  return R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","code":)" +
         std::to_string(code) + "}";
}

// --- k8s.io/apimachinery pkg/api/errors/errors.go ---------------------------------------------

StatusError NewNotFound(std::string_view group, std::string_view resource, std::string_view name) {
  return {404, "NotFound", QualifiedResource(group, resource) + " " + GoQuote(name) + " not found",
          ResourceDetails(group, resource, name)};
}

StatusError NewAlreadyExists(std::string_view group, std::string_view resource,
                             std::string_view name) {
  return {409, "AlreadyExists",
          QualifiedResource(group, resource) + " " + GoQuote(name) + " already exists",
          ResourceDetails(group, resource, name)};
}

StatusError NewConflict(std::string_view group, std::string_view resource, std::string_view name,
                        std::string_view err) {
  return {409, "Conflict",
          "Operation cannot be fulfilled on " + QualifiedResource(group, resource) + " " +
              GoQuote(name) + ": " + std::string(err),
          ResourceDetails(group, resource, name)};
}

StatusError NewInvalid(std::string_view group, std::string_view kind, std::string_view name,
                       std::span<const FieldError> errors) {
  // schema.GroupKind.String(): "Pod", "Lease.coordination.k8s.io".
  std::string qualified_kind(kind);
  if (!group.empty()) qualified_kind.append(".").append(group);
  StatusDetails d;
  d.name = name;
  d.group = group;
  d.kind = kind;
  d.causes.reserve(errors.size());
  for (const FieldError& fe : errors) {
    d.causes.push_back({std::string(fe.Reason()), fe.ErrorBody(), fe.field});
  }
  return {422, "Invalid", InvalidObjectMessage(qualified_kind, name, errors), std::move(d)};
}

StatusError NewForbidden(std::string_view group, std::string_view resource, std::string_view name,
                         std::string_view err) {
  std::string message;
  if (resource.empty() && group.empty()) {
    message = "forbidden: " + std::string(err);
  } else if (name.empty()) {
    message = QualifiedResource(group, resource) + " is forbidden: " + std::string(err);
  } else {
    message = QualifiedResource(group, resource) + " " + GoQuote(name) +
              " is forbidden: " + std::string(err);
  }
  return {403, "Forbidden", std::move(message), ResourceDetails(group, resource, name)};
}

StatusError NewUnauthorized(std::string_view reason) {
  return {401, "Unauthorized", reason.empty() ? "not authorized" : std::string(reason),
          std::nullopt};
}

StatusError NewMethodNotSupported(std::string_view group, std::string_view resource,
                                  std::string_view action) {
  StatusDetails d;
  d.group = group;
  d.kind = resource;
  return {405, "MethodNotAllowed",
          std::string(action) + " is not supported on resources of kind " +
              GoQuote(QualifiedResource(group, resource)),
          std::move(d)};
}

StatusError NewUnsupportedMediaType(std::span<const std::string_view> accepted) {
  // k8s.io/apiserver pkg/endpoints/handlers/negotiation/errors.go errUnsupportedMediaType.
  return {415, "UnsupportedMediaType",
          "the body of the request was in an unknown format - accepted media types include: " +
              JoinComma(accepted),
          std::nullopt};
}

StatusError NewNotAcceptable(std::span<const std::string_view> accepted) {
  // negotiation/errors.go errNotAcceptable.
  return {406, "NotAcceptable",
          "only the following media types are accepted: " + JoinComma(accepted), std::nullopt};
}

StatusError NewResourceExpired(std::string_view message) {
  return {410, "Expired", std::string(message), std::nullopt};
}

StatusError NewTooOldResourceVersion(int64_t requested, int64_t oldest) {
  // k8s.io/apiserver pkg/storage/cacher watch_cache.go / etcd3: "too old resource version: %d
  // (%d)", wrapped with NewResourceExpired (NewGone in older releases).
  return NewResourceExpired("too old resource version: " + std::to_string(requested) + " (" +
                            std::to_string(oldest) + ")");
}

StatusError NewPatchNotApplicable() {
  return {422, "Invalid", std::string(api::kPatchRejectedMessage), StatusDetails()};
}

StatusError NewBadRequest(std::string_view message) {
  return {400, "BadRequest", std::string(message), std::nullopt};
}

StatusError NewFieldLabelNotSupported(std::string_view field) {
  // k/k pkg/apis/core/v1/conversion.go field label conversion funcs; handlers/get.go wraps the
  // error in NewBadRequest.
  return NewBadRequest("field label not supported: " + std::string(field));
}

StatusError NewInternalError(std::string_view err) {
  StatusDetails d;
  d.causes.push_back({"", std::string(err), ""});
  return {500, "InternalError", "Internal error occurred: " + std::string(err), std::move(d)};
}

StatusError NewTooManyRequests(std::string_view message, int32_t retry_after_seconds) {
  StatusDetails d;
  d.retry_after_seconds = retry_after_seconds;
  return {429, "TooManyRequests", std::string(message), std::move(d)};
}

StatusError NewServiceUnavailable(std::string_view message) {
  return {503, "ServiceUnavailable", std::string(message), std::nullopt};
}

StatusError NewTimeoutError(std::string_view message, int32_t retry_after_seconds) {
  StatusDetails d;
  d.retry_after_seconds = retry_after_seconds;
  return {504, "Timeout", "Timeout: " + std::string(message), std::move(d)};
}

}  // namespace kt::server
