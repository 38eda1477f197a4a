// apps/v1 DaemonSets through the registry as upstream's daemonset strategy has them: defaults,
// the template generation annotation, metadata.generation, the status subresource, validation.
#include "server/daemonset_strategy.h"

#include <future>
#include <memory>
#include <string>

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/pointer.h>

#include "api/codec.h"
#include "server/registry.h"
#include "store/store.h"

namespace kt::server {
namespace {

// A DaemonSet `agent`; `selector` and `labels` are JSON, `strategy` the updateStrategy member.
std::string Agent(std::string_view selector = R"({"matchLabels":{"app":"agent"}})",
                  std::string_view labels = R"({"app":"agent"})", std::string_view strategy = "") {
  std::string out = R"({"apiVersion":"apps/v1","kind":"DaemonSet",)"
                    R"("metadata":{"name":"agent","namespace":"default"},"spec":{"selector":)";
  out.append(selector).append(R"(,"template":{"metadata":{"labels":)").append(labels);
  out.append(R"(},"spec":{"containers":[{"name":"c","image":"v1"}]}})");
  if (!strategy.empty()) out.append(",").append(strategy);
  return out + "}}";
}
const std::string kAgent = Agent();

class DaemonSetStrategyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = store::NewMemoryStore();
    registry_ = std::make_unique<Registry>(store_.get(), Registry::Options{});
    ASSERT_TRUE(registry_->Start().ok());
  }
  void TearDown() override { registry_->Stop(); }

  static rapidjson::Document Parse(std::string_view json) {
    Result<rapidjson::Document> d = api::ParseJson(json);
    EXPECT_TRUE(d) << json;
    return d ? std::move(*d) : rapidjson::Document();
  }
  template <class Call>
  ApiResult<rapidjson::Document> Wait(Call call) {
    std::promise<ApiResult<store::Bytes>> p;
    call([&](ApiResult<store::Bytes> r) { p.set_value(std::move(r)); });
    ApiResult<store::Bytes> r = p.get_future().get();
    if (!r) return tl::unexpected<ApiError>(r.error());
    return Parse(**r);
  }
  ApiResult<rapidjson::Document> Create(std::string_view json) {
    return Wait([&](WriteCallback done) {
      registry_->Create(Info(Resource::kDaemonSets), "default", Parse(json), {}, std::move(done));
    });
  }
  ApiResult<rapidjson::Document> Patch(std::string_view patch,
                                       Subresource sub = Subresource::kNone) {
    return Wait([&](WriteCallback done) {
      registry_->Patch(Info(Resource::kDaemonSets), "default", "agent", sub,
                       api::PatchType::kMergePatch, std::string(patch), {}, std::move(done));
    });
  }
  static std::string Get(const rapidjson::Value& doc, const char* pointer) {
    const rapidjson::Value* v = rapidjson::Pointer(pointer).Get(doc);
    if (v == nullptr) return "<absent>";
    return api::EncodeJson(*v);
  }

  std::unique_ptr<store::Store> store_;
  std::unique_ptr<Registry> registry_;
};

TEST_F(DaemonSetStrategyTest, CreateSetsDefaultsZeroStatusAndTemplateGenerationOne) {
  ApiResult<rapidjson::Document> ds = Create(kAgent);
  ASSERT_TRUE(ds) << ds.error().message;
  EXPECT_EQ(Get(*ds, "/spec/updateStrategy"),
            R"({"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":1,"maxSurge":0}})");
  EXPECT_EQ(Get(*ds, "/spec/revisionHistoryLimit"), "10");
  EXPECT_EQ(Get(*ds, "/spec/template/spec/schedulerName"), R"("default-scheduler")");
  EXPECT_EQ(Get(*ds, "/status"),
            R"({"currentNumberScheduled":0,"numberMisscheduled":0,"desiredNumberScheduled":0,)"
            R"("numberReady":0})");
  EXPECT_EQ(Get(*ds, "/metadata/annotations"),
            R"({"deprecated.daemonset.template.generation":"1"})");
  EXPECT_EQ(Get(*ds, "/metadata/generation"), "1");
}

TEST_F(DaemonSetStrategyTest, OnDeleteKeepsNoRollingUpdateDefaults) {
  ApiResult<rapidjson::Document> ds =
      Create(Agent(R"({"matchLabels":{"app":"agent"}})", R"({"app":"agent"})",
                   R"("updateStrategy":{"type":"OnDelete"})"));
  ASSERT_TRUE(ds) << ds.error().message;
  EXPECT_EQ(Get(*ds, "/spec/updateStrategy"), R"({"type":"OnDelete"})");
}

TEST_F(DaemonSetStrategyTest, TemplateGenerationCountsTemplateChangesGenerationEverySpecChange) {
  ASSERT_TRUE(Create(kAgent));
  // A spec change outside the template: generation only.
  ApiResult<rapidjson::Document> ds = Patch(R"({"spec":{"minReadySeconds":5}})");
  ASSERT_TRUE(ds) << ds.error().message;
  EXPECT_EQ(Get(*ds, "/metadata/generation"), "2");
  EXPECT_EQ(Get(*ds, "/metadata/annotations/deprecated.daemonset.template.generation"), R"("1")");
  // A template change: both.
  ds = Patch(R"({"spec":{"template":{"spec":{"containers":[{"name":"c","image":"v2"}]}}}})");
  ASSERT_TRUE(ds) << ds.error().message;
  EXPECT_EQ(Get(*ds, "/metadata/generation"), "3");
  EXPECT_EQ(Get(*ds, "/metadata/annotations/deprecated.daemonset.template.generation"), R"("2")");
  // Metadata alone: neither; and the annotation is the server's.
  ds = Patch(R"({"metadata":{"labels":{"x":"y"},)"
             R"("annotations":{"deprecated.daemonset.template.generation":"7"}}})");
  ASSERT_TRUE(ds) << ds.error().message;
  EXPECT_EQ(Get(*ds, "/metadata/generation"), "3");
  EXPECT_EQ(Get(*ds, "/metadata/annotations/deprecated.daemonset.template.generation"), R"("2")");
}

