// The scheduling queue's upstream behaviour (pkg/scheduler/backend/queue) on a simulated clock:
// activeQ order (PrioritySort), per-attempt backoff with its one-second windows, parked pods and
// the queueing hints that move them, the 5-minute leftover flush, and scheduling gates.
//
// The queue alone (SchedulingQueue over the default profile's framework) where exact timing
// matters; the whole in-process cluster where what matters is what users see — a pod that ends
// bound, or stays Pending without another attempt.
#include "scheduler/queue.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "scheduler/testing/cluster.h"
#include "scheduler/testing/fakes.h"

namespace kt::scheduler {
namespace {

using server::Resource;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

// --- The queue alone
// ------------------------------------------------------------------------------

// A pod of the default profile: `extra` is spliced into its spec.
PodInfoPtr MakePod(std::string_view name, int32_t priority = 0, std::string_view extra = "") {
  std::string json = R"({"metadata":{"name":")" + std::string(name) + R"("},"spec":{"priority":)" +
                     std::to_string(priority) + R"(,"containers":[{"name":"c","image":"nginx"}])";
  if (!extra.empty()) json.append(",").append(extra);
  json += "}}";
  return NewPodInfo(testing::Pod(json));
}

class QueueTest : public ::testing::Test {
 protected:
  QueueTest()
      : fw_(testing::NewFramework(&handle_)),
        queue_(&clock_, SchedulingQueue::Options{}, [this](const PodInfo&) { return fw_.get(); }) {}

  // Pops every pod ready now, by name.
  std::vector<std::string> PopAll() {
    std::vector<std::string> names;
    while (QueuedPodInfoPtr qp = queue_.Pop()) names.push_back(qp->pod->name());
    return names;
  }

  // Pops `name` (which must be next) and fails it: rejected by `plugin`, or with an error when
  // `plugin` is empty.
  QueuedPodInfoPtr PopAndFail(std::string_view name, std::string_view plugin) {
    QueuedPodInfoPtr qp = queue_.Pop();
    if (qp == nullptr || qp->pod->name() != name) {
      ADD_FAILURE() << "expected to pop " << name;
      return qp;
    }
    if (!plugin.empty()) qp->unschedulable_plugins.insert(std::string(plugin));
    queue_.AddUnschedulableIfNotPresent(qp);
    return qp;
  }

  // Advances the clock (starting on a whole second) and runs the backoff flush, as the scheduler's
  // per-second timer does.
  void AdvanceAndFlush(client::Duration d) {
    clock_.Advance(d);
    queue_.FlushBackoffQCompleted();
  }

