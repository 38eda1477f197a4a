// Tests of the API server end to end over loopback HTTP: a memory store, the Registry, the
// ApiServer and the real HTTP server, driven by a small blocking client on plain sockets.
//
// Most tests feed the server bad input and check what a user would see: the HTTP status and the
// metav1.Status body (reason, code and upstream's message), that the server keeps serving, and
// that nothing was half written (DESIGN.md invariant 5): after every failed write the store
// revision has not moved and LISTs of pods, nodes and namespaces are byte-for-byte unchanged.
//
// Every wait is bounded: socket reads poll with a deadline; nothing sleeps.

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <regex>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/pointer.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "server/api_server.h"
#include "server/http.h"
#include "server/http_test_client.h"
#include "server/registry.h"
#include "store/store.h"

namespace kt::server {
namespace {

using testing::HttpResponse;
using Conn = testing::TestConnection;
using Clock = std::chrono::steady_clock;
constexpr auto kTimeout = std::chrono::seconds(10);

// --- JSON access -----------------------------------------------------------------------------

struct Json {
  rapidjson::Document doc;

  explicit Json(std::string_view text) { doc.Parse(text.data(), text.size()); }
  bool ok() const { return !doc.HasParseError(); }
  const rapidjson::Value* At(const char* pointer) const {
    return rapidjson::Pointer(pointer).Get(doc);
  }
  bool Has(const char* pointer) const { return At(pointer) != nullptr; }
  // The string at `pointer`, or "<absent>" / "<not a string>".
  std::string Str(const char* pointer) const {
    const rapidjson::Value* v = At(pointer);
    if (v == nullptr) return "<absent>";
    if (!v->IsString()) return "<not a string>";
    return std::string(v->GetString(), v->GetStringLength());
  }
  int64_t Int(const char* pointer) const {
    const rapidjson::Value* v = At(pointer);
    return v != nullptr && v->IsInt64() ? v->GetInt64() : -1;
  }
  size_t Size(const char* pointer) const {
    const rapidjson::Value* v = At(pointer);
    if (v == nullptr) return 0;
    if (v->IsArray()) return v->Size();
    if (v->IsObject()) return v->MemberCount();
    return 0;
  }
};

// The names ("ns/name" or "name") of a list's items, in order.
std::vector<std::string> ItemNames(const Json& list) {
  std::vector<std::string> out;
  const rapidjson::Value* items = list.At("/items");
  if (items == nullptr || !items->IsArray()) return out;
  for (const rapidjson::Value& item : items->GetArray()) {
    std::string name;
    const rapidjson::Value* ns = rapidjson::Pointer("/metadata/namespace").Get(item);
    if (ns != nullptr && ns->IsString()) name = std::string(ns->GetString()) + "/";
    const rapidjson::Value* n = rapidjson::Pointer("/metadata/name").Get(item);
    name += n != nullptr && n->IsString() ? n->GetString() : "?";
    out.push_back(std::move(name));
  }
  return out;
}

// --- Fixture -----------------------------------------------------------------------------------

constexpr std::string_view kTableAccept =
    "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s."
    "io,application/json";

constexpr std::string_view kPods = "/api/v1/namespaces/default/pods";
constexpr std::string_view kP1 = "/api/v1/namespaces/default/pods/p1";
constexpr std::string_view kNode1 = "/api/v1/nodes/node-1";

constexpr std::string_view kNode1Json = R"({"apiVersion":"v1","kind":"Node","metadata":{
  "name":"node-1","labels":{"zone":"a","node-role.kubernetes.io/control-plane":""}},
  "spec":{"unschedulable":true,"taints":[{"key":"a","value":"1","effect":"NoSchedule"},
                                        {"key":"b","value":"1","effect":"NoExecute"}]},
  "status":{"conditions":[{"type":"Ready","status":"True"}],
            "addresses":[{"type":"InternalIP","address":"10.0.0.11"}],
            "nodeInfo":{"kubeletVersion":"v1.35.0","osImage":"Linux","kernelVersion":"6.1.0",
                        "containerRuntimeVersion":"containerd://1.7.0"}}})";

constexpr std::string_view kP1Json = R"({"apiVersion":"v1","kind":"Pod","metadata":{
  "name":"p1","labels":{"app":"web"}},
  "spec":{"containers":[{"name":"c","image":"nginx"}],
          "tolerations":[{"key":"dedicated","operator":"Equal","value":"gpu",
                          "effect":"NoExecute","tolerationSeconds":30}]}})";

std::string PodJson(std::string_view name, std::string_view extra_spec = "") {
  std::string out = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")";
  out.append(name).append(R"("},"spec":{"containers":[{"name":"c","image":"nginx"}])");
  if (!extra_spec.empty()) out.append(",").append(extra_spec);
  out.append("}}");
  return out;
}

// What a failed request must answer.
struct WantStatus {
  int code;
  std::string reason;
  std::string message;
  bool prefix = false;  // `message` is a prefix of the actual message
};

// LIST bodies that must not change when a write fails (they carry the list resourceVersion too).
struct Snapshot {
  store::Revision revision = 0;
  std::string pods;
  std::string nodes;
  std::string namespaces;
};

class ApiServerTest : public ::testing::Test {
 protected:
  void SetUp() override { StartServer(); }

  void TearDown() override {
    if (server_) server_->Stop();
  }

  void StartServer() {
    store_ = store::NewMemoryStore();
    Registry::Options registry_options;
    registry_options.track_managed_fields_on_create = track_managed_fields_on_create_;
    registry_ = std::make_unique<Registry>(store_.get(), registry_options);
    ASSERT_TRUE(registry_->Start().ok());
    api_ = std::make_unique<ApiServer>(registry_.get());
    HttpServerOptions options;
    options.listen = "127.0.0.1:0";
    auto server = StartHttpServer(options, api_.get());
    ASSERT_TRUE(server) << server.error().ToString();
    server_ = std::move(*server);
    port_ = server_->port();
    Create("/api/v1/nodes", kNode1Json);
    Create(kPods, kP1Json);
  }

  bool track_managed_fields_on_create_ = false;

  // One request on a new connection. Watches come back with their head only.
  HttpResponse Do(std::string_view method, std::string_view target, std::string_view body = "",
                  std::string_view content_type = "application/json",
                  std::vector<std::pair<std::string, std::string>> headers = {}) {
    Conn c(port_);
    EXPECT_TRUE(c.connected());
    std::string req;
    req.append(method).append(" ").append(target).append(" HTTP/1.1\r\nHost: test\r\n");
    if (!content_type.empty()) req.append("Content-Type: ").append(content_type).append("\r\n");
    for (const auto& [n, v] : headers) req.append(n).append(": ").append(v).append("\r\n");
    if (!body.empty() || method == "POST" || method == "PUT" || method == "PATCH") {
      req.append("Content-Length: ").append(std::to_string(body.size())).append("\r\n");
    }
    req.append("\r\n").append(body);
    EXPECT_TRUE(c.Send(req)) << method << " " << target;
    std::optional<HttpResponse> r = c.ReadResponse(method == "HEAD");
    EXPECT_TRUE(r.has_value()) << "no answer to " << method << " " << target;
    return r.value_or(HttpResponse{});
  }

  HttpResponse Get(std::string_view target, std::string_view accept = "application/json") {
    return Do("GET", target, "", "", {{"Accept", std::string(accept)}});
  }

  // Creates and returns the object; the test fails unless the answer is 201.
  Json Create(std::string_view collection, std::string_view body) {
    HttpResponse r = Do("POST", collection, body);
    EXPECT_EQ(r.status, 201) << collection << ": " << r.body;
    return Json(r.body);
  }

  Json GetJson(std::string_view target) {
    HttpResponse r = Get(target);
    EXPECT_EQ(r.status, 200) << target << ": " << r.body;
    return Json(r.body);
  }

  store::Revision Rev() { return store_->CurrentRevision(); }

  Snapshot Snap() {
    Snapshot s;
    s.revision = Rev();
    // A list's resourceVersion is its cache's revision, which follows writes to every resource
    // a moment behind the store: compare lists only once each cache has reached the store.
    for (Resource res : {Resource::kPods, Resource::kNodes, Resource::kNamespaces}) {
      auto caught_up = std::make_shared<std::promise<void>>();
      std::future<void> done = caught_up->get_future();
      registry_->cache(res).AfterRevision(s.revision, [caught_up] { caught_up->set_value(); });
      EXPECT_EQ(done.wait_for(kTimeout), std::future_status::ready) << "the caches lag";
    }
    for (auto [path, out] :
         {std::pair{"/api/v1/pods", &s.pods}, std::pair{"/api/v1/nodes", &s.nodes},
          std::pair{"/api/v1/namespaces", &s.namespaces}}) {
      HttpResponse r = Get(path);
      EXPECT_EQ(r.status, 200) << path << ": " << r.body;
      *out = r.body;
    }
    return s;
  }

  // Invariant 5: the store revision did not move and the lists are as they were; the LISTs also
  // show that the server still serves.
  void ExpectNothingWritten(const Snapshot& before, std::string_view context) {
    EXPECT_EQ(Rev(), before.revision) << context << ": the store revision moved";
    Snapshot after = Snap();
    EXPECT_TRUE(after.pods == before.pods) << context << ": the pods changed\n"
                                           << before.pods << "\n->\n"
                                           << after.pods;
    EXPECT_TRUE(after.nodes == before.nodes) << context << ": the nodes changed";
    EXPECT_TRUE(after.namespaces == before.namespaces) << context << ": the namespaces changed";
    EXPECT_EQ(Get("/api/v1/namespaces/default").status, 200) << context;
  }

  // `r` is a metav1.Status failure with `want`'s code, reason and message.
  static void ExpectStatus(const HttpResponse& r, const WantStatus& want,
                           std::string_view context) {
    EXPECT_EQ(r.status, want.code) << context << ": " << r.body;
    EXPECT_EQ(r.Header("Content-Type"), "application/json") << context;
    Json j(r.body);
    ASSERT_TRUE(j.ok()) << context << ": not JSON: " << r.body;
    EXPECT_EQ(j.Str("/kind"), "Status") << context;
    EXPECT_EQ(j.Str("/apiVersion"), "v1") << context;
    EXPECT_EQ(j.Str("/status"), "Failure") << context;
    EXPECT_EQ(j.Str("/reason"), want.reason) << context << ": " << r.body;
    EXPECT_EQ(j.Int("/code"), want.code) << context;
    if (want.prefix) {
      EXPECT_TRUE(j.Str("/message").starts_with(want.message))
          << context << ":\n  message: " << j.Str("/message")
          << "\n  wanted prefix: " << want.message;
    } else {
      EXPECT_EQ(j.Str("/message"), want.message) << context;
    }
  }

  // A failed write: the status is as wanted and nothing was written.
  void ExpectRejected(const HttpResponse& r, const WantStatus& want, const Snapshot& before,
                      std::string_view context) {
    ExpectStatus(r, want, context);
    ExpectNothingWritten(before, context);
  }

  std::unique_ptr<store::Store> store_;
  std::unique_ptr<Registry> registry_;
  std::unique_ptr<ApiServer> api_;
  std::unique_ptr<HttpServer> server_;
  int port_ = 0;
};

std::string Hex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

// `kubectl create namespace team-b` as observed on the wire (kubectl-protocol.md §5).
const std::string& NamespaceProtobuf() {
  // clang-format off
  static const std::string body = Hex(
      "6b387300"                                    // "k8s\0"
      "0a0f" "0a027631" "12094e616d657370616365"    // TypeMeta {v1, Namespace}
      "121e"                                        // raw Namespace (30 bytes)
      "0a16"                                        //   metadata (22 bytes)
      "0a067465616d2d62"                            //     name "team-b"
      "12001a0022002a0032003800" "4200"             //     empty strings, 0, {}
      "1200"                                        //   spec {}
      "1a020a00"                                    //   status {phase: ""}
      "1a002200");                                  // contentEncoding, contentType
  // clang-format on
  return body;
}

// --- Request bodies --------------------------------------------------------------------------

TEST_F(ApiServerTest, MalformedJsonBodyOnCreateIsBadRequestNamingTheType) {
  // Upstream: the JSON serializer cannot even find the kind, and transformDecodeError answers
  // "the object provided is unrecognized (must be of type Pod): couldn't get version/kind; json
  // parse error: <Go's error> (<the first bytes>)".
  const char* bodies[] = {R"({"metadata":)", R"({"metadata":{"name":"x"},})", "{bad json}", "x"};
  for (const char* body : bodies) {
    Snapshot before = Snap();
    ExpectRejected(Do("POST", kPods, body),
                   {400, "BadRequest",
                    "the object provided is unrecognized (must be of type Pod): couldn't get "
                    "version/kind; json parse error: ",
                    true},
                   before, body);
  }
}

TEST_F(ApiServerTest, JsonThatIsNotAnObjectIsBadRequest) {
  // Upstream: json.Unmarshal of an array/string/number into the TypeMeta struct fails:
  // "... json parse error: json: cannot unmarshal array into Go value of type struct { ... }".
  const std::pair<const char*, const char*> bodies[] = {
      {"[1,2]", "array"}, {R"("a string")", "string"}, {"42", "number"}, {"true", "bool"}};
  for (const auto& [body, go_type] : bodies) {
    Snapshot before = Snap();
    ExpectRejected(Do("POST", kPods, body),
                   {400, "BadRequest",
                    std::string("the object provided is unrecognized (must be of type Pod): "
                                "couldn't get version/kind; json parse error: json: cannot "
                                "unmarshal ") +
                        go_type + " into Go value of type struct",
                    true},
                   before, body);
  }
}

