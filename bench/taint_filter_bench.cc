// Taint/toleration matching and the scheduler-style filter of one pod against 5,000 nodes.
//
//   build/bench/taint_filter_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only
//
// Target (DESIGN.md): one pod with 3 tolerations against 5,000 nodes, 40 % of them carrying 1-3
// taints, in <= 50 us.
#include <random>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "core/taint.h"

namespace {

using kt::Taint;
using kt::Toleration;

// A realistic taint vocabulary: well-known condition taints, dedicated/special-hardware taints.
std::vector<Taint> TaintVocabulary() {
  return {
      {"node.kubernetes.io/not-ready", "", "NoExecute", std::nullopt},
      {"node.kubernetes.io/unreachable", "", "NoExecute", std::nullopt},
      {"node.kubernetes.io/unschedulable", "", "NoSchedule", std::nullopt},
      {"node.kubernetes.io/memory-pressure", "", "NoSchedule", std::nullopt},
      {"node.kubernetes.io/disk-pressure", "", "NoSchedule", std::nullopt},
      {"dedicated", "devs", "NoSchedule", std::nullopt},
      {"dedicated", "ops", "NoSchedule", std::nullopt},
      {"special", "true", "NoSchedule", std::nullopt},
      {"special", "true", "PreferNoSchedule", std::nullopt},
      {"nvidia.com/gpu", "present", "NoSchedule", std::nullopt},
      {"node-role.kubernetes.io/control-plane", "", "NoSchedule", std::nullopt},
      {"spot", "true", "PreferNoSchedule", std::nullopt},
  };
}

// 5,000 nodes; 40 % carry 1-3 distinct taints drawn from the vocabulary.
std::vector<std::vector<Taint>> MakeNodes(int count) {
  std::mt19937 rng(42);
  const std::vector<Taint> vocab = TaintVocabulary();
  std::vector<std::vector<Taint>> nodes(count);
  for (auto& taints : nodes) {
    if (rng() % 100 >= 40) continue;
    int n = 1 + static_cast<int>(rng() % 3);
    while (static_cast<int>(taints.size()) < n) {
      const Taint& t = vocab[rng() % vocab.size()];
      bool dup = false;
      for (const Taint& have : taints) dup = dup || kt::MatchTaint(have, t);
      if (!dup) taints.push_back(t);
    }
  }
  return nodes;
}

// The tolerations most pods carry (DefaultTolerationSeconds) plus one dedicated toleration.
std::vector<Toleration> PodTolerations() {
  return {
      {"node.kubernetes.io/not-ready", "Exists", "", "NoExecute", 300},
      {"node.kubernetes.io/unreachable", "Exists", "", "NoExecute", 300},
      {"dedicated", "Equal", "devs", "NoSchedule", std::nullopt},
  };
}

void BM_ToleratesTaint(benchmark::State& state) {
  const Toleration tol{"key1", "Equal", "value1", "NoSchedule", std::nullopt};
  const Taint taint{"key1", "value1", "NoSchedule", std::nullopt};
  for (auto _ : state) benchmark::DoNotOptimize(kt::ToleratesTaint(tol, taint, false));
}
BENCHMARK(BM_ToleratesTaint);

void BM_ToleratesTaintMismatchedEffect(benchmark::State& state) {
  const Toleration tol{"key1", "Equal", "value1", "NoExecute", std::nullopt};
  const Taint taint{"key1", "value1", "NoSchedule", std::nullopt};
  for (auto _ : state) benchmark::DoNotOptimize(kt::ToleratesTaint(tol, taint, false));
}
BENCHMARK(BM_ToleratesTaintMismatchedEffect);

void BM_ToleratesTaintNumericGt(benchmark::State& state) {
  const Toleration tol{"node.kubernetes.io/sla", "Gt", "750", "NoSchedule", std::nullopt};
  const Taint taint{"node.kubernetes.io/sla", "950", "NoSchedule", std::nullopt};
  for (auto _ : state) benchmark::DoNotOptimize(kt::ToleratesTaint(tol, taint, true));
}
BENCHMARK(BM_ToleratesTaintNumericGt);

void BM_GetMatchingTolerations(benchmark::State& state) {
  const std::vector<Taint> taints = {
      {"node.kubernetes.io/not-ready", "", "NoExecute", std::nullopt},
      {"node.kubernetes.io/unreachable", "", "NoExecute", std::nullopt}};
  const std::vector<Toleration> tols = PodTolerations();
  for (auto _ : state) benchmark::DoNotOptimize(kt::GetMatchingTolerations(taints, tols, false));
}
BENCHMARK(BM_GetMatchingTolerations);

// The scheduler's TaintToleration Filter for one pod over every node.
void BM_FilterOnePod5000Nodes(benchmark::State& state) {
  const auto nodes = MakeNodes(5000);
  const std::vector<Toleration> tols = PodTolerations();
  int64_t feasible = 0;
  for (auto _ : state) {
    feasible = 0;
    for (const auto& taints : nodes) {
      feasible += kt::FindMatchingUntoleratedTaint(
                      taints, tols, kt::TaintFilter::kNoScheduleOrNoExecute, false) == nullptr;
    }
    benchmark::DoNotOptimize(feasible);
  }
  state.counters["feasible_nodes"] = static_cast<double>(feasible);
  state.counters["ns_per_node"] = benchmark::Counter(
      5000.0 * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert, benchmark::Counter::kIs1000);
}
BENCHMARK(BM_FilterOnePod5000Nodes)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
