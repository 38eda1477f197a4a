// PodTolerationRestriction: semantics.md §11.10 rows PR1-PR10 (derived from upstream
// plugin/pkg/admission/podtolerationrestriction/admission.go and admission_test.go), the
// annotation reading rules, Go's JSON errors for malformed annotations, the plugin's
// configuration file, and what it leaves alone.
#include "admission/pod_toleration_restriction.h"

#include <map>
#include <string>

#include <gtest/gtest.h>

#include "api/codec.h"

namespace kt::admission {
namespace {

constexpr const char* kMP =
    R"({"key":"node.kubernetes.io/memory-pressure","operator":"Exists","effect":"NoSchedule"})";
constexpr const char* kWhitelistConflict =
    "pod tolerations (possibly merged with namespace default tolerations) conflict with its ";

// One namespace "ns" with `annotations`; any other namespace does not exist.
Listers Namespace(std::map<std::string, std::string> annotations) {
  api::StringMap map;
  for (auto& [k, v] : annotations) map.Set(k, v);
  Listers l;
  l.namespaces.annotations = [map](std::string_view name) -> std::optional<api::StringMap> {
    if (name != "ns") return std::nullopt;
    return map;
  };
  return l;
}

std::map<std::string, std::string> Defaults(std::string json) {
  return {{std::string(PodTolerationRestriction::kDefaultTolerationsAnnotation), std::move(json)}};
}
std::map<std::string, std::string> Whitelist(std::string json) {
  return {
      {std::string(PodTolerationRestriction::kTolerationsWhitelistAnnotation), std::move(json)}};
}

// A BestEffort ("BE") or Burstable ("Bu") pod with `tolerations` (JSON; "" for none).
rapidjson::Document Pod(std::string_view qos, const std::string& tolerations) {
  std::string container = R"({"name":"c","image":"i")";
  if (qos == "Bu") container += R"(,"resources":{"requests":{"cpu":"100m"}})";
  container += "}";
  std::string spec = R"({"containers":[)" + container + "]";
  if (!tolerations.empty()) spec += R"(,"tolerations":)" + tolerations;
  Result<rapidjson::Document> d = api::ParseJson(
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":)" + spec + "}}");
  EXPECT_TRUE(d) << spec;
  return d ? std::move(*d) : rapidjson::Document();
}

std::string Tolerations(const rapidjson::Document& pod) {
  auto it = pod["spec"].FindMember("tolerations");
  return it == pod["spec"].MemberEnd() ? "[]" : api::EncodeJson(it->value);
}

// The pod's tolerations after Admit and Validate, or "error <code>: <message>".
std::string Admitted(const PodTolerationRestriction& plugin, const Listers& listers,
                     rapidjson::Document& pod, Operation op = Operation::kCreate,
                     std::string_view namespace_ = "ns") {
  Attributes a{
      .operation = op, .resource = "pods", .namespace_ = namespace_, .name = "p", .object = &pod};
  Verdict v = plugin.Admit(a, listers);
  if (v) v = plugin.Validate(a, listers);
  if (!v) {
    const Rejection& r = v.error();
    if (r.code == StatusCode::kNotFound) return "error 404: " + r.resource + "/" + r.name;
    return "error " + std::to_string(HttpCode(r.code)) + ": " + r.message;
  }
  return Tolerations(pod);
}

PodTolerationRestrictionConfig Cluster(const std::string& defaults, const std::string& whitelist) {
  PodTolerationRestrictionConfig c;
  if (!defaults.empty()) c.default_ = *DecodeTolerationsJson(defaults);
  if (!whitelist.empty()) c.whitelist = *DecodeTolerationsJson(whitelist);
  return c;
}

TEST(PodTolerationRestrictionTest, SemanticsTable) {
  const std::string mp = kMP;
  const std::string team_a =
      R"({"key":"dedicated","operator":"Equal","value":"team-a","effect":"NoSchedule"})";
  const std::string x = R"({"key":"x","operator":"Exists"})";
  struct Row {
    const char* id;
    std::map<std::string, std::string> annotations;
    PodTolerationRestrictionConfig cluster;
    std::string qos, tolerations;
    Operation op;
    std::string want;
  };
  const Row rows[] = {
      {"PR1 nothing configured", {}, {}, "BE", "", Operation::kCreate, "[]"},
      {"PR2 namespace defaults",
       Defaults("[" + team_a + "]"),
       {},
       "BE",
       "",
       Operation::kCreate,
       "[" + team_a + "]"},
      {"PR3 defaults and memory-pressure for a Burstable pod",
       Defaults("[" + team_a + "]"),
       {},
       "Bu",
       "",
       Operation::kCreate,
       "[" + team_a + "," + mp + "]"},
      {"PR4 an empty annotation does not fall back to the cluster default", Defaults(""),
       Cluster("[" + x + "]", ""), "BE", "", Operation::kCreate, "[]"},
      {"PR5 no annotation: the cluster default",
       {},
       Cluster("[" + x + "]", ""),
       "BE",
       "",
       Operation::kCreate,
       "[" + x + "]"},
      {"PR6 a toleration outside the namespace whitelist",
       Whitelist(R"([{"operator":"Exists","effect":"NoSchedule"}])"),
       {},
       "BE",
       R"([{"key":"foo","operator":"Exists","effect":"NoExecute"}])",
       Operation::kCreate,
       std::string("error 500: ") + kWhitelistConflict + "namespace whitelist"},
      {"PR7 a whitelist that tolerates everything",
       Whitelist(R"([{"operator":"Exists"}])"),
       {},
       "BE",
       R"([{"key":"foo","operator":"Exists","effect":"NoExecute","tolerationSeconds":5}])",
       Operation::kCreate,
       R"([{"key":"foo","operator":"Exists","effect":"NoExecute","tolerationSeconds":5}])"},
      {"PR8 the cluster whitelist",
       {},
       Cluster("", R"([{"key":"a","operator":"Exists"}])"),
       "BE",
       R"([{"key":"b","operator":"Exists"}])",
       Operation::kCreate,
       std::string("error 500: ") + kWhitelistConflict + "cluster whitelist"},
      {"PR9 an update of a Burstable pod gets memory-pressure",
       {},
       {},
       "Bu",
       "",
       Operation::kUpdate,
       "[" + mp + "]"},
      {"PR10 the automatic memory-pressure toleration is not whitelisted",
       Whitelist(R"([{"key":"dedicated","operator":"Exists"}])"),
       {},
       "Bu",
       "",
       Operation::kCreate,
       std::string("error 500: ") + kWhitelistConflict + "namespace whitelist"},
      {"the pod's own tolerations come first",
       Defaults("[" + team_a + "]"),
       {},
       "BE",
       "[" + x + "]",
       Operation::kCreate,
       "[" + x + "," + team_a + "]"},
      {"a broader toleration of the pod makes a default redundant",
       Defaults(R"([{"key":"x","operator":"Equal","value":"v"}])"),
       {},
       "BE",
       "[" + x + "]",
       Operation::kCreate,
       "[" + x + "]"},
      {"defaults only on create",
       Defaults("[" + team_a + "]"),
       {},
       "BE",
       "",
       Operation::kUpdate,
       "[]"},
      {"the defaults are checked against the whitelist",
       {{std::string(PodTolerationRestriction::kDefaultTolerationsAnnotation), "[" + x + "]"},
        {std::string(PodTolerationRestriction::kTolerationsWhitelistAnnotation),
         R"([{"key":"y","operator":"Exists"}])"}},
       {},
       "BE",
       "",
       Operation::kCreate,
       std::string("error 500: ") + kWhitelistConflict + "namespace whitelist"},
      {"an empty whitelist annotation is no restriction, nor falls back", Whitelist("[]"),
       Cluster("", R"([{"key":"a","operator":"Exists"}])"), "BE", "[" + x + "]", Operation::kCreate,
       "[" + x + "]"},
      {"null is an empty list too", Whitelist("null"),
       Cluster("", R"([{"key":"a","operator":"Exists"}])"), "BE", "[" + x + "]", Operation::kCreate,
       "[" + x + "]"},
      {"a pod without tolerations passes any whitelist",
       Whitelist(R"([{"key":"a"}])"),
       {},
       "BE",
       "",
       Operation::kCreate,
       "[]"},
  };
  for (const Row& r : rows) {
    PodTolerationRestriction plugin(r.cluster);
    rapidjson::Document pod = Pod(r.qos, r.tolerations);
    EXPECT_EQ(Admitted(plugin, Namespace(r.annotations), pod, r.op), r.want) << r.id;
  }
}

TEST(PodTolerationRestrictionTest, AdmitRefusesBeforeObjectValidation) {
  // Upstream's Admit ends with its Validate, so the whitelist refuses in the mutating phase.
  PodTolerationRestriction plugin({});
  rapidjson::Document pod = Pod("BE", R"([{"key":"b","operator":"Exists"}])");
  Attributes a{
      .operation = Operation::kCreate, .resource = "pods", .namespace_ = "ns", .object = &pod};
  Verdict v = plugin.Admit(a, Namespace(Whitelist(R"([{"key":"a","operator":"Exists"}])")));
  ASSERT_FALSE(v);
  EXPECT_EQ(v.error().code, StatusCode::kInternal);
}

TEST(PodTolerationRestrictionTest, MalformedAnnotationsFailWithGosJsonError) {
  struct Row {
    std::string annotation;
    std::string want;
  };
  const Row rows[] = {
      {"[{", "unexpected end of JSON input"},
      {"x", "invalid character 'x' looking for beginning of value"},
      {R"({"key":"a"})", "json: cannot unmarshal object into Go value of type []v1.Toleration"},
      {R"(["a"])", "json: cannot unmarshal string into Go value of type v1.Toleration"},
      {R"([{"key":1}])",
       "json: cannot unmarshal number into Go struct field Toleration.key of type string"},
      {R"([{"effect":true}])",
       "json: cannot unmarshal bool into Go struct field Toleration.effect of type v1.TaintEffect"},
      {R"([{"operator":[]}])",
       "json: cannot unmarshal array into Go struct field Toleration.operator of type "
       "v1.TolerationOperator"},
      {R"([{"tolerationSeconds":"5"}])",
       "json: cannot unmarshal string into Go struct field Toleration.tolerationSeconds of type "
       "int64"},
      {R"([{"tolerationSeconds":1.5}])",
       "json: cannot unmarshal number 1.5 into Go struct field Toleration.tolerationSeconds of "
       "type int64"},
  };
  PodTolerationRestriction plugin({});
  for (const Row& r : rows) {
    rapidjson::Document pod = Pod("BE", "");
    EXPECT_EQ(Admitted(plugin, Namespace(Defaults(r.annotation)), pod), "error 500: " + r.want)
        << r.annotation;
  }
}

TEST(PodTolerationRestrictionTest, AnnotationsReadAsGoReadsThem) {
  // Keys match whatever their case, unknown keys are ignored, null leaves a field unset, a null
  // element is the empty toleration.
  Result<std::vector<Toleration>> list = DecodeTolerationsJson(
      R"([{"KEY":"a","Operator":"Exists","bogus":1,"effect":null,"tolerationSeconds":null},null])");
  ASSERT_TRUE(list) << list.error().ToString();
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0], (Toleration{.key = "a",
                                    .op = "Exists",
                                    .value = "",
                                    .effect = "",
                                    .toleration_seconds = std::nullopt}));
  EXPECT_EQ((*list)[1], Toleration());
}

