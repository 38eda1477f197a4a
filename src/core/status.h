// Status and Result: how kubetaint reports errors without exceptions.
//
// A Status is a code plus a message. The OK status holds no allocation, so returning it costs
// nothing. Codes follow the Kubernetes metav1.Status reasons, so that the API server maps a
// Status to an HTTP response with one table. Result<T> is a value or a Status.
//
//   Result<Taint> t = ParseTaint("key=value:NoSchedule");
//   if (!t) return t.error();
//
// Thread safety: values; safe to copy between threads.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include <tl/expected.hpp>

namespace kt {

enum class StatusCode : unsigned char {
  kOk = 0,
  kBadRequest,             // 400: malformed input (JSON, YAML, flags, selectors, taint specs)
  kUnauthorized,           // 401
  kForbidden,              // 403
  kNotFound,               // 404
  kMethodNotAllowed,       // 405
  kAlreadyExists,          // 409
  kConflict,               // 409: stale resourceVersion, precondition failed
  kGone,                   // 410: a compacted revision ("Expired")
  kRequestEntityTooLarge,  // 413
  kUnsupportedMediaType,   // 415
  kInvalid,                // 422: the object fails validation
  kTooManyRequests,        // 429
  kInternal,               // 500
  kUnavailable,            // 503
  kTimeout,                // 504
};

// The upstream HTTP status code for a StatusCode.
int HttpCode(StatusCode code);
// The upstream metav1.Status `reason` for a StatusCode ("NotFound", "Invalid", ...).
std::string_view ReasonName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message);

  static Status Ok() { return Status(); }

  bool ok() const { return rep_ == nullptr; }
  StatusCode code() const { return rep_ ? rep_->code : StatusCode::kOk; }
  // The message; empty for OK.
  const std::string& message() const;
  // "NotFound: message"; "OK" for OK.
  std::string ToString() const;

  // Returns a status with `prefix` prepended to the message ("file.yaml: " + message).
  Status WithPrefix(std::string_view prefix) const;

 private:
  struct Rep {
    StatusCode code;
    std::string message;
  };
  std::shared_ptr<const Rep> rep_;
};

inline Status BadRequest(std::string m) { return Status(StatusCode::kBadRequest, std::move(m)); }
inline Status NotFound(std::string m) { return Status(StatusCode::kNotFound, std::move(m)); }
inline Status Invalid(std::string m) { return Status(StatusCode::kInvalid, std::move(m)); }
inline Status Conflict(std::string m) { return Status(StatusCode::kConflict, std::move(m)); }
inline Status AlreadyExists(std::string m) {
  return Status(StatusCode::kAlreadyExists, std::move(m));
}
inline Status Internal(std::string m) { return Status(StatusCode::kInternal, std::move(m)); }

template <class T>
using Result = tl::expected<T, Status>;

// Makes an error Result from a Status: `return Err(NotFound("..."));`
inline tl::unexpected<Status> Err(Status s) { return tl::unexpected<Status>(std::move(s)); }

}  // namespace kt

// Returns early from the enclosing function when `expr` (a Status) is not OK.
#define KT_RETURN_IF_ERROR(expr)             \
  do {                                       \
    ::kt::Status kt_status_ = (expr);        \
    if (!kt_status_.ok()) return kt_status_; \
  } while (0)