  client::SimulatedClock clock_;  // 2026-01-01T00:00:00Z: a whole second
  testing::FakeHandle handle_;
  std::unique_ptr<Framework> fw_;
  SchedulingQueue queue_;
};

TEST_F(QueueTest, ActiveQOrdersByPriorityThenQueueTime) {
  struct Add {
    std::string name;
    int32_t priority;
    client::Duration at;  // since the start
  };
  const std::vector<Add> adds = {
      {"low-first", 0, milliseconds(0)},      {"negative", -10, milliseconds(100)},
      {"high-late", 1000, milliseconds(200)}, {"mid", 10, milliseconds(300)},
      {"low-second", 0, milliseconds(400)},   {"high-later", 1000, milliseconds(500)},
  };
  const client::Time start = clock_.Now();
  for (const Add& a : adds) {
    clock_.AdvanceTo(start + a.at);
    queue_.Add(MakePod(a.name, a.priority));
  }
  EXPECT_EQ(queue_.NumActive(), adds.size());
  EXPECT_EQ(PopAll(), (std::vector<std::string>{"high-late", "high-later", "mid", "low-first",
                                                "low-second", "negative"}));
}

TEST_F(QueueTest, EqualPriorityAndQueueTimeKeepArrivalOrder) {
  for (const char* name : {"c", "a", "b"}) queue_.Add(MakePod(name));
  EXPECT_EQ(PopAll(), (std::vector<std::string>{"c", "a", "b"}));
}

TEST_F(QueueTest, PodBackFromBackoffKeepsItsFailureTimeInTheOrder) {
  // "retried" failed at S (its queue time) and returns from backoffQ after "newcomer" arrived at
  // S+0.5: equal priority, so the earlier queue time goes first, not the earlier arrival in
  // activeQ.
  queue_.Add(MakePod("retried"));
  PopAndFail("retried", "");
  clock_.Advance(milliseconds(500));
  queue_.Add(MakePod("newcomer"));
  AdvanceAndFlush(milliseconds(1500));
  ASSERT_EQ(queue_.NumActive(), 2u);
  EXPECT_EQ(PopAll(), (std::vector<std::string>{"retried", "newcomer"}));
}

TEST_F(QueueTest, UpdateInActiveQKeepsThePodsPlace) {
  queue_.Add(MakePod("first"));
  clock_.Advance(seconds(1));
  queue_.Add(MakePod("second"));
  // A label change of the first pod must not send it behind the second.
  queue_.Update(MakePod("first"), MakePod("first", 0, R"("nodeSelector":{"disk":"ssd"})"));
  QueuedPodInfoPtr qp = queue_.Pop();
  ASSERT_NE(qp, nullptr);
  EXPECT_EQ(qp->pod->name(), "first");
  EXPECT_EQ(qp->pod->pod().spec.node_selector.size(), 1u);
}

// Backoff after the N-th consecutive failure: 1 s doubling to the 10 s maximum. The expiry is
// rounded down to the second (upstream backoffQOrderingWindowDuration), and a pod whose expiry
// lies in the current one-second window is still backing off (upstream isPodBackingoff: "in case
// of windows equality we want to return true"), so a pod that failed at second S with backoff d
// stays out through S+d and is flushed at S+d+1.
TEST_F(QueueTest, ErrorBackoffDoublesPerAttemptUpToTenSeconds) {
  const int want_seconds[] = {1, 2, 4, 8, 10, 10, 10};
  queue_.Add(MakePod("p"));
  for (int n = 1; n <= 7; ++n) {
    SCOPED_TRACE("failure " + std::to_string(n));
    const client::Time failed_at = clock_.Now();
    QueuedPodInfoPtr qp = PopAndFail("p", /*plugin=*/"");
    ASSERT_NE(qp, nullptr);
    EXPECT_EQ(qp->attempts, n);
    EXPECT_EQ(queue_.NumBackoff(), 1u);
    const seconds d(want_seconds[n - 1]);
    if (d > seconds(1)) {
      clock_.AdvanceTo(failed_at + d - seconds(1));
      queue_.FlushBackoffQCompleted();
      // A pod that failed with an error is never popped early, even with activeQ empty.
      EXPECT_EQ(queue_.Pop(), nullptr);
      EXPECT_EQ(queue_.NumBackoff(), 1u);
    }
    clock_.AdvanceTo(failed_at + d);
    queue_.FlushBackoffQCompleted();
    EXPECT_EQ(queue_.Pop(), nullptr) << "out after " << d.count() << " s, in the expiry's window";
    ASSERT_EQ(queue_.NumBackoff(), 1u);
    clock_.AdvanceTo(failed_at + d + seconds(1));
    queue_.FlushBackoffQCompleted();
    EXPECT_EQ(queue_.NumBackoff(), 0u);
    ASSERT_EQ(queue_.NumActive(), 1u) << "still backing off after " << d.count() + 1 << " s";
  }
}

TEST_F(QueueTest, BackoffExpiryIsRoundedDownToTheSecond) {
  // Failing 300 ms into a second: 1 s of backoff expires at the next whole second, so the pod is
  // out at the second after that (1.7 s after failing), not 2.3 s.
  clock_.Advance(milliseconds(300));
  queue_.Add(MakePod("p"));
  PopAndFail("p", "");
  AdvanceAndFlush(milliseconds(1699));
  EXPECT_EQ(queue_.NumBackoff(), 1u);
  AdvanceAndFlush(milliseconds(1));
  EXPECT_EQ(queue_.NumActive(), 1u);
}

TEST_F(QueueTest, ConfiguredBackoffIsHonoured) {
  SchedulingQueue q(&clock_, {.initial_backoff = seconds(3), .max_backoff = seconds(5)},
                    [this](const PodInfo&) { return fw_.get(); });
  q.Add(MakePod("p"));
  const int want[] = {3, 5, 5};
  for (int w : want) {
    const client::Time failed_at = clock_.Now();
    QueuedPodInfoPtr qp = q.Pop();
    ASSERT_NE(qp, nullptr);
    q.AddUnschedulableIfNotPresent(qp);
    clock_.AdvanceTo(failed_at + seconds(w));
    q.FlushBackoffQCompleted();
    EXPECT_EQ(q.NumActive(), 0u) << w;
    clock_.AdvanceTo(failed_at + seconds(w + 1));
    q.FlushBackoffQCompleted();
    EXPECT_EQ(q.NumActive(), 1u) << w;
  }
}

TEST_F(QueueTest, RejectedPodIsParkedUntilAnEventThatMayHelp) {
  queue_.Add(MakePod("p"));
  PopAndFail("p", "TaintToleration");
  EXPECT_TRUE(queue_.IsParked(MakePod("p")->uid()));
  EXPECT_EQ(queue_.NumBackoff(), 0u);
  EXPECT_EQ(queue_.Pop(), nullptr);
  // Backoff expiring does not bring a parked pod back; only events (or the leftover flush) do.
  AdvanceAndFlush(seconds(30));
  EXPECT_EQ(queue_.Pop(), nullptr);

  // A node with an untolerated taint: TaintToleration's hint says QueueSkip.
  ObjectPtr tainted = testing::ReadyNode("tainted", "4", "16Gi", "110",
                                         R"({"taints":[{"key":"a","effect":"NoSchedule"}]})");
  queue_.MoveAllToActiveOrBackoffQueue({EventResource::kNode, kAdd}, nullptr, tainted);
  EXPECT_EQ(queue_.NumUnschedulable(), 1u);
  // A node allocatable change: an event TaintToleration did not register for.
  queue_.MoveAllToActiveOrBackoffQueue({EventResource::kNode, kUpdateNodeAllocatable}, tainted,
                                       tainted);
  EXPECT_EQ(queue_.NumUnschedulable(), 1u);
  // A node it tolerates: moved (its backoff long over: straight to activeQ).
  queue_.MoveAllToActiveOrBackoffQueue({EventResource::kNode, kAdd}, nullptr,
                                       testing::ReadyNode("clean"));
  EXPECT_EQ(queue_.NumUnschedulable(), 0u);
  EXPECT_EQ(queue_.NumActive(), 1u);
}

TEST_F(QueueTest, EventsOnlyWakePodsRejectedByAPluginThatRegisteredThem) {
  queue_.Add(MakePod("by-taint"));
  queue_.Add(MakePod("by-resources"));
  PopAndFail("by-taint", "TaintToleration");
  PopAndFail("by-resources", "NodeResourcesFit");
  AdvanceAndFlush(seconds(20));
  // An assigned pod deleted: NodeResourcesFit's event only.
  ObjectPtr gone = testing::Pod(
      R"({"metadata":{"name":"gone"},"spec":{"nodeName":"n1","containers":[{"name":"c"}]}})");
  queue_.MoveAllToActiveOrBackoffQueue({EventResource::kAssignedPod, kDelete}, gone, nullptr);
  EXPECT_EQ(PopAll(), std::vector<std::string>{"by-resources"});
  EXPECT_TRUE(queue_.IsParked(MakePod("by-taint")->uid()));
}

TEST_F(QueueTest, RejectedPodMovedWhileBackingOffWaitsInBackoffQUnlessNothingElseIsReady) {
  queue_.Add(MakePod("p"));
  PopAndFail("p", "TaintToleration");  // at second S: backoff 1 s, expiry S+1
  clock_.Advance(milliseconds(500));
  queue_.MoveAllToActiveOrBackoffQueue({EventResource::kNode, kAdd}, nullptr,
                                       testing::ReadyNode("clean"));
  EXPECT_EQ(queue_.NumUnschedulable(), 0u);
  EXPECT_EQ(queue_.NumBackoff(), 1u);
  EXPECT_EQ(queue_.NumActive(), 0u);
  // Another pod ready: it goes first, the backing-off one stays in backoffQ.
  queue_.Add(MakePod("other"));
  QueuedPodInfoPtr qp = queue_.Pop();
  ASSERT_NE(qp, nullptr);
  EXPECT_EQ(qp->pod->name(), "other");
  EXPECT_EQ(queue_.NumBackoff(), 1u);
  // activeQ empty: a pod backing off after a rejection is tried early (upstream
  // SchedulerPopFromBackoffQ, beta and on since 1.33).
  qp = queue_.Pop();
  ASSERT_NE(qp, nullptr);
  EXPECT_EQ(qp->pod->name(), "p");
  EXPECT_EQ(qp->attempts, 2);
}

TEST_F(QueueTest, RejectedPodMovedAfterItsBackoffGoesStraightToActiveQ) {
  queue_.Add(MakePod("p"));
  PopAndFail("p", "NodeUnschedulable");
  clock_.Advance(seconds(2));  // expiry S+1 lies in a past window now
  ObjectPtr cordoned = testing::Node(
      R"({"metadata":{"name":"n"},"spec":{"unschedulable":true},"status":{"allocatable":{"pods":"1"}}})");
  ObjectPtr uncordoned =
      testing::Node(R"({"metadata":{"name":"n"},"status":{"allocatable":{"pods":"1"}}})");
  queue_.MoveAllToActiveOrBackoffQueue({EventResource::kNode, kUpdateNodeTaint}, cordoned,
                                       uncordoned);
  EXPECT_EQ(queue_.NumBackoff(), 0u);
  EXPECT_EQ(queue_.NumActive(), 1u);
}

TEST_F(QueueTest, RejectionsCountTowardsBackoffAndAnErrorStartsItsOwnCount) {
  // Three rejections, then an event while the third backoff (4 s) runs: in backoffQ until S+4.
  queue_.Add(MakePod("p"));
  for (int i = 0; i < 3; ++i) {
    PopAndFail("p", "TaintToleration");
    if (i < 2) {
      clock_.Advance(seconds(20));
      queue_.Activate(MakePod("p")->uid());
    }
  }
  const client::Time failed_at = clock_.Now();
  queue_.MoveAllToActiveOrBackoffQueue({EventResource::kNode, kAdd}, nullptr,
                                       testing::ReadyNode("clean"));
  ASSERT_EQ(queue_.NumBackoff(), 1u);
  clock_.AdvanceTo(failed_at + seconds(4));
  queue_.FlushBackoffQCompleted();
  EXPECT_EQ(queue_.NumBackoff(), 1u);
  clock_.AdvanceTo(failed_at + seconds(5));
  queue_.FlushBackoffQCompleted();
  ASSERT_EQ(queue_.NumActive(), 1u);
  // Now an error: its own count starts at 1 (1 s), not at the rejections' 4.
  const client::Time errored_at = clock_.Now();
  PopAndFail("p", "");
  clock_.AdvanceTo(errored_at + seconds(2));
  queue_.FlushBackoffQCompleted();
  EXPECT_EQ(queue_.NumActive(), 1u);
}

TEST_F(QueueTest, LeftoverFlushMovesPodsParkedLongerThanFiveMinutes) {
  queue_.Add(MakePod("old"));
  queue_.Add(MakePod("young"));
  PopAndFail("old", "TaintToleration");
  clock_.Advance(minutes(1));
  PopAndFail("young", "TaintToleration");
  // Exactly five minutes is not more than five minutes.
  clock_.Advance(minutes(4));
  queue_.FlushUnschedulablePodsLeftover();
  EXPECT_EQ(queue_.NumUnschedulable(), 2u);
  clock_.Advance(milliseconds(1));
  queue_.FlushUnschedulablePodsLeftover();
  EXPECT_EQ(queue_.NumUnschedulable(), 1u);
  EXPECT_EQ(PopAll(), std::vector<std::string>{"old"});
  EXPECT_TRUE(queue_.IsParked(MakePod("young")->uid()));
  clock_.Advance(minutes(1));
  queue_.FlushUnschedulablePodsLeftover();
  EXPECT_EQ(PopAll(), std::vector<std::string>{"young"});
}

TEST_F(QueueTest, GatedPodStaysOutOfActiveQUntilItsLastGateIsRemoved) {
  constexpr std::string_view kTwoGates =
      R"("schedulingGates":[{"name":"example.com/a"},{"name":"example.com/b"}])";
  PodInfoPtr gated = MakePod("gated", 0, kTwoGates);
  queue_.Add(gated);
  EXPECT_EQ(queue_.NumActive(), 0u);
  EXPECT_TRUE(queue_.IsParked(gated->uid()));
  EXPECT_EQ(queue_.Pop(), nullptr);

  // Neither cluster events nor the leftover flush nor Activate-like wildcards release it.
  queue_.MoveAllToActiveOrBackoffQueue({EventResource::kNode, kAdd}, nullptr,
                                       testing::ReadyNode("n1"));
  queue_.MoveAllToActiveOrBackoffQueue({EventResource::kWildcard, kAll}, nullptr, nullptr);
  clock_.Advance(minutes(10));
  queue_.FlushUnschedulablePodsLeftover();
  queue_.FlushBackoffQCompleted();
  EXPECT_EQ(queue_.Pop(), nullptr);

  // One gate of two removed: still gated.
  PodInfoPtr one_gate = MakePod("gated", 0, R"("schedulingGates":[{"name":"example.com/b"}])");
  queue_.Update(gated, one_gate);
  EXPECT_TRUE(queue_.IsParked(gated->uid()));
  EXPECT_EQ(queue_.Pop(), nullptr);

  // The last gate removed: straight to activeQ, with no backoff (it was never attempted).
  queue_.Update(one_gate, MakePod("gated"));
  EXPECT_FALSE(queue_.IsParked(gated->uid()));
  QueuedPodInfoPtr qp = queue_.Pop();
  ASSERT_NE(qp, nullptr);
  EXPECT_EQ(qp->pod->name(), "gated");
  EXPECT_EQ(qp->attempts, 1);
}

TEST_F(QueueTest, DeleteRemovesThePodWhereverItWaits) {
  queue_.Add(MakePod("active"));
  queue_.Add(MakePod("backoff"));
  queue_.Add(MakePod("parked"));
  queue_.Add(MakePod("gated", 0, R"("schedulingGates":[{"name":"g"}])"));
  // One pod in each place: "active" is popped first and added back.
  QueuedPodInfoPtr active = queue_.Pop();
  PopAndFail("backoff", "");
  PopAndFail("parked", "TaintToleration");
  queue_.Add(active->pod);
  for (const char* name : {"active", "backoff", "parked", "gated"}) {
    const std::string uid = MakePod(name)->uid();
    EXPECT_TRUE(queue_.Contains(uid)) << name;
    queue_.Delete(uid);
    EXPECT_FALSE(queue_.Contains(uid)) << name;
  }
  AdvanceAndFlush(seconds(20));
  EXPECT_EQ(queue_.Pop(), nullptr);
}

// --- The whole cluster
// ----------------------------------------------------------------------------

using testing::Cluster;

std::string NodeJson(std::string_view name, std::string_view spec = "{}",
                     std::string_view labels = "{}", std::string_view cpu = "4") {
  const std::string alloc = R"({"cpu":")" + std::string(cpu) + R"(","memory":"16Gi","pods":"110"})";
  return R"({"metadata":{"name":")" + std::string(name) + R"(","labels":)" + std::string(labels) +
         R"(},"spec":)" + std::string(spec) + R"(,"status":{"capacity":)" + alloc +
         R"(,"allocatable":)" + alloc + "}}";
}

std::string PodJson(std::string_view name, std::string_view spec_extra = "",
                    std::string_view cpu = "") {
  std::string res;
  if (!cpu.empty()) res = R"(,"resources":{"requests":{"cpu":")" + std::string(cpu) + R"("}})";
  std::string extra;
  if (!spec_extra.empty()) extra.append(",").append(spec_extra);
  return R"({"metadata":{"name":")" + std::string(name) +
         R"("},"spec":{"containers":[{"name":"c","image":"nginx")" + res + "}]" + extra + "}}";
}

