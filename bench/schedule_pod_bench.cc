// The cost of one scheduling decision (SchedulePod: PreFilter, Filter until enough feasible
// nodes, Score, select) against 5,000 nodes, with the default profile — the scheduler thread's
// work per pod, without binding. And the TaintToleration filter alone over 5,000 nodes, 40 % of
// them tainted, as one decision uses it (DESIGN.md target: ≤ 10 µs per pod).
//
//   build/bench/schedule_pod_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only
#include <benchmark/benchmark.h>

#include <algorithm>
#include <random>

#include "scheduler/algorithm.h"
#include "scheduler/testing/fakes.h"

namespace kt::scheduler {
namespace {

std::string NodeJson(int i, bool taints, std::mt19937& rng) {
  std::string spec = "{}";
  if (taints && rng() % 100 < 40) {
    static const char* kKeys[] = {"dedicated", "gpu", "spot", "maintenance", "team"};
    static const char* kEffects[] = {"NoSchedule", "NoExecute", "PreferNoSchedule"};
    const int n = 1 + static_cast<int>(rng() % 3);
    spec = R"({"taints":[)";
    for (int t = 0; t < n; ++t) {
      if (t > 0) spec += ",";
      spec += R"({"key":")" + std::string(kKeys[(i + t) % 5]) + R"(","value":"v)" +
              std::to_string(rng() % 2) + R"(","effect":")" + kEffects[rng() % 3] + R"("})";
    }
    spec += "]}";
  }
  const std::string name = "node-" + std::to_string(i);
  return R"({"metadata":{"name":")" + name + R"(","labels":{"kubernetes.io/hostname":")" + name +
         R"(","topology.kubernetes.io/zone":"zone-)" + std::to_string(i % 3) + R"("}},"spec":)" +
         spec + R"(,"status":{"allocatable":{"pods":"110","cpu":"4","memory":"32Gi"}}})";
}

constexpr char kBasicPod[] =
    R"({"metadata":{"name":"pod-1"},"spec":{"containers":[{"name":"pause","image":"pause",)"
    R"("ports":[{"containerPort":80}],"resources":{"requests":{"cpu":"100m","memory":"500Mi"}}}]}})";

constexpr char kTolerantPod[] =
    R"({"metadata":{"name":"pod-1"},"spec":{"containers":[{"name":"pause","image":"pause",)"
    R"("resources":{"requests":{"cpu":"100m","memory":"500Mi"}}}],"tolerations":[)"
    R"({"key":"dedicated","operator":"Equal","value":"v1","effect":"NoSchedule"},)"
    R"({"key":"spot","operator":"Exists","effect":"PreferNoSchedule"},)"
    R"({"key":"gpu","operator":"Equal","value":"v0","effect":"NoSchedule"}]}})";

struct Setup {
  testing::FakeHandle handle;
  std::unique_ptr<Framework> fw;
  PodInfoPtr pod;
  explicit Setup(bool taints, const char* pod_json) {
    std::mt19937 rng(42);
    for (int i = 1; i <= 5000; ++i) handle.cache.AddNode(testing::Node(NodeJson(i, taints, rng)));
    fw = testing::NewFramework(&handle);
    pod = NewPodInfo(testing::Pod(pod_json));
  }
};

void BM_SchedulePod(benchmark::State& state, bool taints, const char* pod_json) {
  Setup s(taints, pod_json);
  size_t next = 0;
  for (auto _ : state) {
    ++s.handle.cycle;
    ScheduleResult r = SchedulePod(*s.fw, s.handle.cache, *s.pod, &next);
    benchmark::DoNotOptimize(r.host);
  }
}
BENCHMARK_CAPTURE(BM_SchedulePod, basic_5000_nodes, false, kBasicPod);
BENCHMARK_CAPTURE(BM_SchedulePod, taints_5000_nodes, true, kTolerantPod);

// TaintToleration's Filter over every node, as if every node were evaluated: in runs of 64 nodes
// through its batch form, as SchedulePod's scan calls it.
void BM_TaintTolerationFilter(benchmark::State& state) {
  Setup s(true, kTolerantPod);
  std::unique_ptr<Plugin> p = testing::NewPlugin("TaintToleration", &s.handle);
  FilterPlugin* f = dynamic_cast<FilterPlugin*>(p.get());
  std::span<NodeInfo* const> nodes = s.handle.cache.List();
  constexpr size_t kRun = 64;
  uint8_t rejected[kRun];
  for (auto _ : state) {
    ++s.handle.cycle;
    int feasible = 0;
    for (size_t at = 0; at < nodes.size(); at += kRun) {
      const size_t len = std::min(kRun, nodes.size() - at);
      std::fill_n(rejected, len, uint8_t{0});
      f->FilterBatch(*s.pod, std::span<const NodeInfo* const>(nodes.data() + at, len),
                     std::span<uint8_t>(rejected, len));
      for (size_t j = 0; j < len; ++j) feasible += rejected[j] ? 0 : 1;
    }
    benchmark::DoNotOptimize(feasible);
  }
}
BENCHMARK(BM_TaintTolerationFilter);

}  // namespace
}  // namespace kt::scheduler

BENCHMARK_MAIN();
