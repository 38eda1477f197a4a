// The framework's own rules (research/plugins.md §1–2): the FitError text, PreFilterResult
// merging and the PreFilter runner, MultiPoint expansion and its errors, score weights, and
// MergePlugins (profile.h).
#include "scheduler/framework/framework.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "scheduler/algorithm.h"
#include "scheduler/plugins/defaultbinder/default_binder.h"
#include "scheduler/plugins/queuesort/priority_sort.h"
#include "scheduler/testing/fakes.h"

namespace kt::scheduler {
namespace {

using testing::FakeHandle;
using testing::Pod;
using testing::ReadyNode;

// --- FitErrorMessage -----------------------------------------------------------------------------

TEST(FitErrorMessageTest, CountsReasonsAndSortsEntriesAsStrings) {
  Diagnosis d;
  for (const char* n : {"b0", "b1", "b2", "b3", "b4", "b5", "b6", "b7", "b8", "b9"}) {
    d.node_to_status.Set(n, Status::Unschedulable("b"));
  }
  d.node_to_status.Set("a0", Status::Unresolvable("a"));
  d.node_to_status.Set("a1", Status::Unresolvable("a"));
  // "10 b" sorts before "2 a": plain string order, as upstream's sort.Strings.
  EXPECT_EQ(FitErrorMessage(12, d), "0/12 nodes are available: 10 b, 2 a.");
}

TEST(FitErrorMessageTest, EveryReasonOfEveryNodeCounts) {
  Diagnosis d;
  d.node_to_status.Set("n1",
                       Status(Code::kUnschedulable,
                              std::vector<std::string>{"Insufficient cpu", "Insufficient memory"}));
  d.node_to_status.Set("n2", Status::Unschedulable("Insufficient cpu"));
  d.node_to_status.Set("n3", Status::Unresolvable("node(s) had untolerated taint(s)"));
  EXPECT_EQ(FitErrorMessage(3, d),
            "0/3 nodes are available: 1 Insufficient memory, 1 node(s) had untolerated taint(s), 2 "
            "Insufficient cpu.");
}

TEST(FitErrorMessageTest, AbsentNodes) {
  // Absent nodes take the absent status; the default one has no reason and adds nothing.
  Diagnosis d;
  d.node_to_status.Set("n1", Status::Unschedulable("Insufficient cpu"));
  d.node_to_status.Set("n2", Status::Unschedulable("Insufficient cpu"));
  EXPECT_EQ(FitErrorMessage(5, d), "0/5 nodes are available: 2 Insufficient cpu.");
  d.node_to_status.SetAbsentNodesStatus(
      Status::Unresolvable("node(s) didn't satisfy plugin(s) [NodeAffinity]"));
  EXPECT_EQ(FitErrorMessage(5, d),
            "0/5 nodes are available: 2 Insufficient cpu, 3 node(s) didn't satisfy plugin(s) "
            "[NodeAffinity].");
}

TEST(FitErrorMessageTest, NoReasonsAtAll) {
  Diagnosis d;
  d.node_to_status.Set("n1", Status(Code::kUnschedulable));
  EXPECT_EQ(FitErrorMessage(1, d), "0/1 nodes are available:");
}

TEST(FitErrorMessageTest, PreFilterMessageReplacesTheHistogram) {
  Diagnosis d;
  d.pre_filter_msg = "pod affinity terms conflict";
  d.node_to_status.SetAbsentNodesStatus(Status::Unresolvable("pod affinity terms conflict"));
  EXPECT_EQ(FitErrorMessage(3, d), "0/3 nodes are available: pod affinity terms conflict.");
}

TEST(FitErrorMessageTest, PostFilterMessageIsAppendedWithoutAPeriod) {
  // semantics.md §5.1's example.
  Diagnosis d;
  d.node_to_status.Set("n1", Status::Unresolvable("node(s) had untolerated taint(s)"));
  d.node_to_status.Set("n2", Status::Unschedulable("Insufficient cpu"));
  d.node_to_status.Set("n3", Status::Unschedulable("Insufficient cpu"));
  d.post_filter_msg =
      "preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No "
      "preemption victims found for incoming pod.";
  EXPECT_EQ(FitErrorMessage(3, d),
            "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu. "
            "preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No "
            "preemption victims found for incoming pod.");
}

TEST(DiagnosisTest, AddPluginStatus) {
  Diagnosis d;
  d.AddPluginStatus(Status::Unschedulable("x").WithPlugin("NodeResourcesFit"));
  d.AddPluginStatus(Status(Code::kPending, "p").WithPlugin("Waiter"));
  d.AddPluginStatus(Status::Error("boom").WithPlugin("Broken"));
  d.AddPluginStatus(Status::Unschedulable("no plugin"));
  EXPECT_EQ(d.unschedulable_plugins, (std::set<std::string>{"NodeResourcesFit", "Waiter"}));
  EXPECT_EQ(d.pending_plugins, (std::set<std::string>{"Waiter"}));
}

// --- PreFilterResult -----------------------------------------------------------------------------

PreFilterResult Nodes(std::set<std::string> names) {
  PreFilterResult r;
  r.node_names = std::move(names);
  return r;
}

TEST(PreFilterResultTest, Merge) {
  {
    PreFilterResult r;
    r.Merge(PreFilterResult());
    EXPECT_TRUE(r.AllNodes());
  }
  {
    PreFilterResult r;
    r.Merge(Nodes({"a", "b"}));
    EXPECT_EQ(r.node_names, (std::set<std::string>{"a", "b"}));
  }
  {
    PreFilterResult r = Nodes({"a", "b"});
    r.Merge(PreFilterResult());
    EXPECT_EQ(r.node_names, (std::set<std::string>{"a", "b"}));
  }
  {
    PreFilterResult r = Nodes({"a", "b"});
    r.Merge(Nodes({"b", "c"}));
    EXPECT_EQ(r.node_names, (std::set<std::string>{"b"}));
  }
  {
    PreFilterResult r = Nodes({"a"});
    r.Merge(Nodes({"b"}));
    EXPECT_FALSE(r.AllNodes());
    EXPECT_TRUE(r.node_names->empty());
  }
}

// --- The PreFilter runner, with fake plugins
// -------------------------------------------------------

// A PreFilter+Filter plugin that returns a fixed node subset (nullopt: all) and status.
class FakePreFilter : public PreFilterPlugin, public FilterPlugin {
 public:
  FakePreFilter(std::string name, std::optional<std::set<std::string>> nodes, Status status,
                int* calls)
      : name_(std::move(name)),
        nodes_(std::move(nodes)),
        status_(std::move(status)),
        calls_(calls) {}
  std::string_view Name() const override { return name_; }
  Status PreFilter(const PodInfo&, PreFilterResult* result) override {
    if (calls_ != nullptr) ++*calls_;
    result->node_names = nodes_;
    return status_;
  }
  Status Filter(const PodInfo&, const NodeInfo&) override { return Status(); }

