// The scheduler end to end in one process: registry, informers, queue, framework, binding,
// status and events, on a simulated clock.
#include "scheduler/scheduler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <thread>

#include "controllers/testing/api.h"
#include "scheduler/testing/cluster.h"

namespace kt::scheduler {
namespace {

using server::Resource;
using testing::Cluster;

std::string NodeJson(std::string_view name, std::string_view extra_spec = "",
                     std::string_view labels = "{}", std::string_view allocatable = "") {
  std::string alloc =
      allocatable.empty() ? R"("cpu":"4","memory":"16Gi","pods":"110")" : std::string(allocatable);
  std::string spec = extra_spec.empty() ? "{}" : std::string(extra_spec);
  return R"({"metadata":{"name":")" + std::string(name) + R"(","labels":)" + std::string(labels) +
         R"(},"spec":)" + spec + R"(,"status":{"capacity":{)" + alloc + R"(},"allocatable":{)" +
         alloc + R"(}}})";
}

std::string PodJson(std::string_view name, std::string_view spec_extra = "",
                    std::string_view requests = "") {
  std::string res;
  if (!requests.empty()) res.append(R"(,"resources":{"requests":{)").append(requests).append("}}");
  std::string extra;
  if (!spec_extra.empty()) extra.append(",").append(spec_extra);
  return R"({"metadata":{"name":")" + std::string(name) +
         R"("},"spec":{"containers":[{"name":"c","image":"nginx")" + res + "}]" + extra + "}}";
}

constexpr std::string_view kSeedTaints =
    R"({"taints":[{"key":"key1","value":"value1","effect":"NoSchedule"},
                  {"key":"key1","value":"value1","effect":"NoExecute"},
                  {"key":"key2","value":"value2","effect":"NoSchedule"}]})";
constexpr std::string_view kSeedTolerations =
    R"("tolerations":[{"key":"key1","operator":"Equal","value":"value1","effect":"NoSchedule"},
                      {"key":"key1","operator":"Equal","value":"value1","effect":"NoExecute"}])";

TEST(SchedulerTest, BindsAPodAndRecordsTheScheduledEvent) {
  Cluster c;
  c.Create(Resource::kNodes, NodeJson("node1"));
  c.Create(Resource::kPods, PodJson("nginx"));
  c.Settle();
  EXPECT_EQ(c.NodeOf("nginx"), "node1");
  const api::Condition* scheduled = c.PodCondition("nginx", "PodScheduled");
  ASSERT_NE(scheduled, nullptr);
  EXPECT_EQ(scheduled->status, "True");
  std::vector<api::Event> events = c.EventsFor("nginx");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].reason, "Scheduled");
  EXPECT_EQ(events[0].type, "Normal");
  EXPECT_EQ(events[0].action, "Binding");
  EXPECT_EQ(events[0].reporting_component, "default-scheduler");
  EXPECT_EQ(events[0].message, "Successfully assigned default/nginx to node1");
}

// The seeds' example: the pod stays Pending with upstream's message, then schedules onto node1
// once key2 is removed, without being re-created.
TEST(SchedulerTest, SeedPodWaitsForTheTaintToGoThenSchedulesOntoNode1) {
  Cluster c;
  c.Create(Resource::kNodes, NodeJson("node1", kSeedTaints));
  c.Create(Resource::kPods, PodJson("two-tolerations", kSeedTolerations));
  c.Settle();
  EXPECT_EQ(c.NodeOf("two-tolerations"), "");
  const api::Condition* cond = c.PodCondition("two-tolerations", "PodScheduled");
  ASSERT_NE(cond, nullptr);
  EXPECT_EQ(cond->status, "False");
  EXPECT_EQ(cond->reason, "Unschedulable");
  EXPECT_EQ(cond->message,
            "0/1 nodes are available: 1 node(s) had untolerated taint(s). preemption: 0/1 nodes "
            "are available: 1 Preemption is not helpful for scheduling.");
  std::vector<api::Event> events = c.EventsFor("two-tolerations");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].reason, "FailedScheduling");
  EXPECT_EQ(events[0].type, "Warning");
  EXPECT_EQ(events[0].message, cond->message);

  const uint64_t attempts = c.scheduler->AttemptCount();
  ASSERT_TRUE(c.Patch(Resource::kNodes, "node1",
                      R"({"spec":{"taints":[{"key":"key1","value":"value1","effect":"NoSchedule"},
                         {"key":"key1","value":"value1","effect":"NoExecute"}]}})"));
  c.Settle();
  EXPECT_EQ(c.NodeOf("two-tolerations"), "node1");
  EXPECT_EQ(c.scheduler->AttemptCount(), attempts + 1);
}

