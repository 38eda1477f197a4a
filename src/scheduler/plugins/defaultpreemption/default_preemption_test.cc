// DefaultPreemption through a framework with the default profile on a FakeHandle (no client, so
// nothing is evicted): upstream default_preemption_test.go TestPostFilter (rows A, B, C, E, F, G
// of research/preemption.md §7.1, and "pod can be made schedulable on one node"; the PDB rows D
// and H are not applicable), TestSelectBestCandidate (§7.3, driven through PostFilter) and
// TestPodEligibleToPreemptOthers (§7.2).
//
// Fixtures as upstream: st.MakeNode().Capacity(res) is `res` plus "pods": "32" unless `res`
// names pods; st.MakePod().Req(res) is one container requesting `res`; epochTimeN is
// time.Unix(0, N).
#include "scheduler/plugins/defaultpreemption/default_preemption.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "scheduler/testing/fakes.h"

namespace kt::scheduler {
namespace {

using testing::FakeHandle;

constexpr int32_t kNeg = -100, kLow = 0, kMid = 100, kHigh = 1000, kVeryHigh = 10000;
const std::string kSmall = R"({"cpu":"100m","memory":"100"})";
const std::string kMedium = R"({"cpu":"200m","memory":"200"})";
const std::string kLarge = R"({"cpu":"300m","memory":"300"})";
const std::string kVeryLarge = R"({"cpu":"500m","memory":"500"})";

// Node allocatables.
const std::string kOnePodRes = R"({"pods":"1"})";
const std::string kNodeRes = R"({"cpu":"200m","memory":"400","pods":"32"})";
const std::string kVeryLargeNode = R"({"cpu":"500m","memory":"500","pods":"32"})";

// epochTimeN (nanoseconds after the Unix epoch).
std::string Epoch(int n) { return "1970-01-01T00:00:00.00000000" + std::to_string(n) + "Z"; }

struct P {
  std::string name;
  std::string node = "";
  std::optional<int32_t> priority = std::nullopt;
  std::string requests = "";    // a requests object; "" for a pod without containers
  std::string start = "";       // status.startTime
  std::string extra_spec = "";  // more spec members
  std::string extra_meta = "";  // more metadata members
  std::string extra_status = "";
};

ObjectPtr MakePod(const P& p) {
  std::string spec;
  auto add = [&spec](const std::string& member) {
    if (member.empty()) return;
    if (!spec.empty()) spec += ",";
    spec += member;
  };
  if (!p.node.empty()) add(R"("nodeName":")" + p.node + "\"");
  if (p.priority) add(R"("priority":)" + std::to_string(*p.priority));
  if (!p.requests.empty()) {
    add(R"("containers":[{"name":"c","resources":{"requests":)" + p.requests + "}}]");
  }
  add(p.extra_spec);
  std::string status;
  if (!p.start.empty()) status = R"("startTime":")" + p.start + "\"";
  if (!p.extra_status.empty()) status += (status.empty() ? "" : ",") + p.extra_status;
  std::string meta = R"("name":")" + p.name + "\"";
  if (!p.extra_meta.empty()) meta += "," + p.extra_meta;
  return testing::Pod("{\"metadata\":{" + meta + "},\"spec\":{" + spec + "},\"status\":{" + status +
                      "}}");
}

ObjectPtr MakeNode(const std::string& name, const std::string& allocatable) {
  return testing::Node(R"({"metadata":{"name":")" + name + R"("},"status":{"allocatable":)" +
                       allocatable + "}}");
}

struct Outcome {
  Status status;
  NominatingInfo nominating;
};

