// NodeAffinity plugin, after upstream's node_affinity_test.go: TestNodeAffinity (PreFilter
// results and Filter), TestNodeAffinityPriority (PreScore, Score, NormalizeScore) and
// Test_isSchedulableAfterNodeChange (research/plugins.md §6).
#include "scheduler/plugins/nodeaffinity/node_affinity.h"

#include <gtest/gtest.h>

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "api/node_affinity.h"
#include "scheduler/testing/fakes.h"

namespace kt::scheduler {
namespace {

using namespace std::string_view_literals;

using testing::FakeHandle;

// Spec members for a required node affinity with these nodeSelectorTerms (a JSON array).
std::string Required(const std::string& terms) {
  return R"("affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":)" +
         terms + "}}}";
}

// Spec members for preferred terms (a JSON array of {weight, preference}).
std::string Preferred(const std::string& terms) {
  return R"("affinity":{"nodeAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":)" +
         terms + "}}";
}

ObjectPtr MakePod(const std::string& spec_members) {
  return testing::Pod(R"({"metadata":{"name":"pod"},"spec":{)" + spec_members + "}}");
}

ObjectPtr MakeNode(const std::string& name, const std::string& labels) {
  return testing::Node(R"({"metadata":{"name":")" + name + R"(","labels":)" + labels + "}}");
}

// A NodeAffinity (for NodeAffinityArgs.addedAffinity) from its JSON, via a pod that carries it.
std::optional<api::NodeAffinity> AffinityFromJson(const std::string& node_affinity) {
  ObjectPtr pod =
      testing::Pod(R"({"metadata":{"name":"holder"},"spec":{"affinity":{"nodeAffinity":)" +
                   node_affinity + "}}}");
  return pod->As<api::Pod>()->spec.node_affinity;
}

struct NA {
  std::unique_ptr<Plugin> plugin;
  PreFilterPlugin* pre_filter;
  FilterPlugin* filter;
  PreScorePlugin* pre_score;
  ScorePlugin* score;
  EnqueueExtensions* events;
};

NA NewNodeAffinityPlugin(FakeHandle* h, const std::string& added_affinity = "") {
  PluginArgs args;
  if (!added_affinity.empty()) args.node_affinity.added_affinity = AffinityFromJson(added_affinity);
  NA p;
  p.plugin = testing::NewPlugin(kNodeAffinityName, h, args);
  p.pre_filter = dynamic_cast<PreFilterPlugin*>(p.plugin.get());
  p.filter = dynamic_cast<FilterPlugin*>(p.plugin.get());
  p.pre_score = dynamic_cast<PreScorePlugin*>(p.plugin.get());
  p.score = dynamic_cast<ScorePlugin*>(p.plugin.get());
  p.events = dynamic_cast<EnqueueExtensions*>(p.plugin.get());
  return p;
}

// --- PreFilter and Filter ----------------------------------------------------------------------

constexpr const char* kErrPod = "node(s) didn't match Pod's node affinity/selector";
constexpr const char* kErrEnforced = "node(s) didn't match scheduler-enforced node affinity";

struct FilterRow {
  const char* name;  // upstream TestNodeAffinity case
  std::string pod_spec;
  std::string labels = "{}";
  std::string node_name = "node";
  std::string added_affinity = "";
  bool run_pre_filter = true;
  // PreFilter: "" success, "Skip", or an UnschedulableAndUnresolvable message.
  std::string want_pre_filter = "";
  std::optional<std::set<std::string>> want_node_names = std::nullopt;
  // Filter: "" fits, else the UnschedulableAndUnresolvable reason.
  std::string want_filter = "";
};

TEST(NodeAffinityFilterTest, UpstreamTable) {
  const std::string in_node1 =
      R"({"matchFields":[{"key":"metadata.name","operator":"In","values":["node1"]}]})";
  const std::string in_node2 =
      R"({"matchFields":[{"key":"metadata.name","operator":"In","values":["node2"]}]})";
  const std::string foo_in_bar =
      R"({"matchExpressions":[{"key":"foo","operator":"In","values":["bar"]}]})";
  const std::string added_name_node2 =
      R"({"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[)" + in_node2 +
      "]}}";
  const std::vector<FilterRow> rows = {
      {.name = "missing labels",
       .pod_spec = R"("nodeSelector":{"foo":"bar"})",
       .want_filter = kErrPod},
      {.name = "same labels",
       .pod_spec = R"("nodeSelector":{"foo":"bar"})",
       .labels = R"({"foo":"bar"})"},
      {.name = "node labels are superset",
       .pod_spec = R"("nodeSelector":{"foo":"bar"})",
       .labels = R"({"foo":"bar","baz":"blah"})"},
      {.name = "node labels are subset",
       .pod_spec = R"("nodeSelector":{"foo":"bar","baz":"blah"})",
       .labels = R"({"foo":"bar"})",
       .want_filter = kErrPod},
      {.name = "Pod with matchExpressions using In operator that matches the existing node",
       .pod_spec = Required(
           R"([{"matchExpressions":[{"key":"foo","operator":"In","values":["bar","value2"]}]}])"),
       .labels = R"({"foo":"bar"})"},
      {.name = "Pod with matchExpressions using Gt operator that matches the existing node",
       .pod_spec = Required(
           R"([{"matchExpressions":[{"key":"kernel-version","operator":"Gt","values":["0204"]}]}])"),
       .labels = R"({"kernel-version":"0206"})"},
      {.name =
           "(derived) Pod with matchExpressions using Lt operator that matches the existing node",
       .pod_spec = Required(
           R"([{"matchExpressions":[{"key":"kernel-version","operator":"Lt","values":["0206"]}]}])"),
       .labels = R"({"kernel-version":"0204"})"},
      {.name = "(derived) Pod with matchExpressions using Gt operator that doesn't match",
       .pod_spec = Required(
           R"([{"matchExpressions":[{"key":"kernel-version","operator":"Gt","values":["0206"]}]}])"),
       .labels = R"({"kernel-version":"0204"})",
       .want_filter = kErrPod},
      {.name = "Pod with matchExpressions using NotIn operator that matches the existing node",
       .pod_spec = Required(
           R"([{"matchExpressions":[{"key":"mem-type","operator":"NotIn","values":["DDR","DDR2"]}]}])"),
       .labels = R"({"mem-type":"DDR3"})"},
      {.name = "Pod with matchExpressions using Exists operator that matches the existing node",
       .pod_spec = Required(R"([{"matchExpressions":[{"key":"GPU","operator":"Exists"}]}])"),
       .labels = R"({"GPU":"NVIDIA-GRID-K1"})"},
      {.name = "(derived) Pod with matchExpressions using DoesNotExist operator",
       .pod_spec = Required(R"([{"matchExpressions":[{"key":"GPU","operator":"DoesNotExist"}]}])"),
       .labels = R"({"GPU":"NVIDIA-GRID-K1"})",
       .want_filter = kErrPod},
      {.name = "(derived) Pod with matchExpressions using DoesNotExist operator, label absent",
       .pod_spec = Required(R"([{"matchExpressions":[{"key":"GPU","operator":"DoesNotExist"}]}])"),
       .labels = R"({"foo":"bar"})"},
      {.name = "Pod with affinity that don't match node's labels won't schedule onto the node",
       .pod_spec = Required(
           R"([{"matchExpressions":[{"key":"foo","operator":"In","values":["value1","value2"]}]}])"),
       .labels = R"({"foo":"bar"})",
       .want_filter = kErrPod},
      {.name = "Pod with empty MatchExpressions is not a valid value will match no objects and "
               "won't schedule onto the node",
       .pod_spec = Required(R"([{"matchExpressions":[]}])"),
       .labels = R"({"foo":"bar"})",
       .want_filter = kErrPod},
      {.name = "Pod with no Affinity will schedule onto a node",
       .pod_spec = "",
       .labels = R"({"foo":"bar"})",
       .want_pre_filter = "Skip"},
      {.name = "Pod with Affinity but nil NodeSelector will schedule onto a node",
       .pod_spec = R"("affinity":{"nodeAffinity":{}})",
       .labels = R"({"foo":"bar"})",
       .want_pre_filter = "Skip"},
      {.name = "Pod with multiple matchExpressions ANDed that matches the existing node",
       .pod_spec = Required(R"([{"matchExpressions":[{"key":"GPU","operator":"Exists"},
                 {"key":"GPU","operator":"NotIn","values":["AMD","INTER"]}]}])"),
       .labels = R"({"GPU":"NVIDIA-GRID-K1"})"},
      {.name = "Pod with multiple matchExpressions ANDed that doesn't match the existing node",
       .pod_spec = Required(R"([{"matchExpressions":[{"key":"GPU","operator":"Exists"},
                 {"key":"GPU","operator":"In","values":["AMD","INTER"]}]}])"),
       .labels = R"({"GPU":"NVIDIA-GRID-K1"})",
       .want_filter = kErrPod},
      {.name = "Pod with multiple NodeSelectorTerms ORed in affinity, matches the node's labels "
               "and will schedule onto the node",
       .pod_spec = Required(
           R"([{"matchExpressions":[{"key":"foo","operator":"In","values":["bar","value2"]}]},
                 {"matchExpressions":[{"key":"diffkey","operator":"In","values":["wrong","value2"]}]}])"),
       .labels = R"({"foo":"bar"})"},
      {.name = "Pod with an Affinity and a PodSpec.NodeSelector(the old thing that we are "
               "deprecating) both are satisfied, will schedule onto the node",
       .pod_spec = R"("nodeSelector":{"foo":"bar"},)" +
                   Required(R"([{"matchExpressions":[{"key":"foo","operator":"Exists"}]}])"),
       .labels = R"({"foo":"bar"})"},
      {.name = "Pod with an Affinity matches node's labels but the PodSpec.NodeSelector(the old "
               "thing that we are deprecating) is not satisfied, won't schedule onto the node",
       .pod_spec = R"("nodeSelector":{"foo":"bar"},)" +
                   Required(R"([{"matchExpressions":[{"key":"foo","operator":"Exists"}]}])"),
       .labels = R"({"foo":"barrrrrr"})",
       .want_filter = kErrPod},
      {.name = "Pod with an invalid value in Affinity term won't be scheduled onto the node",
       .pod_spec = Required(
           R"([{"matchExpressions":[{"key":"foo","operator":"NotIn","values":["invalid value: ___@#$%^"]}]}])"),
       .labels = R"({"foo":"bar"})",
       .want_filter = kErrPod},
      {.name = "Pod with matchFields using In operator that matches the existing node",
       .pod_spec = Required("[" + in_node1 + "]"),
       .node_name = "node1",
       .want_node_names = std::set<std::string>{"node1"}},
      {.name = "Pod with matchFields using In operator that does not match the existing node",
       .pod_spec = Required("[" + in_node1 + "]"),
       .node_name = "node2",
       .want_node_names = std::set<std::string>{"node1"},
       .want_filter = kErrPod},
      {.name = "Pod with two terms: matchFields does not match, but matchExpressions matches",
       .pod_spec = Required(
           R"([{"matchFields":[{"key":"metadata.name","operator":"In","values":["node1"]},
                               {"key":"metadata.name","operator":"In","values":["node2"]}]},)" +
           foo_in_bar + "]"),
       .labels = R"({"foo":"bar"})",
       .node_name = "node2"},
      {.name = "Pod with one term: matchFields does not match, but matchExpressions matches",
       .pod_spec = Required(
           R"([{"matchFields":[{"key":"metadata.name","operator":"In","values":["node1"]}],
                "matchExpressions":[{"key":"foo","operator":"In","values":["bar"]}]}])"),
       .labels = R"({"foo":"bar"})",
       .node_name = "node2",
       .want_node_names = std::set<std::string>{"node1"},
       .want_filter = kErrPod},
      {.name = "Pod with one term: both matchFields and matchExpressions match",
       .pod_spec = Required(
           R"([{"matchFields":[{"key":"metadata.name","operator":"In","values":["node1"]}],
                "matchExpressions":[{"key":"foo","operator":"In","values":["bar"]}]}])"),
       .labels = R"({"foo":"bar"})",
       .node_name = "node1",
       .want_node_names = std::set<std::string>{"node1"}},
      {.name = "Pod with two terms: both matchFields and matchExpressions do not match",
       .pod_spec = Required(
           "[" + in_node1 +
           R"(,{"matchExpressions":[{"key":"foo","operator":"In","values":["not-match-to-bar"]}]}])"),
       .labels = R"({"foo":"bar"})",
       .node_name = "node2",
       .want_filter = kErrPod},
      {.name = "Pod with two terms of node.Name affinity",
       .pod_spec = Required("[" + in_node1 + "," + in_node2 + "]"),
       .node_name = "node2",
       .want_node_names = std::set<std::string>{"node1", "node2"}},
      {.name = "Pod with two conflicting mach field requirements",
       .pod_spec = Required(
           R"([{"matchFields":[{"key":"metadata.name","operator":"In","values":["node1"]},
                               {"key":"metadata.name","operator":"In","values":["node2"]}]}])"),
       .labels = R"({"foo":"bar"})",
       .node_name = "node2",
       .want_pre_filter = "pod affinity terms conflict",
       .want_filter = kErrPod},
      {.name = "(derived) matchFields NotIn the node's name",
       .pod_spec = Required(
           R"([{"matchFields":[{"key":"metadata.name","operator":"NotIn","values":["node2"]}]}])"),
       .node_name = "node2",
       .want_filter = kErrPod},
      {.name = "Matches added affinity and Pod's node affinity",
       .pod_spec =
           Required(R"([{"matchExpressions":[{"key":"zone","operator":"In","values":["foo"]}]}])"),
       .labels = R"({"zone":"foo"})",
       .node_name = "node2",
       .added_affinity = added_name_node2},
      {.name = "Matches added affinity but not Pod's node affinity",
       .pod_spec =
           Required(R"([{"matchExpressions":[{"key":"zone","operator":"In","values":["bar"]}]}])"),
       .labels = R"({"zone":"foo"})",
       .node_name = "node2",
       .added_affinity = added_name_node2,
       .want_filter = kErrPod},
      {.name = "Doesn't match added affinity",
       .pod_spec = "",
       .labels = R"({"zone":"foo"})",
       .node_name = "node2",
       .added_affinity =
           R"({"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"zone","operator":"In","values":["bar"]}]}]}})",
       .want_filter = kErrEnforced},
      {.name = "Matches node selector correctly even if PreFilter is not called",
       .pod_spec = R"("nodeSelector":{"foo":"bar"})",
       .labels = R"({"foo":"bar","baz":"blah"})",
       .run_pre_filter = false},
      {.name = "Matches node affinity correctly even if PreFilter is not called",
       .pod_spec = Required(R"([{"matchExpressions":[{"key":"GPU","operator":"Exists"},
                 {"key":"GPU","operator":"NotIn","values":["AMD","INTER"]}]}])"),
       .labels = R"({"GPU":"NVIDIA-GRID-K1"})",
       .run_pre_filter = false},
  };
  for (const FilterRow& row : rows) {
    SCOPED_TRACE(row.name);
    FakeHandle h;
    NA p = NewNodeAffinityPlugin(&h, row.added_affinity);
    PodInfoPtr pod = NewPodInfo(MakePod(row.pod_spec));
    NodeInfo node(MakeNode(row.node_name, row.labels));
    if (row.run_pre_filter) {
      PreFilterResult result;
      Status s = p.pre_filter->PreFilter(*pod, &result);
      if (row.want_pre_filter.empty()) {
        EXPECT_TRUE(s.IsSuccess()) << CodeName(s.code()) << ": " << s.Message();
      } else if (row.want_pre_filter == "Skip") {
        EXPECT_TRUE(s.IsSkip()) << CodeName(s.code()) << ": " << s.Message();
      } else {
        EXPECT_EQ(CodeName(s.code()), "UnschedulableAndUnresolvable"sv);
        EXPECT_EQ(s.Message(), row.want_pre_filter);
      }
      EXPECT_EQ(result.node_names, row.want_node_names);
    }
    Status s = p.filter->Filter(*pod, node);
    if (row.want_filter.empty()) {
      EXPECT_TRUE(s.IsSuccess()) << CodeName(s.code()) << ": " << s.Message();
    } else {
      EXPECT_EQ(CodeName(s.code()), "UnschedulableAndUnresolvable"sv);
      EXPECT_EQ(s.Reasons(), std::vector<std::string>{row.want_filter});
    }
  }
}