TEST_F(DaemonSetStrategyTest, StatusChangesOnlyThroughTheSubresource) {
  ASSERT_TRUE(Create(kAgent));
  ApiResult<rapidjson::Document> ds = Patch(R"({"status":{"numberReady":3}})");
  ASSERT_TRUE(ds);
  EXPECT_EQ(Get(*ds, "/status/numberReady"), "0");
  ds = Patch(R"({"status":{"numberReady":3},"spec":{"minReadySeconds":9}})", Subresource::kStatus);
  ASSERT_TRUE(ds) << ds.error().message;
  EXPECT_EQ(Get(*ds, "/status/numberReady"), "3");
  EXPECT_EQ(Get(*ds, "/spec/minReadySeconds"), "<absent>");
  EXPECT_EQ(Get(*ds, "/metadata/generation"), "1");
}

TEST_F(DaemonSetStrategyTest, ValidationAsUpstream) {
  ApiResult<rapidjson::Document> ds =
      Create(Agent(R"({"matchLabels":{"app":"agent"}})", R"({"app":"other"})"));
  ASSERT_FALSE(ds);
  EXPECT_EQ(ds.error().code, 422);
  EXPECT_NE(ds.error().message.find("spec.template.metadata.labels: Invalid value: "
                                    "map[string]string{\"app\":\"other\"}: `selector` does not "
                                    "match template `labels`"),
            std::string::npos)
      << ds.error().message;

  ds = Create(Agent("{}"));
  ASSERT_FALSE(ds);
  EXPECT_NE(ds.error().message.find("empty selector is invalid for daemonset"), std::string::npos)
      << ds.error().message;

  ASSERT_TRUE(Create(kAgent));
  ds = Patch(R"({"spec":{"selector":{"matchLabels":{"app":"agent","x":"y"}}}})");
  ASSERT_FALSE(ds);
  EXPECT_NE(ds.error().message.find("spec.selector: Invalid value: {}: field is immutable"),
            std::string::npos)
      << ds.error().message;
  ds = Patch(R"({"spec":{"updateStrategy":{"rollingUpdate":{"maxUnavailable":0}}}})");
  ASSERT_FALSE(ds);
  EXPECT_NE(ds.error().message.find("spec.updateStrategy.rollingUpdate.maxUnavailable: Required "
                                    "value: cannot be 0 when maxSurge is 0"),
            std::string::npos)
      << ds.error().message;
  ds = Patch(R"({"spec":{"updateStrategy":{"type":"Sometimes"}}})");
  ASSERT_FALSE(ds);
  EXPECT_NE(ds.error().message.find("spec.updateStrategy: Unsupported value: \"Sometimes\""),
            std::string::npos)
      << ds.error().message;
}

// Not DaemonSet-specific, but what daemon pods carry: upstream ValidateOwnerReferences.
TEST_F(DaemonSetStrategyTest, OwnerReferencesAreValidatedAsUpstream) {
  auto create_pod = [&](std::string_view refs) {
    std::string json =
        R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","ownerReferences":)";
    json.append(refs).append(R"(},"spec":{"containers":[{"name":"c","image":"x"}]}})");
    return Wait([&](WriteCallback done) {
      registry_->Create(Info(Resource::kPods), "default", Parse(json), {}, std::move(done));
    });
  };
  ApiResult<rapidjson::Document> pod = create_pod(
      R"([{"apiVersion":"apps/v1","kind":"DaemonSet","name":"a","uid":"1","controller":true},)"
      R"({"apiVersion":"apps/v1","kind":"DaemonSet","name":"b","uid":"2","controller":true}])");
  ASSERT_FALSE(pod);
  EXPECT_NE(pod.error().message.find(
                R"(metadata.ownerReferences: Invalid value: [{"apiVersion":"apps/v1","kind":)"
                R"("DaemonSet","name":"a","uid":"1","controller":true},{"apiVersion":"apps/v1",)"
                R"("kind":"DaemonSet","name":"b","uid":"2","controller":true}]: Only one )"
                R"(reference can have Controller set to true. Found "true" in references for )"
                R"(DaemonSet/a and DaemonSet/b)"),
            std::string::npos)
      << pod.error().message;
  pod = create_pod(R"([{"apiVersion":"apps/","kind":"","name":"a","uid":""}])");
  ASSERT_FALSE(pod);
  for (const char* want :
       {R"(metadata.ownerReferences.apiVersion: Invalid value: "apps/": )"
        R"(version must not be empty)",
        R"(metadata.ownerReferences.kind: Invalid value: "": must not be empty)",
        R"(metadata.ownerReferences.uid: Invalid value: "": must not be empty)"}) {
    EXPECT_NE(pod.error().message.find(want), std::string::npos) << pod.error().message;
  }
  EXPECT_TRUE(create_pod(
      R"([{"apiVersion":"apps/v1","kind":"DaemonSet","name":"a","uid":"1","controller":true,)"
      R"("blockOwnerDeletion":true},{"apiVersion":"v1","kind":"Node","name":"n","uid":"2"}])"));
}

}  // namespace
}  // namespace kt::server
