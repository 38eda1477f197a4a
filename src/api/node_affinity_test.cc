#include "api/node_affinity.h"

#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace kt::api {
namespace {

using Labels = std::vector<std::pair<std::string, std::string>>;

SelectorRequirement Req(std::string key, std::string op, std::vector<std::string> values = {}) {
  SelectorRequirement r;
  r.key = std::move(key);
  r.op = std::move(op);
  r.values = std::move(values);
  return r;
}

NodeSelectorTerm Term(std::vector<SelectorRequirement> expressions,
                      std::vector<SelectorRequirement> fields = {}) {
  NodeSelectorTerm t;
  t.match_expressions = std::move(expressions);
  t.match_fields = std::move(fields);
  return t;
}

NodeSelectorTerm Fields(std::vector<SelectorRequirement> fields) {
  return Term({}, std::move(fields));
}

StringMap Map(const Labels& labels) {
  StringMap m;
  for (const auto& [k, v] : labels) m.Set(k, v);
  return m;
}

Node MakeNode(std::string name, const Labels& labels) {
  Node n;
  n.meta.name = std::move(name);
  n.meta.labels = Map(labels);
  return n;
}

// A pod with a nodeSelector and, when `terms` is set, required node affinity with those terms.
Pod MakePod(const Labels& node_selector, std::optional<std::vector<NodeSelectorTerm>> terms) {
  Pod p;
  p.spec.node_selector = Map(node_selector);
  if (terms) {
    p.spec.node_affinity.emplace();
    p.spec.node_affinity->required.emplace();
    p.spec.node_affinity->required->terms = std::move(*terms);
  }
  return p;
}

struct MatchCase {
  const char* name;
  Pod pod;
  Labels labels;
  std::string node_name;
  bool want;
};

// component-helpers nodeaffinity_test.go TestPodMatchesNodeSelectorAndAffinityTerms and k/k
// plugins/nodeaffinity/node_affinity_test.go TestNodeAffinity (Filter), then our own rows for
// each operator's edge cases.
std::vector<MatchCase> MatchCases() {
  using T = std::vector<NodeSelectorTerm>;
  std::vector<MatchCase> cases = {
      {"no selector", Pod{}, {}, "", true},
      {"missing labels", MakePod({{"foo", "bar"}}, std::nullopt), {}, "", false},
      {"same labels", MakePod({{"foo", "bar"}}, std::nullopt), {{"foo", "bar"}}, "", true},
      {"node labels are superset",
       MakePod({{"foo", "bar"}}, std::nullopt),
       {{"foo", "bar"}, {"baz", "blah"}},
       "",
       true},
      {"node labels are subset",
       MakePod({{"foo", "bar"}, {"baz", "blah"}}, std::nullopt),
       {{"foo", "bar"}},
       "",
       false},
      {"In matches",
       MakePod({}, T{Term({Req("foo", "In", {"bar", "value2"})})}),
       {{"foo", "bar"}},
       "",
       true},
      {"Gt matches (0206 > 0204)",
       MakePod({}, T{Term({Req("kernel-version", "Gt", {"0204"})})}),
       {{"kernel-version", "0206"}},
       "",
       true},
      {"NotIn matches",
       MakePod({}, T{Term({Req("mem-type", "NotIn", {"DDR", "DDR2"})})}),
       {{"mem-type", "DDR3"}},
       "",
       true},
      {"Exists matches",
       MakePod({}, T{Term({Req("GPU", "Exists")})}),
       {{"GPU", "NVIDIA-GRID-K1"}},
       "",
       true},
      {"affinity not matching labels",
       MakePod({}, T{Term({Req("foo", "In", {"value1", "value2"})})}),
       {{"foo", "bar"}},
       "",
       false},
      {"nil []NodeSelectorTerm matches nothing", MakePod({}, T{}), {{"foo", "bar"}}, "", false},
      {"empty MatchExpressions matches nothing",
       MakePod({}, T{Term({})}),
       {{"foo", "bar"}},
       "",
       false},
      {"no affinity", Pod{}, {{"foo", "bar"}}, "", true},
      {"multiple expressions ANDed, matching",
       MakePod({}, T{Term({Req("GPU", "Exists"), Req("GPU", "NotIn", {"AMD", "INTER"})})}),
       {{"GPU", "NVIDIA-GRID-K1"}},
       "",
       true},
      {"multiple expressions ANDed, not matching",
       MakePod({}, T{Term({Req("GPU", "Exists"), Req("GPU", "In", {"AMD", "INTER"})})}),
       {{"GPU", "NVIDIA-GRID-K1"}},
       "",
       false},
      {"terms ORed",
       MakePod({}, T{Term({Req("foo", "In", {"bar", "value2"})}),
                     Term({Req("diffkey", "In", {"wrong", "value2"})})}),
       {{"foo", "bar"}},
       "",
       true},
      {"affinity and nodeSelector both satisfied",
       MakePod({{"foo", "bar"}}, T{Term({Req("foo", "Exists")})}),
       {{"foo", "bar"}},
       "",
       true},
      {"affinity satisfied, nodeSelector not",
       MakePod({{"foo", "bar"}}, T{Term({Req("foo", "Exists")})}),
       {{"foo", "barrrrrr"}},
       "",
       false},
      {"invalid value in a term",
       MakePod({}, T{Term({Req("foo", "NotIn", {"invalid value: ___@#$%^"})})}),
       {{"foo", "bar"}},
       "",
       false},
      {"matchFields In matches",
       MakePod({}, T{Fields({Req("metadata.name", "In", {"node_1"})})}),
       {},
       "node_1",
       true},
      {"matchFields In does not match",
       MakePod({}, T{Fields({Req("metadata.name", "In", {"node_1"})})}),
       {},
       "node_2",
       false},
      {"two terms: fields miss, expressions match",
       MakePod({}, T{Fields({Req("metadata.name", "In", {"node_1"})}),
                     Term({Req("foo", "In", {"bar"})})}),
       {{"foo", "bar"}},
       "node_2",
       true},
      {"one term: fields miss, expressions match",
       MakePod({}, T{Term({Req("foo", "In", {"bar"})}, {Req("metadata.name", "In", {"node_1"})})}),
       {{"foo", "bar"}},
       "node_2",
       false},
      {"one term: both match",
       MakePod({}, T{Term({Req("foo", "In", {"bar"})}, {Req("metadata.name", "In", {"node_1"})})}),
       {{"foo", "bar"}},
       "node_1",
       true},
      {"two terms: neither matches",
       MakePod({}, T{Fields({Req("metadata.name", "In", {"node_1"})}),
                     Term({Req("foo", "In", {"not-match-to-bar"})})}),
       {{"foo", "bar"}},
       "node_2",
       false},
      {"k/k: two matchFields in one term are ANDed",
       MakePod({}, T{Fields({Req("metadata.name", "In", {"node1"}),
                             Req("metadata.name", "In", {"node2"})}),
                     Term({Req("foo", "In", {"bar"})})}),
       {{"foo", "bar"}},
       "node2",
       true},
      // Our rows: operators at their edges.
      {"In: label absent", MakePod({}, T{Term({Req("foo", "In", {"bar"})})}), {}, "", false},
      {"NotIn: label absent matches",
       MakePod({}, T{Term({Req("foo", "NotIn", {"bar"})})}),
       {},
       "",
       true},
      {"NotIn: value listed",
       MakePod({}, T{Term({Req("foo", "NotIn", {"bar"})})}),
       {{"foo", "bar"}},
       "",
       false},
      {"DoesNotExist: absent",
       MakePod({}, T{Term({Req("foo", "DoesNotExist")})}),
       {{"x", "y"}},
       "",
       true},
      {"DoesNotExist: present",
       MakePod({}, T{Term({Req("foo", "DoesNotExist")})}),
       {{"foo", ""}},
       "",
       false},
      {"Exists: empty value counts",
       MakePod({}, T{Term({Req("foo", "Exists")})}),
       {{"foo", ""}},
       "",
       true},
      {"Gt: equal is not greater",
       MakePod({}, T{Term({Req("cpu", "Gt", {"4"})})}),
       {{"cpu", "4"}},
       "",
       false},
      {"Lt: smaller", MakePod({}, T{Term({Req("cpu", "Lt", {"4"})})}), {{"cpu", "3"}}, "", true},
      {"Lt: negative label",
       MakePod({}, T{Term({Req("cpu", "Lt", {"4"})})}),
       {{"cpu", "-10"}},
       "",
       true},
      {"Gt: non-integer label never matches",
       MakePod({}, T{Term({Req("cpu", "Gt", {"4"})})}),
       {{"cpu", "8cores"}},
       "",
       false},
      {"Gt: label absent", MakePod({}, T{Term({Req("cpu", "Gt", {"4"})})}), {}, "", false},
      {"Gt: label beyond int64",
       MakePod({}, T{Term({Req("cpu", "Gt", {"4"})})}),
       {{"cpu", "9223372036854775808"}},
       "",
       false},
      {"Gt: non-integer value makes the term fail",
       MakePod({}, T{Term({Req("cpu", "Gt", {"a"})})}),
       {{"cpu", "8"}},
       "",
       false},
      {"Gt: two values make the term fail",
       MakePod({}, T{Term({Req("cpu", "Gt", {"1", "2"})})}),
       {{"cpu", "8"}},
       "",
       false},
      {"In without values fails",
       MakePod({}, T{Term({Req("foo", "In")})}),
       {{"foo", ""}},
       "",
       false},
      {"Exists with values fails",
       MakePod({}, T{Term({Req("foo", "Exists", {"bar"})})}),
       {{"foo", "bar"}},
       "",
       false},
      {"unknown operator fails its term only",
       MakePod({}, T{Term({Req("foo", "Equals", {"bar"})}), Term({Req("foo", "In", {"bar"})})}),
       {{"foo", "bar"}},
       "",
       true},
      {"invalid key fails",
       MakePod({}, T{Term({Req("invalid key", "Exists")})}),
       {{"invalid key", "x"}},
       "",
       false},
      {"prefixed key",
       MakePod({}, T{Term({Req("topology.kubernetes.io/zone", "In", {"a"})})}),
       {{"topology.kubernetes.io/zone", "a"}},
       "",
       true},
      {"matchFields NotIn",
       MakePod({}, T{Fields({Req("metadata.name", "NotIn", {"node_1"})})}),
       {},
       "node_2",
       true},
      {"matchFields NotIn excludes",
       MakePod({}, T{Fields({Req("metadata.name", "NotIn", {"node_1"})})}),
       {},
       "node_1",
       false},
      {"matchFields are not checked on a node without a name",
       MakePod({}, T{Fields({Req("metadata.name", "In", {"node_1"})})}),
       {},
       "",
       true},
      {"matchFields on another field compare against the empty string",
       MakePod({}, T{Fields({Req("metadata.uid", "In", {"x"})})}),
       {},
       "node_1",
       false},
      {"matchFields with two values fails",
       MakePod({}, T{Fields({Req("metadata.name", "In", {"node_1", "node_2"})})}),
       {},
       "node_1",
       false},
      {"matchFields Exists is unsupported",
       MakePod({}, T{Fields({Req("metadata.name", "Exists")})}),
       {},
       "node_1",
       false},
      {"nodeSelector with empty value needs the label",
       MakePod({{"foo", ""}}, std::nullopt),
       {},
       "",
       false},
  };
  // A pod whose affinity exists but has no required selector is unconstrained.
  Pod preferred_only;
  preferred_only.spec.node_affinity.emplace();
  cases.push_back(
      {"affinity without required selector", preferred_only, {{"foo", "bar"}}, "", true});
  return cases;
}

TEST(NodeAffinityTest, PodMatchesNodeSelectorAndAffinityTerms) {
  for (const MatchCase& c : MatchCases()) {
    const Node node = MakeNode(c.node_name, c.labels);
    EXPECT_EQ(PodMatchesNodeSelectorAndAffinityTerms(c.pod, node), c.want) << c.name;
    // The parsed form gives the same answer when reused across nodes.
    RequiredNodeAffinity required(c.pod);
    EXPECT_EQ(required.Match(node), c.want) << c.name;
    EXPECT_EQ(required.Match(node), c.want) << c.name;
  }
}

// component-helpers TestNodeSelectorMatch
TEST(NodeAffinityTest, NodeSelectorErrors) {
  NodeSelector s;
  s.terms = {
      Fields({Req("metadata.name", "In", {"host_1", "host_2"})}),
      Term({Req("label_1", "In", {"label_1_val"})}, {Req("metadata.name", "In", {"host_1"})}),
      Term({Req("invalid key", "In", {"label_value"})})};
  NodeSelectorMatcher m(s);
  const std::vector<std::string> errors = m.Errors();
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0],
            "nodeSelectorTerms[0].matchFields[0].values: Invalid value: "
            "[]string{\"host_1\", \"host_2\"}: must have one element");
  EXPECT_EQ(errors[1].rfind("nodeSelectorTerms[2].matchExpressions[0].key: Invalid value: "
                            "\"invalid key\": name part must consist of alphanumeric characters",
                            0),
            0u)
      << errors[1];
  // The valid term still matches.
  EXPECT_TRUE(m.Match(MakeNode("host_1", {{"label_1", "label_1_val"}})));
  EXPECT_FALSE(m.Match(MakeNode("host_1", {})));

  NodeSelector ok;
  ok.terms = {Term({Req("label_1", "In", {"label_1_val"})}),
              Fields({Req("metadata.name", "In", {"host_1"})})};
  NodeSelectorMatcher second(ok);
  EXPECT_TRUE(second.Errors().empty());
  EXPECT_TRUE(second.Match(MakeNode("host_1", {})));  // second term matches
  EXPECT_FALSE(second.Match(MakeNode("host_2", {})));

  NodeSelector bad_op;
  bad_op.terms = {Term({Req("a", "Equals", {"b"})}), Fields({Req("metadata.name", "Gt", {"1"})})};
  const auto op_errors = NodeSelectorMatcher(bad_op).Errors();
  ASSERT_EQ(op_errors.size(), 2u);
  EXPECT_EQ(op_errors[0],
            "nodeSelectorTerms[0].matchExpressions[0].operator: Unsupported value: \"Equals\": "
            "supported values: \"In\", \"NotIn\", \"Exists\", \"DoesNotExist\", \"Gt\", \"Lt\"");
  EXPECT_EQ(op_errors[1],
            "nodeSelectorTerms[1].matchFields[0].operator: Unsupported value: \"Gt\": "
            "supported values: \"In\", \"NotIn\"");
}

