#include "server/discovery.h"

#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "core/version.h"

namespace kt::server {
namespace {

rapidjson::Document Parse(const std::string& json) {
  rapidjson::Document doc;
  doc.Parse(json.c_str());
  EXPECT_FALSE(doc.HasParseError()) << json;
  EXPECT_TRUE(doc.IsObject());
  return doc;
}

std::vector<std::string> Strings(const rapidjson::Value& array) {
  std::vector<std::string> out;
  for (const auto& v : array.GetArray()) out.emplace_back(v.GetString());
  return out;
}

const rapidjson::Value* FindByName(const rapidjson::Value& array, std::string_view key,
                                   std::string_view name) {
  for (const auto& v : array.GetArray()) {
    if (v.HasMember(key.data()) && name == v[key.data()].GetString()) return &v;
  }
  return nullptr;
}

// The Accept header kubectl 1.32 sends for /api and /apis (kubectl-protocol.md §2).
constexpr std::string_view kKubectlAccept =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/"
    "json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";

TEST(VersionTest, DispatcherReadsMajorAndMinor) {
  rapidjson::Document v = Parse(VersionJson());
  EXPECT_STREQ(v["major"].GetString(), "1");
  EXPECT_STREQ(v["minor"].GetString(), "35");
  EXPECT_EQ(v["gitVersion"].GetString(), GitVersion());
  EXPECT_STREQ(v["minCompatibilityMinor"].GetString(), "34");
  for (const char* key : {"gitCommit", "gitTreeState", "buildDate", "goVersion", "compiler",
                          "platform", "emulationMajor", "emulationMinor"}) {
    ASSERT_TRUE(v.HasMember(key)) << key;
    EXPECT_TRUE(v[key].IsString()) << key;
  }
  rapidjson::Document built =
      Parse(VersionJson({.git_commit = "abc123", .build_date = "2026-01-01T00:00:00Z"}));
  EXPECT_STREQ(built["gitCommit"].GetString(), "abc123");
  EXPECT_STREQ(built["buildDate"].GetString(), "2026-01-01T00:00:00Z");
  EXPECT_STREQ(built["gitTreeState"].GetString(), "clean");
}

TEST(DiscoveryTest, LegacyCoreGroup) {
  Discovery d({.server_address = "10.0.0.1:6443"});
  rapidjson::Document api = Parse(*d.Api(DiscoveryFormat::kLegacy));
  EXPECT_STREQ(api["kind"].GetString(), "APIVersions");
  EXPECT_EQ(Strings(api["versions"]), std::vector<std::string>{"v1"});
  EXPECT_STREQ(api["serverAddressByClientCIDRs"][0]["serverAddress"].GetString(), "10.0.0.1:6443");

  const SharedJson* v1 = d.ApiResourceList("", "v1");
  ASSERT_NE(v1, nullptr);
  rapidjson::Document list = Parse(**v1);
  EXPECT_STREQ(list["kind"].GetString(), "APIResourceList");
  EXPECT_FALSE(list.HasMember("apiVersion")) << "upstream's /api/v1 has none";
  EXPECT_STREQ(list["groupVersion"].GetString(), "v1");
  const auto& resources = list["resources"];

  std::vector<std::string> names;
  for (const auto& r : resources.GetArray()) names.emplace_back(r["name"].GetString());
  EXPECT_EQ(names, (std::vector<std::string>{"events", "namespaces", "namespaces/status", "nodes",
                                             "nodes/status", "pods", "pods/binding",
                                             "pods/eviction", "pods/status"}));

  // What drain looks for before evicting instead of deleting (§7.9).
  const rapidjson::Value* eviction = FindByName(resources, "name", "pods/eviction");
  ASSERT_NE(eviction, nullptr);
  EXPECT_STREQ((*eviction)["group"].GetString(), "policy");
  EXPECT_STREQ((*eviction)["version"].GetString(), "v1");
  EXPECT_STREQ((*eviction)["kind"].GetString(), "Eviction");
  EXPECT_STREQ((*eviction)["singularName"].GetString(), "");
  EXPECT_TRUE((*eviction)["namespaced"].GetBool());
  EXPECT_EQ(Strings((*eviction)["verbs"]), std::vector<std::string>{"create"});

  const rapidjson::Value* pods = FindByName(resources, "name", "pods");
  ASSERT_NE(pods, nullptr);
  EXPECT_STREQ((*pods)["singularName"].GetString(), "pod");
  EXPECT_EQ(Strings((*pods)["shortNames"]), std::vector<std::string>{"po"});
  EXPECT_EQ(Strings((*pods)["categories"]), std::vector<std::string>{"all"});
  EXPECT_EQ(Strings((*pods)["verbs"]),
            (std::vector<std::string>{"create", "delete", "deletecollection", "get", "list",
                                      "patch", "update", "watch"}));
  EXPECT_STREQ((*pods)["storageVersionHash"].GetString(), "xPOwRZ+Yhw8=");
  EXPECT_FALSE(pods->HasMember("group"));

  const rapidjson::Value* binding = FindByName(resources, "name", "pods/binding");
  ASSERT_NE(binding, nullptr);
  EXPECT_STREQ((*binding)["kind"].GetString(), "Binding");
  EXPECT_FALSE(binding->HasMember("group")) << "Binding is core/v1 like the list";

  const rapidjson::Value* nodes = FindByName(resources, "name", "nodes");
  EXPECT_FALSE((*nodes)["namespaced"].GetBool());
  EXPECT_EQ(Strings((*nodes)["shortNames"]), std::vector<std::string>{"no"});
  const rapidjson::Value* node_status = FindByName(resources, "name", "nodes/status");
  EXPECT_EQ(Strings((*node_status)["verbs"]), (std::vector<std::string>{"get", "patch", "update"}));
  EXPECT_STREQ((*node_status)["kind"].GetString(), "Node");

  const rapidjson::Value* namespaces = FindByName(resources, "name", "namespaces");
  EXPECT_EQ(
      Strings((*namespaces)["verbs"]),
      (std::vector<std::string>{"create", "delete", "get", "list", "patch", "update", "watch"}))
      << "no deletecollection on namespaces";
  EXPECT_EQ(Strings((*FindByName(resources, "name", "events"))["shortNames"]),
            std::vector<std::string>{"ev"});
}

TEST(DiscoveryTest, LegacyNamedGroups) {
  Discovery d;
  rapidjson::Document apis = Parse(*d.Apis(DiscoveryFormat::kLegacy));
  EXPECT_STREQ(apis["kind"].GetString(), "APIGroupList");
  EXPECT_STREQ(apis["apiVersion"].GetString(), "v1");
  std::vector<std::string> groups;
  for (const auto& g : apis["groups"].GetArray()) {
    groups.emplace_back(g["name"].GetString());
    std::string gv = std::string(g["name"].GetString()) + "/v1";
    EXPECT_EQ(gv, g["preferredVersion"]["groupVersion"].GetString());
    EXPECT_EQ(gv, g["versions"][0]["groupVersion"].GetString());
    // kubectl then fetches every listed group version; each must be served (a 404 or 503
    // there prints errors on every command, §2).
    const SharedJson* list = d.ApiResourceList(g["name"].GetString(), "v1");
    ASSERT_NE(list, nullptr) << gv;
    rapidjson::Document doc = Parse(**list);
    EXPECT_STREQ(doc["apiVersion"].GetString(), "v1");
    EXPECT_EQ(gv, doc["groupVersion"].GetString());
  }
  EXPECT_EQ(groups, (std::vector<std::string>{"apps", "scheduling.k8s.io", "coordination.k8s.io"}));

  rapidjson::Document apps = Parse(**d.ApiResourceList("apps", "v1"));
  const rapidjson::Value* ds = FindByName(apps["resources"], "name", "daemonsets");
  ASSERT_NE(ds, nullptr);
  EXPECT_EQ(Strings((*ds)["shortNames"]), std::vector<std::string>{"ds"});
  EXPECT_EQ(Strings((*ds)["categories"]), std::vector<std::string>{"all"});
  rapidjson::Document pc = Parse(**d.ApiResourceList("scheduling.k8s.io", "v1"));
  EXPECT_EQ(Strings(pc["resources"][0]["shortNames"]), std::vector<std::string>{"pc"});
  EXPECT_FALSE(pc["resources"][0]["namespaced"].GetBool());
  rapidjson::Document leases = Parse(**d.ApiResourceList("coordination.k8s.io", "v1"));
  EXPECT_STREQ(leases["resources"][0]["singularName"].GetString(), "lease");
  EXPECT_FALSE(leases["resources"][0].HasMember("shortNames"));

  EXPECT_EQ(d.ApiResourceList("policy", "v1"), nullptr);
  EXPECT_EQ(d.ApiResourceList("apps", "v1beta1"), nullptr);
  EXPECT_EQ(ApiResourceListJson("metrics.k8s.io", "v1beta1"), "");
}

TEST(DiscoveryTest, NegotiatesAggregatedDiscovery) {
  struct Case {
    std::string_view accept;
    DiscoveryFormat want;
  };
  const Case cases[] = {
      {kKubectlAccept, DiscoveryFormat::kAggregatedV2},
      {"application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,"
       "application/json",
       DiscoveryFormat::kAggregatedV2Beta1},
      {"application/json, */*", DiscoveryFormat::kLegacy},
      {"", DiscoveryFormat::kLegacy},
      {"application/vnd.kubernetes.protobuf,application/json", DiscoveryFormat::kLegacy},
      // Preference by q-value, not position.
      {"application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList;q=0.5, "
       "application/json",
       DiscoveryFormat::kLegacy},
      {"application/json;q=0.2, application/json; g=apidiscovery.k8s.io; v=v2; "
       "as=APIGroupDiscoveryList",
       DiscoveryFormat::kAggregatedV2},
      {"application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList;q=0",
       DiscoveryFormat::kLegacy},
      {"application/json;g=apidiscovery.k8s.io;v=v3;as=APIGroupDiscoveryList,application/json",
       DiscoveryFormat::kLegacy},
  };
  for (const Case& c : cases) EXPECT_EQ(NegotiateDiscovery(c.accept), c.want) << c.accept;

  // Anything but exactly this makes kubectl parse the document as legacy and find no
  // resources (§2 Option B).
  EXPECT_EQ(DiscoveryContentType(DiscoveryFormat::kAggregatedV2),
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList");
  EXPECT_EQ(DiscoveryContentType(DiscoveryFormat::kAggregatedV2Beta1),
            "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList");
  EXPECT_EQ(DiscoveryContentType(DiscoveryFormat::kLegacy), "application/json");
}

TEST(DiscoveryTest, AggregatedDocuments) {
  Discovery d;
  rapidjson::Document api = Parse(*d.Api(NegotiateDiscovery(kKubectlAccept)));
  EXPECT_STREQ(api["kind"].GetString(), "APIGroupDiscoveryList");
  EXPECT_STREQ(api["apiVersion"].GetString(), "apidiscovery.k8s.io/v2");
  ASSERT_EQ(api["items"].Size(), 1u);
  const auto& core = api["items"][0];
  EXPECT_FALSE(core["metadata"].HasMember("name"));
  EXPECT_TRUE(core["metadata"]["creationTimestamp"].IsNull());
  const auto& version = core["versions"][0];
  EXPECT_STREQ(version["version"].GetString(), "v1");
  EXPECT_STREQ(version["freshness"].GetString(), "Current");

  const rapidjson::Value* pods = FindByName(version["resources"], "resource", "pods");
  ASSERT_NE(pods, nullptr);
  EXPECT_STREQ((*pods)["scope"].GetString(), "Namespaced");
  EXPECT_STREQ((*pods)["singularResource"].GetString(), "pod");
  EXPECT_STREQ((*pods)["responseKind"]["group"].GetString(), "");
  EXPECT_STREQ((*pods)["responseKind"]["kind"].GetString(), "Pod");
  const rapidjson::Value* eviction = FindByName((*pods)["subresources"], "subresource", "eviction");
  ASSERT_NE(eviction, nullptr);
  EXPECT_STREQ((*eviction)["responseKind"]["group"].GetString(), "policy");
  EXPECT_STREQ((*eviction)["responseKind"]["version"].GetString(), "v1");
  EXPECT_STREQ((*eviction)["responseKind"]["kind"].GetString(), "Eviction");
  const rapidjson::Value* status = FindByName((*pods)["subresources"], "subresource", "status");
  ASSERT_NE(status, nullptr);
  EXPECT_STREQ((*status)["responseKind"]["kind"].GetString(), "Pod");
  const rapidjson::Value* nodes = FindByName(version["resources"], "resource", "nodes");
  ASSERT_NE(nodes, nullptr);
  EXPECT_STREQ((*nodes)["scope"].GetString(), "Cluster");
  EXPECT_EQ(Strings((*nodes)["shortNames"]), std::vector<std::string>{"no"});

  rapidjson::Document apis = Parse(*d.Apis(DiscoveryFormat::kAggregatedV2));
  std::vector<std::string> groups;
  for (const auto& item : apis["items"].GetArray()) {
    groups.emplace_back(item["metadata"]["name"].GetString());
    EXPECT_GT(item["versions"][0]["resources"].Size(), 0u);
  }
  EXPECT_EQ(groups, (std::vector<std::string>{"apps", "scheduling.k8s.io", "coordination.k8s.io"}));

  rapidjson::Document beta = Parse(*d.Apis(DiscoveryFormat::kAggregatedV2Beta1));
  EXPECT_STREQ(beta["apiVersion"].GetString(), "apidiscovery.k8s.io/v2beta1");
}

// kubectl's check before `create -f` / `apply -f` trusts the server with validation
// (cmd/util QueryParamVerifierV3, supportsQueryParamV3): the first PATCH operation whose
// x-kubernetes-group-version-kind is the manifest's kind must declare the query parameter.
bool SupportsQueryParam(const rapidjson::Value& doc, std::string_view group,
                        std::string_view version, std::string_view kind, std::string_view param) {
  for (const auto& path : doc["paths"].GetObject()) {
    if (!path.value.HasMember("patch")) continue;
    const auto& op = path.value["patch"];
    if (!op.HasMember("x-kubernetes-group-version-kind")) continue;
    const auto& gvk = op["x-kubernetes-group-version-kind"];
    if (group != gvk["group"].GetString() || version != gvk["version"].GetString() ||
        kind != gvk["kind"].GetString()) {
      continue;
    }
    for (const auto& p : op["parameters"].GetArray()) {
      if (param == p["name"].GetString() && std::string_view(p["in"].GetString()) == "query") {
        return true;
      }
    }
    return false;
  }
  return false;
}

TEST(OpenApiTest, EveryKindDeclaresFieldValidation) {
  Discovery d;
  rapidjson::Document index = Parse(*d.OpenApiIndex());
  struct Kind {
    std::string_view path, group, version, kind;
  };
  const Kind kinds[] = {
      {"api/v1", "", "v1", "Pod"},
      {"api/v1", "", "v1", "Node"},
      {"api/v1", "", "v1", "Namespace"},
      {"api/v1", "", "v1", "Event"},
      {"apis/apps/v1", "apps", "v1", "DaemonSet"},
      {"apis/coordination.k8s.io/v1", "coordination.k8s.io", "v1", "Lease"},
      {"apis/scheduling.k8s.io/v1", "scheduling.k8s.io", "v1", "PriorityClass"},
  };
  for (const Kind& k : kinds) {
    std::string path(k.path);
    ASSERT_TRUE(index["paths"].HasMember(path.c_str())) << path;
    std::string url = index["paths"][path.c_str()]["serverRelativeURL"].GetString();
    EXPECT_EQ(url, "/openapi/v3/" + path + "?hash=" + std::string(d.OpenApiHash(path)));
    const SharedJson* doc_json = d.OpenApiDocument(path);
    ASSERT_NE(doc_json, nullptr) << path;
    rapidjson::Document doc = Parse(**doc_json);
    EXPECT_STREQ(doc["openapi"].GetString(), "3.0.0");
    for (std::string_view param : {"fieldValidation", "fieldManager", "dryRun"}) {
      EXPECT_TRUE(SupportsQueryParam(doc, k.group, k.version, k.kind, param))
          << k.kind << " " << param;
    }
  }
  EXPECT_FALSE(index["paths"].HasMember("apis/policy/v1"));
  EXPECT_EQ(d.OpenApiDocument("apis/policy/v1"), nullptr);
  EXPECT_EQ(d.OpenApiHash("nope"), "");
}

TEST(OpenApiTest, PathsAndPatchBodies) {
  Discovery d;
  rapidjson::Document core = Parse(**d.OpenApiDocument("api/v1"));
  const auto& paths = core["paths"];
  for (const char* p :
       {"/api/v1/namespaces/{namespace}/pods", "/api/v1/namespaces/{namespace}/pods/{name}",
        "/api/v1/namespaces/{namespace}/pods/{name}/status",
        "/api/v1/namespaces/{namespace}/pods/{name}/eviction", "/api/v1/nodes",
        "/api/v1/nodes/{name}", "/api/v1/namespaces/{name}"}) {
    EXPECT_TRUE(paths.HasMember(p)) << p;
  }
  const auto& create = paths["/api/v1/namespaces/{namespace}/pods"]["post"];
  EXPECT_STREQ(create["operationId"].GetString(), "createCoreV1NamespacedPod");
  EXPECT_STREQ(create["x-kubernetes-action"].GetString(), "post");
  EXPECT_STREQ(paths["/api/v1/namespaces/{namespace}/pods/{name}/eviction"]["post"]
                    ["x-kubernetes-group-version-kind"]["group"]
                        .GetString(),
               "policy");
  // Strategic merge patch is left out on purpose: its presence makes client-side apply build
  // patches from OpenAPI schemas, which these documents do not carry (§3). Apply is listed:
  // without it `kubectl apply --server-side` refuses to send one.
  std::set<std::string> patch_types;
  for (const auto& path : paths.GetObject()) {
    if (!path.value.HasMember("patch")) continue;
    for (const auto& type : path.value["patch"]["requestBody"]["content"].GetObject()) {
      patch_types.insert(type.name.GetString());
    }
  }
  EXPECT_EQ(patch_types,
            (std::set<std::string>{"application/json-patch+json", "application/merge-patch+json",
                                   "application/apply-patch+yaml"}));
}

// --- Health --------------------------------------------------------------------------------------

std::vector<HealthCheck> AllOk(HealthEndpoint endpoint) {
  std::vector<HealthCheck> checks;
  for (std::string_view name : HealthCheckNames(endpoint)) checks.push_back({name, true});
  return checks;
}

TEST(HealthTest, PassingChecks) {
  HealthResponse quiet = HealthBody(HealthEndpoint::kLivez, AllOk(HealthEndpoint::kLivez), false);
  EXPECT_EQ(quiet.code, 200);
  EXPECT_EQ(quiet.body, "ok");

  HealthResponse verbose =
      HealthBody(HealthEndpoint::kHealthz, AllOk(HealthEndpoint::kHealthz), true);
  EXPECT_EQ(verbose.code, 200);
  EXPECT_EQ(verbose.body,
            "[+]ping ok\n"
            "[+]log ok\n"
            "[+]etcd ok\n"
            "[+]poststarthook/start-apiserver-admission-initializer ok\n"
            "[+]poststarthook/generic-apiserver-start-informers ok\n"
            "[+]poststarthook/scheduling/bootstrap-system-priority-classes ok\n"
            "[+]poststarthook/start-system-namespaces-controller ok\n"
            "[+]poststarthook/bootstrap-controller ok\n"
            "healthz check passed\n");

  std::span<const std::string_view> readyz = HealthCheckNames(HealthEndpoint::kReadyz);
  EXPECT_EQ(readyz[3], "etcd-readiness");
  EXPECT_EQ(readyz.back(), "shutdown");
}

TEST(HealthTest, FailingCheckIsVerboseAnd500) {
  std::vector<HealthCheck> checks = AllOk(HealthEndpoint::kReadyz);
  checks[2].ok = false;  // etcd
  HealthResponse r = HealthBody(HealthEndpoint::kReadyz, checks, /*verbose=*/false);
  EXPECT_EQ(r.code, 500);
  EXPECT_NE(r.body.find("[+]log ok\n[-]etcd failed: reason withheld\n[+]etcd-readiness ok\n"),
            std::string::npos)
      << r.body;
  EXPECT_TRUE(r.body.ends_with("[+]shutdown ok\nreadyz check failed\n")) << r.body;
}

TEST(HealthTest, Excludes) {
  std::vector<HealthCheck> checks = AllOk(HealthEndpoint::kLivez);
  checks[2].ok = false;  // excluded below, so it does not fail the probe
  std::string_view exclude[] = {"etcd", "zzz", "foo"};
  HealthResponse r = HealthBody(HealthEndpoint::kLivez, checks, true, exclude);
  EXPECT_EQ(r.code, 200);
  EXPECT_NE(r.body.find("[+]etcd excluded: ok\n"), std::string::npos);
  EXPECT_TRUE(r.body.ends_with(
      "warn: some health checks cannot be excluded: no matches for \"foo\",\"zzz\"\n"
      "livez check passed\n"))
      << r.body;
}

TEST(HealthTest, SingleCheck) {
  EXPECT_EQ(SingleHealthCheckBody(true).body, "ok");
  HealthResponse r = SingleHealthCheckBody(false, "database is locked");
  EXPECT_EQ(r.code, 500);
  EXPECT_EQ(r.body, "internal server error: database is locked\n");
}

}  // namespace
}  // namespace kt::server