// Places the nodes and pods in a FakeHandle's cache and runs the default profile's PostFilter
// (DefaultPreemption) for `preemptor` with the filter statuses given (absent nodes:
// UnschedulableAndUnresolvable). `live`, when set, is the preemptor as the pod lister has it.
Outcome RunPostFilter(const std::vector<std::pair<std::string, std::string>>& nodes,
                      const std::vector<P>& pods, const P& preemptor,
                      const std::map<std::string, Code>& statuses,
                      std::optional<P> live = std::nullopt) {
  FakeHandle h;
  for (const auto& [name, allocatable] : nodes) h.cache.AddNode(MakeNode(name, allocatable));
  for (const P& p : pods) {
    ObjectPtr obj = MakePod(p);
    h.cache.AddPod(NewPodInfo(obj));
    h.pods.push_back(obj);
  }
  if (live) h.pods.push_back(MakePod(*live));
  auto fw = testing::NewFramework(&h);
  NodeToStatus m;
  for (const auto& [node, code] : statuses) m.Set(node, Status(code));
  Outcome out;
  out.status = fw->RunPostFilterPlugins(*NewPodInfo(MakePod(preemptor)), m, &out.nominating);
  return out;
}

const char* ModeName(NominatingInfo::Mode m) {
  return m == NominatingInfo::Mode::kOverride ? "Override" : "Noop";
}

// --- TestPostFilter ------------------------------------------------------------------------------

struct PostFilterRow {
  const char* id;
  const char* name;  // upstream TestPostFilter case
  P preemptor;
  std::vector<P> pods;
  std::vector<std::pair<std::string, std::string>> nodes;
  std::map<std::string, Code> statuses;
  std::string want_message;    // "" for Success
  std::string want_nominated;  // with Mode Override
};

TEST(DefaultPreemptionPostFilterTest, UpstreamTable) {
  const Code U = Code::kUnschedulable;
  const Code UU = Code::kUnschedulableAndUnresolvable;
  const std::vector<PostFilterRow> rows = {
      {"A",
       "pod with higher priority can be made schedulable",
       {.name = "p", .priority = kHigh},
       {{.name = "p1", .node = "node1"}},
       {{"node1", kOnePodRes}},
       {{"node1", U}},
       "",
       "node1"},
      {"B",
       "pod with tied priority is still unschedulable",
       {.name = "p"},
       {{.name = "p1", .node = "node1"}},
       {{"node1", kOnePodRes}},
       {{"node1", U}},
       "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
       ""},
      {"C",
       "preemption should respect filteredNodesStatuses",
       {.name = "p", .priority = kHigh},
       {{.name = "p1", .node = "node1"}},
       {{"node1", kOnePodRes}},
       {{"node1", UU}},
       "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
       ""},
      {"C2",
       "preemption should respect absent NodeToStatusReader entry meaning "
       "UnschedulableAndUnresolvable",
       {.name = "p", .priority = kHigh},
       {{.name = "p1", .node = "node1"}},
       {{"node1", kOnePodRes}},
       {},
       "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
       ""},
      {"-",
       "pod can be made schedulable on one node",
       {.name = "p", .priority = kMid},
       {{.name = "p1", .node = "node1", .priority = kHigh},
        {.name = "p2", .node = "node2", .priority = kLow}},
       {{"node1", kOnePodRes}, {"node2", kOnePodRes}},
       {{"node1", U}, {"node2", U}},
       "",
       "node2"},
      {"E",
       "no candidate nodes found, no enough resource after removing low priority pods",
       {.name = "p", .priority = kHigh, .requests = kLarge},
       {{.name = "p1", .node = "node1"}, {.name = "p2", .node = "node2"}},
       {{"node1", kNodeRes}, {"node2", kNodeRes}},
       {{"node1", U}, {"node2", U}},
       "preemption: 0/2 nodes are available: 2 Insufficient cpu.",
       ""},
      {"F",
       "no candidate nodes found with mixed reasons, no lower priority pod and no enough CPU "
       "resource",
       {.name = "p", .priority = kHigh, .requests = kLarge},
       {{.name = "p1", .node = "node1", .priority = kHigh},
        {.name = "p2", .node = "node2"},
        {.name = "p3", .node = "node3", .priority = kHigh}},
       {{"node1", kOnePodRes}, {"node2", kNodeRes}, {"node3", kOnePodRes}},
       {{"node1", U}, {"node2", U}, {"node3", U}},
       "preemption: 0/3 nodes are available: 1 Insufficient cpu, 2 No preemption victims found "
       "for incoming pod.",
       ""},
      {"G",
       "no candidate nodes found with mixed reason, 2 UnschedulableAndUnresolvable nodes and "
       "2 nodes don't have enough CPU resource",
       {.name = "p", .priority = kHigh, .requests = kLarge},
       {{.name = "p1", .node = "node1"}, {.name = "p2", .node = "node2"}},
       {{"node1", kNodeRes}, {"node2", kNodeRes}, {"node3", kNodeRes}, {"node4", kNodeRes}},
       {{"node1", U}, {"node2", U}, {"node4", UU}},
       "preemption: 0/4 nodes are available: 2 Insufficient cpu, 2 Preemption is not helpful for "
       "scheduling.",
       ""},
  };
  for (const PostFilterRow& row : rows) {
    SCOPED_TRACE(std::string(row.id) + ": " + row.name);
    Outcome out = RunPostFilter(row.nodes, row.pods, row.preemptor, row.statuses);
    if (row.want_message.empty()) {
      EXPECT_TRUE(out.status.IsSuccess())
          << CodeName(out.status.code()) << ": " << out.status.Message();
    } else {
      EXPECT_EQ(std::string(CodeName(out.status.code())), "Unschedulable");
      EXPECT_EQ(out.status.Message(), row.want_message);
      EXPECT_EQ(out.status.plugin(), "DefaultPreemption");
    }
    EXPECT_STREQ(ModeName(out.nominating.mode), "Override");
    EXPECT_EQ(out.nominating.nominated_node_name, row.want_nominated);
  }
}