// Queueing hints: a parked pod is not retried for a change that cannot help it.
TEST(SchedulerTest, ParkedPodIgnoresEventsThatCannotHelp) {
  Cluster c;
  c.Create(Resource::kNodes,
           NodeJson("node1", R"({"taints":[{"key":"a","effect":"NoSchedule"}]})"));
  c.Create(Resource::kPods, PodJson("p"));
  c.Settle();
  const uint64_t attempts = c.scheduler->AttemptCount();
  ASSERT_EQ(c.NodeOf("p"), "");
  // A label change, a heartbeat-like status change and another untolerated taint: no retry.
  ASSERT_TRUE(c.Patch(Resource::kNodes, "node1", R"({"metadata":{"labels":{"x":"y"}}})"));
  ASSERT_TRUE(c.Patch(Resource::kNodes, "node1",
                      R"({"spec":{"taints":[{"key":"a","effect":"NoSchedule"},
                                            {"key":"b","effect":"NoExecute"}]}})"));
  c.Settle();
  EXPECT_EQ(c.scheduler->AttemptCount(), attempts);
  // A new node the pod tolerates: retried and scheduled there.
  c.Create(Resource::kNodes, NodeJson("node2"));
  c.Settle();
  EXPECT_EQ(c.NodeOf("p"), "node2");
}

TEST(SchedulerTest, TolerationAddedToThePendingPodRequeuesIt) {
  Cluster c;
  c.Create(Resource::kNodes,
           NodeJson("node1", R"({"taints":[{"key":"a","effect":"NoSchedule"}]})"));
  c.Create(Resource::kPods, PodJson("p"));
  c.Settle();
  ASSERT_EQ(c.NodeOf("p"), "");
  ASSERT_TRUE(c.Patch(Resource::kPods, "p",
                      R"({"spec":{"tolerations":[{"key":"a","operator":"Exists"}]}})"));
  c.Settle();
  EXPECT_EQ(c.NodeOf("p"), "node1");
}

TEST(SchedulerTest, UncordonRequeuesAndCordonedNodeGetsNothing) {
  Cluster c;
  c.Create(Resource::kNodes, NodeJson("node1", R"({"unschedulable":true})"));
  c.Create(Resource::kPods, PodJson("p"));
  c.Settle();
  EXPECT_EQ(c.NodeOf("p"), "");
  EXPECT_EQ(c.PodCondition("p", "PodScheduled")->message,
            "0/1 nodes are available: 1 node(s) were unschedulable. preemption: 0/1 nodes are "
            "available: 1 Preemption is not helpful for scheduling.");
  ASSERT_TRUE(c.Patch(Resource::kNodes, "node1", R"({"spec":{"unschedulable":null}})"));
  c.Settle();
  EXPECT_EQ(c.NodeOf("p"), "node1");
}

