// NodeResourcesFit and NodeResourcesBalancedAllocation, after upstream's fit_test.go
// (TestEnoughRequests, TestNotEnoughRequests, TestStorageRequests, TestRestartableInitContainers,
// TestFitScore), least_allocated_test.go, most_allocated_test.go and balanced_allocation_test.go
// (research/plugins.md §3–4).
//
// Quantities: upstream's makeAllocatableResources(milliCPU, memory, ...) and
// framework.Resource{MilliCPU: n} are millicores ("10m"), memory in bytes ("20"). In the scoring
// tests st.MakeNode().Capacity({"cpu": "4000"}) is 4000 *cores*, written "4000" here too, while
// makeNode("node1", 4000, 10000) in balanced_allocation_test.go is 4000 *millicores* ("4000m").
// st.MakeNode() always adds "pods": "32".
#include "scheduler/plugins/noderesources/fit.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "scheduler/testing/fakes.h"

namespace kt::scheduler {
namespace {

using namespace std::string_view_literals;

using testing::FakeHandle;

// --- Pod and node JSON -------------------------------------------------------------------------

// A container list, one container per requests object (`{"cpu":"1m","memory":"1"}`).
std::string ContainerList(const std::vector<std::string>& requests, bool sidecars = false) {
  std::string out = "[";
  for (size_t i = 0; i < requests.size(); ++i) {
    if (i > 0) out += ",";
    out += R"({"name":"c)" + std::to_string(i) + R"(")";
    if (sidecars) out += R"(,"restartPolicy":"Always")";
    out += R"(,"resources":{"requests":)" + requests[i] + "}}";
  }
  return out + "]";
}

// Spec members: containers, then optionally init containers and extra members.
std::string Spec(const std::vector<std::string>& containers,
                 const std::vector<std::string>& inits = {}, const std::string& extra = "") {
  std::string s = R"("containers":)" + ContainerList(containers);
  if (!inits.empty()) s += R"(,"initContainers":)" + ContainerList(inits);
  if (!extra.empty()) s += "," + extra;
  return s;
}

ObjectPtr MakePod(const std::string& name, const std::string& spec_members,
                  const std::string& node = "") {
  std::string spec = spec_members;
  if (!node.empty())
    spec += (spec.empty() ? "" : ",") + std::string(R"("nodeName":")") + node + "\"";
  return testing::Pod(R"({"metadata":{"name":")" + name + R"("},"spec":{)" + spec + "}}");
}

ObjectPtr MakeNode(const std::string& name, const std::string& allocatable) {
  return testing::Node(R"({"metadata":{"name":")" + name + R"("},"status":{"allocatable":)" +
                       allocatable + "}}");
}

// upstream makeAllocatableResources(10, 20, 32, 5, 20, 5).
constexpr const char* kFitNode =
    R"({"cpu":"10m","memory":"20","pods":"32","example.com/aaa":"5","ephemeral-storage":"20","hugepages-2Mi":"5"})";

std::unique_ptr<Plugin> NewFit(FakeHandle* h, const NodeResourcesFitArgs& fit = {}) {
  PluginArgs args;
  args.node_resources_fit = fit;
  return testing::NewPlugin(kNodeResourcesFitName, h, args);
}

// --- Filter --------------------------------------------------------------------------------------

enum class Want { kFit, kUnschedulable, kUnresolvable };

struct FilterRow {
  const char* name;  // upstream test case
  std::string pod_spec;
  std::vector<std::string> node_pods;  // spec members of the pods already on the node
  Want want;
  std::vector<std::string> reasons;  // in order
  std::vector<std::string> ignored = {};
  std::vector<std::string> ignored_groups = {};
};

void CheckFilter(const FilterRow& row, const char* allocatable) {
  SCOPED_TRACE(row.name);
  FakeHandle h;
  NodeResourcesFitArgs args;
  args.ignored_resources = row.ignored;
  args.ignored_resource_groups = row.ignored_groups;
  std::unique_ptr<Plugin> plugin = NewFit(&h, args);
  auto* pre_filter = dynamic_cast<PreFilterPlugin*>(plugin.get());
  auto* filter = dynamic_cast<FilterPlugin*>(plugin.get());
  ASSERT_NE(filter, nullptr);
  NodeInfo node(MakeNode("node", allocatable));
  for (size_t i = 0; i < row.node_pods.size(); ++i) {
    node.AddPod(NewPodInfo(MakePod("node-pod-" + std::to_string(i), row.node_pods[i], "node")));
  }
  PodInfoPtr pod = NewPodInfo(MakePod("p", row.pod_spec));
  PreFilterResult result;
  Status pre = pre_filter->PreFilter(*pod, &result);
  EXPECT_TRUE(pre.IsSuccess()) << pre.Message();
  EXPECT_TRUE(result.AllNodes());
  Status s = filter->Filter(*pod, node);
  switch (row.want) {
    case Want::kFit:
      EXPECT_TRUE(s.IsSuccess()) << CodeName(s.code()) << ": " << s.Message();
      break;
    case Want::kUnschedulable:
      EXPECT_EQ(CodeName(s.code()), "Unschedulable"sv);
      break;
    case Want::kUnresolvable:
      EXPECT_EQ(CodeName(s.code()), "UnschedulableAndUnresolvable"sv);
      break;
  }
  EXPECT_EQ(s.Reasons(), row.reasons);
}

TEST(NodeResourcesFitFilterTest, EnoughRequests) {
  // TestEnoughRequests; node allocatable makeAllocatableResources(10, 20, 32, 5, 20, 5) and one
  // pod already on the node.
  const std::string cpu1mem1 = R"({"cpu":"1m","memory":"1"})";
  const std::string empty = "{}";
  const std::vector<FilterRow> rows = {
      {"no resources requested always fits",
       Spec({}),
       {Spec({R"({"cpu":"10m","memory":"20"})"})},
       Want::kFit,
       {}},
      {"too many resources fails",
       Spec({cpu1mem1}),
       {Spec({R"({"cpu":"10m","memory":"20"})"})},
       Want::kUnschedulable,
       {"Insufficient cpu", "Insufficient memory"}},
      {"too many resources fails due to init container cpu",
       Spec({cpu1mem1}, {R"({"cpu":"3m","memory":"1"})"}),
       {Spec({R"({"cpu":"8m","memory":"19"})"})},
       Want::kUnschedulable,
       {"Insufficient cpu"}},
      {"too many resources fails due to highest init container cpu",
       Spec({cpu1mem1}, {R"({"cpu":"3m","memory":"1"})", R"({"cpu":"2m","memory":"1"})"}),
       {Spec({R"({"cpu":"8m","memory":"19"})"})},
       Want::kUnschedulable,
       {"Insufficient cpu"}},
      {"too many resources fails due to init container memory",
       Spec({cpu1mem1}, {R"({"cpu":"1m","memory":"3"})"}),
       {Spec({R"({"cpu":"9m","memory":"19"})"})},
       Want::kUnschedulable,
       {"Insufficient memory"}},
      {"too many resources fails due to highest init container memory",
       Spec({cpu1mem1}, {R"({"cpu":"1m","memory":"3"})", R"({"cpu":"1m","memory":"2"})"}),
       {Spec({R"({"cpu":"9m","memory":"19"})"})},
       Want::kUnschedulable,
       {"Insufficient memory"}},
      {"init container fits because it's the max, not sum, of containers and init containers",
       Spec({cpu1mem1}, {cpu1mem1}),
       {Spec({R"({"cpu":"9m","memory":"19"})"})},
       Want::kFit,
       {}},
      {"multiple init containers fit because it's the max, not sum, of containers and init "
       "containers",
       Spec({cpu1mem1}, {cpu1mem1, cpu1mem1}),
       {Spec({R"({"cpu":"9m","memory":"19"})"})},
       Want::kFit,
       {}},
      {"both resources fit",
       Spec({cpu1mem1}),
       {Spec({R"({"cpu":"5m","memory":"5"})"})},
       Want::kFit,
       {}},
      {"one resource memory fits",
       Spec({R"({"cpu":"2m","memory":"1"})"}),
       {Spec({R"({"cpu":"9m","memory":"5"})"})},
       Want::kUnschedulable,
       {"Insufficient cpu"}},
      {"one resource cpu fits",
       Spec({R"({"cpu":"1m","memory":"2"})"}),
       {Spec({R"({"cpu":"5m","memory":"19"})"})},
       Want::kUnschedulable,
       {"Insufficient memory"}},
      {"equal edge case",
       Spec({R"({"cpu":"5m","memory":"1"})"}),
       {Spec({R"({"cpu":"5m","memory":"19"})"})},
       Want::kFit,
       {}},
      {"equal edge case for init container",
       Spec({R"({"cpu":"4m","memory":"1"})"}, {R"({"cpu":"5m","memory":"1"})"}),
       {Spec({R"({"cpu":"5m","memory":"19"})"})},
       Want::kFit,
       {}},
      {"extended resource fits",
       Spec({R"({"example.com/aaa":"1"})"}),
       {Spec({empty})},
       Want::kFit,
       {}},
      {"extended resource fits for init container",
       Spec({empty}, {R"({"example.com/aaa":"1"})"}),
       {Spec({empty})},
       Want::kFit,
       {}},
      {"extended resource capacity enforced",
       Spec({R"({"cpu":"1m","memory":"1","example.com/aaa":"10"})"}),
       {Spec({R"({"cpu":"0","memory":"0","example.com/aaa":"0"})"})},
       Want::kUnresolvable,
       {"Insufficient example.com/aaa"}},
      {"extended resource capacity enforced for init container",
       Spec({empty}, {R"({"cpu":"1m","memory":"1","example.com/aaa":"10"})"}),
       {Spec({R"({"cpu":"0","memory":"0","example.com/aaa":"0"})"})},
       Want::kUnresolvable,
       {"Insufficient example.com/aaa"}},
      {"extended resource allocatable enforced",
       Spec({R"({"cpu":"1m","memory":"1","example.com/aaa":"1"})"}),
       {Spec({R"({"cpu":"0","memory":"0","example.com/aaa":"5"})"})},
       Want::kUnschedulable,
       {"Insufficient example.com/aaa"}},
      {"extended resource allocatable enforced for init container",
       Spec({empty}, {R"({"cpu":"1m","memory":"1","example.com/aaa":"1"})"}),
       {Spec({R"({"cpu":"0","memory":"0","example.com/aaa":"5"})"})},
       Want::kUnschedulable,
       {"Insufficient example.com/aaa"}},
      {"extended resource allocatable enforced for multiple containers",
       Spec({R"({"cpu":"1m","memory":"1","example.com/aaa":"3"})",
             R"({"cpu":"1m","memory":"1","example.com/aaa":"3"})"}),
       {Spec({R"({"cpu":"0","memory":"0","example.com/aaa":"2"})"})},
       Want::kUnresolvable,
       {"Insufficient example.com/aaa"}},
      {"extended resource allocatable admits multiple init containers",
       Spec({empty}, {R"({"cpu":"1m","memory":"1","example.com/aaa":"3"})",
                      R"({"cpu":"1m","memory":"1","example.com/aaa":"3"})"}),
       {Spec({R"({"cpu":"0","memory":"0","example.com/aaa":"2"})"})},
       Want::kFit,
       {}},
      {"extended resource allocatable enforced for multiple init containers",
       Spec({empty}, {R"({"cpu":"1m","memory":"1","example.com/aaa":"6"})",
                      R"({"cpu":"1m","memory":"1","example.com/aaa":"3"})"}),
       {Spec({R"({"cpu":"0","memory":"0","example.com/aaa":"2"})"})},
       Want::kUnresolvable,
       {"Insufficient example.com/aaa"}},
      {"extended resource allocatable enforced for unknown resource",
       Spec({R"({"cpu":"1m","memory":"1","example.com/bbb":"1"})"}),
       {Spec({R"({"cpu":"0","memory":"0"})"})},
       Want::kUnresolvable,
       {"Insufficient example.com/bbb"}},
      {"extended resource allocatable enforced for unknown resource for init container",
       Spec({empty}, {R"({"cpu":"1m","memory":"1","example.com/bbb":"1"})"}),
       {Spec({R"({"cpu":"0","memory":"0"})"})},
       Want::kUnresolvable,
       {"Insufficient example.com/bbb"}},
      {"kubernetes.io resource capacity enforced",
       Spec({R"({"cpu":"1m","memory":"1","kubernetes.io/something":"10"})"}),
       {Spec({R"({"cpu":"0","memory":"0"})"})},
       Want::kUnresolvable,
       {"Insufficient kubernetes.io/something"}},
      {"kubernetes.io resource capacity enforced for init container",
       Spec({empty}, {R"({"cpu":"1m","memory":"1","subdomain.kubernetes.io/something":"10"})"}),
       {Spec({R"({"cpu":"0","memory":"0"})"})},
       Want::kUnresolvable,
       {"Insufficient subdomain.kubernetes.io/something"}},
      {"hugepages resource capacity enforced",
       Spec({R"({"cpu":"1m","memory":"1","hugepages-2Mi":"10"})"}),
       {Spec({R"({"cpu":"0","memory":"0","hugepages-2Mi":"0"})"})},
       Want::kUnresolvable,
       {"Insufficient hugepages-2Mi"}},
      {"hugepages resource capacity enforced for init container",
       Spec({empty}, {R"({"cpu":"1m","memory":"1","hugepages-2Mi":"10"})"}),
       {Spec({R"({"cpu":"0","memory":"0","hugepages-2Mi":"0"})"})},
       Want::kUnresolvable,
       {"Insufficient hugepages-2Mi"}},
      {"hugepages resource allocatable enforced for multiple containers",
       Spec({R"({"cpu":"1m","memory":"1","hugepages-2Mi":"3"})",
             R"({"cpu":"1m","memory":"1","hugepages-2Mi":"3"})"}),
       {Spec({R"({"cpu":"0","memory":"0","hugepages-2Mi":"2"})"})},
       Want::kUnresolvable,
       {"Insufficient hugepages-2Mi"}},
      {"skip checking ignored extended resource",
       Spec({R"({"cpu":"1m","memory":"1","example.com/bbb":"1"})"}),
       {Spec({R"({"cpu":"0","memory":"0"})"})},
       Want::kFit,
       {},
       {"example.com/bbb"}},
      {"resources + pod overhead fits",
       Spec({cpu1mem1}, {}, R"("overhead":{"cpu":"3m","memory":"13"})"),
       {Spec({R"({"cpu":"5m","memory":"5"})"})},
       Want::kFit,
       {}},
      {"requests + overhead does not fit for memory",
       Spec({cpu1mem1}, {}, R"("overhead":{"cpu":"1m","memory":"15"})"),
       {Spec({R"({"cpu":"5m","memory":"5"})"})},
       Want::kUnschedulable,
       {"Insufficient memory"}},
      {"skip checking ignored extended resource via resource groups",
       Spec({R"({"cpu":"1m","memory":"1","example.com/bbb":"1","kubernetes.io/something":"1"})"}),
       {Spec({R"({"cpu":"0","memory":"0"})"})},
       Want::kUnresolvable,
       {"Insufficient kubernetes.io/something"},
       {},
       {"example.com"}},
      {"skip checking extended resource request with quantity zero via resource groups",
       Spec({R"({"cpu":"1m","memory":"1","example.com/aaa":"0"})"}),
       {Spec({R"({"cpu":"0","memory":"0","example.com/aaa":"6"})"})},
       Want::kFit,
       {}},
      {"skip checking resource request with quantity zero",
       Spec({R"({"example.com/aaa":"1"})"}),
       {Spec({R"({"cpu":"20m","memory":"30","example.com/aaa":"1"})"})},
       Want::kFit,
       {}},
      {"both pod-level and container-level resources fit",
       Spec({cpu1mem1}, {}, R"("resources":{"requests":{"cpu":"1m","memory":"2"}})"),
       {Spec({R"({"cpu":"5m","memory":"5"})"})},
       Want::kFit,
       {}},
      {"pod-level cpu resource not fit",
       Spec({cpu1mem1}, {}, R"("resources":{"requests":{"cpu":"7m","memory":"2"}})"),
       {Spec({R"({"cpu":"5m","memory":"5"})"})},
       Want::kUnschedulable,
       {"Insufficient cpu"}},
      {"pod-level memory resource not fit",
       Spec({cpu1mem1}, {}, R"("resources":{"requests":{"cpu":"3m","memory":"2"}})"),
       {Spec({R"({"cpu":"5m","memory":"19"})"})},
       Want::kUnschedulable,
       {"Insufficient memory"}},
      {"pod-level hugepages resource fit",
       Spec({}, {}, R"("resources":{"requests":{"cpu":"3m","memory":"2","hugepages-2Mi":"5"}})"),
       {},
       Want::kFit,
       {}},
      {"both pod-level and container-level hugepages resource fit",
       Spec({R"({"cpu":"1m","memory":"1","hugepages-2Mi":"3"})"}, {},
            R"("resources":{"requests":{"cpu":"3m","memory":"2","hugepages-2Mi":"5"}})"),
       {},
       Want::kFit,
       {}},
      // In 1.35 pod-level requests override hugepages-* too (component-helpers v0.35.0
      // resource/helpers.go: IsSupportedPodLevelResource accepts the hugepages- prefix and
      // PodRequests copies every supported pod-level request).
      {"pod-level hugepages resource not fit",
       Spec({}, {}, R"("resources":{"requests":{"cpu":"3m","memory":"2","hugepages-2Mi":"10"}})"),
       {},
       Want::kUnresolvable,
       {"Insufficient hugepages-2Mi"}},
      {"one pod-level cpu resource fits and all init and non-init containers resources fit",
       Spec({cpu1mem1}, {cpu1mem1}, R"("resources":{"requests":{"cpu":"3m","memory":"2"}})"),
       {Spec({R"({"cpu":"5m","memory":"19"})"})},
       Want::kUnschedulable,
       {"Insufficient memory"}},
  };
  for (const FilterRow& row : rows) CheckFilter(row, kFitNode);
}

TEST(NodeResourcesFitFilterTest, InsufficientResourcesDetails) {
  // TestEnoughRequests "too many resources fails": wantInsufficientResources.
  NodeInfo node(MakeNode("node", kFitNode));
  node.AddPod(NewPodInfo(MakePod("np", Spec({R"({"cpu":"10m","memory":"20"})"}), "node")));
  PodInfoPtr pod = NewPodInfo(MakePod("p", Spec({R"({"cpu":"1m","memory":"1"})"})));
  std::vector<InsufficientResource> got = InsufficientResources(*pod, node);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].reason, "Insufficient cpu");
  EXPECT_EQ(got[0].requested, 1);
  EXPECT_EQ(got[0].used, 10);
  EXPECT_EQ(got[0].capacity, 10);
  EXPECT_FALSE(got[0].unresolvable);
  EXPECT_EQ(got[1].reason, "Insufficient memory");
  EXPECT_EQ(got[1].requested, 1);
  EXPECT_EQ(got[1].used, 20);
  EXPECT_EQ(got[1].capacity, 20);
  EXPECT_FALSE(got[1].unresolvable);
}