 private:
  std::string name_;
  std::optional<std::set<std::string>> nodes_;
  Status status_;
  int* calls_;
};

struct FakeSpec {
  std::string name;
  std::optional<std::set<std::string>> nodes;
  Status status;
  int* calls = nullptr;
};

// A framework whose profile is PrioritySort, the fakes in order, then DefaultBinder, all under
// multiPoint.
std::unique_ptr<Framework> FrameworkWithFakes(FakeHandle* h, const std::vector<FakeSpec>& fakes) {
  PluginRegistry registry;
  registry.Register("PrioritySort", NewPrioritySort);
  registry.Register("DefaultBinder", NewDefaultBinder);
  Profile profile;
  profile.plugins = Plugins();
  profile.plugins.multi_point.enabled.push_back({"PrioritySort", 0});
  for (const FakeSpec& f : fakes) {
    registry.Register(f.name, [f](const PluginArgs&, Handle*) -> Result<std::unique_ptr<Plugin>> {
      return std::unique_ptr<Plugin>(new FakePreFilter(f.name, f.nodes, f.status, f.calls));
    });
    profile.plugins.multi_point.enabled.push_back({f.name, 0});
  }
  profile.plugins.multi_point.enabled.push_back({"DefaultBinder", 0});
  Result<std::unique_ptr<Framework>> fw = Framework::New(profile, registry, h);
  if (!fw) {
    ADD_FAILURE() << fw.error().message();
    return nullptr;
  }
  h->framework = fw->get();
  return std::move(*fw);
}

TEST(RunPreFilterPluginsTest, DisjointNodeSetsFromTwoPlugins) {
  FakeHandle h;
  auto fw = FrameworkWithFakes(&h, {{"A", std::set<std::string>{"node1"}, Status()},
                                    {"B", std::set<std::string>{"node2"}, Status()}});
  ASSERT_TRUE(fw);
  PodInfoPtr pod = NewPodInfo(Pod(R"({"metadata":{"name":"p"}})"));
  PreFilterResult result;
  std::set<std::string> narrowing;
  Status s = fw->RunPreFilterPlugins(*pod, &result, &narrowing);
  EXPECT_EQ(std::string(CodeName(s.code())), "UnschedulableAndUnresolvable");
  EXPECT_EQ(s.Message(), "node(s) didn't satisfy plugin(s) [A B] simultaneously");
  EXPECT_EQ(narrowing, (std::set<std::string>{"A", "B"}));
}

// Upstream formats sets.List(pluginsWithNodes): the plugin names sorted, not in run order.
// Upstream lists the plugins with sets.List (sorted), whatever their run order. Only observable
// with several narrowing PreFilter plugins (in-tree, only NodeAffinity narrows).
TEST(RunPreFilterPluginsTest, PluginNamesInTheMessageAreSorted) {
  FakeHandle h;
  auto fw = FrameworkWithFakes(&h, {{"Zeta", std::set<std::string>{"node1"}, Status()},
                                    {"Alpha", std::set<std::string>{"node2"}, Status()}});
  ASSERT_TRUE(fw);
  PodInfoPtr pod = NewPodInfo(Pod(R"({"metadata":{"name":"p"}})"));
  PreFilterResult result;
  std::set<std::string> narrowing;
  Status s = fw->RunPreFilterPlugins(*pod, &result, &narrowing);
  EXPECT_EQ(s.Message(), "node(s) didn't satisfy plugin(s) [Alpha Zeta] simultaneously");
}

TEST(RunPreFilterPluginsTest, OnePluginWithNoNodes) {
  FakeHandle h;
  auto fw = FrameworkWithFakes(
      &h, {{"A", std::nullopt, Status()}, {"B", std::set<std::string>{}, Status()}});
  ASSERT_TRUE(fw);
  PodInfoPtr pod = NewPodInfo(Pod(R"({"metadata":{"name":"p"}})"));
  PreFilterResult result;
  std::set<std::string> narrowing;
  Status s = fw->RunPreFilterPlugins(*pod, &result, &narrowing);
  EXPECT_EQ(std::string(CodeName(s.code())), "UnschedulableAndUnresolvable");
  EXPECT_EQ(s.Message(), "node(s) didn't satisfy plugin B");
  EXPECT_EQ(narrowing, (std::set<std::string>{"B"}));
}

TEST(RunPreFilterPluginsTest, OverlappingNodeSetsIntersect) {
  FakeHandle h;
  auto fw = FrameworkWithFakes(&h, {{"A", std::set<std::string>{"n1", "n2"}, Status()},
                                    {"C", std::nullopt, Status()},
                                    {"B", std::set<std::string>{"n2", "n3"}, Status()}});
  ASSERT_TRUE(fw);
  PodInfoPtr pod = NewPodInfo(Pod(R"({"metadata":{"name":"p"}})"));
  PreFilterResult result;
  std::set<std::string> narrowing;
  Status s = fw->RunPreFilterPlugins(*pod, &result, &narrowing);
  EXPECT_TRUE(s.IsSuccess()) << s.Message();
  EXPECT_EQ(result.node_names, (std::set<std::string>{"n2"}));
  EXPECT_EQ(narrowing, (std::set<std::string>{"A", "B"}));
}

TEST(RunPreFilterPluginsTest, UnschedulableLetsTheOthersRunUnresolvableStops) {
  FakeHandle h;
  int after_unschedulable = 0;
  int after_unresolvable = 0;
  PodInfoPtr pod = NewPodInfo(Pod(R"({"metadata":{"name":"p"}})"));
  {
    auto fw = FrameworkWithFakes(&h, {{"U", std::nullopt, Status::Unschedulable("u")},
                                      {"Next", std::nullopt, Status(), &after_unschedulable}});
    ASSERT_TRUE(fw);
    PreFilterResult result;
    std::set<std::string> narrowing;
    Status s = fw->RunPreFilterPlugins(*pod, &result, &narrowing);
    EXPECT_EQ(std::string(CodeName(s.code())), "Unschedulable");
    EXPECT_EQ(s.Message(), "u");
    EXPECT_EQ(s.plugin(), "U");
    EXPECT_EQ(after_unschedulable, 1);
  }
  {
    auto fw = FrameworkWithFakes(&h, {{"X", std::nullopt, Status::Unresolvable("x")},
                                      {"Next", std::nullopt, Status(), &after_unresolvable}});
    ASSERT_TRUE(fw);
    PreFilterResult result;
    std::set<std::string> narrowing;
    Status s = fw->RunPreFilterPlugins(*pod, &result, &narrowing);
    EXPECT_EQ(std::string(CodeName(s.code())), "UnschedulableAndUnresolvable");
    EXPECT_EQ(s.plugin(), "X");
    EXPECT_EQ(after_unresolvable, 0);
  }
  {
    auto fw = FrameworkWithFakes(&h, {{"E", std::nullopt, Status::Error("boom")}});
    ASSERT_TRUE(fw);
    PreFilterResult result;
    std::set<std::string> narrowing;
    Status s = fw->RunPreFilterPlugins(*pod, &result, &narrowing);
    EXPECT_EQ(std::string(CodeName(s.code())), "Error");
    EXPECT_EQ(s.Message(), "running PreFilter plugin \"E\": boom");
  }
}

TEST(RunPreFilterPluginsTest, SkipDropsThePluginsFilter) {
  FakeHandle h;
  auto fw =
      FrameworkWithFakes(&h, {{"S", std::nullopt, Status::Skip()}, {"R", std::nullopt, Status()}});
  ASSERT_TRUE(fw);
  PodInfoPtr pod = NewPodInfo(Pod(R"({"metadata":{"name":"p"}})"));
  PreFilterResult result;
  std::set<std::string> narrowing;
  ASSERT_TRUE(fw->RunPreFilterPlugins(*pod, &result, &narrowing).IsSuccess());
  NodeInfo node(ReadyNode("n"));
  auto all = fw->RunAllFilterPlugins(*pod, node);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].first, "S");
  EXPECT_TRUE(all[0].second.IsSkip());
  EXPECT_EQ(all[1].first, "R");
  EXPECT_TRUE(all[1].second.IsSuccess());
}

