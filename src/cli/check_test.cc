#include "cli/check.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

namespace kt::cli {
namespace {

api::Node MakeNode(std::string name, std::vector<Taint> taints) {
  api::Node n;
  n.meta.name = std::move(name);
  n.spec.taints = std::move(taints);
  return n;
}

api::Pod MakePod(std::string name, std::vector<Toleration> tolerations) {
  api::Pod p;
  p.meta.name = std::move(name);
  p.spec.tolerations = std::move(tolerations);
  return p;
}

const FeatureGates kGatesOff;

// Manifests in a temporary file, for RunCheck.
class Manifest {
 public:
  explicit Manifest(const std::string& yaml) {
    path_ =
        (std::filesystem::temp_directory_path() /
         ("kubetaint-check-" + std::to_string(::getpid()) + "-" + std::to_string(n_++) + ".yaml"))
            .string();
    std::ofstream(path_) << yaml;
  }
  ~Manifest() { std::filesystem::remove(path_); }
  const std::string& path() const { return path_; }

 private:
  static inline int n_ = 0;
  std::string path_;
};

constexpr char kNodeStatus[] = R"(
status:
  allocatable: {cpu: "1", memory: 1Gi, pods: "110"}
)";

std::string Node(const std::string& name, const std::string& spec = "{}",
                 const std::string& labels = "{}") {
  return "apiVersion: v1\nkind: Node\nmetadata: {name: " + name + ", labels: " + labels +
         "}\nspec: " + spec + kNodeStatus + "---\n";
}

std::string Pod(const std::string& name, const std::string& spec_extra = "",
                const std::string& requests = "{}") {
  return "apiVersion: v1\nkind: Pod\nmetadata: {name: " + name +
         "}\nspec:\n  containers: [{name: c, image: nginx, resources: {requests: " + requests +
         "}}]\n" + spec_extra + "---\n";
}

CheckReport Check(const std::string& yaml, std::vector<std::string> taints = {}) {
  Manifest m(yaml);
  CheckOptions o;
  o.files = {m.path()};
  o.taint_changes = std::move(taints);
  Result<CheckReport> r = RunCheck(o);
  EXPECT_TRUE(r) << r.error().message();
  return r ? std::move(*r) : CheckReport{};
}

const NodeVerdict& On(const PodReport& r, const std::string& node) {
  for (const NodeVerdict& v : r.nodes) {
    if (v.node == node) return v;
  }
  std::abort();
}

// The seed example (Kubernetes docs, "Taints and Tolerations"): three taints on node1, a pod
// tolerating the two key1 taints. It cannot be scheduled there, but it stays if already running.
TEST(CheckTest, SeedTwoTolerations) {
  CheckReport r = Check(Node("node1", R"({taints: [{key: key1, value: value1, effect: NoSchedule},
                                 {key: key1, value: value1, effect: NoExecute},
                                 {key: key2, value: value2, effect: NoSchedule}]})") +
                        Pod("p", R"(  tolerations:
  - {key: key1, operator: Equal, value: value1, effect: NoSchedule}
  - {key: key1, operator: Equal, value: value1, effect: NoExecute}
)"));
  ASSERT_EQ(r.pods.size(), 1u);
  const PodReport& p = r.pods[0];
  const NodeVerdict& v = On(p, "node1");
  EXPECT_FALSE(v.feasible);
  ASSERT_TRUE(v.untolerated_taint.has_value());
  EXPECT_EQ(TaintToString(*v.untolerated_taint), "key2=value2:NoSchedule");
  EXPECT_EQ(v.reasons,
            std::vector<std::string>{"TaintToleration: untolerated taint key2=value2:NoSchedule"});
  EXPECT_EQ(v.if_running.eviction, Eviction::kStays);
  EXPECT_EQ(p.selected_node, "");
  EXPECT_EQ(p.message,
            "0/1 nodes are available: 1 node(s) had untolerated taint(s). preemption: 0/1 nodes "
            "are available: 1 Preemption is not helpful for scheduling.");
  EXPECT_EQ(CheckExitCode(r), 1);
}