// An added affinity narrows nothing in PreFilter: only the pod's own terms make a
// PreFilterResult, and a pod without any selector is not skipped when an added affinity exists.
TEST(NodeAffinityFilterTest, AddedAffinityNeverFeedsThePreFilterResult) {
  FakeHandle h;
  NA p = NewNodeAffinityPlugin(
      &h,
      R"({"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchFields":[{"key":"metadata.name","operator":"In","values":["node2"]}]}]}})");
  PodInfoPtr pod = NewPodInfo(MakePod(""));
  PreFilterResult result;
  Status s = p.pre_filter->PreFilter(*pod, &result);
  EXPECT_TRUE(s.IsSuccess()) << CodeName(s.code());
  EXPECT_TRUE(result.AllNodes());
  NodeInfo node1(MakeNode("node1", "{}"));
  NodeInfo node2(MakeNode("node2", "{}"));
  EXPECT_EQ(p.filter->Filter(*pod, node1).Message(), kErrEnforced);
  EXPECT_TRUE(p.filter->Filter(*pod, node2).IsSuccess());
}

// Nodes that differ only in their hostname label share a label set, and the plugin decides once
// per label set when the pod's requirements read neither that label nor the node's name. Over
// nodes sharing label sets and pods of every kind of requirement (hostname ones, matchFields,
// Gt/Lt, NotIn, invalid terms), Filter and FilterBatch agree with matching each node alone.
TEST(NodeAffinityFilterTest, LabelSetVerdictsAgreeWithMatchingEachNode) {
  FakeHandle h;
  NA p = NewNodeAffinityPlugin(&h);
  std::vector<const NodeInfo*> nodes;
  for (int i = 0; i < 24; ++i) {
    const std::string name = "node" + std::to_string(i);
    std::string labels = R"({"kubernetes.io/hostname":")" + name +
                         R"(","topology.kubernetes.io/zone":"zone-)" + std::to_string(i % 3) +
                         R"(","gen":")" + std::to_string(i % 2 ? 4 : 7) + R"(")";
    if (i % 4 == 0) labels += R"(,"gpu":"yes")";
    labels += "}";
    h.cache.AddNode(MakeNode(name, labels));
    nodes.push_back(h.cache.Get(name));
  }
  // A node outside the cache (not classified) is matched alone.
  NodeInfo outside(MakeNode("outside", R"({"topology.kubernetes.io/zone":"zone-0"})"));
  nodes.push_back(&outside);
  EXPECT_EQ(nodes[0]->label_set(), nodes[12]->label_set());  // same zone, gen and gpu
  EXPECT_NE(nodes[0]->label_set(), nodes[1]->label_set());
  EXPECT_NE(nodes[0]->label_set(), 0u);
  EXPECT_EQ(outside.label_set(), 0u);

  auto expr = [](const std::string& key, const std::string& op, const std::string& values) {
    return R"({"key":")" + key + R"(","operator":")" + op + R"(")" +
           (values.empty() ? "" : R"(,"values":)" + values) + "}";
  };
  const std::vector<std::string> specs = {
      R"("nodeSelector":{"topology.kubernetes.io/zone":"zone-1"})",
      R"("nodeSelector":{"kubernetes.io/hostname":"node5"})",
      R"("nodeSelector":{"gpu":"yes","topology.kubernetes.io/zone":"zone-0"})",
      Required(R"([{"matchExpressions":[)" +
               expr("topology.kubernetes.io/zone", "In", R"(["zone-0","zone-2"])") + "]}]"),
      Required(R"([{"matchExpressions":[)" + expr("gen", "Gt", R"(["5"])") + "]}]"),
      Required(R"([{"matchExpressions":[)" + expr("gpu", "DoesNotExist", "") +
               "]},"
               R"({"matchExpressions":[)" +
               expr("gen", "Lt", R"(["5"])") + "]}]"),
      Required(R"([{"matchExpressions":[)" +
               expr("kubernetes.io/hostname", "NotIn", R"(["node1","node2"])") + "]}]"),
      Required(R"([{"matchExpressions":[)" + expr("kubernetes.io/hostname", "Exists", "") + "," +
               expr("gpu", "Exists", "") + "]}]"),
      Required(R"([{"matchFields":[{"key":"metadata.name","operator":"In","values":["node3"]}]},)"
               R"({"matchExpressions":[)" +
               expr("gpu", "In", R"(["yes"])") + "]}]"),
      Required(R"([{"matchExpressions":[)" + expr("gen", "Gt", R"(["x"])") + "]}]"),
      R"("nodeSelector":{"topology.kubernetes.io/zone":"zone-2"},)" +
          Required(R"([{"matchExpressions":[)" + expr("gpu", "NotIn", R"(["yes"])") + "]}]"),
  };
  int admitted = 0;
  int rejections = 0;
  for (size_t s = 0; s < specs.size(); ++s) {
    SCOPED_TRACE(specs[s]);
    ++h.cycle;
    ObjectPtr object = MakePod(specs[s]);
    PodInfoPtr pod = NewPodInfo(object);
    PreFilterResult result;
    ASSERT_FALSE(p.pre_filter->PreFilter(*pod, &result).IsSkip());
    const api::RequiredNodeAffinity required(pod->pod());
    std::vector<uint8_t> rejected(nodes.size(), 0);
    ASSERT_TRUE(p.filter->FilterBatch(*pod, nodes, rejected));
    for (size_t i = 0; i < nodes.size(); ++i) {
      const bool want = required.Match(*nodes[i]->node());
      EXPECT_EQ(rejected[i] == 0, want) << nodes[i]->name();
      EXPECT_EQ(p.filter->Filter(*pod, *nodes[i]).IsSuccess(), want) << nodes[i]->name();
      (want ? admitted : rejections) += 1;
    }
  }
  // Both answers occur: the table does not pass by admitting (or rejecting) everything.
  EXPECT_GT(admitted, 40);
  EXPECT_GT(rejections, 40);
}