// --- Filter runner -------------------------------------------------------------------------------

TEST(RunFilterPluginsTest, FirstRejectionWinsAndNamesThePlugin) {
  FakeHandle h;
  auto fw = testing::NewFramework(&h);
  // Cordoned, tainted and without the label: NodeUnschedulable runs first.
  NodeInfo node(
      ReadyNode("n", "4", "16Gi", "110",
                R"({"unschedulable":true,"taints":[{"key":"a","effect":"NoSchedule"}]})"));
  PodInfoPtr pod =
      NewPodInfo(Pod(R"({"metadata":{"name":"p"},"spec":{"nodeSelector":{"x":"y"}}})"));
  PreFilterResult result;
  std::set<std::string> narrowing;
  ASSERT_TRUE(fw->RunPreFilterPlugins(*pod, &result, &narrowing).IsSuccess());
  Status s = fw->RunFilterPlugins(*pod, node);
  EXPECT_EQ(s.plugin(), "NodeUnschedulable");
  EXPECT_EQ(s.Reasons(), std::vector<std::string>{"node(s) were unschedulable"});
}

// --- MultiPoint expansion and profile errors -----------------------------------------------------

std::vector<std::string> FilterOrder(Framework& fw) {
  PodInfoPtr pod = NewPodInfo(Pod(R"({"metadata":{"name":"p"}})"));
  NodeInfo node(ReadyNode("n"));
  std::vector<std::string> out;
  for (const auto& [name, status] : fw.RunAllFilterPlugins(*pod, node)) out.emplace_back(name);
  return out;
}