TEST(PodTolerationRestrictionTest, AMissingNamespaceIsNotFound) {
  PodTolerationRestriction plugin({});
  rapidjson::Document pod = Pod("BE", "");
  EXPECT_EQ(Admitted(plugin, Namespace({}), pod, Operation::kCreate, "gone"),
            "error 404: namespaces/gone");
}

TEST(PodTolerationRestrictionTest, QosComesFromTheStatusOrTheResources) {
  PodTolerationRestriction plugin({});
  struct Row {
    const char* why;
    std::string pod;
    bool gets_mp;
  };
  const Row rows[] = {
      {"a zero request is BestEffort",
       R"({"containers":[{"name":"c","resources":{"requests":{"cpu":"0"}}}]})", false},
      {"a memory limit is not",
       R"({"containers":[{"name":"c","resources":{"limits":{"memory":"1Gi"}}}]})", true},
      {"an init container counts",
       R"({"containers":[{"name":"c"}],"initContainers":[{"name":"i","resources":{"requests":{"cpu":"1"}}}]})",
       true},
      {"other resources do not",
       R"({"containers":[{"name":"c","resources":{"requests":{"example.com/gpu":"1"}}}]})", false},
      {"pod-level resources decide when given",
       R"({"resources":{},"containers":[{"name":"c","resources":{"requests":{"cpu":"1"}}}]})",
       false},
      {"pod-level requests", R"({"resources":{"requests":{"memory":"1Gi"}},"containers":[]})",
       true},
  };
  for (const Row& r : rows) {
    Result<rapidjson::Document> pod =
        api::ParseJson(R"({"metadata":{"name":"p"},"spec":)" + r.pod + "}");
    ASSERT_TRUE(pod);
    const std::string mp_only = std::string("[") + kMP + "]";
    EXPECT_EQ(Admitted(plugin, Namespace({}), *pod), r.gets_mp ? mp_only : "[]") << r.why;
  }
  // The status says BestEffort: upstream GetPodQOS believes it.
  Result<rapidjson::Document> pod = api::ParseJson(
      R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"1"}}}]},"status":{"qosClass":"BestEffort"}})");
  EXPECT_EQ(Admitted(plugin, Namespace({}), *pod), "[]");
}

