// What controller tests share: an API server in process (a Registry on the memory store) whose
// timestamps come from a simulated clock, and a Client that forwards every call to it, for tests
// to subclass where they record or refuse some calls. For tests and in-process benchmarks.
//
//   testing::TestApi api;
//   api.Must(api.client().CreateSync(Resource::kNodes, "", R"({"metadata":{"name":"n1"}})"));
//   api.SyncCaches();                   // every write above is in the watch caches
//   ObjectPtr n = api.Get(Resource::kNodes, "", "n1");
//
//   class Refusing : public testing::ForwardingClient {
//     using ForwardingClient::ForwardingClient;
//     void Delete(...) override { done(server::ApiErr(server::NewInternalError("no"))); }
//   };
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <initializer_list>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "admission/testing.h"
#include "client/client.h"
#include "client/clock.h"
#include "client/informer.h"
#include "core/feature_gates.h"
#include "server/registry.h"
#include "store/store.h"

namespace kt::controllers::testing {

// Passes every call to `inner`.
class ForwardingClient : public client::Client {
 public:
  explicit ForwardingClient(client::Client* inner) : inner_(inner) {}

  void Create(server::Resource r, std::string ns, std::string body,
              client::WriteDone done) override {
    inner_->Create(r, std::move(ns), std::move(body), std::move(done));
  }
  void Create(server::Resource r, std::string ns, rapidjson::Document body,
              client::WriteDone done) override {
    inner_->Create(r, std::move(ns), std::move(body), std::move(done));
  }
  void CreateEvent(api::Event event, client::WriteDone done) override {
    inner_->CreateEvent(std::move(event), std::move(done));
  }
  void Update(server::Resource r, std::string ns, std::string name, server::Subresource sub,
              std::string body, client::WriteDone done) override {
    inner_->Update(r, std::move(ns), std::move(name), sub, std::move(body), std::move(done));
  }
  void Patch(server::Resource r, std::string ns, std::string name, server::Subresource sub,
             api::PatchType type, std::string patch, client::WriteDone done) override {
    inner_->Patch(r, std::move(ns), std::move(name), sub, type, std::move(patch), std::move(done));
  }
  void Delete(server::Resource r, std::string ns, std::string name, server::DeleteOptions options,
              client::WriteDone done) override {
    inner_->Delete(r, std::move(ns), std::move(name), std::move(options), std::move(done));
  }
  void Get(server::Resource r, std::string ns, std::string name, client::GetDone done) override {
    inner_->Get(r, std::move(ns), std::move(name), std::move(done));
  }
  void Bind(std::string ns, std::string name, std::string uid, std::string node,
            client::Done done) override {
    inner_->Bind(std::move(ns), std::move(name), std::move(uid), std::move(node), std::move(done));
  }

 protected:
  client::Client* inner() const { return inner_; }

 private:
  client::Client* inner_;
};

// A Registry on the memory store, its clock simulated.
class TestApi {
 public:
  explicit TestApi(FeatureGates gates = {}) : store_(store::NewMemoryStore()) {
    server::Registry::Options ro;
    ro.gates = gates;
    ro.admission = admission::testing::ChainForNodesWithoutKubelets();
    ro.now = [this] {
      return std::chrono::time_point_cast<std::chrono::system_clock::duration>(clock.Now());
    };
    registry_ = std::make_unique<server::Registry>(store_.get(), ro);
    if (!registry_->Start().ok()) std::abort();
    client_ = client::NewInProcessClient(registry_.get());
  }
  ~TestApi() { registry_->Stop(); }
  TestApi(const TestApi&) = delete;
  TestApi& operator=(const TestApi&) = delete;

  server::Registry& registry() { return *registry_; }
  // Writes straight to the registry (not through the client under test).
  client::Client& client() { return *client_; }
  std::unique_ptr<client::ListerWatcher> ListerWatcher(server::Resource r,
                                                       server::ObjectFilter filter = {}) {
    return client::NewCacheListerWatcher(&registry_->cache(r), std::move(filter));
  }

  // Waits until every write acknowledged so far is in these watch caches.
  void SyncCaches(std::initializer_list<server::Resource> resources = {
                      server::Resource::kPods, server::Resource::kNodes, server::Resource::kLeases,
                      server::Resource::kEvents}) {
    for (server::Resource r : resources) {
      std::promise<void> done;
      registry_->Sync(r, [&] { done.set_value(); });
      done.get_future().wait();
    }
  }
  server::ObjectPtr Get(server::Resource r, std::string_view ns, std::string_view name) {
    SyncCaches({r});
    return registry_->cache(r).Get(ns, name);
  }
  std::vector<server::ObjectPtr> List(server::Resource r) {
    SyncCaches({r});
    return registry_->cache(r).List(server::ObjectFilter()).items;
  }

  [[noreturn]] static void Abort(const std::string& message) {
    std::fprintf(stderr, "write failed: %s\n", message.c_str());
    std::abort();
  }
  static void Must(const server::ApiResult<store::Bytes>& r) {
    if (!r) Abort(r.error().message);
  }

  client::SimulatedClock clock;

 private:
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<server::Registry> registry_;
  std::unique_ptr<client::Client> client_;
};

// Runs a manually driven controller until nothing is left to do: `sync` brings the watch caches
// up to date, then the controller handles what arrived (RunPending); two quiet rounds with none
// of its calls in flight (InFlight) end it. Aborts after 30 s of wall time.
template <class Controller, class Sync>
void Settle(Controller& controller, Sync sync) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  int quiet = 0;
  while (quiet < 2) {
    sync();
    const size_t n = controller.RunPending();
    if (n == 0 && controller.InFlight() == 0) {
      ++quiet;
    } else {
      quiet = 0;
      if (n == 0) std::this_thread::yield();  // a write of the controller's is under way
    }
    if (std::chrono::steady_clock::now() > deadline) {
      std::fprintf(stderr, "Settle: no quiescence within 30 s\n");
      std::abort();
    }
  }
}

// Moves `clock` to `end`, stopping at every timer on the way and calling `settle` there, as if
// the components ran all along: what `settle` arms for an instant already reached (at `end`
// too) fires before this returns.
template <class SettleFn>
void AdvanceTo(client::SimulatedClock& clock, client::Time end, SettleFn settle) {
  settle();
  for (;;) {
    client::Time next;
    if (clock.NextDeadline(&next) && next <= end) {
      clock.AdvanceTo(next);
    } else if (clock.Now() < end) {
      clock.AdvanceTo(end);
    } else {
      return;
    }
    settle();
  }
}

}  // namespace kt::controllers::testing
