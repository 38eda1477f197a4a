// The KubeSchedulerConfiguration loader (config.h): what a valid v1 file turns into — profiles,
// plugins merged with the defaults, score weights, percentageOfNodesToScore, plugin arguments —
// and the errors for invalid ones, which name the file, the field and what is wrong, in
// upstream's field-error wording (pkg/scheduler/apis/config/validation) where upstream has one.
// Where kubetaint's wording differs from upstream's the test says so.
#include "scheduler/config.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "scheduler/evaluate.h"
#include "scheduler/scheduler.h"
#include "scheduler/testing/fakes.h"

namespace kt::scheduler {
namespace {

using testing::FakeHandle;
using testing::ReadyNode;

constexpr std::string_view kHeader =
    "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n";

std::vector<std::string> Names(const std::vector<PluginRef>& refs) {
  std::vector<std::string> out;
  for (const PluginRef& r : refs) out.push_back(r.name);
  return out;
}

int32_t WeightOf(const std::vector<PluginRef>& refs, std::string_view name) {
  for (const PluginRef& r : refs) {
    if (r.name == name) return r.weight;
  }
  return -1000;
}

// The weight each Score plugin of `profile` really gets, by scoring a pod on two nodes (a pod
// with requests and a preferred affinity, so that no Score plugin skips it).
std::map<std::string, int64_t> EffectiveScoreWeights(const Profile& profile) {
  FakeHandle h;
  h.cache.AddNode(ReadyNode("n1"));
  h.cache.AddNode(ReadyNode("n2"));
  auto fw = testing::NewFramework(&h, profile);
  PodInfoPtr pod = NewPodInfo(testing::Pod(R"({"metadata":{"name":"p"},"spec":{
      "containers":[{"name":"c","image":"x","resources":{"requests":{"cpu":"1","memory":"1Gi"}}}],
      "affinity":{"nodeAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[
        {"weight":10,"preference":{"matchExpressions":[{"key":"x","operator":"Exists"}]}}]}}}})"));
  PreFilterResult pre;
  std::set<std::string> narrowing;
  EXPECT_TRUE(fw->RunPreFilterPlugins(*pod, &pre, &narrowing).IsSuccess());
  std::vector<const NodeInfo*> nodes(h.cache.List().begin(), h.cache.List().end());
  std::vector<NodePluginScores> scores;
  EXPECT_TRUE(fw->RunScorePlugins(*pod, nodes, &scores).IsSuccess());
  std::map<std::string, int64_t> out;
  if (scores.empty()) return out;
  for (const auto& s : scores[0].scores) out[std::string(s.plugin)] = s.weight;
  return out;
}

// --- Valid configurations
// -------------------------------------------------------------------------

