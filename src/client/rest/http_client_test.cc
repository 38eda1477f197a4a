// The client layer over HTTP against kubetaint's own API server on a loopback port: the same
// calls and informer semantics as in-process.
#include "client/rest/http_client.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <future>
#include <mutex>

#include "api/codec.h"
#include "server/api_server.h"
#include "server/http.h"
#include "server/registry.h"
#include "store/store.h"

namespace kt::client {
namespace {

using server::Resource;

class HttpClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = store::NewMemoryStore();
    registry_ = std::make_unique<server::Registry>(store_.get(), server::Registry::Options{});
    ASSERT_TRUE(registry_->Start().ok());
    api_ = std::make_unique<server::ApiServer>(registry_.get());
    server::HttpServerOptions options;
    options.listen = "127.0.0.1:0";
    auto server = server::StartHttpServer(options, api_.get());
    ASSERT_TRUE(server) << server.error().ToString();
    server_ = std::move(*server);
    RestConfig config;
    config.server = "http://127.0.0.1:" + std::to_string(server_->port());
    auto t = RestTransport::New(config);
    ASSERT_TRUE(t) << t.error().ToString();
    transport_ = std::move(*t);
    client_ = NewHttpClient(transport_.get());
  }
  void TearDown() override {
    client_.reset();
    server_->Stop();
    registry_->Stop();
  }

  std::unique_ptr<store::Store> store_;
  std::unique_ptr<server::Registry> registry_;
  std::unique_ptr<server::ApiServer> api_;
  std::unique_ptr<server::HttpServer> server_;
  std::unique_ptr<RestTransport> transport_;
  std::unique_ptr<Client> client_;
};

TEST_F(HttpClientTest, WritesAndErrorsAreTheServersOwn) {
  auto created = client_->CreateSync(Resource::kNodes, "", R"({"metadata":{"name":"n1"}})");
  ASSERT_TRUE(created) << created.error().message;
  EXPECT_NE(created.value()->find("\"name\":\"n1\""), std::string::npos);
  auto again = client_->CreateSync(Resource::kNodes, "", R"({"metadata":{"name":"n1"}})");
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().code, 409);
  EXPECT_EQ(again.error().reason, "AlreadyExists");
  EXPECT_EQ(again.error().message, "nodes \"n1\" already exists");
  auto patched = client_->PatchSync(Resource::kNodes, "", "n1", Subresource::kNone,
                                    api::PatchType::kStrategicMergePatch,
                                    R"({"spec":{"unschedulable":true}})");
  ASSERT_TRUE(patched) << patched.error().message;
  // The answer comes once the write is durable; the cache may apply it a moment later.
  std::promise<void> synced;
  registry_->Sync(Resource::kNodes, [&] { synced.set_value(); });
  synced.get_future().wait();
  EXPECT_TRUE(
      registry_->cache(Resource::kNodes).Get("", "n1")->As<api::Node>()->spec.unschedulable);

  ASSERT_TRUE(client_->CreateSync(
      Resource::kPods, "default",
      R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"x"}]}})"));
  std::promise<void> pods_synced;
  registry_->Sync(Resource::kPods, [&] { pods_synced.set_value(); });
  pods_synced.get_future().wait();
  std::string uid = registry_->cache(Resource::kPods).Get("default", "p")->meta().uid;
  std::promise<ApiResult<void>> bound;
  client_->Bind("default", "p", "not-the-uid", "n1",
                [&](ApiResult<void> r) { bound.set_value(std::move(r)); });
  ApiResult<void> b = bound.get_future().get();
  ASSERT_FALSE(b);
  EXPECT_EQ(b.error().code, 409);
  std::promise<ApiResult<void>> bound2;
  client_->Bind("default", "p", uid, "n1",
                [&](ApiResult<void> r) { bound2.set_value(std::move(r)); });
  EXPECT_TRUE(bound2.get_future().get());
  server::DeleteOptions del;
  del.precondition_uid = "other";
  auto d = client_->DeleteSync(Resource::kPods, "default", "p", del);
  ASSERT_FALSE(d);
  EXPECT_EQ(d.error().code, 409);
  EXPECT_TRUE(client_->DeleteSync(Resource::kPods, "default", "p"));
}