TEST(NodeResourcesFitFilterTest, NotEnoughRequests) {
  // TestNotEnoughRequests: allocatable makeAllocatableResources(10, 20, 1, 0, 0, 0), one pod there.
  const char* node =
      R"({"cpu":"10m","memory":"20","pods":"1","example.com/aaa":"0","ephemeral-storage":"0","hugepages-2Mi":"0"})";
  const std::vector<FilterRow> rows = {
      {"even without specified resources, predicate fails when there's no space for additional "
       "pod",
       Spec({}),
       {Spec({R"({"cpu":"10m","memory":"20"})"})},
       Want::kUnschedulable,
       {"Too many pods"}},
      {"even if both resources fit, predicate fails when there's no space for additional pod",
       Spec({R"({"cpu":"1m","memory":"1"})"}),
       {Spec({R"({"cpu":"5m","memory":"5"})"})},
       Want::kUnschedulable,
       {"Too many pods"}},
      {"even for equal edge case, predicate fails when there's no space for additional pod",
       Spec({R"({"cpu":"5m","memory":"1"})"}),
       {Spec({R"({"cpu":"5m","memory":"19"})"})},
       Want::kUnschedulable,
       {"Too many pods"}},
      {"even for equal edge case, predicate fails when there's no space for additional pod due "
       "to init container",
       Spec({R"({"cpu":"5m","memory":"1"})"}, {R"({"cpu":"5m","memory":"1"})"}),
       {Spec({R"({"cpu":"5m","memory":"19"})"})},
       Want::kUnschedulable,
       {"Too many pods"}},
  };
  for (const FilterRow& row : rows) CheckFilter(row, node);
}