TEST(SchedulerConfigTest, ValidConfigWithTwoProfiles) {
  const std::string yaml = std::string(kHeader) + R"(
percentageOfNodesToScore: 50
podInitialBackoffSeconds: 2
podMaxBackoffSeconds: 20
parallelism: 8
leaderElection:
  leaderElect: false
clientConnection:
  qps: 50
profiles:
- schedulerName: default-scheduler
  plugins:
    score:
      disabled:
      - name: NodeResourcesBalancedAllocation
      enabled:
      - name: TaintToleration
        weight: 5
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources:
        - name: cpu
          weight: 2
        - name: memory
      ignoredResources: [example.com/foo]
      ignoredResourceGroups: [example.org]
- schedulerName: relaxed-scheduler
  percentageOfNodesToScore: 80
  plugins:
    multiPoint:
      enabled:
      - name: NodeAffinity
        weight: 7
      disabled:
      - name: NodeResourcesBalancedAllocation
    filter:
      disabled:
      - name: TaintToleration
  pluginConfig:
  - name: DefaultPreemption
    args:
      minCandidateNodesPercentage: 20
      minCandidateNodesAbsolute: 0
  - name: NodeAffinity
    args:
      addedAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
          - matchExpressions:
            - key: pool
              operator: In
              values: [general]
)";
  Result<SchedulerConfig> c = ParseSchedulerConfig(yaml, "sched.yaml");
  ASSERT_TRUE(c) << c.error().message();
  EXPECT_EQ(c->pod_initial_backoff_seconds, 2);
  EXPECT_EQ(c->pod_max_backoff_seconds, 20);
  ASSERT_EQ(c->profiles.size(), 2u);

  const Profile& def = c->profiles[0];
  EXPECT_EQ(def.scheduler_name, "default-scheduler");
  EXPECT_EQ(def.percentage_of_nodes_to_score, 50);  // the global value
  EXPECT_EQ(Names(def.plugins.score.enabled), std::vector<std::string>{"TaintToleration"});
  EXPECT_EQ(WeightOf(def.plugins.score.enabled, "TaintToleration"), 5);
  EXPECT_EQ(def.plugins.score.disabled,
            std::vector<std::string>{"NodeResourcesBalancedAllocation"});
  EXPECT_EQ(Names(def.plugins.multi_point.enabled), Names(DefaultPlugins().multi_point.enabled));
  EXPECT_EQ(def.args.node_resources_fit.scoring_strategy, "MostAllocated");
  ASSERT_EQ(def.args.node_resources_fit.resources.size(), 2u);
  EXPECT_EQ(def.args.node_resources_fit.resources[0].name, "cpu");
  EXPECT_EQ(def.args.node_resources_fit.resources[0].weight, 2);
  EXPECT_EQ(def.args.node_resources_fit.resources[1].name, "memory");
  EXPECT_EQ(def.args.node_resources_fit.resources[1].weight, 1);  // defaulted
  EXPECT_EQ(def.args.node_resources_fit.ignored_resources,
            std::vector<std::string>{"example.com/foo"});
  EXPECT_EQ(def.args.node_resources_fit.ignored_resource_groups,
            std::vector<std::string>{"example.org"});

  const Profile& relaxed = c->profiles[1];
  EXPECT_EQ(relaxed.scheduler_name, "relaxed-scheduler");
  EXPECT_EQ(relaxed.percentage_of_nodes_to_score, 80);  // its own
  // multiPoint: the defaults in place (NodeAffinity re-weighted where it stands), the disabled
  // one gone.
  std::vector<std::string> want = Names(DefaultPlugins().multi_point.enabled);
  std::erase(want, "NodeResourcesBalancedAllocation");
  EXPECT_EQ(Names(relaxed.plugins.multi_point.enabled), want);
  EXPECT_EQ(WeightOf(relaxed.plugins.multi_point.enabled, "NodeAffinity"), 7);
  EXPECT_EQ(relaxed.plugins.filter.disabled, std::vector<std::string>{"TaintToleration"});
  EXPECT_EQ(relaxed.args.default_preemption.min_candidate_nodes_percentage, 20);
  EXPECT_EQ(relaxed.args.default_preemption.min_candidate_nodes_absolute, 0);
  ASSERT_TRUE(relaxed.args.node_affinity.added_affinity.has_value());
  ASSERT_TRUE(relaxed.args.node_affinity.added_affinity->required.has_value());
  EXPECT_EQ(relaxed.args.node_affinity.added_affinity->required->terms.size(), 1u);

  EXPECT_TRUE(ValidateProfiles(c->profiles, FeatureGates()).ok());

  // The weights the frameworks really use: the score point's own setting, then multiPoint's.
  EXPECT_EQ(EffectiveScoreWeights(def),
            (std::map<std::string, int64_t>{
                {"TaintToleration", 5}, {"NodeAffinity", 2}, {"NodeResourcesFit", 1}}));
  EXPECT_EQ(EffectiveScoreWeights(relaxed),
            (std::map<std::string, int64_t>{
                {"TaintToleration", 3}, {"NodeAffinity", 7}, {"NodeResourcesFit", 1}}));
}

// What the two profiles above do: the relaxed one filters no taints, but only considers nodes
// of its added affinity's pool.
TEST(SchedulerConfigTest, ProfilesOfAConfigDecideDifferently) {
  const std::string yaml = std::string(kHeader) + R"(
profiles:
- schedulerName: default-scheduler
- schedulerName: relaxed-scheduler
  plugins:
    filter:
      disabled: [{name: TaintToleration}]
  pluginConfig:
  - name: NodeAffinity
    args:
      addedAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
          - matchExpressions: [{key: pool, operator: In, values: [general]}]
)";
  Result<SchedulerConfig> c = ParseSchedulerConfig(yaml, "sched.yaml");
  ASSERT_TRUE(c) << c.error().message();
  Evaluator ev(c->profiles, FeatureGates());
  ev.AddNode(ReadyNode("tainted", "4", "16Gi", "110",
                       R"({"taints":[{"key":"a","effect":"NoSchedule"}]})",
                       R"({"pool":"general"})"));
  ev.AddNode(ReadyNode("elsewhere", "4", "16Gi", "110", "{}", R"({"pool":"batch"})"));
  ASSERT_TRUE(ev.Init().ok());
  auto pod = [](std::string_view scheduler) {
    return testing::Pod(R"({"metadata":{"name":"p"},"spec":{"schedulerName":")" +
                        std::string(scheduler) + R"(","containers":[{"name":"c","image":"x"}]}})");
  };
  Result<PodEvaluation> strict = ev.Evaluate(pod("default-scheduler"));
  ASSERT_TRUE(strict);
  EXPECT_EQ(strict->selected_node, "elsewhere");
  Result<PodEvaluation> relaxed = ev.Evaluate(pod("relaxed-scheduler"));
  ASSERT_TRUE(relaxed);
  EXPECT_EQ(relaxed->selected_node, "tainted");
}

