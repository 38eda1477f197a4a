// ExtendedResourceToleration: semantics.md §11.10 rows X1-X4 (derived from upstream
// plugin/pkg/admission/extendedresourcetoleration/admission.go and admission_test.go), what
// counts as an extended resource (upstream helper.IsExtendedResourceName), zero requests, and
// what the plugin leaves alone.
#include "admission/extended_resource_toleration.h"

#include <string>

#include <gtest/gtest.h>

#include "api/codec.h"

namespace kt::admission {
namespace {

// A JSON list of `items`.
std::string L(std::initializer_list<std::string> items) {
  std::string out = "[";
  for (const std::string& item : items) {
    if (out.size() > 1) out += ",";
    out += item;
  }
  return out + "]";
}

// A pod with `containers` and `init` (JSON lists) and `tolerations` ("" for none).
rapidjson::Document Pod(const std::string& containers, const std::string& init = "[]",
                        const std::string& tolerations = "") {
  std::string spec = R"({"containers":)" + containers + R"(,"initContainers":)" + init;
  if (!tolerations.empty()) spec += R"(,"tolerations":)" + tolerations;
  Result<rapidjson::Document> d = api::ParseJson(
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":)" + spec + "}}");
  EXPECT_TRUE(d) << spec;
  return d ? std::move(*d) : rapidjson::Document();
}

// A container requesting `requests` (a JSON object).
std::string Requesting(const std::string& requests) {
  return R"({"name":"c","image":"i","resources":{"requests":)" + requests + "}}";
}

std::string Admitted(rapidjson::Document& pod, Operation op = Operation::kCreate,
                     std::string_view subresource = "") {
  Attributes a{.operation = op,
               .resource = "pods",
               .subresource = subresource,
               .namespace_ = "default",
               .name = "p",
               .object = &pod};
  EXPECT_TRUE(ExtendedResourceToleration().Admit(a, Listers{}));
  auto it = pod["spec"].FindMember("tolerations");
  return it == pod["spec"].MemberEnd() ? "<none>" : api::EncodeJson(it->value);
}

std::string For(const char* key) {
  return std::string(R"({"key":")") + key + R"(","operator":"Exists","effect":"NoSchedule"})";
}

TEST(ExtendedResourceTolerationTest, SemanticsTable) {
  struct Row {
    const char* id;
    std::string containers, init, tolerations;
    std::string want;
  };
  const Row rows[] = {
      {"X1 an extended resource", L({Requesting(R"({"example.com/gpu":"1"})")}), "[]", "",
       L({For("example.com/gpu")})},
      {"X2 cpu and memory only", L({Requesting(R"({"cpu":"1","memory":"1Gi"})")}), "[]", "",
       "<none>"},
      {"X3 containers and init containers, sorted", L({Requesting(R"({"vendor.io/b":"1"})")}),
       L({Requesting(R"({"vendor.io/a":"1"})")}), "", L({For("vendor.io/a"), For("vendor.io/b")})},
      {"X4 already tolerated", L({Requesting(R"({"example.com/gpu":"1"})")}), "[]",
       L({For("example.com/gpu")}), L({For("example.com/gpu")})},
      {"a request of zero needs no toleration (upstream adds one: it reads only the names)",
       L({Requesting(R"({"example.com/gpu":"0"})")}), "[]", "", "<none>"},
      {"zero in one container, one in another: tolerated",
       L({Requesting(R"({"example.com/gpu":"0"})"), Requesting(R"({"example.com/gpu":"1"})")}),
       "[]", "", L({For("example.com/gpu")})},
      {"one toleration per resource however many containers ask",
       L({Requesting(R"({"example.com/gpu":"1"})"),
          Requesting(R"({"example.com/gpu":"2","cpu":"1"})")}),
       L({Requesting(R"({"example.com/gpu":"1"})")}), "", L({For("example.com/gpu")})},
      {"the pod's own tolerations stay first", L({Requesting(R"({"example.com/gpu":"1"})")}), "[]",
       R"([{"key":"a","operator":"Exists"}])",
       L({R"({"key":"a","operator":"Exists"})", For("example.com/gpu")})},
      {"a matching toleration with seconds is replaced in place",
       L({Requesting(R"({"example.com/gpu":"1"})")}), "[]",
       R"([{"key":"example.com/gpu","operator":"Exists","effect":"NoSchedule","tolerationSeconds":5},{"key":"z","operator":"Exists"}])",
       L({For("example.com/gpu"), R"({"key":"z","operator":"Exists"})"})},
      {"an Equal toleration of the same key is another toleration",
       L({Requesting(R"({"example.com/gpu":"1"})")}), "[]",
       R"([{"key":"example.com/gpu","operator":"Equal","value":"x","effect":"NoSchedule"}])",
       L({R"({"key":"example.com/gpu","operator":"Equal","value":"x","effect":"NoSchedule"})",
          For("example.com/gpu")})},
      {"native and prefixed native resources are not extended",
       L({Requesting(
           R"({"hugepages-2Mi":"1","kubernetes.io/foo":"1","x.kubernetes.io/y":"1","ephemeral-storage":"1"})")}),
       "[]", "", "<none>"},
  };
  for (const Row& r : rows) {
    rapidjson::Document pod = Pod(r.containers, r.init, r.tolerations);
    EXPECT_EQ(Admitted(pod), r.want) << r.id;
  }
}

TEST(ExtendedResourceTolerationTest, IsExtendedResourceName) {
  struct Row {
    const char* name;
    bool want;
  };
  const Row rows[] = {
      {"example.com/gpu", true},
      {"nvidia.com/gpu", true},
      {"vendor.io/a", true},
      {"cpu", false},
      {"memory", false},
      {"hugepages-2Mi", false},
      {"kubernetes.io/foo", false},
      {"a.kubernetes.io/b", false},
      {"requests.a.com/b", false},
      {"example.com/-bad", false},
      {"bad_domain/gpu", false},
  };
  for (const Row& r : rows) EXPECT_EQ(IsExtendedResourceName(r.name), r.want) << r.name;
}

TEST(ExtendedResourceTolerationTest, UpdatesToo_SubresourcesAndDeletesNot) {
  const std::string gpu = L({Requesting(R"({"example.com/gpu":"1"})")});
  rapidjson::Document updated = Pod(gpu);
  EXPECT_EQ(Admitted(updated, Operation::kUpdate), L({For("example.com/gpu")}));
  rapidjson::Document status = Pod(gpu);
  EXPECT_EQ(Admitted(status, Operation::kUpdate, "status"), "<none>");
  Attributes del{.operation = Operation::kDelete, .resource = "pods", .name = "p"};
  EXPECT_TRUE(ExtendedResourceToleration().Admit(del, Listers{}));
}

TEST(ExtendedResourceTolerationTest, APodDecodingRefusesIsLeftAlone) {
  rapidjson::Document pod = Pod(L({Requesting(R"({"example.com/gpu":"one"})")}));
  EXPECT_EQ(Admitted(pod), "<none>");
}

}  // namespace
}  // namespace kt::admission
