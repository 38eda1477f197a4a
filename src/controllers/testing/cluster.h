// The API side of a controller test: testing::TestApi (api.h: a Registry on the memory store, a
// simulated clock for its timestamps and the controllers' timers, an in-process client), and
// helpers that write nodes and pods as a user, a scheduler or a kubelet would. A test's cluster
// derives from ApiCluster, builds its controllers in manual mode and runs them in RunControllers;
// Settle() then runs everything to quiescence — writes in the caches, informer changes handled,
// controller writes finished — so tests never sleep. For tests only.
//
//   class Cluster : public controllers::testing::ApiCluster {
//     size_t RunControllers() override { return controller->RunPending(); }
//   };
//   Cluster c;
//   c.SetNodeTaints("node1", {c.Taint(1)});
//   c.Advance(std::chrono::seconds(100));
//   EXPECT_FALSE(c.Exists("pod1"));
#pragma once

#include <cstdio>
#include <cstdlib>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "client/client.h"
#include "client/clock.h"
#include "controllers/testing/api.h"
#include "core/feature_gates.h"
#include "core/time.h"
#include "server/registry.h"
#include "store/store.h"

namespace kt::controllers::testing {

class ApiCluster {
 public:
  explicit ApiCluster(FeatureGates gates = {})
      : test_api_(gates),
        clock(test_api_.clock),
        registry_(&test_api_.registry()),
        inner_(&test_api_.client()) {}
  // A derived cluster stops its controllers in its own destructor, before this one runs.
  virtual ~ApiCluster() = default;
  ApiCluster(const ApiCluster&) = delete;
  ApiCluster& operator=(const ApiCluster&) = delete;

  // Runs informers, the controllers and every write they started until nothing is left to do.
  void Settle() {
    Runner runner{this};
    testing::Settle(runner, [this] { SyncCaches(); });
  }
  // Moves the clock forward by `d`, stopping at every timer on the way and settling there, as
  // if the controllers ran all along.
  void Advance(client::Duration d) { AdvanceTo(clock.Now() + d); }
  void AdvanceTo(client::Time end) {
    testing::AdvanceTo(clock, end, [this] { Settle(); });
  }

  // A taint `testTaint<i>=test<i>:<effect>` (upstream's fixtures), added now.
  std::string Taint(int i, std::string_view effect = "NoExecute") {
    std::string t = Cat({R"({"key":"testTaint)", std::to_string(i), R"(","value":"test)",
                         std::to_string(i), R"(","effect":")", std::string(effect),
                         R"(","timeAdded":")", FormatRfc3339(clock.Now()), "\"}"});
    return t;
  }
  // A toleration of testTaint<i>=test<i>:NoExecute for `seconds` (< 0: for ever).
  static std::string Tol(int i, int64_t seconds = -1) {
    std::string t = Cat({R"({"key":"testTaint)", std::to_string(i), R"(","value":"test)",
                         std::to_string(i), R"(","effect":"NoExecute")"});
    if (seconds >= 0) t.append(",\"tolerationSeconds\":").append(std::to_string(seconds));
    return t.append("}");
  }
  static std::string Join(const std::vector<std::string>& items) {
    std::string out = "[";
    for (size_t i = 0; i < items.size(); ++i) out.append(i ? "," : "").append(items[i]);
    return out.append("]");
  }
  static std::string Cat(std::initializer_list<std::string> parts) {
    std::string out;
    for (const std::string& p : parts) out.append(p);
    return out;
  }