TEST_F(ApiServerTest, FieldOfTheWrongTypeIsBadRequestNamingTheField) {
  struct Case {
    std::string collection;
    std::string body;
    std::string kind;
    std::string field;  // must appear in the message
  } cases[] = {
      {std::string(kPods), PodJson("bad", R"("tolerations":[{"tolerationSeconds":"x"}])"), "Pod",
       "tolerationSeconds"},
      {std::string(kPods), PodJson("bad", R"("nodeName":7)"), "Pod", "nodeName"},
      {std::string(kPods),
       R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"bad","labels":["a"]},)"
       R"("spec":{"containers":[{"name":"c","image":"i"}]}})",
       "Pod", "labels"},
      {"/api/v1/nodes",
       R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n"},)"
       R"("spec":{"taints":"NoSchedule"}})",
       "Node", "taints"},
  };
  for (const Case& c : cases) {
    Snapshot before = Snap();
    HttpResponse r = Do("POST", c.collection, c.body);
    ExpectRejected(r,
                   {400, "BadRequest",
                    c.kind + " in version \"v1\" cannot be handled as a " + c.kind + ": ", true},
                   before, c.body);
    EXPECT_NE(Json(r.body).Str("/message").find(c.field), std::string::npos) << r.body;
  }
}

TEST_F(ApiServerTest, YamlBodyCreatesAndMalformedYamlIsBadRequest) {
  HttpResponse r = Do("POST", "/api/v1/namespaces",
                      "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: from-yaml\n"
                      "  labels:\n    team: a\n",
                      "application/yaml");
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(Json(r.body).Str("/metadata/name"), "from-yaml");
  Json ns = GetJson("/api/v1/namespaces/from-yaml");
  EXPECT_EQ(ns.Str("/metadata/labels/team"), "a");
  EXPECT_EQ(ns.Str("/status/phase"), "Active");
  // A pod in YAML, with a charset parameter.
  r = Do("POST", kPods,
         "apiVersion: v1\nkind: Pod\nmetadata:\n  name: yaml-pod\nspec:\n  containers:\n"
         "  - name: c\n    image: nginx\n  tolerations:\n  - key: k\n    operator: Exists\n",
         "application/yaml; charset=utf-8");
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(GetJson(std::string(kPods) + "/yaml-pod").Str("/spec/tolerations/0/operator"),
            "Exists");

  const char* bad[] = {"metadata: [\n", "a: b: c\n", "kind: Pod\n\t- x\n", "{"};
  for (const char* body : bad) {
    Snapshot before = Snap();
    // Upstream: the YAML serializer's YAMLToJSON fails before a kind is known, so
    // transformDecodeError answers "the object provided is unrecognized (must be of type Pod):
    // yaml: line N: ... (<the first bytes>)".
    ExpectRejected(Do("POST", kPods, body, "application/yaml"),
                   {400, "BadRequest",
                    "the object provided is unrecognized (must be of type Pod): yaml: ", true},
                   before, body);
  }
}

TEST_F(ApiServerTest, ProtobufNamespaceFromKubectlCreates) {
  HttpResponse r =
      Do("POST", "/api/v1/namespaces?fieldManager=kubectl-create&fieldValidation=Strict",
         NamespaceProtobuf(), "application/vnd.kubernetes.protobuf",
         {{"Accept", "application/vnd.kubernetes.protobuf,application/json"}});
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(r.Header("Content-Type"), "application/json");
  Json ns(r.body);
  EXPECT_EQ(ns.Str("/kind"), "Namespace");
  EXPECT_EQ(ns.Str("/metadata/name"), "team-b");
  EXPECT_EQ(ns.Str("/status/phase"), "Active");
  EXPECT_EQ(GetJson("/api/v1/namespaces/team-b").Str("/metadata/uid"), ns.Str("/metadata/uid"));
}

TEST_F(ApiServerTest, TruncatedOrGarbageProtobufIsBadRequest) {
  const std::string& good = NamespaceProtobuf();
  struct Case {
    std::string name;
    std::string body;
    std::string message_part;  // upstream's protobuf error inside the message
  } cases[] = {
      {"truncated inside the object", good.substr(0, good.size() - 12), "unexpected EOF"},
      {"truncated inside TypeMeta", good.substr(0, 10), "unexpected EOF"},
      {"magic only", good.substr(0, 4), ""},
      {"no magic", "hello, world", "does not appear to be a protobuf message"},
      {"magic then garbage",
       std::string("k8s\0", 4) + "\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", ""},
  };
  for (const Case& c : cases) {
    Snapshot before = Snap();
    HttpResponse r =
        Do("POST", "/api/v1/namespaces", c.body, "application/vnd.kubernetes.protobuf");
    ExpectRejected(r,
                   {400, "BadRequest",
                    "the object provided is unrecognized (must be of type Namespace): ", true},
                   before, c.name);
    const std::string message = Json(r.body).Str("/message");
    EXPECT_FALSE(message.empty()) << c.name;
    EXPECT_NE(message.find(c.message_part), std::string::npos) << c.name << ": " << message;
  }
}

TEST_F(ApiServerTest, UnknownContentTypeIsUnsupportedMediaType) {
  const std::string body_types =
      "the body of the request was in an unknown format - accepted media types include: "
      "application/json, application/yaml, application/vnd.kubernetes.protobuf";
  const std::string patch_types =
      "the body of the request was in an unknown format - accepted media types include: "
      "application/json-patch+json, application/merge-patch+json, "
      "application/strategic-merge-patch+json, application/apply-patch+yaml";
  struct Case {
    std::string method;
    std::string target;
    std::string content_type;
    std::string message;
  } cases[] = {
      {"POST", std::string(kPods), "text/plain", body_types},
      {"POST", std::string(kPods), "application/xml", body_types},
      {"POST", std::string(kPods), "application/cbor", body_types},
      {"PUT", std::string(kP1), "text/plain", body_types},
      {"POST", std::string(kP1) + "/eviction", "text/plain", body_types},
      {"PATCH", std::string(kP1), "application/json", patch_types},
      {"PATCH", std::string(kP1), "text/plain", patch_types},
      {"PATCH", std::string(kNode1), "", patch_types},
  };
  for (const Case& c : cases) {
    Snapshot before = Snap();
    ExpectRejected(Do(c.method, c.target, kP1Json, c.content_type),
                   {415, "UnsupportedMediaType", c.message}, before,
                   c.method + " " + c.target + " " + c.content_type);
  }
}

// --- Patches -----------------------------------------------------------------------------------

TEST_F(ApiServerTest, MalformedPatchIsBadRequestForEachPatchType) {
  constexpr std::string_view kMerge = "application/merge-patch+json";
  constexpr std::string_view kJsonPatch = "application/json-patch+json";
  constexpr std::string_view kStrategic = "application/strategic-merge-patch+json";
  struct Case {
    std::string_view content_type;
    std::string patch;
    std::string message;
  } cases[] = {
      // handlers/patch.go: merge and JSON patches are decoded strictly first (fieldValidation
      // defaults to Warn): "error decoding patch: <Go's error>".
      {kMerge, R"({"metadata":)", "error decoding patch: unexpected end of JSON input"},
      {kMerge, "[1]",
       "error decoding patch: json: cannot unmarshal array into Go value of type "
       "map[string]interface {}"},
      {kMerge, "nope",
       "error decoding patch: invalid character 'o' in literal null (expecting 'u')"},
      {kMerge, "{}}", "error decoding patch: invalid character '}' after top-level value"},
      {kJsonPatch, R"([{"op":"add")", "error decoding patch: unexpected end of JSON input"},
      {kJsonPatch, R"({"op":"add","path":"/x","value":1})",
       "error decoding patch: json: cannot unmarshal object into Go value of type "
       "[]handlers.jsonPatchOp"},
      {kJsonPatch, "", "error decoding patch: unexpected end of JSON input"},
      // Strategic merge patch: NewBadRequest with the decode error itself.
      {kStrategic, R"({"metadata":)", "unexpected end of JSON input"},
      {kStrategic, "[]",
       "json: cannot unmarshal array into Go value of type map[string]interface {}"},
      {kStrategic, R"({"spec":{"taints":[}})",
       "invalid character '}' looking for beginning of value"},
      {kStrategic, "}{", "invalid character '}' looking for beginning of value"},
      {kMerge, "}", "error decoding patch: invalid character '}' looking for beginning of value"},
  };
  for (const Case& c : cases) {
    Snapshot before = Snap();
    HttpResponse r = Do("PATCH", kP1, c.patch, c.content_type);
    ExpectRejected(r, {400, "BadRequest", c.message}, before,
                   std::string(c.content_type) + " " + c.patch);
  }
}

TEST_F(ApiServerTest, JsonPatchWhoseTestFailsIsInvalid) {
  Snapshot before = Snap();
  ExpectRejected(Do("PATCH", kP1,
                    R"([{"op":"test","path":"/metadata/labels/app","value":"db"},)"
                    R"({"op":"replace","path":"/metadata/labels/app","value":"x"}])",
                    "application/json-patch+json"),
                 {422, "Invalid", "the server rejected our request due to an error in our request"},
                 before, "test op");
  // A patch that does not apply (removing what is not there) is the same 422.
  ExpectRejected(Do("PATCH", kP1, R"([{"op":"remove","path":"/metadata/labels/nope"}])",
                    "application/json-patch+json"),
                 {422, "Invalid", "the server rejected our request due to an error in our request"},
                 before, "remove missing");
  // As kube-apiserver's NewGenericServerResponse: empty details, not none.
  HttpResponse failed = Do("PATCH", kP1, R"([{"op":"test","path":"/metadata/name","value":"no"}])",
                           "application/json-patch+json");
  EXPECT_NE(failed.body.find(R"("reason":"Invalid","details":{},"code":422)"), std::string::npos)
      << failed.body;
  // And one whose test passes applies.
  HttpResponse ok = Do("PATCH", kP1,
                       R"([{"op":"test","path":"/metadata/labels/app","value":"web"},)"
                       R"({"op":"replace","path":"/metadata/labels/app","value":"api"}])",
                       "application/json-patch+json");
  EXPECT_EQ(ok.status, 200) << ok.body;
  EXPECT_EQ(GetJson(kP1).Str("/metadata/labels/app"), "api");
}

TEST_F(ApiServerTest, StrategicMergePatchReplacesTheTaintList) {
  // kubectl taint sends the whole new list; spec.taints has no merge key.
  HttpResponse r =
      Do("PATCH", std::string(kNode1) + "?fieldManager=kubectl-taint&fieldValidation=Strict",
         R"({"spec":{"taints":[{"effect":"PreferNoSchedule","key":"c","value":"1"},)"
         R"({"effect":"NoExecute","key":"b","value":"1"}]}})",
         "application/strategic-merge-patch+json");
  ASSERT_EQ(r.status, 200) << r.body;
  Json node = GetJson(kNode1);
  ASSERT_EQ(node.Size("/spec/taints"), 2u) << r.body;
  EXPECT_EQ(node.Str("/spec/taints/0/key"), "c");
  EXPECT_EQ(node.Str("/spec/taints/0/effect"), "PreferNoSchedule");
  EXPECT_EQ(node.Str("/spec/taints/1/key"), "b");
  EXPECT_TRUE(node.At("/spec/unschedulable")->GetBool()) << "other spec fields stay";
  // The PATCH answer is the updated node (kubectl taint -o yaml prints it).
  EXPECT_EQ(Json(r.body).Size("/spec/taints"), 2u);

  // Removing the last taint sends null.
  r = Do("PATCH", kNode1, R"({"spec":{"taints":null}})", "application/strategic-merge-patch+json");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_FALSE(GetJson(kNode1).Has("/spec/taints"));
}

TEST_F(ApiServerTest, MergePatchNullDeletesALabel) {
  HttpResponse r = Do("PATCH", std::string(kNode1) + "?fieldManager=kubectl-label",
                      R"({"metadata":{"labels":{"disk":"ssd"}}})", "application/merge-patch+json");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(GetJson(kNode1).Str("/metadata/labels/disk"), "ssd");
  r = Do("PATCH", kNode1, R"({"metadata":{"labels":{"disk":null}}})",
         "application/merge-patch+json");
  ASSERT_EQ(r.status, 200) << r.body;
  Json node = GetJson(kNode1);
  EXPECT_FALSE(node.Has("/metadata/labels/disk"));
  EXPECT_EQ(node.Str("/metadata/labels/zone"), "a") << "other labels stay";
  // Listing by the removed label finds nothing; by the kept one, the node.
  EXPECT_EQ(ItemNames(Json(Get("/api/v1/nodes?labelSelector=disk").body)).size(), 0u);
  EXPECT_EQ(ItemNames(Json(Get("/api/v1/nodes?labelSelector=zone%3Da").body)),
            std::vector<std::string>{"node-1"});
}

// --- Selectors and query parameters ------------------------------------------------------------

TEST_F(ApiServerTest, MalformedSelectorsAreBadRequest) {
  struct Case {
    std::string query;  // already escaped
    std::string message;
  } cases[] = {
      {"fieldSelector=spec.bogus%3Dx", "field label not supported: spec.bogus"},
      {"fieldSelector=x%3Da%2Cb", "invalid selector: 'x=a,b'; can't understand 'b'"},
      {"fieldSelector=spec.bogus", "invalid selector: 'spec.bogus'; can't understand 'spec.bogus'"},
      {"labelSelector=x%20nott%20in%20(y)",
       "unable to parse requirement: found 'nott', expected: in, notin, =, ==, !=, gt, lt"},
      {"labelSelector=a%20in%20(xyz%20abc)",
       "unable to parse requirement: found 'abc', expected: ',' or ')'"},
      {"labelSelector=x%3Da%2C", "found '', expected: identifier after ','"},
  };
  for (const Case& c : cases) {
    for (std::string_view base : {"/api/v1/namespaces/default/pods", "/api/v1/pods"}) {
      for (std::string_view extra : {"", "&watch=true", "&limit=500"}) {
        const std::string target = std::string(base) + "?" + c.query + std::string(extra);
        ExpectStatus(Get(target), {400, "BadRequest", c.message}, target);
        ExpectStatus(Get(target, kTableAccept), {400, "BadRequest", c.message}, target);
      }
    }
  }
  // Node field labels are their own set.
  ExpectStatus(Get("/api/v1/nodes?fieldSelector=spec.nodeName%3Dx"),
               {400, "BadRequest", "field label not supported: spec.nodeName"}, "nodes");
  // A DELETE collection with a bad selector deletes nothing.
  Snapshot before = Snap();
  ExpectRejected(Do("DELETE", std::string(kPods) + "?labelSelector=x%20nott%20in%20(y)", "", ""),
                 {400, "BadRequest",
                  "unable to parse requirement: found 'nott', expected: in, notin, =, ==, !=, gt, "
                  "lt"},
                 before, "deletecollection");
}

