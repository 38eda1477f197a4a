#include "server/openapi.h"

#include <chrono>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "api/schema.h"
#include "core/version.h"
#include "server/discovery.h"
#include "server/resources.h"

namespace kt::server {
namespace {

using Value = rapidjson::Value;

rapidjson::Document Parse(std::string_view json) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  EXPECT_FALSE(doc.HasParseError());
  EXPECT_TRUE(doc.IsObject());
  return doc;
}

rapidjson::Document V3(std::string_view path) {
  const OpenApiDocument* doc = ServedOpenApi().V3(path);
  EXPECT_NE(doc, nullptr) << path;
  return doc == nullptr ? Parse("{}") : Parse(*doc->body);
}

std::string_view Str(const Value& v) { return {v.GetString(), v.GetStringLength()}; }

const Value* Get(const Value& object, std::string_view key) {
  if (!object.IsObject()) return nullptr;
  auto it = object.FindMember(rapidjson::StringRef(key.data(), key.size()));
  return it == object.MemberEnd() ? nullptr : &it->value;
}

std::string OpenApiPathOf(std::string_view group, std::string_view version) {
  return group.empty() ? "api/" + std::string(version)
                       : "apis/" + std::string(group) + "/" + std::string(version);
}

// --- What kubectl explain does with a v3 document (k8s.io/kubectl/pkg/explain/v2
// templates/plaintext.tmpl) ---------------------------------------------------------------------

// The GVK of a resource, from the x-kubernetes-group-version-kind of an operation on one of its
// four paths (cluster or namespace scope, collection or item), trying get, post, put, patch,
// delete in that order.
const Value* ExplainGvk(const Value& doc, const ResourceInfo& r) {
  const std::string prefix = r.group.empty() ? "/api" : "/apis/" + std::string(r.group);
  const std::string base = prefix + "/" + std::string(r.version);
  const std::string plural(r.plural);
  for (const std::string& path : {base + "/" + plural, base + "/" + plural + "/{name}",
                                  base + "/namespaces/{namespace}/" + plural,
                                  base + "/namespaces/{namespace}/" + plural + "/{name}"}) {
    const Value* item = Get(doc["paths"], path);
    if (item == nullptr) continue;
    for (std::string_view method : {"get", "post", "put", "patch", "delete"}) {
      const Value* op = Get(*item, method);
      if (op == nullptr) continue;
      if (const Value* gvk = Get(*op, "x-kubernetes-group-version-kind")) return gvk;
    }
  }
  return nullptr;
}

// The components schema whose x-kubernetes-group-version-kind lists `gvk` (sprig `contains`).
const Value* ExplainKind(const Value& doc, const Value& gvk) {
  for (const auto& s : doc["components"]["schemas"].GetObject()) {
    const Value* gvks = Get(s.value, "x-kubernetes-group-version-kind");
    if (gvks == nullptr) continue;
    for (const auto& g : gvks->GetArray()) {
      if (g == gvk) return &s.value;
    }
  }
  return nullptr;
}

// resolveRef: the schema a `$ref` names, or the schema itself.
const Value* Resolve(const Value& doc, const Value& schema) {
  const Value* ref = Get(schema, "$ref");
  if (ref == nullptr) return &schema;
  constexpr std::string_view kPrefix = "#/components/schemas/";
  if (!Str(*ref).starts_with(kPrefix)) return nullptr;
  return Get(doc["components"]["schemas"], Str(*ref).substr(kPrefix.size()));
}

// The template's "output": follows `path` through properties, then items, additionalProperties
// and allOf alternatives; null when a field does not exist.
const Value* ExplainField(const Value& doc, const Value& schema,
                          std::span<const std::string> path) {
  const Value* resolved = Resolve(doc, schema);
  if (resolved == nullptr) return nullptr;
  if (path.empty()) return &schema;
  if (const Value* props = Get(*resolved, "properties")) {
    if (const Value* field = Get(*props, path[0]))
      return ExplainField(doc, *field, path.subspan(1));
  }
  if (const Value* items = Get(*resolved, "items")) return ExplainField(doc, *items, path);
  if (const Value* extra = Get(*resolved, "additionalProperties"); extra && extra->IsObject()) {
    return ExplainField(doc, *extra, path);
  }
  if (const Value* all_of = Get(*resolved, "allOf")) {
    for (const auto& alternative : all_of->GetArray()) {
      if (const Value* found = ExplainField(doc, alternative, path)) return found;
    }
  }
  return nullptr;
}

// The template's "description": the schema's own, then its allOf's, items' and
// additionalProperties', each resolved.
std::string ExplainDescription(const Value& doc, const Value& schema) {
  const Value* s = Resolve(doc, schema);
  if (s == nullptr) return "<dangling>";
  std::string out;
  if (const Value* d = Get(*s, "description")) out.append(Str(*d)).append("\n");
  if (const Value* all_of = Get(*s, "allOf")) {
    for (const auto& a : all_of->GetArray()) out += ExplainDescription(doc, a);
  }
  if (const Value* items = Get(*s, "items")) out += ExplainDescription(doc, *items);
  if (const Value* extra = Get(*s, "additionalProperties"); extra && extra->IsObject()) {
    out += ExplainDescription(doc, *extra);
  }
  return out;
}

// The template's "typeGuess": `[]Toleration`, `map[string]string`, `string`, `Object`.
std::string ExplainType(const Value& doc, const Value& schema) {
  if (const Value* items = Get(schema, "items")) return "[]" + ExplainType(doc, *items);
  if (const Value* extra = Get(schema, "additionalProperties"); extra && extra->IsObject()) {
    return "map[string]" + ExplainType(doc, *extra);
  }
  const Value* all_of = Get(schema, "allOf");
  if (all_of != nullptr && Get(schema, "properties") == nullptr && all_of->Size() == 1) {
    return ExplainType(doc, (*all_of)[0]);
  }
  if (const Value* ref = Get(schema, "$ref")) {
    const Value* target = Resolve(doc, schema);
    const Value* type = target != nullptr ? Get(*target, "type") : nullptr;
    if (type == nullptr || Str(*type) == "object") {
      const std::string_view name = Str(*ref);
      return std::string(name.substr(name.rfind('.') + 1));
    }
    return std::string(Str(*type));
  }
  const Value* type = Get(schema, "type");
  if (type == nullptr || Str(*type) == "object") return "Object";
  return std::string(Str(*type));
}

TEST(OpenApiV3Test, KubectlExplainFindsEveryServedKind) {
  for (const ResourceInfo& r : AllResources()) {
    SCOPED_TRACE(r.plural);
    rapidjson::Document doc = V3(OpenApiPathOf(r.group, r.version));
    const Value* gvk = ExplainGvk(doc, r);
    ASSERT_NE(gvk, nullptr) << "GVR not found in OpenAPI schema";
    EXPECT_EQ(Str((*gvk)["group"]), r.group);
    EXPECT_EQ(Str((*gvk)["version"]), r.version);
    EXPECT_EQ(Str((*gvk)["kind"]), r.kind);
    const Value* kind = ExplainKind(doc, *gvk);
    ASSERT_NE(kind, nullptr) << "GVK not found in OpenAPI schema";
    EXPECT_FALSE(ExplainDescription(doc, *kind).empty());
    for (const std::string field : {"apiVersion", "kind", "metadata"}) {
      EXPECT_NE(ExplainField(doc, *kind, std::vector<std::string>{field}), nullptr) << field;
    }
  }
}

TEST(OpenApiV3Test, KubectlExplainWalksFieldsWithUpstreamText) {
  struct Case {
    std::string group_version;
    std::string group, version, kind;
    std::vector<std::string> path;
    std::string type;         // typeGuess
    std::string description;  // what DESCRIPTION starts with
  };
  const Case cases[] = {
      {"api/v1",
       "",
       "v1",
       "Pod",
       {"spec", "tolerations"},
       "[]Toleration",
       "If specified, the pod's tolerations.\nThe pod this Toleration is attached to tolerates any "
       "taint that matches the triple <key,value,effect> using the matching operator "
       "<operator>.\n"},
      {"api/v1",
       "",
       "v1",
       "Pod",
       {"spec", "tolerations", "tolerationSeconds"},
       "integer",
       "TolerationSeconds represents the period of time the toleration"},
      {"api/v1",
       "",
       "v1",
       "Node",
       {"spec", "taints"},
       "[]Taint",
       "If specified, the node's taints."},
      {"api/v1",
       "",
       "v1",
       "Node",
       {"metadata", "labels"},
       "map[string]string",
       "Map of string keys"},
      {"apis/apps/v1",
       "apps",
       "v1",
       "DaemonSet",
       {"spec", "template", "spec", "containers", "ports"},
       "[]ContainerPort",
       "List of ports to expose from the container."},
      {"apis/coordination.k8s.io/v1",
       "coordination.k8s.io",
       "v1",
       "Lease",
       {"spec", "renewTime"},
       "string",  // MicroTime is a string
       "renewTime is a time when the current holder of a lease has last updated the lease."},
      {"apis/scheduling.k8s.io/v1",
       "scheduling.k8s.io",
       "v1",
       "PriorityClass",
       {"value"},
       "integer",
       "value represents the integer value of this priority class."},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.kind + "." + c.path.back());
    rapidjson::Document doc = V3(c.group_version);
    rapidjson::Document gvk;
    gvk.SetObject();
    gvk.AddMember("group", rapidjson::StringRef(c.group.c_str()), gvk.GetAllocator());
    gvk.AddMember("kind", rapidjson::StringRef(c.kind.c_str()), gvk.GetAllocator());
    gvk.AddMember("version", rapidjson::StringRef(c.version.c_str()), gvk.GetAllocator());
    const Value* kind = ExplainKind(doc, gvk);
    ASSERT_NE(kind, nullptr);
    const Value* field = ExplainField(doc, *kind, c.path);
    ASSERT_NE(field, nullptr);
    EXPECT_EQ(ExplainType(doc, *field), c.type);
    EXPECT_TRUE(ExplainDescription(doc, *field).starts_with(c.description))
        << ExplainDescription(doc, *field);
  }