// Eviction time: the first toleration in pod order that matches decides (GM3/GM4 of the spec).
TEST(CheckTest, EvictionUsesFirstMatchingToleration) {
  api::Node node = MakeNode("n1", {{"node.kubernetes.io/not-ready", "", "NoExecute", {}}});
  Toleration a{"node.kubernetes.io/not-ready", "Exists", "", "NoExecute", 300};
  Toleration b{"", "Exists", "", "", {}};
  EvictionVerdict ab = EvictionFor(MakePod("p", {a, b}), node, kGatesOff);
  EXPECT_EQ(ab.eviction, Eviction::kAfter);
  EXPECT_EQ(ab.after_seconds, 300);
  EXPECT_EQ(EvictionFor(MakePod("p", {b, a}), node, kGatesOff).eviction, Eviction::kStays);
  EXPECT_EQ(EvictionFor(MakePod("p", {}), node, kGatesOff).eviction, Eviction::kNow);
  Toleration zero{"node.kubernetes.io/not-ready", "Exists", "", "NoExecute", 0};
  EXPECT_EQ(EvictionFor(MakePod("p", {zero}), node, kGatesOff).eviction, Eviction::kNow);
}

TEST(CheckTest, EvictionIgnoresNoScheduleTaints) {
  api::Node node = MakeNode("n1", {{"x", "", "NoSchedule", {}}});
  EXPECT_EQ(EvictionFor(MakePod("p", {}), node, kGatesOff).eviction, Eviction::kStays);
}

TEST(CheckTest, SmallestTolerationSecondsAcrossTaints) {
  api::Node node = MakeNode("n1", {{"a", "", "NoExecute", {}}, {"b", "", "NoExecute", {}}});
  api::Pod pod =
      MakePod("p", {{"a", "Exists", "", "NoExecute", 600}, {"b", "Exists", "", "NoExecute", 60}});
  EvictionVerdict v = EvictionFor(pod, node, kGatesOff);
  EXPECT_EQ(v.eviction, Eviction::kAfter);
  EXPECT_EQ(v.after_seconds, 60);
}

// PreferNoSchedule steers the pick: the untainted node scores 3×100 on TaintToleration.
TEST(CheckTest, PreferNoScheduleLowersTheScoreAndThePickFollows) {
  CheckReport r = Check(Node("spot", "{taints: [{key: spot, effect: PreferNoSchedule}]}") +
                        Node("plain") + Pod("p"));
  const PodReport& p = r.pods[0];
  EXPECT_EQ(p.selected_node, "plain");
  EXPECT_EQ(On(p, "spot").prefer_no_schedule_untolerated, 1);
  ASSERT_TRUE(On(p, "spot").score && On(p, "plain").score);
  EXPECT_EQ(*On(p, "plain").score - *On(p, "spot").score, 300);
  bool found = false;
  for (const PluginScore& s : On(p, "spot").scores) {
    if (s.plugin == "TaintToleration") {
      found = true;
      EXPECT_EQ(s.raw, 1);
      EXPECT_EQ(s.normalized, 0);
      EXPECT_EQ(s.weight, 3);
    }
  }
  EXPECT_TRUE(found);
}

TEST(CheckTest, EveryFilterPluginHasAVerdict) {
  CheckReport r = Check(Node("n1", "{unschedulable: true}") +
                        Pod("p", "  nodeSelector: {disk: ssd}\n", "{cpu: \"2\"}"));
  const NodeVerdict& v = On(r.pods[0], "n1");
  EXPECT_FALSE(v.feasible);
  std::vector<std::string> rejected;
  for (const PluginVerdict& f : v.filters) {
    if (f.code != "Success" && f.code != "Skip") rejected.push_back(f.plugin + " " + f.code);
  }
  EXPECT_EQ(rejected, (std::vector<std::string>{"NodeUnschedulable UnschedulableAndUnresolvable",
                                                "NodeAffinity UnschedulableAndUnresolvable",
                                                "NodeResourcesFit UnschedulableAndUnresolvable"}));
  // The message is the scheduler's: the first rejecting plugin per node.
  EXPECT_EQ(r.pods[0].message,
            "0/1 nodes are available: 1 node(s) were unschedulable. preemption: 0/1 nodes are "
            "available: 1 Preemption is not helpful for scheduling.");
}