TEST_F(ApiServerTest, GoodSelectorsFilterListsExactly) {
  Create(kPods, R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"db","labels":{"app":"db"}},
                   "spec":{"nodeName":"node-1","containers":[{"name":"c","image":"i"}]}})");
  struct Case {
    std::string query;
    std::vector<std::string> names;
  } cases[] = {
      {"labelSelector=app%3Dweb", {"default/p1"}},
      {"labelSelector=app%20in%20(web%2Cdb)", {"default/db", "default/p1"}},
      {"labelSelector=app!%3Dweb", {"default/db"}},
      {"labelSelector=!app", {}},
      {"fieldSelector=spec.nodeName%3Dnode-1", {"default/db"}},
      {"fieldSelector=spec.nodeName%3D", {"default/p1"}},
      {"fieldSelector=spec.nodeName!%3Dnode-1", {"default/p1"}},
      {"fieldSelector=metadata.name%3Dp1", {"default/p1"}},
      {"fieldSelector=status.phase!%3DSucceeded%2Cstatus.phase!%3DFailed%2Cspec.nodeName%3Dnode-1",
       {"default/db"}},
  };
  for (const Case& c : cases) {
    const std::string target = "/api/v1/pods?" + c.query;
    HttpResponse r = Get(target);
    ASSERT_EQ(r.status, 200) << target << ": " << r.body;
    EXPECT_EQ(ItemNames(Json(r.body)), c.names) << target;
  }
}

TEST_F(ApiServerTest, UnknownResourceGroupOrVersionIsNotFound) {
  const char* targets[] = {
      "/api/v1/bogus",
      "/api/v1/namespaces/default/bogus",
      "/api/v2/pods",
      "/apis/nogroup/v1/things",
      "/apis/nogroup/v1",
      "/apis/apps/v2/daemonsets",
      "/apis/apps/v1/pods",
      "/api/v1/namespaces/default/pods/p1/bogus",
      "/api/v1/nodes/node-1/eviction",
      "/api/v1/namespaces/default/nodes",
      "/api/v1/pods/p1",
      "/nothing/here",
  };
  for (const char* target : targets) {
    for (std::string_view method : {"GET", "POST", "DELETE"}) {
      Snapshot before = Snap();
      HttpResponse r = Do(method, target, method == "POST" ? kP1Json : "");
      ExpectRejected(r, {404, "NotFound", "the server could not find the requested resource"},
                     before, std::string(method) + " " + target);
    }
  }
}

TEST_F(ApiServerTest, UnsupportedVerbIsMethodNotAllowed) {
  struct Case {
    std::string method;
    std::string target;
  } cases[] = {
      {"POST", std::string(kP1)},                 // create on an item
      {"PUT", std::string(kPods)},                // update on a collection
      {"PATCH", std::string(kPods)},              // patch on a collection
      {"PUT", "/api/v1/nodes"},                   //
      {"POST", "/api/v1/pods"},                   // create without a namespace
      {"GET", std::string(kP1) + "/eviction"},    // eviction is create-only
      {"DELETE", std::string(kP1) + "/binding"},  //
      {"DELETE", std::string(kP1) + "/status"},   // status: get, patch, update
      {"OPTIONS", std::string(kPods)},            //
      {"DELETE", "/api/v1/namespaces"},           // namespaces have no deletecollection
  };
  for (const Case& c : cases) {
    Snapshot before = Snap();
    ExpectRejected(Do(c.method, c.target, c.method == "GET" || c.method == "DELETE" ? "" : kP1Json),
                   {405, "MethodNotAllowed",
                    "the server does not allow this method on the requested resource"},
                   before, c.method + " " + c.target);
  }
}

TEST_F(ApiServerTest, DeleteCollectionWithoutANamespaceIsNotAllowed) {
  // Upstream registers deletecollection on /namespaces/{ns}/pods only; /api/v1/pods serves list
  // and watch, so a DELETE there is a 405 and deletes nothing.
  Create("/api/v1/namespaces/kube-system/pods", PodJson("sys"));
  for (const char* target : {"/api/v1/pods", "/api/v1/events", "/api/v1/pods?labelSelector=app"}) {
    Snapshot before = Snap();
    ExpectRejected(Do("DELETE", target, "", ""),
                   {405, "MethodNotAllowed",
                    "the server does not allow this method on the requested resource"},
                   before, target);
  }
}

TEST_F(ApiServerTest, StatusSubresourceExistsOnlyWhereDiscoveryListsIt) {
  Create("/api/v1/namespaces/default/events",
         R"({"apiVersion":"v1","kind":"Event","metadata":{"name":"e1"},)"
         R"("involvedObject":{"kind":"Node","name":"node-1"},"reason":"R","message":"m"})");
  // pods/status exists: GET answers the pod.
  EXPECT_EQ(GetJson(std::string(kP1) + "/status").Str("/metadata/name"), "p1");
  // events have no status subresource: upstream has no such route, so 404 for every verb.
  for (std::string_view method : {"GET", "PUT", "PATCH", "POST", "DELETE"}) {
    Snapshot before = Snap();
    const std::string target = "/api/v1/namespaces/default/events/e1/status";
    ExpectRejected(Do(method, target, method == "GET" || method == "DELETE" ? "" : "{}",
                      method == "PATCH" ? "application/merge-patch+json" : "application/json"),
                   {404, "NotFound", "the server could not find the requested resource"}, before,
                   std::string(method) + " " + target);
  }
}

TEST_F(ApiServerTest, DeleteCollectionWorksWhereDiscoveryAdvertisesIt) {
  // Discovery lists "deletecollection" for these resources; a client that trusts it (client-go
  // DeleteCollection, `kubectl delete --all` through a dynamic client) must not get a 405.
  std::vector<std::string> advertised;  // collection paths
  for (const char* group_version :
       {"/api/v1", "/apis/apps/v1", "/apis/coordination.k8s.io/v1", "/apis/scheduling.k8s.io/v1"}) {
    Json doc = GetJson(group_version);
    const rapidjson::Value* resources = doc.At("/resources");
    ASSERT_TRUE(resources && resources->IsArray()) << group_version;
    for (const rapidjson::Value& res : resources->GetArray()) {
      const std::string name = res["name"].GetString();
      if (name.find('/') != std::string::npos) continue;
      for (const rapidjson::Value& verb : res["verbs"].GetArray()) {
        if (std::string_view(verb.GetString()) != "deletecollection") continue;
        advertised.push_back(std::string(group_version) +
                             (res["namespaced"].GetBool() ? "/namespaces/default/" : "/") + name);
      }
    }
  }
  EXPECT_GE(advertised.size(), 6u);
  for (const std::string& collection : advertised) {
    const std::string target = collection + "?labelSelector=matches%3Dnothing";
    Snapshot before = Snap();
    HttpResponse r = Do("DELETE", target, "", "");
    EXPECT_EQ(r.status, 200) << target << ": " << r.body;
    EXPECT_EQ(Json(r.body).Size("/items"), 0u) << target;
    ExpectNothingWritten(before, target);
  }
}

// --- Writes that conflict or are refused --------------------------------------------------------

TEST_F(ApiServerTest, BodyOverThreeMebibytesIsTooLarge) {
  std::string big = PodJson("big", R"("x":")" + std::string(3 * 1024 * 1024, 'a') + R"(")");
  Snapshot before = Snap();
  ExpectRejected(Do("POST", kPods, big),
                 {413, "RequestEntityTooLarge", "Request entity too large: limit is 3145728"},
                 before, "3 MiB pod");
}

TEST_F(ApiServerTest, UpdateWithStaleResourceVersionIsConflict) {
  Json p1 = GetJson(kP1);
  const std::string stale_rv = p1.Str("/metadata/resourceVersion");
  ASSERT_EQ(Do("PATCH", kP1, R"({"metadata":{"labels":{"v":"2"}}})", "application/merge-patch+json")
                .status,
            200);
  const std::string message =
      "Operation cannot be fulfilled on pods \"p1\": the object has been modified; please apply "
      "your changes to the latest version and try again";
  Snapshot before = Snap();
  // PUT of the object as first read.
  std::string body = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p1","namespace":)"
                     R"("default","resourceVersion":")" +
                     stale_rv +
                     R"(","labels":{"app":"web","v":"3"}},"spec":{"containers":[{"name":"c",)"
                     R"("image":"nginx"}],"tolerations":[{"key":"dedicated","operator":"Equal",)"
                     R"("value":"gpu","effect":"NoExecute","tolerationSeconds":30}]}})";
  HttpResponse r = Do("PUT", kP1, body);
  ExpectRejected(r, {409, "Conflict", message}, before, "PUT");
  Json status(r.body);
  EXPECT_EQ(status.Str("/details/name"), "p1");
  EXPECT_EQ(status.Str("/details/kind"), "pods");
  // A patch that carries the stale resourceVersion is refused the same way.
  ExpectRejected(Do("PATCH", kP1,
                    R"({"metadata":{"resourceVersion":")" + stale_rv + R"(","labels":{"v":"3"}}})",
                    "application/merge-patch+json"),
                 {409, "Conflict", message}, before, "PATCH");
  // Nodes too.
  Json node = GetJson(kNode1);
  ASSERT_EQ(Do("PATCH", kNode1, R"({"spec":{"unschedulable":null}})",
               "application/strategic-merge-patch+json")
                .status,
            200);
  before = Snap();
  ExpectRejected(Do("PATCH", kNode1,
                    R"({"metadata":{"resourceVersion":")" + node.Str("/metadata/resourceVersion") +
                        R"("},"spec":{"unschedulable":true}})",
                    "application/strategic-merge-patch+json"),
                 {409, "Conflict",
                  "Operation cannot be fulfilled on nodes \"node-1\": the object has been "
                  "modified; please apply your changes to the latest version and try again"},
                 before, "node PATCH");
}

TEST_F(ApiServerTest, PodUpdateWithoutResourceVersionIsInvalid) {
  Snapshot before = Snap();
  ExpectRejected(Do("PUT", kP1, PodJson("p1")),
                 {422, "Invalid",
                  "Pod \"p1\" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be "
                  "specified for an update"},
                 before, "PUT without resourceVersion");
}

TEST_F(ApiServerTest, CreateOfAnExistingObjectIsAlreadyExists) {
  struct Case {
    std::string collection;
    std::string body;
    std::string message;
    std::string kind;
  } cases[] = {
      {std::string(kPods), std::string(kP1Json), "pods \"p1\" already exists", "pods"},
      {"/api/v1/nodes", std::string(kNode1Json), "nodes \"node-1\" already exists", "nodes"},
      {"/api/v1/namespaces",
       R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"default"}})",
       "namespaces \"default\" already exists", "namespaces"},
  };
  for (const Case& c : cases) {
    Snapshot before = Snap();
    HttpResponse r = Do("POST", c.collection, c.body);
    ExpectRejected(r, {409, "AlreadyExists", c.message}, before, c.collection);
    EXPECT_EQ(Json(r.body).Str("/details/kind"), c.kind);
  }
}

TEST_F(ApiServerTest, PodUpdateChangingNodeNameIsForbidden) {
  Json p1 = GetJson(kP1);
  const std::string prefix =
      "Pod \"p1\" is invalid: spec: Forbidden: pod updates may not change fields other than "
      "`spec.containers[*].image`,";
  Snapshot before = Snap();
  HttpResponse r = Do("PATCH", kP1, R"({"spec":{"nodeName":"node-1"}})",
                      "application/strategic-merge-patch+json");
  ExpectRejected(r, {422, "Invalid", prefix, true}, before, "PATCH nodeName");
  Json status(r.body);
  EXPECT_EQ(status.Str("/details/kind"), "Pod");
  EXPECT_EQ(status.Str("/details/name"), "p1");
  EXPECT_EQ(status.Str("/details/causes/0/reason"), "FieldValueForbidden");
  EXPECT_EQ(status.Str("/details/causes/0/field"), "spec");
  // The same through PUT.
  std::string body =
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p1","resourceVersion":")" +
      p1.Str("/metadata/resourceVersion") +
      R"("},"spec":{"nodeName":"node-1","containers":[{"name":"c","image":"nginx"}],)"
      R"("tolerations":[{"key":"dedicated","operator":"Equal","value":"gpu",)"
      R"("effect":"NoExecute","tolerationSeconds":30}]}})";
  ExpectRejected(Do("PUT", kP1, body), {422, "Invalid", prefix, true}, before, "PUT nodeName");
  // The image may change.
  r = Do("PATCH", kP1, R"({"spec":{"containers":[{"name":"c","image":"nginx:2"}]}})",
         "application/strategic-merge-patch+json");
  EXPECT_EQ(r.status, 200) << r.body;
}

