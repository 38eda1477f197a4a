#include "scheduler/cache.h"

#include <gtest/gtest.h>

#include "scheduler/testing/fakes.h"

namespace kt::scheduler {
namespace {

using testing::Pod;
using testing::ReadyNode;

// Pod `name` asking for `cpu` millicores, 1Gi and host port 8080, bound to `node` when given.
PodInfoPtr PodOn(std::string_view node, int cpu, store::Revision revision = 1,
                 std::string_view name = "p") {
  std::string json = R"({"metadata":{"name":")" + std::string(name) + R"("},"spec":{)";
  if (!node.empty()) json += R"("nodeName":")" + std::string(node) + R"(",)";
  json += R"("containers":[{"name":"c","image":"i","ports":[{"containerPort":80,"hostPort":8080}],)"
          R"("resources":{"requests":{"cpu":")" +
          std::to_string(cpu) + R"(m","memory":"1Gi"}}}]}})";
  return NewPodInfo(Pod(json, revision));
}

class CacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cache.AddNode(ReadyNode("a"));
    cache.AddNode(ReadyNode("b"));
  }
  const NodeInfo& NodeNamed(std::string_view name) { return *cache.Get(name); }

  Cache cache;
};

TEST_F(CacheTest, ABoundPodConfirmsItsAssumptionInPlaceWithTheNewObjectsRequests) {
  PodInfoPtr assumed = PodOn("", 100);
  ASSERT_TRUE(cache.AssumePod(assumed, cache.Get("a")).IsSuccess());
  EXPECT_EQ(NodeNamed("a").requested().milli_cpu, 100);

  // The bound version as the API reports it (its requests differ here, to see which counts).
  PodInfoPtr bound = PodOn("a", 250, 2);
  cache.AddPod(bound);
  EXPECT_FALSE(cache.IsAssumedPod(bound->uid()));
  EXPECT_EQ(cache.NumPods(), 1u);
  const NodeInfo& a = NodeNamed("a");
  ASSERT_EQ(a.pods().size(), 1u);
  EXPECT_EQ(a.pods()[0], bound);
  EXPECT_EQ(a.requested().milli_cpu, 250);
  EXPECT_EQ(a.non_zero_requested().milli_cpu, 250);
  EXPECT_TRUE(a.used_ports().CheckConflict(HostPort{"0.0.0.0", "TCP", 8080}));
  EXPECT_EQ(NodeNamed("b").requested().milli_cpu, 0);

  // Removed, it leaves nothing behind, host port included.
  cache.RemovePod(bound->uid());
  EXPECT_EQ(cache.NumPods(), 0u);
  EXPECT_TRUE(NodeNamed("a").pods().empty());
  EXPECT_EQ(NodeNamed("a").requested().milli_cpu, 0);
  EXPECT_EQ(NodeNamed("a").requested().memory, 0);
  EXPECT_TRUE(NodeNamed("a").used_ports().empty());
}

TEST_F(CacheTest, APodBoundElsewhereThanAssumedMovesToThatNode) {
  PodInfoPtr assumed = PodOn("", 100);
  ASSERT_TRUE(cache.AssumePod(assumed, cache.Get("a")).IsSuccess());
  PodInfoPtr bound = PodOn("b", 100, 2);
  cache.AddPod(bound);
  EXPECT_TRUE(NodeNamed("a").pods().empty());
  EXPECT_EQ(NodeNamed("a").requested().milli_cpu, 0);
  EXPECT_TRUE(NodeNamed("a").used_ports().empty());
  ASSERT_EQ(NodeNamed("b").pods().size(), 1u);
  EXPECT_EQ(NodeNamed("b").pods()[0], bound);
  EXPECT_EQ(NodeNamed("b").requested().milli_cpu, 100);
  EXPECT_EQ(cache.NodeOfPod(bound->uid()), "b");
}

TEST_F(CacheTest, AForgottenAssumptionFreesItsNode) {
  PodInfoPtr other = PodOn("a", 300, 1, "other");
  cache.AddPod(other);
  PodInfoPtr assumed = PodOn("", 100);
  ASSERT_TRUE(cache.AssumePod(assumed, cache.Get("a")).IsSuccess());
  EXPECT_EQ(NodeNamed("a").requested().milli_cpu, 400);
  EXPECT_TRUE(cache.ForgetPod(assumed->uid()));
  EXPECT_FALSE(cache.ForgetPod(assumed->uid()));
  ASSERT_EQ(NodeNamed("a").pods().size(), 1u);
  EXPECT_EQ(NodeNamed("a").pods()[0], other);
  EXPECT_EQ(NodeNamed("a").requested().milli_cpu, 300);
}

TEST_F(CacheTest, ABoundPodOfADeletedNodeKeepsItsGhostUntilItGoes) {
  cache.AddPod(PodOn("a", 100));
  cache.RemoveNode("a");
  EXPECT_EQ(cache.Get("a"), nullptr);  // no longer listed
  PodInfoPtr updated = PodOn("a", 100, 2);
  cache.AddPod(updated);  // an update of the pod while its node is gone
  EXPECT_EQ(cache.NumPods(), 1u);
  EXPECT_EQ(cache.NodeOfPod(updated->uid()), "");
  cache.RemovePod(updated->uid());
  EXPECT_EQ(cache.NumPods(), 0u);
  cache.AddNode(ReadyNode("a"));
  EXPECT_TRUE(NodeNamed("a").pods().empty());
  EXPECT_EQ(NodeNamed("a").requested().milli_cpu, 0);
}