TEST(NodeResourcesFitFilterTest, StorageRequests) {
  // TestStorageRequests; allocatable as TestEnoughRequests.
  const std::vector<FilterRow> rows = {
      {"empty storage requested, and pod fits",
       Spec({R"({"cpu":"1m","memory":"1"})"}),
       {Spec({R"({"cpu":"2m","memory":"10"})"})},
       Want::kFit,
       {}},
      {"storage ephemeral local storage request exceeds allocatable",
       Spec({R"({"ephemeral-storage":"25"})"}),
       {Spec({R"({"cpu":"2m","memory":"2"})"})},
       Want::kUnresolvable,
       {"Insufficient ephemeral-storage"}},
      {"ephemeral local storage is sufficient",
       Spec({R"({"ephemeral-storage":"5"})"}),
       {Spec({R"({"cpu":"2m","memory":"2","ephemeral-storage":"10"})"})},
       Want::kFit,
       {}},
      {"pod fits",
       Spec({R"({"ephemeral-storage":"10"})"}),
       {Spec({R"({"cpu":"2m","memory":"2"})"})},
       Want::kFit,
       {}},
  };
  for (const FilterRow& row : rows) CheckFilter(row, kFitNode);
}

TEST(NodeResourcesFitFilterTest, RestartableInitContainers) {
  // TestRestartableInitContainers (SidecarContainers is GA: the "disabled" rows do not apply);
  // allocatable makeAllocatableResources(2, 0, 1, 0, 0, 0), no pod on the node.
  const char* node =
      R"({"cpu":"2m","memory":"0","pods":"1","example.com/aaa":"0","ephemeral-storage":"0","hugepages-2Mi":"0"})";
  auto with_sidecar = [](const char* request, const char* sidecar_request) {
    return R"("containers":[{"name":"regular","resources":{"requests":)" + std::string(request) +
           R"(}}],"initContainers":[{"name":"restartable-init","restartPolicy":"Always",)" +
           R"("resources":{"requests":)" + sidecar_request + "}}]";
  };
  const std::vector<FilterRow> rows = {
      {"allow pod without restartable init containers if sidecar containers is enabled",
       R"("containers":[{"name":"regular"}])",
       {},
       Want::kFit,
       {}},
      {"allow pod with restartable init containers if sidecar containers is enabled",
       with_sidecar("{}", "{}"),
       {},
       Want::kFit,
       {}},
      {"allow pod if the total requested resources do not exceed the node's allocatable "
       "resources",
       with_sidecar(R"({"cpu":"1m"})", R"({"cpu":"1m"})"),
       {},
       Want::kFit,
       {}},
      {"not allow pod if the total requested resources do exceed the node's allocatable "
       "resources",
       with_sidecar(R"({"cpu":"1m"})", R"({"cpu":"2m"})"),
       {},
       Want::kUnresolvable,
       {"Insufficient cpu"}},
  };
  for (const FilterRow& row : rows) CheckFilter(row, node);
}