  // An unknown field: the template's `field "x" does not exist`.
  rapidjson::Document core = V3("api/v1");
  const Value* pod = Get(core["components"]["schemas"], "io.k8s.api.core.v1.Pod");
  ASSERT_NE(pod, nullptr);
  EXPECT_EQ(ExplainField(core, *pod, std::vector<std::string>{"spec", "tolerationz"}), nullptr);

  // The FIELDS of pod.spec.tolerations, as `kubectl explain` lists them.
  const Value* toleration = Get(core["components"]["schemas"], "io.k8s.api.core.v1.Toleration");
  ASSERT_NE(toleration, nullptr);
  std::vector<std::string> fields;
  for (const auto& p : (*toleration)["properties"].GetObject()) {
    fields.push_back(std::string(Str(p.name)) + " <" + ExplainType(core, p.value) + ">");
  }
  EXPECT_EQ(fields,
            (std::vector<std::string>{"effect <string>", "key <string>", "operator <string>",
                                      "tolerationSeconds <integer>", "value <string>"}));
}

// Every `$ref` of every document points into its own components.schemas, and none has a
// sibling: a description beside a reference moved into allOf (kube-openapi WrapRefs).
void CheckRefs(const Value& node, const Value& schemas, std::set<std::string>* problems) {
  if (node.IsArray()) {
    for (const auto& v : node.GetArray()) CheckRefs(v, schemas, problems);
    return;
  }
  if (!node.IsObject()) return;
  if (const Value* ref = Get(node, "$ref")) {
    constexpr std::string_view kPrefix = "#/components/schemas/";
    const std::string_view name = Str(*ref);
    if (!name.starts_with(kPrefix) || Get(schemas, name.substr(kPrefix.size())) == nullptr) {
      problems->insert("dangling " + std::string(name));
    }
    if (node.MemberCount() != 1) problems->insert("siblings beside " + std::string(name));
  }
  for (const auto& m : node.GetObject()) CheckRefs(m.value, schemas, problems);
}