TEST(SchedulerConfigTest, MinimalConfigIsTheDefaults) {
  Result<SchedulerConfig> c = ParseSchedulerConfig(kHeader, "sched.yaml");
  ASSERT_TRUE(c) << c.error().message();
  ASSERT_EQ(c->profiles.size(), 1u);
  EXPECT_EQ(c->profiles[0].scheduler_name, "default-scheduler");
  EXPECT_FALSE(c->profiles[0].percentage_of_nodes_to_score.has_value());
  EXPECT_EQ(Names(c->profiles[0].plugins.multi_point.enabled),
            Names(DefaultPlugins().multi_point.enabled));
  EXPECT_EQ(c->pod_initial_backoff_seconds, 1);
  EXPECT_EQ(c->pod_max_backoff_seconds, 10);
  EXPECT_EQ(EffectiveScoreWeights(c->profiles[0]),
            (std::map<std::string, int64_t>{{"TaintToleration", 3},
                                            {"NodeAffinity", 2},
                                            {"NodeResourcesFit", 1},
                                            {"NodeResourcesBalancedAllocation", 1}}));
  // Same as having no file.
  EXPECT_EQ(DefaultSchedulerConfig().profiles.size(), 1u);
  EXPECT_EQ(DefaultSchedulerConfig().profiles[0].scheduler_name, "default-scheduler");
}

TEST(SchedulerConfigTest, JsonIsAcceptedToo) {
  Result<SchedulerConfig> c = ParseSchedulerConfig(
      R"({"apiVersion":"kubescheduler.config.k8s.io/v1","kind":"KubeSchedulerConfiguration",
          "profiles":[{"schedulerName":"json-scheduler","percentageOfNodesToScore":30}]})",
      "sched.json");
  ASSERT_TRUE(c) << c.error().message();
  ASSERT_EQ(c->profiles.size(), 1u);
  EXPECT_EQ(c->profiles[0].scheduler_name, "json-scheduler");
  EXPECT_EQ(c->profiles[0].percentage_of_nodes_to_score, 30);
}

TEST(SchedulerConfigTest, PercentageOfNodesToScoreGlobalAndPerProfile) {
  struct Row {
    std::string name;
    std::string global;  // "" when absent
    std::string own;     // "" when absent
    std::optional<int32_t> want;
  };
  const Row rows[] = {
      {"neither", "", "", std::nullopt},
      {"global only", "40", "", 40},
      {"own only", "", "70", 70},
      {"own wins", "40", "70", 70},
      {"own zero is adaptive, not the global", "40", "0", 0},
      {"global zero is adaptive", "0", "", std::nullopt},
      {"bounds", "100", "", 100},
  };
  for (const Row& r : rows) {
    std::string yaml(kHeader);
    if (!r.global.empty()) yaml += "percentageOfNodesToScore: " + r.global + "\n";
    yaml += "profiles:\n- schedulerName: s\n";
    if (!r.own.empty()) yaml += "  percentageOfNodesToScore: " + r.own + "\n";
    Result<SchedulerConfig> c = ParseSchedulerConfig(yaml, "sched.yaml");
    ASSERT_TRUE(c) << r.name << ": " << c.error().message();
    EXPECT_EQ(c->profiles[0].percentage_of_nodes_to_score, r.want) << r.name;
  }
}

TEST(SchedulerConfigTest, MultiPointDisableAllThenEnableSome) {
  // "*" drops every default; what is enabled alongside is all there is.
  const std::string yaml = std::string(kHeader) + R"(
profiles:
- schedulerName: minimal
  plugins:
    multiPoint:
      disabled: [{name: "*"}]
      enabled:
      - {name: PrioritySort}
      - {name: NodeResourcesFit, weight: 4}
      - {name: DefaultBinder}
)";
  Result<SchedulerConfig> c = ParseSchedulerConfig(yaml, "sched.yaml");
  ASSERT_TRUE(c) << c.error().message();
  EXPECT_EQ(Names(c->profiles[0].plugins.multi_point.enabled),
            (std::vector<std::string>{"PrioritySort", "NodeResourcesFit", "DefaultBinder"}));
  EXPECT_TRUE(ValidateProfiles(c->profiles, FeatureGates()).ok());
  EXPECT_EQ(EffectiveScoreWeights(c->profiles[0]),
            (std::map<std::string, int64_t>{{"NodeResourcesFit", 4}}));
}