TEST(DefaultPreemptionPostFilterTest, PreemptionPolicyNever) {
  // TestPodEligibleToPreemptOthers "Pod with 'PreemptNever' preemption policy", through
  // PostFilter: row A's cluster, but the preemptor may not preempt. The nomination is untouched.
  Outcome out =
      RunPostFilter({{"node1", kOnePodRes}}, {{.name = "p1", .node = "node1"}},
                    {.name = "p", .priority = kHigh, .extra_spec = R"("preemptionPolicy":"Never")"},
                    {{"node1", Code::kUnschedulable}});
  EXPECT_EQ(std::string(CodeName(out.status.code())), "Unschedulable");
  EXPECT_EQ(out.status.Message(), "preemption: not eligible due to preemptionPolicy=Never.");
  EXPECT_STREQ(ModeName(out.nominating.mode), "Noop");
  EXPECT_EQ(out.nominating.nominated_node_name, "");
}

TEST(DefaultPreemptionPostFilterTest, TerminatingVictimOnTheNominatedNode) {
  // TestPodEligibleToPreemptOthers: the preemptor (as the pod lister has it) is nominated to
  // node1, where a lower-priority pod is terminating.
  const std::string disruption =
      R"("conditions":[{"type":"DisruptionTarget","status":"True","reason":"PreemptionByScheduler"}])";
  const std::string deleting = R"("deletionTimestamp":"2024-01-01T00:00:00Z")";
  const P preemptor{.name = "p", .priority = kHigh};
  P live = preemptor;
  live.extra_status = R"("nominatedNodeName":"node1")";
  const P victim_by_preemption{.name = "p1",
                               .node = "node1",
                               .priority = kLow,
                               .extra_meta = deleting,
                               .extra_status = disruption};
  const P terminating_otherwise{
      .name = "p1", .node = "node1", .priority = kLow, .extra_meta = deleting};
  {
    SCOPED_TRACE("victim Pods terminating: not eligible");
    Outcome out = RunPostFilter({{"node1", kOnePodRes}}, {victim_by_preemption}, preemptor,
                                {{"node1", Code::kUnschedulable}}, live);
    EXPECT_EQ(std::string(CodeName(out.status.code())), "Unschedulable");
    EXPECT_EQ(out.status.Message(),
              "preemption: not eligible due to a terminating pod on the nominated node.");
    EXPECT_STREQ(ModeName(out.nominating.mode), "Noop");
  }
  {
    SCOPED_TRACE("the nominated node is UnschedulableAndUnresolvable: eligible again");
    Outcome out = RunPostFilter({{"node1", kOnePodRes}}, {victim_by_preemption}, preemptor,
                                {{"node1", Code::kUnschedulableAndUnresolvable}}, live);
    EXPECT_EQ(out.status.Message(),
              "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.");
    EXPECT_STREQ(ModeName(out.nominating.mode), "Override");
    EXPECT_EQ(out.nominating.nominated_node_name, "");
  }
  {
    SCOPED_TRACE("non-victim Pods terminating: eligible");
    Outcome out = RunPostFilter({{"node1", kOnePodRes}}, {terminating_otherwise}, preemptor,
                                {{"node1", Code::kUnschedulable}}, live);
    EXPECT_TRUE(out.status.IsSuccess()) << out.status.Message();
    EXPECT_EQ(out.nominating.nominated_node_name, "node1");
  }
}

