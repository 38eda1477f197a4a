// Properties of the scheduler over randomized clusters (fixed seeds, so every run is the same):
// random nodes (taints of every effect, labels, cordons, allocatable cpu, memory, pods and an
// extended resource) and random pods (tolerations, nodeSelector, required and preferred node
// affinity with every operator, requests) go through the in-process cluster one pod at a time.
//
//   (a) DESIGN invariant 4: no pod is bound to a node whose NoSchedule/NoExecute taints (or
//       cordon) it does not tolerate, whose labels its nodeSelector or required affinity rejects,
//       or whose allocatable the bound pods' requests exceed. Checked by matchers written here
//       from upstream's rules (semantics.md §2.1, §5), independent of kubetaint's.
//   (b) `kubetaint check` answers what the scheduler does: before each pod is created, the
//       Evaluator (the engine behind `kubetaint check`), fed the cluster's current nodes and pods,
//       names the node the live scheduler then binds the pod to — or no node, and then the pod
//       stays Pending with the very FailedScheduling message the Evaluator gives.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "api/codec.h"
#include "api/defaults.h"
#include "scheduler/evaluate.h"
#include "scheduler/testing/cluster.h"
#include "scheduler/testing/fakes.h"

namespace kt::scheduler {
namespace {

using server::Resource;
using testing::Cluster;

constexpr std::string_view kGpu = "example.com/gpu";

// --- The random cluster, as plain values
// ----------------------------------------------------------

struct GenTaint {
  std::string key, value, effect;
};

struct GenToleration {
  std::string key, op, value, effect;
};

struct GenRequirement {
  std::string key, op;
  std::vector<std::string> values;
};
using GenTerm = std::vector<GenRequirement>;  // ANDed

struct GenNode {
  std::string name;
  std::map<std::string, std::string> labels;
  std::vector<GenTaint> taints;
  bool unschedulable = false;
  int64_t milli_cpu = 0, memory_mi = 0, pods = 0;
  std::optional<int64_t> gpus;
};

struct GenPod {
  std::string name;
  std::vector<GenToleration> tolerations;
  std::map<std::string, std::string> node_selector;
  std::vector<GenTerm> required;  // ORed; empty: no required affinity
  std::vector<std::pair<int, GenTerm>> preferred;
  int64_t milli_cpu = 0, memory_mi = 0, gpus = 0;
};

// Deterministic on every platform (std distributions are not).
class Rng {
 public:
  explicit Rng(uint64_t seed) : gen_(seed) {}
  size_t Below(size_t n) { return static_cast<size_t>(gen_() % n); }
  bool Chance(int percent) { return static_cast<int>(Below(100)) < percent; }
  template <class T>
  const T& Pick(const std::vector<T>& v) {
    return v[Below(v.size())];
  }