// Upstream does not validate Score plugin weights beyond "0 means 1" (validation.go has no rule;
// runtime getScoreWeights only guards against overflow), so a negative weight is accepted and
// used as given. kubetaint does the same.
TEST(SchedulerConfigTest, NegativeScoreWeightIsAcceptedAsUpstreamDoes) {
  const std::string yaml = std::string(kHeader) + R"(
profiles:
- plugins:
    score:
      enabled: [{name: TaintToleration, weight: -2}, {name: NodeAffinity, weight: 0}]
)";
  Result<SchedulerConfig> c = ParseSchedulerConfig(yaml, "sched.yaml");
  ASSERT_TRUE(c) << c.error().message();
  EXPECT_TRUE(ValidateProfiles(c->profiles, FeatureGates()).ok());
  std::map<std::string, int64_t> w = EffectiveScoreWeights(c->profiles[0]);
  EXPECT_EQ(w["TaintToleration"], -2);
  EXPECT_EQ(w["NodeAffinity"], 1);  // 0 means 1
}

TEST(SchedulerConfigTest, LoadFromFile) {
  const std::string path = ::testing::TempDir() + "kubetaint-sched-config.yaml";
  {
    std::ofstream out(path);
    out << kHeader << "profiles:\n- schedulerName: from-file\n";
  }
  Result<SchedulerConfig> c = LoadSchedulerConfig(path);
  std::remove(path.c_str());
  ASSERT_TRUE(c) << c.error().message();
  EXPECT_EQ(c->profiles[0].scheduler_name, "from-file");

  Result<SchedulerConfig> missing = LoadSchedulerConfig(path);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.error().message(), "open " + path + ": no such file or directory");
}

// --- Invalid configurations
// -----------------------------------------------------------------------

struct ErrorCase {
  std::string name;
  std::string yaml;  // after the header unless it starts with "!"
  std::string want;  // the whole message, after "sched.yaml: "
};

void PrintTo(const ErrorCase& c, std::ostream* os) { *os << c.name; }

class SchedulerConfigErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(SchedulerConfigErrorTest, NamesWhatAndWhere) {
  const ErrorCase& tc = GetParam();
  const std::string text =
      tc.yaml.starts_with("!") ? tc.yaml.substr(1) : std::string(kHeader) + tc.yaml;
  Result<SchedulerConfig> c = ParseSchedulerConfig(text, "sched.yaml");
  ASSERT_FALSE(c) << "accepted:\n" << text;
  EXPECT_EQ(c.error().code(), StatusCode::kBadRequest);
  EXPECT_EQ(c.error().message(), "sched.yaml: " + tc.want);
}

