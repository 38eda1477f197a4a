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