  // Creates the node, or replaces its taints.
  void SetNodeTaints(const std::string& node, const std::vector<std::string>& taints) {
    const std::string list = Join(taints);
    if (registry_->cache(server::Resource::kNodes).Get("", node)) {
      Must(inner_->PatchSync(server::Resource::kNodes, "", node, server::Subresource::kNone,
                             api::PatchType::kMergePatch,
                             Cat({R"({"spec":{"taints":)", list, "}}"})));
    } else {
      Must(inner_->CreateSync(
          server::Resource::kNodes, "",
          Cat({R"({"metadata":{"name":")", node, R"("},"spec":{"taints":)", list, "}}"})));
    }
  }
  void DeleteNode(const std::string& node) {
    Must(inner_->DeleteSync(server::Resource::kNodes, "", node));
  }
  // Creates a pod bound to `node` ("" unbound) with these tolerations; returns its UID. Its
  // terminationGracePeriodSeconds is `grace`: with the default 0, a delete removes it at once
  // (there is no kubelet here to end a graceful deletion).
  std::string CreatePod(const std::string& name, const std::string& node,
                        const std::vector<std::string>& tolerations = {},
                        const std::string& ns = "default", int grace = 0) {
    std::string spec =
        Cat({R"("containers":[{"name":"c","image":"x"}],"terminationGracePeriodSeconds":)",
             std::to_string(grace), R"(,"tolerations":)", Join(tolerations)});
    if (!node.empty()) spec.append(R"(,"nodeName":")").append(node).append("\"");
    Must(inner_->CreateSync(server::Resource::kPods, ns,
                            Cat({R"({"metadata":{"name":")", name, R"("},"spec":{)", spec, "}}"})));
    SyncCaches();
    return registry_->cache(server::Resource::kPods).Get(ns, name)->meta().uid;
  }
  // Binds an unbound pod (as the scheduler does).
  void BindPod(const std::string& name, const std::string& node,
               const std::string& ns = "default") {
    std::promise<server::ApiResult<void>> p;
    inner_->Bind(ns, name, "", node, [&](server::ApiResult<void> r) { p.set_value(std::move(r)); });
    server::ApiResult<void> r = p.get_future().get();
    if (!r) Abort(r.error().message);
  }
  // Replaces the pod's tolerations (a merge patch of spec.tolerations).
  void SetTolerations(const std::string& name, const std::vector<std::string>& tolerations) {
    Must(inner_->PatchSync(server::Resource::kPods, "default", name, server::Subresource::kNone,
                           api::PatchType::kMergePatch,
                           Cat({R"({"spec":{"tolerations":)", Join(tolerations), "}}"})));
  }
  void DeletePod(const std::string& name, const std::string& ns = "default") {
    Must(inner_->DeleteSync(server::Resource::kPods, ns, name));
  }

  server::ObjectPtr GetPod(const std::string& name, const std::string& ns = "default") {
    SyncCaches();
    return registry_->cache(server::Resource::kPods).Get(ns, name);
  }
  bool Exists(const std::string& name, const std::string& ns = "default") {
    return GetPod(name, ns) != nullptr;
  }
  // Whether some event's JSON contains `message` (polls: events are written asynchronously).
  bool HasEvent(const std::string& message,
                std::chrono::milliseconds wait = std::chrono::milliseconds(2000)) {
    const auto deadline = std::chrono::steady_clock::now() + wait;
    do {
      SyncCaches();
      for (const server::ObjectPtr& e : List(server::Resource::kEvents)) {
        if (e->json->find(message) != std::string::npos) return true;
      }
      std::this_thread::yield();
    } while (std::chrono::steady_clock::now() < deadline);
    return false;
  }
  std::vector<server::ObjectPtr> List(server::Resource r) {
    return registry_->cache(r).List(server::ObjectFilter()).items;
  }
  void SyncCaches() {
    test_api_.SyncCaches({server::Resource::kPods, server::Resource::kNodes,
                          server::Resource::kEvents, server::Resource::kDaemonSets});
  }

  server::Registry& registry() { return *registry_; }
  // The client the helpers write with (not a controller's).
  client::Client& api() { return *inner_; }

 private:
  TestApi test_api_;  // first: the members below refer to it

 public:
  client::SimulatedClock& clock;

 protected:
  // One round of the controllers under test (their RunPending); returns how much they handled.
  virtual size_t RunControllers() = 0;
  // Whether some controller write is still under way (Settle waits for it).
  virtual bool WritesInFlight() const { return false; }

  [[noreturn]] static void Abort(const std::string& message) { TestApi::Abort(message); }
  static void Must(const server::ApiResult<store::Bytes>& r) { TestApi::Must(r); }

  server::Registry* registry_;
  client::Client* inner_;

 private:
  // Settle's view of the controllers under test.
  struct Runner {
    ApiCluster* cluster;
    size_t RunPending() { return cluster->RunControllers(); }
    size_t InFlight() const { return cluster->WritesInFlight() ? 1 : 0; }
  };
};

}  // namespace kt::controllers::testing