// upstream ValidatePodUpdate: a pod update may change container images, tolerations (added, or
// their tolerationSeconds), activeDeadlineSeconds, terminationGracePeriodSeconds and removing
// scheduling gates; anything else in the spec is forbidden. Merge patches here, so the list and
// its members are replaced as given.
TEST_F(ApiServerTest, PodUpdateMayChangeOnlyTheMaskedSpecFields) {
  const std::string prefix =
      "Pod \"p1\" is invalid: spec: Forbidden: pod updates may not change fields other than ";
  struct Case {
    const char* patch;
    bool allowed;
  };
  const Case cases[] = {
      {R"({"spec":{"containers":[{"name":"c","image":"nginx:3"}]}})", true},
      {R"({"spec":{"activeDeadlineSeconds":60}})", true},
      {R"({"spec":{"terminationGracePeriodSeconds":5}})", true},
      {R"({"spec":{"containers":[{"image":"nginx:4","name":"c"}]}})", true},
      {R"({"spec":{"containers":[{"name":"c","image":"nginx","args":["x"]}]}})", false},
      {R"({"spec":{"containers":[{"name":"d","image":"nginx"}]}})", false},
      {R"({"spec":{"containers":[{"name":"c","image":"nginx"},{"name":"d","image":"x"}]}})", false},
      {R"({"spec":{"initContainers":[{"name":"i","image":"busybox"}]}})", false},
      {R"({"spec":{"hostname":"h"}})", false},
      {R"({"spec":{"priority":5}})", false},
  };
  for (const Case& c : cases) {
    Snapshot before = Snap();
    HttpResponse r = Do("PATCH", kP1, c.patch, "application/merge-patch+json");
    if (c.allowed) {
      EXPECT_EQ(r.status, 200) << c.patch << ": " << r.body;
    } else {
      ExpectRejected(r, {422, "Invalid", prefix, true}, before, c.patch);
    }
  }
}

TEST_F(ApiServerTest, RemovingOrChangingATolerationIsForbidden) {
  const WantStatus want{422, "Invalid",
                        "Pod \"p1\" is invalid: spec.tolerations: Forbidden: existing toleration "
                        "can not be modified except its tolerationSeconds"};
  const char* patches[] = {
      R"({"spec":{"tolerations":[]}})",
      R"({"spec":{"tolerations":null}})",
      R"({"spec":{"tolerations":[{"key":"other","operator":"Exists"}]}})",
      R"({"spec":{"tolerations":[{"key":"dedicated","operator":"Equal","value":"cpu",)"
      R"("effect":"NoExecute","tolerationSeconds":30}]}})",
  };
  for (const char* patch : patches) {
    Snapshot before = Snap();
    HttpResponse r = Do("PATCH", kP1, patch, "application/strategic-merge-patch+json");
    ExpectRejected(r, want, before, patch);
    EXPECT_EQ(Json(r.body).Str("/details/causes/0/field"), "spec.tolerations") << r.body;
  }
  // tolerationSeconds may change, and tolerations may be added.
  HttpResponse r = Do("PATCH", kP1,
                      R"({"spec":{"tolerations":[{"key":"dedicated","operator":"Equal",)"
                      R"("value":"gpu","effect":"NoExecute","tolerationSeconds":5},)"
                      R"({"key":"extra","operator":"Exists","effect":"NoSchedule"}]}})",
                      "application/strategic-merge-patch+json");
  ASSERT_EQ(r.status, 200) << r.body;
  // The list replaced the stored one; DefaultTolerationSeconds appended its two again.
  Json p1 = GetJson(kP1);
  EXPECT_EQ(p1.Size("/spec/tolerations"), 4u);
  EXPECT_EQ(p1.Int("/spec/tolerations/0/tolerationSeconds"), 5);
  EXPECT_EQ(p1.Str("/spec/tolerations/1/key"), "extra");
  EXPECT_EQ(p1.Str("/spec/tolerations/2/key"), "node.kubernetes.io/not-ready");
  EXPECT_EQ(p1.Str("/spec/tolerations/3/key"), "node.kubernetes.io/unreachable");
}

TEST_F(ApiServerTest, BindingTwiceIsConflict) {
  const std::string binding = R"({"apiVersion":"v1","kind":"Binding","metadata":{"name":"p1"},)"
                              R"("target":{"apiVersion":"v1","kind":"Node","name":"node-1"}})";
  HttpResponse r = Do("POST", std::string(kP1) + "/binding", binding);
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(Json(r.body).Str("/status"), "Success");
  Json p1 = GetJson(kP1);
  EXPECT_EQ(p1.Str("/spec/nodeName"), "node-1");

  Snapshot before = Snap();
  ExpectRejected(Do("POST", std::string(kP1) + "/binding",
                    R"({"apiVersion":"v1","kind":"Binding","metadata":{"name":"p1"},)"
                    R"("target":{"name":"node-2"}})"),
                 {409, "Conflict",
                  "Operation cannot be fulfilled on pods/binding \"p1\": pod p1 is already "
                  "assigned to node \"node-1\""},
                 before, "second binding");
  // A binding of a pod that does not exist.
  ExpectRejected(Do("POST", std::string(kPods) + "/ghost/binding", binding),
                 {404, "NotFound", "pods \"ghost\" not found"}, before, "ghost binding");
}

TEST_F(ApiServerTest, EvictionOfAMissingPodIsNotFoundAndOfAPresentPodDeletesIt) {
  const std::string eviction =
      R"({"kind":"Eviction","apiVersion":"policy/v1","metadata":{"name":"ghost",)"
      R"("namespace":"default","creationTimestamp":null},"deleteOptions":{}})";
  Snapshot before = Snap();
  HttpResponse r = Do("POST", std::string(kPods) + "/ghost/eviction", eviction);
  ExpectRejected(r, {404, "NotFound", "pods \"ghost\" not found"}, before, "eviction of ghost");
  EXPECT_EQ(Json(r.body).Str("/details/name"), "ghost");
  EXPECT_EQ(Json(r.body).Str("/details/kind"), "pods");

  r = Do("POST", std::string(kP1) + "/eviction",
         R"({"kind":"Eviction","apiVersion":"policy/v1","metadata":{"name":"p1"}})");
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(r.body,
            R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","code":201})");
  EXPECT_EQ(Get(kP1).status, 404);
}

TEST_F(ApiServerTest, CreateInAMissingNamespaceIsNotFound) {
  Snapshot before = Snap();
  HttpResponse r = Do("POST", "/api/v1/namespaces/x/pods", PodJson("p"));
  ExpectRejected(r, {404, "NotFound", "namespaces \"x\" not found"}, before, "pod in x");
  Json status(r.body);
  EXPECT_EQ(status.Str("/details/name"), "x");
  EXPECT_EQ(status.Str("/details/kind"), "namespaces");
  ExpectRejected(Do("POST", "/api/v1/namespaces/x/events",
                    R"({"apiVersion":"v1","kind":"Event","metadata":{"name":"e"},)"
                    R"("involvedObject":{"kind":"Node","name":"node-1"}})"),
                 {404, "NotFound", "namespaces \"x\" not found"}, before, "event in x");
  // GET and LIST in a missing namespace are a plain not-found and an empty list.
  ExpectStatus(Get("/api/v1/namespaces/x/pods/p"), {404, "NotFound", "pods \"p\" not found"},
               "GET");
  HttpResponse list = Get("/api/v1/namespaces/x/pods");
  EXPECT_EQ(list.status, 200);
  EXPECT_EQ(Json(list.body).Size("/items"), 0u);
}

// A pod's node selection is validated as upstream (validateNodeAffinity, ValidateLabels): a
// selector the scheduler could never satisfy is refused instead of stored.
TEST_F(ApiServerTest, PodNodeAffinityIsValidated) {
  struct Case {
    std::string spec;  // spec members besides containers
    std::string message;
  };
  const std::string kRequired =
      "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.";
  const Case cases[] = {
      {R"("affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":)"
       R"({"nodeSelectorTerms":[{"matchExpressions":[{"key":"pool","operator":"Foo","values":["a"]}]}]}}})",
       kRequired + "nodeSelectorTerms[0].matchExpressions[0].operator: Invalid value: \"Foo\": "
                   "not a valid selector operator"},
      {R"("affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":)"
       R"({"nodeSelectorTerms":[]}}})",
       kRequired + "nodeSelectorTerms: Required value: must have at least one node selector term"},
      {R"("affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":)"
       R"({"nodeSelectorTerms":[{"matchExpressions":[{"key":"zone","operator":"In"}]}]}}})",
       kRequired + "nodeSelectorTerms[0].matchExpressions[0].values: Required value: must be "
                   "specified when `operator` is 'In' or 'NotIn'"},
      {R"("affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":)"
       R"({"nodeSelectorTerms":[{"matchFields":[{"key":"metadata.uid","operator":"In","values":["u"]}]}]}}})",
       kRequired + "nodeSelectorTerms[0].matchFields[0].key: Invalid value: \"metadata.uid\": "
                   "not a valid field selector key"},
      {R"("affinity":{"nodeAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":)"
       R"([{"weight":101,"preference":{"matchExpressions":[{"key":"a","operator":"Exists"}]}}]}})",
       "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: "
       "Invalid value: 101: must be in the range 1-100"},
  };
  for (const Case& c : cases) {
    Snapshot before = Snap();
    ExpectRejected(Do("POST", kPods,
                      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"sel"},"spec":{)" +
                          c.spec + R"(,"containers":[{"name":"c","image":"x"}]}})"),
                   {422, "Invalid", "Pod \"sel\" is invalid: " + c.message}, before, c.message);
  }
}

TEST_F(ApiServerTest, DryRunPersistsNothing) {
  // Create.
  Snapshot before = Snap();
  HttpResponse r = Do("POST", std::string(kPods) + "?dryRun=All", PodJson("dry"));
  EXPECT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(Json(r.body).Str("/metadata/name"), "dry");
  EXPECT_EQ(Json(r.body).Str("/status/phase"), "Pending") << "the answer is the would-be object";
  ExpectNothingWritten(before, "dry-run create");
  EXPECT_EQ(Get(std::string(kPods) + "/dry").status, 404);
  // A dry-run create is still validated.
  ExpectRejected(Do("POST", std::string(kPods) + "?dryRun=All",
                    R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"bad"},"spec":{}})"),
                 {422, "Invalid", "Pod \"bad\" is invalid: spec.containers: Required value"},
                 before, "invalid dry-run create");

  // Patch (kubectl taint --dry-run=server).
  r = Do("PATCH", std::string(kNode1) + "?dryRun=All&fieldManager=kubectl-taint",
         R"({"spec":{"taints":[{"key":"dry","effect":"NoSchedule"}]}})",
         "application/strategic-merge-patch+json");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Json(r.body).Str("/spec/taints/0/key"), "dry");
  ExpectNothingWritten(before, "dry-run patch");
  EXPECT_EQ(GetJson(kNode1).Str("/spec/taints/0/key"), "a");

  // Delete, by query and by DeleteOptions body.
  r = Do("DELETE", std::string(kP1) + "?dryRun=All", "", "");
  EXPECT_EQ(r.status, 200) << r.body;
  ExpectNothingWritten(before, "dry-run delete (query)");
  r = Do("DELETE", kP1, R"({"dryRun":["All"]})");
  EXPECT_EQ(r.status, 200) << r.body;
  ExpectNothingWritten(before, "dry-run delete (body)");
  EXPECT_EQ(Get(kP1).status, 200);

  // Eviction and binding.
  r = Do("POST", std::string(kP1) + "/eviction?dryRun=All",
         R"({"kind":"Eviction","apiVersion":"policy/v1","metadata":{"name":"p1"}})");
  EXPECT_EQ(r.status, 201) << r.body;
  r = Do(
      "POST", std::string(kP1) + "/binding?dryRun=All",
      R"({"kind":"Binding","apiVersion":"v1","metadata":{"name":"p1"},"target":{"name":"node-1"}})");
  EXPECT_EQ(r.status, 201) << r.body;
  ExpectNothingWritten(before, "dry-run eviction and binding");
}

TEST_F(ApiServerTest, DryRunCreateOfAnExistingObjectIsAlreadyExists) {
  // Upstream's dry-run storage still checks the key (DryRunnableStorage.Create): `kubectl
  // create --dry-run=server` of an existing object says AlreadyExists.
  Snapshot before = Snap();
  ExpectRejected(Do("POST", std::string(kPods) + "?dryRun=All", kP1Json),
                 {409, "AlreadyExists", "pods \"p1\" already exists"}, before, "dry-run create");
}

