// eviction_timers: the taint eviction controller's pending toleration countdowns, in process
// (DESIGN.md "Targets": 150,000 pending toleration timers in <= 32 MB, each fires within 10 ms),
// on kubetaint's real registry (memory store), watch caches, informers and controller.
//
//   eviction_timers [--nodes 5000] [--pods 150000] [--min-seconds 5] [--max-seconds 20]
//                   [--runs 3] [--only memory|timers] [--events 1] [--taint-over-ms 0]
//
// Pods pod-0..pod-(P-1) in "default"; pod i is bound at creation to node-((i % N) + 1) and
// tolerates the taint bench/evict=x:NoExecute for S(i) seconds, S(i) = min + (i / N + i % N) %
// (max - min + 1): each value of [min, max] has as many pods (+-1 node's worth). Per run:
//
//  (a) memory: the controller in manual mode on a simulated clock (time stands still, so no
//      countdown can run out). malloc's in-use bytes (mallinfo2, every arena) are taken
//        0. with the registry holding the nodes and pods, before the controller exists;
//        1. after the controller started and its informers delivered every node and pod
//           (the informers' share, and the controller's empty tables);
//        2. after every node was tainted (one PATCH each), before the controller handled it
//           (the new node versions in the watch cache and its event log, the informers' queues);
//        3. after the controller handled the taints, when PendingCount() == P: 3 - 2 is what the
//           P pending countdowns take.
//  (b) timers: a fresh cluster; the controller on its own thread on the real clock, with its
//      events (--events 0: none). Every node tainted, one PATCH after the other as fast as they
//      go (--taint-over-ms W: spread evenly over W ms, so that the pods of one S(i) fall due
//      over W ms rather than all in one instant). Each pod's lateness = the time its deletion
//      reached the pods watch cache (a watch on it, as scheduler_perf's BindWatch) - (the time
//      its node's taint reached the nodes watch cache + S(i)). The controller's informer gets
//      that same cache event and the controller counts S(i) from when it handles it, no earlier,
//      so this lateness is an upper bound of the true one. (The PATCH's return on the tainting
//      thread is a worse reference: on a loaded machine that thread can wake after the
//      controller has seen the taint; the gap is printed.) A Client wrapped around the
//      in-process one also records, per pod, when the controller started the eviction (its live
//      GET of the pod), wrote the DisruptionTarget condition and sent the DELETE, so the
//      lateness splits into the countdown firing and the eviction's writes; a Clock wrapped
//      around the real one records how late each of the controller's timer callbacks ran; and
//      the controller's own on_fire hook gives, for each countdown that ran out, its exact
//      deadline and when its eviction started: the "fires within 10 ms" figure.
//
// With the defaults every node is tainted within a fraction of a second, so the ~9,400 pods of
// each tolerationSeconds value fall due in the same instant, once a second: their lateness is
// then bounded by how fast evictions go, not by the timers. To see the timers at a rate the
// evictions sustain, spread the deadlines:
//   eviction_timers --only timers --min-seconds 5 --max-seconds 124 --taint-over-ms 1000
// (150,000 deadlines spread evenly over 120 s: 1,250 a second; about 2.5 minutes a run).
//
// Medians over the runs are printed. Everything is bounded: each wait has a deadline.
#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <future>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "client/client.h"
#include "client/clock.h"
#include "client/event_recorder.h"
#include "client/informer.h"
#include "controllers/tainteviction/controller.h"
#include "inprocess.h"
#include "sched_workload.h"
#include "server/registry.h"
#include "store/store.h"

namespace {

using namespace kt;
using SteadyClock = std::chrono::steady_clock;
using server::Resource;
using TaintController = controllers::tainteviction::Controller;

constexpr char kTaintPatch[] =
    R"({"spec":{"taints":[{"key":"bench/evict","value":"x","effect":"NoExecute"}]}})";

int64_t SteadyNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(SteadyClock::now().time_since_epoch())
      .count();
}