TEST(OpenApiV3Test, EveryRefResolvesWithinItsDocument) {
  const std::vector<std::string_view> paths = ServedOpenApi().V3Paths();
  EXPECT_EQ(paths,
            (std::vector<std::string_view>{"api/v1", "apis/apps/v1", "apis/coordination.k8s.io/v1",
                                           "apis/scheduling.k8s.io/v1"}));
  for (std::string_view path : paths) {
    SCOPED_TRACE(path);
    rapidjson::Document doc = V3(path);
    EXPECT_EQ(Str(doc["openapi"]), "3.0.0");
    EXPECT_EQ(Str(doc["info"]["title"]), "Kubernetes");
    EXPECT_EQ(Str(doc["info"]["version"]), GitVersion().substr(0, GitVersion().find('-')));
    std::set<std::string> problems;
    CheckRefs(doc, doc["components"]["schemas"], &problems);
    EXPECT_TRUE(problems.empty()) << *problems.begin();
    EXPECT_TRUE(doc["components"]["securitySchemes"].HasMember("BearerToken"));
  }
  // Only what the group version needs: no Pod in the apps document's schemas... except through
  // DaemonSet's template, which is a PodTemplateSpec.
  rapidjson::Document apps = V3("apis/apps/v1");
  EXPECT_FALSE(apps["components"]["schemas"].HasMember("io.k8s.api.core.v1.Pod"));
  EXPECT_TRUE(apps["components"]["schemas"].HasMember("io.k8s.api.core.v1.PodTemplateSpec"));
}

