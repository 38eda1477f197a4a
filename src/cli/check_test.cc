#include "cli/check.h"

#include <sstream>

#include <gtest/gtest.h>

namespace kt::cli {
namespace {

api::Node MakeNode(std::string name, std::vector<Taint> taints) {
  api::Node n;
  n.meta.name = std::move(name);
  n.spec.taints = std::move(taints);
  return n;
}

api::Pod MakePod(std::string name, std::vector<Toleration> tolerations, std::string node = "") {
  api::Pod p;
  p.meta.name = std::move(name);
  p.spec.tolerations = std::move(tolerations);
  p.spec.node_name = std::move(node);
  return p;
}

const FeatureGates kGatesOff;

// The seed example (Kubernetes docs, "Taints and Tolerations"): three taints on node1, a pod
// tolerating the two key1 taints. It cannot be scheduled there, but it stays if already running.
TEST(CheckTest, SeedTwoTolerations) {
  api::Node node1 = MakeNode("node1", {{"key1", "value1", "NoSchedule", {}},
                                       {"key1", "value1", "NoExecute", {}},
                                       {"key2", "value2", "NoSchedule", {}}});
  api::Pod pod = MakePod("p", {{"key1", "Equal", "value1", "NoSchedule", {}},
                               {"key1", "Equal", "value1", "NoExecute", {}}});
  NodeVerdict v = CheckPodOnNode(pod, node1, kGatesOff);
  EXPECT_FALSE(v.feasible);
  ASSERT_TRUE(v.untolerated_taint.has_value());
  EXPECT_EQ(TaintToString(*v.untolerated_taint), "key2=value2:NoSchedule");
  EXPECT_EQ(v.reasons, std::vector<std::string>{"untolerated taint key2=value2:NoSchedule"});
  EXPECT_EQ(v.if_running.eviction, Eviction::kStays);
  EXPECT_FALSE(v.bound_here);
}

// Eviction time: the first toleration in pod order that matches decides (GM3/GM4 of the spec).
TEST(CheckTest, EvictionUsesFirstMatchingToleration) {
  api::Node node = MakeNode("n", {{"node.kubernetes.io/not-ready", "", "NoExecute", {}}});
  Toleration a{"node.kubernetes.io/not-ready", "Exists", "", "NoExecute", 300};
  Toleration b{"", "Exists", "", "", {}};
  EvictionVerdict ab = EvictionFor(MakePod("p", {a, b}), node, kGatesOff);
  EXPECT_EQ(ab.eviction, Eviction::kAfter);
  EXPECT_EQ(ab.after_seconds, 300);
  EXPECT_EQ(EvictionFor(MakePod("p", {b, a}), node, kGatesOff).eviction, Eviction::kStays);
  EXPECT_EQ(EvictionFor(MakePod("p", {}), node, kGatesOff).eviction, Eviction::kNow);
  Toleration zero{"node.kubernetes.io/not-ready", "Exists", "", "NoExecute", 0};
  EXPECT_EQ(EvictionFor(MakePod("p", {zero}), node, kGatesOff).eviction, Eviction::kNow);
}

TEST(CheckTest, EvictionIgnoresNoScheduleTaints) {
  api::Node node = MakeNode("n", {{"x", "", "NoSchedule", {}}});
  EXPECT_EQ(EvictionFor(MakePod("p", {}), node, kGatesOff).eviction, Eviction::kStays);
}

TEST(CheckTest, SmallestTolerationSecondsAcrossTaints) {
  api::Node node = MakeNode("n", {{"a", "", "NoExecute", {}}, {"b", "", "NoExecute", {}}});
  api::Pod pod =
      MakePod("p", {{"a", "Exists", "", "NoExecute", 600}, {"b", "Exists", "", "NoExecute", 60}});
  EvictionVerdict v = EvictionFor(pod, node, kGatesOff);
  EXPECT_EQ(v.eviction, Eviction::kAfter);
  EXPECT_EQ(v.after_seconds, 60);
}

TEST(CheckTest, PreferNoScheduleCountsOnlyEmptyOrPreferEffectTolerations) {
  api::Node node = MakeNode(
      "n", {{"special", "true", "PreferNoSchedule", {}}, {"spot", "", "PreferNoSchedule", {}}});
  // A NoSchedule-effect toleration does not help scoring, as upstream.
  api::Pod pod = MakePod(
      "p", {{"special", "Equal", "true", "NoSchedule", {}}, {"spot", "Exists", "", "", {}}});
  NodeVerdict v = CheckPodOnNode(pod, node, kGatesOff);
  EXPECT_TRUE(v.feasible);
  EXPECT_EQ(v.prefer_no_schedule_untolerated, 1);
}

TEST(CheckTest, CordonedNodeNeedsUnschedulableToleration) {
  api::Node node = MakeNode("n", {});
  node.spec.unschedulable = true;
  NodeVerdict v = CheckPodOnNode(MakePod("p", {}), node, kGatesOff);
  EXPECT_FALSE(v.feasible);
  EXPECT_EQ(v.reasons, std::vector<std::string>{"node is unschedulable (cordoned)"});
  api::Pod tolerant =
      MakePod("p", {{"node.kubernetes.io/unschedulable", "Exists", "", "NoSchedule", {}}});
  EXPECT_TRUE(CheckPodOnNode(tolerant, node, kGatesOff).feasible);
}

TEST(CheckTest, NodeSelectorMismatch) {
  api::Node node = MakeNode("n", {});
  api::Pod pod = MakePod("p", {});
  pod.spec.node_selector.Set("accelerator", "nvidia");
  NodeVerdict v = CheckPodOnNode(pod, node, kGatesOff);
  EXPECT_FALSE(v.feasible);
  EXPECT_EQ(v.reasons, std::vector<std::string>{"node didn't match Pod's node affinity/selector"});
  node.meta.labels.Set("accelerator", "nvidia");
  EXPECT_TRUE(CheckPodOnNode(pod, node, kGatesOff).feasible);
}

TEST(CheckTest, ExitCodeConsidersOnlyUnboundPods) {
  std::vector<api::Node> nodes = {MakeNode("n", {{"x", "", "NoSchedule", {}}})};
  std::vector<api::Pod> bound = {MakePod("p", {}, "n")};
  EXPECT_EQ(CheckExitCode(CheckPods(bound, nodes, kGatesOff)), 0);
  std::vector<api::Pod> unbound = {MakePod("p", {})};
  EXPECT_EQ(CheckExitCode(CheckPods(unbound, nodes, kGatesOff)), 1);
  EXPECT_EQ(CheckExitCode(CheckPods(unbound, {}, kGatesOff)), 1);
  EXPECT_EQ(CheckExitCode(CheckPods({}, nodes, kGatesOff)), 0);
}

TEST(CheckTest, JsonShowsEvictionOnlyOnTheBoundNode) {
  std::vector<api::Node> nodes = {MakeNode("a", {{"k", "", "NoExecute", {}}}),
                                  MakeNode("b", {{"k", "", "NoExecute", {}}})};
  std::vector<api::Pod> pods = {MakePod("p", {{"k", "Exists", "", "NoExecute", 30}}, "a")};
  std::ostringstream out;
  WriteCheckJson(CheckPods(pods, nodes, kGatesOff), out);
  const std::string json = out.str();
  EXPECT_NE(json.find("\"eviction\": \"after\",\n          \"evictAfterSeconds\": 30"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"eviction\": null"), std::string::npos) << json;
  EXPECT_NE(json.find("\"namespace\": \"default\""), std::string::npos) << json;
}

}  // namespace
}  // namespace kt::cli
