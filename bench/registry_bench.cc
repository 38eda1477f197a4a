// The cost of the writes a scheduled pod causes, through the registry on the memory store as an
// in-process client makes them: the pod's create, its binding, its Scheduled event; and the
// JSON steps they are made of (parse, typed decode, encode) for one pod.
//
//   build/bench/registry_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only
#include <benchmark/benchmark.h>

#include <future>
#include <memory>
#include <string>
#include <vector>

#include "api/codec.h"
#include "api_workload.h"
#include "client/client.h"
#include "client/clock.h"
#include "client/event_recorder.h"
#include "server/object.h"
#include "server/registry.h"
#include "store/store.h"

namespace kt {
namespace {

using server::Resource;

std::string PodJson(const std::string& name) {
  return R"({"metadata":{"name":")" + name +
         R"(","namespace":"default","labels":{"app":"perf"}},"spec":{)"
         R"("containers":[{"name":"pause","image":"registry.k8s.io/pause:3.10",)"
         R"("ports":[{"containerPort":80}],"resources":{"limits":{"cpu":"100m","memory":"500Mi"},)"
         R"("requests":{"cpu":"100m","memory":"500Mi"}}}]}})";
}

std::string Name(int i) {
  std::string name("p");
  name.append(std::to_string(i));
  return name;
}

struct Server {
  std::unique_ptr<store::Store> store = store::NewMemoryStore();
  std::unique_ptr<server::Registry> registry;
  std::unique_ptr<client::Client> client;
  Server() {
    registry = std::make_unique<server::Registry>(store.get(), server::Registry::Options());
    if (!registry->Start().ok()) std::abort();
    client = client::NewInProcessClient(registry.get());
  }
  ~Server() { registry->Stop(); }
};

void BM_CreatePod(benchmark::State& state) {
  Server s;
  int i = 0;
  for (auto _ : state) {
    auto r = s.client->CreateSync(Resource::kPods, "default", PodJson(Name(i++)));
    if (!r) state.SkipWithError(r.error().message.c_str());
  }
}
BENCHMARK(BM_CreatePod);

void BM_BindPod(benchmark::State& state) {
  Server s;
  constexpr int kPods = 20000;
  for (int i = 0; i < kPods; ++i) {
    (void)s.client->CreateSync(Resource::kPods, "default", PodJson(Name(i)));
  }
  int i = 0;
  for (auto _ : state) {
    if (i == kPods) {
      state.SkipWithError("out of pods");
      break;
    }
    std::promise<bool> done;
    s.client->Bind("default", Name(i++), "", "node-1",
                   [&](client::ApiResult<void> r) { done.set_value(r.has_value()); });
    if (!done.get_future().get()) state.SkipWithError("bind failed");
  }
}
BENCHMARK(BM_BindPod)->Iterations(20000);

void BM_ScheduledEvent(benchmark::State& state) {
  Server s;
  auto clock = client::NewRealClock();
  auto recorder = client::NewEventsV1Recorder(s.client.get(), clock.get(), "default-scheduler",
                                              "default-scheduler-bench");
  api::ObjectReference base;
  base.kind.append("Pod");
  base.api_version.append("v1");
  base.namespace_.append("default");
  int i = 0;
  for (auto _ : state) {
    api::ObjectReference ref = base;
    ref.name.append("p").append(std::to_string(i));
    ref.uid.append("8e0d9c3a-").append(std::to_string(i++));
    std::string note("Successfully assigned default/");
    note.append(ref.name).append(" to node-1");
    recorder->Eventf(ref, nullptr, "Normal", "Scheduled", "Binding", std::move(note));
  }
  recorder->Stop();
}
BENCHMARK(BM_ScheduledEvent);

