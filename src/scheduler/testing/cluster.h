// An in-process cluster for scheduler tests: a Registry on the memory store, informers that
// dispatch only when told, and a Scheduler driven by RunUntilIdle on a simulated clock. Settle()
// runs everything to quiescence — writes visible in the caches, informer events delivered, pods
// scheduled — so tests never sleep. For tests only.
//
//   testing::Cluster c;
//   c.Create(server::Resource::kNodes, R"({"metadata":{"name":"n1"},...})");
//   c.Create(server::Resource::kPods, R"({"metadata":{"name":"p"},...})");
//   c.Settle();
//   EXPECT_EQ(c.NodeOf("default", "p"), "n1");
#pragma once

#include <future>
#include <memory>
#include <string>
#include <vector>

#include "admission/testing.h"
#include "api/codec.h"
#include "client/client.h"
#include "client/informer.h"
#include "scheduler/scheduler.h"
#include "server/registry.h"
#include "store/store.h"

namespace kt::scheduler::testing {

class Cluster {
 public:
  explicit Cluster(std::vector<Profile> profiles = {Profile()}, FeatureGates gates = {})
      : store_(store::NewMemoryStore()) {
    server::Registry::Options ro;
    ro.gates = gates;
    ro.admission = admission::testing::ChainForNodesWithoutKubelets();
    ro.now = [this] {
      return std::chrono::time_point_cast<std::chrono::system_clock::duration>(clock.Now());
    };
    registry_ = std::make_unique<server::Registry>(store_.get(), ro);
    if (!registry_->Start().ok()) std::abort();
    client_ = client::NewInProcessClient(registry_.get());
    server::ObjectFilter pods_filter;
    pods_filter.fields =
        *api::fields::ParseSelector("status.phase!=Succeeded,status.phase!=Failed", "Pod");
    pods_ = std::make_unique<client::Informer>(
        client::NewCacheListerWatcher(&registry_->cache(server::Resource::kPods), pods_filter),
        client::Informer::Options::Manual(&clock, "pods"));
    nodes_ = std::make_unique<client::Informer>(
        client::NewCacheListerWatcher(&registry_->cache(server::Resource::kNodes)),
        client::Informer::Options::Manual(&clock, "nodes"));
    Scheduler::Options so;
    so.clock = &clock;
    so.client = client_.get();
    so.profiles = std::move(profiles);
    so.gates = gates;
    client::Informer* pods = pods_.get();
    so.get_pod = [pods](std::string_view ns, std::string_view name) { return pods->Get(ns, name); };
    auto s = Scheduler::New(std::move(so));
    if (!s) std::abort();
    scheduler = std::move(*s);
    scheduler->AddEventHandlers(pods_.get(), nodes_.get());
    pods_->Start();
    nodes_->Start();
    scheduler->StartFlushTimers();
    Settle();
  }

  ~Cluster() {
    scheduler->Stop();
    pods_->Stop();
    nodes_->Stop();
    registry_->Stop();
  }

  // Writes, through the registry (admission and validation included); aborts on failure unless
  // `expect_ok` is false, returning the error instead.
  server::ApiResult<store::Bytes> Create(server::Resource r, std::string json,
                                         bool expect_ok = true) {
    const server::ResourceInfo& info = server::Info(r);
    auto res = client_->CreateSync(r, info.namespaced ? "default" : "", std::move(json));
    if (expect_ok && !res) {
      std::fprintf(stderr, "create failed: %s\n", res.error().message.c_str());
      std::abort();
    }
    return res;
  }
  server::ApiResult<store::Bytes> Patch(server::Resource r, std::string name, std::string patch,
                                        server::Subresource sub = server::Subresource::kNone) {
    const server::ResourceInfo& info = server::Info(r);
    return client_->PatchSync(r, info.namespaced ? "default" : "", std::move(name), sub,
                              api::PatchType::kStrategicMergePatch, std::move(patch));
  }
  // Deletes at once, as `kubectl delete --grace-period=0 --force`: the tests here have no
  // kubelet to end a pod's graceful deletion.
  server::ApiResult<store::Bytes> Delete(server::Resource r, std::string name) {
    const server::ResourceInfo& info = server::Info(r);
    server::DeleteOptions now;
    now.grace_period_seconds = 0;
    return client_->DeleteSync(r, info.namespaced ? "default" : "", std::move(name), now);
  }

  // Runs everything to quiescence.
  void Settle() {
    for (int round = 0; round < 1000; ++round) {
      SyncCaches();
      size_t work = pods_->DispatchPending() + nodes_->DispatchPending();
      work += scheduler->RunUntilIdle();
      SyncCaches();
      work += pods_->DispatchPending() + nodes_->DispatchPending();
      if (work == 0) return;
    }
    std::fprintf(stderr, "Settle: no quiescence after 1000 rounds\n");
    std::abort();
  }
  // Moves the simulated clock forward (firing the scheduler's timers), then settles.
  void Advance(client::Duration d) {
    clock.Advance(d);
    Settle();
  }

  ObjectPtr GetPod(std::string_view name, std::string_view ns = "default") {
    return registry_->cache(server::Resource::kPods).Get(ns, name);
  }
  // spec.nodeName of a pod ("" when unbound or missing).
  std::string NodeOf(std::string_view name) {
    ObjectPtr p = GetPod(name);
    return p ? p->As<api::Pod>()->spec.node_name : "";
  }
  const api::Condition* PodCondition(std::string_view name, std::string_view type) {
    ObjectPtr p = GetPod(name);
    if (!p) return nullptr;
    for (const api::Condition& c : p->As<api::Pod>()->status.conditions) {
      if (c.type == type) {
        held_.push_back(p);
        return &c;
      }
    }
    return nullptr;
  }
  // Every stored object of a resource (as the registry's cache has it after Settle).
  std::vector<ObjectPtr> List(server::Resource r) {
    return registry_->cache(r).List(server::ObjectFilter()).items;
  }
  // The events about an object, as core/v1 Events.
  std::vector<api::Event> EventsFor(std::string_view name) {
    std::vector<api::Event> out;
    for (const ObjectPtr& o :
         registry_->cache(server::Resource::kEvents).List(server::ObjectFilter()).items) {
      const api::Event* e = o->As<api::Event>();
      if (e != nullptr && e->involved_object.name == name) out.push_back(*e);
    }
    return out;
  }

  client::SimulatedClock clock;
  std::unique_ptr<Scheduler> scheduler;

 private:
  void SyncCaches() {
    for (server::Resource r :
         {server::Resource::kPods, server::Resource::kNodes, server::Resource::kEvents}) {
      std::promise<void> done;
      registry_->Sync(r, [&] { done.set_value(); });
      done.get_future().wait();
    }
  }

  std::unique_ptr<store::Store> store_;
  std::unique_ptr<server::Registry> registry_;
  std::unique_ptr<client::Client> client_;
  std::unique_ptr<client::Informer> pods_;
  std::unique_ptr<client::Informer> nodes_;
  std::vector<ObjectPtr> held_;  // keeps returned conditions alive
};

}  // namespace kt::scheduler::testing