INSTANTIATE_TEST_SUITE_P(
    Errors, SchedulerConfigErrorTest,
    ::testing::Values(
        // Upstream's decoder says `no kind "KubeSchedulerConfiguration" is registered for version
        // "kubescheduler.config.k8s.io/v1beta3" in scheme "<file:line of the scheme>"`; kubetaint
        // names what it expects instead of the scheme.
        ErrorCase{
            "UnknownApiVersion",
            "!apiVersion: kubescheduler.config.k8s.io/v1beta3\n"
            "kind: KubeSchedulerConfiguration\n",
            "no kind \"KubeSchedulerConfiguration\" is registered for version "
            "\"kubescheduler.config.k8s.io/v1beta3\" (expected kind KubeSchedulerConfiguration, "
            "apiVersion kubescheduler.config.k8s.io/v1)"},
        ErrorCase{"UnknownKind",
                  "!apiVersion: kubescheduler.config.k8s.io/v1\nkind: SchedulerConfiguration\n",
                  "no kind \"SchedulerConfiguration\" is registered for version "
                  "\"kubescheduler.config.k8s.io/v1\" (expected kind KubeSchedulerConfiguration, "
                  "apiVersion kubescheduler.config.k8s.io/v1)"},
        ErrorCase{"MissingKind", "!apiVersion: kubescheduler.config.k8s.io/v1\nprofiles: []\n",
                  "document 1: Object 'Kind' is missing"},
        ErrorCase{"MalformedYaml", "profiles:\n- schedulerName: a\n  plugins: [\n",
                  "document 1: yaml: line 6, column 1: end of sequence flow not found"},
        ErrorCase{"TwoDocuments", std::string(kHeader) + "---\n" + std::string(kHeader),
                  "expected one KubeSchedulerConfiguration, found 2 documents"},
        // Strict decoding, as upstream: unknown fields anywhere are errors.
        ErrorCase{"UnknownTopLevelField", "percentageOfNodes: 50\n",
                  "strict decoding error: unknown field \"percentageOfNodes\""},
        ErrorCase{"UnknownProfileField", "profiles:\n- schedulerName: a\n  plugin: {}\n",
                  "strict decoding error: unknown field \"profiles[0].plugin\""},
        ErrorCase{"UnknownExtensionPoint",
                  "profiles:\n- schedulerName: a\n  plugins:\n    scoring: {}\n",
                  "strict decoding error: unknown field \"profiles[0].plugins.scoring\""},
        ErrorCase{"UnknownPluginSetField",
                  "profiles:\n- schedulerName: a\n  plugins:\n    score:\n      enable: []\n",
                  "strict decoding error: unknown field \"profiles[0].plugins.score.enable\""},
        ErrorCase{"UnknownPluginField",
                  "profiles:\n- plugins:\n    score:\n      enabled: [{name: NodeAffinity, "
                  "wieght: 2}]\n",
                  "strict decoding error: unknown field "
                  "\"profiles[0].plugins.score.enabled[0].wieght\""},
        ErrorCase{"EnabledPluginWithoutName",
                  "profiles:\n- plugins:\n    filter:\n      enabled: [{weight: 2}]\n",
                  "profiles[0].plugins.filter.enabled[0].name: Required value"},
        // Upstream's JSON decoder: `json: cannot unmarshal string into Go struct field
        // KubeSchedulerConfiguration.percentageOfNodesToScore of type int32`.
        ErrorCase{"WrongType", "percentageOfNodesToScore: \"50\"\n",
                  "percentageOfNodesToScore: expected integer, got string"},
        ErrorCase{"ProfilesNotAList", "profiles: {schedulerName: a}\n",
                  "profiles: expected array, got object"},
        // Upstream: `profiles[1].schedulerName: Duplicate value: profiles[0].schedulerName` (its
        // field.Duplicate is given the first profile's path, not the name).
        ErrorCase{"DuplicateSchedulerName",
                  "profiles:\n- schedulerName: same\n- schedulerName: other\n"
                  "- schedulerName: same\n",
                  "profiles[2].schedulerName: Duplicate value: \"same\""},
        ErrorCase{"SchedulerNameMissingWithSeveralProfiles",
                  "profiles:\n- schedulerName: a\n- percentageOfNodesToScore: 10\n",
                  "profiles[1].schedulerName: Required value"},
        ErrorCase{"EmptySchedulerName", "profiles:\n- schedulerName: \"\"\n",
                  "profiles[0].schedulerName: Required value"},
        ErrorCase{"GlobalPercentageAbove100", "percentageOfNodesToScore: 101\n",
                  "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]"},
        ErrorCase{"ProfilePercentageNegative",
                  "profiles:\n- schedulerName: a\n  percentageOfNodesToScore: -1\n",
                  "profiles[0].percentageOfNodesToScore: Invalid value: -1: not in valid range "
                  "[0-100]"},
        ErrorCase{"InitialBackoffZero", "podInitialBackoffSeconds: 0\n",
                  "podInitialBackoffSeconds: Invalid value: 0: must be greater than 0"},
        ErrorCase{"MaxBackoffBelowInitial",
                  "podInitialBackoffSeconds: 5\npodMaxBackoffSeconds: 4\n",
                  "podMaxBackoffSeconds: Invalid value: 4: must be greater than or equal to "
                  "PodInitialBackoffSeconds"},
        ErrorCase{"ExtendersAreNotSupported", "extenders:\n- urlPrefix: http://x\n",
                  "extenders: extenders are not supported by kubetaint"},
        ErrorCase{"PluginConfigWithoutName", "profiles:\n- pluginConfig:\n  - args: {}\n",
                  "profiles[0].pluginConfig[0].name: Required value"},
        ErrorCase{"DuplicatePluginConfig",
                  "profiles:\n- pluginConfig:\n  - name: NodeAffinity\n  - name: NodeAffinity\n",
                  "profiles[0].pluginConfig[1]: Duplicate value: \"NodeAffinity\""},
        // Upstream also supports RequestedToCapacityRatio, and lists it.
        ErrorCase{"UnsupportedScoringStrategy",
                  "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
                  "      scoringStrategy: {type: RequestedToCapacityRatio}\n",
                  "profiles[0].pluginConfig[0].args.scoringStrategy.type: Unsupported value: "
                  "\"RequestedToCapacityRatio\": supported values: \"LeastAllocated\", "
                  "\"MostAllocated\""},
        // Upstream's text; upstream reports it from the plugin's constructor with the path from
        // "scoringStrategy" (its config validation looks NodeResourcesFit up as
        // "NodeResourcesFitArgs"), kubetaint at load time with the whole path.
        ErrorCase{"FitResourceWeightAbove100",
                  "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
                  "      scoringStrategy:\n        resources: [{name: cpu, weight: 101}]\n",
                  "profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].weight: Invalid "
                  "value: 101: resource weight of cpu not in valid range (0, 100]"},
        ErrorCase{"FitResourceWeightNegative",
                  "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
                  "      scoringStrategy:\n        resources: [{name: memory, weight: -1}]\n",
                  "profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].weight: Invalid "
                  "value: -1: resource weight of memory not in valid range (0, 100]"},
        ErrorCase{"ArgsKindMismatch",
                  "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
                  "      kind: NodeAffinityArgs\n",
                  "profiles[0].pluginConfig[0].args.kind: Invalid value: \"NodeAffinityArgs\": has "
                  "to match plugin args"},
        ErrorCase{"ArgsApiVersionMismatch",
                  "profiles:\n- pluginConfig:\n  - name: NodeAffinity\n    args:\n"
                  "      apiVersion: kubescheduler.config.k8s.io/v1beta3\n",
                  "profiles[0].pluginConfig[0].args.apiVersion: Unsupported value: "
                  "\"kubescheduler.config.k8s.io/v1beta3\": supported values: "
                  "\"kubescheduler.config.k8s.io/v1\""},
        ErrorCase{"UnknownArgsField",
                  "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
                  "      scoringStrategy: {typ: MostAllocated}\n",
                  "strict decoding error: unknown field "
                  "\"profiles[0].pluginConfig[0].args.scoringStrategy.typ\""},
        ErrorCase{"ArgsForAPluginWithoutArgs",
                  "profiles:\n- pluginConfig:\n  - name: TaintToleration\n    args: {foo: 1}\n",
                  "strict decoding error: unknown field \"profiles[0].pluginConfig[0].args.foo\""},
        ErrorCase{"PreemptionPercentageAbove100",
                  "profiles:\n- pluginConfig:\n  - name: DefaultPreemption\n    args:\n"
                  "      minCandidateNodesPercentage: 101\n",
                  "profiles[0].pluginConfig[0].args.minCandidateNodesPercentage: Invalid value: "
                  "101: not in valid range [0, 100]"},
        ErrorCase{"PreemptionAbsoluteNegative",
                  "profiles:\n- pluginConfig:\n  - name: DefaultPreemption\n    args:\n"
                  "      minCandidateNodesAbsolute: -1\n",
                  "profiles[0].pluginConfig[0].args.minCandidateNodesAbsolute: Invalid value: -1: "
                  "not in valid range [0, inf)"},
        // Upstream reports two errors here: `...minCandidateNodesPercentage: Invalid value: 0:
        // cannot be zero at the same time as minCandidateNodesAbsolute` and the converse.
        ErrorCase{"PreemptionBothZero",
                  "profiles:\n- pluginConfig:\n  - name: DefaultPreemption\n    args:\n"
                  "      minCandidateNodesPercentage: 0\n      minCandidateNodesAbsolute: 0\n",
                  "profiles[0].pluginConfig[0].args: Invalid value: \"0\": both "
                  "minCandidateNodesPercentage and minCandidateNodesAbsolute cannot be zero"},
        // Every problem is reported, in a list, as upstream's aggregated errors. (Upstream's
        // order differs: each profile's errors, then the global percentage, then the backoffs.)
        ErrorCase{"SeveralErrorsAtOnce",
                  "percentageOfNodesToScore: 200\npodInitialBackoffSeconds: -1\nprofiles:\n"
                  "- schedulerName: a\n  percentageOfNodesToScore: 101\n- schedulerName: a\n",
                  "[percentageOfNodesToScore: Invalid value: 200: not in valid range [0-100], "
                  "profiles[0].percentageOfNodesToScore: Invalid value: 101: not in valid range "
                  "[0-100], profiles[1].schedulerName: Duplicate value: \"a\", "
                  "podInitialBackoffSeconds: Invalid value: -1: must be greater than 0]"}),
    [](const ::testing::TestParamInfo<ErrorCase>& info) { return info.param.name; });