TEST(CheckTest, WhatIfTaintsInBothForms) {
  const std::string yaml =
      Node("node1", "{taints: [{key: key2, value: value2, effect: NoSchedule}]}") + Pod("p");
  EXPECT_FALSE(Check(yaml).pods[0].HasFeasibleNode());
  EXPECT_TRUE(Check(yaml, {"node1=key2:NoSchedule-"}).pods[0].HasFeasibleNode());
  EXPECT_TRUE(Check(yaml, {"node1", "key2-"}).pods[0].HasFeasibleNode());
  EXPECT_FALSE(
      Check(Node("node1") + Pod("p"), {"node1", "a=b:NoExecute"}).pods[0].HasFeasibleNode());
}

TEST(CheckTest, LimitsOnlyRequestsTheExtendedResource) {
  // Upstream defaults requests to limits: one GPU is requested, and a node without GPUs fails.
  CheckReport r = Check(
      "apiVersion: v1\nkind: Node\nmetadata: {name: gpu}\nstatus:\n  allocatable: {cpu: \"4\", "
      "memory: 8Gi, pods: \"110\", nvidia.com/gpu: \"1\"}\n---\n" +
      Node("cpu") +
      "apiVersion: v1\nkind: Pod\nmetadata: {name: cuda}\nspec:\n  containers: [{name: c, "
      "image: x, resources: {limits: {nvidia.com/gpu: 1}}}]\n");
  const PodReport& p = r.pods[0];
  EXPECT_EQ(p.selected_node, "gpu");
  EXPECT_EQ(On(p, "cpu").reasons,
            std::vector<std::string>{"NodeResourcesFit: Insufficient nvidia.com/gpu"});
}

TEST(CheckTest, PreemptionPreviewNamesTheNodeAndVictims) {
  CheckReport r = Check(
      "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: "
      "1000\n---\n" +
      Node("n1") + Pod("low", "  nodeName: n1\n", "{cpu: 800m}") +
      Pod("urgent", "  priorityClassName: high\n", "{cpu: 800m}"));
  const PodReport& urgent = r.pods[1];
  EXPECT_EQ(urgent.name, "urgent");
  EXPECT_FALSE(urgent.HasFeasibleNode());
  EXPECT_EQ(urgent.message, "0/1 nodes are available: 1 Insufficient cpu.");
  EXPECT_EQ(urgent.nominated_node, "n1");
  EXPECT_EQ(urgent.victims, std::vector<std::string>{"default/low"});
}

TEST(CheckTest, PodsOfAnotherSchedulerAreNotJudged) {
  CheckReport r = Check(Node("n1", "{taints: [{key: a, effect: NoSchedule}]}") +
                        Pod("theirs", "  schedulerName: my-scheduler\n"));
  EXPECT_FALSE(r.pods[0].handled);
  EXPECT_EQ(CheckExitCode(r), 0);
}

TEST(CheckTest, ExitCodeConsidersOnlyUnboundPods) {
  const std::string node = Node("n1", "{taints: [{key: x, effect: NoSchedule}]}");
  EXPECT_EQ(CheckExitCode(Check(node + Pod("p", "  nodeName: n1\n"))), 0);
  EXPECT_EQ(CheckExitCode(Check(node + Pod("p"))), 1);
  EXPECT_EQ(CheckExitCode(Check(Pod("p"))), 1);
  EXPECT_EQ(CheckExitCode(Check(node)), 0);
}

TEST(CheckTest, JsonShowsEvictionOnlyOnTheBoundNode) {
  CheckReport r =
      Check(Node("a", "{taints: [{key: k, effect: NoExecute}]}") +
            Node("b", "{taints: [{key: k, effect: NoExecute}]}") + Pod("p", R"(  nodeName: a
  tolerations: [{key: k, operator: Exists, effect: NoExecute, tolerationSeconds: 30}]
)"));
  std::ostringstream out;
  WriteCheckJson(r, out);
  const std::string json = out.str();
  EXPECT_NE(json.find("\"eviction\": \"after\",\n          \"evictAfterSeconds\": 30"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("\"eviction\": null"), std::string::npos) << json;
  EXPECT_NE(json.find("\"namespace\": \"default\""), std::string::npos) << json;
  // Evaluated as if unbound: a and b tie, and either may be picked.
  EXPECT_TRUE(json.find("\"selectedNode\": \"a\"") != std::string::npos ||
              json.find("\"selectedNode\": \"b\"") != std::string::npos)
      << json;
}

}  // namespace
}  // namespace kt::cli