// A batch leaves nodes another filter already rejected alone, and rejects what Filter would.
TEST(NodeAffinityFilterTest, FilterBatchKeepsEarlierRejections) {
  FakeHandle h;
  NA p = NewNodeAffinityPlugin(&h);
  h.cache.AddNode(MakeNode("a", R"({"kubernetes.io/hostname":"a","foo":"bar"})"));
  h.cache.AddNode(MakeNode("b", R"({"kubernetes.io/hostname":"b","foo":"baz"})"));
  h.cache.AddNode(MakeNode("c", R"({"kubernetes.io/hostname":"c","foo":"bar"})"));
  std::vector<const NodeInfo*> nodes = {h.cache.Get("a"), h.cache.Get("b"), h.cache.Get("c")};
  EXPECT_TRUE(p.filter->FilterBatch(PodInfo(), {}, {}));  // the framework's question
  PodInfoPtr pod = NewPodInfo(MakePod(R"("nodeSelector":{"foo":"bar"})"));
  std::vector<uint8_t> rejected = {0, 0, 1};
  p.filter->FilterBatch(*pod, nodes, rejected);
  EXPECT_EQ(rejected, (std::vector<uint8_t>{0, 1, 1}));
}

// A node update keeps its label set while the labels stay, and moves it when they change.
TEST(NodeAffinityFilterTest, NodeUpdatesFollowTheirLabels) {
  FakeHandle h;
  NA p = NewNodeAffinityPlugin(&h);
  h.cache.AddNode(MakeNode("a", R"({"kubernetes.io/hostname":"a","foo":"bar"})"));
  h.cache.AddNode(MakeNode("b", R"({"kubernetes.io/hostname":"b","foo":"baz"})"));
  const NodeInfo* a = h.cache.Get("a");
  const NodeInfo* b = h.cache.Get("b");
  const uint32_t baz = b->label_set();
  EXPECT_NE(a->label_set(), baz);
  h.cache.AddNode(MakeNode("b", R"({"kubernetes.io/hostname":"b","foo":"baz"})"));
  EXPECT_EQ(b->label_set(), baz);
  h.cache.AddNode(MakeNode("b", R"({"kubernetes.io/hostname":"b","foo":"bar"})"));
  EXPECT_EQ(b->label_set(), a->label_set());
  PodInfoPtr pod = NewPodInfo(MakePod(R"("nodeSelector":{"foo":"bar"})"));
  std::vector<const NodeInfo*> nodes = {a, b};
  std::vector<uint8_t> rejected(nodes.size(), 0);
  p.filter->FilterBatch(*pod, nodes, rejected);
  EXPECT_EQ(rejected, (std::vector<uint8_t>{0, 0}));
}