// Plugin names are checked when the profiles' frameworks are built (as upstream, where
// NewFramework reports them): `kubetaint serve` and `check` call ValidateProfiles after loading.
struct ProfileErrorCase {
  std::string name;
  std::string profile_yaml;
  std::string want;
};

void PrintTo(const ProfileErrorCase& c, std::ostream* os) { *os << c.name; }

class ProfileValidationTest : public ::testing::TestWithParam<ProfileErrorCase> {};

TEST_P(ProfileValidationTest, UnknownOrMisplacedPlugins) {
  const ProfileErrorCase& tc = GetParam();
  Result<SchedulerConfig> c =
      ParseSchedulerConfig(std::string(kHeader) + "profiles:\n" + tc.profile_yaml, "sched.yaml");
  ASSERT_TRUE(c) << c.error().message();
  kt::Status s = ValidateProfiles(c->profiles, FeatureGates());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), tc.want);
  // `kubetaint check` builds the same frameworks and fails the same way.
  Evaluator ev(c->profiles, FeatureGates());
  kt::Status e = ev.Init();
  ASSERT_FALSE(e.ok());
  EXPECT_TRUE(e.message().ends_with(tc.want.substr(tc.want.find(": creating ") + 2)))
      << e.message();
}

INSTANTIATE_TEST_SUITE_P(
    Plugins, ProfileValidationTest,
    ::testing::Values(
        ProfileErrorCase{"UnknownScorePlugin",
                         "- plugins:\n    score:\n      enabled: [{name: Foo}]\n",
                         "initializing profiles: creating profile for scheduler name "
                         "default-scheduler: ScorePlugin \"Foo\" does not exist"},
        ProfileErrorCase{
            "UnknownFilterPlugin",
            "- schedulerName: s\n  plugins:\n    filter:\n      enabled: [{name: Foo}]\n",
            "initializing profiles: creating profile for scheduler name s: "
            "FilterPlugin \"Foo\" does not exist"},
        // multiPoint is expanded point by point from PreFilter, as upstream.
        ProfileErrorCase{"UnknownMultiPointPlugin",
                         "- plugins:\n    multiPoint:\n      enabled: [{name: Foo}]\n",
                         "initializing profiles: creating profile for scheduler name "
                         "default-scheduler: PreFilterPlugin \"Foo\" does not exist"},
        ProfileErrorCase{"PluginAtAPointItDoesNotExtend",
                         "- plugins:\n    filter:\n      enabled: [{name: PrioritySort}]\n",
                         "initializing profiles: creating profile for scheduler name "
                         "default-scheduler: plugin \"PrioritySort\" does not extend FilterPlugin "
                         "plugin"},
        ProfileErrorCase{
            "SamePluginTwiceAtAPoint",
            "- plugins:\n    filter:\n      enabled: [{name: NodeName}, {name: NodeName}]\n",
            "initializing profiles: creating profile for scheduler name "
            "default-scheduler: plugin \"NodeName\" already registered as "
            "\"FilterPlugin\""},
        ProfileErrorCase{"UpstreamPluginKubetaintLacks",
                         "- plugins:\n    multiPoint:\n      enabled: [{name: InterPodAffinity}]\n",
                         "initializing profiles: creating profile for scheduler name "
                         "default-scheduler: plugin \"InterPodAffinity\" is not supported by "
                         "kubetaint"},
        ProfileErrorCase{"NoQueueSort",
                         "- plugins:\n    multiPoint:\n      disabled: [{name: PrioritySort}]\n",
                         "initializing profiles: creating profile for scheduler name "
                         "default-scheduler: only one queue sort plugin required for profile with "
                         "scheduler name \"default-scheduler\", but got 0"},
        ProfileErrorCase{"NoBinder",
                         "- plugins:\n    multiPoint:\n      disabled: [{name: DefaultBinder}]\n",
                         "initializing profiles: creating profile for scheduler name "
                         "default-scheduler: at least one bind plugin is needed for profile with "
                         "scheduler name \"default-scheduler\""}),
    [](const ::testing::TestParamInfo<ProfileErrorCase>& info) { return info.param.name; });

