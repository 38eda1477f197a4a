// The registry's admission, driven through its own entry points: the path the in-process client
// (scheduler, controllers) writes by. The HTTP answers are in api_server_test.cc.

#include "server/registry.h"

#include <future>
#include <memory>
#include <string>

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/pointer.h>

#include "api/codec.h"
#include "store/store.h"

namespace kt::server {
namespace {

rapidjson::Document Parse(std::string_view json) {
  rapidjson::Document d;
  d.Parse(json.data(), json.size());
  EXPECT_FALSE(d.HasParseError()) << json;
  return d;
}

std::string Str(const rapidjson::Value& doc, const char* pointer) {
  const rapidjson::Value* v = rapidjson::Pointer(pointer).Get(doc);
  if (v == nullptr) return "<absent>";
  if (!v->IsString()) return "<not a string>";
  return v->GetString();
}

std::string PodJson(std::string_view name, std::string_view spec_extra = "") {
  std::string out = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")";
  out.append(name).append(R"("},"spec":{"containers":[{"name":"c","image":"nginx"}])");
  if (!spec_extra.empty()) out.append(",").append(spec_extra);
  return out + "}}";
}

class RegistryTest : public ::testing::Test {
 protected:
  void SetUp() override { store_ = store::NewMemoryStore(); }

  void Start(Registry::Options options = {}) {
    registry_.reset();
    registry_ = std::make_unique<Registry>(store_.get(), std::move(options));
    ASSERT_TRUE(registry_->Start().ok());
  }

  static std::shared_ptr<const admission::Chain> Chain(admission::Config config) {
    Result<std::shared_ptr<const admission::Chain>> chain = admission::NewChain(config);
    EXPECT_TRUE(chain) << chain.error().message();
    return chain ? *chain : nullptr;
  }

  // The write's answer: the object as JSON, or the error.
  template <class Call>
  ApiResult<rapidjson::Document> Wait(Call call) {
    std::promise<ApiResult<store::Bytes>> p;
    call([&](ApiResult<store::Bytes> r) { p.set_value(std::move(r)); });
    ApiResult<store::Bytes> r = p.get_future().get();
    if (!r) return tl::unexpected<ApiError>(r.error());
    return Parse(**r);
  }

  ApiResult<rapidjson::Document> Create(Resource res, std::string ns, std::string_view json,
                                        WriteOptions options = {}) {
    return Wait([&](WriteCallback done) {
      registry_->Create(Info(res), ns, Parse(json), options, std::move(done));
    });
  }
  ApiResult<rapidjson::Document> Delete(Resource res, std::string ns, std::string name,
                                        DeleteOptions options = {}) {
    return Wait([&](WriteCallback done) {
      registry_->Delete(Info(res), ns, name, options, std::move(done));
    });
  }
  ApiResult<rapidjson::Document> MergePatch(Resource res, std::string ns, std::string name,
                                            std::string patch,
                                            Subresource sub = Subresource::kNone) {
    return Wait([&](WriteCallback done) {
      registry_->Patch(Info(res), ns, name, sub, api::PatchType::kMergePatch, patch, {},
                       std::move(done));
    });
  }
  // The object as the cache holds it once every acknowledged write is in, or null.
  ObjectPtr Get(Resource res, std::string_view ns, std::string_view name) {
    std::promise<void> synced;
    registry_->Sync(res, [&] { synced.set_value(); });
    synced.get_future().wait();
    return registry_->cache(res).Get(ns, name);
  }

  std::unique_ptr<store::Store> store_;
  std::unique_ptr<Registry> registry_;
};

TEST_F(RegistryTest, PodsGetTheDefaultTolerationsFromEveryWriter) {
  Start();
  auto pod = Create(Resource::kPods, "default", PodJson("p"));
  ASSERT_TRUE(pod);
  const rapidjson::Value& tols = (*pod)["spec"]["tolerations"];
  ASSERT_EQ(tols.Size(), 2u);
  EXPECT_EQ(Str(tols[0], "/key"), "node.kubernetes.io/not-ready");
  EXPECT_EQ(tols[0]["tolerationSeconds"].GetInt64(), 300);
  EXPECT_EQ(Str(tols[1], "/key"), "node.kubernetes.io/unreachable");
  // A dry run shows them too and stores nothing.
  WriteOptions dry;
  dry.dry_run = true;
  auto dry_pod = Create(Resource::kPods, "default", PodJson("dry"), dry);
  ASSERT_TRUE(dry_pod);
  EXPECT_EQ((*dry_pod)["spec"]["tolerations"].Size(), 2u);
  EXPECT_FALSE(Get(Resource::kPods, "default", "dry"));
  // A status update is not the pod's: nothing is added there.
  ASSERT_TRUE(MergePatch(Resource::kPods, "default", "p", R"({"status":{"phase":"Running"}})",
                         Subresource::kStatus));
}

TEST_F(RegistryTest, TheChainInTheOptionsDecides) {
  admission::Config config;
  config.disable_plugins = {"DefaultTolerationSeconds"};
  Registry::Options options;
  options.admission = Chain(config);
  Start(std::move(options));
  auto plain = Create(Resource::kPods, "default", PodJson("plain"));
  ASSERT_TRUE(plain);
  EXPECT_FALSE((*plain)["spec"].HasMember("tolerations"));

  // Turned on later, the plugin adds them on the pod's next update (an allowed addition).
  Registry::Options seconds;
  config = {};
  config.default_not_ready_toleration_seconds = 60;
  seconds.admission = Chain(config);
  Start(std::move(seconds));
  auto updated =
      MergePatch(Resource::kPods, "default", "plain", R"({"metadata":{"labels":{"a":"b"}}})");
  ASSERT_TRUE(updated) << updated.error().message;
  ASSERT_EQ((*updated)["spec"]["tolerations"].Size(), 2u);
  EXPECT_EQ((*updated)["spec"]["tolerations"][0]["tolerationSeconds"].GetInt64(), 60);
  EXPECT_EQ((*updated)["spec"]["tolerations"][1]["tolerationSeconds"].GetInt64(), 300);

  // Without NamespaceLifecycle the immortal namespaces are mortal, as upstream.
  Registry::Options mortal;
  config = {};
  config.disable_plugins = {"NamespaceLifecycle"};
  mortal.admission = Chain(config);
  Start(std::move(mortal));
  auto gone = Delete(Resource::kNamespaces, "", "kube-public");
  ASSERT_TRUE(gone) << gone.error().message;
  Start();
  auto immortal = Delete(Resource::kNamespaces, "", "default");
  ASSERT_FALSE(immortal);
  EXPECT_EQ(immortal.error().message,
            "namespaces \"default\" is forbidden: this namespace may not be deleted");
}

}  // namespace
}  // namespace kt::server