Result<std::unique_ptr<Framework>> NewWithCustom(FakeHandle* h, const Plugins& custom) {
  Profile profile;
  profile.plugins = MergePlugins(DefaultPlugins(), custom);
  return Framework::New(profile, InTreeRegistry(), h);
}

TEST(MultiPointTest, DefaultProfileFilterOrder) {
  FakeHandle h;
  auto fw = testing::NewFramework(&h);
  EXPECT_EQ(FilterOrder(*fw),
            (std::vector<std::string>{"NodeUnschedulable", "NodeName", "TaintToleration",
                                      "NodeAffinity", "NodePorts", "NodeResourcesFit"}));
  EXPECT_TRUE(fw->HasPostFilterPlugins());
  EXPECT_TRUE(fw->HasScorePlugins());
}

TEST(MultiPointTest, DisableStarAtAPointSkipsMultiPointThere) {
  FakeHandle h;
  Plugins custom;
  custom.filter.disabled = {"*"};
  custom.filter.enabled = {{"NodeName", 0}};
  auto fw = NewWithCustom(&h, custom);
  ASSERT_TRUE(fw) << fw.error().message();
  EXPECT_EQ(FilterOrder(**fw), (std::vector<std::string>{"NodeName"}));
}

TEST(MultiPointTest, DisablingOnePluginAtOnePoint) {
  FakeHandle h;
  Plugins custom;
  custom.filter.disabled = {"TaintToleration"};
  auto fw = NewWithCustom(&h, custom);
  ASSERT_TRUE(fw) << fw.error().message();
  h.framework = fw->get();
  EXPECT_EQ(FilterOrder(**fw),
            (std::vector<std::string>{"NodeUnschedulable", "NodeName", "NodeAffinity", "NodePorts",
                                      "NodeResourcesFit"}));
  // It still scores.
  h.cache.AddNode(ReadyNode("n"));
  PodInfoPtr pod = NewPodInfo(Pod(
      R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"1"}}}]}})"));
  std::vector<NodePluginScores> scores;
  const NodeInfo* nodes[] = {h.cache.Get("n")};
  ASSERT_TRUE((*fw)->RunScorePlugins(*pod, nodes, &scores).IsSuccess());
  ASSERT_EQ(scores.size(), 1u);
  ASSERT_FALSE(scores[0].scores.empty());
  EXPECT_EQ(scores[0].scores[0].plugin, "TaintToleration");
}

