// The small plugins: NodeName (node_name_test.go TestNodeName), SchedulingGates
// (scheduling_gates_test.go TestPreEnqueue and its queueing hint) and PrioritySort
// (priority_sort_test.go TestLess); research/plugins.md §7, §9, §10.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "scheduler/plugins/nodename/node_name.h"
#include "scheduler/plugins/queuesort/priority_sort.h"
#include "scheduler/plugins/schedulinggates/scheduling_gates.h"
#include "scheduler/testing/fakes.h"

namespace kt::scheduler {
namespace {

using testing::FakeHandle;

const char* HintName(QueueingHint h) { return h == QueueingHint::kQueue ? "Queue" : "QueueSkip"; }

// --- NodeName ------------------------------------------------------------------------------------

TEST(NodeNameTest, Filter) {
  struct Row {
    const char* name;  // upstream TestNodeName case
    const char* pod;
    bool fits;
  } rows[] = {
      {"no host specified", R"({"metadata":{"name":"p"}})", true},
      {"host matches", R"({"metadata":{"name":"p"},"spec":{"nodeName":"foo"}})", true},
      {"host doesn't match", R"({"metadata":{"name":"p"},"spec":{"nodeName":"bar"}})", false},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.name);
    FakeHandle h;
    std::unique_ptr<Plugin> plugin = testing::NewPlugin(kNodeNameName, &h);
    auto* filter = dynamic_cast<FilterPlugin*>(plugin.get());
    ASSERT_NE(filter, nullptr);
    NodeInfo node(testing::Node(R"({"metadata":{"name":"foo"}})"));
    Status s = filter->Filter(*NewPodInfo(testing::Pod(row.pod)), node);
    if (row.fits) {
      EXPECT_TRUE(s.IsSuccess()) << s.Message();
    } else {
      EXPECT_EQ(std::string(CodeName(s.code())), "UnschedulableAndUnresolvable");
      EXPECT_EQ(s.Reasons(),
                std::vector<std::string>{"node(s) didn't match the requested node name"});
    }
  }
}

TEST(NodeNameTest, RegistersNodeAddWithoutHint) {
  FakeHandle h;
  std::unique_ptr<Plugin> plugin = testing::NewPlugin(kNodeNameName, &h);
  auto* ext = dynamic_cast<EnqueueExtensions*>(plugin.get());
  ASSERT_NE(ext, nullptr);
  std::vector<ClusterEventWithHint> events = ext->EventsToRegister();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].event.resource, EventResource::kNode);
  EXPECT_EQ(events[0].event.action, static_cast<uint32_t>(kAdd));
  EXPECT_FALSE(events[0].hint);
}

// --- SchedulingGates -----------------------------------------------------------------------------

TEST(SchedulingGatesTest, PreEnqueue) {
  FakeHandle h;
  std::unique_ptr<Plugin> plugin = testing::NewPlugin(kSchedulingGatesName, &h);
  auto* pre_enqueue = dynamic_cast<PreEnqueuePlugin*>(plugin.get());
  ASSERT_NE(pre_enqueue, nullptr);
  // "pod does not carry scheduling gates"
  Status none = pre_enqueue->PreEnqueue(*NewPodInfo(testing::Pod(R"({"metadata":{"name":"p"}})")));
  EXPECT_TRUE(none.IsSuccess()) << none.Message();
  // "pod carries scheduling gates"
  Status gated = pre_enqueue->PreEnqueue(*NewPodInfo(testing::Pod(
      R"({"metadata":{"name":"p"},"spec":{"schedulingGates":[{"name":"foo"},{"name":"bar"}]}})")));
  EXPECT_EQ(std::string(CodeName(gated.code())), "UnschedulableAndUnresolvable");
  EXPECT_EQ(gated.Message(), "waiting for scheduling gates: [foo bar]");
}

TEST(SchedulingGatesTest, FrameworkReportsThePlugin) {
  FakeHandle h;
  auto fw = testing::NewFramework(&h);
  Status s = fw->RunPreEnqueuePlugins(*NewPodInfo(testing::Pod(
      R"({"metadata":{"name":"p"},"spec":{"schedulingGates":[{"name":"example.com/gate"}]}})")));
  EXPECT_EQ(s.plugin(), "SchedulingGates");
  EXPECT_EQ(s.Message(), "waiting for scheduling gates: [example.com/gate]");
}

