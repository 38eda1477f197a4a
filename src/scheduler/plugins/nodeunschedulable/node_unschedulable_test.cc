// NodeUnschedulable plugin: semantics.md §11.7 NU1–NU3, NUD1–NUD2 (upstream
// node_unschedulable_test.go TestNodeUnschedulable) and the queueing hints of §5.2
// (TestIsSchedulableAfterNodeChange and isSchedulableAfterPodTolerationChange).
#include "scheduler/plugins/nodeunschedulable/node_unschedulable.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "scheduler/testing/fakes.h"

namespace kt::scheduler {
namespace {

using namespace std::string_view_literals;

using testing::FakeHandle;

ObjectPtr PodWithTolerations(std::string_view tolerations, std::string_view name = "pod1") {
  return testing::Pod(R"({"metadata":{"name":")" + std::string(name) +
                      R"("},"spec":{"tolerations":)" + std::string(tolerations) + "}}");
}

ObjectPtr NodeWithSpec(std::string_view spec) {
  return testing::Node(R"({"metadata":{"name":"node1"},"spec":)" + std::string(spec) + "}");
}

const char* HintName(QueueingHint h) { return h == QueueingHint::kQueue ? "Queue" : "QueueSkip"; }

QueueingHintFn HintFor(Plugin* p, EventResource resource) {
  auto* ext = dynamic_cast<EnqueueExtensions*>(p);
  if (ext == nullptr) return nullptr;
  for (ClusterEventWithHint& e : ext->EventsToRegister()) {
    if (e.event.resource == resource) return e.hint;
  }
  return nullptr;
}

TEST(NodeUnschedulableFilterTest, Table) {
  struct Row {
    const char* id;
    const char* upstream;
    const char* tolerations;
    bool unschedulable;
    bool fits;
  } rows[] = {
      {"NU1", "Does not schedule pod to unschedulable node (node.Spec.Unschedulable==true)", "[]",
       true, false},
      {"NU2", "Schedule pod to normal node", "[]", false, true},
      {"NU3", "Schedule pod with toleration to unschedulable node (node.Spec.Unschedulable==true)",
       R"([{"key":"node.kubernetes.io/unschedulable","effect":"NoSchedule"}])", true, true},
      {"NUD1", "(derived) an empty-key Exists toleration tolerates the synthetic taint",
       R"([{"operator":"Exists"}])", true, true},
      {"NUD2", "(derived) the synthetic taint has an empty value",
       R"([{"key":"node.kubernetes.io/unschedulable","operator":"Equal","value":"true","effect":"NoSchedule"}])",
       true, false},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(std::string(row.id) + ": " + row.upstream);
    FakeHandle h;
    std::unique_ptr<Plugin> plugin = testing::NewPlugin(kNodeUnschedulableName, &h);
    auto* filter = dynamic_cast<FilterPlugin*>(plugin.get());
    ASSERT_NE(filter, nullptr);
    PodInfoPtr pod = NewPodInfo(PodWithTolerations(row.tolerations));
    NodeInfo node(NodeWithSpec(row.unschedulable ? R"({"unschedulable":true})" : "{}"));
    Status s = filter->Filter(*pod, node);
    if (row.fits) {
      EXPECT_TRUE(s.IsSuccess()) << s.Message();
    } else {
      EXPECT_EQ(CodeName(s.code()), "UnschedulableAndUnresolvable"sv);
      EXPECT_EQ(s.Reasons(), std::vector<std::string>{"node(s) were unschedulable"});
    }
  }
}

TEST(NodeUnschedulableHintsTest, RegisteredEvents) {
  FakeHandle h;
  std::unique_ptr<Plugin> plugin = testing::NewPlugin(kNodeUnschedulableName, &h);
  auto* ext = dynamic_cast<EnqueueExtensions*>(plugin.get());
  ASSERT_NE(ext, nullptr);
  std::vector<ClusterEventWithHint> events = ext->EventsToRegister();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].event.resource, EventResource::kNode);
  EXPECT_EQ(events[0].event.action, static_cast<uint32_t>(kAdd | kUpdateNodeTaint));
  EXPECT_EQ(events[1].event.resource, EventResource::kPod);
  EXPECT_EQ(events[1].event.action, static_cast<uint32_t>(kUpdatePodToleration));
}