TEST(SchedulerTest, DeletedPodFreesResourcesForAParkedPod) {
  Cluster c;
  c.Create(Resource::kNodes,
           NodeJson("node1", "", "{}", R"("cpu":"1","memory":"1Gi","pods":"110")"));
  c.Create(Resource::kPods, PodJson("big", "", R"("cpu":"800m")"));
  c.Settle();
  ASSERT_EQ(c.NodeOf("big"), "node1");
  c.Create(Resource::kPods, PodJson("second", "", R"("cpu":"500m")"));
  c.Settle();
  EXPECT_EQ(c.NodeOf("second"), "");
  EXPECT_EQ(c.PodCondition("second", "PodScheduled")->message,
            "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: "
            "1 No preemption victims found for incoming pod.");
  ASSERT_TRUE(c.Delete(Resource::kPods, "big"));
  c.Settle();
  // Requeued after its backoff (1 s, aligned to the second), or at once when nothing else waits.
  c.Advance(std::chrono::seconds(2));
  EXPECT_EQ(c.NodeOf("second"), "node1");
}

TEST(SchedulerTest, SchedulingGatesKeepThePodOutUntilRemoved) {
  Cluster c;
  c.Create(Resource::kNodes, NodeJson("node1"));
  c.Create(Resource::kPods, PodJson("gated", R"("schedulingGates":[{"name":"example.com/foo"}])"));
  c.Settle();
  EXPECT_EQ(c.NodeOf("gated"), "");
  const api::Condition* cond = c.PodCondition("gated", "PodScheduled");
  ASSERT_NE(cond, nullptr);
  EXPECT_EQ(cond->reason, "SchedulingGated");
  EXPECT_EQ(cond->message, "Scheduling is blocked due to non-empty scheduling gates");
  EXPECT_EQ(c.scheduler->AttemptCount(), 0u);
  ASSERT_TRUE(c.Patch(Resource::kPods, "gated", R"({"spec":{"schedulingGates":null}})"));
  c.Settle();
  EXPECT_EQ(c.NodeOf("gated"), "node1");
}

TEST(SchedulerTest, PodsOfAnotherSchedulerAreLeftAlone) {
  Cluster c;
  c.Create(Resource::kNodes, NodeJson("node1"));
  c.Create(Resource::kPods, PodJson("mine"));
  c.Create(Resource::kPods, PodJson("theirs", R"("schedulerName":"other-scheduler")"));
  c.Settle();
  EXPECT_EQ(c.NodeOf("mine"), "node1");
  EXPECT_EQ(c.NodeOf("theirs"), "");
  EXPECT_TRUE(c.EventsFor("theirs").empty());
}

TEST(SchedulerTest, HighPriorityPodPreemptsALowPriorityOne) {
  Cluster c;
  c.Create(Resource::kPriorityClasses, R"({"metadata":{"name":"high"},"value":1000})");
  c.Create(Resource::kPriorityClasses, R"({"metadata":{"name":"low"},"value":10})");
  c.Create(Resource::kNodes,
           NodeJson("node1", "", "{}", R"("cpu":"1","memory":"1Gi","pods":"110")"));
  c.Create(Resource::kPods, PodJson("victim", R"("priorityClassName":"low")", R"("cpu":"800m")"));
  c.Settle();
  ASSERT_EQ(c.NodeOf("victim"), "node1");
  c.Create(Resource::kPods,
           PodJson("preemptor", R"("priorityClassName":"high")", R"("cpu":"800m")"));
  c.Settle();
  // The victim is deleted gracefully: Terminating, and still holding its CPU, until its kubelet
  // ends the deletion; the preemptor waits nominated to node1 meanwhile.
  server::ObjectPtr victim = c.GetPod("victim");
  ASSERT_NE(victim, nullptr);
  EXPECT_TRUE(victim->meta().deletion_timestamp.has_value());
  EXPECT_EQ(victim->meta().deletion_grace_period_seconds, 30);
  EXPECT_EQ(c.NodeOf("preemptor"), "");
  ASSERT_TRUE(c.Delete(Resource::kPods, "victim"));  // the kubelet's grace-0 delete
  c.Settle();
  c.Advance(std::chrono::seconds(2));
  EXPECT_EQ(c.GetPod("victim"), nullptr);
  EXPECT_EQ(c.NodeOf("preemptor"), "node1");
  std::vector<api::Event> events = c.EventsFor("victim");
  bool preempted = false;
  for (const api::Event& e : events) {
    if (e.reason == "Preempted") {
      preempted = true;
      EXPECT_EQ(e.type, "Normal");
      ASSERT_TRUE(e.related.has_value());
      EXPECT_EQ(e.related->name, "preemptor");
      EXPECT_EQ(e.message.rfind("Preempted by pod ", 0), 0u) << e.message;
      EXPECT_NE(e.message.find(" on node node1"), std::string::npos) << e.message;
    }
  }
  EXPECT_TRUE(preempted);
}

