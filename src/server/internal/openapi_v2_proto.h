// The protobuf form of an OpenAPI v2 document: gnostic's openapi_v2.Document
// (github.com/google/gnostic-models openapiv2/OpenAPIv2.proto), what kube-openapi serves for
// `Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf` (pkg/handler ToProtoBinary:
// openapi_v2.ParseDocument of the JSON, then proto.Marshal) and the only form of /openapi/v2
// kubectl reads.
//
// As gnostic compiles a document: a `$ref` parameter or response is a JsonReference, every other
// parameter a BodyParameter or the NonBodyParameter sub-schema its `in` names; `type` is a
// TypeItem, `items` an ItemsItem, `additionalProperties` a schema or a boolean; each `x-` member
// is a NamedAny whose `yaml` holds the value. That text is the value as JSON, which every YAML
// parser reads as the same value (gnostic writes block-style YAML; clients parse it, e.g.
// kube-openapi pkg/util/proto vendorExtensionToMap). Fields in field-number order, members in
// document order, proto3 defaults left out.
//
// Thread safety: a pure function.
#pragma once

#include <string>

#include <rapidjson/document.h>

#include "core/status.h"

namespace kt::server::internal {

// The encoded Document. kBadRequest naming the member for anything gnostic would not compile
// or this does not encode (a member unknown where it stands, an `in` of no parameter kind): a
// newer upstream document that adds one needs this taught, rather than the fact dropped.
Result<std::string> EncodeOpenApiV2Protobuf(const rapidjson::Value& swagger);

}  // namespace kt::server::internal