// component-helpers TestPreferredSchedulingTermsScore
TEST(NodeAffinityTest, PreferredSchedulingTermsScore) {
  const Node host1 = MakeNode("host_1", {{"label_1", "label_1_val"}});
  {
    std::vector<PreferredSchedulingTerm> terms = {
        {1, Fields({Req("metadata.name", "In", {"host_1", "host_2"})})},
        {1,
         Term({Req("label_1", "In", {"label_1_val"})}, {Req("metadata.name", "In", {"host_1"})})},
        {1, Term({Req("invalid key", "In", {"label_value"})})},
    };
    Result<PreferredSchedulingTerms> t = PreferredSchedulingTerms::Create(terms);
    ASSERT_FALSE(t.has_value());
    EXPECT_EQ(t.error().code(), StatusCode::kBadRequest);
    EXPECT_EQ(
        t.error().message().rfind("[[0].matchFields[0].values: Invalid value: "
                                  "[]string{\"host_1\", \"host_2\"}: must have one element, "
                                  "[2].matchExpressions[0].key: Invalid value: \"invalid key\"",
                                  0),
        0u)
        << t.error().message();
  }
  {
    // An invalid term with weight 0 is not even parsed.
    std::vector<PreferredSchedulingTerm> terms = {
        {0, Fields({Req("metadata.name", "In", {"host_1", "host_2"})})}};
    Result<PreferredSchedulingTerms> t = PreferredSchedulingTerms::Create(terms);
    ASSERT_TRUE(t.has_value());
    EXPECT_EQ(t->Score(host1), 0);
  }
  {
    std::vector<PreferredSchedulingTerm> terms = {
        {5, Fields({Req("metadata.name", "In", {"host_1"})})},
        {7, Term({Req("unknown_label", "In", {"unknown_label_val"})})},
        {11, Term({Req("label_1", "In", {"label_1_val"})})},
    };
    Result<PreferredSchedulingTerms> t = PreferredSchedulingTerms::Create(terms);
    ASSERT_TRUE(t.has_value());
    EXPECT_EQ(t->Score(host1), 16);
    EXPECT_EQ(t->Score(MakeNode("host_2", {})), 0);
    EXPECT_EQ(t->Score(MakeNode("host_2", {{"unknown_label", "unknown_label_val"}})), 7);
  }
}