TEST(MultiPointTest, ReconfiguredMultiPointPluginComesFirst) {
  // Upstream expandMultiPointPlugins: plugins re-configured at the point, then the other
  // multiPoint plugins, then the rest configured at the point.
  FakeHandle h;
  Plugins custom;
  custom.filter.enabled = {{"NodeResourcesFit", 0}, {"TaintToleration", 0}};
  auto fw = NewWithCustom(&h, custom);
  ASSERT_TRUE(fw) << fw.error().message();
  EXPECT_EQ(FilterOrder(**fw),
            (std::vector<std::string>{"NodeResourcesFit", "TaintToleration", "NodeUnschedulable",
                                      "NodeName", "NodeAffinity", "NodePorts"}));
}

TEST(MultiPointTest, Errors) {
  struct Row {
    const char* name;
    Plugins custom;
    const char* want;
  };
  std::vector<Row> rows;
  {
    Row r{"unknown plugin at a point", {}, R"(FilterPlugin "Foo" does not exist)"};
    r.custom.filter.enabled = {{"Foo", 0}};
    rows.push_back(r);
  }
  {
    Row r{"unknown plugin in multiPoint", {}, R"(PreFilterPlugin "Foo" does not exist)"};
    r.custom.multi_point.enabled = {{"Foo", 0}};
    rows.push_back(r);
  }
  {
    // Upstream updatePluginList formats the interface's type name: `plugin %q does not extend
    // %s plugin` with "ScorePlugin".
    Row r{"plugin that does not extend the point",
          {},
          R"(plugin "NodeName" does not extend ScorePlugin plugin)"};
    r.custom.score.enabled = {{"NodeName", 0}};
    rows.push_back(r);
  }
  {
    // Upstream updatePluginList: `plugin %q already registered as %q` with the interface's type
    // name ("FilterPlugin").
    Row r{"plugin enabled twice at a point",
          {},
          R"(plugin "NodeName" already registered as "FilterPlugin")"};
    r.custom.filter.enabled = {{"NodeName", 0}, {"NodeName", 0}};
    rows.push_back(r);
  }
  {
    Row r{
        "no queue sort plugin",
        {},
        R"(only one queue sort plugin required for profile with scheduler name "default-scheduler", but got 0)"};
    r.custom.multi_point.disabled = {"PrioritySort"};
    rows.push_back(r);
  }
  {
    Row r{
        "no bind plugin",
        {},
        R"(at least one bind plugin is needed for profile with scheduler name "default-scheduler")"};
    r.custom.multi_point.disabled = {"DefaultBinder"};
    rows.push_back(r);
  }
  {
    // kubetaint's own: upstream plugins it does not implement are refused by name.
    Row r{"unsupported upstream plugin",
          {},
          R"(plugin "VolumeBinding" is not supported by kubetaint)"};
    r.custom.multi_point.enabled = {{"VolumeBinding", 0}};
    rows.push_back(r);
  }
  for (const Row& row : rows) {
    FakeHandle h;
    Result<std::unique_ptr<Framework>> fw = NewWithCustom(&h, row.custom);
    ASSERT_FALSE(fw) << row.name;
    EXPECT_EQ(fw.error().message(), row.want) << row.name;
  }
}

