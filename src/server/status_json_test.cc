#include "server/status_json.h"

#include <string>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "server/api_error.h"

namespace kt::server {
namespace {

// Exact bodies: kubectl prints `message`, and for 422 rebuilds the text from details
// (kubectl-protocol.md §8), so every byte a user sees comes from here.

TEST(StatusJsonTest, NotFound) {
  StatusError e = NewNotFound("", "pods", "demo");
  EXPECT_EQ(e.code, 404);
  // The body of kubectl-protocol.md §8, byte for byte.
  EXPECT_EQ(e.Json(), R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
                      R"("message":"pods \"demo\" not found","reason":"NotFound",)"
                      R"("details":{"name":"demo","kind":"pods"},"code":404})");
  EXPECT_EQ(NewNotFound("coordination.k8s.io", "leases", "x").Json(),
            R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
            R"("message":"leases.coordination.k8s.io \"x\" not found","reason":"NotFound",)"
            R"("details":{"name":"x","group":"coordination.k8s.io","kind":"leases"},"code":404})");
  // Names are quoted as Go's %q does.
  EXPECT_EQ(NewNotFound("", "pods", "a\"b").message, R"(pods "a\"b" not found)");
}

TEST(StatusJsonTest, AlreadyExistsAndConflict) {
  EXPECT_EQ(NewAlreadyExists("", "pods", "demo").Json(),
            R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
            R"("message":"pods \"demo\" already exists","reason":"AlreadyExists",)"
            R"("details":{"name":"demo","kind":"pods"},"code":409})");
  StatusError conflict = NewConflict("", "nodes", "node-1", kOptimisticLockErrorMsg);
  EXPECT_EQ(conflict.code, 409);
  EXPECT_EQ(conflict.reason, "Conflict");
  EXPECT_EQ(conflict.message,
            "Operation cannot be fulfilled on nodes \"node-1\": the object has been modified; "
            "please apply your changes to the latest version and try again");
}

TEST(StatusJsonTest, InvalidWithOneCause) {
  FieldErrorList errs = {FieldError::Required("spec.containers[0].image")};
  // The full 422 of kubectl-protocol.md §8.
  EXPECT_EQ(NewInvalid("", "Pod", "bad", errs).Json(),
            R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
            R"("message":"Pod \"bad\" is invalid: spec.containers[0].image: Required value",)"
            R"("reason":"Invalid","details":{"name":"bad","kind":"Pod","causes":[)"
            R"({"reason":"FieldValueRequired","message":"Required value",)"
            R"("field":"spec.containers[0].image"}]},"code":422})");
}

TEST(StatusJsonTest, InvalidWithSeveralCausesAndAGroup) {
  std::string_view effects[] = {"NoSchedule", "PreferNoSchedule", "NoExecute"};
  FieldErrorList errs = {
      FieldError::NotSupported("metadata.taints[0].effect", "\"Bogus\"", effects),
      FieldError::Invalid("spec.holderIdentity", "\"\"", "must not be empty"),
  };
  StatusError e = NewInvalid("coordination.k8s.io", "Lease", "node-1", errs);
  EXPECT_EQ(e.code, 422);
  EXPECT_EQ(e.message,
            "Lease.coordination.k8s.io \"node-1\" is invalid: [metadata.taints[0].effect: "
            "Unsupported value: \"Bogus\": supported values: \"NoSchedule\", "
            "\"PreferNoSchedule\", \"NoExecute\", spec.holderIdentity: Invalid value: \"\": must "
            "not be empty]");
  ASSERT_TRUE(e.details);
  EXPECT_EQ(e.details->group, "coordination.k8s.io");
  EXPECT_EQ(e.details->kind, "Lease");
  ASSERT_EQ(e.details->causes.size(), 2u);
  EXPECT_EQ(e.details->causes[0].reason, "FieldValueNotSupported");
  EXPECT_EQ(e.details->causes[0].field, "metadata.taints[0].effect");
  EXPECT_EQ(e.details->causes[0].message,
            "Unsupported value: \"Bogus\": supported values: \"NoSchedule\", "
            "\"PreferNoSchedule\", \"NoExecute\"")
      << "the cause message is the error without its field";
  EXPECT_EQ(e.details->causes[1].reason, "FieldValueInvalid");

  // No causes: the message stops at "is invalid" (kubectl then prints only that line).
  EXPECT_EQ(NewInvalid("", "Node", "node-1", {}).message, "Node \"node-1\" is invalid");
}

TEST(StatusJsonTest, RequestErrors) {
  StatusError method = NewMethodNotSupported("", "nodes", "deletecollection");
  EXPECT_EQ(method.code, 405);
  EXPECT_EQ(method.Json(),
            R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
            R"("message":"deletecollection is not supported on resources of kind \"nodes\"",)"
            R"("reason":"MethodNotAllowed","details":{"kind":"nodes"},"code":405})");

  EXPECT_EQ(NewUnsupportedMediaType(kBodyMediaTypes).Json(),
            R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
            R"("message":"the body of the request was in an unknown format - accepted media )"
            R"(types include: application/json, application/yaml, )"
            R"(application/vnd.kubernetes.protobuf","reason":"UnsupportedMediaType","code":415})");
  EXPECT_EQ(NewUnsupportedMediaType(kPatchMediaTypes).message,
            "the body of the request was in an unknown format - accepted media types include: "
            "application/json-patch+json, application/merge-patch+json, "
            "application/strategic-merge-patch+json, application/apply-patch+yaml");

  StatusError not_acceptable = NewNotAcceptable(kBodyMediaTypes);
  EXPECT_EQ(not_acceptable.code, 406);
  EXPECT_EQ(not_acceptable.reason, "NotAcceptable");

  EXPECT_EQ(NewFieldLabelNotSupported("spec.bogus").Json(),
            R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
            R"("message":"field label not supported: spec.bogus","reason":"BadRequest",)"
            R"("code":400})");
}