// --- Scoring -------------------------------------------------------------------------------------

struct ScoreRow {
  const char* name;
  std::string pod_spec;
  std::vector<std::pair<std::string, std::string>> nodes;  // name, allocatable JSON
  std::vector<std::pair<std::string, std::string>> pods;   // node, spec members
  std::vector<int64_t> want;
};

// Nodes and their pods in a cache; PreScore then Score on every node (NodeResourcesFit and
// BalancedAllocation have no NormalizeScore).
std::vector<int64_t> RunScores(const ScoreRow& row, const PluginArgs& args, std::string_view plugin,
                               bool run_pre_score = true) {
  FakeHandle h;
  for (const auto& [name, allocatable] : row.nodes) h.cache.AddNode(MakeNode(name, allocatable));
  for (size_t i = 0; i < row.pods.size(); ++i) {
    h.cache.AddPod(NewPodInfo(
        MakePod("existing-" + std::to_string(i), row.pods[i].second, row.pods[i].first)));
  }
  std::unique_ptr<Plugin> p = testing::NewPlugin(plugin, &h, args);
  auto* pre_score = dynamic_cast<PreScorePlugin*>(p.get());
  auto* score = dynamic_cast<ScorePlugin*>(p.get());
  EXPECT_FALSE(score->HasNormalizeScore());
  PodInfoPtr pod = NewPodInfo(MakePod("p", row.pod_spec));
  std::vector<const NodeInfo*> nodes;
  for (const auto& [name, allocatable] : row.nodes) nodes.push_back(h.cache.Get(name));
  if (run_pre_score) {
    Status s = pre_score->PreScore(*pod, nodes);
    EXPECT_TRUE(s.IsSuccess()) << CodeName(s.code()) << " " << s.Message();
  }
  std::vector<int64_t> out;
  for (const NodeInfo* n : nodes) out.push_back(score->Score(*pod, *n));
  return out;
}