TEST(SchedulerTest, PreemptionPolicyNeverDoesNotPreempt) {
  Cluster c;
  c.Create(Resource::kPriorityClasses,
           R"({"metadata":{"name":"high-never"},"value":1000,"preemptionPolicy":"Never"})");
  c.Create(Resource::kNodes,
           NodeJson("node1", "", "{}", R"("cpu":"1","memory":"1Gi","pods":"110")"));
  c.Create(Resource::kPods, PodJson("running", "", R"("cpu":"800m")"));
  c.Settle();
  c.Create(Resource::kPods,
           PodJson("polite", R"("priorityClassName":"high-never")", R"("cpu":"800m")"));
  c.Settle();
  EXPECT_NE(c.GetPod("running"), nullptr);
  EXPECT_EQ(c.NodeOf("polite"), "");
  EXPECT_EQ(c.PodCondition("polite", "PodScheduled")->message,
            "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to "
            "preemptionPolicy=Never.");
}

// semantics.md §11.10 PC9: a pod that fails only on TaintToleration on every node preempts
// nothing (the filter's verdict is UnschedulableAndUnresolvable: no victim would help).
TEST(SchedulerTest, AnUntoleratedTaintIsNotResolvedByPreemption) {
  Cluster c;
  c.Create(Resource::kPriorityClasses, R"({"metadata":{"name":"high"},"value":1000})");
  c.Create(
      Resource::kNodes,
      NodeJson("node1", R"({"taints":[{"key":"dedicated","value":"x","effect":"NoSchedule"}]})",
               "{}", R"("cpu":"1","memory":"1Gi","pods":"110")"));
  c.Create(
      Resource::kPods,
      PodJson("resident",
              R"("tolerations":[{"key":"dedicated","operator":"Exists","effect":"NoSchedule"}])",
              R"("cpu":"800m")"));
  c.Settle();
  ASSERT_EQ(c.NodeOf("resident"), "node1");
  c.Create(Resource::kPods, PodJson("vip", R"("priorityClassName":"high")", R"("cpu":"800m")"));
  c.Settle();
  c.Advance(std::chrono::seconds(2));
  server::ObjectPtr resident = c.GetPod("resident");
  ASSERT_NE(resident, nullptr);
  EXPECT_FALSE(resident->meta().deletion_timestamp.has_value());
  EXPECT_EQ(c.NodeOf("vip"), "");
  server::ObjectPtr vip = c.GetPod("vip");
  ASSERT_NE(vip, nullptr);
  EXPECT_TRUE(vip->As<api::Pod>()->status.nominated_node_name.empty());
  EXPECT_EQ(c.PodCondition("vip", "PodScheduled")->message,
            "0/1 nodes are available: 1 node(s) had untolerated taint(s). preemption: 0/1 nodes "
            "are available: 1 Preemption is not helpful for scheduling.");
}

TEST(SchedulerTest, RepeatedFailureDoesNotRewriteAnUnchangedCondition) {
  Cluster c;
  c.Create(Resource::kNodes,
           NodeJson("node1", R"({"taints":[{"key":"a","effect":"NoSchedule"}]})"));
  c.Create(Resource::kPods, PodJson("p"));
  c.Settle();
  const store::Revision before = c.GetPod("p")->revision;
  // Five minutes on: the parked pod is retried (upstream's leftover flush) and fails the same way.
  const uint64_t attempts = c.scheduler->AttemptCount();
  c.Advance(std::chrono::minutes(5) + std::chrono::seconds(31));
  EXPECT_GT(c.scheduler->AttemptCount(), attempts);
  EXPECT_EQ(c.GetPod("p")->revision, before);
}