TEST(MultiPointTest, DisablingAnUnsupportedPluginIsFine) {
  FakeHandle h;
  Plugins custom;
  custom.multi_point.disabled = {"VolumeBinding", "InterPodAffinity"};
  auto fw = NewWithCustom(&h, custom);
  EXPECT_TRUE(fw) << fw.error().message();
}

// --- Score weights -------------------------------------------------------------------------------

// Scores `pod` on two nodes: "tainted" (a PreferNoSchedule taint) and "labelled" (zone=x, which
// the pod prefers), so that TaintToleration and NodeAffinity both score.
std::vector<NodePluginScores> ScoreTwoNodes(FakeHandle* h, Framework& fw) {
  h->cache.AddNode(ReadyNode("tainted", "4", "16Gi", "110",
                             R"({"taints":[{"key":"gpu","effect":"PreferNoSchedule"}]})"));
  h->cache.AddNode(ReadyNode("labelled", "4", "16Gi", "110", "{}", R"({"zone":"x"})"));
  PodInfoPtr pod = NewPodInfo(Pod(R"({"metadata":{"name":"p"},"spec":{
      "containers":[{"name":"c","resources":{"requests":{"cpu":"1","memory":"1Gi"}}}],
      "affinity":{"nodeAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[
        {"weight":10,"preference":{"matchExpressions":[{"key":"zone","operator":"In","values":["x"]}]}}]}}}})"));
  const NodeInfo* nodes[] = {h->cache.Get("tainted"), h->cache.Get("labelled")};
  std::vector<NodePluginScores> out;
  Status s = fw.RunScorePlugins(*pod, nodes, &out);
  EXPECT_TRUE(s.IsSuccess()) << s.Message();
  return out;
}

std::map<std::string, NodePluginScores::PluginScore> ByPlugin(const NodePluginScores& n) {
  std::map<std::string, NodePluginScores::PluginScore> out;
  for (const auto& s : n.scores) out[std::string(s.plugin)] = s;
  return out;
}

