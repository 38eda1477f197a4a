// The in-process client's writes go through the registry as HTTP requests do: a binding names
// its node and, when given, the pod's UID, and is refused as upstream refuses it.
#include "client/client.h"

#include <gtest/gtest.h>

#include <future>
#include <memory>
#include <string>

#include "server/registry.h"
#include "store/store.h"

namespace kt::client {
namespace {

using server::Resource;

class InProcessClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = store::NewMemoryStore();
    registry_ = std::make_unique<server::Registry>(store_.get(), server::Registry::Options{});
    ASSERT_TRUE(registry_->Start().ok());
    client_ = NewInProcessClient(registry_.get());
    ASSERT_TRUE(client_->CreateSync(Resource::kPods, "default",
                                    R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"web"},)"
                                    R"("spec":{"containers":[{"name":"c","image":"nginx"}]}})"));
  }
  void TearDown() override {
    client_.reset();
    registry_->Stop();
  }

  ApiResult<void> Bind(std::string name, std::string uid, std::string node) {
    std::promise<ApiResult<void>> p;
    client_->Bind("default", std::move(name), std::move(uid), std::move(node),
                  [&](ApiResult<void> r) { p.set_value(std::move(r)); });
    return p.get_future().get();
  }
  std::string Uid() {
    ApiResult<server::ObjectPtr> pod = client_->GetSync(Resource::kPods, "default", "web");
    return pod ? (*pod)->meta().uid : "";
  }
  std::string NodeOf() {
    ApiResult<server::ObjectPtr> pod = client_->GetSync(Resource::kPods, "default", "web");
    return pod ? (*pod)->As<api::Pod>()->spec.node_name : "<none>";
  }

  std::unique_ptr<store::Store> store_;
  std::unique_ptr<server::Registry> registry_;
  std::unique_ptr<Client> client_;
};

TEST_F(InProcessClientTest, ABindingWithAnotherUidIsRefusedAndOneWithThePodsUidBinds) {
  ApiResult<void> stale = Bind("web", "not-the-uid", "node-1");
  ASSERT_FALSE(stale);
  EXPECT_EQ(stale.error().code, 409);
  EXPECT_EQ(stale.error().message,
            "Operation cannot be fulfilled on pods/binding \"web\": Precondition failed: UID in "
            "precondition: not-the-uid, UID in object meta: " +
                Uid());
  EXPECT_EQ(NodeOf(), "");
  ASSERT_TRUE(Bind("web", Uid(), "node-1"));
  EXPECT_EQ(NodeOf(), "node-1");
  ApiResult<void> again = Bind("web", "", "node-2");
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, 409);
  EXPECT_EQ(NodeOf(), "node-1");
}

TEST_F(InProcessClientTest, ABindingOfAMissingPodIsNotFound) {
  ApiResult<void> r = Bind("nobody", "", "node-1");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, 404);
  EXPECT_EQ(r.error().message, "pods \"nobody\" not found");
}

}  // namespace
}  // namespace kt::client