TEST(SchedulerConfigTest, DisablingAPluginKubetaintLacksIsFine) {
  Result<SchedulerConfig> c = ParseSchedulerConfig(std::string(kHeader) + R"(
profiles:
- plugins:
    multiPoint:
      disabled: [{name: InterPodAffinity}, {name: PodTopologySpread}, {name: ImageLocality}]
)",
                                                   "sched.yaml");
  ASSERT_TRUE(c) << c.error().message();
  EXPECT_TRUE(ValidateProfiles(c->profiles, FeatureGates()).ok());
}

// Plugin arguments upstream's validation rejects at start-up
// (pkg/scheduler/apis/config/validation/validation_pluginargs.go and NewFit). Accepting the
// first one would leave every pod of the profile unschedulable ("node(s) didn't match
// scheduler-enforced node affinity"), since an invalid requirement matches nothing. Each row
// asserts the load fails and names the offending field.
struct UpstreamRejectsCase {
  std::string name;
  std::string yaml;
  std::string field;     // must appear in the error
  std::string upstream;  // upstream's message, for reference
};

void PrintTo(const UpstreamRejectsCase& c, std::ostream* os) { *os << c.name; }

class UpstreamRejectsArgsTest : public ::testing::TestWithParam<UpstreamRejectsCase> {};

