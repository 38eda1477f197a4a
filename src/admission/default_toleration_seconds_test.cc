// DefaultTolerationSeconds: semantics.md §11.10 rows A1-A7 (derived from upstream
// plugin/pkg/admission/defaulttolerationseconds/admission.go and its admission_test.go), the
// flag values, updates, and what the plugin leaves alone.
#include "admission/default_toleration_seconds.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "api/codec.h"

namespace kt::admission {
namespace {

constexpr const char* kNR =
    R"({"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":300})";
constexpr const char* kUR =
    R"({"key":"node.kubernetes.io/unreachable","operator":"Exists","effect":"NoExecute","tolerationSeconds":300})";

rapidjson::Document Parse(const std::string& json) {
  Result<rapidjson::Document> d = api::ParseJson(json);
  EXPECT_TRUE(d) << json;
  return d ? std::move(*d) : rapidjson::Document();
}

std::string Json(const rapidjson::Value& v) { return api::EncodeJson(v); }

// A pod whose spec.tolerations is `tolerations` (JSON), or has none when it is empty.
rapidjson::Document Pod(const std::string& tolerations) {
  std::string spec = R"({"containers":[{"name":"c","image":"nginx"}])";
  if (!tolerations.empty()) spec += R"(,"tolerations":)" + tolerations;
  return Parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":)" + spec + "}}");
}

// The pod's tolerations after the plugin admitted `op` on it.
std::string Admitted(const DefaultTolerationSeconds& plugin, rapidjson::Document& pod,
                     Operation op = Operation::kCreate, std::string_view subresource = "",
                     const rapidjson::Value* old = nullptr) {
  Attributes a{.operation = op,
               .resource = "pods",
               .subresource = subresource,
               .namespace_ = "default",
               .name = "p",
               .object = &pod,
               .old_object = old};
  EXPECT_TRUE(plugin.Admit(a, Listers{}));
  auto it = pod["spec"].FindMember("tolerations");
  return it == pod["spec"].MemberEnd() ? "<none>" : Json(it->value);
}

TEST(DefaultTolerationSecondsTest, UpstreamTable) {
  const std::string nr = kNR;
  const std::string ur = kUR;
  struct Row {
    const char* id;
    std::string before;  // "" = no tolerations field
    std::string after;
  };
  const std::string a2 =
      R"({"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":60})";
  const std::string a3 = R"({"operator":"Exists"})";
  const std::string a4 =
      R"({"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoSchedule"})";
  const std::string a5 =
      R"({"key":"node.kubernetes.io/unreachable","operator":"Equal","value":"x"})";
  const std::string a6 = R"({"operator":"Exists","effect":"NoExecute"})";
  const std::string a7 = R"({"operator":"Exists","effect":"NoSchedule"})";
  const Row rows[] = {
      {"A1 no tolerations", "[]", "[" + nr + "," + ur + "]"},
      {"A1 no tolerations field", "", "[" + nr + "," + ur + "]"},
      {"A1 tolerations null", "null", "[" + nr + "," + ur + "]"},
      {"A2 own not-ready kept, 60 s", "[" + a2 + "]", "[" + a2 + "," + ur + "]"},
      {"A3 tolerate everything", "[" + a3 + "]", "[" + a3 + "]"},
      {"A4 NoSchedule does not cover NoExecute", "[" + a4 + "]",
       "[" + a4 + "," + nr + "," + ur + "]"},
      {"A5 operator and value ignored", "[" + a5 + "]", "[" + a5 + "," + nr + "]"},
      {"A6 empty key, NoExecute", "[" + a6 + "]", "[" + a6 + "]"},
      {"A7 empty key, NoSchedule", "[" + a7 + "]", "[" + a7 + "," + nr + "," + ur + "]"},
  };
  DefaultTolerationSeconds plugin(300, 300);
  for (const Row& row : rows) {
    rapidjson::Document pod = Pod(row.before);
    EXPECT_EQ(Admitted(plugin, pod), Json(Parse(row.after))) << row.id;
  }
}

TEST(DefaultTolerationSecondsTest, TheFlagsSetTheSeconds) {
  DefaultTolerationSeconds plugin(60, -1);
  rapidjson::Document pod = Pod("");
  EXPECT_EQ(Admitted(plugin, pod),
            R"([{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute",)"
            R"("tolerationSeconds":60},{"key":"node.kubernetes.io/unreachable","operator":)"
            R"("Exists","effect":"NoExecute","tolerationSeconds":-1}])");
}

TEST(DefaultTolerationSecondsTest, UpdatesGetTheSameDefaults) {
  DefaultTolerationSeconds plugin(300, 300);
  rapidjson::Document old = Pod("[" + std::string(kNR) + "," + kUR + "]");
  // An update that drops the defaults gets them back (an allowed addition, §4.5), so the
  // object is unchanged.
  rapidjson::Document dropped = Pod("[]");
  EXPECT_EQ(Admitted(plugin, dropped, Operation::kUpdate, "", &old),
            Json(old["spec"]["tolerations"]));
  // A pod created without them (the plugin was off) gets them on its next update.
  rapidjson::Document gated = Pod(R"([{"key":"a","operator":"Exists"}])");
  rapidjson::Document gated_old = Pod(R"([{"key":"a","operator":"Exists"}])");
  EXPECT_EQ(Admitted(plugin, gated, Operation::kUpdate, "", &gated_old),
            R"([{"key":"a","operator":"Exists"},)" + std::string(kNR) + "," + kUR + "]");
}

TEST(DefaultTolerationSecondsTest, SubresourcesOtherResourcesAndDeletesAreLeftAlone) {
  DefaultTolerationSeconds plugin(300, 300);
  for (std::string_view sub : {"status", "binding", "eviction"}) {
    rapidjson::Document pod = Pod("[]");
    EXPECT_EQ(Admitted(plugin, pod, Operation::kUpdate, sub), "[]") << sub;
  }
  rapidjson::Document pod = Pod("[]");
  Attributes del{.operation = Operation::kDelete, .resource = "pods", .name = "p"};
  EXPECT_TRUE(plugin.Admit(del, Listers{}));
  // A DaemonSet's pod template is not a pod: its pods get the defaults when created.
  rapidjson::Document ds = Parse(
      R"({"apiVersion":"apps/v1","kind":"DaemonSet","spec":{"template":{"spec":{"containers":[]}}}})");
  const std::string before = Json(ds);
  Attributes a{.operation = Operation::kCreate,
               .group = "apps",
               .resource = "daemonsets",
               .namespace_ = "default",
               .name = "ds",
               .object = &ds};
  EXPECT_TRUE(plugin.Admit(a, Listers{}));
  EXPECT_EQ(Json(ds), before);
}

TEST(DefaultTolerationSecondsTest, TolerationsThatAreNotAListAreLeftForDecodingToRefuse) {
  DefaultTolerationSeconds plugin(300, 300);
  rapidjson::Document pod = Pod(R"("not a list")");
  EXPECT_EQ(Admitted(plugin, pod), R"("not a list")");
}

}  // namespace
}  // namespace kt::admission