std::string UidOf(Cluster& c, std::string_view name) {
  ObjectPtr p = c.GetPod(name);
  return p ? p->As<api::Pod>()->meta.uid : "";
}

TEST(QueueClusterTest, HigherPriorityPodIsScheduledFirst) {
  Cluster c;
  c.Create(Resource::kPriorityClasses, R"({"metadata":{"name":"high"},"value":1000})");
  c.Create(Resource::kNodes, NodeJson("node1", "{}", "{}", "1"));
  // Both arrive in the same informer batch; the one created last has the higher priority.
  c.Create(Resource::kPods, PodJson("low", "", "800m"));
  c.Create(Resource::kPods, PodJson("high", R"("priorityClassName":"high")", "800m"));
  c.Settle();
  EXPECT_EQ(c.NodeOf("high"), "node1");
  EXPECT_EQ(c.NodeOf("low"), "");
  const api::Condition* cond = c.PodCondition("low", "PodScheduled");
  ASSERT_NE(cond, nullptr);
  EXPECT_EQ(cond->reason, "Unschedulable");
}

TEST(QueueClusterTest, EqualPriorityPodsAreScheduledInArrivalOrder) {
  Cluster c;
  c.Create(Resource::kNodes, NodeJson("node1", "{}", "{}", "1"));
  c.Create(Resource::kPods, PodJson("first", "", "800m"));
  c.Create(Resource::kPods, PodJson("second", "", "800m"));
  c.Settle();
  EXPECT_EQ(c.NodeOf("first"), "node1");
  EXPECT_EQ(c.NodeOf("second"), "");
}

