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
#include "controllers/testing/cluster.h"
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

// The taint eviction controller in manual mode over controllers/testing/cluster.h's API side;
// its writes go through a RecordingClient.
class Cluster : public controllers::testing::ApiCluster {
 public:
  explicit Cluster(FeatureGates gates = {}) : ApiCluster(gates) {
    client = std::make_unique<RecordingClient>(inner_, &clock);
    Controller::Options o;
    o.clock = &clock;
    o.client = client.get();
    o.pods = client::NewCacheListerWatcher(&registry_->cache(server::Resource::kPods));
    o.nodes = client::NewCacheListerWatcher(&registry_->cache(server::Resource::kNodes));
    o.gates = gates;
    o.host = "test-host";
    o.manual = true;
    o.retry_base = std::chrono::milliseconds(100);
    o.retry_max = std::chrono::seconds(5);
    controller = std::make_unique<Controller>(std::move(o));
    controller->Start();
    Settle();
  }
  ~Cluster() override { controller->Stop(); }

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

  std::unique_ptr<RecordingClient> client;
  std::unique_ptr<Controller> controller;

 protected:
  size_t RunControllers() override { return controller->RunPending(); }
  bool WritesInFlight() const override { return controller->InFlight() > 0; }
};

}  // namespace kt::controllers::tainteviction::testing