// st.MakeNode().Capacity(...): the given resources plus "pods": "32".
std::string Capacity(const std::string& members) {
  return "{" + members + (members.empty() ? "" : ",") + R"("pods":"32"})";
}

const std::vector<NodeResourcesFitArgs::ResourceSpec> kDefaultResources = {{"cpu", 1},
                                                                           {"memory", 1}};
const std::vector<NodeResourcesFitArgs::ResourceSpec> kExtendedResourceSet = {
    {"cpu", 1}, {"memory", 1}, {"abc.com/xyz", 1}};

struct StrategyRow {
  ScoreRow row;
  std::vector<NodeResourcesFitArgs::ResourceSpec> resources;
};

void CheckStrategy(const std::vector<StrategyRow>& rows, const char* strategy) {
  for (const StrategyRow& r : rows) {
    SCOPED_TRACE(r.row.name);
    PluginArgs args;
    args.node_resources_fit.scoring_strategy = strategy;
    args.node_resources_fit.resources = r.resources;
    EXPECT_EQ(RunScores(r.row, args, kNodeResourcesFitName), r.row.want);
  }
}

// Upstream's two-container pod {1000, 2000} + {2000, 3000} (cores, bytes).
const std::string kTwoContainers =
    Spec({R"({"cpu":"1000","memory":"2000"})", R"({"cpu":"2000","memory":"3000"})"});