TEST_P(UpstreamRejectsArgsTest, LoadFailsNamingTheField) {
  const UpstreamRejectsCase& tc = GetParam();
  Result<SchedulerConfig> c = ParseSchedulerConfig(std::string(kHeader) + tc.yaml, "sched.yaml");
  ASSERT_FALSE(c) << "accepted; upstream says: " << tc.upstream;
  EXPECT_NE(c.error().message().find(tc.field), std::string::npos) << c.error().message();
}

INSTANTIATE_TEST_SUITE_P(
    RejectedArgs, UpstreamRejectsArgsTest,
    ::testing::Values(
        UpstreamRejectsCase{
            "AddedAffinityWithAnInvalidOperator",
            "profiles:\n- pluginConfig:\n  - name: NodeAffinity\n    args:\n      addedAffinity:\n"
            "        requiredDuringSchedulingIgnoredDuringExecution:\n          "
            "nodeSelectorTerms:\n"
            "          - matchExpressions: [{key: pool, operator: Foo, values: [a]}]\n",
            "profiles[0].pluginConfig[0].args.addedAffinity.requiredDuringSchedulingIgnoredDuring"
            "Execution.nodeSelectorTerms[0].matchExpressions[0].operator",
            "profiles[0].pluginConfig[0].args.addedAffinity.requiredDuringSchedulingIgnoredDuring"
            "Execution.nodeSelectorTerms[0].matchExpressions[0].operator: Invalid value: \"Foo\": "
            "not a valid selector operator"},
        UpstreamRejectsCase{
            "AddedAffinityWithAnInvalidLabelKey",
            "profiles:\n- pluginConfig:\n  - name: NodeAffinity\n    args:\n      addedAffinity:\n"
            "        requiredDuringSchedulingIgnoredDuringExecution:\n          "
            "nodeSelectorTerms:\n"
            "          - matchExpressions: [{key: \"bad key!\", operator: In, values: [a]}]\n",
            "profiles[0].pluginConfig[0].args.addedAffinity.requiredDuringSchedulingIgnoredDuring"
            "Execution.nodeSelectorTerms[0].matchExpressions[0].key",
            "...matchExpressions[0].key: Invalid value: \"bad key!\": name part must consist of "
            "alphanumeric characters, ..."},
        UpstreamRejectsCase{
            "BalancedAllocationWeightOtherThanOne",
            "profiles:\n- pluginConfig:\n  - name: NodeResourcesBalancedAllocation\n    args:\n"
            "      resources: [{name: cpu, weight: 2}, {name: memory, weight: 1}]\n",
            "profiles[0].pluginConfig[0].args.resources[0].weight",
            "profiles[0].pluginConfig[0].args.resources[0].weight: Invalid value: 2: must be 1"},
        UpstreamRejectsCase{
            "BalancedAllocationDuplicateResource",
            "profiles:\n- pluginConfig:\n  - name: NodeResourcesBalancedAllocation\n    args:\n"
            "      resources: [{name: cpu, weight: 1}, {name: cpu, weight: 1}]\n",
            "profiles[0].pluginConfig[0].args.resources[1].name",
            "profiles[0].pluginConfig[0].args.resources[1].name: Duplicate value: \"cpu\""},
        UpstreamRejectsCase{
            "IgnoredResourceGroupWithASlash",
            "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
            "      ignoredResourceGroups: [example.com/foo]\n",
            "ignoredResourceGroups[0]",
            "ignoredResourceGroups[0]: Invalid value: \"example.com/foo\": resource group name "
            "can't contain '/' (reported by NewFit, without the profiles[0]... prefix)"}),
    [](const ::testing::TestParamInfo<UpstreamRejectsCase>& info) { return info.param.name; });

}  // namespace
}  // namespace kt::scheduler
