// OpenAPI v2 (/openapi/v2) and v3 (/openapi/v3, /openapi/v3/<group-version>) as kube-apiserver
// 1.35 serves them, for what kubetaint serves: what `kubectl explain` reads (v3; v2 with
// --output=plaintext-openapiv2), and what `kubectl create/apply -f` look at before they trust the
// server with field validation (kubectl-protocol.md §3).
//
//   const OpenApi& openapi = ServedOpenApi();  // built once, from the embedded schema
//   OpenApiResponse r = ServeOpenApi(openapi, {.path = "/openapi/v3/api/v1",
//                                              .hash = query.Get("hash"),
//                                              .accept = request.Header("Accept"),
//                                              .if_none_match = request.Header("If-None-Match")});
//   if (r.status != 0) responder.Respond(r.status, r.content_type, r.body, r.headers);
//
// The documents are made from upstream's own text, never written by hand: the OpenAPI v2 document
// of the served resources (third_party/kubernetes-openapi/served-schema.json: upstream's
// `paths`, `parameters` and `definitions` of those resources, made by generate.py there).
// * v2: that swagger 2.0 document, `info.version` the server's (apiserver completeOpenAPI:
//   the gitVersion up to its first "-"), as JSON or as the protobuf of gnostic's
//   openapi_v2.Document (github.com/google/gnostic-models openapiv2/OpenAPIv2.proto), the
//   only form kubectl asks for (`kubectl explain --output=plaintext-openapiv2`).
// * v3: one document per group version, `openapi: 3.0.0`, made from the v2 paths of that group
//   version the way kube-openapi converts (pkg/openapiconv/convert.go ConvertV2ToV3) with what a
//   real server's builder (pkg/builder3) does differently: shared `#/parameters/` are inlined,
//   a body parameter becomes `requestBody` (`required` kept), every other parameter gets a
//   `schema` {type, format, uniqueItems}; a schema's `$ref` becomes `#/components/schemas/...`
//   and, when anything stands beside it (a description), moves into `allOf: [{$ref}]`
//   (pkg/builder3/util WrapRefs). `components.schemas` holds every definition reachable from
//   the group version's paths; `components.securitySchemes` the v2 securityDefinitions.
//   Upstream's v3 also carries `default` values (`default: {}` beside a struct's allOf); the v2
//   document has them pruned (pkg/handler/default_pruning.go), so they are absent here, and
//   kubectl explain does not print them.
// * Operations are upstream's for what the API server routes, their request body types less
//   server-side apply's (not served). PATCH lists application/strategic-merge-patch+json, as
//   upstream does: `kubectl apply` then computes its patch from these schemas (their
//   x-kubernetes-patch-strategy and -merge-key) rather than from its compiled-in types.
// * The v3 index: {"paths":{"api/v1":{"serverRelativeURL":"/openapi/v3/api/v1?hash=<ETag>"},..}}
//   for the served group versions only (upstream also lists "api", "apis/apps", "version", ...).
//
// HTTP, as upstream answers (kube-openapi pkg/handler/handler.go for v2, pkg/handler3/handler.go
// for a group version, kube-aggregator pkg/controllers/openapiv3/aggregator/aggregator.go for the
// v3 index and unknown group versions; net/http ServeContent for the rest):
// * ETag: `"<upper-case hex SHA-512 of the JSON bytes>"`, the same for the protobuf form; a
//   matching If-None-Match answers 304. Last-Modified: when the documents were built.
// * Accept (goautoneg order: q, then specific before wildcard, else as sent; q=0 is not
//   special): v2 takes application/json, application/com.github.proto-openapi.spec.v2@v1.0+protobuf
//   and ...spec.v2.v1.0+protobuf (both answered as `...v2.v1.0+protobuf`); v3 takes
//   application/json. Nothing acceptable: 406 with an empty body. `Vary: Accept` on both.
// * A group version requested with `?hash=`: the current hash adds `Cache-Control: public,
//   immutable` and `Expires` (a year on); another hash is a 301 to the current URL.
// * The index: `Content-Type: text/plain; charset=utf-8` (the aggregator sets none and Go sniffs
//   the JSON as text), no ETag. An unknown group version: 404 with an empty body.
//
// Not done: v3 in protobuf (application/com.github.proto-openapi.spec.v3...: 406 here; kubectl
// reads v3 as JSON), gzip of /openapi/v2, If-Modified-Since, Range.
//
// Thread safety: an OpenApi is immutable once built; ServedOpenApi() and ServeOpenApi() may be
// called from any thread.
#pragma once