TEST(NodeResourcesFitScoreTest, LeastAllocated) {
  // TestLeastAllocatedScoringStrategy (the weight-validation rows belong to args validation).
  const std::string n4000 = Capacity(R"("cpu":"4000","memory":"10000")");
  const std::string n6000 = Capacity(R"("cpu":"6000","memory":"10000")");
  const std::string n10000 = Capacity(R"("cpu":"10000","memory":"20000")");
  const std::string cpu3000 = Spec({R"({"cpu":"3000","memory":"0"})"});
  const std::string cpu3000mem5000 = Spec({R"({"cpu":"3000","memory":"5000"})"});
  const std::vector<StrategyRow> rows = {
      {{"nothing scheduled, nothing requested",
        Spec({}),
        {{"node1", n4000}, {"node2", n4000}},
        {},
        {100, 100}},
       kDefaultResources},
      {{"nothing scheduled, resources requested, differently sized nodes",
        kTwoContainers,
        {{"node1", n4000}, {"node2", n6000}},
        {},
        {37, 50}},
       kDefaultResources},
      // Upstream Score returns an Error status ("resources not found") with score 0; kubetaint's
      // Score has no status, so only the score is checked.
      {{"Resources not set, pods scheduled with error",
        kTwoContainers,
        {{"node1", n4000}, {"node2", n6000}},
        {},
        {0, 0}},
       {}},
      {{"no resources requested, pods scheduled",
        Spec({}),
        {{"node1", n4000}, {"node2", n4000}},
        {{"node1", Spec({})}, {"node1", Spec({})}, {"node2", Spec({})}, {"node2", Spec({})}},
        {100, 100}},
       kDefaultResources},
      {{"no resources requested, pods scheduled with resources",
        Spec({}),
        {{"node1", n10000}, {"node2", n10000}},
        {{"node1", cpu3000}, {"node1", cpu3000}, {"node2", cpu3000}, {"node2", cpu3000mem5000}},
        {70, 57}},
       kDefaultResources},
      {{"resources requested, pods scheduled with resources",
        kTwoContainers,
        {{"node1", n10000}, {"node2", n10000}},
        {{"node1", cpu3000}, {"node2", cpu3000mem5000}},
        {57, 45}},
       kDefaultResources},
      {{"resources requested, pods scheduled with resources, differently sized nodes",
        kTwoContainers,
        {{"node1", n10000}, {"node2", Capacity(R"("cpu":"10000","memory":"50000")")}},
        {{"node1", cpu3000}, {"node2", cpu3000mem5000}},
        {57, 60}},
       kDefaultResources},
      {{"requested resources exceed node capacity",
        cpu3000,
        {{"node1", n4000}, {"node2", n4000}},
        {{"node1", cpu3000}, {"node2", cpu3000mem5000}},
        {50, 25}},
       kDefaultResources},
      {{"zero node resources, pods scheduled with resources",
        Spec({}),
        {{"node1", Capacity("")}, {"node2", Capacity("")}},
        {{"node1", cpu3000}, {"node2", cpu3000mem5000}},
        {0, 0}},
       kDefaultResources},
      {{"nothing scheduled, resources requested with different weight on CPU and memory, "
        "differently sized nodes",
        kTwoContainers,
        {{"node1", n4000}, {"node2", n6000}},
        {},
        {41, 50}},
       {{"memory", 2}, {"cpu", 1}}},
      {{"bypass extended resource if the pod does not request",
        kTwoContainers,
        {{"node1", n6000},
         {"node2", Capacity(R"("cpu":"6000","memory":"10000","abc.com/xyz":"4")")}},
        {},
        {50, 50}},
       kExtendedResourceSet},
      {{"honor extended resource if the pod requests",
        Spec({R"({"cpu":"3000","memory":"5000","abc.com/xyz":"2"})"}),
        {{"node1", Capacity(R"("cpu":"6000","memory":"10000","abc.com/xyz":"4")")},
         {"node2", Capacity(R"("cpu":"6000","memory":"10000","abc.com/xyz":"10")")}},
        {},
        {50, 60}},
       kExtendedResourceSet},
      {{"if the node doesn't have a resource",
        Spec({R"({"cpu":"3000","memory":"4000"})"}),
        {{"node1", n6000},
         {"node2", Capacity(R"("cpu":"6000","memory":"10000","abc.com/xyz":"4")")}},
        {},
        {55, 55}},
       {{"abc.com/xyz", 2}, {"cpu", 1}, {"memory", 1}}},
  };
  CheckStrategy(rows, "LeastAllocated");
}