// The pod's number in "pod-N", or -1.
long PodIndex(std::string_view name) {
  if (!name.starts_with("pod-")) return -1;
  return std::atol(std::string(name.substr(4)).c_str());
}

struct Shape {
  long nodes = 5000;
  long pods = 150000;
  long min_s = 5;
  long max_s = 20;
  long NodeOf(long i) const { return i % nodes + 1; }
  // Node n's pods take consecutive values from an offset of n: every value has as many pods.
  long SecondsOf(long i) const { return min_s + (i / nodes + i % nodes) % (max_s - min_s + 1); }
};

std::string PodJson(long i, const Shape& shape) {
  std::string p = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"pod-)";
  p += std::to_string(i);
  p += R"(","namespace":"default","labels":{"app":"timers"}},"spec":{"nodeName":"node-)";
  p += std::to_string(shape.NodeOf(i));
  p += R"(","containers":[{"name":"pause","image":"registry.k8s.io/pause:3.10",)"
       R"("resources":{"requests":{"cpu":"100m","memory":"500Mi"}}}],)"
       R"("tolerations":[{"key":"bench/evict","operator":"Exists","effect":"NoExecute",)"
       R"("tolerationSeconds":)";
  p += std::to_string(shape.SecondsOf(i));
  p += "}]}}";
  return p;
}

// Per-pod times (steady clock, ns; 0 = not yet), written from any thread.
class PodTimes {
 public:
  explicit PodTimes(long pods) : t_(static_cast<size_t>(pods)) {}
  // Keeps the first time only.
  bool Set(long i, int64_t ns) {
    if (i < 0 || static_cast<size_t>(i) >= t_.size()) return false;
    int64_t zero = 0;
    return t_[static_cast<size_t>(i)].compare_exchange_strong(zero, ns, std::memory_order_relaxed);
  }
  int64_t Get(long i) const { return t_[static_cast<size_t>(i)].load(std::memory_order_relaxed); }

 private:
  std::vector<std::atomic<int64_t>> t_;
};

// Wraps the in-process Client: records when the controller reads a pod live (the start of an
// eviction), patches its status (DisruptionTarget) and sends its DELETE.
class RecordingClient : public client::Client {
 public:
  RecordingClient(client::Client* inner, long pods)
      : inner_(inner), started(pods), status_patched(pods), delete_sent(pods) {}

  void Create(Resource r, std::string ns, std::string body, client::WriteDone done) override {
    inner_->Create(r, std::move(ns), std::move(body), std::move(done));
  }
  void Create(Resource r, std::string ns, rapidjson::Document body,
              client::WriteDone done) override {
    inner_->Create(r, std::move(ns), std::move(body), std::move(done));
  }
  void CreateEvent(api::Event event, client::WriteDone done) override {
    inner_->CreateEvent(std::move(event), std::move(done));
  }
  void Update(Resource r, std::string ns, std::string name, server::Subresource sub,
              std::string body, client::WriteDone done) override {
    inner_->Update(r, std::move(ns), std::move(name), sub, std::move(body), std::move(done));
  }
  void Patch(Resource r, std::string ns, std::string name, server::Subresource sub,
             api::PatchType type, std::string patch, client::WriteDone done) override {
    if (r == Resource::kPods && sub == server::Subresource::kStatus) {
      status_patched.Set(PodIndex(name), SteadyNs());
    }
    inner_->Patch(r, std::move(ns), std::move(name), sub, type, std::move(patch), std::move(done));
  }
  void Delete(Resource r, std::string ns, std::string name, server::DeleteOptions options,
              client::WriteDone done) override {
    if (r == Resource::kPods) delete_sent.Set(PodIndex(name), SteadyNs());
    inner_->Delete(r, std::move(ns), std::move(name), std::move(options), std::move(done));
  }
  void Get(Resource r, std::string ns, std::string name, client::GetDone done) override {
    if (r == Resource::kPods) started.Set(PodIndex(name), SteadyNs());
    inner_->Get(r, std::move(ns), std::move(name), std::move(done));
  }
  void Bind(std::string ns, std::string name, std::string uid, std::string node,
            client::Done done) override {
    inner_->Bind(std::move(ns), std::move(name), std::move(uid), std::move(node), std::move(done));
  }

 private:
  client::Client* inner_;

 public:
  PodTimes started, status_patched, delete_sent;
};

// Wraps the real clock: records how late each timer callback starts against the time it was set
// for (the controller arms one timer, for its earliest deadline).
class RecordingClock : public client::Clock {
 public:
  explicit RecordingClock(client::Clock* inner) : inner_(inner) {}
  client::Time Now() const override { return inner_->Now(); }
  client::TimerId AfterFunc(client::Duration delay, std::function<void()> fn) override {
    return At(inner_->Now() + delay, std::move(fn));
  }
  client::TimerId At(client::Time when, std::function<void()> fn) override {
    return inner_->At(when, [this, when, fn = std::move(fn)] {
      const double late_ms =
          std::chrono::duration<double, std::milli>(inner_->Now() - when).count();
      {
        std::lock_guard<std::mutex> lock(mu_);
        late_ms_.push_back(late_ms);
      }
      fn();
    });
  }
  bool Cancel(client::TimerId id) override { return inner_->Cancel(id); }

  std::vector<double> Lateness() {
    std::lock_guard<std::mutex> lock(mu_);
    return late_ms_;
  }

 private:
  client::Clock* inner_;
  std::mutex mu_;
  std::vector<double> late_ms_;  // guarded by mu_
};

// Records when each pod's deletion reaches the pods watch cache. The pods are bound to nodes
// without kubelets and have a grace period, so the controller's delete is the MODIFIED event
// that sets their deletionTimestamp (nothing ends the deletion); a pod with none would go in a
// DELETED event. The first of either counts.
class DeleteWatch : public server::WatchSink {
 public:
  explicit DeleteWatch(long pods) : deleted(pods) {}
  bool OnEvent(server::WatchEventType type, const server::ObjectPtr& o) override {
    const bool deletion_started =
        type == server::WatchEventType::kModified && o->meta().deletion_timestamp;
    if (type != server::WatchEventType::kDeleted && !deletion_started) return true;
    if (deleted.Set(PodIndex(o->meta().name), SteadyNs())) {
      if (count.fetch_add(1, std::memory_order_relaxed) + 1 >= want.load()) {
        std::lock_guard<std::mutex> lock(mu);
        cv.notify_all();
      }
    }
    return true;
  }
  void OnProgress(store::Revision) override {}
  void OnEnd(Status) override {}

  bool WaitFor(long n, SteadyClock::time_point deadline) {
    want.store(n);
    std::unique_lock<std::mutex> lock(mu);
    return cv.wait_until(lock, deadline, [&] { return count.load() >= n; });
  }

  PodTimes deleted;
  std::atomic<long> count{0};
  std::atomic<long> want{0};
  std::mutex mu;
  std::condition_variable cv;
};

// Records when each node's taint reaches the nodes watch cache: the controller's informer is fed
// from the same cache event, so the controller sees the taint no earlier than this.
class TaintWatch : public server::WatchSink {
 public:
  explicit TaintWatch(long nodes) : tainted(nodes + 1) {}
  bool OnEvent(server::WatchEventType type, const server::ObjectPtr& o) override {
    if (type != server::WatchEventType::kModified) return true;
    const api::Node* n = o->As<api::Node>();
    if (n == nullptr) return true;
    for (const Taint& t : n->spec.taints) {
      if (t.key == "bench/evict") {
        const std::string& name = o->meta().name;
        if (name.starts_with("node-")) tainted.Set(std::atol(name.c_str() + 5), SteadyNs());
        break;
      }
    }
    return true;
  }
  void OnProgress(store::Revision) override {}
  void OnEnd(Status) override {}

  PodTimes tainted;  // by node number
};

// Drops every event (--events 0).
class NullRecorder : public client::EventRecorder {
 public:
  void Eventf(const client::ObjectRef&, const client::ObjectRef*, std::string_view,
              std::string_view, std::string_view, std::string) override {}
  void Stop() override {}
};

struct Cluster {
  std::unique_ptr<store::Store> store;
  std::unique_ptr<server::Registry> registry;
  std::unique_ptr<client::Client> client;
  ~Cluster() {
    if (registry) registry->Stop();
    registry.reset();
    store.reset();
  }
};

std::unique_ptr<Cluster> NewCluster(const Shape& shape) {
  auto c = std::make_unique<Cluster>();
  c->store = store::NewMemoryStore();
  c->registry = std::make_unique<server::Registry>(c->store.get(), server::Registry::Options());
  if (!c->registry->Start().ok()) std::exit(1);
  c->client = client::NewInProcessClient(c->registry.get());
  std::mt19937 rng(7);
  for (long n = 1; n <= shape.nodes; ++n) {
    auto r = c->client->CreateSync(
        Resource::kNodes, "",
        bench::SchedNodeJson("node-" + std::to_string(n), static_cast<int>(n), false, rng));
    if (!r) {
      std::fprintf(stderr, "node: %s\n", r.error().message.c_str());
      std::exit(1);
    }
  }
  std::vector<std::string> bodies;
  bodies.reserve(static_cast<size_t>(shape.pods));
  for (long i = 0; i < shape.pods; ++i) bodies.push_back(PodJson(i, shape));
  std::vector<SteadyClock::time_point> created;
  const auto t0 = SteadyClock::now();
  bench::CreatePods(*c->client, "default", bodies, &created);
  {
    std::promise<void> synced;  // the pods cache holds every create
    c->registry->Sync(Resource::kPods, [&] { synced.set_value(); });
    synced.get_future().wait();
  }
  if (c->registry->cache(Resource::kPods).size() < static_cast<size_t>(shape.pods)) {
    std::fprintf(stderr, "only %zu pods created\n", c->registry->cache(Resource::kPods).size());
    std::exit(1);
  }
  std::printf("  cluster: %ld nodes, %ld pods created in %.1f s\n", shape.nodes, shape.pods,
              std::chrono::duration<double>(SteadyClock::now() - t0).count());
  return c;
}

// The controller's own report of each countdown that ran out: its deadline and when its
// eviction started (Options::on_fire, on the controller's thread).
struct FireLog {
  std::mutex mu;
  std::vector<double> late_ms;  // guarded by mu

  void Add(client::Time deadline, client::Time started) {
    std::lock_guard<std::mutex> lock(mu);
    late_ms.push_back(std::chrono::duration<double, std::milli>(started - deadline).count());
  }
};

TaintController::Options ControllerOptions(client::Clock* clock, client::Client* client,
                                           server::Registry& registry, bool manual, bool events) {
  TaintController::Options o;
  o.clock = clock;
  o.client = client;
  o.pods = client::NewCacheListerWatcher(&registry.cache(Resource::kPods));
  o.nodes = client::NewCacheListerWatcher(&registry.cache(Resource::kNodes));
  o.host = "bench";
  o.manual = manual;
  if (!events) o.recorder = std::make_unique<NullRecorder>();
  return o;
}

// Taints every node, one PATCH after the other, the n-th not before (n - 1) / N * `over` from
// the start; returns when each PATCH returned (steady ns).
std::vector<int64_t> TaintAll(client::Client& c, const Shape& shape,
                              std::chrono::milliseconds over = {}) {
  std::vector<int64_t> done(static_cast<size_t>(shape.nodes) + 1);
  const auto start = SteadyClock::now();
  for (long n = 1; n <= shape.nodes; ++n) {
    if (over.count() > 0) {
      std::this_thread::sleep_until(start + over * (n - 1) / shape.nodes);
    }
    auto r =
        c.PatchSync(Resource::kNodes, "", "node-" + std::to_string(n), server::Subresource::kNone,
                    api::PatchType::kStrategicMergePatch, kTaintPatch);
    if (!r) {
      std::fprintf(stderr, "taint: %s\n", r.error().message.c_str());
      std::exit(1);
    }
    done[static_cast<size_t>(n)] = SteadyNs();
  }
  return done;
}

double Mb(double bytes) { return bytes / 1e6; }

struct MemoryRun {
  double informers = 0, node_writes = 0, countdowns = 0;
};

MemoryRun MeasureMemory(const Shape& shape, bool events) {
  auto c = NewCluster(shape);
  client::SimulatedClock clock;
  malloc_trim(0);
  const double h0 = static_cast<double>(bench::HeapInUse());
  auto controller = std::make_unique<TaintController>(
      ControllerOptions(&clock, c->client.get(), *c->registry, /*manual=*/true, events));
  controller->Start();
  const auto deadline = SteadyClock::now() + std::chrono::seconds(120);
  while (SteadyClock::now() < deadline) {
    const size_t n = controller->RunPending();
    if (controller->HasSynced() && n == 0) break;
    if (n == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (!controller->HasSynced()) {
    std::fprintf(stderr, "the controller's informers did not sync\n");
    std::exit(1);
  }
  const size_t pods_seen = controller->pod_informer().List().size();
  malloc_trim(0);
  const double h1 = static_cast<double>(bench::HeapInUse());
  (void)TaintAll(*c->client, shape);
  malloc_trim(0);
  const double h2 = static_cast<double>(bench::HeapInUse());
  const auto t_handle = SteadyClock::now();
  while (SteadyClock::now() < deadline) {
    const size_t n = controller->RunPending();
    if (controller->PendingCount() >= static_cast<size_t>(shape.pods) && n == 0) break;
    if (n == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const double handle_s = std::chrono::duration<double>(SteadyClock::now() - t_handle).count();
  const size_t pending = controller->PendingCount();
  malloc_trim(0);
  const double h3 = static_cast<double>(bench::HeapInUse());
  // Every pending eviction is a countdown of its pod's own S(i), none has run out.
  size_t timed_right = 0;
  for (const TaintController::PendingEviction& p : controller->Pending()) {
    const long i = PodIndex(p.name);
    if (!p.running && p.fire_at - p.created_at == std::chrono::seconds(shape.SecondsOf(i))) {
      ++timed_right;
    }
  }
  MemoryRun out;
  out.informers = h1 - h0;
  out.node_writes = h2 - h1;
  out.countdowns = h3 - h2;
  std::printf(
      "  (a) heap in use: %.1f MB with the registry loaded; controller started, informers synced "
      "(%zu pods): +%.1f MB; %ld nodes tainted: +%.1f MB; taints handled in %.2f s, "
      "PendingCount() = %zu (%zu with their own tolerationSeconds, none due): +%.1f MB = %.0f "
      "bytes per pending eviction\n",
      Mb(h0), pods_seen, Mb(out.informers), shape.nodes, Mb(out.node_writes), handle_s, pending,
      timed_right, Mb(out.countdowns),
      out.countdowns / static_cast<double>(std::max<size_t>(1, pending)));
  std::fflush(stdout);
  if (pending != static_cast<size_t>(shape.pods)) {
    std::fprintf(stderr, "expected %ld pending evictions, got %zu\n", shape.pods, pending);
    std::exit(1);
  }
  controller->Stop();
  return out;
}

struct TimerRun {
  double p50 = 0, p99 = 0, max = 0, min = 0;  // deletion lateness, ms
  double start_p50 = 0, start_p99 = 0, start_max = 0;
  double patch_p99 = 0, delete_sent_p99 = 0;
  double fire_p50 = 0, fire_p99 = 0, fire_max = 0;  // the controller's on_fire
  double taint_s = 0;
  long deleted = 0;
};

TimerRun MeasureTimers(const Shape& shape, bool events, std::chrono::milliseconds over) {
  auto c = NewCluster(shape);
  std::unique_ptr<client::Clock> real_clock = client::NewRealClock();
  RecordingClock clock(real_clock.get());
  RecordingClient recording(c->client.get(), shape.pods);
  auto watch = std::make_shared<DeleteWatch>(shape.pods);
  auto& cache = c->registry->cache(Resource::kPods);
  auto handle = cache.StartWatch(cache.revision(), server::ObjectFilter(), watch);
  if (!handle) std::exit(1);
  auto taints = std::make_shared<TaintWatch>(shape.nodes);
  auto& node_cache = c->registry->cache(Resource::kNodes);
  auto node_handle = node_cache.StartWatch(node_cache.revision(), server::ObjectFilter(), taints);
  if (!node_handle) std::exit(1);
  FireLog fires;
  TaintController::Options options =
      ControllerOptions(&clock, &recording, *c->registry, /*manual=*/false, events);
  options.on_fire = [&fires](client::Time deadline, client::Time started) {
    fires.Add(deadline, started);
  };
  auto controller = std::make_unique<TaintController>(std::move(options));
  controller->Start();
  // Synced, and the controller's thread idle (it has handled every pod's add).
  const auto sync_deadline = SteadyClock::now() + std::chrono::seconds(120);
  while (!controller->HasSynced() && SteadyClock::now() < sync_deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  for (double last = -1; SteadyClock::now() < sync_deadline;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const auto cpu = bench::ThreadCpu();
    auto it = cpu.find("kt-taint-evict");
    const double now = it == cpu.end() ? 0 : it->second;
    if (now == last) break;
    last = now;
  }
  const auto cpu_before = bench::ThreadCpu();
  const size_t timers_before = clock.Lateness().size();
  const auto t0 = SteadyClock::now();
  const std::vector<int64_t> tainted = TaintAll(*c->client, shape, over);
  const double taint_s = std::chrono::duration<double>(SteadyClock::now() - t0).count();
  const bool all = watch->WaitFor(
      shape.pods, SteadyClock::now() + std::chrono::seconds(shape.max_s + 60) + over);
  const auto cpu_after = bench::ThreadCpu();
  controller->Stop();
  handle->reset();
  node_handle->reset();

  // The taint reaching the nodes cache, against the PATCH's return on this thread.
  std::vector<double> seen_vs_return;
  for (long n = 1; n <= shape.nodes; ++n) {
    if (const int64_t t = taints->tainted.Get(n)) {
      seen_vs_return.push_back(static_cast<double>(t - tainted[static_cast<size_t>(n)]) / 1e6);
    }
  }
  std::sort(seen_vs_return.begin(), seen_vs_return.end());
  std::vector<double> timer_late = clock.Lateness();
  timer_late.erase(timer_late.begin(),
                   timer_late.begin() + static_cast<std::ptrdiff_t>(timers_before));
  std::sort(timer_late.begin(), timer_late.end());
  std::vector<double> fire_late = fires.late_ms;  // the controller's thread has stopped
  std::sort(fire_late.begin(), fire_late.end());
  long fired_within10 = 0;
  for (double v : fire_late) fired_within10 += v <= 10.0;
  const double fire_p50 = bench::Percentile(fire_late, 0.5);
  const double fire_p99 = bench::Percentile(fire_late, 0.99);
  const double fire_max = fire_late.empty() ? 0 : fire_late.back();
  std::vector<double> late, start_late, patch_late, sent_late, work;
  for (long i = 0; i < shape.pods; ++i) {
    const int64_t seen = taints->tainted.Get(shape.NodeOf(i));
    if (seen == 0) continue;
    const int64_t deadline = seen + shape.SecondsOf(i) * 1'000'000'000LL;
    auto ms = [&](int64_t t) { return static_cast<double>(t - deadline) / 1e6; };
    if (const int64_t t = watch->deleted.Get(i)) late.push_back(ms(t));
    if (const int64_t t = recording.started.Get(i)) start_late.push_back(ms(t));
    if (const int64_t t = recording.status_patched.Get(i)) patch_late.push_back(ms(t));
    if (const int64_t t = recording.delete_sent.Get(i)) sent_late.push_back(ms(t));
    if (recording.started.Get(i) && watch->deleted.Get(i)) {
      work.push_back(static_cast<double>(watch->deleted.Get(i) - recording.started.Get(i)) / 1e6);
    }
  }
  TimerRun out;
  out.deleted = static_cast<long>(late.size());
  out.taint_s = taint_s;
  out.p50 = bench::Percentile(late, 0.5);
  out.p99 = bench::Percentile(late, 0.99);
  out.max = late.empty() ? 0 : late.back();
  out.min = late.empty() ? 0 : late.front();
  out.start_p50 = bench::Percentile(start_late, 0.5);
  out.start_p99 = bench::Percentile(start_late, 0.99);
  out.start_max = start_late.empty() ? 0 : start_late.back();
  out.patch_p99 = bench::Percentile(patch_late, 0.99);
  out.delete_sent_p99 = bench::Percentile(sent_late, 0.99);
  out.fire_p50 = fire_p50;
  out.fire_p99 = fire_p99;
  out.fire_max = fire_max;
  long within10 = 0;
  for (double v : late) within10 += v <= 10.0;
  std::printf(
      "  (b) %ld nodes tainted in %.2f s (each taint in the nodes cache vs its PATCH's return: "
      "p50 %.2f ms, min %.2f, max %.2f); %ld of %ld pods deleted%s; lateness of the deletion "
      "reaching the pods cache (vs its node's taint in the nodes cache + tolerationSeconds): p50 "
      "%.2f ms, p99 %.2f ms, max %.2f ms, min %.2f ms, %.2f %% within 10 ms\n"
      "      lateness of the eviction's start (live GET of the pod): p50 %.2f ms, p99 %.2f ms, max "
      "%.2f ms; of the DisruptionTarget patch p99 %.2f ms; of the DELETE sent p99 %.2f ms; "
      "start -> deletion in the cache p50 %.2f ms p99 %.2f ms\n"
      "      countdowns run out (the controller's on_fire: its deadline -> its eviction "
      "started): %zu, late by p50 %.2f ms, p99 %.2f ms, max %.2f ms, %.2f %% within 10 ms\n"
      "      timer callbacks of the controller's clock: %zu, late by p50 %.2f ms, p99 %.2f ms, max "
      "%.2f ms\n"
      "      cpu by thread while tainting and evicting: %s\n",
      shape.nodes, taint_s, bench::Percentile(seen_vs_return, 0.5),
      seen_vs_return.empty() ? 0 : seen_vs_return.front(),
      seen_vs_return.empty() ? 0 : seen_vs_return.back(), out.deleted, shape.pods,
      all ? "" : " (TIMED OUT)", out.p50, out.p99, out.max, out.min,
      100.0 * static_cast<double>(within10) / static_cast<double>(std::max(1L, out.deleted)),
      out.start_p50, out.start_p99, out.start_max, out.patch_p99, out.delete_sent_p99,
      bench::Percentile(work, 0.5), bench::Percentile(work, 0.99), fire_late.size(),
      bench::Percentile(fire_late, 0.5), bench::Percentile(fire_late, 0.99),
      fire_late.empty() ? 0 : fire_late.back(),
      100.0 * static_cast<double>(fired_within10) /
          static_cast<double>(std::max<size_t>(1, fire_late.size())),
      timer_late.size(), bench::Percentile(timer_late, 0.5), bench::Percentile(timer_late, 0.99),
      timer_late.empty() ? 0 : timer_late.back(), bench::CpuDelta(cpu_before, cpu_after).c_str());
  std::fflush(stdout);
  return out;
}

std::string Runs(const std::vector<double>& v, const char* fmt = "%.2f") {
  std::string s;
  for (double x : v) {
    char b[32];
    std::snprintf(b, sizeof(b), fmt, x);
    if (!s.empty()) s += " / ";
    s += b;
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  bench::TuneMalloc();
  const bench::Flags flags = bench::Flags::Parse(argc, argv);
  Shape shape;
  shape.nodes = flags.Int("nodes", 5000);
  shape.pods = flags.Int("pods", 150000);
  shape.min_s = flags.Int("min-seconds", 5);
  shape.max_s = flags.Int("max-seconds", 20);
  const int runs = static_cast<int>(flags.Int("runs", 3));
  const std::string only = flags.Get("only", "");
  const bool events = flags.Int("events", 1) != 0;
  const std::chrono::milliseconds over(flags.Int("taint-over-ms", 0));
  if (shape.nodes < 1 || shape.pods < 1 || shape.min_s < 1 || shape.max_s < shape.min_s) {
    std::fprintf(stderr, "bad flags\n");
    return 2;
  }
  std::printf(
      "eviction_timers: %ld nodes, %ld pods, tolerationSeconds %ld..%ld, events %s, taints over "
      "%lld ms, %d runs, %u cores\n",
      shape.nodes, shape.pods, shape.min_s, shape.max_s, events ? "on" : "off",
      static_cast<long long>(over.count()), runs, std::thread::hardware_concurrency());
  std::vector<double> inf, nodes_mb, cd, p50, p99, mx, sp99, taint_s, f50, f99, fmax;
  for (int r = 1; r <= runs; ++r) {
    std::printf("run %d\n", r);
    if (only != "timers") {
      MemoryRun m = MeasureMemory(shape, events);
      inf.push_back(Mb(m.informers));
      nodes_mb.push_back(Mb(m.node_writes));
      cd.push_back(Mb(m.countdowns));
    }
    if (only != "memory") {
      TimerRun t = MeasureTimers(shape, events, over);
      p50.push_back(t.p50);
      p99.push_back(t.p99);
      mx.push_back(t.max);
      sp99.push_back(t.start_p99);
      taint_s.push_back(t.taint_s);
      f50.push_back(t.fire_p50);
      f99.push_back(t.fire_p99);
      fmax.push_back(t.fire_max);
    }
  }
  if (!cd.empty()) {
    std::printf(
        "(a) memory, median of %d runs: %ld pending countdowns take %.1f MB (runs %s MB; target "
        "<= 32 MB: %s); the controller's informers %.1f MB (runs %s); the node taint writes in "
        "the caches %.1f MB\n",
        runs, shape.pods, bench::Median(cd), Runs(cd, "%.1f").c_str(),
        bench::Median(cd) <= 32 ? "MET" : "MISSED", bench::Median(inf), Runs(inf, "%.1f").c_str(),
        bench::Median(nodes_mb));
  }
  if (!p99.empty()) {
    std::printf(
        "(b) timers, median of %d runs: countdowns run out -> eviction started (on_fire) p50 %.2f "
        "ms, p99 %.2f ms (runs %s; target <= 10 ms: %s), max %.2f ms (runs %s); deletion reaching "
        "the cache, against the taint in the cache + tolerationSeconds: p50 %.2f ms, p99 %.2f ms "
        "(runs %s: %s), max %.2f ms (runs %s); live GET of the pod p99 %.2f ms (runs %s); "
        "tainting the nodes took %.2f s\n",
        runs, bench::Median(f50), bench::Median(f99), Runs(f99).c_str(),
        bench::Median(f99) <= 10 ? "MET" : "MISSED", bench::Median(fmax), Runs(fmax).c_str(),
        bench::Median(p50), bench::Median(p99), Runs(p99).c_str(),
        bench::Median(p99) <= 10 ? "MET" : "MISSED", bench::Median(mx), Runs(mx).c_str(),
        bench::Median(sp99), Runs(sp99).c_str(), bench::Median(taint_s));
  }
  return 0;
}
