// The error type of the registry and the API handlers: a metav1.Status (server/status_json.h)
// with upstream reason, code, message and details, so that kubectl prints what it prints against
// a real API server. The helpers here name the object by its ResourceInfo.
#pragma once

#include <string>
#include <string_view>

#include <tl/expected.hpp>

#include "core/status.h"
#include "core/validation.h"
#include "server/resources.h"
#include "server/status_json.h"

namespace kt::server {

using ApiError = StatusError;
template <class T>
using ApiResult = tl::expected<T, ApiError>;
inline tl::unexpected<ApiError> ApiErr(ApiError e) {
  return tl::unexpected<ApiError>(std::move(e));
}
inline tl::unexpected<ApiError> ApiErr(const Status& s) { return ApiErr(FromStatus(s)); }

inline ApiError NotFoundError(const ResourceInfo& info, std::string_view name) {
  return NewNotFound(info.group, info.plural, name);
}
inline ApiError AlreadyExistsError(const ResourceInfo& info, std::string_view name) {
  return NewAlreadyExists(info.group, info.plural, name);
}
// A stale resourceVersion unless `detail` says otherwise.
inline ApiError ConflictError(const ResourceInfo& info, std::string_view name,
                              std::string_view detail = kOptimisticLockErrorMsg) {
  return NewConflict(info.group, info.plural, name, detail);
}
inline ApiError InvalidError(const ResourceInfo& info, std::string_view name,
                             const FieldErrorList& causes) {
  return NewInvalid(info.group, info.kind, name, causes);
}
inline ApiError BadRequestError(std::string_view message) { return NewBadRequest(message); }

// Whether `e` is a 409 Conflict (not AlreadyExists).
inline bool IsConflict(const ApiError& e) { return e.reason == "Conflict"; }
// Whether `e` is the conflict of a write that lost to a newer version of its object (the
// optimistic lock), which the same write may win on that version; not a failed precondition
// (a UID or resourceVersion the request named), which no retry changes.
inline bool IsStaleWriteConflict(const ApiError& e) {
  return IsConflict(e) && std::string_view(e.message).ends_with(kOptimisticLockErrorMsg);
}

}  // namespace kt::server