// --- Score -------------------------------------------------------------------------------------

const char* kLabel1 = R"({"foo":"bar"})";
const char* kLabel2 = R"({"key":"value"})";
const char* kLabel3 = R"({"az":"az1"})";
const char* kLabel4 = R"({"abc":"az11","def":"az22"})";
const char* kLabel5 = R"({"foo":"bar","key":"value","az":"az1"})";

const char* kAffinity1Terms =
    R"([{"weight":2,"preference":{"matchExpressions":[{"key":"foo","operator":"In","values":["bar"]}]}}])";
const char* kAffinity2Terms = R"([
    {"weight":2,"preference":{"matchExpressions":[{"key":"foo","operator":"In","values":["bar"]}]}},
    {"weight":4,"preference":{"matchExpressions":[{"key":"key","operator":"In","values":["value"]}]}},
    {"weight":5,"preference":{"matchExpressions":[{"key":"foo","operator":"In","values":["bar"]},
                                                  {"key":"key","operator":"In","values":["value"]},
                                                  {"key":"az","operator":"In","values":["az1"]}]}}])";

struct ScoreRow {
  const char* name;  // upstream TestNodeAffinityPriority case
  std::string pod_spec;
  std::vector<std::pair<const char*, const char*>> nodes;  // name, labels
  std::vector<int64_t> want;
  std::string added_affinity = "";
  bool run_pre_score = true;
};