// The scheduler with its own threads running, as `kubetaint serve` starts it, on a registry over
// the memory store and a real clock; its writes go through `wrap` (the in-process client by
// default) so that a test can refuse some of them.
struct ThreadedScheduler {
  explicit ThreadedScheduler(
      std::function<std::unique_ptr<client::Client>(client::Client*)> wrap = nullptr,
      std::string node = NodeJson("node1")) {
    inner = client::NewInProcessClient(registry.get());
    if (wrap) wrapped = wrap(inner.get());
    Scheduler::Options so;
    so.clock = clock.get();
    so.client = wrapped ? wrapped.get() : inner.get();
    so.get_pod = [this](std::string_view ns, std::string_view name) { return pods.Get(ns, name); };
    auto made = Scheduler::New(std::move(so));
    if (!made) std::abort();
    sched = std::move(*made);
    sched->AddEventHandlers(&pods, &nodes);
    if (!inner->CreateSync(Resource::kNodes, "", std::move(node))) std::abort();
    pods.Start();
    nodes.Start();
    if (!client::WaitForCacheSync({&pods, &nodes},
                                  std::chrono::steady_clock::now() + std::chrono::seconds(10))) {
      std::abort();
    }
    sched->Start();
  }
  ~ThreadedScheduler() {
    sched->Stop();
    pods.Stop();
    nodes.Stop();
    registry->Stop();
  }