 private:
  std::mt19937_64 gen_;
};

const std::map<std::string, std::vector<std::string>>& LabelDomains() {
  static const auto* d = new std::map<std::string, std::vector<std::string>>{
      {"zone", {"a", "b", "c"}},
      {"disk", {"ssd", "hdd"}},
      {"tier", {"1", "2", "3", "4", "5"}},
      {"accel", {"x", "y"}},
  };
  return *d;
}

const std::vector<std::string> kTaintKeys = {"k1", "k2", "k3"};
const std::vector<std::string> kTaintValues = {"", "v1", "v2"};
const std::vector<std::string> kEffects = {"NoSchedule", "NoExecute", "PreferNoSchedule"};

GenNode RandomNode(Rng& r, int i) {
  GenNode n;
  n.name = "n" + std::to_string(i);
  for (const auto& [key, values] : LabelDomains()) {
    if (r.Chance(60)) n.labels[key] = r.Pick(values);
  }
  const size_t num_taints = std::vector<size_t>{0, 0, 0, 1, 1, 2, 3}[r.Below(7)];
  for (size_t t = 0; t < num_taints; ++t) {
    GenTaint taint{r.Pick(kTaintKeys), r.Pick(kTaintValues), r.Pick(kEffects)};
    bool duplicate = false;  // taints are unique by key and effect
    for (const GenTaint& o : n.taints) duplicate |= o.key == taint.key && o.effect == taint.effect;
    if (!duplicate) n.taints.push_back(taint);
  }
  n.unschedulable = r.Chance(5);
  n.milli_cpu = std::vector<int64_t>{500, 1000, 2000, 4000, 8000}[r.Below(5)];
  n.memory_mi = std::vector<int64_t>{1024, 2048, 4096, 8192, 16384}[r.Below(5)];
  n.pods = std::vector<int64_t>{1, 2, 3, 5, 10, 110}[r.Below(6)];
  if (r.Chance(50)) n.gpus = static_cast<int64_t>(r.Below(5));
  return n;
}

GenRequirement RandomRequirement(Rng& r) {
  static const std::vector<std::string> kOps = {"In",           "NotIn", "Exists",
                                                "DoesNotExist", "Gt",    "Lt"};
  GenRequirement req;
  req.op = r.Pick(kOps);
  if (req.op == "Gt" || req.op == "Lt") {
    req.key = "tier";
    req.values = {r.Pick(LabelDomains().at("tier"))};
    return req;
  }
  auto it = LabelDomains().begin();
  std::advance(it, r.Below(LabelDomains().size()));
  req.key = it->first;
  if (req.op == "In" || req.op == "NotIn") {
    req.values.push_back(r.Pick(it->second));
    if (r.Chance(40)) {
      const std::string& second = r.Pick(it->second);
      if (second != req.values[0]) req.values.push_back(second);
    }
  }
  return req;
}

GenTerm RandomTerm(Rng& r) {
  GenTerm term;
  const size_t n = 1 + r.Below(2);
  for (size_t i = 0; i < n; ++i) term.push_back(RandomRequirement(r));
  return term;
}

GenPod RandomPod(Rng& r, int i) {
  GenPod p;
  p.name = "p" + std::to_string(i);
  const size_t num_tolerations = std::vector<size_t>{0, 0, 1, 1, 2, 3}[r.Below(6)];
  for (size_t t = 0; t < num_tolerations; ++t) {
    GenToleration tol;
    tol.key = r.Chance(15) ? "" : r.Pick(kTaintKeys);
    // An empty key needs Exists (API validation); Exists takes no value.
    tol.op = tol.key.empty() || r.Chance(40) ? "Exists" : "Equal";
    if (tol.op == "Equal") tol.value = r.Pick(kTaintValues);
    tol.effect = r.Chance(35) ? "" : r.Pick(kEffects);
    p.tolerations.push_back(tol);
  }
  if (r.Chance(30)) {
    auto it = LabelDomains().begin();
    std::advance(it, r.Below(LabelDomains().size()));
    p.node_selector[it->first] = r.Pick(it->second);
  }
  if (r.Chance(35)) {
    const size_t terms = 1 + r.Below(2);
    for (size_t t = 0; t < terms; ++t) p.required.push_back(RandomTerm(r));
  }
  if (r.Chance(40)) {
    const size_t terms = 1 + r.Below(2);
    for (size_t t = 0; t < terms; ++t) {
      p.preferred.emplace_back(1 + static_cast<int>(r.Below(100)), RandomTerm(r));
    }
  }
  p.milli_cpu = std::vector<int64_t>{0, 100, 250, 500, 1000, 2000}[r.Below(6)];
  p.memory_mi = std::vector<int64_t>{0, 128, 512, 1024, 4096}[r.Below(5)];
  if (r.Chance(20)) p.gpus = 1 + static_cast<int64_t>(r.Below(2));
  return p;
}

// --- JSON
// -----------------------------------------------------------------------------------------

std::string Quote(std::string_view s) { return "\"" + std::string(s) + "\""; }

std::string LabelsJson(const std::map<std::string, std::string>& labels) {
  std::string out = "{";
  for (const auto& [k, v] : labels) {
    if (out.size() > 1) out += ",";
    out += Quote(k) + ":" + Quote(v);
  }
  return out + "}";
}

std::string NodeJson(const GenNode& n) {
  std::string taints = "[";
  for (const GenTaint& t : n.taints) {
    if (taints.size() > 1) taints += ",";
    taints += R"({"key":)" + Quote(t.key) + R"(,"value":)" + Quote(t.value) + R"(,"effect":)" +
              Quote(t.effect) + "}";
  }
  taints += "]";
  std::string alloc = R"({"cpu":")" + std::to_string(n.milli_cpu) + R"(m","memory":")" +
                      std::to_string(n.memory_mi) + R"(Mi","pods":")" + std::to_string(n.pods) +
                      "\"";
  if (n.gpus) alloc += "," + Quote(kGpu) + ":\"" + std::to_string(*n.gpus) + "\"";
  alloc += "}";
  return R"({"metadata":{"name":)" + Quote(n.name) + R"(,"labels":)" + LabelsJson(n.labels) +
         R"(},"spec":{"taints":)" + taints + (n.unschedulable ? R"(,"unschedulable":true)" : "") +
         R"(},"status":{"capacity":)" + alloc + R"(,"allocatable":)" + alloc + "}}";
}

std::string TermJson(const GenTerm& term) {
  std::string out = R"({"matchExpressions":[)";
  for (size_t i = 0; i < term.size(); ++i) {
    const GenRequirement& req = term[i];
    if (i > 0) out += ",";
    out += R"({"key":)" + Quote(req.key) + R"(,"operator":)" + Quote(req.op);
    if (!req.values.empty()) {
      out += R"(,"values":[)";
      for (size_t v = 0; v < req.values.size(); ++v) {
        if (v > 0) out += ",";
        out += Quote(req.values[v]);
      }
      out += "]";
    }
    out += "}";
  }
  return out + "]}";
}

std::string PodJson(const GenPod& p) {
  std::string spec = R"("containers":[{"name":"c","image":"nginx","resources":{"requests":{)";
  std::string requests = R"("cpu":")" + std::to_string(p.milli_cpu) + R"(m","memory":")" +
                         std::to_string(p.memory_mi) + R"(Mi")";
  if (p.gpus > 0) requests += "," + Quote(kGpu) + ":\"" + std::to_string(p.gpus) + "\"";
  spec += requests + "}";
  if (p.gpus > 0) {
    // Extended resources cannot be overcommitted: limits equal to requests.
    spec += R"(,"limits":{)" + Quote(kGpu) + ":\"" + std::to_string(p.gpus) + "\"}";
  }
  spec += "}}]";
  if (!p.tolerations.empty()) {
    spec += R"(,"tolerations":[)";
    for (size_t i = 0; i < p.tolerations.size(); ++i) {
      const GenToleration& t = p.tolerations[i];
      if (i > 0) spec += ",";
      spec += "{";
      std::string fields;
      if (!t.key.empty()) fields += R"("key":)" + Quote(t.key) + ",";
      fields += R"("operator":)" + Quote(t.op);
      if (t.op == "Equal") fields += R"(,"value":)" + Quote(t.value);
      if (!t.effect.empty()) fields += R"(,"effect":)" + Quote(t.effect);
      spec += fields + "}";
    }
    spec += "]";
  }
  if (!p.node_selector.empty()) spec += R"(,"nodeSelector":)" + LabelsJson(p.node_selector);
  if (!p.required.empty() || !p.preferred.empty()) {
    std::string affinity;
    if (!p.required.empty()) {
      affinity += R"("requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[)";
      for (size_t i = 0; i < p.required.size(); ++i) {
        if (i > 0) affinity += ",";
        affinity += TermJson(p.required[i]);
      }
      affinity += "]}";
    }
    if (!p.preferred.empty()) {
      if (!affinity.empty()) affinity += ",";
      affinity += R"("preferredDuringSchedulingIgnoredDuringExecution":[)";
      for (size_t i = 0; i < p.preferred.size(); ++i) {
        if (i > 0) affinity += ",";
        affinity += R"({"weight":)" + std::to_string(p.preferred[i].first) + R"(,"preference":)" +
                    TermJson(p.preferred[i].second) + "}";
      }
      affinity += "]";
    }
    spec += R"(,"affinity":{"nodeAffinity":{)" + affinity + "}}";
  }
  return R"({"metadata":{"name":)" + Quote(p.name) + R"(},"spec":{)" + spec + "}}";
}