TEST(ScoreWeightsTest, DefaultWeights) {
  FakeHandle h;
  auto fw = testing::NewFramework(&h);
  std::vector<NodePluginScores> scores = ScoreTwoNodes(&h, *fw);
  ASSERT_EQ(scores.size(), 2u);
  const std::map<std::string, int64_t> weights = {{"TaintToleration", 3},
                                                  {"NodeAffinity", 2},
                                                  {"NodeResourcesFit", 1},
                                                  {"NodeResourcesBalancedAllocation", 1}};
  for (const NodePluginScores& n : scores) {
    SCOPED_TRACE(n.node->name());
    std::vector<std::string> plugins;
    int64_t total = 0;
    for (const auto& s : n.scores) {
      plugins.emplace_back(s.plugin);
      ASSERT_TRUE(weights.count(std::string(s.plugin))) << s.plugin;
      EXPECT_EQ(s.weighted, s.normalized * weights.at(std::string(s.plugin))) << s.plugin;
      total += s.weighted;
    }
    EXPECT_EQ(plugins,
              (std::vector<std::string>{"TaintToleration", "NodeAffinity", "NodeResourcesFit",
                                        "NodeResourcesBalancedAllocation"}));
    EXPECT_EQ(n.total, total);
  }
  auto tainted = ByPlugin(scores[0]);
  auto labelled = ByPlugin(scores[1]);
  EXPECT_EQ(tainted["TaintToleration"].raw, 1);
  EXPECT_EQ(tainted["TaintToleration"].weighted, 0);
  EXPECT_EQ(labelled["TaintToleration"].weighted, 300);
  EXPECT_EQ(tainted["NodeAffinity"].weighted, 0);
  EXPECT_EQ(labelled["NodeAffinity"].raw, 10);
  EXPECT_EQ(labelled["NodeAffinity"].weighted, 200);
  EXPECT_EQ(tainted["NodeResourcesFit"].weighted, labelled["NodeResourcesFit"].weighted);
  EXPECT_GT(scores[1].total, scores[0].total);
}

TEST(ScoreWeightsTest, ConfiguredWeights) {
  // multiPoint weight 5 for TaintToleration; a Score-point weight 7 for NodeAffinity takes
  // precedence over its multiPoint weight; weight 0 means 1.
  FakeHandle h;
  Plugins custom;
  custom.multi_point.enabled = {{"TaintToleration", 5}, {"NodeResourcesFit", 0}};
  custom.score.enabled = {{"NodeAffinity", 7}};
  auto fw = NewWithCustom(&h, custom);
  ASSERT_TRUE(fw) << fw.error().message();
  h.framework = fw->get();
  std::vector<NodePluginScores> scores = ScoreTwoNodes(&h, **fw);
  ASSERT_EQ(scores.size(), 2u);
  auto labelled = ByPlugin(scores[1]);
  EXPECT_EQ(labelled["TaintToleration"].weighted, 500);
  EXPECT_EQ(labelled["NodeAffinity"].weighted, 700);
  EXPECT_EQ(labelled["NodeResourcesFit"].weighted, labelled["NodeResourcesFit"].normalized);
  EXPECT_EQ(scores[1].scores[0].plugin, "NodeAffinity");  // re-configured at Score: first there
}