TEST(NodeUnschedulableHintsTest, IsSchedulableAfterNodeChange) {
  FakeHandle h;
  std::unique_ptr<Plugin> plugin = testing::NewPlugin(kNodeUnschedulableName, &h);
  QueueingHintFn hint = HintFor(plugin.get(), EventResource::kNode);
  ASSERT_TRUE(hint);
  PodInfoPtr pod = NewPodInfo(PodWithTolerations("[]"));
  ObjectPtr not_a_node = PodWithTolerations("[]", "not-a-node");
  ObjectPtr unschedulable = NodeWithSpec(R"({"unschedulable":true})");
  ObjectPtr schedulable = NodeWithSpec(R"({"unschedulable":false})");
  ObjectPtr unschedulable_not_ready = NodeWithSpec(
      R"({"unschedulable":true,"taints":[{"key":"node.kubernetes.io/not-ready","effect":"NoExecute"}]})");
  ObjectPtr schedulable_tainted = NodeWithSpec(R"({"taints":[{"key":"a","effect":"NoSchedule"}]})");
  struct Row {
    const char* upstream;
    ObjectPtr old_obj, new_obj;
    const char* want;
  } rows[] = {
      {"backoff-wrong-new-object", nullptr, not_a_node, "Queue"},
      // Upstream util.As[*v1.Node](oldObj, newObj) fails for an old object of the wrong type and
      // the hint returns Queue (+ error); upstream test "backoff-wrong-old-object" expects Queue.
      {"backoff-wrong-old-object", not_a_node, unschedulable, "Queue"},
      {"skip-queue-on-unschedulable-node-added", nullptr, unschedulable, "QueueSkip"},
      {"queue-on-schedulable-node-added", nullptr, schedulable, "Queue"},
      {"skip-unrelated-change", unschedulable, unschedulable_not_ready, "QueueSkip"},
      {"queue-on-unschedulable-field-change", unschedulable, schedulable, "Queue"},
      // §5.2: a schedulable→schedulable update does not help.
      {"(derived) schedulable-to-schedulable update", schedulable, schedulable_tainted,
       "QueueSkip"},
  };
  for (const Row& row : rows) {
    EXPECT_STREQ(HintName(hint(*pod, row.old_obj, row.new_obj)), row.want) << row.upstream;
  }
}

TEST(NodeUnschedulableHintsTest, IsSchedulableAfterPodTolerationChange) {
  FakeHandle h;
  std::unique_ptr<Plugin> plugin = testing::NewPlugin(kNodeUnschedulableName, &h);
  QueueingHintFn hint = HintFor(plugin.get(), EventResource::kPod);
  ASSERT_TRUE(hint);
  PodInfoPtr pending = NewPodInfo(PodWithTolerations("[]", "pod-1"));
  ObjectPtr old_pod = PodWithTolerations("[]", "pod-1");
  ObjectPtr tolerates = PodWithTolerations(
      R"([{"key":"node.kubernetes.io/unschedulable","effect":"NoSchedule"}])", "pod-1");
  ObjectPtr unrelated = PodWithTolerations(R"([{"key":"foo","effect":"NoSchedule"}])", "pod-1");
  ObjectPtr other_pod = PodWithTolerations(
      R"([{"key":"node.kubernetes.io/unschedulable","effect":"NoSchedule"}])", "pod-2");
  struct Row {
    const char* name;
    ObjectPtr new_obj;
    const char* want;
  } rows[] = {
      {"the pending pod now tolerates the unschedulable taint", tolerates, "Queue"},
      {"the pending pod got an unrelated toleration", unrelated, "QueueSkip"},
      {"another pod's toleration changed", other_pod, "QueueSkip"},
  };
  for (const Row& row : rows) {
    EXPECT_STREQ(HintName(hint(*pending, old_pod, row.new_obj)), row.want) << row.name;
  }
}

}  // namespace
}  // namespace kt::scheduler