TEST_F(ApiServerTest, DeleteWithAMismatchedPreconditionIsConflict) {
  Json p1 = GetJson(kP1);
  const std::string uid = p1.Str("/metadata/uid");
  const std::string rv = p1.Str("/metadata/resourceVersion");
  Snapshot before = Snap();
  ExpectRejected(Do("DELETE", kP1, R"({"preconditions":{"uid":"not-the-uid"}})"),
                 {409, "Conflict",
                  "Operation cannot be fulfilled on pods \"p1\": Precondition failed: UID in "
                  "precondition: not-the-uid, UID in object meta: " +
                      uid},
                 before, "uid precondition");
  ExpectRejected(Do("DELETE", kP1, R"({"preconditions":{"resourceVersion":"1"}})"),
                 {409, "Conflict",
                  "Operation cannot be fulfilled on pods \"p1\": Precondition failed: "
                  "ResourceVersion in precondition: 1, ResourceVersion in object meta: " +
                      rv},
                 before, "resourceVersion precondition");
  // The same precondition on an eviction.
  ExpectRejected(Do("POST", std::string(kP1) + "/eviction",
                    R"({"kind":"Eviction","apiVersion":"policy/v1","metadata":{"name":"p1"},)"
                    R"("deleteOptions":{"preconditions":{"uid":"not-the-uid"}}})"),
                 {409, "Conflict",
                  "Operation cannot be fulfilled on pods \"p1\": Precondition failed: UID in "
                  "precondition: not-the-uid, UID in object meta: " +
                      uid},
                 before, "eviction uid precondition");
  // The right uid deletes, and the answer is the object's last state.
  HttpResponse r = Do("DELETE", kP1, R"({"preconditions":{"uid":")" + uid + R"("}})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Json(r.body).Str("/metadata/uid"), uid);
  EXPECT_EQ(Get(kP1).status, 404);
  // Deleting again is NotFound.
  before = Snap();
  ExpectRejected(Do("DELETE", kP1, "", ""), {404, "NotFound", "pods \"p1\" not found"}, before,
                 "second delete");
}

TEST_F(ApiServerTest, MalformedDeleteOptionsAreBadRequest) {
  Snapshot before = Snap();
  ExpectStatus(Do("DELETE", std::string(kP1) + "?gracePeriodSeconds=soon", "", ""),
               {400, "BadRequest", "", true}, "gracePeriodSeconds");
  ExpectStatus(Do("DELETE", kP1, R"({"gracePeriodSeconds":)"), {400, "BadRequest", "", true},
               "truncated DeleteOptions");
  ExpectNothingWritten(before, "malformed DeleteOptions");
  // drain's protobuf DeleteOptions (gracePeriodSeconds 7) is understood.
  HttpResponse r = Do("DELETE", kP1,
                      Hex("6b3873000a130a027631120d44656c6574654f7074696f6e7312020807"
                          "1a002200"),
                      "application/vnd.kubernetes.protobuf");
  EXPECT_EQ(r.status, 200) << r.body;
}

TEST_F(ApiServerTest, WritesToAMissingObjectAreNotFound) {
  struct Case {
    std::string method;
    std::string target;
    std::string body;
    std::string content_type;
  } cases[] = {
      {"PUT", std::string(kPods) + "/ghost", PodJson("ghost"), "application/json"},
      {"PATCH", std::string(kPods) + "/ghost", "{}", "application/merge-patch+json"},
      {"PATCH", std::string(kPods) + "/ghost/status", "{}", "application/merge-patch+json"},
      {"DELETE", std::string(kPods) + "/ghost", "", ""},
      {"GET", std::string(kPods) + "/ghost", "", ""},
  };
  for (const Case& c : cases) {
    Snapshot before = Snap();
    HttpResponse r = Do(c.method, c.target, c.body, c.content_type);
    ExpectRejected(r, {404, "NotFound", "pods \"ghost\" not found"}, before,
                   c.method + " " + c.target);
  }
  Snapshot before = Snap();
  ExpectRejected(Do("PATCH", "/api/v1/nodes/node-9", "{}", "application/merge-patch+json"),
                 {404, "NotFound", "nodes \"node-9\" not found"}, before, "node");
  ExpectRejected(
      Do("DELETE", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1", "", ""),
      {404, "NotFound", "leases.coordination.k8s.io \"n1\" not found"}, before, "lease");
}

TEST_F(ApiServerTest, BodyThatContradictsTheUrlIsBadRequest) {
  Json p1 = GetJson(kP1);
  const std::string rv = p1.Str("/metadata/resourceVersion");
  struct Case {
    std::string method;
    std::string target;
    std::string body;
    std::string message;
  } cases[] = {
      {"POST", std::string(kPods),
       R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"x","namespace":"kube-system"},)"
       R"("spec":{"containers":[{"name":"c","image":"i"}]}})",
       "the namespace of the provided object does not match the namespace sent on the request"},
      {"PUT", std::string(kP1),
       R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p2","resourceVersion":")" + rv +
           R"("},"spec":{"containers":[{"name":"c","image":"i"}]}})",
       "the name of the object (p2) does not match the name on the URL (p1)"},
      {"POST", std::string(kPods),
       R"({"apiVersion":"v2","kind":"Pod","metadata":{"name":"x"},)"
       R"("spec":{"containers":[{"name":"c","image":"i"}]}})",
       ""},
      {"POST", std::string(kPods), std::string(kNode1Json), ""},
  };
  for (const Case& c : cases) {
    Snapshot before = Snap();
    ExpectRejected(Do(c.method, c.target, c.body),
                   {400, "BadRequest", c.message, c.message.empty()}, before,
                   c.method + " " + c.body);
  }
}

TEST_F(ApiServerTest, InvalidTaintsAreInvalidWithUpstreamFieldPaths) {
  struct Case {
    std::string taints;
    std::string message;
  } cases[] = {
      {R"([{"key":"k","effect":"Bogus"}])",
       "Node \"node-1\" is invalid: metadata.taints[0].effect: Unsupported value: \"Bogus\": "
       "supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\""},
      {R"([{"key":"k"}])", "Node \"node-1\" is invalid: metadata.taints[0].effect: Required value"},
  };
  for (const Case& c : cases) {
    Snapshot before = Snap();
    HttpResponse r = Do("PATCH", kNode1, R"({"spec":{"taints":)" + c.taints + "}}",
                        "application/strategic-merge-patch+json");
    ExpectRejected(r, {422, "Invalid", c.message}, before, c.taints);
    EXPECT_EQ(Json(r.body).Str("/details/kind"), "Node");
  }
  // Two taints with one key and effect: one Duplicate cause, on the second.
  Snapshot before = Snap();
  HttpResponse r = Do("PATCH", kNode1,
                      R"({"spec":{"taints":[{"key":"k","value":"1","effect":"NoSchedule"},)"
                      R"({"key":"k","value":"2","effect":"NoSchedule"}]}})",
                      "application/strategic-merge-patch+json");
  ExpectRejected(
      r, {422, "Invalid", "Node \"node-1\" is invalid: metadata.taints[1]: Duplicate value", true},
      before, "duplicate");
  EXPECT_EQ(Json(r.body).Str("/details/causes/0/reason"), "FieldValueDuplicate");
}

// DELETE of a namespace answers 200 with it Terminating (upstream namespace REST Delete); a
// metadata finalizer keeps it so, and creates in it are refused by NamespaceLifecycle with
// upstream's Status, cause included.
TEST_F(ApiServerTest, CreateInATerminatingNamespaceIsForbidden) {
  Create("/api/v1/namespaces", R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"held",)"
                               R"("finalizers":["kubetaint.io/hold"]}})");
  HttpResponse del =
      Do("DELETE", "/api/v1/namespaces/held", R"({"propagationPolicy":"Background"})");
  ASSERT_EQ(del.status, 200) << del.body;
  Json deleted(del.body);
  EXPECT_EQ(deleted.Str("/kind"), "Namespace");
  EXPECT_EQ(deleted.Str("/status/phase"), "Terminating");
  EXPECT_TRUE(deleted.Has("/metadata/deletionTimestamp"));
  // Wait for the namespace controller's part (its spec finalizer gone) so that nothing else
  // writes while the refusal is checked.
  const auto deadline = Clock::now() + kTimeout;
  while (GetJson("/api/v1/namespaces/held").Has("/spec/finalizers")) {
    ASSERT_LT(Clock::now(), deadline) << "the namespace kept its spec finalizer";
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  Snapshot before = Snap();
  HttpResponse r = Do("POST", "/api/v1/namespaces/held/pods", PodJson("p"));
  ExpectRejected(r,
                 {403, "Forbidden",
                  "pods \"p\" is forbidden: unable to create new content in namespace held "
                  "because it is being terminated"},
                 before, "pod in held");
  EXPECT_EQ(r.body,
            R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":)"
            R"("pods \"p\" is forbidden: unable to create new content in namespace held because )"
            R"(it is being terminated","reason":"Forbidden","details":{"name":"p","kind":"pods",)"
            R"("causes":[{"reason":"NamespaceTerminating","message":"namespace held is being )"
            R"(terminated","field":"metadata.namespace"}]},"code":403})");
  // Removing the finalizer deletes it.
  HttpResponse patched = Do("PATCH", "/api/v1/namespaces/held",
                            R"({"metadata":{"finalizers":null}})", "application/merge-patch+json");
  ASSERT_EQ(patched.status, 200) << patched.body;
  EXPECT_EQ(Get("/api/v1/namespaces/held").status, 404);
}

TEST_F(ApiServerTest, DefaultNamespacesCannotBeDeleted) {
  for (const char* ns : {"default", "kube-system", "kube-public"}) {
    Snapshot before = Snap();
    HttpResponse r = Do("DELETE", std::string("/api/v1/namespaces/") + ns, "", "");
    ExpectRejected(
        r,
        {403, "Forbidden",
         std::string("namespaces \"") + ns + "\" is forbidden: this namespace may not be deleted"},
        before, ns);
  }
}

TEST_F(ApiServerTest, MainResourceAndStatusSubresourceChangeOnlyTheirPart) {
  // A status change through the main resource is dropped (and, being a no-op, writes nothing).
  const store::Revision before = Rev();
  HttpResponse r =
      Do("PATCH", kP1, R"({"status":{"phase":"Running"}})", "application/merge-patch+json");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Json(r.body).Str("/status/phase"), "Pending");
  EXPECT_EQ(Rev(), before);
  // A spec change through /status is dropped; the status change is kept.
  r = Do("PATCH", std::string(kP1) + "/status",
         R"({"status":{"phase":"Running"},"spec":{"nodeName":"node-9"}})",
         "application/merge-patch+json");
  ASSERT_EQ(r.status, 200) << r.body;
  Json p1 = GetJson(kP1);
  EXPECT_EQ(p1.Str("/status/phase"), "Running");
  EXPECT_FALSE(p1.Has("/spec/nodeName"));
  // Node status (kubelet heartbeats) the same way.
  r = Do("PATCH", std::string(kNode1) + "/status",
         R"({"status":{"conditions":[{"type":"Ready","status":"False"}]},"spec":{"taints":null}})",
         "application/strategic-merge-patch+json");
  ASSERT_EQ(r.status, 200) << r.body;
  Json node = GetJson(kNode1);
  EXPECT_EQ(node.Str("/status/conditions/0/status"), "False");
  EXPECT_EQ(node.Size("/spec/taints"), 3u) << "its two and TaintNodesByCondition's not-ready";
}

TEST_F(ApiServerTest, ConcurrentPatchesToOneObjectAllApply) {
  // Like many `kubectl label` runs at once: every merge patch lands, none is lost to a conflict.
  constexpr int kClients = 8;
  constexpr int kPatchesEach = 40;
  std::vector<std::thread> clients;
  std::vector<std::vector<int>> statuses(kClients);
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      for (int i = 0; i < kPatchesEach; ++i) {
        Conn conn(port_);
        const std::string body =
            R"({"metadata":{"labels":{"l-)" + std::to_string(c * 1000 + i) + R"(":"x"}}})";
        std::string req = "PATCH " + std::string(kNode1) +
                          " HTTP/1.1\r\nHost: t\r\nContent-Type: application/merge-patch+json\r\n"
                          "Content-Length: " +
                          std::to_string(body.size()) + "\r\n\r\n" + body;
        std::optional<HttpResponse> r;
        if (conn.Send(req)) r = conn.ReadResponse();
        statuses[c].push_back(r ? r->status : 0);
      }
    });
  }
  for (std::thread& t : clients) t.join();
  for (int c = 0; c < kClients; ++c) {
    EXPECT_EQ(std::count(statuses[c].begin(), statuses[c].end(), 200), kPatchesEach)
        << "client " << c;
  }
  Json node = GetJson(kNode1);
  EXPECT_EQ(node.Size("/metadata/labels"), 2u + kClients * kPatchesEach);
}

// --- Lists, paging, resourceVersions, tables ---------------------------------------------------

TEST_F(ApiServerTest, LimitAndContinueReturnEveryItemExactlyOnce) {
  Create("/api/v1/namespaces",
         R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team-a"}})");
  std::set<std::string> want = {"default/p1"};
  for (int i = 0; i < 23; ++i) {
    char name[16];
    std::snprintf(name, sizeof name, "page-%02d", i);
    const std::string ns = i % 2 ? "team-a" : "default";
    Create("/api/v1/namespaces/" + ns + "/pods", PodJson(name));
    want.insert(ns + "/" + name);
  }
  for (int limit : {1, 5, 7, 24, 25, 500}) {
    std::vector<std::string> seen;
    std::string token;
    int pages = 0;
    for (; pages < 40; ++pages) {
      std::string target = "/api/v1/pods?limit=" + std::to_string(limit);
      if (!token.empty()) target += "&continue=" + token;
      HttpResponse r = Get(target);
      ASSERT_EQ(r.status, 200) << target << ": " << r.body;
      Json page(r.body);
      std::vector<std::string> names = ItemNames(page);
      EXPECT_LE(names.size(), static_cast<size_t>(limit));
      seen.insert(seen.end(), names.begin(), names.end());
      token = page.Str("/metadata/continue");
      if (token == "<absent>") break;
      EXPECT_FALSE(names.empty()) << "a page with a continue token has items";
    }
    EXPECT_LT(pages, 40) << "paging did not end";
    std::vector<std::string> sorted(want.begin(), want.end());
    EXPECT_EQ(seen, sorted) << "limit " << limit << ": every pod once, in key order";
  }
  // Paging within a namespace and with a selector.
  std::vector<std::string> seen;
  std::string token;
  for (int pages = 0; pages < 20; ++pages) {
    std::string target = "/api/v1/namespaces/team-a/pods?limit=4&labelSelector=!nope";
    if (!token.empty()) target += "&continue=" + token;
    Json page(Get(target).body);
    for (const std::string& n : ItemNames(page)) seen.push_back(n);
    token = page.Str("/metadata/continue");
    if (token == "<absent>") break;
  }
  EXPECT_EQ(seen.size(), 11u);
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
  // A garbage continue token is a 400.
  ExpectStatus(Get("/api/v1/pods?limit=2&continue=%%%garbage"), {400, "BadRequest", "", true},
               "garbage continue");
}

TEST_F(ApiServerTest, PagedListThenWatchMissesNoChange) {
  // An informer pages with limit/continue and then watches from the list's resourceVersion.
  // Upstream serves every page at the first page's resourceVersion (the continue token carries
  // it), so a change made between pages is replayed by the watch.
  Create(kPods, PodJson("p2"));
  HttpResponse first = Get("/api/v1/pods?limit=1");
  Json page1(first.body);
  ASSERT_EQ(ItemNames(page1), std::vector<std::string>{"default/p1"});
  const std::string list_rv = page1.Str("/metadata/resourceVersion");
  // p1, already listed, changes before the next page is read.
  ASSERT_EQ(Do("PATCH", kP1, R"({"metadata":{"labels":{"changed":"yes"}}})",
               "application/merge-patch+json")
                .status,
            200);
  Json page2(Get("/api/v1/pods?limit=1&continue=" + page1.Str("/metadata/continue")).body);
  ASSERT_EQ(ItemNames(page2), std::vector<std::string>{"default/p2"});
  EXPECT_EQ(page2.Str("/metadata/resourceVersion"), list_rv);

  Conn c(port_);
  ASSERT_TRUE(c.Send("GET /api/v1/pods?watch=true&timeoutSeconds=2&resourceVersion=" +
                     page2.Str("/metadata/resourceVersion") + " HTTP/1.1\r\nHost: t\r\n\r\n"));
  auto head = c.ReadHead();
  ASSERT_TRUE(head);
  ASSERT_EQ(head->status, 200);
  std::string events;
  const auto deadline = Clock::now() + kTimeout;
  while (events.find("\"changed\"") == std::string::npos) {
    std::optional<std::string> chunk = c.ReadChunk(deadline);
    if (!chunk || chunk->empty()) break;  // the stream ended (timeoutSeconds) or broke
    events += *chunk;
  }
  EXPECT_NE(events.find("\"changed\""), std::string::npos)
      << "the watch from the paged list's resourceVersion must deliver p1's change";
}