// The pod as `kubetaint check` prepares a manifest (and the API server stores it): defaults
// applied, in the default namespace.
ObjectPtr PodForCheck(const GenPod& p) {
  Result<rapidjson::Document> doc = api::ParseJson(PodJson(p));
  if (!doc) std::abort();
  api::SetPodDefaults(*doc);
  return testing::Pod(api::EncodeJson(*doc));
}

// --- Upstream's rules, written out again ------------------------------------------------------

// core/v1 Toleration.ToleratesTaint (semantics.md §2.1), for the operators generated here.
bool Tolerates(const GenToleration& tol, const GenTaint& taint) {
  if (!tol.effect.empty() && tol.effect != taint.effect) return false;
  if (!tol.key.empty() && tol.key != taint.key) return false;
  if (tol.op == "Exists") return true;
  return tol.value == taint.value;
}

bool Tolerated(const GenPod& p, const GenTaint& taint) {
  for (const GenToleration& tol : p.tolerations) {
    if (Tolerates(tol, taint)) return true;
  }
  return false;
}

bool RequirementMatches(const GenRequirement& req, const std::map<std::string, std::string>& l) {
  auto it = l.find(req.key);
  const bool has = it != l.end();
  auto in = [&] {
    for (const std::string& v : req.values) {
      if (has && it->second == v) return true;
    }
    return false;
  };
  if (req.op == "In") return in();
  if (req.op == "NotIn") return !in();
  if (req.op == "Exists") return has;
  if (req.op == "DoesNotExist") return !has;
  if (!has) return false;
  const int64_t label = std::stoll(it->second);
  const int64_t bound = std::stoll(req.values[0]);
  return req.op == "Gt" ? label > bound : label < bound;
}

