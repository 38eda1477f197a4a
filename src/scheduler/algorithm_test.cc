#include "scheduler/algorithm.h"

#include <gtest/gtest.h>

#include "scheduler/testing/fakes.h"

namespace kt::scheduler {
namespace {

using testing::FakeHandle;
using testing::Pod;
using testing::ReadyNode;

// The seeds' node1 with three taints and the pod with two tolerations (semantics.md, seed docs).
TEST(SchedulePodTest, SeedPodWithTwoTolerationsFitsNoNodeWithTheUpstreamMessage) {
  FakeHandle h;
  h.cache.AddNode(ReadyNode("node1", "4", "16Gi", "110",
                            R"({"taints":[{"key":"key1","value":"value1","effect":"NoSchedule"},
                    {"key":"key1","value":"value1","effect":"NoExecute"},
                    {"key":"key2","value":"value2","effect":"NoSchedule"}]})"));
  h.cache.AddNode(ReadyNode("node2", "4", "16Gi", "110", "{}", R"({"disk":"hdd"})"));
  h.cache.AddNode(ReadyNode("node3", "4", "16Gi", "110", "{}", R"({"disk":"hdd"})"));
  auto fw = testing::NewFramework(&h);
  PodInfoPtr pod = NewPodInfo(Pod(R"({"metadata":{"name":"p"},"spec":{
      "nodeSelector":{"disk":"ssd"},
      "containers":[{"name":"c","image":"nginx"}],
      "tolerations":[{"key":"key1","operator":"Equal","value":"value1","effect":"NoSchedule"},
                     {"key":"key1","operator":"Equal","value":"value1","effect":"NoExecute"}]}})"));
  size_t next = 0;
  ScheduleResult r = SchedulePod(*fw, h.cache, *pod, &next);
  EXPECT_TRUE(r.host.empty());
  ASSERT_TRUE(r.fit_error);
  EXPECT_EQ(FitErrorMessage(r.num_all_nodes, r.diagnosis),
            "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 node(s) didn't "
            "match Pod's node affinity/selector.");
  EXPECT_EQ(r.diagnosis.unschedulable_plugins,
            (std::set<std::string>{"NodeAffinity", "TaintToleration"}));
}

TEST(SchedulePodTest, PicksTheNodeWithoutPreferNoScheduleTaints) {
  FakeHandle h;
  h.cache.AddNode(ReadyNode("a", "4", "16Gi", "110",
                            R"({"taints":[{"key":"gpu","effect":"PreferNoSchedule"}]})"));
  h.cache.AddNode(ReadyNode("b"));
  auto fw = testing::NewFramework(&h);
  PodInfoPtr pod = NewPodInfo(
      Pod(R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"x"}]}})"));
  size_t next = 0;
  ScheduleResult r = SchedulePod(*fw, h.cache, *pod, &next);
  EXPECT_EQ(r.host, "b");
  EXPECT_TRUE(r.scores.empty());  // a cycle keeps the totals only
  ScheduleOptions all;
  all.evaluate_all = true;
  ScheduleResult report = SchedulePod(*fw, h.cache, *pod, &next, all);
  EXPECT_EQ(report.host, "b");
  ASSERT_EQ(report.scores.size(), 2u);
  EXPECT_LT(report.scores[0].node->name() == "a" ? report.scores[0].total : report.scores[1].total,
            report.scores[0].node->name() == "b" ? report.scores[0].total : report.scores[1].total);
}

TEST(NumFeasibleNodesToFindTest, AdaptivePercentage) {
  // semantics.md §11.7 PN1–PN9.
  struct Row {
    int nodes;
    std::optional<int32_t> pct;
    int want;
  } rows[] = {{50, {}, 50},    {150, {}, 100},  {500, {}, 230},   {1000, {}, 420},  {3000, {}, 780},
              {5000, {}, 500}, {6000, {}, 300}, {15000, {}, 750}, {1000, 100, 1000}};
  for (const Row& r : rows) {
    EXPECT_EQ(NumFeasibleNodesToFind(r.pct, r.nodes), r.want) << r.nodes;
  }
}

}  // namespace
}  // namespace kt::scheduler