// Query booleans as kube-apiserver reads them: false only when absent, "0" or "false" in any
// case (Debian's python3-kubernetes sends watch=True).
TEST_F(ApiServerTest, QueryBooleansAreFalseOnlyWhenAbsentZeroOrFalse) {
  for (std::string_view q : {"watch=True", "watch=TRUE", "watch=yes", "watch", "watch="}) {
    Conn c(port_);
    ASSERT_TRUE(c.Send("GET /api/v1/pods?" + std::string(q) +
                       "&timeoutSeconds=1&resourceVersion=0 HTTP/1.1\r\nHost: t\r\n\r\n"));
    auto head = c.ReadHead();
    ASSERT_TRUE(head) << q;
    EXPECT_EQ(head->status, 200) << q;
    std::optional<std::string> chunk = c.ReadChunk(Clock::now() + kTimeout);
    ASSERT_TRUE(chunk) << q;
    EXPECT_NE(chunk->find(R"("type":"ADDED")"), std::string::npos) << q << ": a watch";
  }
  for (std::string_view q : {"watch=false", "watch=False", "watch=FALSE", "watch=0"}) {
    HttpResponse r = Get("/api/v1/pods?" + std::string(q));
    EXPECT_EQ(r.status, 200) << q;
    EXPECT_EQ(Json(r.body).Str("/kind"), "PodList") << q << ": a list";
  }
}