// Why `p` must not be on `n` ("" when it may be, resources aside).
std::string Violation(const GenPod& p, const GenNode& n) {
  for (const GenTaint& t : n.taints) {
    if ((t.effect == "NoSchedule" || t.effect == "NoExecute") && !Tolerated(p, t)) {
      return "untolerated taint " + t.key + "=" + t.value + ":" + t.effect;
    }
  }
  if (n.unschedulable && !Tolerated(p, {"node.kubernetes.io/unschedulable", "", "NoSchedule"})) {
    return "cordoned";
  }
  for (const auto& [k, v] : p.node_selector) {
    auto it = n.labels.find(k);
    if (it == n.labels.end() || it->second != v) return "nodeSelector " + k + "=" + v;
  }
  if (!p.required.empty()) {
    bool any = false;
    for (const GenTerm& term : p.required) {
      bool all = true;
      for (const GenRequirement& req : term) all = all && RequirementMatches(req, n.labels);
      any = any || all;
    }
    if (!any) return "required node affinity";
  }
  return "";
}

// Invariant 4 over the whole cluster as it stands.
void CheckInvariants(Cluster& c, const std::map<std::string, GenNode>& nodes,
                     const std::map<std::string, GenPod>& pods, const std::string& when) {
  struct Used {
    int64_t milli_cpu = 0, memory_mi = 0, gpus = 0, pods = 0;
  };
  std::map<std::string, Used> used;
  for (const auto& [name, p] : pods) {
    const std::string node = c.NodeOf(name);
    if (node.empty()) continue;
    auto n = nodes.find(node);
    ASSERT_NE(n, nodes.end()) << when << ": " << name << " bound to unknown node " << node;
    const std::string why = Violation(p, n->second);
    EXPECT_EQ(why, "") << when << ": " << name << " bound to " << node << "\n  pod: " << PodJson(p)
                       << "\n  node: " << NodeJson(n->second);
    Used& u = used[node];
    u.milli_cpu += p.milli_cpu;
    u.memory_mi += p.memory_mi;
    u.gpus += p.gpus;
    u.pods += 1;
  }
  for (const auto& [node, u] : used) {
    const GenNode& n = nodes.at(node);
    EXPECT_LE(u.milli_cpu, n.milli_cpu) << when << ": cpu overcommitted on " << node;
    EXPECT_LE(u.memory_mi, n.memory_mi) << when << ": memory overcommitted on " << node;
    EXPECT_LE(u.gpus, n.gpus.value_or(0)) << when << ": " << kGpu << " overcommitted on " << node;
    EXPECT_LE(u.pods, n.pods) << when << ": too many pods on " << node;
  }
}

// --- The property
// ---------------------------------------------------------------------------------

struct Totals {
  int bound = 0;
  int pending = 0;
};

