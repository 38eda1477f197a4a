#include "core/status.h"

namespace kt {

namespace {
const std::string& EmptyString() {
  static const std::string* empty = new std::string();
  return *empty;
}
}  // namespace

Status::Status(StatusCode code, std::string message) {
  if (code != StatusCode::kOk) rep_ = std::make_shared<const Rep>(Rep{code, std::move(message)});
}

const std::string& Status::message() const { return rep_ ? rep_->message : EmptyString(); }

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string out(ReasonName(code()));
  out += ": ";
  out += message();
  return out;
}

Status Status::WithPrefix(std::string_view prefix) const {
  if (ok()) return *this;
  std::string m(prefix);
  m += message();
  return Status(code(), std::move(m));
}

int HttpCode(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return 200;
    case StatusCode::kBadRequest:
      return 400;
    case StatusCode::kUnauthorized:
      return 401;
    case StatusCode::kForbidden:
      return 403;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kMethodNotAllowed:
      return 405;
    case StatusCode::kAlreadyExists:
      return 409;
    case StatusCode::kConflict:
      return 409;
    case StatusCode::kGone:
      return 410;
    case StatusCode::kRequestEntityTooLarge:
      return 413;
    case StatusCode::kUnsupportedMediaType:
      return 415;
    case StatusCode::kInvalid:
      return 422;
    case StatusCode::kTooManyRequests:
      return 429;
    case StatusCode::kInternal:
      return 500;
    case StatusCode::kUnavailable:
      return 503;
    case StatusCode::kTimeout:
      return 504;
  }
  return 500;
}

std::string_view ReasonName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "OK";
    case StatusCode::kBadRequest:
      return "BadRequest";
    case StatusCode::kUnauthorized:
      return "Unauthorized";
    case StatusCode::kForbidden:
      return "Forbidden";
    case StatusCode::kNotFound:
      return "NotFound";
    case StatusCode::kMethodNotAllowed:
      return "MethodNotAllowed";
    case StatusCode::kAlreadyExists:
      return "AlreadyExists";
    case StatusCode::kConflict:
      return "Conflict";
    case StatusCode::kGone:
      return "Expired";
    case StatusCode::kRequestEntityTooLarge:
      return "RequestEntityTooLarge";
    case StatusCode::kUnsupportedMediaType:
      return "UnsupportedMediaType";
    case StatusCode::kInvalid:
      return "Invalid";
    case StatusCode::kTooManyRequests:
      return "TooManyRequests";
    case StatusCode::kInternal:
      return "InternalError";
    case StatusCode::kUnavailable:
      return "ServiceUnavailable";
    case StatusCode::kTimeout:
      return "Timeout";
  }
  return "Unknown";
}

}  // namespace kt