// A parked pod and one cluster event: is the pod tried again (as its rejecting plugins' queueing
// hints say), and where does it end up?
struct HintCase {
  std::string name = "";
  std::vector<std::string> nodes = {};
  std::vector<std::string> bound_pods = {};  // created and scheduled first
  std::string pod_extra = "";                // the pending pod "p"'s spec additions
  std::string pod_cpu = "";
  std::function<void(Cluster&)> event = nullptr;
  bool retried = false;
  std::string bound_to = "";  // "" when it stays Pending
};

void PrintTo(const HintCase& c, std::ostream* os) { *os << c.name; }

class QueueingHintTest : public ::testing::TestWithParam<HintCase> {};

TEST_P(QueueingHintTest, ParkedPodIsRetriedOnlyWhenTheEventMayHelp) {
  const HintCase& tc = GetParam();
  Cluster c;
  for (const std::string& n : tc.nodes) c.Create(Resource::kNodes, n);
  for (const std::string& p : tc.bound_pods) c.Create(Resource::kPods, p);
  c.Settle();
  c.Create(Resource::kPods, PodJson("p", tc.pod_extra, tc.pod_cpu));
  c.Settle();
  ASSERT_EQ(c.NodeOf("p"), "");
  ASSERT_TRUE(c.scheduler->queue().IsParked(UidOf(c, "p")));
  const uint64_t attempts = c.scheduler->AttemptCount();

  tc.event(c);
  c.Settle();
  // No clock advance: a moved pod is tried at once, even while backing off (nothing else waits).
  EXPECT_EQ(c.scheduler->AttemptCount() - attempts, tc.retried ? 1u : 0u);
  EXPECT_EQ(c.NodeOf("p"), tc.bound_to);
  if (!tc.retried) {
    EXPECT_TRUE(c.scheduler->queue().IsParked(UidOf(c, "p")));
  }
}

