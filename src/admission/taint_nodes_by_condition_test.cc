// TaintNodesByCondition (upstream plugin/pkg/admission/nodetaint/admission.go and
// admission_test.go, semantics.md §8.4): what a node's spec.taints is after the plugin admitted a
// request.
#include "admission/taint_nodes_by_condition.h"

#include <string>

#include <gtest/gtest.h>

#include "api/codec.h"

namespace kt::admission {
namespace {

constexpr const char* kNotReady = R"({"key":"node.kubernetes.io/not-ready","effect":"NoSchedule"})";

// The node's spec.taints (JSON, "<none>" without one) after `op` on `resource`/`subresource`.
std::string Admitted(const std::string& spec, Operation op = Operation::kCreate,
                     std::string_view resource = "nodes", std::string_view subresource = "") {
  Result<rapidjson::Document> doc =
      api::ParseJson(R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"})" +
                     (spec.empty() ? std::string() : ",\"spec\":" + spec) + "}");
  EXPECT_TRUE(doc);
  Attributes a{.operation = op,
               .resource = resource,
               .subresource = subresource,
               .name = "n1",
               .object = &*doc};
  EXPECT_TRUE(TaintNodesByCondition().Admit(a, Listers{}));
  EXPECT_TRUE(TaintNodesByCondition().Validate(a, Listers{})) << "the plugin only admits";
  auto s = doc->FindMember("spec");
  if (s == doc->MemberEnd() || !s->value.IsObject()) return "<none>";
  auto t = s->value.FindMember("taints");
  return t == s->value.MemberEnd() ? "<none>" : api::EncodeJson(t->value);
}

TEST(TaintNodesByConditionTest, UpstreamCases) {
  const std::string not_ready = kNotReady;
  const std::string dedicated = R"({"key":"dedicated","value":"x","effect":"NoSchedule"})";
  struct Row {
    const char* why;
    std::string spec;  // "" = no spec
    std::string want;
  };
  const Row rows[] = {
      {"a node without spec gets the taint", "", "[" + not_ready + "]"},
      {"a node without taints gets the taint", "{}", "[" + not_ready + "]"},
      {"taints: null", R"({"taints":null})", "[" + not_ready + "]"},
      {"other taints are kept, the taint comes last", "{\"taints\":[" + dedicated + "]}",
       "[" + dedicated + "," + not_ready + "]"},
      {"an already tainted node is not tainted again", "{\"taints\":[" + not_ready + "]}",
       "[" + not_ready + "]"},
      {"key and effect make the same taint, whatever the value",
       R"({"taints":[{"key":"node.kubernetes.io/not-ready","value":"v","effect":"NoSchedule"}]})",
       R"([{"key":"node.kubernetes.io/not-ready","value":"v","effect":"NoSchedule"}])"},
      {"not-ready:NoExecute is another taint",
       R"({"taints":[{"key":"node.kubernetes.io/not-ready","effect":"NoExecute"}]})",
       R"([{"key":"node.kubernetes.io/not-ready","effect":"NoExecute"},)" + not_ready + "]"},
      {"taints that are not a list are left for decoding to refuse", R"({"taints":"x"})", R"("x")"},
  };
  for (const Row& r : rows) EXPECT_EQ(Admitted(r.spec), r.want) << r.why;
}

TEST(TaintNodesByConditionTest, OnlyCreatesOfNodesThemselves) {
  EXPECT_EQ(Admitted("{}", Operation::kUpdate), "<none>") << "updates keep their taints";
  EXPECT_EQ(Admitted("{}", Operation::kCreate, "nodes", "status"), "<none>");
  EXPECT_EQ(Admitted("{}", Operation::kCreate, "pods"), "<none>");
  Attributes del{.operation = Operation::kDelete, .resource = "nodes", .name = "n1"};
  EXPECT_TRUE(TaintNodesByCondition().Admit(del, Listers{}));
}

}  // namespace
}  // namespace kt::admission