TEST(NodeResourcesFitScoreTest, MostAllocated) {
  // TestMostAllocatedScoringStrategy (the weight-validation rows belong to args validation).
  const std::string n4000 = Capacity(R"("cpu":"4000","memory":"10000")");
  const std::string n6000 = Capacity(R"("cpu":"6000","memory":"10000")");
  const std::string n10000 = Capacity(R"("cpu":"10000","memory":"20000")");
  const std::string cpu3000 = Spec({R"({"cpu":"3000","memory":"0"})"});
  const std::string cpu3000mem5000 = Spec({R"({"cpu":"3000","memory":"5000"})"});
  const std::string no_requests = R"("containers":[{"name":"container"}])";
  const std::vector<StrategyRow> rows = {
      {{"nothing scheduled, nothing requested",
        Spec({}),
        {{"node1", n4000}, {"node2", n4000}},
        {},
        {0, 0}},
       kDefaultResources},
      {{"nothing scheduled, resources requested, differently sized nodes",
        kTwoContainers,
        {{"node1", n4000}, {"node2", n6000}},
        {},
        {62, 50}},
       kDefaultResources},
      {{"Resources not set, pods scheduled with error",
        kTwoContainers,
        {{"node1", n4000}, {"node2", n6000}},
        {},
        {0, 0}},
       {}},
      {{"no resources requested, pods scheduled with resources",
        Spec({}),
        {{"node1", n10000}, {"node2", n10000}},
        {{"node1", cpu3000}, {"node1", cpu3000}, {"node2", cpu3000}, {"node2", cpu3000mem5000}},
        {30, 42}},
       kDefaultResources},
      {{"resources requested, pods scheduled with resources",
        kTwoContainers,
        {{"node1", n10000}, {"node2", n10000}},
        {{"node1", cpu3000}, {"node2", cpu3000mem5000}},
        {42, 55}},
       kDefaultResources},
      {{"resources requested equal node capacity",
        Spec({R"({"cpu":"2000","memory":"4000"})", R"({"cpu":"3000","memory":"5000"})"}),
        {{"node1", Capacity(R"("cpu":"5000","memory":"10000")")},
         {"node2", Capacity(R"("cpu":"10000","memory":"9000")")}},
        {},
        {95, 75}},
       kDefaultResources},
      {{"nothing scheduled, resources requested, differently sized nodes (weights)",
        kTwoContainers,
        {{"node1", n4000}, {"node2", n6000}},
        {},
        {58, 50}},
       {{"memory", 2}, {"cpu", 1}}},
      {{"no resources requested, pods scheduled, nonzero request for resource",
        no_requests,
        {{"node1", Capacity(R"("cpu":"250m","memory":"1000Mi")")},
         {"node2", Capacity(R"("cpu":"250m","memory":"1000Mi")")}},
        {{"node1", no_requests}, {"node1", no_requests}},
        {80, 30}},
       kDefaultResources},
      {{"bypass extended resource if the pod does not request",
        kTwoContainers,
        {{"node1", n6000},
         {"node2", Capacity(R"("cpu":"6000","memory":"10000","abc.com/xyz":"4")")}},
        {},
        {50, 50}},
       kExtendedResourceSet},
      {{"honor extended resource if the pod request",
        Spec({R"({"cpu":"3000","memory":"5000","abc.com/xyz":"2"})"}),
        {{"node1", Capacity(R"("cpu":"6000","memory":"10000","abc.com/xyz":"4")")},
         {"node2", Capacity(R"("cpu":"6000","memory":"10000","abc.com/xyz":"10")")}},
        {},
        {50, 40}},
       kExtendedResourceSet},
      {{"if the node doesn't have a resource",
        Spec({R"({"cpu":"3000","memory":"4000"})"}),
        {{"node1", n6000},
         {"node2", Capacity(R"("cpu":"6000","memory":"10000","abc.com/xyz":"4")")}},
        {},
        {45, 45}},
       {{"abc.com/xyz", 2}, {"cpu", 1}, {"memory", 1}}},
  };
  CheckStrategy(rows, "MostAllocated");
}

TEST(NodeResourcesFitScoreTest, FitScore) {
  // TestFitScore, the LeastAllocated and MostAllocated cases.
  const std::vector<std::pair<std::string, std::string>> nodes = {
      {"node1", Capacity(R"("cpu":"4000","memory":"10000")")},
      {"node2", Capacity(R"("cpu":"6000","memory":"10000")")}};
  const std::vector<std::pair<std::string, std::string>> pods = {
      {"node1", Spec({R"({"cpu":"2000","memory":"4000"})"})},
      {"node2", Spec({R"({"cpu":"1000","memory":"2000"})"})}};
  const std::string pod = Spec({R"({"cpu":"1000","memory":"2000"})"});
  CheckStrategy({{{"test case for ScoringStrategy MostAllocated", pod, nodes, pods, {67, 36}},
                  kDefaultResources}},
                "MostAllocated");
  CheckStrategy({{{"test case for ScoringStrategy LeastAllocated", pod, nodes, pods, {32, 63}},
                  kDefaultResources}},
                "LeastAllocated");
}

// --- BalancedAllocation --------------------------------------------------------------------------

// balanced_allocation_test.go makeNode(name, milliCPU, memory, scalars).
std::string BalancedNode(const char* milli_cpu, const char* memory, const char* gpus = nullptr) {
  std::string s =
      R"({"cpu":")" + std::string(milli_cpu) + R"(m","memory":")" + memory + R"(","pods":"100")";
  if (gpus != nullptr) s += R"(,"nvidia.com/gpu":")" + std::string(gpus) + "\"";
  return s + "}";
}