void Check(const server::ApiResult<store::Bytes>& r) {
  if (!r) ADD_FAILURE() << r.error().message;
}

constexpr std::string_view kTaintA = R"({"taints":[{"key":"a","effect":"NoSchedule"}]})";
constexpr std::string_view kTaintAValueX =
    R"({"taints":[{"key":"a","value":"x","effect":"NoSchedule"}]})";

constexpr std::string_view kRequiresZoneB =
    R"("affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":
        {"nodeSelectorTerms":[{"matchExpressions":[{"key":"zone","operator":"In","values":["b"]}]}]}}})";

INSTANTIATE_TEST_SUITE_P(
    Events, QueueingHintTest,
    ::testing::Values(
        // TaintToleration: a node added, or a node's taints changed, from untolerated to tolerated.
        HintCase{.name = "NodeAddedThatThePodTolerates",
                 .nodes = {NodeJson("node1", kTaintA)},
                 .event = [](Cluster& c) { c.Create(Resource::kNodes, NodeJson("node2")); },
                 .retried = true,
                 .bound_to = "node2"},
        HintCase{.name = "NodeAddedWithOnlyAPreferNoScheduleTaint",
                 .nodes = {NodeJson("node1", kTaintA)},
                 .event =
                     [](Cluster& c) {
                       c.Create(
                           Resource::kNodes,
                           NodeJson("node2",
                                    R"({"taints":[{"key":"b","effect":"PreferNoSchedule"}]})"));
                     },
                 .retried = true,
                 .bound_to = "node2"},
        HintCase{.name = "NodeAddedWithAnUntoleratedTaint",
                 .nodes = {NodeJson("node1", kTaintA)},
                 .event =
                     [](Cluster& c) {
                       c.Create(
                           Resource::kNodes,
                           NodeJson("node2", R"({"taints":[{"key":"b","effect":"NoExecute"}]})"));
                     },
                 .retried = false},
        HintCase{.name = "TaintRemovedFromTheNode",
                 .nodes = {NodeJson("node1", kTaintA)},
                 .event =
                     [](Cluster& c) {
                       Check(c.Patch(Resource::kNodes, "node1", R"({"spec":{"taints":null}})"));
                     },
                 .retried = true,
                 .bound_to = "node1"},
        HintCase{.name = "AnotherUntoleratedTaintAdded",
                 .nodes = {NodeJson("node1", kTaintA)},
                 .event =
                     [](Cluster& c) {
                       Check(c.Patch(Resource::kNodes, "node1",
                                     R"({"spec":{"taints":[{"key":"a","effect":"NoSchedule"},
                                                           {"key":"b","effect":"NoSchedule"}]}})"));
                     },
                 .retried = false},
        HintCase{
            .name = "TaintValueChangedToOneThePodTolerates",
            .nodes = {NodeJson("node1", kTaintAValueX)},
            .pod_extra =
                R"("tolerations":[{"key":"a","operator":"Equal","value":"y","effect":"NoSchedule"}])",
            .event =
                [](Cluster& c) {
                  Check(c.Patch(
                      Resource::kNodes, "node1",
                      R"({"spec":{"taints":[{"key":"a","value":"y","effect":"NoSchedule"}]}})"));
                },
            .retried = true,
            .bound_to = "node1"},
        // TaintToleration: the pending pod itself gained a toleration (and only that).
        HintCase{.name = "TolerationAddedToThePod",
                 .nodes = {NodeJson("node1", kTaintA)},
                 .event =
                     [](Cluster& c) {
                       Check(c.Patch(
                           Resource::kPods, "p",
                           R"({"spec":{"tolerations":[{"key":"a","operator":"Exists"}]}})"));
                     },
                 .retried = true,
                 .bound_to = "node1"},
        HintCase{.name = "PodLabelChangedIsNoToleration",
                 .nodes = {NodeJson("node1", kTaintA)},
                 .event =
                     [](Cluster& c) {
                       Check(c.Patch(Resource::kPods, "p", R"({"metadata":{"labels":{"x":"y"}}})"));
                     },
                 .retried = false},
        // NodeUnschedulable: uncordoning helps; other changes to a cordoned node do not.
        HintCase{.name = "NodeUncordoned",
                 .nodes = {NodeJson("node1", R"({"unschedulable":true})")},
                 .event =
                     [](Cluster& c) {
                       Check(c.Patch(Resource::kNodes, "node1",
                                     R"({"spec":{"unschedulable":null}})"));
                     },
                 .retried = true,
                 .bound_to = "node1"},
        HintCase{.name = "CordonedNodeRelabelled",
                 .nodes = {NodeJson("node1", R"({"unschedulable":true})")},
                 .event =
                     [](Cluster& c) {
                       Check(c.Patch(Resource::kNodes, "node1",
                                     R"({"metadata":{"labels":{"x":"y"}}})"));
                     },
                 .retried = false},
        // NodeAffinity: labels (of a changed or an added node) that now match.
        HintCase{.name = "NodeLabelsChangedToMatchTheNodeSelector",
                 .nodes = {NodeJson("node1", "{}", R"({"disk":"hdd"})")},
                 .pod_extra = R"("nodeSelector":{"disk":"ssd"})",
                 .event =
                     [](Cluster& c) {
                       Check(c.Patch(Resource::kNodes, "node1",
                                     R"({"metadata":{"labels":{"disk":"ssd"}}})"));
                     },
                 .retried = true,
                 .bound_to = "node1"},
        HintCase{.name = "NodeLabelsChangedButStillNotMatching",
                 .nodes = {NodeJson("node1", "{}", R"({"disk":"hdd"})")},
                 .pod_extra = R"("nodeSelector":{"disk":"ssd"})",
                 .event =
                     [](Cluster& c) {
                       Check(c.Patch(Resource::kNodes, "node1",
                                     R"({"metadata":{"labels":{"disk":"nvme"}}})"));
                     },
                 .retried = false},
        HintCase{.name = "NodeAddedMatchingTheRequiredAffinity",
                 .nodes = {NodeJson("node1", "{}", R"({"zone":"a"})")},
                 .pod_extra = std::string(kRequiresZoneB),
                 .event =
                     [](Cluster& c) {
                       c.Create(Resource::kNodes, NodeJson("node2", "{}", R"({"zone":"b"})"));
                     },
                 .retried = true,
                 .bound_to = "node2"},
        HintCase{.name = "NodeAddedNotMatchingTheRequiredAffinity",
                 .nodes = {NodeJson("node1", "{}", R"({"zone":"a"})")},
                 .pod_extra = std::string(kRequiresZoneB),
                 .event =
                     [](Cluster& c) {
                       c.Create(Resource::kNodes, NodeJson("node2", "{}", R"({"zone":"c"})"));
                     },
                 .retried = false},
        // NodeResourcesFit: resources freed where the pod could go, or a node big enough.
        HintCase{.name = "AssignedPodDeletedFreeingResources",
                 .nodes = {NodeJson("node1", "{}", "{}", "1")},
                 .bound_pods = {PodJson("big", "", "800m")},
                 .pod_cpu = "500m",
                 .event = [](Cluster& c) { Check(c.Delete(Resource::kPods, "big")); },
                 .retried = true,
                 .bound_to = "node1"},
        HintCase{.name = "PendingPodDeletedFreesNothing",
                 .nodes = {NodeJson("node1", "{}", "{}", "1")},
                 .bound_pods = {PodJson("big", "", "800m"),
                                PodJson("stuck", R"("nodeSelector":{"no":"such"})")},
                 .pod_cpu = "500m",
                 .event = [](Cluster& c) { Check(c.Delete(Resource::kPods, "stuck")); },
                 .retried = false},
        HintCase{.name = "NodeAllocatableGrew",
                 .nodes = {NodeJson("node1", "{}", "{}", "1")},
                 .bound_pods = {PodJson("big", "", "800m")},
                 .pod_cpu = "500m",
                 .event =
                     [](Cluster& c) {
                       Check(c.Patch(
                           Resource::kNodes, "node1",
                           R"({"status":{"capacity":{"cpu":"2"},"allocatable":{"cpu":"2"}}})",
                           server::Subresource::kStatus));
                     },
                 .retried = true,
                 .bound_to = "node1"},
        HintCase{.name = "NodeAddedTooSmallForThePod",
                 .nodes = {NodeJson("node1", "{}", "{}", "1")},
                 .bound_pods = {PodJson("big", "", "800m")},
                 .pod_cpu = "500m",
                 .event =
                     [](Cluster& c) {
                       c.Create(Resource::kNodes, NodeJson("node2", "{}", "{}", "100m"));
                     },
                 .retried = false}),
    [](const ::testing::TestParamInfo<HintCase>& info) { return info.param.name; });