// k/k plugins/nodeaffinity TestNodeAffinityPriority: raw scores before normalization.
TEST(NodeAffinityTest, PreferredNodeAffinityScoreForPods) {
  Pod pod;
  pod.spec.node_affinity.emplace();
  pod.spec.node_affinity->preferred = {
      {2, Term({Req("foo", "In", {"bar"})})},
      {4, Term({Req("key", "In", {"value"})})},
      {5, Term({Req("foo", "In", {"bar"}), Req("key", "In", {"value"}), Req("az", "In", {"az1"})})},
  };
  EXPECT_EQ(PreferredNodeAffinityScore(pod, MakeNode("m1", {{"foo", "bar"}})).value(), 2);
  EXPECT_EQ(PreferredNodeAffinityScore(pod, MakeNode("m2", {{"key", "value"}})).value(), 4);
  EXPECT_EQ(PreferredNodeAffinityScore(
                pod, MakeNode("m5", {{"foo", "bar"}, {"key", "value"}, {"az", "az1"}}))
                .value(),
            11);
  EXPECT_EQ(PreferredNodeAffinityScore(pod, MakeNode("m3", {{"az", "az1"}})).value(), 0);
  EXPECT_EQ(PreferredNodeAffinityScore(Pod{}, MakeNode("m1", {{"foo", "bar"}})).value(), 0);

  pod.spec.node_affinity->preferred.push_back({1, Term({Req("x", "Gt", {"y"})})});
  Result<int64_t> bad = PreferredNodeAffinityScore(pod, MakeNode("m1", {}));
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message(),
            "[3].matchExpressions[0].values: Invalid value: []string{\"y\"}: for 'Gt', 'Lt' "
            "operators, the value must be an integer");
}

}  // namespace
}  // namespace kt::api