// Each node's taints and labels are its own (a cluster autoscaler's timestamped taint, an
// instance id label): the sets go with the nodes, whatever the churn.
TEST(CacheSetsTest, NodeChurnLeavesNoTaintOrLabelSetBehind) {
  Cache cache;
  auto node = [](int i, std::string_view stamp) {
    const std::string n = std::to_string(i);
    return ReadyNode(
        "node-" + n, "4", "16Gi", "110",
        R"({"taints":[{"key":"ToBeDeletedByClusterAutoscaler","value":")" + std::string(stamp) +
            R"(","effect":"NoSchedule"}]})",
        R"({"kubernetes.io/hostname":"node-)" + n + R"(","instance-id":"i-)" + n + R"("})");
  };
  cache.AddNode(ReadyNode("stays"));
  for (int i = 0; i < 10000; ++i) {
    cache.AddNode(node(i, std::to_string(1700000000 + i)));
    if (i % 2 == 0) cache.AddPod(PodOn("node-" + std::to_string(i), 100, 1, "p"));
    cache.RemoveNode("node-" + std::to_string(i));
    if (i % 2 == 0) cache.RemovePod(PodOn("", 100, 1, "p")->uid());  // drops the ghost
    ASSERT_EQ(cache.NumTaintSets(), 0u) << i;
    ASSERT_EQ(cache.NumLabelSets(), 1u) << i;  // the node that stays
  }
  EXPECT_EQ(cache.NumNodes(), 1u);
  EXPECT_EQ(cache.NumPods(), 0u);
}

TEST(CacheSetsTest, AnUpdateKeepsItsSetsWhileTaintsAndLabelsStay) {
  Cache cache;
  auto node = [](std::string_view taints, std::string_view labels) {
    return ReadyNode("n", "4", "16Gi", "110", R"({"taints":)" + std::string(taints) + "}", labels);
  };
  const char* tainted = R"([{"key":"k","value":"v","effect":"NoSchedule"}])";
  cache.AddNode(node(tainted, R"({"zone":"a"})"));
  const NodeInfo& info = *cache.Get("n");
  const uint32_t taints = info.taint_set();
  const uint32_t labels = info.label_set();
  ASSERT_NE(taints, 0u);
  // timeAdded does not count (the taint eviction controller's NoExecute taints carry one).
  cache.AddNode(node(R"([{"key":"k","value":"v","effect":"NoSchedule",)"
                     R"("timeAdded":"2026-11-30T00:00:00Z"}])",
                     R"({"zone":"a"})"));
  EXPECT_EQ(info.taint_set(), taints);
  EXPECT_EQ(info.label_set(), labels);
  EXPECT_EQ(cache.NumTaintSets(), 1u);
  cache.AddNode(node("[]", R"({"zone":"b"})"));
  EXPECT_EQ(info.taint_set(), 0u);
  EXPECT_NE(info.label_set(), labels);
  EXPECT_EQ(cache.NumTaintSets(), 0u);
  EXPECT_EQ(cache.NumLabelSets(), 1u);
  // Two nodes share a set; the set stays while either has it.
  cache.AddNode(node(tainted, R"({"zone":"a"})"));
  cache.AddNode(ReadyNode("m", "4", "16Gi", "110", R"({"taints":)" + std::string(tainted) + "}",
                          R"({"zone":"a"})"));
  EXPECT_EQ(cache.Get("m")->taint_set(), info.taint_set());
  cache.RemoveNode("n");
  EXPECT_EQ(cache.NumTaintSets(), 1u);
  EXPECT_EQ(cache.NumLabelSets(), 1u);
  cache.RemoveNode("m");
  EXPECT_EQ(cache.NumTaintSets(), 0u);
  EXPECT_EQ(cache.NumLabelSets(), 0u);
}

TEST(NodeInfoTest, PodsAreReplacedAndRemovedByAddressOnly) {
  NodeInfo node;
  PodInfoPtr first = PodOn("n", 100);
  PodInfoPtr twin = PodOn("n", 100);  // the same UID, another PodInfo
  node.AddPod(first);
  const uint64_t generation = node.generation();

  EXPECT_FALSE(node.ReplacePod(twin.get(), PodOn("n", 500)));
  EXPECT_FALSE(node.RemovePod(twin.get()));
  EXPECT_EQ(node.generation(), generation);  // nothing changed
  EXPECT_EQ(node.requested().milli_cpu, 100);

  PodInfoPtr second = PodOn("n", 500, 2);
  EXPECT_TRUE(node.ReplacePod(first.get(), second));
  EXPECT_NE(node.generation(), generation);
  ASSERT_EQ(node.pods().size(), 1u);
  EXPECT_EQ(node.pods()[0], second);
  EXPECT_EQ(node.requested().milli_cpu, 500);

  EXPECT_TRUE(node.RemovePod(second.get()));
  EXPECT_TRUE(node.pods().empty());
  EXPECT_EQ(node.requested().milli_cpu, 0);
  EXPECT_EQ(node.requested().memory, 0);
  EXPECT_TRUE(node.used_ports().empty());
}

}  // namespace
}  // namespace kt::scheduler