TEST_F(ApiServerTest, DeleteOptionsPropagationPolicyIsValidatedAsUpstream) {
  HttpResponse r = Do("DELETE", kNode1, R"({"propagationPolicy":"Sometimes"})");
  EXPECT_EQ(r.status, 422);
  EXPECT_EQ(Json(r.body).Str("/message"),
            "DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: Unsupported value: "
            "\"Sometimes\": supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\"");
  r = Do("DELETE", std::string(kNode1) + "?propagationPolicy=Orphan&orphanDependents=true");
  EXPECT_EQ(r.status, 422);
  EXPECT_EQ(Json(r.body).Str("/message"),
            "DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: Invalid value: "
            "\"Orphan\": orphanDependents and deletionPropagation cannot be both set");
  ASSERT_EQ(Get(kNode1).status, 200) << "nothing deleted";
  // Orphan (here by the deprecated orphanDependents): marked deleting, held by `orphan`.
  r = Do("DELETE", std::string(kNode1) + "?orphanDependents=true");
  ASSERT_EQ(r.status, 200) << r.body;
  Json node(Get(kNode1).body);
  EXPECT_EQ(node.Str("/metadata/finalizers/0"), "orphan");
  EXPECT_TRUE(node.Has("/metadata/deletionTimestamp"));
  // Background drops it again, and with no finalizer left the node goes.
  r = Do("DELETE", kNode1, R"({"propagationPolicy":"Background"})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Get(kNode1).status, 404);
}

TEST_F(ApiServerTest, ListAndGetResourceVersionsFollowTheStoreRevision) {
  Json list(Get("/api/v1/pods").body);
  EXPECT_EQ(list.Str("/metadata/resourceVersion"), std::to_string(Rev()));
  EXPECT_EQ(list.Str("/kind"), "PodList");
  EXPECT_EQ(list.Str("/apiVersion"), "v1");
  const std::string p1_rv = GetJson(kP1).Str("/metadata/resourceVersion");

  Json p2 = Create(kPods, PodJson("p2"));
  const std::string p2_rv = p2.Str("/metadata/resourceVersion");
  EXPECT_EQ(p2_rv, std::to_string(Rev())) << "a create's answer carries the new revision";
  list = Json(Get("/api/v1/pods").body);
  EXPECT_EQ(list.Str("/metadata/resourceVersion"), p2_rv) << "read-your-writes";
  EXPECT_EQ(GetJson(std::string(kPods) + "/p2").Str("/metadata/resourceVersion"), p2_rv);
  EXPECT_EQ(GetJson(kP1).Str("/metadata/resourceVersion"), p1_rv) << "p1 did not change";

  // A write elsewhere (a node) moves the list's revision but not the pods'.
  ASSERT_EQ(
      Do("PATCH", kNode1, R"({"metadata":{"labels":{"x":"1"}}})", "application/merge-patch+json")
          .status,
      200);
  // The pods cache learns of it from the store's progress notification, which may come a
  // moment after the PATCH's answer: polled until a deadline.
  const std::string node_rv = std::to_string(Rev());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  do {
    list = Json(Get("/api/v1/pods").body);
  } while (list.Str("/metadata/resourceVersion") != node_rv &&
           std::chrono::steady_clock::now() < deadline);
  EXPECT_EQ(list.Str("/metadata/resourceVersion"), node_rv);
  EXPECT_EQ(GetJson(kP1).Str("/metadata/resourceVersion"), p1_rv);

  // An update moves the object's resourceVersion to the new revision...
  HttpResponse r =
      Do("PATCH", kP1, R"({"metadata":{"labels":{"v":"2"}}})", "application/merge-patch+json");
  ASSERT_EQ(r.status, 200);
  const std::string p1_rv2 = Json(r.body).Str("/metadata/resourceVersion");
  EXPECT_EQ(p1_rv2, std::to_string(Rev()));
  EXPECT_EQ(GetJson(kP1).Str("/metadata/resourceVersion"), p1_rv2);
  // ...and a no-op update writes nothing (upstream skips it).
  const store::Revision before = Rev();
  r = Do("PATCH", kP1, R"({"metadata":{"labels":{"v":"2"}}})", "application/merge-patch+json");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(Json(r.body).Str("/metadata/resourceVersion"), p1_rv2);
  EXPECT_EQ(Rev(), before);

  // resourceVersion=0 (served from the cache) and an exact revision are accepted.
  for (const std::string& q : std::vector<std::string>{
           "resourceVersion=0", "resourceVersion=" + p1_rv2, "resourceVersion=0&limit=1"}) {
    HttpResponse l = Get("/api/v1/pods?" + q);
    EXPECT_EQ(l.status, 200) << q << ": " << l.body;
    EXPECT_EQ(Json(l.body).Str("/metadata/resourceVersion"), std::to_string(Rev())) << q;
  }
  // Every item's resourceVersion is at most the list's.
  list = Json(Get("/api/v1/pods").body);
  const int64_t list_rv = std::stoll(list.Str("/metadata/resourceVersion"));
  for (const rapidjson::Value& item : list.At("/items")->GetArray()) {
    EXPECT_LE(std::stoll(item["metadata"]["resourceVersion"].GetString()), list_rv);
  }
  // Delete: the answer is the last state; the list no longer has it.
  r = Do("DELETE", std::string(kPods) + "/p2", "", "");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(Json(r.body).Str("/metadata/name"), "p2");
  EXPECT_EQ(ItemNames(Json(Get(kPods).body)), std::vector<std::string>{"default/p1"});
}

std::vector<std::string> Cells(const Json& table, const char* row_pointer) {
  std::vector<std::string> out;
  const rapidjson::Value* cells = table.At(row_pointer);
  if (cells == nullptr || !cells->IsArray()) return out;
  for (const rapidjson::Value& c : cells->GetArray()) {
    if (c.IsString())
      out.emplace_back(c.GetString());
    else if (c.IsInt64())
      out.push_back(std::to_string(c.GetInt64()));
    else
      out.push_back("<?>");
  }
  return out;
}

std::vector<std::string> ColumnNames(const Json& table) {
  std::vector<std::string> out;
  const rapidjson::Value* cols = table.At("/columnDefinitions");
  if (cols == nullptr || !cols->IsArray()) return out;
  for (const rapidjson::Value& c : cols->GetArray()) out.emplace_back(c["name"].GetString());
  return out;
}

TEST_F(ApiServerTest, NodeTableHasTheCellsKubectlPrints) {
  const std::regex age("^[0-9]+s$");
  for (const std::string& target :
       std::vector<std::string>{"/api/v1/nodes?limit=500", std::string(kNode1)}) {
    HttpResponse r = Get(target, kTableAccept);
    ASSERT_EQ(r.status, 200) << r.body;
    Json t(r.body);
    EXPECT_EQ(t.Str("/kind"), "Table") << target;
    EXPECT_EQ(t.Str("/apiVersion"), "meta.k8s.io/v1");
    EXPECT_NE(t.Str("/metadata/resourceVersion"), "<absent>") << "get -w needs it";
    EXPECT_EQ(ColumnNames(t), (std::vector<std::string>{"Name", "Status", "Roles", "Age", "Version",
                                                        "Internal-IP", "External-IP", "OS-Image",
                                                        "Kernel-Version", "Container-Runtime"}));
    ASSERT_EQ(t.Size("/rows"), 1u) << target;
    std::vector<std::string> cells = Cells(t, "/rows/0/cells");
    ASSERT_EQ(cells.size(), 10u) << r.body;
    EXPECT_EQ(cells[0], "node-1");
    EXPECT_EQ(cells[1], "Ready,SchedulingDisabled");
    EXPECT_EQ(cells[2], "control-plane");
    EXPECT_TRUE(std::regex_match(cells[3], age)) << cells[3];
    EXPECT_EQ(cells[4], "v1.35.0");
    EXPECT_EQ(cells[5], "10.0.0.11");
    EXPECT_EQ(cells[6], "<none>");
    EXPECT_EQ(cells[7], "Linux");
    EXPECT_EQ(cells[8], "6.1.0");
    EXPECT_EQ(cells[9], "containerd://1.7.0");
    EXPECT_EQ(t.Str("/rows/0/object/kind"), "PartialObjectMetadata");
    EXPECT_EQ(t.Str("/rows/0/object/metadata/name"), "node-1");
    EXPECT_EQ(t.Str("/rows/0/object/metadata/labels/zone"), "a") << "--show-labels needs it";
  }
}

TEST_F(ApiServerTest, PodTableHasTheCellsKubectlPrints) {
  Create("/api/v1/namespaces/kube-system/pods", PodJson("sys", R"("nodeName":"node-1")"));
  HttpResponse r = Get("/api/v1/pods?limit=500", kTableAccept);
  ASSERT_EQ(r.status, 200) << r.body;
  Json t(r.body);
  EXPECT_EQ(ColumnNames(t),
            (std::vector<std::string>{"Name", "Ready", "Status", "Restarts", "Age", "IP", "Node",
                                      "Nominated Node", "Readiness Gates"}));
  ASSERT_EQ(t.Size("/rows"), 2u);
  // Key order: default/p1 before kube-system/sys; -A takes the namespace from the row object.
  EXPECT_EQ(t.Str("/rows/0/object/metadata/namespace"), "default");
  EXPECT_EQ(t.Str("/rows/1/object/metadata/namespace"), "kube-system");
  std::vector<std::string> p1 = Cells(t, "/rows/0/cells");
  ASSERT_EQ(p1.size(), 9u);
  EXPECT_EQ(p1[0], "p1");
  EXPECT_EQ(p1[1], "0/1");
  EXPECT_EQ(p1[2], "Pending");
  EXPECT_EQ(p1[3], "0");
  EXPECT_TRUE(std::regex_match(p1[4], std::regex("^[0-9]+s$"))) << p1[4];
  EXPECT_EQ(p1[5], "<none>");
  EXPECT_EQ(p1[6], "<none>");
  EXPECT_EQ(p1[7], "<none>");
  EXPECT_EQ(p1[8], "<none>");
  EXPECT_EQ(Cells(t, "/rows/1/cells")[6], "node-1");

  // includeObject=None drops the object; Object carries the whole pod (--sort-by).
  Json none(Get("/api/v1/pods?includeObject=None", kTableAccept).body);
  ASSERT_TRUE(none.Has("/rows/0/object"));
  EXPECT_TRUE(none.At("/rows/0/object")->IsNull()) << "as upstream's empty RawExtension";
  Json full(Get("/api/v1/pods?includeObject=Object", kTableAccept).body);
  EXPECT_EQ(full.Str("/rows/0/object/kind"), "Pod");
  EXPECT_EQ(full.Str("/rows/0/object/spec/containers/0/image"), "nginx");
  // A bad includeObject is a 400; a plain Accept gets the PodList.
  EXPECT_EQ(Get("/api/v1/pods?includeObject=Bogus", kTableAccept).status, 400);
  EXPECT_EQ(Json(Get("/api/v1/pods").body).Str("/kind"), "PodList");
  // Only a v1beta1 Accept gets a v1beta1 Table.
  EXPECT_EQ(
      Json(Get(kP1, "application/json;as=Table;v=v1beta1;g=meta.k8s.io").body).Str("/apiVersion"),
      "meta.k8s.io/v1beta1");
}

// --- Robustness --------------------------------------------------------------------------------

TEST_F(ApiServerTest, RandomGarbageRequestsNeverBreakTheServer) {
  std::mt19937 rng(20250101);
  auto pick = [&](const auto& pool) { return pool[rng() % std::size(pool)]; };
  const std::string_view methods[] = {"GET",   "GET",    "POST", "PUT",
                                      "PATCH", "DELETE", "HEAD", "OPTIONS"};
  const std::string_view segments[] = {"api",
                                       "apis",
                                       "v1",
                                       "v2",
                                       "namespaces",
                                       "default",
                                       "kube-system",
                                       "team-x",
                                       "pods",
                                       "nodes",
                                       "events",
                                       "leases",
                                       "coordination.k8s.io",
                                       "apps",
                                       "daemonsets",
                                       "p1",
                                       "node-1",
                                       "status",
                                       "binding",
                                       "eviction",
                                       "watch",
                                       "%zz",
                                       "%2F",
                                       "..",
                                       "%00",
                                       "a%20b",
                                       "finalize",
                                       "scheduling.k8s.io",
                                       "priorityclasses",
                                       "openapi",
                                       "v3",
                                       "version",
                                       "healthz"};
  const std::string_view queries[] = {"watch=true&timeoutSeconds=1",
                                      "labelSelector=a%20in%20(",
                                      "labelSelector=app%3Dweb",
                                      "fieldSelector=spec.bogus%3Dx",
                                      "fieldSelector=spec.nodeName%3Dnode-1",
                                      "limit=-3",
                                      "limit=abc",
                                      "limit=2",
                                      "continue=%%%",
                                      "continue=eyJ2IjoiIn0",
                                      "resourceVersion=abc",
                                      "resourceVersion=0",
                                      "dryRun=All",
                                      "gracePeriodSeconds=abc",
                                      "includeObject=Bogus",
                                      "includeObject=Object",
                                      "timeoutSeconds=-1",
                                      "=&&=",
                                      "watch=1&resourceVersion=1"};
  const std::string_view content_types[] = {"application/json",
                                            "application/yaml",
                                            "application/vnd.kubernetes.protobuf",
                                            "application/merge-patch+json",
                                            "application/strategic-merge-patch+json",
                                            "application/json-patch+json",
                                            "application/apply-patch+yaml",
                                            "text/plain",
                                            "",
                                            "application/json; charset=utf-8",
                                            "garbage/;;;"};
  const std::string_view accepts[] = {
      "",    "application/json", kTableAccept, "application/json;as=Table;v=v1beta1;g=meta.k8s.io",
      "*/*", "text/html"};
  const std::string p1(kP1Json);
  auto random_body = [&]() -> std::string {
    switch (rng() % 9) {
      case 0:
        return "";
      case 1: {
        std::string s(rng() % 2000, '\0');
        for (char& ch : s) ch = static_cast<char>(rng());
        return s;
      }
      case 2:
        return p1.substr(0, rng() % p1.size());
      case 3:
        return PodJson("rnd-" + std::to_string(rng() % 50));
      case 4: {
        std::string s(std::string_view("k8s\0", 4));
        for (size_t n = rng() % 64; n > 0; --n) s.push_back(static_cast<char>(rng()));
        return s;
      }
      case 5:
        return std::string(rng() % 3000, '[');
      case 6:
        return R"([{"op":"test","path":"/x","value":1},{"op":"move","from":"/a","path":"/b"}])";
      case 7:
        return R"({"metadata":{"labels":{"x":null}},"spec":{"$patch":"delete"}})";
      default:
        return NamespaceProtobuf().substr(0, rng() % NamespaceProtobuf().size());
    }
  };
  for (int i = 0; i < 200; ++i) {
    const std::string method(pick(methods));
    std::string target;
    for (size_t n = 1 + rng() % 7; n > 0; --n) target.append("/").append(pick(segments));
    if (rng() % 2) {
      target.append("?").append(pick(queries));
      if (rng() % 2) target.append("&").append(pick(queries));
    }
    const std::string body = method == "GET" || method == "HEAD" ? "" : random_body();
    std::vector<std::pair<std::string, std::string>> headers;
    if (std::string_view a = pick(accepts); !a.empty()) headers.emplace_back("Accept", a);
    const std::string context = method + " " + target;
    Conn c(port_);
    ASSERT_TRUE(c.connected());
    std::string req = method + " " + target + " HTTP/1.1\r\nHost: t\r\n";
    if (std::string_view ct = pick(content_types); !ct.empty()) {
      req.append("Content-Type: ").append(ct).append("\r\n");
    }
    for (const auto& [n, v] : headers) req.append(n).append(": ").append(v).append("\r\n");
    req.append("Content-Length: ").append(std::to_string(body.size())).append("\r\n\r\n");
    req.append(body);
    ASSERT_TRUE(c.Send(req)) << context;
    std::optional<HttpResponse> r = c.ReadResponse(method == "HEAD");
    ASSERT_TRUE(r.has_value()) << context << ": no answer";
    EXPECT_TRUE((r->status >= 200 && r->status < 300) || (r->status >= 400 && r->status < 500))
        << context << " -> " << r->status << " " << r->body;
    if (r->Header("Transfer-Encoding") == "chunked") {
      EXPECT_EQ(r->status, 200) << context;  // a watch stream; closing the socket ends it
      continue;
    }
    if (method == "HEAD") continue;
    if (r->status >= 400) {
      Json s(r->body);
      ASSERT_TRUE(s.ok()) << context << ": " << r->body;
      EXPECT_EQ(s.Str("/kind"), "Status") << context << ": " << r->body;
      EXPECT_EQ(s.Int("/code"), r->status) << context;
      EXPECT_NE(s.Str("/reason"), "<absent>") << context << ": " << r->body;
      EXPECT_FALSE(s.Str("/message").empty()) << context << ": " << r->body;
    } else if (r->Header("Content-Type").starts_with("application/json")) {
      EXPECT_TRUE(Json(r->body).ok()) << context << ": " << r->body;
    }
  }
  // Still serving, and still consistent.
  EXPECT_EQ(Get("/api/v1/namespaces/default").status, 200);
  EXPECT_EQ(Get("/api/v1/nodes", kTableAccept).status, 200);
  EXPECT_EQ(Json(Get("/api/v1/pods").body).Str("/metadata/resourceVersion"), std::to_string(Rev()));
}

// The Warning headers of a response, in order.
std::vector<std::string> WarningsOf(const HttpResponse& r) {
  std::vector<std::string> out;
  for (const auto& [n, v] : r.headers) {
    if (n == "Warning") out.push_back(v);
  }
  return out;
}

// `body` with its NAME placeholder replaced by `name`.
std::string Named(std::string body, std::string_view name) {
  body.replace(body.find("NAME"), 4, name);
  return body;
}

// Field validation as kube-apiserver's handlers do it (create.go, update.go, patch.go under
// fieldValidation): Strict refuses unknown and duplicate fields, Warn drops them with one
// Warning each, Ignore drops them silently; nothing unknown is ever stored, dry run or not.
TEST_F(ApiServerTest, FieldValidationStrictWarnIgnore) {
  const std::string typo = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"NAME",
    "labelz":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"nginx"}],
    "tolerations":[{"key":"k","operator":"Exists","effect":"NoExecute","tolerationSecond":10}]},
    "status":{"phasez":"x"}})";
  auto named = [&](std::string_view name) { return Named(typo, name); };
  const std::vector<std::string> three = {
      R"(299 - "unknown field \"metadata.labelz\"")",
      R"(299 - "unknown field \"spec.tolerations[0].tolerationSecond\"")",
      R"(299 - "unknown field \"status.phasez\"")"};
  // Strict (kubectl's default for create and apply): 400, every path, nothing written.
  const Snapshot before = Snap();
  HttpResponse r = Do("POST", std::string(kPods) + "?fieldValidation=Strict", named("s"));
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(
      Json(r.body).Str("/message"),
      R"(Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "metadata.labelz", unknown field "spec.tolerations[0].tolerationSecond", unknown field "status.phasez")");
  EXPECT_EQ(Json(r.body).Str("/reason"), "BadRequest");
  r = Do("POST", std::string(kPods) + "?fieldValidation=Strict&dryRun=All", named("s"));
  EXPECT_EQ(r.status, 400);
  ExpectNothingWritten(before, "strict create");
  // A type error wins over unknown fields.
  r = Do("POST", std::string(kPods) + "?fieldValidation=Strict",
         R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"t"},"spec":{"containers":[
            {"name":"c","image":"i","ports":[{"containerPort":"x","foo":1}]}]}})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Json(r.body).Str("/message").find("strict decoding error"), std::string::npos)
      << r.body;
  // Warn (the default when absent): created without the fields, one Warning each.
  for (const char* query : {"?fieldValidation=Warn", ""}) {
    const std::string name = std::string("w") + (query[0] ? "1" : "2");
    r = Do("POST", std::string(kPods) + query, named(name));
    EXPECT_EQ(r.status, 201) << r.body;
    EXPECT_EQ(WarningsOf(r), three) << query;
    Json got = GetJson(std::string(kPods) + "/" + name);
    EXPECT_FALSE(got.Has("/metadata/labelz"));
    EXPECT_FALSE(got.Has("/spec/tolerations/0/tolerationSecond"));
    EXPECT_EQ(got.Str("/spec/tolerations/0/key"), "k");
  }
  // Ignore: created without them, silently.
  r = Do("POST", std::string(kPods) + "?fieldValidation=Ignore", named("i"));
  EXPECT_EQ(r.status, 201) << r.body;
  EXPECT_TRUE(WarningsOf(r).empty());
  EXPECT_FALSE(GetJson(std::string(kPods) + "/i").Has("/metadata/labelz"));
  // Duplicates: Strict lists them; Warn keeps the last value, as Go's decoder.
  const std::string dup = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"d",
    "labels":{"a":"1","a":"2"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}})";
  r = Do("POST", std::string(kPods) + "?fieldValidation=Strict", dup);
  EXPECT_EQ(
      Json(r.body).Str("/message"),
      R"(Pod in version "v1" cannot be handled as a Pod: strict decoding error: duplicate field "metadata.labels.a")");
  r = Do("POST", kPods, dup);
  EXPECT_EQ(r.status, 201);
  EXPECT_EQ(GetJson(std::string(kPods) + "/d").Str("/metadata/labels/a"), "2");
  // Update (PUT): the same rules.
  Json current = GetJson(kP1);
  std::string put =
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p1","resourceVersion":")" +
      current.Str("/metadata/resourceVersion") +
      R"("},"spec":{"containers":[{"name":"c","image":"nginx","imagez":"x"}]}})";
  r = Do("PUT", std::string(kP1) + "?fieldValidation=Strict", put);
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(
      Json(r.body).Str("/message"),
      R"(Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "spec.containers[0].imagez")");
  // Patches: Strict is 422 on the patched object, the patch body's duplicates first.
  r = Do("PATCH", std::string(kP1) + "?fieldValidation=Strict",
         R"({"metadata":{"labels":{"x":"1","x":"2"}},"spec":{"foo":1}})",
         "application/strategic-merge-patch+json");
  EXPECT_EQ(r.status, 422);
  const std::string message = Json(r.body).Str("/message");
  EXPECT_TRUE(message.starts_with(R"( "" is invalid: patch: Invalid value: "{\"kind\":\"Pod\")"))
      << message;
  EXPECT_TRUE(message.ends_with(
      R"(: strict decoding error: duplicate field "metadata.labels.x", unknown field "spec.foo")"))
      << message;
  r = Do("PATCH", kP1, R"({"spec":{"foo":1},"metadata":{"labels":{"y":"1"}}})",
         "application/merge-patch+json");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(WarningsOf(r), std::vector<std::string>{R"(299 - "unknown field \"spec.foo\"")"});
  Json patched = GetJson(kP1);
  EXPECT_FALSE(patched.Has("/spec/foo"));
  EXPECT_EQ(patched.Str("/metadata/labels/y"), "1");
  r = Do("PATCH", std::string(kP1) + "?fieldValidation=Strict",
         R"([{"op":"add","path":"/spec/bar","value":1}])", "application/json-patch+json");
  EXPECT_EQ(r.status, 422);
  EXPECT_TRUE(Json(r.body).Str("/message").ends_with(R"(unknown field "spec.bar")"));
  // A value fieldValidation does not know: upstream's 422 naming the options kind.
  r = Do("POST", std::string(kPods) + "?fieldValidation=strict", named("x"));
  EXPECT_EQ(r.status, 422);
  EXPECT_EQ(
      Json(r.body).Str("/message"),
      R"(CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "strict": supported values: "", "Ignore", "Strict", "Warn")");
}

// --- Server-side apply and managedFields -----------------------------------------------------

constexpr std::string_view kApply = "application/apply-patch+yaml";

// "manager operation" per metadata.managedFields entry, in order.
std::vector<std::string> Managers(const Json& object) {
  std::vector<std::string> out;
  const rapidjson::Value* entries = object.At("/metadata/managedFields");
  if (entries == nullptr || !entries->IsArray()) return out;
  for (const rapidjson::Value& e : entries->GetArray()) {
    out.push_back(std::string(e["manager"].GetString()) + " " + e["operation"].GetString());
  }
  return out;
}

std::string FieldsOf(const Json& object, std::string_view manager) {
  const rapidjson::Value* entries = object.At("/metadata/managedFields");
  if (entries == nullptr || !entries->IsArray()) return "<none>";
  for (const rapidjson::Value& e : entries->GetArray()) {
    if (e["manager"].GetString() != manager) continue;
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
    e["fieldsV1"].Accept(writer);
    return buffer.GetString();
  }
  return "<none>";
}

// Duplicate keys in an apply configuration, as kube-apiserver's yaml.UnmarshalStrict reports
// them (upstream's testFieldValidationApplyCreate): Strict refuses with goyaml's lines and stores
// nothing, Warn (also the default) applies with one warning per repeat and the last value,
// Ignore applies silently.
TEST_F(ApiServerTest, ServerSideApplyDuplicateKeysAsUpstream) {
  const std::string yaml =
      "apiVersion: v1\nkind: Pod\nmetadata:\n  name: NAME\n  labels:\n    app: a\n    app: b\n"
      "spec:\n  containers:\n  - name: c\n    image: nginx\n    image: busybox\n";
  auto body = [&](std::string_view name) { return Named(yaml, name); };
  Snapshot before = Snap();
  ExpectRejected(
      Do("PATCH", std::string(kPods) + "/dup1?fieldManager=m&fieldValidation=Strict", body("dup1"),
         kApply),
      {400, "BadRequest",
       "error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n"
       "  line 7: key \"app\" already set in map\n"
       "  line 12: key \"image\" already set in map"},
      before, "strict");
  int n = 1;
  for (const char* query : {"fieldManager=m&fieldValidation=Warn", "fieldManager=m"}) {
    const std::string name = "dup" + std::to_string(++n);
    HttpResponse r = Do("PATCH", std::string(kPods) + "/" + name + "?" + query, body(name), kApply);
    ASSERT_EQ(r.status, 201) << query << ": " << r.body;
    EXPECT_EQ(WarningsOf(r),
              (std::vector<std::string>{R"(299 - "line 7: key \"app\" already set in map")",
                                        R"(299 - "line 12: key \"image\" already set in map")"}))
        << query;
    Json pod = GetJson(std::string(kPods) + "/" + name);
    EXPECT_EQ(pod.Str("/metadata/labels/app"), "b") << query;
    EXPECT_EQ(pod.Str("/spec/containers/0/image"), "busybox") << query;
  }
  HttpResponse r = Do("PATCH", std::string(kPods) + "/dup4?fieldManager=m&fieldValidation=Ignore",
                      body("dup4"), kApply);
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_TRUE(WarningsOf(r).empty());
}

TEST_F(ApiServerTest, ServerSideApplyCreatesThenMergesAndPrunes) {
  const std::string target = std::string(kPods) + "/ssa?fieldManager=kubectl&force=false";
  // YAML, as kubectl may send it: the object does not exist, so the apply creates it (201).
  HttpResponse r = Do("PATCH", target,
                      "apiVersion: v1\nkind: Pod\nmetadata:\n  name: ssa\n  labels:\n    app: a\n"
                      "    tier: web\nspec:\n  containers:\n  - name: c\n    image: nginx\n",
                      kApply);
  ASSERT_EQ(r.status, 201) << r.body;
  Json created(r.body);
  EXPECT_EQ(Managers(created), (std::vector<std::string>{"kubectl Apply"}));
  EXPECT_EQ(FieldsOf(created, "kubectl"),
            R"({"f:metadata":{"f:labels":{"f:app":{},"f:tier":{}}},"f:spec":{"f:containers":{)"
            R"("k:{\"name\":\"c\"}":{".":{},"f:image":{},"f:name":{}}}}})");
  EXPECT_EQ(created.Str("/status/phase"), "Pending") << "created as any pod is";
  // JSON (which is YAML): a changed label is merged, the omitted one is removed (200).
  r = Do("PATCH", target,
         R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"ssa","labels":{"app":"b"}},)"
         R"("spec":{"containers":[{"name":"c","image":"nginx"}]}})",
         kApply);
  ASSERT_EQ(r.status, 200) << r.body;
  Json updated = GetJson(std::string(kPods) + "/ssa");
  EXPECT_EQ(updated.Str("/metadata/labels/app"), "b");
  EXPECT_FALSE(updated.Has("/metadata/labels/tier"));
  EXPECT_EQ(updated.Str("/metadata/uid"), created.Str("/metadata/uid"));
  EXPECT_EQ(Managers(updated), (std::vector<std::string>{"kubectl Apply"}));
  // The same apply again changes nothing and writes nothing.
  const store::Revision before = Rev();
  r = Do("PATCH", target,
         R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"ssa","labels":{"app":"b"}},)"
         R"("spec":{"containers":[{"name":"c","image":"nginx"}]}})",
         kApply);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Rev(), before);
}