TEST(PodTolerationRestrictionTest, AnUpdateThatChangesNothingIsLeftAsSent) {
  // The stored pod already has the memory-pressure toleration, written its own way.
  PodTolerationRestriction plugin({});
  const std::string own =
      R"([{"effect":"NoSchedule","operator":"Exists","key":"node.kubernetes.io/memory-pressure"}])";
  rapidjson::Document pod = Pod("Bu", own);
  EXPECT_EQ(Admitted(plugin, Namespace({}), pod, Operation::kUpdate), own);
}

TEST(PodTolerationRestrictionTest, SubresourcesOtherResourcesAndDeletesAreLeftAlone) {
  PodTolerationRestriction plugin({});
  const Listers listers = Namespace(Whitelist(R"([{"key":"a","operator":"Exists"}])"));
  rapidjson::Document pod = Pod("Bu", R"([{"key":"b","operator":"Exists"}])");
  for (std::string_view sub : {"status", "binding"}) {
    Attributes a{.operation = Operation::kUpdate,
                 .resource = "pods",
                 .subresource = sub,
                 .namespace_ = "ns",
                 .object = &pod};
    EXPECT_TRUE(plugin.Admit(a, listers)) << sub;
    EXPECT_TRUE(plugin.Validate(a, listers)) << sub;
  }
  EXPECT_EQ(Tolerations(pod), R"([{"key":"b","operator":"Exists"}])");
  Attributes del{.operation = Operation::kDelete, .resource = "pods", .namespace_ = "ns"};
  EXPECT_TRUE(plugin.Admit(del, listers));
  EXPECT_TRUE(plugin.Validate(del, listers));
}