std::vector<int64_t> RunScore(const ScoreRow& row) {
  FakeHandle h;
  NA p = NewNodeAffinityPlugin(&h, row.added_affinity);
  PodInfoPtr pod = NewPodInfo(MakePod(row.pod_spec));
  for (const auto& [name, labels] : row.nodes) h.cache.AddNode(MakeNode(name, labels));
  std::vector<const NodeInfo*> nodes;
  for (const auto& [name, labels] : row.nodes) nodes.push_back(h.cache.Get(name));
  if (row.run_pre_score) {
    Status s = p.pre_score->PreScore(*pod, nodes);
    EXPECT_TRUE(s.IsSuccess()) << CodeName(s.code()) << ": " << s.Message();
  }
  std::vector<NodeScore> scores;
  for (const NodeInfo* n : nodes) scores.push_back({n, p.score->Score(*pod, *n)});
  EXPECT_TRUE(p.score->HasNormalizeScore());
  p.score->NormalizeScore(*pod, scores);
  std::vector<int64_t> out;
  for (const NodeScore& s : scores) out.push_back(s.score);
  return out;
}

TEST(NodeAffinityScoreTest, UpstreamTable) {
  const std::vector<ScoreRow> rows = {
      {.name = "all nodes are same priority as NodeAffinity is nil",
       .pod_spec = "",
       .nodes = {{"node1", kLabel1}, {"node2", kLabel2}, {"node3", kLabel3}},
       .want = {0, 0, 0},
       .run_pre_score = false},
      {.name = "no node matches preferred scheduling requirements in NodeAffinity of pod so all "
               "nodes' priority is zero",
       .pod_spec = Preferred(kAffinity1Terms),
       .nodes = {{"node1", kLabel4}, {"node2", kLabel2}, {"node3", kLabel3}},
       .want = {0, 0, 0}},
      {.name = "only node1 matches the preferred scheduling requirements of pod",
       .pod_spec = Preferred(kAffinity1Terms),
       .nodes = {{"node1", kLabel1}, {"node2", kLabel2}, {"node3", kLabel3}},
       .want = {100, 0, 0}},
      {.name = "all nodes matches the preferred scheduling requirements of pod but with "
               "different priorities",
       .pod_spec = Preferred(kAffinity2Terms),
       .nodes = {{"node1", kLabel1}, {"node5", kLabel5}, {"node2", kLabel2}},
       .want = {18, 100, 36}},
      {.name = "added affinity",
       .pod_spec = "",
       .nodes = {{"node1", kLabel1}, {"node2", kLabel2}},
       .want = {100, 0},
       .added_affinity = std::string(R"({"preferredDuringSchedulingIgnoredDuringExecution":)") +
                         kAffinity1Terms + "}"},
      {.name = "added affinity and pod has default affinity",
       .pod_spec = Preferred(kAffinity1Terms),
       .nodes = {{"node1", kLabel1}, {"node2", kLabel2}, {"node3", kLabel5}},
       .want = {40, 60, 100},
       .added_affinity =
           R"({"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":3,"preference":{"matchExpressions":[{"key":"key","operator":"In","values":["value"]}]}}]})"},
      {.name = "calculate the priorities correctly even if PreScore is not called (upstream "
               "runs PreScore here)",
       .pod_spec = Preferred(kAffinity2Terms),
       .nodes = {{"node1", kLabel1}, {"node5", kLabel5}, {"node2", kLabel2}},
       .want = {18, 100, 36}},
  };
  for (const ScoreRow& row : rows) {
    SCOPED_TRACE(row.name);
    EXPECT_EQ(RunScore(row), row.want);
  }
}

