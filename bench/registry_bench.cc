// The cost of the writes a scheduled pod causes, through the registry on the memory store as an
// in-process client makes them: the pod's create, its binding, its Scheduled event; and the
// JSON steps they are made of (parse, typed decode, encode) for one pod.
//
//   build/bench/registry_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only
#include <benchmark/benchmark.h>

#include <future>
#include <memory>
#include <string>

#include "api/codec.h"
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