// kube-apiserver's default: managedFields recorded from every object's creation
// (serve --managed-fields-on-create).
class ApiServerTrackingTest : public ApiServerTest {
 protected:
  void SetUp() override {
    track_managed_fields_on_create_ = true;
    StartServer();
  }
};

TEST_F(ApiServerTrackingTest, ApplyConflictIs409WithOneCausePerFieldAndForceTakesIt) {
  // kubectl's client-side apply writes the label first (an Update entry).
  HttpResponse r = Do("PATCH", std::string(kP1) + "?fieldManager=kubectl-client-side-apply",
                      R"({"metadata":{"labels":{"team":"a"}}})", "application/merge-patch+json");
  ASSERT_EQ(r.status, 200) << r.body;
  const std::string apply =
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p1","labels":{"team":"b"}}})";
  Snapshot before = Snap();
  r = Do("PATCH", std::string(kP1) + "?fieldManager=kubectl&force=false", apply, kApply);
  EXPECT_EQ(r.status, 409);
  // conflict.go NewConflictError, as kube-apiserver answers it.
  EXPECT_EQ(r.body,
            R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":)"
            R"("Apply failed with 1 conflict: conflict with \"kubectl-client-side-apply\" using )"
            R"(v1: .metadata.labels.team","reason":"Conflict","details":{"causes":[{"reason":)"
            R"("FieldManagerConflict","message":"conflict with \"kubectl-client-side-apply\" )"
            R"(using v1","field":".metadata.labels.team"}]},"code":409})");
  ExpectNothingWritten(before, "conflict");
  // force=true takes the field: the label is the applied one and kubectl owns it alone.
  r = Do("PATCH", std::string(kP1) + "?fieldManager=kubectl&force=true", apply, kApply);
  ASSERT_EQ(r.status, 200) << r.body;
  Json p1(r.body);
  EXPECT_EQ(p1.Str("/metadata/labels/team"), "b");
  EXPECT_EQ(p1.Str("/metadata/labels/app"), "web") << "not the apply's, and left alone";
  EXPECT_EQ(FieldsOf(p1, "kubectl"), R"({"f:metadata":{"f:labels":{"f:team":{}}}})");
  EXPECT_EQ(FieldsOf(p1, "kubectl-client-side-apply"), "<none>") << "its only field is gone";
}

TEST_F(ApiServerTest, ApplyDryRunWritesNothing) {
  Snapshot before = Snap();
  HttpResponse r = Do("PATCH", std::string(kPods) + "/dry?fieldManager=kubectl&dryRun=All",
                      PodJson("dry"), kApply);
  EXPECT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(Json(r.body).Str("/metadata/name"), "dry");
  r = Do("PATCH", std::string(kP1) + "?fieldManager=kubectl&dryRun=All",
         R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p1","labels":{"tier":"db"}}})",
         kApply);
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Json(r.body).Str("/metadata/labels/tier"), "db");
  ExpectNothingWritten(before, "dry run apply");
}

TEST_F(ApiServerTest, ApplyOptionsAreValidatedAsUpstream) {
  const std::string apply = PodJson("p1");
  struct Case {
    std::string query;
    std::string content_type;
    WantStatus want;
  } cases[] = {
      {"",
       std::string(kApply),
       {422, "Invalid",
        R"(PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch)"}},
      {"?force=true",
       "application/merge-patch+json",
       {422, "Invalid",
        R"(PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch)"}},
      {"?fieldManager=kubectl",
       std::string(kApply),
       {400, "BadRequest", "error decoding YAML: ", true}},
      {"?fieldManager=kubectl&fieldValidation=Strict",
       std::string(kApply),
       {400, "BadRequest", "error strict decoding YAML: ", true}},
  };
  const std::string bodies[] = {apply, R"({"metadata":{}})", "a: [",
                                R"({"kind":"Pod","kind":"Pod"})"};
  for (size_t i = 0; i < std::size(cases); ++i) {
    Snapshot before = Snap();
    ExpectRejected(Do("PATCH", std::string(kP1) + cases[i].query, bodies[i], cases[i].content_type),
                   cases[i].want, before, cases[i].query);
  }
  // An unknown field is the apply's own 400, whatever fieldValidation says.
  Snapshot before = Snap();
  ExpectRejected(
      Do("PATCH", std::string(kP1) + "?fieldManager=kubectl&fieldValidation=Ignore",
         R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p1"},"spec":{"x":1}})", kApply),
      {400, "BadRequest",
       "failed to create typed patch object (/p1; /v1, Kind=Pod): .spec.x: field not "
       "declared in schema"},
      before, "unknown field");
}

TEST_F(ApiServerTrackingTest, EveryHttpWriteRecordsItsManager) {
  // Create: the fieldManager kubectl sends.
  Json created = Create(std::string(kPods) + "?fieldManager=kubectl-create", PodJson("m"));
  EXPECT_EQ(Managers(created), (std::vector<std::string>{"kubectl-create Update"}));
  EXPECT_NE(FieldsOf(created, "kubectl-create").find(R"("f:containers")"), std::string::npos);
  EXPECT_EQ(FieldsOf(created, "kubectl-create").find("f:status"), std::string::npos)
      << "status is reset on create: nobody's";
  const std::string m = std::string(kPods) + "/m";
  // Patch without fieldManager: the User-Agent's prefix.
  HttpResponse r = Do("PATCH", m, R"({"metadata":{"labels":{"team":"a"}}})",
                      "application/strategic-merge-patch+json",
                      {{"User-Agent", "kubectl-label/v1.32.0 (linux/amd64) kubernetes/abc"}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(FieldsOf(Json(r.body), "kubectl-label"),
            R"({"f:metadata":{"f:labels":{".":{},"f:team":{}}}})");
  // Update (PUT) and JSON patch.
  Json current = GetJson(m);
  rapidjson::Pointer("/metadata/labels/team").Set(current.doc, "b");
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  current.doc.Accept(writer);
  r = Do("PUT", m + "?fieldManager=kubectl-replace", buffer.GetString());
  ASSERT_EQ(r.status, 200) << r.body;
  r = Do("PATCH", m + "?fieldManager=kubectl-annotate",
         R"([{"op":"add","path":"/metadata/annotations","value":{"a":"b"}}])",
         "application/json-patch+json");
  ASSERT_EQ(r.status, 200) << r.body;
  Json after(r.body);
  std::vector<std::string> managers = Managers(after);
  std::sort(managers.begin(), managers.end());
  EXPECT_EQ(managers, (std::vector<std::string>{"kubectl-annotate Update", "kubectl-create Update",
                                                "kubectl-label Update", "kubectl-replace Update"}));
  EXPECT_EQ(FieldsOf(after, "kubectl-label"), R"({"f:metadata":{"f:labels":{}}})")
      << "the labels map it created stays its own; the value went to kubectl-replace";
  EXPECT_EQ(FieldsOf(after, "kubectl-replace"), R"({"f:metadata":{"f:labels":{"f:team":{}}}})");
  // No manager and no User-Agent: `unknown`, as upstream names an empty manager.
  EXPECT_EQ(Managers(GetJson(kP1)), (std::vector<std::string>{"unknown Update"}));
  // `[]` resets them: tracking starts again from that write, which is the writer's alone.
  r = Do("PATCH", m + "?fieldManager=reset", R"({"metadata":{"managedFields":[]}})",
         "application/merge-patch+json");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Managers(Json(r.body)), (std::vector<std::string>{})) << r.body;
}

TEST_F(ApiServerTrackingTest, InProcessWritesCarryManagedFieldsOver) {
  // The scheduler, controllers and kubelets write without a manager: nothing is computed and
  // the stored entries stay as they were, whatever the writer sent.
  const std::string before = FieldsOf(GetJson(kP1), "unknown");
  std::promise<ApiResult<store::Bytes>> done;
  registry_->Patch(*FindResourceByKind("v1", "Pod"), "default", "p1", Subresource::kNone,
                   api::PatchType::kMergePatch,
                   R"({"metadata":{"labels":{"x":"y"},"managedFields":[]}})", {},
                   [&](ApiResult<store::Bytes> r) { done.set_value(std::move(r)); });
  ApiResult<store::Bytes> r = done.get_future().get();
  ASSERT_TRUE(r) << r.error().message;
  Json p1{std::string_view(**r)};
  EXPECT_EQ(p1.Str("/metadata/labels/x"), "y");
  EXPECT_EQ(Managers(p1), (std::vector<std::string>{"unknown Update"}));
  EXPECT_EQ(FieldsOf(p1, "unknown"), before);
}

// serve's default: an object is tracked from its first server-side apply (upstream's
// skipnonapplied.go with a create probability of 0); before it, writes record nobody; at it, the
// fields already there go to "before-first-apply"; after it, every writer is recorded.
TEST_F(ApiServerTest, ManagedFieldsStartAtTheFirstApply) {
  auto managers = [&](std::string_view target) {
    std::vector<std::string> out;
    Json j = GetJson(target);
    const rapidjson::Value* mf = j.At("/metadata/managedFields");
    if (mf == nullptr || !mf->IsArray()) return out;
    for (const auto& e : mf->GetArray()) {
      out.push_back(std::string(e["manager"].GetString()) + ":" + e["operation"].GetString());
    }
    return out;
  };
  const std::string pod = std::string(kPods) + "/late";
  EXPECT_EQ(Do("POST", std::string(kPods) + "?fieldManager=kubectl-create", PodJson("late")).status,
            201);
  EXPECT_TRUE(managers(pod).empty());
  EXPECT_EQ(Do("PATCH", pod + "?fieldManager=kubectl-label", R"({"metadata":{"labels":{"a":"1"}}})",
               "application/merge-patch+json")
                .status,
            200);
  EXPECT_TRUE(managers(pod).empty());
  HttpResponse r = Do("PATCH", pod + "?fieldManager=kubectl",
                      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"late",
                          "labels":{"b":"2"}}})",
                      "application/apply-patch+yaml");
  EXPECT_EQ(r.status, 200) << r.body;
  // Apply entries first, as upstream encodes them (managedfields.go sortEncodedManagedFields).
  EXPECT_EQ(managers(pod),
            (std::vector<std::string>{"kubectl:Apply", "before-first-apply:Update"}));
  r = Do("PATCH", pod + "?fieldManager=kubectl-label", R"({"metadata":{"labels":{"c":"3"}}})",
         "application/merge-patch+json");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(managers(pod), (std::vector<std::string>{"kubectl:Apply", "before-first-apply:Update",
                                                     "kubectl-label:Update"}));
}

}  // namespace
}  // namespace kt::server