// Upstream Score falls back to computing the pod's preferred terms when PreScore did not run
// ("Fallback to calculate preferredNodeAffinity here when PreScore is disabled", node_affinity.go
// Score);
TEST(NodeAffinityScoreTest, ScoreWithoutPreScoreFallsBackToThePodsTerms) {
  ScoreRow row{.name = "preferred terms without PreScore",
               .pod_spec = Preferred(kAffinity2Terms),
               .nodes = {{"node1", kLabel1}, {"node5", kLabel5}, {"node2", kLabel2}},
               .want = {18, 100, 36},
               .run_pre_score = false};
  EXPECT_EQ(RunScore(row), row.want);
}

TEST(NodeAffinityScoreTest, PreScoreSkipAndError) {
  FakeHandle h;
  NA p = NewNodeAffinityPlugin(&h);
  h.cache.AddNode(MakeNode("node1", kLabel1));
  const NodeInfo* nodes[] = {h.cache.Get("node1")};
  // "Skip is returned in PreScore when NodeAffinity is nil".
  PodInfoPtr plain = NewPodInfo(MakePod(""));
  EXPECT_EQ(CodeName(p.pre_score->PreScore(*plain, nodes).code()), "Skip"sv);
  // "PreScore returns error when an incoming Pod has a broken affinity".
  PodInfoPtr broken = NewPodInfo(MakePod(Preferred(
      R"([{"weight":2,"preference":{"matchExpressions":[{"key":"invalid key","operator":"In","values":["bar"]}]}}])")));
  Status s = p.pre_score->PreScore(*broken, nodes);
  EXPECT_EQ(CodeName(s.code()), "Error"sv);
  EXPECT_EQ(s.Message().rfind("[0].matchExpressions[0].key: Invalid value: \"invalid key\": name "
                              "part must consist of alphanumeric characters",
                              0),
            0u)
      << s.Message();
}

