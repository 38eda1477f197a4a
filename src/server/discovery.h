// The API server's static documents: /version, discovery (legacy and aggregated), OpenAPI v3,
// and the /healthz, /livez, /readyz bodies — what kubectl reads before any command
// (kubectl-protocol.md §1–§3).
//
//   Discovery docs({.server_address = "127.0.0.1:6443"});   // built once at start-up
//   DiscoveryFormat f = NegotiateDiscovery(req.Header("Accept"));
//   r->Respond(200, DiscoveryContentType(f), docs.Apis(f));  // GET /apis
//
// What is served (upstream 1.35 names, verbs, shortNames, categories, singular names, scopes):
//   v1                      namespaces (+status), nodes (+status), pods (+status, binding,
//                           eviction → policy/v1 Eviction), events
//   apps/v1                 daemonsets (+status)
//   scheduling.k8s.io/v1    priorityclasses
//   coordination.k8s.io/v1  leases
// A resource or verb listed here is one kubectl may use, so the list follows what the API server
// routes (server/resources.h); keep them in step.
//
// Contract:
// * Aggregated discovery (apidiscovery.k8s.io/v2, and v2beta1 for older clients) is answered only
//   when the Accept header asks for it, and then with exactly the Content-Type kubectl expects:
//   with plain application/json it would parse the document as legacy and find no resources.
//   `/api/v1` and `/apis/{g}/{v}` stay served: drain and auth can-i read them regardless.
// * OpenAPI v3 documents are minimal: for every kind, its collection path (create) and item path
//   (patch) declare the query parameters `fieldValidation`, `fieldManager`, `dryRun` — what
//   `kubectl create -f` / `apply -f` check before trusting the server with validation (§3).
//   No schemas; `application/strategic-merge-patch+json` is left out of the PATCH request
//   bodies on purpose, so client-side apply computes patches from kubectl's compiled-in types;
//   `application/apply-patch+yaml` is listed, as `kubectl apply --server-side` requires.
// * Health checks carry upstream kube-apiserver names. The storage check is called `etcd`
//   whatever the backend (SQLite, memory or etcd): scripts and probes that look for
//   `[+]etcd ok` or GET /readyz/etcd keep working. The set is in HealthCheckNames.
//
// Thread safety: a Discovery is immutable after construction; functions are pure.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kt::server {

// --- /version ----------------------------------------------------------------------------------

// What the binary knows about its build; empty fields take upstream's unset defaults.
struct BuildInfo {
  std::string_view git_commit = {};      // "" → "unknown"
  std::string_view git_tree_state = {};  // "" → "clean"
  std::string_view build_date = {};      // "" → "1970-01-01T00:00:00Z"
};

// k8s.io/apimachinery version.Info: major "1", minor "35" (the kubectl dispatcher picks its
// bundled kubectl from these; 27–31 and 33 would re-execute an older kubectl), the emulation and
// minimum-compatibility versions 1.35 servers report, gitVersion from core/version.h, and, being
// C++, the compiler in goVersion/compiler ("g++ 12.2.0", "gcc").
std::string VersionJson(const BuildInfo& build = {});

// --- Discovery ---------------------------------------------------------------------------------

enum class DiscoveryFormat : unsigned char {
  kLegacy,             // APIVersions / APIGroupList, application/json
  kAggregatedV2,       // apidiscovery.k8s.io/v2 APIGroupDiscoveryList
  kAggregatedV2Beta1,  // apidiscovery.k8s.io/v2beta1, same shape
};

// Which form of /api and /apis to serve for an Accept header: the first media range in order
// of preference (q-values, then position) that names an aggregated version we serve, or plain
// JSON. Anything else (empty, protobuf only, unknown) gets the legacy JSON, which every client
// reads.
DiscoveryFormat NegotiateDiscovery(std::string_view accept);

// "application/json", or
// "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList" (v2beta1 likewise).
std::string_view DiscoveryContentType(DiscoveryFormat format);

using SharedJson = std::shared_ptr<const std::string>;

struct DiscoveryOptions {
  // Reported in /api serverAddressByClientCIDRs.
  std::string server_address = "127.0.0.1:6443";
};

// Every document, built once. Accessors return shared immutable strings (the same pointer type as
// server/http.h Body), so responses share them without copying.
class Discovery {
 public:
  explicit Discovery(const DiscoveryOptions& options = {}, const BuildInfo& build = {});