TEST_F(HttpClientTest, InformerListsAndWatchesOverHttp) {
  ASSERT_TRUE(client_->CreateSync(Resource::kNodes, "", R"({"metadata":{"name":"a"}})"));
  Informer inf(NewHttpListerWatcher(transport_.get(), server::Info(Resource::kNodes)),
               Informer::Options::Threaded(nullptr, "nodes"));
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::string> log;
  EventHandler h;
  h.on_add = [&](const ObjectPtr& o, bool initial) {
    std::lock_guard<std::mutex> lock(mu);
    log.push_back((initial ? "add* " : "add ") + o->meta().name);
    cv.notify_all();
  };
  h.on_update = [&](const ObjectPtr&, const ObjectPtr& o) {
    std::lock_guard<std::mutex> lock(mu);
    log.push_back("update " + o->meta().name +
                  (o->As<api::Node>()->spec.unschedulable ? " cordoned" : ""));
    cv.notify_all();
  };
  h.on_delete = [&](const ObjectPtr& o) {
    std::lock_guard<std::mutex> lock(mu);
    log.push_back("delete " + o->meta().name);
    cv.notify_all();
  };
  inf.AddEventHandler(h);
  inf.Start();
  ASSERT_TRUE(
      WaitForCacheSync({&inf}, std::chrono::steady_clock::now() + std::chrono::seconds(10)));
  ASSERT_TRUE(client_->CreateSync(Resource::kNodes, "", R"({"metadata":{"name":"b"}})"));
  ASSERT_TRUE(client_->PatchSync(Resource::kNodes, "", "a", Subresource::kNone,
                                 api::PatchType::kMergePatch,
                                 R"({"spec":{"unschedulable":true}})"));
  ASSERT_TRUE(client_->DeleteSync(Resource::kNodes, "", "b"));
  std::unique_lock<std::mutex> lock(mu);
  ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(10), [&] { return log.size() >= 4; }))
      << ::testing::PrintToString(log);
  EXPECT_EQ(log, (std::vector<std::string>{"add* a", "add b", "update a cordoned", "delete b"}));
  lock.unlock();
  // The informer's objects carry the server's resourceVersion as their revision.
  EXPECT_EQ(inf.Get("", "a")->revision, registry_->cache(Resource::kNodes).Get("", "a")->revision);
  inf.Stop();
}

TEST_F(HttpClientTest, UnreachableServerIsServiceUnavailable) {
  RestConfig config;
  config.server = "http://127.0.0.1:1";
  auto t = RestTransport::New(config);
  ASSERT_TRUE(t);
  auto c = NewHttpClient(t->get());
  auto r = c->CreateSync(Resource::kNodes, "", R"({"metadata":{"name":"x"}})");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, 503);
}

TEST(KubeconfigTest, ReadsTheCurrentContextsClusterAndUser) {
  const std::string text = R"(apiVersion: v1
kind: Config
clusters:
- name: c1
  cluster:
    server: https://10.0.0.1:6443
    certificate-authority-data: aGVsbG8=
- name: c2
  cluster:
    server: http://127.0.0.1:8080
contexts:
- name: one
  context: {cluster: c1, user: u1, namespace: team-a}
- name: two
  context: {cluster: c2, user: u2}
current-context: one
users:
- name: u1
  user: {token: secret}
- name: u2
  user: {}
)";
  auto one = ParseKubeconfig(text, "/tmp");
  ASSERT_TRUE(one) << one.error().message();
  EXPECT_EQ(one->server, "https://10.0.0.1:6443");
  EXPECT_EQ(one->ca_pem, "hello");
  EXPECT_EQ(one->bearer_token, "secret");
  EXPECT_EQ(one->namespace_, "team-a");
  auto two = ParseKubeconfig(text, "/tmp", "two");
  ASSERT_TRUE(two);
  EXPECT_EQ(two->server, "http://127.0.0.1:8080");
  EXPECT_EQ(two->namespace_, "default");
  auto missing = ParseKubeconfig(text, "/tmp", "three");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message(), "context \"three\" not found");
}

}  // namespace
}  // namespace kt::client