TEST(OpenApiV3Test, ConvertsAsKubeOpenApi) {
  rapidjson::Document core = V3("api/v1");
  const Value& schemas = core["components"]["schemas"];
  // A reference with a description beside it: allOf.
  const Value& spec = schemas["io.k8s.api.core.v1.Pod"]["properties"]["spec"];
  EXPECT_EQ(Str(spec["allOf"][0]["$ref"]), "#/components/schemas/io.k8s.api.core.v1.PodSpec");
  EXPECT_TRUE(Str(spec["description"]).starts_with("Specification of the desired behavior"));
  EXPECT_FALSE(spec.HasMember("$ref"));
  // A lone reference stays one.
  const Value& items = schemas["io.k8s.api.core.v1.PodList"]["properties"]["items"]["items"];
  EXPECT_EQ(Str(items["$ref"]), "#/components/schemas/io.k8s.api.core.v1.Pod");
  // Extensions are kept.
  const Value& tolerations = schemas["io.k8s.api.core.v1.PodSpec"]["properties"]["tolerations"];
  EXPECT_EQ(Str(tolerations["x-kubernetes-list-type"]), "atomic");
  const Value& containers = schemas["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"];
  EXPECT_EQ(Str(containers["x-kubernetes-patch-merge-key"]), "name");

  // Operations: shared parameters written out, the body a requestBody, responses per media type.
  const Value& patch = core["paths"]["/api/v1/namespaces/{namespace}/pods/{name}"]["patch"];
  EXPECT_EQ(Str(patch["operationId"]), "patchCoreV1NamespacedPod");
  std::vector<std::string> params;
  for (const auto& p : patch["parameters"].GetArray()) {
    params.emplace_back(Str(p["name"]));
    EXPECT_EQ(Str(p["in"]), "query");
    EXPECT_TRUE(p["schema"].HasMember("type"));
    EXPECT_FALSE(p.HasMember("$ref"));
  }
  EXPECT_EQ(params,
            (std::vector<std::string>{"dryRun", "fieldManager", "fieldValidation", "force"}));
  EXPECT_TRUE(patch["requestBody"]["required"].GetBool());
  std::set<std::string> types;
  for (const auto& t : patch["requestBody"]["content"].GetObject()) {
    types.emplace(Str(t.name));
    EXPECT_EQ(Str(t.value["schema"]["$ref"]),
              "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Patch");
  }
  // Server-side apply is served in YAML (and JSON), not in CBOR: upstream's list without CBOR.
  EXPECT_EQ(types, (std::set<std::string>{
                       "application/apply-patch+yaml", "application/json-patch+json",
                       "application/merge-patch+json", "application/strategic-merge-patch+json"}));
  EXPECT_EQ(Str(patch["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]),
            "#/components/schemas/io.k8s.api.core.v1.Pod");
  EXPECT_EQ(Str(patch["responses"]["401"]["description"]), "Unauthorized");
  const Value& item = core["paths"]["/api/v1/namespaces/{namespace}/pods/{name}"];
  std::vector<std::string> path_params;
  for (const auto& p : item["parameters"].GetArray()) path_params.emplace_back(Str(p["name"]));
  EXPECT_EQ(path_params, (std::vector<std::string>{"name", "namespace", "pretty"}));
  EXPECT_TRUE(item["parameters"][0]["required"].GetBool());
}

// kubectl's check before `create -f` / `apply -f` trusts the server with validation
// (cmd/util QueryParamVerifierV3, supportsQueryParamV3): the first PATCH operation whose
// x-kubernetes-group-version-kind is the manifest's kind must declare the query parameter.
bool SupportsQueryParam(const Value& doc, std::string_view method, std::string_view group,
                        std::string_view version, std::string_view kind, std::string_view param) {
  for (const auto& path : doc["paths"].GetObject()) {
    const Value* op = Get(path.value, method);
    if (op == nullptr) continue;
    const Value* gvk = Get(*op, "x-kubernetes-group-version-kind");
    if (gvk == nullptr || group != Str((*gvk)["group"]) || version != Str((*gvk)["version"]) ||
        kind != Str((*gvk)["kind"])) {
      continue;
    }
    for (const auto& p : (*op)["parameters"].GetArray()) {
      if (param == Str(p["name"]) && Str(p["in"]) == "query") return true;
    }
    return false;
  }
  return false;
}

TEST(OpenApiV3Test, EveryKindDeclaresFieldValidation) {
  const OpenApi& openapi = ServedOpenApi();
  rapidjson::Document index = Parse(*openapi.V3Index());
  for (const ResourceInfo& r : AllResources()) {
    const std::string path = OpenApiPathOf(r.group, r.version);
    ASSERT_TRUE(index["paths"].HasMember(path.c_str())) << path;
    EXPECT_EQ(Str(index["paths"][path.c_str()]["serverRelativeURL"]),
              "/openapi/v3/" + path + "?hash=" + openapi.V3(path)->etag);
    rapidjson::Document doc = V3(path);
    for (std::string_view method : {"patch", "post", "put"}) {
      for (std::string_view param : {"fieldValidation", "fieldManager", "dryRun"}) {
        EXPECT_TRUE(SupportsQueryParam(doc, method, r.group, r.version, r.kind, param))
            << r.kind << " " << method << " " << param;
      }
    }
  }
  EXPECT_EQ(index["paths"].MemberCount(), 4u);
  EXPECT_EQ(openapi.V3("apis/policy/v1"), nullptr);
}

// The documents list exactly what the API server routes: each resource and subresource of
// discovery has its paths, and each path is one of them.
TEST(OpenApiV3Test, PathsAreWhatDiscoveryServes) {
  for (std::string_view gv : ServedOpenApi().V3Paths()) {
    SCOPED_TRACE(gv);
    rapidjson::Document doc = V3(gv);
    const std::string group =
        gv.starts_with("apis/") ? std::string(gv.substr(5, gv.rfind('/') - 5)) : std::string();
    const std::string version(gv.substr(gv.rfind('/') + 1));
    rapidjson::Document list = Parse(ApiResourceListJson(group, version));
    std::set<std::string> discovered, documented;
    for (const auto& r : list["resources"].GetArray()) discovered.emplace(Str(r["name"]));
    const std::string prefix = std::string(1, '/').append(gv);
    for (const auto& p : doc["paths"].GetObject()) {
      std::string_view path = Str(p.name);
      ASSERT_TRUE(path.starts_with(prefix)) << path;
      path.remove_prefix(prefix.size());
      if (path == "/") continue;  // the group version's own discovery document
      if (path.starts_with("/watch")) path.remove_prefix(6);
      if (path.starts_with("/namespaces/{namespace}/")) path.remove_prefix(23);
      std::string name(path.substr(1, path.find('/', 1) - 1));
      if (const size_t item = path.find("/{name}/"); item != std::string_view::npos) {
        name.append(1, '/').append(path.substr(item + 8));
      }
      documented.insert(name);
    }
    EXPECT_EQ(documented, discovered);
  }
}

TEST(OpenApiV2Test, JsonIsUpstreamsDocumentOfWhatIsServed) {
  const OpenApi& openapi = ServedOpenApi();
  rapidjson::Document v2 = Parse(*openapi.V2Json().body);
  EXPECT_EQ(Str(v2["swagger"]), "2.0");
  EXPECT_EQ(Str(v2["info"]["version"]), GitVersion().substr(0, GitVersion().find('-')));
  EXPECT_EQ(v2["paths"].MemberCount(), 46u);
  EXPECT_TRUE(v2["definitions"].HasMember("io.k8s.api.core.v1.Pod"));
  EXPECT_EQ(Str(v2["definitions"]["io.k8s.api.core.v1.Pod"]["properties"]["spec"]["$ref"]),
            "#/definitions/io.k8s.api.core.v1.PodSpec");
  EXPECT_EQ(openapi.V2Json().etag.size(), 128u);  // SHA-512, hex
  EXPECT_EQ(openapi.V2Protobuf().etag, openapi.V2Json().etag);
  for (const auto& d : v2["definitions"].GetObject()) {
    EXPECT_TRUE(d.value.HasMember("description")) << Str(d.name);
    if (!d.value.HasMember("properties")) continue;
    for (const auto& p : d.value["properties"].GetObject()) {
      // Upstream documents every field but WatchEvent's type.
      if (Str(d.name) == "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent") continue;
      EXPECT_TRUE(p.value.HasMember("description")) << Str(d.name) << "." << Str(p.name);
    }
  }
}

// A protobuf message, read just enough to check the encoding: each field's values in order.
struct Fields {
  std::vector<std::pair<int, std::string_view>> bytes;  // length-delimited
  std::vector<std::pair<int, uint64_t>> varints;

  explicit Fields(std::string_view in) {
    auto varint = [&in]() {
      uint64_t v = 0;
      for (int shift = 0; !in.empty(); shift += 7) {
        const auto b = static_cast<unsigned char>(in.front());
        in.remove_prefix(1);
        v |= static_cast<uint64_t>(b & 0x7F) << shift;
        if (b < 0x80) break;
      }
      return v;
    };
    while (!in.empty()) {
      const uint64_t tag = varint();
      const int field = static_cast<int>(tag >> 3);
      if ((tag & 7) == 0) {
        varints.emplace_back(field, varint());
      } else if ((tag & 7) == 2) {
        const uint64_t n = varint();
        bytes.emplace_back(field, in.substr(0, n));
        in.remove_prefix(std::min<uint64_t>(n, in.size()));
      } else {
        ADD_FAILURE() << "wire type " << (tag & 7);
        return;
      }
    }
  }
  std::vector<std::string_view> All(int field) const {
    std::vector<std::string_view> out;
    for (const auto& [f, v] : bytes) {
      if (f == field) out.push_back(v);
    }
    return out;
  }
  std::string_view One(int field) const {
    std::vector<std::string_view> all = All(field);
    EXPECT_EQ(all.size(), 1u) << "field " << field;
    return all.empty() ? std::string_view() : all[0];
  }
};

TEST(OpenApiV2Test, ProtobufIsGnosticsDocument) {
  const OpenApi& openapi = ServedOpenApi();
  rapidjson::Document json = Parse(*openapi.V2Json().body);
  const Fields doc(*openapi.V2Protobuf().body);
  EXPECT_EQ(doc.One(1), "2.0");                                              // swagger
  EXPECT_EQ(Fields(doc.One(2)).One(1), "Kubernetes");                        // info.title
  EXPECT_EQ(Fields(doc.One(8)).All(2).size(), json["paths"].MemberCount());  // paths.path
  const Fields definitions(doc.One(9));
  EXPECT_EQ(definitions.All(1).size(), json["definitions"].MemberCount());
  // definitions: NamedSchema{name = 1, value = 2}; find Pod and its GVK extension.
  bool found = false;
  for (std::string_view named : definitions.All(1)) {
    const Fields n(named);
    if (n.One(1) != "io.k8s.api.core.v1.Pod") continue;
    found = true;
    const Fields pod(n.One(2));
    EXPECT_TRUE(pod.One(4).starts_with("Pod is a collection of containers"));  // description
    EXPECT_EQ(Fields(pod.One(22)).One(1), "object");                           // type
    const Fields extension(pod.One(31));  // vendor_extension: NamedAny
    EXPECT_EQ(extension.One(1), "x-kubernetes-group-version-kind");
    EXPECT_EQ(Fields(extension.One(2)).One(2), R"([{"group":"","kind":"Pod","version":"v1"}])");
    // properties: NamedSchema spec → $ref.
    for (std::string_view prop : Fields(pod.One(25)).All(1)) {
      const Fields p(prop);
      if (p.One(1) == "spec") {
        EXPECT_EQ(Fields(p.One(2)).One(1), "#/definitions/io.k8s.api.core.v1.PodSpec");
      }
    }
  }
  EXPECT_TRUE(found);
  // The PATCH of a pod: a JsonReference body, query parameters as NonBodyParameter.query.
  for (std::string_view named : Fields(doc.One(8)).All(2)) {
    const Fields n(named);
    if (n.One(1) != "/api/v1/namespaces/{namespace}/pods/{name}") continue;
    const Fields patch(Fields(n.One(2)).One(8));
    EXPECT_EQ(patch.One(5), "patchCoreV1NamespacedPod");
    std::vector<std::string_view> kinds;
    for (std::string_view item : patch.All(8)) {
      const Fields i(item);
      if (!i.All(2).empty()) {
        kinds.push_back(Fields(i.One(2)).One(1));  // json_reference._ref
      } else {
        const Fields non_body(Fields(i.One(1)).One(2));
        kinds.push_back(Fields(non_body.One(3)).One(4));  // query sub-schema name
      }
    }
    EXPECT_EQ(kinds,
              (std::vector<std::string_view>{"#/parameters/body-78PwaGsr", "dryRun",
                                             "#/parameters/fieldManager-7c6nTn1T",
                                             "fieldValidation", "#/parameters/force-tOGGb0Yi"}));
  }
}

TEST(OpenApiTest, NegotiatesAsKubeOpenApi) {
  constexpr std::string_view kProto = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";
  const std::array<std::string_view, 3> offered = {
      "application/json", kProto, "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"};
  struct Case {
    std::string_view accept;
    size_t pick;
  };
  const Case cases[] = {
      {"", 0},                        // no Accept is */*
      {"*/*", 0},                     // the first offered
      {std::string_view(kProto), 1},  // what kubectl sends
      {"application/json, */*", 0},
      {"text/html", 3},  // 406
      {"application/*", 0},
      {"application/json;q=0.5, application/com.github.proto-openapi.spec.v2@v1.0+protobuf", 1},
      {"*/*, application/com.github.proto-openapi.spec.v2.v1.0+protobuf", 2},  // specific first
      {"application/json;q=0", 0},  // q=0 is not excluded upstream
      {"application/yaml, text/plain", 3},
  };
  for (const Case& c : cases) EXPECT_EQ(NegotiateOpenApi(c.accept, offered), c.pick) << c.accept;
}

// `"etag"` (appended: g++ 12 warns, wrongly, about "\"" + s + "\"").
std::string Quoted(std::string_view etag) {
  std::string out(1, '"');
  return out.append(etag).append(1, '"');
}

std::string HeaderOf(const OpenApiResponse& r, std::string_view name) {
  for (const HttpHeader& h : r.headers) {
    if (h.name == name) return h.value;
  }
  return "<none>";
}

TEST(OpenApiTest, ServesAsKubeApiserver) {
  const OpenApi& openapi = ServedOpenApi();
  const std::string hash = openapi.V3("api/v1")->etag;
  const std::string etag = Quoted(hash);
  const auto now = std::chrono::system_clock::from_time_t(1767225600);  // 2026-01-01 00:00 UTC
  struct Case {
    const char* name;
    OpenApiRequest request;
    int status;
    std::string_view content_type;
    std::vector<std::pair<std::string, std::string>> headers;  // name → value, "<none>": absent
  };
  const Case cases[] = {
      {"v2 as kubectl asks",
       {.path = "/openapi/v2",
        .accept = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"},
       200,
       "application/com.github.proto-openapi.spec.v2.v1.0+protobuf",
       {{"Vary", "Accept"}, {"Etag", Quoted(openapi.V2Json().etag)}}},
      {"v2 JSON",
       {.path = "/openapi/v2", .accept = "application/json"},
       200,
       "application/json",
       {{"Vary", "Accept"}}},
      {"v2 unacceptable",
       {.path = "/openapi/v2", .accept = "text/html"},
       406,
       "",
       {{"Etag", "<none>"}}},
      {"v3 index",
       {.path = "/openapi/v3", .now = now},
       200,
       "text/plain; charset=utf-8",
       {{"Last-Modified", "Thu, 01 Jan 2026 00:00:00 GMT"}, {"Etag", "<none>"}}},
      {"v3 without hash",
       {.path = "/openapi/v3/api/v1", .accept = "application/json"},
       200,
       "application/json",
       {{"Etag", etag}, {"Vary", "Accept"}, {"Cache-Control", "<none>"}}},
      {"v3 with the index's hash",
       {.path = "/openapi/v3/api/v1", .hash = hash, .accept = "application/json", .now = now},
       200,
       "application/json",
       {{"Cache-Control", "public, immutable"}, {"Expires", "Fri, 01 Jan 2027 00:00:00 UTC"}}},
      {"v3 with a stale hash",
       {.path = "/openapi/v3/api/v1", .hash = "ABC", .accept = "application/json"},
       301,
       "application/json",
       {{"Location", "/openapi/v3/api/v1?hash=" + hash}, {"Cache-Control", "<none>"}}},
      {"v3 revalidated",
       {.path = "/openapi/v3/api/v1", .accept = "application/json", .if_none_match = etag},
       304,
       "",
       {{"Etag", etag}, {"Last-Modified", "<none>"}}},
      {"v3 in protobuf",
       {.path = "/openapi/v3/api/v1",
        .accept = "application/com.github.proto-openapi.spec.v3.v1.0+protobuf"},
       406,
       "",
       {}},
      {"v3 unknown group version",
       {.path = "/openapi/v3/apis/policy/v1"},
       404,
       "",
       {{"Vary", "<none>"}}},
      {"v3 trailing slash", {.path = "/openapi/v3/"}, 404, "", {}},
      {"not OpenAPI", {.path = "/openapi/v4"}, 0, "", {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    OpenApiResponse r = ServeOpenApi(openapi, c.request);
    EXPECT_EQ(r.status, c.status);
    if (r.status == 0) continue;
    EXPECT_EQ(r.content_type, c.content_type);
    for (const auto& [name, value] : c.headers) EXPECT_EQ(HeaderOf(r, name), value) << name;
    ASSERT_NE(r.body, nullptr);
    if (r.status != 200) {
      EXPECT_EQ(*r.body, "");
    }
  }
  EXPECT_EQ(ServeOpenApi(openapi, {.path = "/openapi/v3/api/v1"}).body.get(),
            openapi.V3("api/v1")->body.get())
      << "the shared bytes, not a copy";
}

TEST(OpenApiTest, BuildRejectsWhatItCannotServe) {
  struct Case {
    const char* json;
    const char* error;
  };
  const Case cases[] = {
      {"{", "openapi: invalid JSON at offset 1: Missing a name for object member."},
      {R"({"definitions":{}})", R"(openapi: no "paths" and "definitions" objects)"},
      {R"({"definitions":{},"paths":{"/api/v1/x":{"get":{"responses":{"200":{"description":"OK",
          "schema":{"$ref":"#/definitions/Nope"}}}}}}})",
       "openapi: dangling $ref #/definitions/Nope"},
      {R"({"definitions":{},"paths":{"/api/v1/x":{"get":{"parameters":[{"$ref":"#/parameters/p"}],
          "responses":{}}}}})",
       "openapi: dangling $ref #/parameters/p"},
      {R"({"definitions":{},"paths":{"/healthz":{}}})",
       "openapi: path /healthz is in no group version"},
      {R"({"definitions":{},"paths":{"/api/v1/x":{"get":{"parameters":[{"name":"a","in":"cookie",
          "type":"string"}],"responses":{}}}}})",
       "openapi v2 protobuf: /api/v1/x get parameter has `in` cookie, no parameter kind"},
  };
  for (const Case& c : cases) {
    Result<std::unique_ptr<const OpenApi>> built = OpenApi::Build(c.json, "v1.35.0");
    ASSERT_FALSE(built.has_value()) << c.json;
    EXPECT_EQ(built.error().message(), c.error);
  }
}

TEST(OpenApiTest, BuildTimeAndMemory) {
  const auto start = std::chrono::steady_clock::now();
  Result<std::unique_ptr<const OpenApi>> built =
      OpenApi::Build(api::ServedSchemaDocument(), GitVersion());
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(built.has_value()) << built.error().message();
  const OpenApi& o = **built;
  std::printf("openapi: built in %.1f ms, %zu bytes (v2 JSON %zu, v2 protobuf %zu", ms,
              o.MemoryBytes(), o.V2Json().body->size(), o.V2Protobuf().body->size());
  for (std::string_view gv : o.V3Paths()) {
    std::printf(", %.*s %zu", static_cast<int>(gv.size()), gv.data(), o.V3(gv)->body->size());
  }
  std::printf(")\n");
  EXPECT_LT(o.MemoryBytes(), 4u * 1024 * 1024);
  // Deterministic: the same input gives the same bytes, so the hashes in the index hold across
  // restarts and clients keep their caches.
  EXPECT_EQ(o.V3("api/v1")->etag, ServedOpenApi().V3("api/v1")->etag);
  EXPECT_EQ(*o.V2Protobuf().body, *ServedOpenApi().V2Protobuf().body);
}

}  // namespace
}  // namespace kt::server