Totals RunSeed(uint64_t seed) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  Rng r(seed);
  Cluster c;
  std::map<std::string, GenNode> nodes;
  const int num_nodes = 1 + static_cast<int>(r.Below(60));
  for (int i = 0; i < num_nodes; ++i) {
    GenNode n = RandomNode(r, i);
    c.Create(Resource::kNodes, NodeJson(n));
    nodes[n.name] = n;
  }
  c.Settle();

  std::map<std::string, GenPod> pods;
  const int num_pods = 20 + static_cast<int>(r.Below(25));
  Totals totals;
  for (int i = 0; i < num_pods; ++i) {
    GenPod p = RandomPod(r, i);
    pods[p.name] = p;
    SCOPED_TRACE("pod " + p.name + ": " + PodJson(p));

    // What `kubetaint check` says, over the cluster as it is now.
    Evaluator ev({Profile()}, FeatureGates());
    for (const ObjectPtr& n : c.List(Resource::kNodes)) ev.AddNode(n);
    for (const ObjectPtr& o : c.List(Resource::kPods)) ev.AddPod(o);
    EXPECT_TRUE(ev.Init().ok());
    Result<PodEvaluation> predicted = ev.Evaluate(PodForCheck(p));
    if (!predicted) {
      ADD_FAILURE() << predicted.error().message();
      continue;
    }

    // What the scheduler does.
    c.Create(Resource::kPods, PodJson(p));
    c.Settle();
    const std::string bound = c.NodeOf(p.name);
    EXPECT_EQ(bound, predicted->selected_node)
        << "check and the scheduler disagree; check's message: " << predicted->message;
    if (bound.empty()) {
      ++totals.pending;
      const api::Condition* cond = c.PodCondition(p.name, "PodScheduled");
      if (cond == nullptr) {
        ADD_FAILURE() << "pending without a PodScheduled condition";
      } else {
        EXPECT_EQ(cond->status, "False");
        EXPECT_EQ(cond->reason, "Unschedulable");
        EXPECT_EQ(cond->message, predicted->message);
      }
    } else {
      ++totals.bound;
    }
    CheckInvariants(c, nodes, pods, "after " + p.name);
    if (::testing::Test::HasFailure()) return totals;  // one disagreement is enough to read
  }

  // Six minutes on: the leftover flush retries every pending pod, in a different order and
  // state than when each was created; whatever binds then must still keep the invariant.
  c.Advance(std::chrono::minutes(6));
  CheckInvariants(c, nodes, pods, "after the leftover flush");
  return totals;
}

TEST(SchedulerPropertyTest, CheckAgreesWithTheSchedulerAndBindingsKeepInvariant4) {
  Totals all;
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    Totals t = RunSeed(seed);
    all.bound += t.bound;
    all.pending += t.pending;
    if (HasFailure()) break;
  }
  if (HasFailure()) return;
  // The random clusters exercise both outcomes, plenty of each (698 and 233 with these seeds).
  EXPECT_GT(all.bound, 500);
  EXPECT_GT(all.pending, 150);
}