// --- Queueing hints ----------------------------------------------------------------------------

const char* HintName(QueueingHint h) { return h == QueueingHint::kQueue ? "Queue" : "QueueSkip"; }

TEST(NodeAffinityHintsTest, RegisteredEvents) {
  FakeHandle h;
  NA p = NewNodeAffinityPlugin(&h);
  std::vector<ClusterEventWithHint> events = p.events->EventsToRegister();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].event.resource, EventResource::kNode);
  EXPECT_EQ(events[0].event.action, static_cast<uint32_t>(kAdd | kUpdateNodeLabel));
}

TEST(NodeAffinityHintsTest, IsSchedulableAfterNodeChange) {
  // Test_isSchedulableAfterNodeChange; the pod requires foo In [bar].
  const std::string added_foo_bar =
      R"({"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"foo","operator":"In","values":["bar"]}]}]}})";
  ObjectPtr not_a_node = MakePod("");
  ObjectPtr plain = MakeNode("node", "{}");
  ObjectPtr foo_bar = MakeNode("node", R"({"foo":"bar"})");
  ObjectPtr k_v = MakeNode("node", R"({"k":"v"})");
  ObjectPtr plain_capacity = testing::Node(
      R"({"metadata":{"name":"node"},"status":{"allocatable":{"pods":"32"},"capacity":{"pods":"32"}}})");
  struct Row {
    const char* name;
    std::string added_affinity;
    ObjectPtr old_obj, new_obj;
    const char* want;
  } rows[] = {
      {"backoff-wrong-new-object", "", nullptr, not_a_node, "Queue"},
      // Upstream util.As[*v1.Node](oldObj, newObj) fails for an old object of the wrong type and
      // returns Queue (+ error) before any matching;
      {"backoff-wrong-old-object", "", not_a_node, plain, "Queue"},
      {"skip-queue-on-add", "", nullptr, plain, "QueueSkip"},
      {"queue-on-add", "", nullptr, foo_bar, "Queue"},
      {"skip-unrelated-changes", "", plain, plain_capacity, "QueueSkip"},
      {"skip-unrelated-changes-on-labels", "", plain, k_v, "QueueSkip"},
      {"skip-labels-changes-on-node-from-suitable-to-unsuitable", "", foo_bar, k_v, "QueueSkip"},
      {"queue-on-labels-change-makes-pod-schedulable", "", plain, foo_bar, "Queue"},
      {"skip-queue-on-add-scheduler-enforced-node-affinity", added_foo_bar, nullptr, plain,
       "QueueSkip"},
      {"queue-on-add-scheduler-enforced-node-affinity", added_foo_bar, nullptr, foo_bar, "Queue"},
  };
  PodInfoPtr pod = NewPodInfo(MakePod(
      Required(R"([{"matchExpressions":[{"key":"foo","operator":"In","values":["bar"]}]}])")));
  for (const Row& row : rows) {
    FakeHandle h;
    NA p = NewNodeAffinityPlugin(&h, row.added_affinity);
    std::vector<ClusterEventWithHint> events = p.events->EventsToRegister();
    ASSERT_EQ(events.size(), 1u);
    EXPECT_STREQ(HintName(events[0].hint(*pod, row.old_obj, row.new_obj)), row.want) << row.name;
  }
}