TEST(QueueClusterTest, UnhelpedPodIsRetriedByTheLeftoverFlushAfterFiveMinutes) {
  Cluster c;
  c.Create(Resource::kNodes, NodeJson("node1", kTaintA));
  c.Create(Resource::kPods, PodJson("p"));
  c.Settle();
  ASSERT_EQ(c.NodeOf("p"), "");
  const uint64_t attempts = c.scheduler->AttemptCount();
  // The flush runs every 30 s and takes pods parked more than five minutes: not at 5:00 ...
  c.Advance(minutes(5));
  EXPECT_EQ(c.scheduler->AttemptCount(), attempts);
  EXPECT_TRUE(c.scheduler->queue().IsParked(UidOf(c, "p")));
  // ... but at 5:30, once; then it is parked again for another five minutes.
  c.Advance(seconds(30));
  EXPECT_EQ(c.scheduler->AttemptCount(), attempts + 1);
  EXPECT_EQ(c.NodeOf("p"), "");
  c.Advance(seconds(30));
  EXPECT_EQ(c.scheduler->AttemptCount(), attempts + 1);
}

TEST(QueueClusterTest, GatedPodIsNeverAttemptedUntilItsGatesAreGone) {
  Cluster c;
  c.Create(Resource::kNodes, NodeJson("node1"));
  c.Create(
      Resource::kPods,
      PodJson("gated", R"("schedulingGates":[{"name":"example.com/a"},{"name":"example.com/b"}])"));
  c.Settle();
  // Events and time do not release it.
  c.Create(Resource::kNodes, NodeJson("node2"));
  c.Settle();
  c.Advance(minutes(10));
  EXPECT_EQ(c.scheduler->AttemptCount(), 0u);
  EXPECT_EQ(c.NodeOf("gated"), "");
  const api::Condition* cond = c.PodCondition("gated", "PodScheduled");
  ASSERT_NE(cond, nullptr);
  EXPECT_EQ(cond->reason, "SchedulingGated");
  // One gate of two removed (gates may only be removed): still gated.
  Check(c.Patch(Resource::kPods, "gated",
                R"({"spec":{"schedulingGates":[{"$patch":"delete","name":"example.com/a"}]}})"));
  c.Settle();
  EXPECT_EQ(c.scheduler->AttemptCount(), 0u);
  EXPECT_EQ(c.NodeOf("gated"), "");
  Check(c.Patch(Resource::kPods, "gated", R"({"spec":{"schedulingGates":null}})"));
  c.Settle();
  EXPECT_EQ(c.scheduler->AttemptCount(), 1u);
  EXPECT_NE(c.NodeOf("gated"), "");
}

}  // namespace
}  // namespace kt::scheduler