TEST(PodTolerationRestrictionTest, Configuration) {
  auto load = [](const std::string& json) -> std::string {
    Result<rapidjson::Document> doc = api::ParseJson(json);
    if (!doc) return "bad test JSON";
    Result<PodTolerationRestrictionConfig> c = LoadPodTolerationRestrictionConfig(&*doc, "f.yaml");
    if (!c) return "error: " + c.error().message();
    return std::to_string(c->default_.size()) + " default, " + std::to_string(c->whitelist.size()) +
           " whitelist";
  };
  const std::string head =
      R"({"apiVersion":"podtolerationrestriction.admission.k8s.io/v1alpha1","kind":"Configuration")";
  EXPECT_EQ(
      load(
          head +
          R"(,"default":[{"key":"a","operator":"Exists"}],"whitelist":[{"operator":"Exists"},{"key":"b","value":"c"}]})"),
      "1 default, 2 whitelist");
  EXPECT_EQ(load(head + "}"), "0 default, 0 whitelist");
  EXPECT_EQ(
      load(
          R"({"apiVersion":"podtolerationrestriction.admission.k8s.io/v1","kind":"Configuration"})"),
      "0 default, 0 whitelist");
  EXPECT_EQ(load(R"({"apiVersion":"v1","kind":"Pod"})"),
            "error: f.yaml: apiVersion \"v1\", kind \"Pod\": want apiVersion "
            "podtolerationrestriction.admission.k8s.io/v1alpha1 and kind Configuration");
  EXPECT_EQ(load(head + R"(,"whitelist":{"key":"a"}})"),
            "error: f.yaml: whitelist: json: cannot unmarshal object into Go value of type "
            "[]v1.Toleration");
  EXPECT_EQ(
      load(head +
           R"(,"default":[{"key":"a","effect":"Sometimes"}],"whitelist":[{"operator":"Equal"}]})"),
      "error: f.yaml: invalid config: [podtolerationrestriction.default[0].effect: "
      "Unsupported value: \"Sometimes\": supported values: \"NoSchedule\", "
      "\"PreferNoSchedule\", \"NoExecute\" podtolerationrestriction.whitelist[0].operator: "
      "Invalid value: \"Equal\": operator must be Exists when `key` is empty, which means "
      "\"match all values and all keys\"]");
  EXPECT_EQ(load("[]"), "error: f.yaml: expected a Configuration object, got array");
  Result<PodTolerationRestrictionConfig> none = LoadPodTolerationRestrictionConfig(nullptr, "");
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->default_.empty() && none->whitelist.empty());
}

}  // namespace
}  // namespace kt::admission