#include <chrono>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "server/http.h"

namespace kt::server {

// One encoded document.
struct OpenApiDocument {
  Body body;
  std::string etag;  // upper-case hex SHA-512 of the JSON form, unquoted
};

// The v2 and v3 documents of one swagger 2.0 document, each encoded once.
class OpenApi {
 public:
  // Builds every document from a swagger 2.0 document such as served-schema.json; `version` is
  // the server's gitVersion, whose part before any "-" becomes info.version. kBadRequest for
  // malformed JSON, a dangling `$ref`, a path outside /api/v1 and /apis/<group>/<version>, or
  // a member the v2 protobuf has no field for (internal/openapi_v2_proto.h).
  static Result<std::unique_ptr<const OpenApi>> Build(std::string_view swagger_json,
                                                      std::string_view version);

  const OpenApiDocument& V2Json() const { return v2_json_; }
  const OpenApiDocument& V2Protobuf() const { return v2_protobuf_; }
  // GET /openapi/v3.
  const Body& V3Index() const { return v3_index_; }
  // GET /openapi/v3/<path>, path "api/v1" or "apis/apps/v1"; nullptr for one not served.
  const OpenApiDocument* V3(std::string_view path) const;
  // The group-version paths of the v3 documents, sorted: "api/v1", "apis/apps/v1", ...
  std::vector<std::string_view> V3Paths() const;
  // When the documents were built: their Last-Modified.
  std::chrono::system_clock::time_point built_at() const { return built_at_; }

  // Bytes the encoded documents take.
  size_t MemoryBytes() const;

 private:
  OpenApi() = default;
  struct GroupVersion {
    std::string path;  // "api/v1"
    OpenApiDocument document;
  };
  OpenApiDocument v2_json_;
  OpenApiDocument v2_protobuf_;
  Body v3_index_;
  std::vector<GroupVersion> v3_;  // sorted by path
  std::chrono::system_clock::time_point built_at_;
};

// The documents of what kubetaint serves (api::ServedSchemaDocument()), built on the first call
// and kept for the life of the process. Thread-safe; the API server calls it at construction so
// that no request pays for the build.
const OpenApi& ServedOpenApi();

// A GET or HEAD of /openapi/v2, /openapi/v3 or /openapi/v3/<group-version>.
struct OpenApiRequest {
  std::string_view path = {};  // "/openapi/v3/apis/apps/v1", no query
  std::string_view hash = {};  // the `hash` query parameter, decoded; "" when absent
  std::string_view accept = {};
  std::string_view if_none_match = {};
  std::chrono::system_clock::time_point now = std::chrono::system_clock::now();
};

struct OpenApiResponse {
  int status = 0;  // 0: not an OpenAPI path (nothing is answered)
  std::string_view content_type;
  Body body;
  std::vector<HttpHeader> headers;
};

// The answer upstream gives (see the file comment).
OpenApiResponse ServeOpenApi(const OpenApi& openapi, const OpenApiRequest& request);

// Which of `offered` (media types "type/subtype") an Accept header picks, as kube-openapi's
// handlers negotiate (goautoneg.ParseAccept order, `*` wildcards); offered.size() if none.
size_t NegotiateOpenApi(std::string_view accept, std::span<const std::string_view> offered);

}  // namespace kt::server
