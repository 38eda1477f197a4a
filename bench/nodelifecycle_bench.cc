// One health pass of the node lifecycle controller (monitorNodeHealth) over 5,000 Ready nodes in
// 3 zones, each with its Lease, in process on the memory store; the controller driven by hand
// on a simulated clock, its events dropped:
//   - Steady: nothing changed since the last pass (every node checked, nothing written);
//   - LeasesRenewed: every node renewed its Lease since the last pass (each renewTime parsed and
//     compared, every probe time moved on), as when the pass comes after the kubelets' 10 s
//     renewals.
//
//   build/bench/nodelifecycle_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "controllers/nodelifecycle/controller.h"
#include "controllers/testing/api.h"
#include "core/time.h"

namespace kt {
namespace {

using controllers::nodelifecycle::Controller;
using controllers::testing::TestApi;
using server::Resource;

constexpr int kNodes = 5000;

class NullRecorder : public client::EventRecorder {
 public:
  void Eventf(const client::ObjectRef&, const client::ObjectRef*, std::string_view,
              std::string_view, std::string_view, std::string) override {}
  void Stop() override {}
};

std::string Name(int i) { return "node-" + std::to_string(i); }

struct Cluster {
  TestApi api;
  std::unique_ptr<Controller> controller;

  Cluster() {
    const std::string now = FormatRfc3339(api.clock.Now());
    const std::string micro = FormatRfc3339Micro(api.clock.Now());
    for (int i = 0; i < kNodes; ++i) {
      const std::string name = Name(i);
      const std::string zone = "zone-" + std::to_string(i % 3);
      TestApi::Must(api.client().CreateSync(
          Resource::kNodes, "",
          R"({"metadata":{"name":")" + name + R"(","labels":{"kubernetes.io/hostname":")" + name +
              R"(","topology.kubernetes.io/region":"r","topology.kubernetes.io/zone":")" + zone +
              R"("}},"status":{"conditions":[)"
              R"({"type":"MemoryPressure","status":"False","reason":"KubeletHasSufficientMemory","message":"kubelet has sufficient memory available","lastHeartbeatTime":")" +
              now + R"(","lastTransitionTime":")" + now +
              R"("},{"type":"Ready","status":"True","reason":"KubeletReady","message":"kubelet is posting ready status","lastHeartbeatTime":")" +
              now + R"(","lastTransitionTime":")" + now + R"("}]}})"));
      TestApi::Must(api.client().CreateSync(
          Resource::kLeases, "kube-node-lease",
          R"({"metadata":{"name":")" + name +
              R"(","namespace":"kube-node-lease"},"spec":{"holderIdentity":")" + name +
              R"(","leaseDurationSeconds":40,"renewTime":")" + micro + R"("}})"));
    }
    Controller::Options o;
    o.clock = &api.clock;
    o.client = &api.client();
    o.nodes = api.ListerWatcher(Resource::kNodes);
    o.pods = api.ListerWatcher(Resource::kPods);
    server::ObjectFilter leases;
    leases.namespace_ = "kube-node-lease";
    o.leases = api.ListerWatcher(Resource::kLeases, leases);
    o.manual = true;
    o.recorder = std::make_unique<NullRecorder>();
    // Passes run only when the benchmark asks.
    o.node_monitor_period = std::chrono::hours(24 * 365);
    controller = std::make_unique<Controller>(std::move(o));
    controller->Start();
    Settle();  // the first pass: every node registered
  }
  ~Cluster() { controller->Stop(); }

  void Settle() {
    controllers::testing::Settle(*controller, [this] { api.SyncCaches(); });
  }
  void RenewLeases() {
    api.clock.Advance(std::chrono::seconds(10));
    const std::string patch =
        R"({"spec":{"renewTime":")" + FormatRfc3339Micro(api.clock.Now()) + "\"}}";
    for (int i = 0; i < kNodes; ++i) {
      TestApi::Must(api.client().PatchSync(Resource::kLeases, "kube-node-lease", Name(i),
                                           server::Subresource::kNone, api::PatchType::kMergePatch,
                                           patch));
    }
    Settle();  // the informers have every renewal
  }
};

Cluster& Shared() {
  static Cluster* cluster = new Cluster();
  return *cluster;
}

void BM_MonitorNodeHealth_Steady(benchmark::State& state) {
  Cluster& c = Shared();
  for (auto _ : state) c.controller->MonitorNodeHealth();
  state.counters["nodes"] = kNodes;
}
BENCHMARK(BM_MonitorNodeHealth_Steady)->Unit(benchmark::kMillisecond);

void BM_MonitorNodeHealth_LeasesRenewed(benchmark::State& state) {
  Cluster& c = Shared();
  for (auto _ : state) {
    state.PauseTiming();
    c.RenewLeases();
    state.ResumeTiming();
    c.controller->MonitorNodeHealth();
  }
  state.counters["nodes"] = kNodes;
}
BENCHMARK(BM_MonitorNodeHealth_LeasesRenewed)->Unit(benchmark::kMillisecond)->Iterations(10);

}  // namespace
}  // namespace kt

BENCHMARK_MAIN();