// An eviction's writes (the taint eviction controller's): the DisruptionTarget condition through
// pods/status with a UID precondition, then the delete with a UID precondition. Arg 0: the small
// pod of PodJson, 1: the ~2.6 KB pod of the API benchmarks (bench/api_workload.h), bound to a
// node, as the mass eviction's pods are. Arg 1: pods. The two short runs (1,000 and 1 eviction
// after the same 1,000 creates) are for counting instructions per eviction, which unlike time
// do not vary with the machine's load: bench/eviction_instructions.sh.
void BM_EvictPod(benchmark::State& state) {
  Server s;
  const int pods = static_cast<int>(state.range(1));
  const bool api_pod = state.range(0) == 1;
  std::vector<std::string> uids;
  for (int i = 0; i < pods; ++i) {
    auto r = s.client->CreateSync(
        Resource::kPods, "default",
        api_pod ? bench::ApiPodJson("default", Name(i), "node-1", i) : PodJson(Name(i)));
    if (!r) std::abort();
  }
  std::promise<void> synced;
  s.registry->Sync(Resource::kPods, [&] { synced.set_value(); });
  synced.get_future().wait();
  for (int i = 0; i < pods; ++i) {
    uids.push_back(s.registry->cache(Resource::kPods).Get("default", Name(i))->meta().uid);
  }
  int i = 0;
  for (auto _ : state) {
    if (i == pods) {
      state.SkipWithError("out of pods");
      break;
    }
    // As the controller writes it (Client::AddPodCondition).
    api::Condition target;
    target.type = "DisruptionTarget";
    target.status = "True";
    target.observed_generation = 1;
    target.last_transition_time = "2026-01-01T00:00:00Z";
    target.reason = "DeletionByTaintManager";
    target.message = "Taint manager: deleting due to NoExecute taint";
    std::promise<client::ApiResult<store::Bytes>> added;
    s.client->AddPodCondition(
        "default", Name(i), uids[i], std::move(target),
        [&](client::ApiResult<store::Bytes> r) { added.set_value(std::move(r)); });
    auto p = added.get_future().get();
    if (!p) state.SkipWithError(p.error().message.c_str());
    server::DeleteOptions opts;
    opts.precondition_uid = uids[i];
    auto d = s.client->DeleteSync(Resource::kPods, "default", Name(i++), opts);
    if (!d) state.SkipWithError(d.error().message.c_str());
  }
}
// Process CPU: the watch thread applies each write to the caches, as in the server.
BENCHMARK(BM_EvictPod)
    ->Args({0, 20000})
    ->Args({1, 20000})
    ->Iterations(20000)
    ->MeasureProcessCPUTime();
BENCHMARK(BM_EvictPod)->Args({1, 1000})->Iterations(1000)->MeasureProcessCPUTime();
BENCHMARK(BM_EvictPod)->Args({1, 1000})->Iterations(1)->MeasureProcessCPUTime();

void BM_TaintManagerEvent(benchmark::State& state) {
  Server s;
  auto clock = client::NewRealClock();
  auto recorder =
      client::NewCoreV1Recorder(s.client.get(), clock.get(), "taint-eviction-controller", "");
  api::ObjectReference base;
  base.kind.append("Pod");
  base.api_version.append("v1");
  base.namespace_.append("default");
  int i = 0;
  for (auto _ : state) {
    api::ObjectReference ref = base;
    ref.name.append("p").append(std::to_string(i++));
    std::string note("Marking for deletion Pod default/");
    note.append(ref.name);
    recorder->Eventf(ref, nullptr, "Normal", "TaintManagerEviction", "", std::move(note));
  }
  recorder->Stop();
}
BENCHMARK(BM_TaintManagerEvent);
// Fixed counts, for callgrind: the 1,001-event run minus the 1-event run, over 1,000.
BENCHMARK(BM_TaintManagerEvent)->Iterations(1001);
BENCHMARK(BM_TaintManagerEvent)->Iterations(1);

// One stored pod's JSON, as the registry holds it after a create.
std::string StoredPod() {
  Server s;
  auto r = s.client->CreateSync(Resource::kPods, "default", PodJson("p"));
  if (!r) std::abort();
  return **r;
}

void BM_ParsePod(benchmark::State& state) {
  const std::string json = StoredPod();
  for (auto _ : state) benchmark::DoNotOptimize(api::ParseTrustedJson(json));
}
BENCHMARK(BM_ParsePod);

void BM_DecodeTypedPod(benchmark::State& state) {
  const std::string json = StoredPod();
  auto doc = api::ParseTrustedJson(json);
  for (auto _ : state) benchmark::DoNotOptimize(server::DecodeTyped(Resource::kPods, *doc));
}
BENCHMARK(BM_DecodeTypedPod);

void BM_EncodePod(benchmark::State& state) {
  const std::string json = StoredPod();
  auto doc = api::ParseTrustedJson(json);
  for (auto _ : state) benchmark::DoNotOptimize(server::EncodeForStorage(*doc));
}
BENCHMARK(BM_EncodePod);

}  // namespace
}  // namespace kt

BENCHMARK_MAIN();
