// A cluster for taint eviction tests: a Registry on the memory store, the controller driven by
// hand on a simulated clock, and a client between them that records the controller's deletes
// and can make them fail. Settle() runs everything to quiescence — writes in the caches,
// informer changes handled, evictions finished — so tests never sleep. For tests only.
//
//   testing::Cluster c;
//   c.SetNodeTaints("node1", {Taint1()});
//   c.CreatePod("pod1", "node1", {Tol(1, 100)});
//   c.Advance(std::chrono::seconds(100));
//   EXPECT_FALSE(c.Exists("pod1"));
#pragma once

#include <cstdio>
#include <cstdlib>
#include <deque>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "client/client.h"
#include "client/clock.h"
#include "controllers/tainteviction/controller.h"
#include "controllers/testing/api.h"
#include "core/time.h"
#include "server/registry.h"
#include "store/store.h"

namespace kt::controllers::tainteviction::testing {

// What a pod delete from the controller does.
enum class Fault : unsigned char {
  kNone,
  kError,     // the server answers 500 and deletes nothing
  kConflict,  // the server answers 409 (not a UID precondition) and deletes nothing
  kTimeout,   // the delete happens, but the controller sees a 504
};

// Passes every call to `inner`, recording the controller's pod deletes and status patches.
class RecordingClient : public controllers::testing::ForwardingClient {
 public:
  struct Call {
    client::Time at;
    std::string namespace_;
    std::string name;
    std::string uid;       // the delete's UID precondition
    bool deleted = false;  // the pod was really deleted by this call
  };

  RecordingClient(client::Client* inner, client::Clock* clock)
      : ForwardingClient(inner), clock_(clock) {}

  void Patch(server::Resource r, std::string ns, std::string name, server::Subresource sub,
             api::PatchType type, std::string patch, client::WriteDone done) override {
    if (r == server::Resource::kPods && sub == server::Subresource::kStatus) {
      std::lock_guard<std::mutex> lock(mu_);
      patches_.push_back(Call{clock_->Now(), ns, name, "", false});
    }
    inner()->Patch(r, std::move(ns), std::move(name), sub, type, std::move(patch), std::move(done));
  }
  void Delete(server::Resource r, std::string ns, std::string name, server::DeleteOptions options,
              client::WriteDone done) override {
    Fault fault = Fault::kNone;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!faults_.empty()) {
        fault = faults_.front();
        faults_.pop_front();
      }
    }
    if (fault == Fault::kError || fault == Fault::kConflict) {
      std::lock_guard<std::mutex> lock(mu_);
      refused_.push_back(options.precondition_uid.value_or(name));
    }
    if (fault == Fault::kError) {
      return done(server::ApiErr(server::NewInternalError("injected failure")));
    }
    if (fault == Fault::kConflict) {
      return done(
          server::ApiErr(server::ConflictError(server::Info(r), name, "injected conflict")));
    }
    Call call{clock_->Now(), ns, name, options.precondition_uid.value_or(""), false};
    inner()->Delete(r, ns, name, std::move(options),
                    [this, call, fault,
                     done = std::move(done)](server::ApiResult<store::Bytes> result) mutable {
                      {
                        std::lock_guard<std::mutex> lock(mu_);
                        call.deleted = result.has_value();
                        deletes_.push_back(call);
                      }
                      if (fault == Fault::kTimeout) {
                        return done(server::ApiErr(server::NewTimeoutError("injected timeout", 1)));
                      }
                      done(std::move(result));
                    });
  }
  // The next deletes fail as given, in order.
  void InjectDeleteFaults(std::vector<Fault> faults) {
    std::lock_guard<std::mutex> lock(mu_);
    faults_.insert(faults_.end(), faults.begin(), faults.end());
  }
  // Every delete call that reached the server (injected errors and conflicts do not).
  std::vector<Call> Deletes() const {
    std::lock_guard<std::mutex> lock(mu_);
    return deletes_;
  }
  // The UIDs whose deletes an injected error or conflict refused.
  std::vector<std::string> Refused() const {
    std::lock_guard<std::mutex> lock(mu_);
    return refused_;
  }
  // Forgets every recorded call (pending faults stay).
  void ClearRecords() {
    std::lock_guard<std::mutex> lock(mu_);
    deletes_.clear();
    patches_.clear();
    refused_.clear();
  }
  size_t PendingFaults() const {
    std::lock_guard<std::mutex> lock(mu_);
    return faults_.size();
  }
  std::vector<Call> StatusPatches() const {
    std::lock_guard<std::mutex> lock(mu_);
    return patches_;
  }

 private:
  client::Clock* clock_;
  mutable std::mutex mu_;
  std::deque<Fault> faults_;          // guarded by mu_
  std::vector<Call> deletes_;         // guarded by mu_
  std::vector<Call> patches_;         // guarded by mu_
  std::vector<std::string> refused_;  // guarded by mu_
};