TEST(SchedulingGatesTest, IsSchedulableAfterUpdatePodSchedulingGatesEliminated) {
  FakeHandle h;
  std::unique_ptr<Plugin> plugin = testing::NewPlugin(kSchedulingGatesName, &h);
  auto* ext = dynamic_cast<EnqueueExtensions*>(plugin.get());
  ASSERT_NE(ext, nullptr);
  std::vector<ClusterEventWithHint> events = ext->EventsToRegister();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].event.resource, EventResource::kPod);
  EXPECT_EQ(events[0].event.action, static_cast<uint32_t>(kUpdatePodSchedulingGatesEliminated));
  PodInfoPtr pending = NewPodInfo(
      testing::Pod(R"({"metadata":{"name":"p"},"spec":{"schedulingGates":[{"name":"foo"}]}})"));
  ObjectPtr same = testing::Pod(R"({"metadata":{"name":"p"}})");
  ObjectPtr other = testing::Pod(R"({"metadata":{"name":"other"}})");
  // "queue-on-gates-eliminated" / "skip-queue-on-other-pod-updated".
  EXPECT_STREQ(HintName(events[0].hint(*pending, nullptr, same)), "Queue");
  EXPECT_STREQ(HintName(events[0].hint(*pending, nullptr, other)), "QueueSkip");
}

// --- PrioritySort --------------------------------------------------------------------------------

TEST(PrioritySortTest, Less) {
  // TestLess: lowPriority 10, highPriority 100, t2 = t1 + 1s.
  FakeHandle h;
  std::unique_ptr<Plugin> plugin = testing::NewPlugin(kPrioritySortName, &h);
  auto* sort = dynamic_cast<QueueSortPlugin*>(plugin.get());
  ASSERT_NE(sort, nullptr);
  auto pod = [](const char* name, int priority) {
    return NewPodInfo(testing::Pod(R"({"metadata":{"name":")" + std::string(name) +
                                   R"("},"spec":{"priority":)" + std::to_string(priority) + "}}"));
  };
  const client::Time t1 = client::Time(std::chrono::seconds(1'700'000'000));
  const client::Time t2 = t1 + std::chrono::seconds(1);
  struct Row {
    const char* name;
    QueuedPodInfo p1, p2;
    bool want;
  };
  std::vector<Row> rows(4);
  rows[0] = {"p1.priority less than p2.priority", {}, {}, false};
  rows[0].p1.pod = pod("p1", 10);
  rows[0].p2.pod = pod("p2", 100);
  rows[1] = {"p1.priority greater than p2.priority", {}, {}, true};
  rows[1].p1.pod = pod("p1", 100);
  rows[1].p2.pod = pod("p2", 10);
  rows[2] = {"equal priority. p1 is added to schedulingQ earlier than p2", {}, {}, true};
  rows[2].p1.pod = pod("p1", 100);
  rows[2].p1.timestamp = t1;
  rows[2].p2.pod = pod("p2", 100);
  rows[2].p2.timestamp = t2;
  rows[3] = {"equal priority. p2 is added to schedulingQ earlier than p1", {}, {}, false};
  rows[3].p1.pod = pod("p1", 100);
  rows[3].p1.timestamp = t2;
  rows[3].p2.pod = pod("p2", 100);
  rows[3].p2.timestamp = t1;
  for (const Row& row : rows) EXPECT_EQ(sort->Less(row.p1, row.p2), row.want) << row.name;

  // A pod without spec.priority counts as priority 0.
  QueuedPodInfo none, negative;
  none.pod = NewPodInfo(testing::Pod(R"({"metadata":{"name":"none"}})"));
  negative.pod = pod("negative", -1);
  EXPECT_TRUE(sort->Less(none, negative));
  EXPECT_FALSE(sort->Less(negative, none));
}

}  // namespace
}  // namespace kt::scheduler