  const SharedJson& Version() const { return version_; }
  // GET /api and GET /apis in the negotiated format.
  const SharedJson& Api(DiscoveryFormat format) const;
  const SharedJson& Apis(DiscoveryFormat format) const;
  // GET /api/v1 (group "") and GET /apis/{group}/{version}; nullptr for a group version we do
  // not serve (404).
  const SharedJson* ApiResourceList(std::string_view group, std::string_view version) const;

  // GET /openapi/v3: the index of per-group-version documents.
  const SharedJson& OpenApiIndex() const { return openapi_index_; }
  // GET /openapi/v3/<path>, path "api/v1" or "apis/apps/v1" (no query); nullptr if unknown.
  const SharedJson* OpenApiDocument(std::string_view path) const;
  // The `hash` query value the index gives for `path` ("" if unknown). Upstream serves a
  // request whose hash matches with `Cache-Control: public, immutable`.
  std::string_view OpenApiHash(std::string_view path) const;

 private:
  struct GroupVersionDocs {
    std::string group;
    std::string version;
    SharedJson resource_list;
    std::string openapi_path;  // "api/v1", "apis/apps/v1"
    std::string openapi_hash;
    SharedJson openapi;
  };
  SharedJson version_;
  SharedJson api_legacy_, api_v2_, api_v2beta1_;
  SharedJson apis_legacy_, apis_v2_, apis_v2beta1_;
  SharedJson openapi_index_;
  std::vector<GroupVersionDocs> group_versions_;
};

// The documents one at a time (what Discovery caches).
std::string ApiVersionsJson(std::string_view server_address);
std::string ApiGroupListJson();
// "" for a group version we do not serve.
std::string ApiResourceListJson(std::string_view group, std::string_view version);
// core: the document for /api (the core group only); otherwise for /apis (every named group).
std::string AggregatedDiscoveryJson(bool core, DiscoveryFormat format);
// "" for a group version we do not serve.
std::string OpenApiV3Json(std::string_view group, std::string_view version);

// --- Health --------------------------------------------------------------------------------------

enum class HealthEndpoint : unsigned char { kHealthz, kLivez, kReadyz };

// "healthz", "livez", "readyz": the word in "<name> check passed".
std::string_view HealthEndpointName(HealthEndpoint endpoint);

// The checks of an endpoint, in upstream order. The kube-apiserver checks that apply here:
//   ping, log                     always ok once serving (log: the logger is not wedged)
//   etcd                          the store answers (any backend; see above)
//   etcd-readiness                readyz only: the store accepts reads and writes
//   informer-sync                 readyz only: every watch cache has loaded
//   poststarthook/start-apiserver-admission-initializer      admission chain built
//   poststarthook/generic-apiserver-start-informers          in-process informers started
//   poststarthook/scheduling/bootstrap-system-priority-classes  system-node-critical and
//                                 system-cluster-critical exist
//   poststarthook/start-system-namespaces-controller  kube-system, kube-public, kube-node-lease
//   poststarthook/bootstrap-controller                the default namespace
//   shutdown                      readyz only: not shutting down
std::span<const std::string_view> HealthCheckNames(HealthEndpoint endpoint);

struct HealthCheck {
  std::string_view name;
  bool ok = true;
};

struct HealthResponse {
  int code = 200;
  std::string body;
};
inline constexpr std::string_view kHealthContentType = "text/plain; charset=utf-8";

// The body of GET /healthz, /livez, /readyz (k8s.io/apiserver pkg/server/healthz
// handleRootHealth): "ok" when every check passes and `verbose` is false; otherwise one line
// per check — `[+]name ok`, `[+]name excluded: ok`, `[-]name failed: reason withheld` — then
// `<endpoint> check passed` (200) or `<endpoint> check failed` (500). `exclude` holds the
// `exclude` query values; names that match no check add the upstream `warn:` line.
HealthResponse HealthBody(HealthEndpoint endpoint, std::span<const HealthCheck> checks,
                          bool verbose, std::span<const std::string_view> exclude = {});

// GET /livez/<check> (and /healthz/, /readyz/): "ok", or 500 `internal server error: <err>`.
HealthResponse SingleHealthCheckBody(bool ok, std::string_view error = {});

}  // namespace kt::server