class Cluster {
 public:
  explicit Cluster(FeatureGates gates = {}) : api_(gates), clock(api_.clock) {
    inner_ = &api_.client();
    client = std::make_unique<RecordingClient>(inner_, &clock);
    Controller::Options o;
    o.clock = &clock;
    o.client = client.get();
    o.pods = api_.ListerWatcher(server::Resource::kPods);
    o.nodes = api_.ListerWatcher(server::Resource::kNodes);
    o.gates = gates;
    o.host = "test-host";
    o.manual = true;
    o.retry_base = std::chrono::milliseconds(100);
    o.retry_max = std::chrono::seconds(5);
    controller = std::make_unique<Controller>(std::move(o));
    controller->Start();
    Settle();
  }

  ~Cluster() { controller->Stop(); }

  // Runs informers, the controller and every write it started until nothing is left to do.
  void Settle() {
    controllers::testing::Settle(*controller, [this] { SyncCaches(); });
  }
  // Moves the clock forward by `d`, stopping at every timer on the way and settling there, as
  // if the controller ran all along.
  void Advance(client::Duration d) { AdvanceTo(clock.Now() + d); }
  void AdvanceTo(client::Time end) {
    controllers::testing::AdvanceTo(clock, end, [this] { Settle(); });
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
    if (api_.registry().cache(server::Resource::kNodes).Get("", node)) {
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
    return api_.registry().cache(server::Resource::kPods).Get(ns, name)->meta().uid;
  }
  // Binds an unbound pod.
  void BindPod(const std::string& name, const std::string& node) {
    std::promise<server::ApiResult<void>> p;
    inner_->Bind("default", name, "", node,
                 [&](server::ApiResult<void> r) { p.set_value(std::move(r)); });
    server::ApiResult<void> r = p.get_future().get();
    if (!r) Abort(r.error().message);
  }
  // Replaces the pod's tolerations (a strategic merge patch of spec.tolerations).
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
    return api_.registry().cache(server::Resource::kPods).Get(ns, name);
  }
  bool Exists(const std::string& name, const std::string& ns = "default") {
    return GetPod(name, ns) != nullptr;
  }
  // The controller's successful deletes of this pod (by name; any UID).
  std::vector<RecordingClient::Call> DeletesOf(const std::string& name) const {
    std::vector<RecordingClient::Call> out;
    for (const auto& c : client->Deletes()) {
      if (c.name == name && c.deleted) out.push_back(c);
    }
    return out;
  }
  size_t PatchesOf(const std::string& name) const {
    size_t n = 0;
    for (const auto& c : client->StatusPatches()) n += c.name == name;
    return n;
  }
  // Events the controller wrote about the pod, by message (polls: they are written
  // asynchronously).
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
    return api_.registry().cache(r).List(server::ObjectFilter()).items;
  }
  void SyncCaches() {
    api_.SyncCaches({server::Resource::kPods, server::Resource::kNodes, server::Resource::kEvents});
  }

 private:
  controllers::testing::TestApi api_;  // first: it outlives everything below

 public:
  client::SimulatedClock& clock;
  std::unique_ptr<RecordingClient> client;
  std::unique_ptr<Controller> controller;

 private:
  [[noreturn]] static void Abort(const std::string& message) {
    controllers::testing::TestApi::Abort(message);
  }
  static void Must(const server::ApiResult<store::Bytes>& r) {
    controllers::testing::TestApi::Must(r);
  }

  client::Client* inner_ = nullptr;
};

}  // namespace kt::controllers::tainteviction::testing