  void CreatePod(std::string_view name) {
    ASSERT_TRUE(inner->CreateSync(Resource::kPods, "default", PodJson(name, "", R"("cpu":"10m")")));
  }
  // The node the pod is bound to ("" when none, or no such pod).
  std::string NodeOf(std::string_view name) const {
    server::ObjectPtr o = registry->cache(Resource::kPods).Get("default", name);
    const api::Pod* p = o ? o->As<api::Pod>() : nullptr;
    return p != nullptr ? p->spec.node_name : "";
  }
  std::vector<api::Event> Events() const {
    std::vector<api::Event> out;
    for (const server::ObjectPtr& o :
         registry->cache(Resource::kEvents).List(server::ObjectFilter()).items) {
      if (const api::Event* e = o->As<api::Event>()) out.push_back(*e);
    }
    return out;
  }
  // Polls, with a deadline, until `done` holds.
  template <class Done>
  static bool Eventually(Done done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < deadline) {
      if (done()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  }

  static std::unique_ptr<server::Registry> StartedRegistry(store::Store* store) {
    server::Registry::Options ro;
    ro.admission = admission::testing::ChainForNodesWithoutKubelets();
    auto registry = std::make_unique<server::Registry>(store, ro);
    if (!registry->Start().ok()) std::abort();
    return registry;
  }

  // In this order: the informers read the registry's caches.
  std::unique_ptr<store::Store> store = store::NewMemoryStore();
  std::unique_ptr<server::Registry> registry = StartedRegistry(store.get());
  std::unique_ptr<client::Clock> clock = client::NewRealClock();
  std::unique_ptr<client::Client> inner;
  std::unique_ptr<client::Client> wrapped;
  client::Informer pods{client::NewCacheListerWatcher(&registry->cache(Resource::kPods)),
                        client::Informer::Options::Manual(clock.get(), "pods")};
  client::Informer nodes{client::NewCacheListerWatcher(&registry->cache(Resource::kNodes)),
                         client::Informer::Options::Manual(clock.get(), "nodes")};
  std::unique_ptr<Scheduler> sched;
};

// The scheduler hands bindings to its API thread in runs: a lone pod, fewer than a run, and many
// more than one all bind, and each gets its Scheduled event.
TEST(SchedulerThreadsTest, BindsALonePodAFewAndManyWithItsThreadsRunning) {
  ThreadedScheduler t;
  int created = 0;
  auto name = [](int i) {
    std::string n = std::to_string(i);
    n.insert(n.begin(), 'p');  // not "p" + ...: GCC 12's -Wrestrict misfires on that
    return n;
  };
  auto bound = [&] {
    int n = 0;
    for (int i = 0; i < created; ++i) n += t.NodeOf(name(i)) == "node1" ? 1 : 0;
    return n;
  };
  auto events = [&] { return t.registry->cache(Resource::kEvents).size(); };
  for (int batch : {1, 3, 40}) {
    for (int i = 0; i < batch; ++i) t.CreatePod(name(created++));
    EXPECT_TRUE(ThreadedScheduler::Eventually([&] {
      return bound() == created && events() == static_cast<size_t>(created);
    })) << "after "
        << created << " pods: " << bound() << " bound, " << events() << " events";
  }
  EXPECT_EQ(t.sched->ScheduledCount(), 44u);
}

// A binding the API server refuses, with the threads running: the pod's assumed place on the
// node is given up (the node has room for one pod only, so a place kept would leave it full), the
// pod gets FailedScheduling with the binder's error, and it binds on a later attempt.
TEST(SchedulerThreadsTest, ARefusedBindingIsForgottenAndRetried) {
  class RefusesFirstBinding : public controllers::testing::ForwardingClient {
   public:
    using ForwardingClient::ForwardingClient;
    void Bind(std::string ns, std::string name, std::string uid, std::string node,
              client::Done done) override {
      if (binds.fetch_add(1) == 0) {
        return done(server::ApiErr(server::NewInternalError("the store timed out")));
      }
      ForwardingClient::Bind(std::move(ns), std::move(name), std::move(uid), std::move(node),
                             std::move(done));
    }
    // A slow event write: the binding is seen well before its `Scheduled` event.
    void CreateEvent(api::Event event, client::WriteDone done) override {
      if (event.reason == "Scheduled") std::this_thread::sleep_for(std::chrono::milliseconds(50));
      ForwardingClient::CreateEvent(std::move(event), std::move(done));
    }
    std::atomic<int> binds{0};
  };
  RefusesFirstBinding* refusing = nullptr;
  ThreadedScheduler t(
      [&](client::Client* inner) {
        auto c = std::make_unique<RefusesFirstBinding>(inner);
        refusing = c.get();
        return c;
      },
      NodeJson("node1", "", "{}", R"("cpu":"4","memory":"16Gi","pods":"1")"));
  t.CreatePod("p0");
  auto failed = [&] {
    for (const api::Event& e : t.Events()) {
      if (e.reason == "FailedScheduling") return true;
    }
    return false;
  };
  ASSERT_TRUE(ThreadedScheduler::Eventually(failed));
  ASSERT_TRUE(ThreadedScheduler::Eventually([&] { return t.NodeOf("p0") == "node1"; }))
      << refusing->binds.load() << " binding attempts";
  // The binding reaches the cache before its completion writes the `Scheduled` event.
  const auto scheduled = [&] {
    for (const api::Event& e : t.Events()) {
      if (e.reason == "Scheduled") return true;
    }
    return false;
  };
  ASSERT_TRUE(ThreadedScheduler::Eventually(scheduled));
  EXPECT_EQ(refusing->binds.load(), 2);
  EXPECT_EQ(t.sched->ScheduledCount(), 1u);
  std::vector<std::string> reasons;
  std::string failure;
  for (const api::Event& e : t.Events()) {
    reasons.push_back(e.reason);
    if (e.reason == "FailedScheduling") {
      failure = e.message;
      EXPECT_EQ(e.type, "Warning");
    }
  }
  std::sort(reasons.begin(), reasons.end());
  EXPECT_EQ(reasons, (std::vector<std::string>{"FailedScheduling", "Scheduled"}));
  EXPECT_EQ(failure,
            "running Bind plugin \"DefaultBinder\": Internal error occurred: the store timed out");
}

}  // namespace
}  // namespace kt::scheduler