TEST(BalancedAllocationTest, NodeResourcesBalancedAllocation) {
  const std::string cpu_only =
      Spec({R"({"cpu":"1000m","memory":"0"})", R"({"cpu":"2000m","memory":"0"})"});
  const std::string cpu_and_memory =
      Spec({R"({"cpu":"1000m","memory":"2000"})", R"({"cpu":"2000m","memory":"3000"})"});
  const std::string cpu_memory_gpu =
      Spec({R"({"cpu":"1000m","memory":"2000"})",
            R"({"cpu":"2000m","memory":"3000","nvidia.com/gpu":"3"})"});
  const std::vector<NodeResourcesFitArgs::ResourceSpec> with_gpu = {
      {"cpu", 1}, {"memory", 1}, {"nvidia.com/gpu", 1}};
  struct Row {
    ScoreRow row;
    std::vector<NodeResourcesFitArgs::ResourceSpec> resources;
    bool run_pre_score;
  };
  const std::vector<Row> rows = {
      {{"nothing scheduled, resources requested, differently sized nodes",
        cpu_and_memory,
        {{"node1", BalancedNode("4000", "10000")}, {"node2", BalancedNode("6000", "10000")}},
        {},
        {87, 100}},
       kDefaultResources,
       true},
      {{"resources requested, pods scheduled with resources",
        cpu_and_memory,
        {{"node1", BalancedNode("10000", "20000")}, {"node2", BalancedNode("10000", "20000")}},
        {{"node1", cpu_only}, {"node2", cpu_and_memory}},
        {82, 95}},
       kDefaultResources,
       true},
      {{"resources requested, pods scheduled with resources, differently sized nodes",
        cpu_and_memory,
        {{"node1", BalancedNode("10000", "20000")}, {"node2", BalancedNode("10000", "50000")}},
        {{"node1", cpu_only}, {"node2", cpu_and_memory}},
        {82, 80}},
       kDefaultResources,
       true},
      {{"requested resources at node capacity",
        cpu_only,
        {{"node1", BalancedNode("6000", "10000")}, {"node2", BalancedNode("6000", "10000")}},
        {{"node1", cpu_only}, {"node2", cpu_and_memory}},
        {50, 75}},
       kDefaultResources,
       true},
      {{"include scalar resource on a node for balanced resource allocation",
        Spec({R"({"memory":"0","nvidia.com/gpu":"1"})"}),
        {{"node1", BalancedNode("3500", "40000", "8")},
         {"node2", BalancedNode("3500", "40000", "8")}},
        {{"node2", cpu_and_memory}, {"node1", cpu_memory_gpu}},
        {70, 65}},
       with_gpu,
       true},
      {{"node without the scalar resource should skip the scalar resource",
        cpu_and_memory,
        {{"node1", BalancedNode("3500", "40000", "8")}, {"node2", BalancedNode("3500", "40000")}},
        {},
        {63, 63}},
       with_gpu,
       true},
      {{"resources requested, pods scheduled with resources if PreScore not called",
        cpu_and_memory,
        {{"node1", BalancedNode("10000", "20000")}, {"node2", BalancedNode("10000", "20000")}},
        {{"node1", cpu_only}, {"node2", cpu_and_memory}},
        {82, 95}},
       kDefaultResources,
       false},
  };
  for (const Row& r : rows) {
    SCOPED_TRACE(r.row.name);
    PluginArgs args;
    args.balanced_allocation.resources = r.resources;
    EXPECT_EQ(RunScores(r.row, args, kBalancedAllocationName, r.run_pre_score), r.row.want);
  }
}

TEST(BalancedAllocationTest, BestEffortPodIsSkippedInPreScore) {
  // "nothing scheduled, nothing requested, skip in PreScore".
  FakeHandle h;
  h.cache.AddNode(MakeNode("node1", BalancedNode("4000", "10000")));
  h.cache.AddNode(MakeNode("node2", BalancedNode("4000", "10000")));
  std::unique_ptr<Plugin> p = testing::NewPlugin(kBalancedAllocationName, &h);
  auto* pre_score = dynamic_cast<PreScorePlugin*>(p.get());
  PodInfoPtr pod = NewPodInfo(MakePod("p", Spec({})));
  const NodeInfo* nodes[] = {h.cache.Get("node1"), h.cache.Get("node2")};
  EXPECT_EQ(CodeName(pre_score->PreScore(*pod, nodes).code()), "Skip"sv);
}

// The batch scorers remember each node's score for a request until the node changes: over a
// sequence of pods (the same request again, another one) and node changes (a pod added, one
// removed, new allocatable), with plugins of different strategies sharing the nodes, every batch
// score equals the plugin's own per-node Score.
TEST(NodeResourcesScoreMemoTest, RememberedScoresFollowTheNodesAndTheRequest) {
  FakeHandle h;
  for (int i = 1; i <= 4; ++i) {
    h.cache.AddNode(MakeNode("node" + std::to_string(i),
                             Capacity(R"("cpu":")" + std::to_string(i * 1000) + R"(m","memory":")" +
                                      std::to_string(i * 4096) + R"(")")));
  }
  PluginArgs most;
  most.node_resources_fit.scoring_strategy = "MostAllocated";
  std::vector<std::unique_ptr<Plugin>> plugins;
  plugins.push_back(NewFit(&h));
  plugins.push_back(testing::NewPlugin(kNodeResourcesFitName, &h, most));
  plugins.push_back(testing::NewPlugin(kBalancedAllocationName, &h));
  const PodInfoPtr small = NewPodInfo(MakePod("small", Spec({R"({"cpu":"100m","memory":"256"})"})));
  const PodInfoPtr big = NewPodInfo(MakePod("big", Spec({R"({"cpu":"700m","memory":"1024"})"})));
  auto check = [&](const char* step, const PodInfoPtr& pod) {
    SCOPED_TRACE(step);
    std::vector<const NodeInfo*> nodes;
    for (int i = 1; i <= 4; ++i) nodes.push_back(h.cache.Get("node" + std::to_string(i)));
    for (const auto& p : plugins) {
      auto* score = dynamic_cast<ScorePlugin*>(p.get());
      auto* pre = dynamic_cast<PreScorePlugin*>(p.get());
      ASSERT_TRUE(pre->PreScore(*pod, nodes).IsSuccess());
      std::vector<NodeScore> batch(nodes.size());
      score->ScoreNodes(*pod, nodes, batch);
      for (size_t i = 0; i < nodes.size(); ++i) {
        EXPECT_EQ(batch[i].score, score->Score(*pod, *nodes[i]))
            << p->Name() << " on " << nodes[i]->name();
      }
    }
  };
  check("cold", small);
  check("again", small);
  check("another request", big);
  check("the first request again", small);
  h.cache.AddPod(
      NewPodInfo(MakePod("placed", Spec({R"({"cpu":"300m","memory":"2048"})"}), "node2")));
  check("a pod added to node2", small);
  check("a pod added to node2, big", big);
  h.cache.RemovePod(h.cache.Get("node2")->pods()[0]->uid());
  check("the pod removed", small);
  h.cache.UpdateNode(MakeNode("node3", Capacity(R"("cpu":"500m","memory":"1024")")));
  check("node3 shrunk", small);
  check("node3 shrunk, big", big);
}

}  // namespace
}  // namespace kt::scheduler
