// scheduler_perf: the scheduler's throughput in process, modeled on upstream scheduler_perf's
// SchedulingBasic (5,000 nodes, 1,000 initial pods, 10,000 measured pods) and a taint-heavy
// variant, on kubetaint's real registry, watch caches, informers and scheduler threads.
//
//   scheduler_perf [--workload basic|taints] [--nodes 5000] [--init-pods 1000] [--pods 10000]
//                  [--store memory|sqlite] [--runs 3] [--memory-pods 0] [--cpu 1]
//                  [--heap-pages auto|4k|2m]
//
// Per run: a fresh store and registry; nodes created; the initial pods created and scheduled;
// then the measured pods created as fast as one creator thread can (through the registry, as
// any client), while the scheduler binds them. Throughput is measured pods / (last binding -
// first create); latency is each pod's create call to its binding seen in the watch cache.
// Medians over the runs are printed.
//
// KT_PERF_CTL=FIFO: `perf record --control fifo:FIFO -D -1` records the measured windows only
// (from run --perf-from-run N on, 1 by default).
//
// --cpu 1: also print the CPU time and the context switches of each thread (by name) while the
// measured pods were created and bound.
//
// --heap-pages: the page size of the heap's new memory, chosen as `kubetaint serve` chooses it
// (src/cli/heap_pages.h); printed first.
//
// --memory-pods N: instead, bind N pods (spread over the nodes, already bound) and report the
// heap the scheduler's cache and informers take for them (malloc's in-use bytes before and after
// the scheduler syncs).
//
// Workloads: bench/sched_workload.h (upstream's node and pod templates; "taints" adds taints to
// 40 % of the nodes, tolerations to every pod and a zone affinity to one pod in ten).
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <future>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "admission/testing.h"
#include "api/codec.h"
#include "cli/heap_pages.h"
#include "client/client.h"
#include "client/informer.h"
#include "inprocess.h"
#include "sched_workload.h"
#include "scheduler/scheduler.h"
#include "server/registry.h"
#include "store/sqlite_store.h"
#include "store/store.h"

namespace {

using namespace kt;
using SteadyClock = std::chrono::steady_clock;
using bench::CpuDelta;
using bench::HeapInUse;
using bench::Median;
using bench::Percentile;
using bench::ThreadCpu;
using server::Resource;

std::string NodeJson(int i, bool taints, std::mt19937& rng) {
  return bench::SchedNodeJson("node-" + std::to_string(i), i, taints, rng);
}

std::string PodJson(const std::string& name, bool taints, std::mt19937& rng,
                    const std::string& node = "") {
  return bench::SchedPodJson(name, "default", taints, rng, node);
}

// Records when each pod is first seen bound, from a watch on the pods cache.
class BindWatch : public server::WatchSink {
 public:
  bool OnEvent(server::WatchEventType type, const server::ObjectPtr& o) override {
    if (type == server::WatchEventType::kDeleted) return true;
    const api::Pod* p = o->As<api::Pod>();
    if (p == nullptr || p->spec.node_name.empty()) return true;
    const auto now = SteadyClock::now();
    std::lock_guard<std::mutex> lock(mu);
    // Only the awaited count wakes the waiter: a wake-up per binding would cost the scheduler's
    // threads a context switch each on a 2-core machine.
    if (bound.emplace(p->meta.name, now).second && bound.size() == want) cv.notify_all();
    return true;
  }
  void OnProgress(store::Revision) override {}
  void OnEnd(Status) override {}

  bool WaitFor(size_t n, std::chrono::seconds limit) {
    std::unique_lock<std::mutex> lock(mu);
    want = n;
    return cv.wait_for(lock, limit, [&] { return bound.size() >= n; });
  }

  std::mutex mu;
  size_t want = 0;
  std::condition_variable cv;
  std::unordered_map<std::string, SteadyClock::time_point> bound;
};

struct Run {
  double pods_per_s = 0;
  double p50_ms = 0;
  double p99_ms = 0;
  double create_per_s = 0;
  uint64_t attempts = 0;
};

struct Cluster {
  std::string dir;
  std::unique_ptr<store::Store> store;
  std::unique_ptr<server::Registry> registry;
  std::unique_ptr<client::Clock> clock;
  std::unique_ptr<client::Client> client;
  std::unique_ptr<client::Informer> pods;
  std::unique_ptr<client::Informer> nodes;
  std::unique_ptr<scheduler::Scheduler> sched;

