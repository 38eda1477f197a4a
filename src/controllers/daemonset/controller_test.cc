// The DaemonSet controller: semantics.md §11.10 rows D1–D7 as tables, then the controller on a
// simulated clock over a real Registry (testing.h), with the scheduler's and the kubelets' parts
// played by the test.
#include "controllers/daemonset/controller.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "api/codec.h"
#include "controllers/daemonset/testing.h"
#include "controllers/daemonset/util.h"

namespace kt::controllers::daemonset {
namespace {

using std::chrono::seconds;
using testing::Cluster;

Toleration Tol(std::string key, std::string op, std::string effect,
               std::optional<int64_t> seconds = std::nullopt, std::string value = "") {
  return Toleration{std::move(key), std::move(op), std::move(value), std::move(effect), seconds};
}
Taint MakeTaint(std::string key, std::string value, std::string effect) {
  return Taint{std::move(key), std::move(value), std::move(effect), std::nullopt};
}

const std::vector<Toleration> kSix = {
    Tol("node.kubernetes.io/not-ready", "Exists", "NoExecute"),
    Tol("node.kubernetes.io/unreachable", "Exists", "NoExecute"),
    Tol("node.kubernetes.io/disk-pressure", "Exists", "NoSchedule"),
    Tol("node.kubernetes.io/memory-pressure", "Exists", "NoSchedule"),
    Tol("node.kubernetes.io/pid-pressure", "Exists", "NoSchedule"),
    Tol("node.kubernetes.io/unschedulable", "Exists", "NoSchedule"),
};

// --- §11.10 D1–D3: AddOrUpdateDaemonPodTolerations --------------------------------------------

struct TolerationRow {
  const char* id;
  std::vector<Toleration> before;
  bool host_network;
  std::vector<Toleration> after;
};

class DaemonTolerationsTest : public ::testing::TestWithParam<TolerationRow> {};

TEST_P(DaemonTolerationsTest, AddsOrUpdatesInUpstreamOrder) {
  std::vector<Toleration> t = GetParam().before;
  AddOrUpdateDaemonPodTolerations(&t, GetParam().host_network);
  EXPECT_EQ(t, GetParam().after);
}

std::vector<Toleration> Plus(std::vector<Toleration> a, const std::vector<Toleration>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

INSTANTIATE_TEST_SUITE_P(
    Semantics, DaemonTolerationsTest,
    ::testing::Values(
        // D1: the six, in §8.6 order, no tolerationSeconds.
        TolerationRow{"D1", {}, false, kSix},
        // D2: hostNetwork adds network-unavailable.
        TolerationRow{
            "D2",
            {},
            true,
            Plus(kSix, {Tol("node.kubernetes.io/network-unavailable", "Exists", "NoSchedule")})},
        // D3: a 300 s not-ready toleration is replaced in place by the infinite one
        // (MatchToleration ignores tolerationSeconds); the other five are appended.
        TolerationRow{
            "D3", {Tol("node.kubernetes.io/not-ready", "Exists", "NoExecute", 300)}, false, kSix},
        // MatchToleration compares operators exactly: an Equal toleration is kept and the
        // daemon one appended; so is one with another effect.
        TolerationRow{"D3b",
                      {Tol("node.kubernetes.io/unreachable", "Equal", "NoExecute"),
                       Tol("node.kubernetes.io/not-ready", "Exists", "NoSchedule")},
                      false,
                      Plus({Tol("node.kubernetes.io/unreachable", "Equal", "NoExecute"),
                            Tol("node.kubernetes.io/not-ready", "Exists", "NoSchedule")},
                           kSix)},
        // An identical toleration already there: nothing changes, not even its place.
        TolerationRow{"D3c",
                      {Tol("foo", "Exists", ""),
                       Tol("node.kubernetes.io/unschedulable", "Exists", "NoSchedule")},
                      false,
                      {Tol("foo", "Exists", ""),
                       Tol("node.kubernetes.io/unschedulable", "Exists", "NoSchedule"), kSix[0],
                       kSix[1], kSix[2], kSix[3], kSix[4]}}),
    [](const auto& info) { return std::string(info.param.id); });

// --- §11.10 D4–D7: NodeShouldRunDaemonPod -----------------------------------------------------

struct PlacementRow {
  const char* id;
  std::vector<Taint> taints;
  std::vector<Toleration> template_tolerations;
  ShouldRun want;
};

class PlacementTest : public ::testing::TestWithParam<PlacementRow> {};

TEST_P(PlacementTest, ShouldRunAndShouldContinueRunning) {
  api::Node node;
  node.meta.name = "node1";
  node.spec.taints = GetParam().taints;
  api::DaemonSet ds;
  ds.template_.spec.tolerations = GetParam().template_tolerations;
  EXPECT_EQ(NodeShouldRunDaemonPod(node, ds), GetParam().want);
}

INSTANTIATE_TEST_SUITE_P(
    Semantics, PlacementTest,
    ::testing::Values(
        // D4: an untolerated NoSchedule taint: no new pod, the one there stays.
        PlacementRow{"D4", {MakeTaint("dedicated", "x", "NoSchedule")}, {}, {false, true}},
        // D5: an untolerated NoExecute taint: no pod, and the one there goes.
        PlacementRow{"D5", {MakeTaint("foo", "", "NoExecute")}, {}, {false, false}},
        // D6: a cordoned node: daemon pods tolerate the unschedulable taint.
        PlacementRow{"D6",
                     {MakeTaint("node.kubernetes.io/unschedulable", "", "NoSchedule")},
                     {},
                     {true, true}},
        // D7: not-ready NoExecute is tolerated for ever.
        PlacementRow{
            "D7", {MakeTaint("node.kubernetes.io/not-ready", "", "NoExecute")}, {}, {true, true}},
        // PreferNoSchedule never keeps a daemon pod away.
        PlacementRow{"prefer", {MakeTaint("a", "", "PreferNoSchedule")}, {}, {true, true}},
        // A template toleration of the taint makes the node eligible.
        PlacementRow{"tolerated",
                     {MakeTaint("dedicated", "x", "NoSchedule")},
                     {Tol("dedicated", "Equal", "NoSchedule", std::nullopt, "x")},
                     {true, true}},
        // not-ready NoSchedule (TaintNodesByCondition's) is not covered by the NoExecute
        // toleration: a node still starting gets no daemon pod.
        PlacementRow{"not-ready-noschedule",
                     {MakeTaint("node.kubernetes.io/not-ready", "", "NoSchedule")},
                     {},
                     {false, true}}),
    [](const auto& info) {
      std::string id = info.param.id;
      std::replace(id.begin(), id.end(), '-', '_');
      return id;
    });

TEST(PlacementTest, NodeNameSelectorAndAffinityExcludeForGood) {
  api::Node node;
  node.meta.name = "node1";
  node.meta.labels.Set("disk", "ssd");
  api::DaemonSet ds;
  EXPECT_EQ(NodeShouldRunDaemonPod(node, ds), (ShouldRun{true, true}));
  ds.template_.spec.node_name = "node2";
  EXPECT_EQ(NodeShouldRunDaemonPod(node, ds), (ShouldRun{false, false}));
  ds.template_.spec.node_name = "node1";
  EXPECT_EQ(NodeShouldRunDaemonPod(node, ds), (ShouldRun{true, true}));
  ds.template_.spec.node_selector.Set("disk", "hdd");
  EXPECT_EQ(NodeShouldRunDaemonPod(node, ds), (ShouldRun{false, false}));
  ds.template_.spec.node_selector = {};
  ds.template_.spec.node_affinity.emplace();
  ds.template_.spec.node_affinity->required.emplace();
  ds.template_.spec.node_affinity->required->terms.push_back(
      api::NodeSelectorTerm{{api::SelectorRequirement{"disk", "In", {"ssd"}}}, {}});
  EXPECT_EQ(NodeShouldRunDaemonPod(node, ds), (ShouldRun{true, true}));
  ds.template_.spec.node_affinity->required->terms[0].match_expressions[0].values = {"nvme"};
  EXPECT_EQ(NodeShouldRunDaemonPod(node, ds), (ShouldRun{false, false}));
}

TEST(UtilTest, HashIsStableAndFollowsTheTemplate) {
  auto hash = [](std::string_view json, std::optional<int32_t> collisions = std::nullopt) {
    Result<rapidjson::Document> d = api::ParseJson(json);
    return ComputeHash(*d, collisions);
  };
  const std::string a = hash(R"({"metadata":{"labels":{"app":"x"}},"spec":{"containers":[]}})");
  EXPECT_EQ(a, hash(R"({"spec":{"containers":[]},"metadata":{"labels":{"app":"x"}}})"));
  EXPECT_NE(a, hash(R"({"metadata":{"labels":{"app":"y"}},"spec":{"containers":[]}})"));
  EXPECT_NE(a, hash(R"({"metadata":{"labels":{"app":"x"}},"spec":{"containers":[]}})", 1));
  EXPECT_FALSE(a.empty());
  EXPECT_EQ(a.find_first_not_of("bcdfghjklmnpqrstvwxz2456789"), std::string::npos) << a;
}

TEST(UtilTest, ScaledIntOrPercentRoundsUp) {
  EXPECT_EQ(*ScaledValueFromIntOrPercent({false, 2, ""}, 10), 2);
  EXPECT_EQ(*ScaledValueFromIntOrPercent({true, 0, "10%"}, 15), 2);
  EXPECT_EQ(*ScaledValueFromIntOrPercent({true, 0, "100%"}, 3), 3);
  EXPECT_FALSE(ScaledValueFromIntOrPercent({true, 0, "10"}, 3));
}

TEST(UtilTest, AvailabilityWaitsForMinReadySeconds) {
  api::Pod pod;
  const client::Time t0 = client::SimulatedClock::kDefaultStart;
  EXPECT_FALSE(IsPodAvailable(pod, 0, t0));
  pod.status.conditions.push_back(
      api::Condition{"Ready", "True", "", "", FormatRfc3339(t0), "", "", 0});
  EXPECT_TRUE(IsPodReady(pod));
  EXPECT_TRUE(IsPodAvailable(pod, 0, t0));
  EXPECT_FALSE(IsPodAvailable(pod, 10, t0 + seconds(10)));
  EXPECT_TRUE(IsPodAvailable(pod, 10, t0 + seconds(11)));
}

// --- The controller ---------------------------------------------------------------------------

std::vector<std::string> Nodes(const std::map<std::string, std::vector<std::string>>& m) {
  std::vector<std::string> out;
  for (const auto& [node, pods] : m) {
    EXPECT_EQ(pods.size(), 1u) << node;
    out.push_back(node);
  }
  return out;
}

TEST(DaemonSetControllerTest, OnePodPerEligibleNodeAsUpstreamCreatesIt) {
  Cluster c;
  c.CreateNode("node1");
  c.CreateNode("node2");
  c.CreateNode("node3");
  c.CreateDaemonSet("agent", "", R"("hostNetwork":true)");
  EXPECT_EQ(Nodes(c.PodsByNode("agent")), (std::vector<std::string>{"node1", "node2", "node3"}));

  const api::DaemonSet ds = c.GetDaemonSet("agent");
  ASSERT_EQ(ds.meta.annotations.Get(kTemplateGenerationAnnotation) != nullptr, true);
  for (const api::Pod& pod : c.DaemonPods("agent")) {
    EXPECT_EQ(pod.meta.generate_name, "agent-");
    EXPECT_EQ(pod.meta.name.rfind("agent-", 0), 0u);
    ASSERT_EQ(pod.meta.owner_references.size(), 1u);
    const api::OwnerReference& ref = pod.meta.owner_references[0];
    EXPECT_EQ(ref.api_version, "apps/v1");
    EXPECT_EQ(ref.kind, "DaemonSet");
    EXPECT_EQ(ref.name, "agent");
    EXPECT_EQ(ref.uid, ds.meta.uid);
    EXPECT_TRUE(ref.controller);
    EXPECT_TRUE(ref.block_owner_deletion);
    EXPECT_EQ(*pod.meta.labels.Get("app"), "agent");
    EXPECT_EQ(*pod.meta.labels.Get("pod-template-generation"), "1");
    ASSERT_NE(pod.meta.labels.Get("controller-revision-hash"), nullptr);
    EXPECT_FALSE(pod.meta.labels.Get("controller-revision-hash")->empty());
    // Unbound, with the node affinity the default scheduler binds by.
    EXPECT_TRUE(pod.spec.node_name.empty());
    ASSERT_TRUE(pod.spec.node_affinity && pod.spec.node_affinity->required);
    ASSERT_EQ(pod.spec.node_affinity->required->terms.size(), 1u);
    const api::NodeSelectorTerm& term = pod.spec.node_affinity->required->terms[0];
    ASSERT_EQ(term.match_fields.size(), 1u);
    EXPECT_EQ(term.match_fields[0].key, "metadata.name");
    EXPECT_EQ(term.match_fields[0].op, "In");
    // hostNetwork: the seven tolerations.
    const std::vector<Toleration> tolerations(pod.spec.tolerations.begin(),
                                              pod.spec.tolerations.end());
    EXPECT_EQ(tolerations,
              Plus(kSix, {Tol("node.kubernetes.io/network-unavailable", "Exists", "NoSchedule")}));
  }
  EXPECT_TRUE(c.HasEvent("Created pod: " + c.DaemonPods("agent")[0].meta.name));
  EXPECT_TRUE(c.HasEvent("daemonset-controller"));

  // Nothing more happens: one pod per node, and the status says so.
  c.Advance(seconds(60));
  EXPECT_EQ(c.DaemonPods("agent").size(), 3u);
  const api::DaemonSet after = c.GetDaemonSet("agent");
  EXPECT_EQ(after.desired_number_scheduled, 3);
  EXPECT_EQ(after.current_number_scheduled, 3);
  EXPECT_EQ(after.updated_number_scheduled, 3);
  EXPECT_EQ(after.number_ready, 0);
  EXPECT_EQ(after.number_unavailable, 3);
  EXPECT_EQ(after.observed_generation, after.meta.generation);
}

TEST(DaemonSetControllerTest, ATaintedNodeWithoutTolerationGetsNone) {
  Cluster c;
  c.CreateNode("node1");
  c.CreateNode("node2", "{}", {R"({"key":"dedicated","value":"x","effect":"NoSchedule"})"});
  c.CreateDaemonSet("agent");
  EXPECT_EQ(Nodes(c.PodsByNode("agent")), std::vector<std::string>{"node1"});
  EXPECT_EQ(c.GetDaemonSet("agent").desired_number_scheduled, 1);
  // A DaemonSet that tolerates it runs there too.
  c.CreateDaemonSet("tolerant", "", R"("tolerations":[{"key":"dedicated","operator":"Exists"}])");
  EXPECT_EQ(Nodes(c.PodsByNode("tolerant")), (std::vector<std::string>{"node1", "node2"}));
}

TEST(DaemonSetControllerTest, ACordonedNodeStillGetsOne) {
  Cluster c;
  c.CreateNode("node1", "{}", {}, /*unschedulable=*/true);
  c.CreateDaemonSet("agent");
  EXPECT_EQ(Nodes(c.PodsByNode("agent")), std::vector<std::string>{"node1"});
}

TEST(DaemonSetControllerTest, ANodeAddedLaterGetsOne) {
  Cluster c;
  c.CreateNode("node1");
  c.CreateDaemonSet("agent");
  EXPECT_EQ(Nodes(c.PodsByNode("agent")), std::vector<std::string>{"node1"});
  c.CreateNode("node2");
  EXPECT_EQ(Nodes(c.PodsByNode("agent")), (std::vector<std::string>{"node1", "node2"}));
  EXPECT_EQ(c.GetDaemonSet("agent").desired_number_scheduled, 2);
}

TEST(DaemonSetControllerTest, UntoleratedNoExecuteRemovesThePodAndNoScheduleKeepsIt) {
  Cluster c;
  c.CreateNode("node1");
  c.CreateNode("node2");
  c.CreateDaemonSet("agent");
  c.ScheduleAndRunAll("agent");
  const std::string on2 = c.PodsByNode("agent")["node2"][0];

  // D4: NoSchedule: the pod stays. (Upstream's node-update rule does not sync the DaemonSet
  // for this change: nothing is to be created or deleted; the status follows at its next sync,
  // here the DaemonSet's own update.)
  c.SetNodeTaints("node2", {R"({"key":"dedicated","value":"x","effect":"NoSchedule"})"});
  c.Settle();
  EXPECT_TRUE(c.Exists(on2));
  c.PatchDaemonSet("agent", R"({"metadata":{"labels":{"touched":"1"}}})");
  api::DaemonSet ds = c.GetDaemonSet("agent");
  EXPECT_EQ(ds.desired_number_scheduled, 1);
  EXPECT_EQ(ds.number_misscheduled, 1);

  // D7: not-ready NoExecute is tolerated for ever (and a misscheduled count makes the node's
  // change sync the DaemonSet).
  c.SetNodeTaints("node2", {R"({"key":"node.kubernetes.io/not-ready","effect":"NoExecute"})"});
  c.Settle();
  EXPECT_TRUE(c.Exists(on2));
  ds = c.GetDaemonSet("agent");
  EXPECT_EQ(ds.desired_number_scheduled, 2);
  EXPECT_EQ(ds.number_misscheduled, 0);

  // D5: an untolerated NoExecute taint: the pod is deleted and none replaces it.
  c.SetNodeTaints("node2", {c.Taint(1, "NoExecute")});
  c.Settle();
  EXPECT_FALSE(c.Exists(on2));
  EXPECT_EQ(Nodes(c.PodsByNode("agent")), std::vector<std::string>{"node1"});
  EXPECT_TRUE(c.HasEvent("Deleted pod: " + on2));
  ds = c.GetDaemonSet("agent");
  EXPECT_EQ(ds.desired_number_scheduled, 1);
  EXPECT_EQ(ds.current_number_scheduled, 1);

  // The taint goes: a new pod comes.
  c.SetNodeTaints("node2", {});
  c.Settle();
  EXPECT_EQ(Nodes(c.PodsByNode("agent")), (std::vector<std::string>{"node1", "node2"}));
}

TEST(DaemonSetControllerTest, NodeLabelsDecideThroughTheNodeSelector) {
  Cluster c;
  c.CreateNode("node1", R"({"disk":"ssd"})");
  c.CreateNode("node2", R"({"disk":"hdd"})");
  c.CreateDaemonSet("agent", "", R"("nodeSelector":{"disk":"ssd"})");
  EXPECT_EQ(Nodes(c.PodsByNode("agent")), std::vector<std::string>{"node1"});
  c.SetNodeLabels("node2", R"({"disk":"ssd"})");
  EXPECT_EQ(Nodes(c.PodsByNode("agent")), (std::vector<std::string>{"node1", "node2"}));
  c.ScheduleAll("agent");  // the node-update rule looks at bound pods
  // A selector that no longer matches is not a taint: the pod goes.
  c.SetNodeLabels("node1", R"({"disk":"hdd"})");
  EXPECT_EQ(Nodes(c.PodsByNode("agent")), std::vector<std::string>{"node2"});
}

TEST(DaemonSetControllerTest, StatusCountsReadyAndAvailablePodsAfterMinReadySeconds) {
  Cluster c;
  c.CreateNode("node1");
  c.CreateNode("node2");
  c.CreateDaemonSet("agent", R"("minReadySeconds":10)");
  api::DaemonSet ds = c.GetDaemonSet("agent");
  EXPECT_EQ(ds.desired_number_scheduled, 2);
  EXPECT_EQ(ds.current_number_scheduled, 2);
  EXPECT_EQ(ds.number_ready, 0);
  EXPECT_EQ(ds.number_available, 0);
  EXPECT_EQ(ds.number_unavailable, 2);
  EXPECT_EQ(ds.updated_number_scheduled, 2);
  EXPECT_EQ(ds.observed_generation, 1);

  // Kubelets report whole seconds: ready at 00.5 s reads as ready at 0 s.
  c.Advance(std::chrono::milliseconds(500));
  c.ScheduleAndRunAll("agent");
  ds = c.GetDaemonSet("agent");
  EXPECT_EQ(ds.number_ready, 2);
  EXPECT_EQ(ds.number_available, 0);  // ready for less than minReadySeconds
  EXPECT_EQ(ds.number_unavailable, 2);

  // The controller looks again by itself once minReadySeconds have passed (no pod event
  // comes then).
  c.Advance(seconds(10));
  ds = c.GetDaemonSet("agent");
  EXPECT_EQ(ds.number_ready, 2);
  EXPECT_EQ(ds.number_available, 2);
  EXPECT_EQ(ds.number_unavailable, 0);

  // A pod that stops being ready is counted so.
  c.SetReady(c.PodsByNode("agent")["node1"][0], false);
  ds = c.GetDaemonSet("agent");
  EXPECT_EQ(ds.number_ready, 1);
  EXPECT_EQ(ds.number_available, 1);
}

// The rollout must never have more than maxUnavailable (1) pods unavailable, and must finish.
TEST(DaemonSetControllerTest, RollingUpdateReplacesPodsOneAtATime) {
  Cluster c;
  for (const char* n : {"node1", "node2", "node3"}) c.CreateNode(n);
  c.CreateDaemonSet("agent");
  c.ScheduleAndRunAll("agent");
  const std::string old_hash =
      *c.DaemonPods("agent")[0].meta.labels.Get(kControllerRevisionHashLabel);
  EXPECT_EQ(c.GetDaemonSet("agent").number_available, 3);

  c.SetImage("agent", "v2");
  api::DaemonSet ds = c.GetDaemonSet("agent");
  EXPECT_EQ(ds.meta.generation, 2);
  EXPECT_EQ(*ds.meta.annotations.Get(kTemplateGenerationAnnotation), "2");
  int rounds = 0;
  for (;; ++rounds) {
    ASSERT_LT(rounds, 10);
    std::vector<api::Pod> pods = c.DaemonPods("agent");
    int old_pods = 0;
    int unavailable = 0;
    for (const api::Pod& p : pods) {
      if (*p.meta.labels.Get(kControllerRevisionHashLabel) == old_hash) ++old_pods;
      if (!IsPodReady(p)) ++unavailable;
    }
    // Nodes without a pod are unavailable too.
    unavailable += 3 - static_cast<int>(c.PodsByNode("agent").size());
    EXPECT_LE(unavailable, 1) << "round " << rounds;
    if (old_pods == 0 && unavailable == 0) break;
    // One old pod is replaced per round: exactly one new, unready pod.
    EXPECT_EQ(old_pods, 2 - rounds) << "round " << rounds;
    c.ScheduleAndRunAll("agent");
  }
  EXPECT_EQ(rounds, 3);
  ds = c.GetDaemonSet("agent");
  EXPECT_EQ(ds.updated_number_scheduled, 3);
  EXPECT_EQ(ds.number_available, 3);
  EXPECT_EQ(ds.observed_generation, 2);
  for (const api::Pod& p : c.DaemonPods("agent")) {
    EXPECT_EQ(*p.meta.labels.Get("pod-template-generation"), "2");
  }
}

TEST(DaemonSetControllerTest, RollingUpdateWithMaxUnavailableTwoReplacesTwoAtATime) {
  Cluster c;
  for (const char* n : {"node1", "node2", "node3", "node4"}) c.CreateNode(n);
  c.CreateDaemonSet(
      "agent",
      R"("updateStrategy":{"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":"50%"}})");
  c.ScheduleAndRunAll("agent");
  c.SetImage("agent", "v2");
  // Two old pods deleted at once, their replacements not yet ready: the other two wait.
  const api::DaemonSet ds = c.GetDaemonSet("agent");
  EXPECT_EQ(ds.updated_number_scheduled, 2);
  EXPECT_EQ(ds.number_available, 2);
}

TEST(DaemonSetControllerTest, RollingUpdateWithMaxSurgeAddsTheNewPodBeforeRemovingTheOld) {
  Cluster c;
  c.CreateNode("node1");
  c.CreateDaemonSet(
      "agent",
      R"("updateStrategy":{"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":0,"maxSurge":1}})");
  c.ScheduleAndRunAll("agent");
  const std::string old_pod = c.PodsByNode("agent")["node1"][0];
  c.SetImage("agent", "v2");
  // Two pods on node1 for a while: the old one stays until the new one is available.
  std::vector<std::string> pods = c.PodsByNode("agent")["node1"];
  ASSERT_EQ(pods.size(), 2u);
  EXPECT_TRUE(c.Exists(old_pod));
  c.ScheduleAndRunAll("agent");
  EXPECT_FALSE(c.Exists(old_pod));
  EXPECT_EQ(c.PodsByNode("agent")["node1"].size(), 1u);
  EXPECT_EQ(c.GetDaemonSet("agent").updated_number_scheduled, 1);
}

TEST(DaemonSetControllerTest, OnDeleteWaitsForTheUserToDeleteOldPods) {
  Cluster c;
  c.CreateNode("node1");
  c.CreateNode("node2");
  c.CreateDaemonSet("agent", R"("updateStrategy":{"type":"OnDelete"})");
  c.ScheduleAndRunAll("agent");
  const std::string on1 = c.PodsByNode("agent")["node1"][0];
  c.SetImage("agent", "v2");
  c.Advance(seconds(30));
  EXPECT_TRUE(c.Exists(on1));
  api::DaemonSet ds = c.GetDaemonSet("agent");
  EXPECT_EQ(ds.updated_number_scheduled, 0);
  EXPECT_EQ(ds.observed_generation, 2);
  c.DeletePod(on1);
  c.Settle();
  ds = c.GetDaemonSet("agent");
  EXPECT_EQ(ds.updated_number_scheduled, 1);
  EXPECT_EQ(c.PodsByNode("agent")["node1"].size(), 1u);
}

TEST(DaemonSetControllerTest, FailedPodsAreReplacedWithBackoff) {
  Cluster c;
  c.CreateNode("node1");
  c.CreateDaemonSet("agent");
  c.ScheduleAll("agent");
  std::string pod = c.PodsByNode("agent")["node1"][0];
  c.SetPhase(pod, "Failed");
  EXPECT_FALSE(c.Exists(pod));
  EXPECT_TRUE(
      c.HasEvent("Found failed daemon pod default/" + pod + " on node node1, will try to kill it"));
  const std::string second = c.PodsByNode("agent")["node1"][0];
  EXPECT_NE(second, pod);

  // It fails again at once: the backoff (1 s, then 2 s) holds the delete back.
  c.ScheduleAll("agent");
  c.SetPhase(second, "Failed");
  EXPECT_TRUE(c.Exists(second));
  c.Advance(seconds(1));
  EXPECT_FALSE(c.Exists(second));
  const std::string third = c.PodsByNode("agent")["node1"][0];
  c.ScheduleAll("agent");
  c.SetPhase(third, "Failed");
  c.Advance(std::chrono::milliseconds(1500));
  EXPECT_TRUE(c.Exists(third));
  c.Advance(std::chrono::milliseconds(600));
  EXPECT_FALSE(c.Exists(third));
}

TEST(DaemonSetControllerTest, SucceededPodsAreReplaced) {
  Cluster c;
  c.CreateNode("node1");
  c.CreateDaemonSet("agent");
  c.ScheduleAll("agent");
  const std::string pod = c.PodsByNode("agent")["node1"][0];
  c.SetPhase(pod, "Succeeded");
  EXPECT_FALSE(c.Exists(pod));
  EXPECT_EQ(c.PodsByNode("agent")["node1"].size(), 1u);
  EXPECT_TRUE(c.HasEvent("Found succeeded daemon pod default/" + pod));
}

TEST(DaemonSetControllerTest, DeletedPodIsReplacedAndExtraPodsPruned) {
  Cluster c;
  c.CreateNode("node1");
  c.CreateDaemonSet("agent");
  const std::string pod = c.PodsByNode("agent")["node1"][0];
  c.DeletePod(pod);
  c.Settle();
  ASSERT_EQ(c.PodsByNode("agent")["node1"].size(), 1u);
  EXPECT_NE(c.PodsByNode("agent")["node1"][0], pod);
}

TEST(DaemonSetControllerTest, UnscheduledPodsOfADeletedNodeAreDeleted) {
  Cluster c;
  c.CreateNode("node1");
  c.CreateNode("node2");
  c.CreateDaemonSet("agent");
  const std::string on2 = c.PodsByNode("agent")["node2"][0];
  c.DeleteNode("node2");
  c.Settle();
  EXPECT_FALSE(c.Exists(on2));
  EXPECT_EQ(c.GetDaemonSet("agent").desired_number_scheduled, 1);
}

TEST(DaemonSetControllerTest, OrphansAreAdoptedAndStrangersReleased) {
  Cluster c;
  c.CreateNode("node1");
  c.CreateNode("node2");
  // An orphan with the DaemonSet's labels on node1, created before the DaemonSet.
  ASSERT_TRUE(c.api().CreateSync(
      server::Resource::kPods, "default",
      R"({"metadata":{"name":"orphan","labels":{"app":"agent"}},)"
      R"("spec":{"nodeName":"node1","terminationGracePeriodSeconds":0,"containers":[{"name":"c","image":"v1"}]}})"));
  // OnDelete: a rolling update would replace the adopted pod, which lacks the template's hash.
  c.CreateDaemonSet("agent", R"("updateStrategy":{"type":"OnDelete"})");
  const api::DaemonSet ds = c.GetDaemonSet("agent");
  server::ObjectPtr orphan = c.GetPod("orphan");
  ASSERT_TRUE(orphan);
  ASSERT_EQ(orphan->As<api::Pod>()->meta.owner_references.size(), 1u);
  EXPECT_EQ(orphan->As<api::Pod>()->meta.owner_references[0].uid, ds.meta.uid);
  // node1 has its pod (the adopted one); node2 gets a new one.
  std::map<std::string, std::vector<std::string>> pods = c.PodsByNode("agent");
  EXPECT_EQ(pods["node1"], std::vector<std::string>{"orphan"});
  EXPECT_EQ(pods["node2"].size(), 1u);

  // A pod whose labels stop matching is released, and replaced.
  ASSERT_TRUE(c.api().PatchSync(server::Resource::kPods, "default", "orphan",
                                server::Subresource::kNone, api::PatchType::kMergePatch,
                                R"({"metadata":{"labels":{"app":"other"}}})"));
  c.Settle();
  EXPECT_TRUE(c.GetPod("orphan")->As<api::Pod>()->meta.owner_references.empty());
  EXPECT_EQ(c.PodsByNode("agent")["node1"].size(), 1u);
  EXPECT_NE(c.PodsByNode("agent")["node1"][0], "orphan");
}

TEST(DaemonSetControllerTest, APodAnotherControllerOwnsIsNeitherAdoptedNorCounted) {
  Cluster c;
  c.CreateNode("node1");
  // The DaemonSet's labels on node1, but a ReplicaSet's pod: not the controller's (its pods
  // informer does not even hold it, PodsFilter).
  ASSERT_TRUE(c.api().CreateSync(
      server::Resource::kPods, "default",
      R"({"metadata":{"name":"replica","labels":{"app":"agent"},"ownerReferences":[)"
      R"({"apiVersion":"apps/v1","kind":"ReplicaSet","name":"rs","uid":"11111111-2222-3333-4444-555555555555",)"
      R"("controller":true}]},"spec":{"nodeName":"node1","containers":[{"name":"c","image":"v1"}]}})"));
  c.CreateDaemonSet("agent");
  const std::vector<std::string> pods = c.PodsByNode("agent")["node1"];
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_NE(pods[0], "replica");
  server::ObjectPtr replica = c.GetPod("replica");
  ASSERT_TRUE(replica);
  ASSERT_EQ(replica->As<api::Pod>()->meta.owner_references.size(), 1u);
  EXPECT_EQ(replica->As<api::Pod>()->meta.owner_references[0].kind, "ReplicaSet");
}

TEST(DaemonSetControllerTest, TwoDaemonSetsDoNotTouchEachOthersPods) {
  Cluster c;
  c.CreateNode("node1");
  c.CreateDaemonSet("a");
  c.CreateDaemonSet("b");
  EXPECT_EQ(c.PodsByNode("a")["node1"].size(), 1u);
  EXPECT_EQ(c.PodsByNode("b")["node1"].size(), 1u);
  EXPECT_EQ(c.List(server::Resource::kPods).size(), 2u);
}

}  // namespace
}  // namespace kt::controllers::daemonset
