// The Kubernetes protobuf envelope, decoded for the request bodies kubectl sends as protobuf
// (kubectl-protocol.md §5): `create namespace` (Namespace), `create priorityclass`
// (PriorityClass), drain's DELETE fallback
// (DeleteOptions), `auth can-i` (SelfSubjectAccessReview, SelfSubjectRulesReview) and
// `auth whoami` (SelfSubjectReview).
//
//   Result<rapidjson::Document> doc = DecodeProtobufBody(body);  // "k8s\0" + runtime.Unknown
//   if (!doc) return doc.error();   // 400 malformed, 415 a kind we do not decode
//   // *doc is what the JSON body would have been: {"kind":"Namespace","apiVersion":"v1",
//   //  "metadata":{"name":"team-b","creationTimestamp":null},"spec":{},"status":{}}
//
// Contract:
// * The result has the members Go's encoding/json would write for the decoded upstream type, in
//   the same order: empty `omitempty` fields left out, pointer fields present exactly when they
//   were on the wire (proto2), structs always present, maps with sorted keys, metav1.Time as
//   RFC 3339 seconds (null when unset), invalid UTF-8 replaced by U+FFFD. `kind` and
//   `apiVersion` come from the envelope's TypeMeta.
// * Unknown fields are skipped (their wire format is still checked). Malformed or truncated
//   input is kBadRequest with gogo-protobuf's wording ("unexpected EOF", "proto: integer
//   overflow", ...); it never reads out of bounds.
// * ObjectMeta is decoded in full except managedFields; lists the kinds above only carry in
//   responses (status.resourceRules, conditions) are left out.
//
// Thread safety: pure functions.
#pragma once

#include <string_view>

#include <rapidjson/document.h>

#include "core/status.h"

namespace kt::api {

// The four bytes that open every Kubernetes protobuf body.
inline constexpr std::string_view kProtobufMagic{"k8s\0", 4};

// Decodes a whole `application/vnd.kubernetes.protobuf` body.
Result<rapidjson::Document> DecodeProtobufBody(std::string_view body);

// Whether DecodeProtobufBody decodes objects of `kind`.
bool SupportsProtobufKind(std::string_view kind);

}  // namespace kt::api