// Framework::FilterNodes (the scan's batch filter) and every plugin's FilterBatch reject exactly
// the nodes RunFilterPlugins and the plugin's Filter reject, on random clusters with pods already
// placed (so resources run short), in runs of every length the scan uses.
TEST(SchedulerPropertyTest, BatchFiltersAgreeWithFilterOnEveryNode) {
  int rejected_total = 0, admitted_total = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Rng r(seed);
    testing::FakeHandle h;
    for (int i = 0; i < 70; ++i) h.cache.AddNode(testing::Node(NodeJson(RandomNode(r, i))));
    std::span<NodeInfo* const> all = h.cache.List();
    for (int i = 0; i < 60; ++i) {  // placed pods
      ObjectPtr placed = testing::Pod(PodJson(RandomPod(r, 1000 + i)));
      api::Pod bound = *placed->As<api::Pod>();
      bound.spec.node_name = all[r.Below(all.size())]->name();
      bound.meta.uid = "uid-" + std::to_string(i);
      h.cache.AddPod(NewPodInfo(testing::Object(Resource::kPods, api::EncodePod(bound))));
    }
    auto fw = testing::NewFramework(&h);
    std::vector<std::unique_ptr<Plugin>> plugins;
    for (std::string_view name : {"NodeUnschedulable", "NodeName", "TaintToleration",
                                  "NodeAffinity", "NodePorts", "NodeResourcesFit"}) {
      plugins.push_back(testing::NewPlugin(name, &h));
    }
    for (int i = 0; i < 40; ++i) {
      GenPod gen = RandomPod(r, i);
      std::string json = PodJson(gen);
      if (r.Chance(10)) {  // a pod naming its node
        ObjectPtr o = testing::Pod(json);
        api::Pod named = *o->As<api::Pod>();
        named.spec.node_name = all[r.Below(all.size())]->name();
        json = api::EncodePod(named);
      }
      PodInfoPtr pod = NewPodInfo(testing::Pod(json));
      ++h.cycle;
      PreFilterResult pre;
      std::set<std::string> narrowing;
      if (!fw->RunPreFilterPlugins(*pod, &pre, &narrowing).IsSuccess()) continue;
      for (size_t run : {size_t{1}, size_t{7}, size_t{64}}) {
        for (size_t at = 0; at < all.size(); at += run) {
          const size_t len = std::min(run, all.size() - at);
          std::span<const NodeInfo* const> nodes(all.data() + at, len);
          std::vector<uint8_t> rejected(len, 7);  // FilterNodes overwrites every entry
          fw->FilterNodes(*pod, nodes, rejected);
          for (size_t j = 0; j < len; ++j) {
            const bool want = !fw->RunFilterPlugins(*pod, *nodes[j]).IsSuccess();
            EXPECT_EQ(rejected[j], want ? 1 : 0) << nodes[j]->name() << " pod " << gen.name;
            (want ? rejected_total : admitted_total) += run == 64 ? 1 : 0;
          }
          for (const std::unique_ptr<Plugin>& pl : plugins) {
            auto* f = dynamic_cast<FilterPlugin*>(pl.get());
            std::vector<uint8_t> bits(len, 0);
            if (!f->FilterBatch(*pod, nodes, bits)) continue;
            for (size_t j = 0; j < len; ++j) {
              const bool want = !f->Filter(*pod, *nodes[j]).IsSuccess();
              EXPECT_EQ(bits[j], want ? 1 : 0)
                  << pl->Name() << " on " << nodes[j]->name() << " pod " << gen.name;
            }
          }
        }
      }
      if (HasFailure()) return;
    }
  }
  // Both verdicts, plenty of each.
  EXPECT_GT(rejected_total, 10000);
  EXPECT_GT(admitted_total, 3000);
}

// The matchers above are upstream's rules: a few hand-checked cases keep them honest.
TEST(SchedulerPropertyTest, IndependentMatchersFollowUpstream) {
  const GenTaint t{"k1", "v1", "NoSchedule"};
  EXPECT_TRUE(Tolerates({"k1", "Equal", "v1", "NoSchedule"}, t));
  EXPECT_TRUE(Tolerates({"k1", "Equal", "v1", ""}, t));
  EXPECT_FALSE(Tolerates({"k1", "Equal", "v2", ""}, t));
  EXPECT_FALSE(Tolerates({"k1", "Equal", "", ""}, t));
  EXPECT_TRUE(Tolerates({"k1", "Exists", "", ""}, t));
  EXPECT_FALSE(Tolerates({"k1", "Exists", "", "NoExecute"}, t));
  EXPECT_TRUE(Tolerates({"", "Exists", "", ""}, t));
  EXPECT_FALSE(Tolerates({"k2", "Exists", "", ""}, t));
  const std::map<std::string, std::string> labels = {{"tier", "3"}, {"zone", "a"}};
  EXPECT_TRUE(RequirementMatches({"tier", "Gt", {"2"}}, labels));
  EXPECT_FALSE(RequirementMatches({"tier", "Gt", {"3"}}, labels));
  EXPECT_TRUE(RequirementMatches({"tier", "Lt", {"4"}}, labels));
  EXPECT_FALSE(RequirementMatches({"disk", "Lt", {"4"}}, labels));
  EXPECT_TRUE(RequirementMatches({"disk", "NotIn", {"ssd"}}, labels));
  EXPECT_FALSE(RequirementMatches({"zone", "NotIn", {"a", "b"}}, labels));
  EXPECT_TRUE(RequirementMatches({"zone", "In", {"b", "a"}}, labels));
  EXPECT_TRUE(RequirementMatches({"disk", "DoesNotExist", {}}, labels));
}

}  // namespace
}  // namespace kt::scheduler