TEST(ScoreWeightsTest, TheCycleSkipsAPluginWhoseScoresAreUniformAndPicksTheSameNode) {
  // No node is tainted: TaintToleration gives every node 100 (reverse normalization of zero
  // counts), 300 weighted. The cycle's totals leave it out, so they are the reports' totals
  // minus 300 on every node; with a PreferNoSchedule taint on one node, it counts again.
  for (const bool taint_one : {false, true}) {
    SCOPED_TRACE(taint_one ? "one node tainted" : "no node tainted");
    FakeHandle h;
    auto fw = testing::NewFramework(&h);
    h.cache.AddNode(
        ReadyNode("small", "2", "4Gi", "110",
                  taint_one ? R"({"taints":[{"key":"k","effect":"PreferNoSchedule"}]})" : "{}"));
    h.cache.AddNode(ReadyNode("big", "8", "32Gi"));
    h.cache.AddNode(ReadyNode("mid", "4", "16Gi"));
    PodInfoPtr pod = NewPodInfo(Pod(R"({"metadata":{"name":"p"},"spec":{
        "containers":[{"name":"c","resources":{"requests":{"cpu":"1","memory":"1Gi"}}}]}})"));
    const NodeInfo* nodes[] = {h.cache.Get("small"), h.cache.Get("big"), h.cache.Get("mid")};
    std::vector<NodePluginScores> report;
    ASSERT_TRUE(fw->RunScorePlugins(*pod, nodes, &report).IsSuccess());
    std::vector<int64_t> totals;
    ASSERT_TRUE(fw->RunScorePlugins(*pod, nodes, &totals).IsSuccess());
    ASSERT_EQ(report.size(), 3u);
    ASSERT_EQ(totals.size(), 3u);
    for (size_t i = 0; i < 3; ++i) {
      SCOPED_TRACE(nodes[i]->name());
      const int64_t toleration = ByPlugin(report[i])["TaintToleration"].weighted;
      EXPECT_EQ(toleration, taint_one && i == 0 ? 0 : 300);
      EXPECT_EQ(totals[i], report[i].total - (taint_one ? 0 : 300));
    }
    EXPECT_EQ(SelectHost(*pod, nodes, totals), SelectHost(*pod, report));
    EXPECT_EQ(SelectHost(*pod, nodes, totals)->name(), "big");
  }
}

// --- MergePlugins --------------------------------------------------------------------------------

std::vector<std::pair<std::string, int32_t>> Refs(const PluginSet& s) {
  std::vector<std::pair<std::string, int32_t>> out;
  for (const PluginRef& r : s.enabled) out.emplace_back(r.name, r.weight);
  return out;
}

TEST(MergePluginsTest, ReplaceInPlaceDisableAndAppend) {
  Plugins custom;
  custom.multi_point.enabled = {{"Foo", 1}, {"TaintToleration", 5}};
  custom.multi_point.disabled = {"NodePorts"};
  Plugins merged = MergePlugins(DefaultPlugins(), custom);
  EXPECT_EQ(Refs(merged.multi_point),
            (std::vector<std::pair<std::string, int32_t>>{{"SchedulingGates", 0},
                                                          {"PrioritySort", 0},
                                                          {"NodeUnschedulable", 0},
                                                          {"NodeName", 0},
                                                          {"TaintToleration", 5},
                                                          {"NodeAffinity", 2},
                                                          {"NodeResourcesFit", 1},
                                                          {"DefaultPreemption", 0},
                                                          {"NodeResourcesBalancedAllocation", 1},
                                                          {"DefaultBinder", 0},
                                                          {"Foo", 1}}));
  EXPECT_EQ(merged.multi_point.disabled, std::vector<std::string>{"NodePorts"});
  EXPECT_TRUE(merged.filter.enabled.empty());
}

TEST(MergePluginsTest, DisableStarDropsEveryDefault) {
  Plugins custom;
  custom.multi_point.enabled = {{"NodeName", 0}};
  custom.multi_point.disabled = {"*"};
  Plugins merged = MergePlugins(DefaultPlugins(), custom);
  EXPECT_EQ(Refs(merged.multi_point),
            (std::vector<std::pair<std::string, int32_t>>{{"NodeName", 0}}));
  EXPECT_EQ(merged.multi_point.disabled, std::vector<std::string>{"*"});
}

TEST(MergePluginsTest, PointSetsMergeIndependently) {
  Plugins defaults;
  defaults.score.enabled = {{"A", 1}, {"B", 2}};
  defaults.score.disabled = {"C"};
  Plugins custom;
  custom.score.enabled = {{"B", 9}, {"D", 1}};
  custom.score.disabled = {"A"};
  Plugins merged = MergePlugins(defaults, custom);
  EXPECT_EQ(Refs(merged.score), (std::vector<std::pair<std::string, int32_t>>{{"B", 9}, {"D", 1}}));
  // Custom disables first, then the defaults' own.
  EXPECT_EQ(merged.score.disabled, (std::vector<std::string>{"A", "C"}));
}

}  // namespace
}  // namespace kt::scheduler