TEST(StatusJsonTest, TooOldResourceVersion) {
  // The watch ERROR event object of kubectl-protocol.md §6.
  EXPECT_EQ(NewTooOldResourceVersion(1, 200).Json(),
            R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
            R"j("message":"too old resource version: 1 (200)","reason":"Expired","code":410})j");
}

TEST(StatusJsonTest, ServerSideErrors) {
  EXPECT_EQ(NewInternalError("disk I/O error").Json(),
            R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
            R"("message":"Internal error occurred: disk I/O error","reason":"InternalError",)"
            R"("details":{"causes":[{"message":"disk I/O error"}]},"code":500})");
  EXPECT_EQ(NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption "
                               "budget.",
                               10)
                .Json(),
            R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
            R"("message":"Cannot evict pod as it would violate the pod's disruption budget.",)"
            R"("reason":"TooManyRequests","details":{"retryAfterSeconds":10},"code":429})");
  EXPECT_EQ(NewServiceUnavailable("shutting down").code, 503);
  EXPECT_EQ(NewTimeoutError("request did not complete within 60s", 0).message,
            "Timeout: request did not complete within 60s");
}

TEST(StatusJsonTest, SuccessStatus) {
  // What an eviction answers (kubectl-protocol.md §7.9).
  EXPECT_EQ(SuccessStatusJson(201),
            R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","code":201})");
}

TEST(StatusJsonTest, ConvertsKtStatusBothWays) {
  struct Case {
    Status status;
    int code;
    std::string reason;
  };
  const Case cases[] = {
      {BadRequest("invalid JSON at offset 3"), 400, "BadRequest"},
      {NotFound(R"(pods "x" not found)"), 404, "NotFound"},
      {Status(StatusCode::kGone, "too old resource version: 1 (2)"), 410, "Expired"},
      {Status(StatusCode::kUnsupportedMediaType, "m"), 415, "UnsupportedMediaType"},
      {Invalid("Pod \"x\" is invalid"), 422, "Invalid"},
      {Status(StatusCode::kTooManyRequests, "slow down"), 429, "TooManyRequests"},
      {Internal("boom"), 500, "InternalError"},
      {Status(StatusCode::kUnavailable, "starting"), 503, "ServiceUnavailable"},
  };
  for (const Case& c : cases) {
    StatusError e = FromStatus(c.status);
    EXPECT_EQ(e.code, c.code) << c.status.ToString();
    EXPECT_EQ(e.reason, c.reason);
    EXPECT_EQ(e.message, c.status.message());
    EXPECT_FALSE(e.details);
    Status back = e.ToStatus();
    EXPECT_EQ(back.code(), c.status.code());
    EXPECT_EQ(back.message(), c.status.message());
  }
  EXPECT_EQ(NewNotAcceptable(kBodyMediaTypes).ToStatus().code(), StatusCode::kInternal)
      << "406 has no StatusCode of its own";
  EXPECT_EQ(FromStatus(Status::Ok()).code, 500) << "OK is not an error";

  // Every body is JSON that says Failure.
  rapidjson::Document doc;
  doc.Parse(FromStatus(BadRequest("a \"quoted\"\nmessage")).Json().c_str());
  ASSERT_FALSE(doc.HasParseError());
  EXPECT_STREQ(doc["status"].GetString(), "Failure");
  EXPECT_STREQ(doc["message"].GetString(), "a \"quoted\"\nmessage");
}

// The registry names errors by ResourceInfo (server/api_error.h); the bodies must be upstream's.
TEST(StatusJsonTest, RegistryErrorsAreUpstreamBodies) {
  const FieldErrorList causes = {FieldError::Required("spec.containers[0].image")};
  EXPECT_EQ(InvalidError(Info(Resource::kPods), "bad", causes).Json(),
            R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
            R"("message":"Pod \"bad\" is invalid: spec.containers[0].image: Required value",)"
            R"("reason":"Invalid","details":{"name":"bad","kind":"Pod","causes":[{"reason":)"
            R"("FieldValueRequired","message":"Required value","field":)"
            R"("spec.containers[0].image"}]},"code":422})");
  EXPECT_EQ(NotFoundError(Info(Resource::kLeases), "node-1").message,
            "leases.coordination.k8s.io \"node-1\" not found");
  // A watch cache's kGone becomes the upstream 410 Expired body.
  EXPECT_EQ(FromStatus(Status(StatusCode::kGone, "too old resource version: 1 (200)")).Json(),
            NewTooOldResourceVersion(1, 200).Json());
}

}  // namespace
}  // namespace kt::server