  ~Cluster() {
    if (sched) sched->Stop();
    if (pods) pods->Stop();
    if (nodes) nodes->Stop();
    if (registry) registry->Stop();
    registry.reset();
    store.reset();
    if (!dir.empty()) std::filesystem::remove_all(dir);
  }
};

std::unique_ptr<Cluster> NewCluster(const std::string& store_kind) {
  auto c = std::make_unique<Cluster>();
  if (store_kind == "sqlite") {
    c->dir = (std::filesystem::temp_directory_path() /
              ("kubetaint-sched-perf-" + std::to_string(::getpid())))
                 .string();
    std::filesystem::remove_all(c->dir);
    std::filesystem::create_directories(c->dir);
    store::SqliteOptions o;
    o.path = c->dir + "/kubetaint.db";
    auto s = store::OpenSqliteStore(o);
    if (!s) {
      std::fprintf(stderr, "sqlite: %s\n", s.error().message().c_str());
      std::exit(1);
    }
    c->store = std::move(*s);
  } else {
    c->store = store::NewMemoryStore();
  }
  c->clock = client::NewRealClock();
  server::Registry::Options ro;
  // The nodes here have no kubelet and no node lifecycle controller lifts TaintNodesByCondition's
  // not-ready taint: admission runs without that plugin.
  ro.admission = admission::testing::ChainForNodesWithoutKubelets();
  c->registry = std::make_unique<server::Registry>(c->store.get(), ro);
  if (!c->registry->Start().ok()) std::exit(1);
  c->client = client::NewInProcessClient(c->registry.get());
  return c;
}

void StartScheduler(Cluster& c) {
  server::ObjectFilter f;
  f.fields = *api::fields::ParseSelector("status.phase!=Succeeded,status.phase!=Failed", "Pod");
  c.pods = std::make_unique<client::Informer>(
      client::NewCacheListerWatcher(&c.registry->cache(Resource::kPods), f),
      client::Informer::Options::Manual(c.clock.get(), "pods"));
  c.nodes = std::make_unique<client::Informer>(
      client::NewCacheListerWatcher(&c.registry->cache(Resource::kNodes)),
      client::Informer::Options::Manual(c.clock.get(), "nodes"));
  scheduler::Scheduler::Options so;
  so.clock = c.clock.get();
  so.client = c.client.get();
  client::Informer* pods = c.pods.get();
  so.get_pod = [pods](std::string_view ns, std::string_view name) { return pods->Get(ns, name); };
  auto s = scheduler::Scheduler::New(std::move(so));
  if (!s) std::exit(1);
  c.sched = std::move(*s);
  c.sched->AddEventHandlers(c.pods.get(), c.nodes.get());
  c.pods->Start();
  c.nodes->Start();
  client::WaitForCacheSync({c.pods.get(), c.nodes.get()},
                           SteadyClock::now() + std::chrono::seconds(120));
  c.sched->Start();
}

Run RunOnce(const bench::Flags& flags, int run, bench::PerfControl& perf) {
  const int nodes = static_cast<int>(flags.Int("nodes", 5000));
  const int init = static_cast<int>(flags.Int("init-pods", 1000));
  const int pods = static_cast<int>(flags.Int("pods", 10000));
  const bool taints = flags.Get("workload", "basic") == "taints";
  std::mt19937 rng(42 + run);
  auto c = NewCluster(flags.Get("store", "memory"));
  for (int i = 1; i <= nodes; ++i) {
    auto r = c->client->CreateSync(Resource::kNodes, "", NodeJson(i, taints, rng));
    if (!r) {
      std::fprintf(stderr, "node: %s\n", r.error().message.c_str());
      std::exit(1);
    }
  }
  StartScheduler(*c);
  auto watch = std::make_shared<BindWatch>();
  // Room for every pod up front: the observer does not rehash on the watch thread mid-run.
  watch->bound.reserve(static_cast<size_t>(init + pods));
  auto handle = c->registry->cache(Resource::kPods)
                    .StartWatch(c->registry->cache(Resource::kPods).revision(),
                                server::ObjectFilter(), watch);
  if (!handle) std::exit(1);

  std::vector<SteadyClock::time_point> created;
  std::vector<std::string> bodies;
  for (int i = 0; i < init; ++i)
    bodies.push_back(PodJson("init-" + std::to_string(i), taints, rng));
  bench::CreatePods(*c->client, "default", bodies, &created);
  if (!watch->WaitFor(static_cast<size_t>(init), std::chrono::seconds(300))) {
    std::fprintf(stderr, "initial pods not all bound (%zu)\n", watch->bound.size());
  }
  bodies.clear();
  for (int i = 0; i < pods; ++i) bodies.push_back(PodJson("pod-" + std::to_string(i), taints, rng));
  const uint64_t attempts_before = c->sched->AttemptCount();
  const auto cpu_before = ThreadCpu();
  const auto switches_before = bench::ThreadSwitches();
  if (run + 1 >= flags.Int("perf-from-run", 1)) perf.Enable();
  const auto start = SteadyClock::now();
  bench::CreatePods(*c->client, "default", bodies, &created);
  const auto created_all = SteadyClock::now();
  // In the taint workload some pods tolerate no node at all; wait for the others.
  size_t expected = static_cast<size_t>(init + pods);
  const bool complete = watch->WaitFor(expected, std::chrono::seconds(taints ? 20 : 300));
  (void)complete;
  perf.Disable();
  const auto cpu_after = ThreadCpu();
  const auto switches_after = bench::ThreadSwitches();
  Run out;
  std::vector<double> lat;
  SteadyClock::time_point last = start;
  {
    std::lock_guard<std::mutex> lock(watch->mu);
    for (int i = 0; i < pods; ++i) {
      auto it = watch->bound.find("pod-" + std::to_string(i));
      if (it == watch->bound.end()) continue;
      lat.push_back(std::chrono::duration<double, std::milli>(it->second - created[i]).count());
      last = std::max(last, it->second);
    }
  }
  const double secs = std::chrono::duration<double>(last - start).count();
  out.pods_per_s = static_cast<double>(lat.size()) / secs;
  out.create_per_s = pods / std::chrono::duration<double>(created_all - start).count();
  out.p50_ms = Percentile(lat, 0.5);
  out.p99_ms = Percentile(lat, 0.99);
  out.attempts = c->sched->AttemptCount() - attempts_before;
  std::printf(
      "run %d: %zu of %d pods bound in %.3f s: %.0f pods/s (creates %.0f/s), latency p50 %.1f ms "
      "p99 %.1f ms, %llu attempts\n",
      run + 1, lat.size(), pods, secs, out.pods_per_s, out.create_per_s, out.p50_ms, out.p99_ms,
      static_cast<unsigned long long>(out.attempts));
  if (flags.Int("cpu", 0) != 0) {
    std::printf("  cpu by thread: %s\n  context switches by thread: %s\n",
                CpuDelta(cpu_before, cpu_after).c_str(),
                bench::SwitchDelta(switches_before, switches_after).c_str());
  }
  std::fflush(stdout);
  handle->reset();
  return out;
}

void MeasureMemory(const bench::Flags& flags) {
  const int nodes = static_cast<int>(flags.Int("nodes", 5000));
  const int pods = static_cast<int>(flags.Int("memory-pods", 150000));
  std::mt19937 rng(7);
  auto c = NewCluster("memory");
  for (int i = 1; i <= nodes; ++i)
    (void)c->client->CreateSync(Resource::kNodes, "", NodeJson(i, false, rng));
  std::vector<std::string> bodies;
  for (int i = 0; i < pods; ++i) {
    bodies.push_back(
        PodJson("pod-" + std::to_string(i), false, rng, "node-" + std::to_string(i % nodes + 1)));
  }
  std::vector<SteadyClock::time_point> created;
  bench::CreatePods(*c->client, "default", bodies, &created);
  bodies.clear();
  bodies.shrink_to_fit();
  malloc_trim(0);
  const size_t before = HeapInUse();
  StartScheduler(*c);
  // The scheduler's cache holds every bound pod once it has drained the informer's adds.
  for (int i = 0; i < 600; ++i) {
    std::promise<size_t> n;
    c->sched->Post([&] { n.set_value(c->sched->cache().NumPods()); });
    if (n.get_future().get() >= static_cast<size_t>(pods)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  malloc_trim(0);
  const size_t after = HeapInUse();
  std::printf(
      "memory: %d nodes, %d bound pods: scheduler cache + informers %.1f MB (%.0f bytes per pod)\n",
      nodes, pods, static_cast<double>(after - before) / 1e6,
      static_cast<double>(after - before) / pods);
}

}  // namespace

int main(int argc, char** argv) {
  bench::TuneMalloc();
  const bench::Flags flags = bench::Flags::Parse(argc, argv);
#ifdef KUBETAINT_JEMALLOC
  // As `kubetaint serve` (--heap-pages), before the clusters' memory grows.
  const std::string heap_pages = flags.Get("heap-pages", "auto");
  if (std::string error = kt::cli::HeapPagesModeError(heap_pages); !error.empty()) {
    std::fprintf(stderr, "scheduler_perf: %s\n", error.c_str());
    return 2;
  }
  std::printf("%s\n", kt::cli::ChooseHeapPages(heap_pages).c_str());
#endif
  if (flags.Int("memory-pods", 0) > 0) {
    MeasureMemory(flags);
    return 0;
  }
  const int runs = static_cast<int>(flags.Int("runs", 3));
  bench::PerfControl perf;
  std::vector<double> tput, p50, p99, creates;
  for (int r = 0; r < runs; ++r) {
    Run x = RunOnce(flags, r, perf);
    tput.push_back(x.pods_per_s);
    p50.push_back(x.p50_ms);
    p99.push_back(x.p99_ms);
    creates.push_back(x.create_per_s);
  }
  std::printf(
      "median of %d (%s, %s store, %ld nodes, %ld measured pods): %.0f pods/s, latency p50 %.1f "
      "ms p99 %.1f ms, creates %.0f/s\n",
      runs, flags.Get("workload", "basic").c_str(), flags.Get("store", "memory").c_str(),
      flags.Int("nodes", 5000), flags.Int("pods", 10000), Median(tput), Median(p50), Median(p99),
      Median(creates));
  return 0;
}