// --- TestSelectBestCandidate
// ----------------------------------------------------------------------

struct SelectRow {
  const char* name;  // upstream TestSelectBestCandidate case
  std::vector<std::string> nodes;
  P preemptor;
  std::vector<P> pods;
  std::set<std::string> want;  // any of these
};

TEST(DefaultPreemptionSelectBestCandidateTest, UpstreamTable) {
  const std::string t0 = Epoch(0);
  auto pod = [](const char* name, const char* node, int32_t priority, const std::string& req,
                const std::string& start) {
    return P{.name = name, .node = node, .priority = priority, .requests = req, .start = start};
  };
  const std::vector<SelectRow> rows = {
      {"a pod that fits on both nodes when lower priority pods are preempted",
       {"node1", "node2"},
       {.name = "p", .priority = kHigh, .requests = kLarge},
       {pod("p1", "node1", kMid, kLarge, t0), pod("p2", "node2", kMid, kLarge, t0)},
       {"node1", "node2"}},
      {"node with min highest priority pod is picked",
       {"node1", "node2", "node3"},
       {.name = "p", .priority = kHigh, .requests = kVeryLarge},
       {pod("p1.1", "node1", kMid, kMedium, t0), pod("p1.2", "node1", kMid, kLarge, t0),
        pod("p2.1", "node2", kMid, kMedium, t0), pod("p2.2", "node2", kLow, kMedium, t0),
        pod("p3.1", "node3", kLow, kMedium, t0), pod("p3.2", "node3", kLow, kMedium, t0)},
       {"node3"}},
      {"when highest priorities are the same, minimum sum of priorities is picked",
       {"node1", "node2", "node3"},
       {.name = "p", .priority = kHigh, .requests = kVeryLarge},
       {pod("p1.1", "node1", kMid, kMedium, t0), pod("p1.2", "node1", kMid, kLarge, t0),
        pod("p2.1", "node2", kMid, kLarge, t0), pod("p2.2", "node2", kLow, kMedium, t0),
        pod("p3.1", "node3", kMid, kMedium, t0), pod("p3.2", "node3", kMid, kMedium, t0)},
       {"node2"}},
      {"when highest priority and sum are the same, minimum number of pods is picked",
       {"node1", "node2", "node3"},
       {.name = "p", .priority = kHigh, .requests = kVeryLarge},
       {pod("p1.1", "node1", kMid, kSmall, t0), pod("p1.2", "node1", kNeg, kSmall, t0),
        pod("p1.3", "node1", kMid, kSmall, t0), pod("p1.4", "node1", kNeg, kSmall, t0),
        pod("p2.1", "node2", kMid, kLarge, t0), pod("p2.2", "node2", kNeg, kMedium, t0),
        pod("p3.1", "node3", kMid, kMedium, t0), pod("p3.2", "node3", kNeg, kSmall, t0),
        pod("p3.3", "node3", kLow, kSmall, t0)},
       {"node2"}},
      {"sum of adjusted priorities is considered",
       {"node1", "node2", "node3"},
       {.name = "p", .priority = kHigh, .requests = kVeryLarge},
       {pod("p1.1", "node1", kMid, kSmall, t0), pod("p1.2", "node1", kNeg, kSmall, t0),
        pod("p1.3", "node1", kNeg, kSmall, t0), pod("p2.1", "node2", kMid, kLarge, t0),
        pod("p2.2", "node2", kNeg, kMedium, t0), pod("p3.1", "node3", kMid, kMedium, t0),
        pod("p3.2", "node3", kNeg, kSmall, t0), pod("p3.3", "node3", kLow, kSmall, t0)},
       {"node2"}},
      {"non-overlapping lowest high priority, sum priorities, and number of pods",
       {"node1", "node2", "node3", "node4"},
       {.name = "p", .priority = kVeryHigh, .requests = kVeryLarge},
       {pod("p1.1", "node1", kMid, kSmall, t0), pod("p1.2", "node1", kLow, kSmall, t0),
        pod("p1.3", "node1", kLow, kSmall, t0), pod("p2.1", "node2", kHigh, kLarge, t0),
        pod("p3.1", "node3", kMid, kMedium, t0), pod("p3.2", "node3", kLow, kSmall, t0),
        pod("p3.3", "node3", kLow, kSmall, t0), pod("p3.4", "node3", kLow, kMedium, t0),
        pod("p4.1", "node4", kMid, kMedium, t0), pod("p4.2", "node4", kMid, kSmall, t0),
        pod("p4.3", "node4", kMid, kSmall, t0), pod("p4.4", "node4", kNeg, kSmall, t0)},
       {"node1"}},
      {"same priority, same number of victims, different start time for each node's pod",
       {"node1", "node2", "node3"},
       {.name = "p", .priority = kHigh, .requests = kVeryLarge},
       {pod("p1.1", "node1", kMid, kMedium, Epoch(2)),
        pod("p1.2", "node1", kMid, kMedium, Epoch(2)),
        pod("p2.1", "node2", kMid, kMedium, Epoch(3)),
        pod("p2.2", "node2", kMid, kMedium, Epoch(3)),
        pod("p3.1", "node3", kMid, kMedium, Epoch(1)),
        pod("p3.2", "node3", kMid, kMedium, Epoch(1))},
       {"node2"}},
      {"same priority, same number of victims, different start time for all pods",
       {"node1", "node2", "node3"},
       {.name = "p", .priority = kHigh, .requests = kVeryLarge},
       {pod("p1.1", "node1", kMid, kMedium, Epoch(4)),
        pod("p1.2", "node1", kMid, kMedium, Epoch(2)),
        pod("p2.1", "node2", kMid, kMedium, Epoch(5)),
        pod("p2.2", "node2", kMid, kMedium, Epoch(1)),
        pod("p3.1", "node3", kMid, kMedium, Epoch(3)),
        pod("p3.2", "node3", kMid, kMedium, Epoch(6))},
       {"node3"}},
      {"different priority, same number of victims, different start time for all pods",
       {"node1", "node2", "node3"},
       {.name = "p", .priority = kHigh, .requests = kVeryLarge},
       {pod("p1.1", "node1", kLow, kMedium, Epoch(4)),
        pod("p1.2", "node1", kMid, kMedium, Epoch(2)),
        pod("p2.1", "node2", kMid, kMedium, Epoch(6)),
        pod("p2.2", "node2", kLow, kMedium, Epoch(1)),
        pod("p3.1", "node3", kLow, kMedium, Epoch(3)),
        pod("p3.2", "node3", kMid, kMedium, Epoch(5))},
       {"node2"}},
  };
  for (const SelectRow& row : rows) {
    SCOPED_TRACE(row.name);
    std::vector<std::pair<std::string, std::string>> nodes;
    std::map<std::string, Code> statuses;
    for (const std::string& n : row.nodes) {
      nodes.emplace_back(n, kVeryLargeNode);
      statuses[n] = Code::kUnschedulable;
    }
    Outcome out = RunPostFilter(nodes, row.pods, row.preemptor, statuses);
    ASSERT_TRUE(out.status.IsSuccess()) << out.status.Message();
    EXPECT_STREQ(ModeName(out.nominating.mode), "Override");
    EXPECT_TRUE(row.want.count(out.nominating.nominated_node_name))
        << "picked " << out.nominating.nominated_node_name;
  }
}

}  // namespace
}  // namespace kt::scheduler