// A deleted node's label set goes and another node's labels take its slot under a new id: the
// verdict kept by slot does not answer for them.
TEST(NodeAffinityFilterTest, ARecycledLabelSetSlotIsNotTakenForItsFormerSet) {
  FakeHandle h;
  NA p = NewNodeAffinityPlugin(&h);
  PodInfoPtr pod = NewPodInfo(MakePod(R"("nodeSelector":{"foo":"bar"})"));
  h.cache.AddNode(MakeNode("a", R"({"kubernetes.io/hostname":"a","foo":"bar"})"));
  const uint32_t old_set = h.cache.Get("a")->label_set();
  EXPECT_TRUE(p.filter->Filter(*pod, *h.cache.Get("a")).IsSuccess());
  h.cache.RemoveNode("a");
  h.cache.AddNode(MakeNode("b", R"({"kubernetes.io/hostname":"b","foo":"baz"})"));
  const NodeInfo& b = *h.cache.Get("b");
  ASSERT_EQ(SetSlot(b.label_set()), SetSlot(old_set));
  ASSERT_NE(b.label_set(), old_set);
  EXPECT_FALSE(p.filter->Filter(*pod, b).IsSuccess());
  std::vector<const NodeInfo*> nodes = {&b};
  std::vector<uint8_t> rejected(1, 0);
  p.filter->FilterBatch(*pod, nodes, rejected);
  EXPECT_EQ(rejected[0], 1);
}

}  // namespace
}  // namespace kt::scheduler
