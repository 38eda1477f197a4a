// The taint eviction controller against upstream's tests (semantics.md §11.8), on a simulated
// clock: every "deleted at +N s" is checked to the nanosecond, every "never" over 200 s.
#include "controllers/tainteviction/controller.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "controllers/tainteviction/testing.h"

namespace kt::controllers::tainteviction {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::Cluster;
using testing::Fault;

std::string Name(std::string_view prefix, int a, int b = -1) {
  std::string out(prefix);
  out.append(std::to_string(a));
  if (b >= 0) out.append("-").append(std::to_string(b));
  return out;
}

Taint NoExecute(std::string key, std::string value = "") {
  return Taint{std::move(key), std::move(value), std::string(kEffectNoExecute), std::nullopt};
}

Toleration Tolerate(std::string key, std::optional<int64_t> seconds) {
  return Toleration{std::move(key), "Exists", "", std::string(kEffectNoExecute), seconds};
}

TEST(DecideTest, FirstMatchThenMinimumTime) {
  const std::vector<Taint> t1 = {NoExecute("a")};
  const std::vector<Taint> t12 = {NoExecute("a"), NoExecute("b")};
  EXPECT_EQ(Decide({}, {}, false).kind, Decision::kNone);
  EXPECT_EQ(Decide(t1, {}, false).kind, Decision::kNow);
  EXPECT_EQ(Decide(t1, std::vector{Tolerate("b", std::nullopt)}, false).kind, Decision::kNow);
  EXPECT_EQ(Decide(t1, std::vector{Tolerate("a", std::nullopt)}, false).kind, Decision::kStay);
  Decision d = Decide(t12, std::vector{Tolerate("a", 300), Tolerate("b", 60)}, false);
  EXPECT_EQ(d.kind, Decision::kAfter);
  EXPECT_EQ(d.seconds, 60);
  // The first toleration that matches a taint is the one used, even if a later one would
  // tolerate it for ever (GetMatchingTolerations).
  d = Decide(t1, std::vector{Tolerate("a", 5), Tolerate("a", std::nullopt)}, false);
  EXPECT_EQ(d.kind, Decision::kAfter);
  EXPECT_EQ(d.seconds, 5);
  EXPECT_EQ(Decide(t1, std::vector{Tolerate("a", 0)}, false).kind, Decision::kNow);
  EXPECT_EQ(Decide(t1, std::vector{Tolerate("a", -5)}, false).kind, Decision::kNow);
  EXPECT_EQ(Decide(t12, std::vector{Tolerate("a", 300), Tolerate("b", 0)}, false).kind,
            Decision::kNow);
  // Upstream's nanosecond conversion overflows above ~9.2e9 s; here the time is clamped.
  d = Decide(t1, std::vector{Tolerate("a", int64_t{10'000'000'000})}, false);
  EXPECT_EQ(d.kind, Decision::kAfter);
  EXPECT_EQ(d.seconds, kMaxTolerationSeconds);
}

// One row of §11.8's single-pod tables: node1's taints, pod1 (on `pod_node` with
// `tolerations`), then an action at t0; pod1 must be deleted exactly `delete_at` seconds after t0
// (0: at once), or never (-1: still there 200 s later, without the DisruptionTarget patch).
struct Row {
  const char* id;
  bool node_before;  // node1 exists before the pod
  std::vector<int> taints_before;
  const char* pod_node;
  std::vector<std::string> tolerations;
  enum Action { kNone, kBind, kCreateNode, kUpdateNode, kLongerToleration } action;
  std::vector<int> taints_after;
  int delete_at;
};

class SinglePodTest : public ::testing::TestWithParam<Row> {};

TEST_P(SinglePodTest, DeletedAtTheRightTimeOrNever) {
  const Row& row = GetParam();
  Cluster c;
  auto taints = [&](const std::vector<int>& ids) {
    std::vector<std::string> out;
    for (int i : ids) out.push_back(c.Taint(i));
    return out;
  };
  if (row.node_before) c.SetNodeTaints("node1", taints(row.taints_before));
  c.Settle();
  const client::Time t0 = c.clock.Now();
  c.CreatePod("pod1", row.pod_node, row.tolerations);
  switch (row.action) {
    case Row::kNone:
      break;
    case Row::kBind:
      c.BindPod("pod1", "node1");
      break;
    case Row::kCreateNode:
    case Row::kUpdateNode:
      c.SetNodeTaints("node1", taints(row.taints_after));
      break;
    case Row::kLongerToleration:
      c.Settle();  // the countdown starts with the shorter time
      c.Advance(milliseconds(500));
      c.SetTolerations("pod1", {Cluster::Tol(1, 100)});
      break;
  }
  c.Settle();
  if (row.delete_at < 0) {
    c.Advance(seconds(200));
    EXPECT_TRUE(c.Exists("pod1")) << row.id;
    EXPECT_EQ(c.PatchesOf("pod1"), 0u) << row.id;
    EXPECT_TRUE(c.DeletesOf("pod1").empty()) << row.id;
    return;
  }
  if (row.delete_at > 0) {
    c.AdvanceTo(t0 + seconds(row.delete_at) - milliseconds(1));
    EXPECT_TRUE(c.Exists("pod1")) << row.id << ": deleted before its time";
    c.AdvanceTo(t0 + seconds(row.delete_at));
  }
  EXPECT_FALSE(c.Exists("pod1")) << row.id;
  const auto deletes = c.DeletesOf("pod1");
  ASSERT_EQ(deletes.size(), 1u) << row.id;
  EXPECT_EQ(deletes[0].at, t0 + seconds(row.delete_at)) << row.id;
  EXPECT_EQ(c.PatchesOf("pod1"), 1u) << row.id;
}

const std::string kTol1Forever = Cluster::Tol(1);
const std::string kTol1For100 = Cluster::Tol(1, 100);

INSTANTIATE_TEST_SUITE_P(
    Upstream, SinglePodTest,
    ::testing::Values(
        // CreatePod (EP1-EP6).
        Row{"EP1", false, {}, "", {}, Row::kNone, {}, -1},
        Row{"EP2", true, {}, "node1", {}, Row::kNone, {}, -1},
        Row{"EP3", true, {1}, "node1", {}, Row::kNone, {}, 0},
        Row{"EP4", true, {1}, "node1", {kTol1For100}, Row::kNone, {}, 100},
        Row{"EP5", true, {1}, "node1", {kTol1Forever}, Row::kNone, {}, -1},
        Row{"EP6", true, {1}, "node1", {Cluster::Tol(2)}, Row::kNone, {}, 0},
        // UpdatePod (EU1, EU2, EU4; EU3 removes tolerations, which the API refuses).
        Row{"EU1", true, {1}, "", {}, Row::kBind, {}, 0},
        Row{"EU2", true, {1}, "", {kTol1Forever}, Row::kBind, {}, -1},
        Row{"EU4", true, {1}, "node1", {Cluster::Tol(1, 1)}, Row::kLongerToleration, {}, 1},
        // CreateNode / UpdateNode (EN1-EN3, EN5-EN7, EN9).
        Row{"EN1", false, {}, "node1", {}, Row::kCreateNode, {}, -1},
        Row{"EN2", false, {}, "node1", {}, Row::kCreateNode, {1}, 0},
        Row{"EN3", false, {}, "node1", {kTol1Forever}, Row::kCreateNode, {1}, -1},
        Row{"EN5", true, {}, "node1", {}, Row::kUpdateNode, {1}, 0},
        Row{"EN6", true, {}, "node1", {kTol1For100}, Row::kUpdateNode, {1}, 100},
        Row{"EN7", true, {}, "node1", {kTol1For100}, Row::kUpdateNode, {1, 2}, 0},
        Row{"EN9",
            true,
            {},
            "node1",
            {Cluster::Tol(1, 1), Cluster::Tol(2, 100)},
            Row::kUpdateNode,
            {1, 2},
            1},
        // Beyond upstream's table: a taint the pod does not tolerate beside one it does.
        Row{"X1", true, {}, "node1", {kTol1Forever}, Row::kUpdateNode, {1, 2}, 0},
        // A tolerationSeconds past what nanoseconds since 1970 hold from now: a very long wait,
        // not an overflow into "now" (upstream's overflow turns it into "for ever").
        Row{"X2", true, {1}, "node1", {Cluster::Tol(1, 10'000'000'000)}, Row::kNone, {}, -1},
        Row{"X3", true, {1}, "node1", {Cluster::Tol(1, 7'500'000'000)}, Row::kNone, {}, -1}),
    [](const ::testing::TestParamInfo<Row>& info) { return std::string(info.param.id); });

TEST(TaintEvictionTest, OnlyNoExecuteTaintsEvict) {
  Cluster c;
  c.SetNodeTaints("node1", {c.Taint(1, "NoSchedule"), c.Taint(2, "PreferNoSchedule")});
  c.CreatePod("pod1", "node1", {});
  c.Advance(seconds(200));
  EXPECT_TRUE(c.Exists("pod1"));
  EXPECT_FALSE(c.controller->NodeTainted("node1"));
}

TEST(TaintEvictionTest, EP7DeletingAPodWithPendingEvictionCancelsIt) {
  Cluster c;
  c.SetNodeTaints("node1", {c.Taint(1)});
  c.CreatePod("pod1", "node1", {kTol1For100});
  c.Settle();
  ASSERT_EQ(c.controller->PendingCount(), 1u);
  c.DeletePod("pod1");
  c.Settle();
  EXPECT_EQ(c.controller->PendingCount(), 0u);
  c.Advance(seconds(200));
  EXPECT_TRUE(c.DeletesOf("pod1").empty());
}

TEST(TaintEvictionTest, EN4ADeletedNodeLeavesTheTaintedNodes) {
  Cluster c;
  c.SetNodeTaints("node1", {c.Taint(1)});
  c.Settle();
  EXPECT_TRUE(c.controller->NodeTainted("node1"));
  c.DeleteNode("node1");
  c.Settle();
  EXPECT_FALSE(c.controller->NodeTainted("node1"));
}

TEST(TaintEvictionTest, EN8ATaintRemovedBeforeTheControllerSawItDoesNothing) {
  Cluster c;
  c.SetNodeTaints("node1", {});
  c.CreatePod("pod1", "node1", {Cluster::Tol(1, 1)});
  c.Settle();
  c.SetNodeTaints("node1", {c.Taint(1)});
  c.SetNodeTaints("node1", {});
  c.Settle();
  c.Advance(milliseconds(1500));
  EXPECT_TRUE(c.Exists("pod1"));
  EXPECT_EQ(c.PatchesOf("pod1"), 0u);
}

// TestUpdateNodeWithMultipleTaints (M1-M4).
TEST(TaintEvictionTest, MultipleTaintsStartAndCancelTheCountdown) {
  Cluster c;
  const std::string forever = R"({"key":"testTaint1","operator":"Exists","effect":"NoExecute"})";
  const std::string sixty =
      R"({"key":"testTaint2","operator":"Exists","effect":"NoExecute","tolerationSeconds":60})";
  c.SetNodeTaints("node1", {});
  c.CreatePod("pod1", "node1", {forever, sixty});
  c.Settle();
  EXPECT_EQ(c.controller->PendingCount(), 0u);  // M1
  c.SetNodeTaints("node1", {c.Taint(1)});
  c.Settle();
  EXPECT_EQ(c.controller->PendingCount(), 0u);  // M2: tolerated for ever
  const client::Time t3 = c.clock.Now();
  c.SetNodeTaints("node1", {c.Taint(1), c.Taint(2)});
  c.Settle();
  auto pending = c.controller->Pending();  // M3: a countdown of 60 s
  ASSERT_EQ(pending.size(), 1u);
  EXPECT_EQ(pending[0].fire_at, t3 + seconds(60));
  c.SetNodeTaints("node1", {c.Taint(1)});
  c.Settle();
  EXPECT_EQ(c.controller->PendingCount(), 0u);  // M4: cancelled, with an event
  EXPECT_TRUE(c.HasEvent("Cancelling deletion of Pod default/pod1"));
  c.Advance(seconds(120));
  EXPECT_TRUE(c.Exists("pod1"));
}

// TestUpdateNodeWithMultiplePods (MP1, MP2).
TEST(TaintEvictionTest, MultiplePodsOnOneNode) {
  for (bool both : {false, true}) {
    Cluster c;
    c.SetNodeTaints("node1", {});
    c.CreatePod("pod1", "node1", {});
    c.CreatePod("pod2", "node1", {Cluster::Tol(1, 1)});
    c.CreatePod("pod3", "node1", {kTol1Forever});
    c.Settle();
    const client::Time t0 = c.clock.Now();
    if (both) {
      c.SetNodeTaints("node1", {c.Taint(1), c.Taint(2)});
    } else {
      c.SetNodeTaints("node1", {c.Taint(1)});
    }
    c.Settle();
    EXPECT_FALSE(c.Exists("pod1"));
    EXPECT_EQ(c.Exists("pod2"), !both);
    EXPECT_EQ(c.Exists("pod3"), !both);
    c.Advance(seconds(1));
    EXPECT_FALSE(c.Exists("pod2"));
    if (!both) {
      EXPECT_EQ(c.DeletesOf("pod2").at(0).at, t0 + seconds(1));
    }
    c.Advance(seconds(200));
    EXPECT_EQ(c.Exists("pod3"), !both);
  }
}

// TestEventualConsistency (EC1-EC4): pods that come to the tainted node later are handled too.
TEST(TaintEvictionTest, PodsArrivingLaterAreHandled) {
  Cluster c;
  c.SetNodeTaints("node1", {});
  c.CreatePod("pod1", "node1", {});
  c.CreatePod("ec1", "", {});
  c.CreatePod("ec2", "", {kTol1For100});
  c.Settle();
  const client::Time t0 = c.clock.Now();
  c.SetNodeTaints("node1", {c.Taint(1)});
  c.Settle();
  EXPECT_FALSE(c.Exists("pod1"));
  c.BindPod("ec1", "node1");
  c.BindPod("ec2", "node1");
  c.CreatePod("ec3", "node1", {});
  c.CreatePod("ec4", "node1", {kTol1For100});
  c.Settle();
  EXPECT_FALSE(c.Exists("ec1"));
  EXPECT_FALSE(c.Exists("ec3"));
  EXPECT_TRUE(c.Exists("ec2"));
  EXPECT_TRUE(c.Exists("ec4"));
  c.Advance(seconds(100));
  EXPECT_FALSE(c.Exists("ec2"));
  EXPECT_FALSE(c.Exists("ec4"));
  EXPECT_EQ(c.DeletesOf("ec2").at(0).at, t0 + seconds(100));
}

// TestPodDeletionEvent (EV1, EV2): reason, type, source and the involved object.
TEST(TaintEvictionTest, EventsAsUpstream) {
  Cluster c;
  c.SetNodeTaints("node1", {});
  const std::string gone_uid = c.CreatePod("gone", "node1", {});
  const std::string kept_uid = c.CreatePod("kept", "node1", {kTol1For100});
  c.Settle();
  c.SetNodeTaints("node1", {c.Taint(1)});
  c.Settle();
  c.SetNodeTaints("node1", {});
  c.Settle();
  ASSERT_TRUE(c.HasEvent("Marking for deletion Pod default/gone"));
  ASSERT_TRUE(c.HasEvent("Cancelling deletion of Pod default/kept"));
  int seen = 0;
  for (const server::ObjectPtr& e : c.List(server::Resource::kEvents)) {
    const std::string& json = *e->json;
    if (json.find("TaintManagerEviction") == std::string::npos) continue;
    ++seen;
    EXPECT_NE(json.find(R"("type":"Normal")"), std::string::npos) << json;
    EXPECT_NE(json.find(R"("component":"taint-eviction-controller")"), std::string::npos) << json;
    EXPECT_NE(json.find(R"("kind":"Pod")"), std::string::npos) << json;
    EXPECT_NE(json.find(R"("count":1)"), std::string::npos) << json;
    // The involved object names the pod with its UID (upstream leaves it out, which hides the
    // events from `kubectl describe pod`).
    const size_t involved = json.find("\"involvedObject\"");
    ASSERT_NE(involved, std::string::npos);
    const size_t end = json.find('}', involved);
    const std::string ref = json.substr(involved, end - involved);
    EXPECT_TRUE(ref.find(gone_uid) != std::string::npos || ref.find(kept_uid) != std::string::npos)
        << json;
  }
  EXPECT_EQ(seen, 2);
}

TEST(TaintEvictionTest, ConditionBeforeTheDelete) {
  Cluster c;
  c.SetNodeTaints("node1", {});
  c.CreatePod("pod1", "node1", {});
  c.Settle();
  // Hold the delete (it fails once), so the condition can be seen on the pod.
  c.client->InjectDeleteFaults({Fault::kError});
  c.SetNodeTaints("node1", {c.Taint(1)});
  c.Settle();
  server::ObjectPtr pod = c.GetPod("pod1");
  ASSERT_TRUE(pod);
  const api::Condition* dt = nullptr;
  for (const api::Condition& cond : pod->As<api::Pod>()->status.conditions) {
    if (cond.type == "DisruptionTarget") dt = &cond;
  }
  ASSERT_NE(dt, nullptr);
  EXPECT_EQ(dt->status, "True");
  EXPECT_EQ(dt->reason, "DeletionByTaintManager");
  EXPECT_EQ(dt->message, "Taint manager: deleting due to NoExecute taint");
  EXPECT_EQ(dt->last_transition_time, FormatRfc3339(c.clock.Now()));
  c.Advance(milliseconds(100));
  EXPECT_FALSE(c.Exists("pod1"));
  EXPECT_EQ(c.PatchesOf("pod1"), 1u);  // the retry does not patch again
}

// Failed deletes are retried with exponential backoff until the pod is gone (#140639).
TEST(TaintEvictionTest, FailedDeletesAreRetriedUntilThePodIsGone) {
  Cluster c;
  c.SetNodeTaints("node1", {});
  c.CreatePod("pod1", "node1", {});
  c.Settle();
  c.client->InjectDeleteFaults({Fault::kError, Fault::kConflict, Fault::kError, Fault::kError});
  const client::Time t0 = c.clock.Now();
  c.SetNodeTaints("node1", {c.Taint(1)});
  c.Settle();
  EXPECT_TRUE(c.Exists("pod1"));
  // Retries after 100, 200, 400 ms, then 800 ms: the fifth attempt succeeds at +1.5 s.
  c.Advance(milliseconds(1499));
  EXPECT_TRUE(c.Exists("pod1"));
  c.Advance(milliseconds(1));
  EXPECT_FALSE(c.Exists("pod1"));
  ASSERT_EQ(c.DeletesOf("pod1").size(), 1u);
  EXPECT_EQ(c.DeletesOf("pod1")[0].at, t0 + milliseconds(1500));
  EXPECT_EQ(c.controller->PendingCount(), 0u);
}

// A delete that succeeded although the controller saw a timeout: the retry finds the pod gone.
TEST(TaintEvictionTest, ATimedOutDeleteThatWorkedIsNotRepeated) {
  Cluster c;
  c.SetNodeTaints("node1", {});
  c.CreatePod("pod1", "node1", {});
  c.Settle();
  c.client->InjectDeleteFaults({Fault::kTimeout});
  c.SetNodeTaints("node1", {c.Taint(1)});
  c.Settle();
  EXPECT_FALSE(c.Exists("pod1"));
  c.Advance(seconds(10));
  EXPECT_EQ(c.DeletesOf("pod1").size(), 1u);
  EXPECT_EQ(c.controller->PendingCount(), 0u);
}

// A pod re-created under the same name while the old one's eviction was being retried is a
// different pod: the UID precondition and the live re-read keep it (#139992).
TEST(TaintEvictionTest, APodRecreatedUnderTheSameNameIsNotEvictedByMistake) {
  Cluster c;
  c.SetNodeTaints("node1", {});
  const std::string old_uid = c.CreatePod("web-0", "node1", {});
  c.Settle();
  c.client->InjectDeleteFaults({Fault::kError});
  c.SetNodeTaints("node1", {c.Taint(1)});
  c.Settle();
  ASSERT_TRUE(c.Exists("web-0"));
  // The user replaces the pod with one that tolerates the taint for ever.
  c.DeletePod("web-0");
  const std::string new_uid = c.CreatePod("web-0", "node1", {kTol1Forever});
  ASSERT_NE(old_uid, new_uid);
  c.Advance(seconds(60));
  ASSERT_TRUE(c.Exists("web-0"));
  EXPECT_EQ(c.GetPod("web-0")->meta().uid, new_uid);
  EXPECT_TRUE(c.DeletesOf("web-0").empty());
}

// The stale-key bug (§6.5, R1-R4; upstream #107543, #125332): taint, evict, untaint, re-create
// the pod under the same name, taint again: the new pod is evicted too.
TEST(TaintEvictionTest, R1ToR4AReAddedTaintEvictsARecreatedPod) {
  Cluster c;
  c.SetNodeTaints("node1", {});
  const std::string first = c.CreatePod("web-0", "node1", {});
  c.Settle();
  c.SetNodeTaints("node1", {R"({"key":"k","effect":"NoExecute"})"});  // R1
  c.Settle();
  EXPECT_FALSE(c.Exists("web-0"));  // R2
  c.SetNodeTaints("node1", {});     // R3
  const std::string second = c.CreatePod("web-0", "node1", {});
  c.Settle();
  EXPECT_TRUE(c.Exists("web-0"));
  c.SetNodeTaints("node1", {R"({"key":"k","effect":"NoExecute"})"});  // R4
  c.Settle();
  EXPECT_FALSE(c.Exists("web-0"));
  const auto deletes = c.DeletesOf("web-0");
  ASSERT_EQ(deletes.size(), 2u);
  EXPECT_EQ(deletes[0].uid, first);
  EXPECT_EQ(deletes[1].uid, second);
}

// The timed worker queue (W1-W4), seen through pods: duplicates are not added twice, cancelled
// work does not run, work added again after a cancel does.
TEST(TaintEvictionTest, PendingWorkIsNeitherDuplicatedNorLost) {
  Cluster c;
  c.SetNodeTaints("node1", {});
  for (int i = 1; i <= 5; ++i) c.CreatePod(Name("p", i), "node1", {Cluster::Tol(1, 10)});
  c.Settle();
  c.SetNodeTaints("node1", {c.Taint(1)});
  c.Settle();
  EXPECT_EQ(c.controller->PendingCount(), 5u);
  // The same taints again (a new timeAdded): the countdowns stand, none is added twice (W2).
  c.Advance(seconds(5));
  c.SetNodeTaints("node1", {c.Taint(1)});
  c.Settle();
  EXPECT_EQ(c.controller->PendingCount(), 5u);
  // Two pods go away (their work is cancelled, W3); one comes back (W4).
  c.DeletePod("p2");
  c.DeletePod("p4");
  c.Settle();
  EXPECT_EQ(c.controller->PendingCount(), 3u);
  c.CreatePod("p2", "node1", {Cluster::Tol(1, 10)});
  c.Settle();
  EXPECT_EQ(c.controller->PendingCount(), 4u);
  c.Advance(seconds(5));  // the first three run out
  for (const char* p : {"p1", "p3", "p5"}) EXPECT_FALSE(c.Exists(p)) << p;
  EXPECT_TRUE(c.Exists("p2"));
  c.Advance(seconds(5));
  EXPECT_FALSE(c.Exists("p2"));
  size_t deleted = 0;
  for (const auto& call : c.client->Deletes()) deleted += call.deleted;
  EXPECT_EQ(deleted, 4u);
}

// A toleration added to a pod with a countdown so that it tolerates for ever cancels it.
TEST(TaintEvictionTest, ATolerationForEverCancelsTheCountdown) {
  Cluster c;
  c.SetNodeTaints("node1", {c.Taint(1), c.Taint(2)});
  c.CreatePod("pod1", "node1", {Cluster::Tol(1), Cluster::Tol(2, 30)});
  c.Settle();
  EXPECT_EQ(c.controller->PendingCount(), 1u);
  c.SetTolerations("pod1", {Cluster::Tol(1), Cluster::Tol(2, 30), Cluster::Tol(2)});
  c.Settle();
  // The first matching toleration of testTaint2 is still the 30 s one: nothing changes.
  EXPECT_EQ(c.controller->PendingCount(), 1u);
  c.Advance(seconds(30));
  EXPECT_FALSE(c.Exists("pod1"));
}

TEST(TaintEvictionTest, ManyPodsOnManyNodes) {
  Cluster c;
  for (int n = 0; n < 20; ++n) c.SetNodeTaints(Name("n", n), {});
  for (int n = 0; n < 20; ++n) {
    for (int p = 0; p < 10; ++p) {
      c.CreatePod(Name("p", n, p), Name("n", n),
                  p % 2 == 0 ? std::vector<std::string>{} : std::vector{Cluster::Tol(1, p)});
    }
  }
  c.Settle();
  for (int n = 0; n < 20; ++n) c.SetNodeTaints(Name("n", n), {c.Taint(1)});
  c.Settle();
  for (int n = 0; n < 20; ++n) {
    for (int p = 0; p < 10; p += 2) EXPECT_FALSE(c.Exists(Name("p", n, p)));
  }
  EXPECT_EQ(c.controller->PendingCount(), 100u);
  c.Advance(seconds(9));
  EXPECT_EQ(c.controller->PendingCount(), 0u);
  EXPECT_TRUE(c.List(server::Resource::kPods).empty());
}

// A pod with a grace period is deleted gracefully: it stays Terminating until its kubelet ends
// the deletion, and the controller neither deletes it again nor loses track of it meanwhile.
TEST(TaintEvictionTest, AGracefullyDeletedPodIsEvictedOnceAndLeftTerminating) {
  Cluster c;
  c.SetNodeTaints("node1", {});
  c.CreatePod("pod1", "node1", {}, "default", /*grace=*/30);
  c.Settle();
  c.SetNodeTaints("node1", {c.Taint(1)});
  c.Settle();
  server::ObjectPtr pod = c.GetPod("pod1");
  ASSERT_TRUE(pod);
  EXPECT_TRUE(pod->meta().deletion_timestamp.has_value());
  EXPECT_EQ(pod->meta().deletion_grace_period_seconds, 30);
  c.Advance(std::chrono::seconds(60));
  EXPECT_EQ(c.DeletesOf("pod1").size(), 1u);
  EXPECT_EQ(c.PatchesOf("pod1"), 1u);
}

// The controller on its own thread, its timers on a simulated clock that stays put: nothing but a
// wake-up makes it act. Pods bound while no node has a NoExecute taint do not wake it; the taint
// does, and a pod bound to the tainted node afterwards wakes it at once.
class ThreadedCluster : public controllers::testing::ApiCluster {
 public:
  ThreadedCluster() {
    Controller::Options o;
    o.clock = &clock;
    o.client = inner_;
    o.pods = client::NewCacheListerWatcher(&registry_->cache(server::Resource::kPods));
    o.nodes = client::NewCacheListerWatcher(&registry_->cache(server::Resource::kNodes));
    controller = std::make_unique<Controller>(std::move(o));
    controller->Start();
  }
  ~ThreadedCluster() override { controller->Stop(); }

  // Creates a pod bound to `node`, without reading it back (it may be gone at once).
  void CreateBound(const std::string& name, const std::string& node) {
    Must(inner_->CreateSync(
        server::Resource::kPods, "default",
        Cat({R"({"metadata":{"name":")", name,
             R"("},"spec":{"containers":[{"name":"c","image":"x"}],"nodeName":")", node,
             R"(","terminationGracePeriodSeconds":0}})"})));
    SyncCaches();  // the caches as of this write (SetNodeTaints reads the node's)
  }

  // Polls, with a deadline, until the controller's attention is `want`.
  bool AttentionIs(bool want) {
    const auto deadline = std::chrono::steady_clock::now() + seconds(20);
    while (std::chrono::steady_clock::now() < deadline) {
      if (controller->Attentive() == want) return true;
      std::this_thread::sleep_for(milliseconds(2));
    }
    return false;
  }

  // Polls, with a deadline, until none of `names` exists.
  bool AllGone(const std::vector<std::string>& names) {
    const auto deadline = std::chrono::steady_clock::now() + seconds(20);
    while (std::chrono::steady_clock::now() < deadline) {
      bool any = false;
      for (const std::string& n : names) any = any || Exists(n);
      if (!any) return true;
      std::this_thread::sleep_for(milliseconds(2));
    }
    return false;
  }

  std::unique_ptr<Controller> controller;

 protected:
  size_t RunControllers() override { return 0; }
  bool WritesInFlight() const override { return controller->InFlight() > 0; }
};

TEST(TaintEvictionThreadTest, WakesForPodsOnlyOnceSomeNodeHasANoExecuteTaint) {
  ThreadedCluster c;
  const auto deadline = std::chrono::steady_clock::now() + seconds(20);
  while (!c.controller->HasSynced() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(2));
  }
  ASSERT_TRUE(c.controller->HasSynced());
  c.SetNodeTaints("node1", {});
  std::vector<std::string> early;
  for (int i = 0; i < 40; ++i) {
    early.push_back(Name("early", i));
    c.CreateBound(early.back(), "node1");
  }
  EXPECT_FALSE(c.controller->Attentive());
  c.SetNodeTaints("node1", {c.Taint(1)});
  EXPECT_TRUE(c.AllGone(early));
  EXPECT_TRUE(c.AttentionIs(true));
  c.CreateBound("late", "node1");
  EXPECT_TRUE(c.AllGone({"late"}));
  // Untainted again: pods bound to it now stay, and do not wake the controller.
  c.SetNodeTaints("node1", {});
  EXPECT_TRUE(c.AttentionIs(false));
  c.CreateBound("stays", "node1");
  c.SetNodeTaints("node2", {c.Taint(1)});
  c.CreateBound("late2", "node2");
  EXPECT_TRUE(c.AllGone({"late2"}));
  EXPECT_TRUE(c.Exists("stays"));
}

}  // namespace
}  // namespace kt::controllers::tainteviction
