// The node lifecycle controller in a cluster on a simulated clock (semantics.md §11.9 NL and RQ
// rows, and the scenarios of issue 9): every time below is exact. The controller starts at T0;
// its health passes run at T0 + 5 s·k, the test kubelets renew their Leases at T0 + 10 s·k (seen
// by the pass of the same instant), and NoExecute taints are written on the 100 ms grid from T0
// when their zone's bucket has a token.
//
// So a node silenced at T0 (its last renewal at T0) is found silent by the first pass after
// T0 + 50 s, at T0 + 55 s: its conditions turn Unknown and it gets unreachable:NoSchedule then;
// the pass at T0 + 60 s sees Ready Unknown and queues it, and it gets unreachable:NoExecute at
// T0 + 60 s if its zone's bucket has a token.
#include "controllers/nodelifecycle/controller.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "controllers/nodelifecycle/testing.h"

namespace kt::controllers::nodelifecycle {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::Cluster;
using testing::Fault;
using testing::NodeSetup;

std::string N(std::string_view prefix, int i) { return std::string(prefix) + std::to_string(i); }

std::string ZoneOf(std::string_view zone) { return std::string(":\0:", 3) + std::string(zone); }

// Creates `count` Ready nodes prefix0.. in `zone`.
void CreateZone(Cluster& c, std::string_view prefix, std::string_view zone, int count) {
  for (int i = 0; i < count; ++i) c.CreateNode({.name = N(prefix, i), .zone = std::string(zone)});
}

// T0 + `seconds_after_start`, to the millisecond.
client::Time At(const Cluster& c, double seconds_after_start) {
  return c.start_time + milliseconds(std::llround(seconds_after_start * 1000));
}

// --- Health ----------------------------------------------------------------------------------

TEST(HealthTest, ASilentNodeTurnsUnknownAfterTheGracePeriodAndIsTainted) {
  Cluster c({}, /*start=*/false);
  CreateZone(c, "n", "a", 4);
  c.CreatePod("p0", "n0", "True");
  c.CreatePod("p1", "n1", "True");
  c.Start();
  c.AdvanceTo(At(c, 20));
  c.Silence("n0");  // its last Lease renewal was at T0 + 20 s
  c.AdvanceTo(At(c, 70));
  EXPECT_EQ(c.Condition("n0", "Ready")->status, "True") << "50 s after the last renewal";
  EXPECT_FALSE(c.HasTaint("n0", kTaintNodeUnreachable, kEffectNoSchedule));

  c.AdvanceTo(At(c, 75));
  const std::string t75 = FormatRfc3339(At(c, 75));
  std::optional<api::Condition> ready = c.Condition("n0", "Ready");
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->status, "Unknown");
  EXPECT_EQ(ready->reason, "NodeStatusUnknown");
  EXPECT_EQ(ready->message, "Kubelet stopped posting node status.");
  EXPECT_EQ(ready->last_transition_time, t75);
  EXPECT_EQ(ready->last_heartbeat_time, FormatRfc3339(c.start_time)) << "the kubelet's, kept";
  // The kubelet never posted the pressure conditions: added as never updated, dated from the
  // node's creation.
  for (const char* type : {"MemoryPressure", "DiskPressure", "PIDPressure"}) {
    std::optional<api::Condition> p = c.Condition("n0", type);
    ASSERT_TRUE(p) << type;
    EXPECT_EQ(p->status, "Unknown") << type;
    EXPECT_EQ(p->reason, "NodeStatusNeverUpdated") << type;
    EXPECT_EQ(p->message, "Kubelet never posted node status.") << type;
    EXPECT_EQ(p->last_heartbeat_time, FormatRfc3339(c.start_time)) << type;
    EXPECT_EQ(p->last_transition_time, t75) << type;
  }
  EXPECT_FALSE(c.Condition("n0", "NetworkUnavailable")) << "never forced";
  EXPECT_TRUE(c.HasTaint("n0", kTaintNodeUnreachable, kEffectNoSchedule));
  EXPECT_FALSE(c.HasTaint("n0", kTaintNodeUnreachable, kEffectNoExecute)) << "queued next pass";
  // Ready left True: the event, and the node's pods are not Ready any more.
  EXPECT_EQ(c.CountEvents("NodeNotReady", "Node n0 status is now: NodeNotReady"), 1);
  std::optional<api::Condition> pod_ready = c.PodCondition("p0", "Ready");
  ASSERT_TRUE(pod_ready);
  EXPECT_EQ(pod_ready->status, "False");
  EXPECT_EQ(pod_ready->last_transition_time, t75);
  EXPECT_EQ(c.CountEvents("NodeNotReady", "Node is not ready"), 1);
  EXPECT_EQ(c.PodCondition("p1", "Ready")->status, "True") << "on a healthy node";

  c.AdvanceTo(At(c, 80));
  const std::vector<Taint> taints = c.Taints("n0");
  const Taint* ne = c.FindTaint(taints, kTaintNodeUnreachable, kEffectNoExecute);
  ASSERT_TRUE(ne);
  EXPECT_EQ(ne->value, "");
  EXPECT_EQ(ne->time_added, FormatRfc3339(At(c, 80)));
  const Taint* ns = c.FindTaint(taints, kTaintNodeUnreachable, kEffectNoSchedule);
  ASSERT_TRUE(ns);
  EXPECT_EQ(ns->time_added, t75);
  for (int i = 1; i < 4; ++i) EXPECT_TRUE(c.Taints(N("n", i)).empty()) << i;
  EXPECT_EQ(c.controller->ZoneStateOf(ZoneOf("a")), ZoneState::kNormal);
  // Written once: later passes find it Unknown already.
  c.AdvanceTo(At(c, 200));
  EXPECT_EQ(c.Condition("n0", "Ready")->last_transition_time, t75);
  EXPECT_EQ(c.CountEvents("NodeNotReady", "Node n0 status is now: NodeNotReady"), 1);
}

TEST(HealthTest, ANodeThatNeverPostedStatusHasTheStartupGracePeriod) {
  Cluster c({}, /*start=*/false);
  CreateZone(c, "h", "a", 3);
  c.CreateNode({.name = "quiet", .zone = "a", .conditions = {}, .lease = false});
  c.Start();
  c.AdvanceTo(At(c, 60));
  EXPECT_FALSE(c.Condition("quiet", "Ready")) << "60 s from its creation: not yet";
  c.AdvanceTo(At(c, 65));
  std::optional<api::Condition> ready = c.Condition("quiet", "Ready");
  ASSERT_TRUE(ready);
  EXPECT_EQ(ready->status, "Unknown");
  EXPECT_EQ(ready->reason, "NodeStatusNeverUpdated");
  EXPECT_EQ(ready->message, "Kubelet never posted node status.");
  EXPECT_EQ(ready->last_heartbeat_time, FormatRfc3339(c.start_time));
  EXPECT_EQ(ready->last_transition_time, FormatRfc3339(At(c, 65)));
  // It never was Ready: no NodeNotReady event.
  EXPECT_EQ(c.CountEvents("NodeNotReady", "Node quiet status is now: NodeNotReady", 0), 0);
  c.AdvanceTo(At(c, 70));
  EXPECT_TRUE(c.HasTaint("quiet", kTaintNodeUnreachable, kEffectNoExecute));
}

TEST(HealthTest, ALeaseRenewedIsAHeartbeat) {
  // A node that renews its Lease but never posts status is taken as healthy (upstream's note).
  Cluster c({}, /*start=*/false);
  CreateZone(c, "h", "a", 3);
  c.CreateNode({.name = "leaser", .zone = "a", .conditions = {}});
  c.Start();
  c.AdvanceTo(At(c, 600));
  EXPECT_FALSE(c.Condition("leaser", "Ready"));
  EXPECT_TRUE(c.Taints("leaser").empty());
  // A kubelet that posts status and renews its Lease stays Ready for ever.
  EXPECT_EQ(c.Condition("h0", "Ready")->status, "True");
  EXPECT_EQ(c.client->TaintWrites(), 0u);
}

TEST(HealthTest, RegisteredAndRemovingNodeEvents) {
  Cluster c({}, /*start=*/false);
  CreateZone(c, "n", "a", 2);
  c.Start();
  std::optional<api::Event> e =
      c.FindEvent("RegisteredNode", "Node n0 event: Registered Node n0 in Controller");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->type, "Normal");
  EXPECT_EQ(e->source_component, "node-controller");
  EXPECT_EQ(e->involved_object.kind, "Node");
  EXPECT_EQ(e->involved_object.name, "n0");
  EXPECT_FALSE(e->involved_object.uid.empty());
  c.DeleteNode("n1");
  c.AdvanceTo(At(c, 5));
  EXPECT_EQ(c.CountEvents("RemovingNode", "Node n1 event: Removing Node n1 from Controller"), 1);
  // Created again under its name: registered again.
  c.CreateNode({.name = "n1", .zone = "a"});
  c.AdvanceTo(At(c, 10));
  EXPECT_EQ(c.CountEvents("RegisteredNode", "Node n1 event: Registered Node n1 in Controller", 2),
            2);
}

TEST(HealthTest, ANewlySeenNodeLosesItsNoExecuteTaintsAndGetsThemBackIfStillNotReady) {
  // markNodeAsReachable for every node a pass registers (all of them when the controller
  // starts); a node still not Ready is queued again and, its zone healthy, tainted at once.
  const std::string old_taint =
      R"({"key":"node.kubernetes.io/unreachable","effect":"NoExecute","timeAdded":"2025-01-01T00:00:00Z"})";
  Cluster c({}, /*start=*/false);
  CreateZone(c, "h", "a", 3);
  c.CreateNode({.name = "ready", .zone = "a", .taints = {old_taint}});
  c.CreateNode(
      {.name = "gone", .zone = "a", .conditions = {{"Ready", "Unknown"}}, .taints = {old_taint}});
  c.Start();
  EXPECT_TRUE(c.Taints("ready").empty());
  const std::vector<Taint> taints = c.Taints("gone");
  const Taint* t = c.FindTaint(taints, kTaintNodeUnreachable, kEffectNoExecute);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->time_added, FormatRfc3339(c.start_time)) << "removed, then added again";
}

TEST(HealthTest, APodBoundToANotReadyNodeIsNotReady) {
  Cluster c({}, /*start=*/false);
  CreateZone(c, "n", "a", 3);
  c.CreateNode({.name = "sick", .zone = "a", .conditions = {{"Ready", "False"}}});
  c.Start();
  // processPod: a pod newly on a node whose Ready is not True.
  c.CreatePod("late", "sick", "True");
  c.Settle();
  EXPECT_EQ(c.PodCondition("late", "Ready")->status, "False");
  c.CreatePod("fine", "n0", "True");
  c.Settle();
  EXPECT_EQ(c.PodCondition("fine", "Ready")->status, "True");
}

// --- Condition taints (NL rows) ----------------------------------------------------------------

struct NLRow {
  const char* id = "";
  std::map<std::string, std::string> conditions = {};
  bool cordoned = false;
  std::vector<std::string> taints = {};  // the node's taints at creation (JSON)
  // A second step, 20 s later: conditions the kubelet posts, and the cordon.
  std::map<std::string, std::string> then = {};
  std::optional<bool> then_cordoned = {};
  float rate = 0.1f;                               // --node-eviction-rate
  std::vector<std::string> want_no_schedule = {};  // the controller's NoSchedule keys, sorted
  std::vector<std::string> want_no_execute = {};   // NoExecute taint keys
  std::vector<std::string> want_other = {};        // every other taint, key=value:effect
};

class ConditionTaintsTest : public ::testing::TestWithParam<NLRow> {};

TEST_P(ConditionTaintsTest, AsSection11_9) {
  const NLRow& row = GetParam();
  Cluster c([&](Controller::Options& o) { o.node_eviction_rate = row.rate; }, /*start=*/false);
  CreateZone(c, "h", "a", 3);  // Ready neighbours: one node not Ready is no disruption
  c.CreateNode({.name = "n",
                .zone = "a",
                .conditions = row.conditions,
                .unschedulable = row.cordoned,
                .taints = row.taints});
  c.Start();
  c.AdvanceTo(At(c, 20));
  if (!row.then.empty()) c.PostConditions("n", row.then);
  if (row.then_cordoned) c.Cordon("n", *row.then_cordoned);
  c.AdvanceTo(At(c, 40));
  std::vector<std::string> no_schedule, no_execute, other;
  for (const Taint& t : c.Taints("n")) {
    const bool ours = t.key.starts_with("node.kubernetes.io/") && t.value.empty();
    if (ours && t.effect == kEffectNoSchedule) {
      no_schedule.push_back(t.key.substr(19));
    } else if (ours && t.effect == kEffectNoExecute) {
      no_execute.push_back(t.key.substr(19));
    } else {
      other.push_back(t.key + "=" + t.value + ":" + t.effect);
    }
  }
  std::sort(no_schedule.begin(), no_schedule.end());
  EXPECT_EQ(no_schedule, row.want_no_schedule) << row.id;
  EXPECT_EQ(no_execute, row.want_no_execute) << row.id;
  EXPECT_EQ(other, row.want_other) << row.id;
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(c.Taints(N("h", i)).empty()) << row.id;
}

const std::string kForeign = R"({"key":"foo","value":"bar","effect":"NoSchedule"})";
const std::string kAdmissionNotReady =
    R"({"key":"node.kubernetes.io/not-ready","effect":"NoSchedule"})";

INSTANTIATE_TEST_SUITE_P(
    Section11_9, ConditionTaintsTest,
    ::testing::Values(
        NLRow{.id = "NL1", .conditions = {{"Ready", "True"}, {"MemoryPressure", "False"}}},
        NLRow{.id = "NL2",
              .conditions = {{"Ready", "False"}},
              .want_no_schedule = {"not-ready"},
              .want_no_execute = {"not-ready"}},
        NLRow{.id = "NL3",
              .conditions = {{"Ready", "Unknown"}},
              .want_no_schedule = {"unreachable"},
              .want_no_execute = {"unreachable"}},
        NLRow{
            .id = "NL4",
            .conditions = {{"Ready", "True"}, {"MemoryPressure", "True"}, {"DiskPressure", "True"}},
            .want_no_schedule = {"disk-pressure", "memory-pressure"}},
        NLRow{.id = "NL5",
              .conditions = {{"Ready", "True"}},
              .cordoned = true,
              .want_no_schedule = {"unschedulable"}},
        // NL6: unreachable:NoExecute first; then Ready False swaps it at the next pass although
        // the zone's bucket (0.001/s) has no token for 1000 s.
        NLRow{.id = "NL6",
              .conditions = {{"Ready", "Unknown"}},
              .then = {{"Ready", "False"}},
              .rate = 0.001f,
              .want_no_schedule = {"not-ready"},
              .want_no_execute = {"not-ready"}},
        NLRow{.id = "NL6_reverse",
              .conditions = {{"Ready", "False"}},
              .then = {{"Ready", "Unknown"}},
              .rate = 0.001f,
              .want_no_schedule = {"unreachable"},
              .want_no_execute = {"unreachable"}},
        // NL7: everything back to health removes every taint the controller added.
        NLRow{.id = "NL7",
              .conditions = {{"Ready", "False"},
                             {"MemoryPressure", "True"},
                             {"DiskPressure", "True"},
                             {"NetworkUnavailable", "True"},
                             {"PIDPressure", "True"}},
              .cordoned = true,
              .then = {{"Ready", "True"},
                       {"MemoryPressure", "False"},
                       {"DiskPressure", "False"},
                       {"NetworkUnavailable", "False"},
                       {"PIDPressure", "False"}},
              .then_cordoned = false},
        // NL8: a foreign taint is never touched, whatever the controller adds or removes.
        NLRow{.id = "NL8",
              .conditions = {{"Ready", "False"}},
              .taints = {kForeign},
              .then = {{"Ready", "True"}},
              .want_other = {"foo=bar:NoSchedule"}},
        NLRow{.id = "NL8_tainted",
              .conditions = {{"Ready", "False"}},
              .taints = {kForeign},
              .want_no_schedule = {"not-ready"},
              .want_no_execute = {"not-ready"},
              .want_other = {"foo=bar:NoSchedule"}},
        NLRow{.id = "NL9",
              .conditions = {{"Ready", "True"},
                             {"NetworkUnavailable", "True"},
                             {"PIDPressure", "True"}},
              .want_no_schedule = {"network-unavailable", "pid-pressure"}},
        // TaintNodesByCondition's taint on a new node: lifted once the node reports Ready, and
        // also (as upstream's NoSchedule pass) from a node that reports no conditions at all.
        NLRow{.id = "Admitted_Ready",
              .conditions = {{"Ready", "True"}},
              .taints = {kAdmissionNotReady}},
        NLRow{.id = "Admitted_NoConditions", .conditions = {}, .taints = {kAdmissionNotReady}},
        NLRow{.id = "Admitted_NotReadyYet",
              .conditions = {{"Ready", "False"}},
              .taints = {kAdmissionNotReady},
              .then = {{"Ready", "True"}}}),
    [](const ::testing::TestParamInfo<NLRow>& info) { return std::string(info.param.id); });

TEST(ConditionTaintsTest, TheSwapIsNotRateLimited) {
  // NL6 with times: the unreachable taint takes the zone's token at T0; Ready False at T0 + 20 s;
  // the pass at T0 + 25 s swaps the taints at once although no token comes before T0 + 1000 s.
  Cluster c([](Controller::Options& o) { o.node_eviction_rate = 0.001f; }, /*start=*/false);
  CreateZone(c, "h", "a", 3);
  c.CreateNode({.name = "n", .zone = "a", .conditions = {{"Ready", "Unknown"}}});
  c.Start();
  EXPECT_TRUE(c.HasTaint("n", kTaintNodeUnreachable, kEffectNoExecute));
  c.AdvanceTo(At(c, 20));
  c.PostConditions("n", {{"Ready", "False"}});
  c.AdvanceTo(At(c, 25));
  const std::vector<Taint> taints = c.Taints("n");
  EXPECT_FALSE(c.FindTaint(taints, kTaintNodeUnreachable, kEffectNoExecute));
  const Taint* swapped = c.FindTaint(taints, kTaintNodeNotReady, kEffectNoExecute);
  ASSERT_TRUE(swapped);
  EXPECT_EQ(swapped->time_added, FormatRfc3339(At(c, 25)));
}

TEST(ConditionTaintsTest, CordonAndUncordon) {
  Cluster c;
  c.CreateNode({.name = "n"});
  c.Settle();
  c.Cordon("n");
  c.Settle();
  const std::vector<Taint> taints = c.Taints("n");
  const Taint* t = c.FindTaint(taints, kTaintNodeUnschedulable, kEffectNoSchedule);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->time_added, FormatRfc3339(c.clock.Now()));
  c.Cordon("n", false);
  c.Settle();
  EXPECT_TRUE(c.Taints("n").empty());
}

// --- Zones and rates (RQ rows) -----------------------------------------------------------------

struct ZoneSetup {
  std::string zone;
  int size;
  int silent;  // the first `silent` nodes stop at T0
};

struct RQRow {
  const char* id;
  std::vector<ZoneSetup> zones;
  // (seconds after T0, NoExecute-tainted nodes in the first zone then).
  std::vector<std::pair<double, int>> counts;
  ZoneState state;  // of the first zone once the silent nodes are Unknown
  float rate;       // of the first zone then
};

class ZoneRateTest : public ::testing::TestWithParam<RQRow> {};

TEST_P(ZoneRateTest, NoExecuteTaintsComeAtTheZonesRate) {
  const RQRow& row = GetParam();
  Cluster c({}, /*start=*/false);
  for (const ZoneSetup& z : row.zones) CreateZone(c, z.zone + "-", z.zone, z.size);
  c.Start();
  for (const ZoneSetup& z : row.zones) {
    for (int i = 0; i < z.silent; ++i) c.Silence(N(z.zone + "-", i));
  }
  const ZoneSetup& first = row.zones[0];
  for (const auto& [at, want] : row.counts) {
    c.AdvanceTo(At(c, at));
    int tainted = 0;
    for (int i = 0; i < first.size; ++i) {
      tainted += c.HasTaint(N(first.zone + "-", i), kTaintNodeUnreachable, kEffectNoExecute);
    }
    EXPECT_EQ(tainted, want) << row.id << " at T0 + " << at << " s";
  }
  EXPECT_EQ(c.controller->ZoneStateOf(ZoneOf(first.zone)), row.state) << row.id;
  EXPECT_EQ(c.controller->EvictionRateOf(ZoneOf(first.zone)), row.rate) << row.id;
  // Only silent nodes are ever tainted.
  for (const ZoneSetup& z : row.zones) {
    for (int i = z.silent; i < z.size; ++i) {
      EXPECT_TRUE(c.Taints(N(z.zone + "-", i)).empty()) << row.id << " " << N(z.zone, i);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Section11_9, ZoneRateTest,
    ::testing::Values(
        // RQ1: 2 of 10 silent is Normal: 0.1/s, a token every 9.99999985 s (0.1 in float32),
        // taken on the 100 ms grid.
        RQRow{"RQ1",
              {{"a", 10, 2}},
              {{59.9, 0}, {60, 1}, {69.9, 1}, {70, 2}, {200, 2}},
              ZoneState::kNormal,
              0.1f},
        // RQ2: 30 of 50 silent is a PartialDisruption of a zone that is not large: stopped.
        RQRow{"RQ2", {{"a", 50, 30}}, {{60, 0}, {600, 0}}, ZoneState::kPartialDisruption, 0.0f},
        // RQ3: 30 of 51: 0.01/s, a token every 100.000000002 s, on the grid every 100.1 s.
        RQRow{"RQ3",
              {{"a", 51, 30}},
              {{60, 1}, {160, 1}, {160.1, 2}, {260.1, 2}, {260.2, 3}},
              ZoneState::kPartialDisruption,
              0.01f},
        // RQ4: a zone all silent among healthy ones keeps the healthy rate.
        RQRow{"RQ4",
              {{"a", 3, 3}, {"b", 3, 0}},
              {{60, 1}, {69.9, 1}, {70, 2}, {80, 3}},
              ZoneState::kFullDisruption,
              0.1f},
        // RQ5: every zone silent: nothing is tainted, and tainting stops.
        RQRow{"RQ5",
              {{"a", 3, 3}, {"b", 2, 2}},
              {{60, 0}, {1000, 0}},
              ZoneState::kFullDisruption,
              0.0f}),
    [](const ::testing::TestParamInfo<RQRow>& info) { return std::string(info.param.id); });

// Rates of up to 10 nodes a second are taken on upstream's 100 ms grid; a faster rate is not
// capped by it (upstream's Try goes on while it finds tokens, its writes being slower than such a
// rate): at 1000/s five nodes are tainted about a millisecond apart.
TEST(ZoneRateTest, RatesAboveTheTickAreNotCappedByIt) {
  struct Case {
    float rate;
    std::vector<std::pair<double, int>> counts;  // (seconds after T0, NoExecute-tainted)
  };
  const Case cases[] = {
      // 8/s: a token every 125 ms, taken at the next 100 ms instant.
      {8.0f, {{60, 1}, {60.199, 1}, {60.2, 2}, {60.399, 2}, {60.4, 3}, {60.8, 5}}},
      // 1000/s: all five within 5 ms (on the grid it would be one per 100 ms).
      {1000.0f, {{59.99, 0}, {60.005, 5}}},
  };
  for (const Case& k : cases) {
    Cluster c([&](Controller::Options& o) { o.node_eviction_rate = k.rate; }, /*start=*/false);
    CreateZone(c, "n", "a", 30);
    c.Start();
    for (int i = 0; i < 5; ++i) c.Silence(N("n", i));
    for (const auto& [at, want] : k.counts) {
      c.AdvanceTo(At(c, at));
      EXPECT_EQ(c.CountTainted(kTaintNodeUnreachable, kEffectNoExecute), want)
          << "rate " << k.rate << " at T0 + " << at << " s";
    }
  }
}

TEST(ZoneRateTest, SixtyNodesFortySilentAreTaintedAtTheSecondaryRate) {
  Cluster c({}, /*start=*/false);
  CreateZone(c, "n", "a", 60);
  c.Start();
  for (int i = 0; i < 40; ++i) c.Silence(N("n", i));
  c.AdvanceTo(At(c, 55));
  EXPECT_EQ(c.controller->ZoneStateOf(ZoneOf("a")), ZoneState::kPartialDisruption);
  EXPECT_EQ(c.controller->EvictionRateOf(ZoneOf("a")), 0.01f);
  EXPECT_EQ(c.CountTainted(kTaintNodeUnreachable, kEffectNoSchedule), 40);
  // One every 100.1 s from T0 + 60 s: the 40th at T0 + 60 + 39 * 100.1 = T0 + 3963.9 s.
  c.AdvanceTo(At(c, 60));
  EXPECT_EQ(c.CountTainted(kTaintNodeUnreachable, kEffectNoExecute), 1);
  c.AdvanceTo(At(c, 1061));
  EXPECT_EQ(c.CountTainted(kTaintNodeUnreachable, kEffectNoExecute), 11);
  c.AdvanceTo(At(c, 3963.8));
  EXPECT_EQ(c.CountTainted(kTaintNodeUnreachable, kEffectNoExecute), 39);
  c.AdvanceTo(At(c, 3963.9));
  EXPECT_EQ(c.CountTainted(kTaintNodeUnreachable, kEffectNoExecute), 40);
  for (int i = 40; i < 60; ++i) EXPECT_TRUE(c.Taints(N("n", i)).empty()) << i;
  EXPECT_EQ(c.controller->QueuedForTainting(ZoneOf("a")), std::vector<std::string>{});
}

TEST(ZoneRateTest, ThirtyNodesTwentySilentTaintNone) {
  Cluster c({}, /*start=*/false);
  CreateZone(c, "n", "a", 30);
  c.Start();
  for (int i = 0; i < 20; ++i) c.Silence(N("n", i));
  c.AdvanceTo(At(c, 1000));
  EXPECT_EQ(c.controller->ZoneStateOf(ZoneOf("a")), ZoneState::kPartialDisruption);
  EXPECT_EQ(c.controller->EvictionRateOf(ZoneOf("a")), 0.0f);
  EXPECT_EQ(c.CountTainted(kTaintNodeUnreachable, kEffectNoExecute), 0);
  EXPECT_EQ(c.CountTainted(kTaintNodeUnreachable, kEffectNoSchedule), 20) << "NoSchedule is not "
                                                                             "rate-limited";
  EXPECT_EQ(c.controller->QueuedForTainting(ZoneOf("a")).size(), 20u);
}

TEST(ZoneRateTest, AllNodesSilentTaintNoneAndLoseTheirNoExecuteTaints) {
  Cluster c({}, /*start=*/false);
  CreateZone(c, "n", "a", 4);
  CreateZone(c, "m", "b", 2);
  c.Start();
  c.Silence("n0");
  c.AdvanceTo(At(c, 60));
  EXPECT_TRUE(c.HasTaint("n0", kTaintNodeUnreachable, kEffectNoExecute));
  // Everything else goes silent after its renewal at T0 + 60 s: Unknown at T0 + 115 s, when
  // every zone is down; the controller takes itself to be cut off and untaints every node.
  for (const char* n : {"n1", "n2", "n3", "m0", "m1"}) c.Silence(n);
  c.AdvanceTo(At(c, 110));
  EXPECT_TRUE(c.HasTaint("n0", kTaintNodeUnreachable, kEffectNoExecute));
  c.AdvanceTo(At(c, 115));
  EXPECT_EQ(c.CountTainted(kTaintNodeUnreachable, kEffectNoExecute), 0);
  EXPECT_EQ(c.controller->ZoneStateOf(ZoneOf("a")), ZoneState::kFullDisruption);
  EXPECT_EQ(c.controller->ZoneStateOf(ZoneOf("b")), ZoneState::kFullDisruption);
  EXPECT_EQ(c.controller->EvictionRateOf(ZoneOf("a")), 0.0f);
  EXPECT_EQ(c.controller->EvictionRateOf(ZoneOf("b")), 0.0f);
  c.AdvanceTo(At(c, 1000));
  EXPECT_EQ(c.CountTainted(kTaintNodeUnreachable, kEffectNoExecute), 0);
  EXPECT_EQ(c.CountTainted(kTaintNodeUnreachable, kEffectNoSchedule), 6);

  // One node back: the mode ends, every probe time restarts, and zone a (3 of 4 not Ready, not
  // large) stays stopped while zone b (no Ready node, not every zone) evicts again.
  c.Revive("n3");
  c.PostConditions("n3", {{"Ready", "True"}});
  c.AdvanceTo(At(c, 1005));
  EXPECT_EQ(c.controller->ProbeTimestamp("n0"), At(c, 1005));
  EXPECT_EQ(c.controller->ProbeTimestamp("m1"), At(c, 1005));
  EXPECT_EQ(c.controller->ZoneStateOf(ZoneOf("a")), ZoneState::kPartialDisruption);
  EXPECT_EQ(c.controller->EvictionRateOf(ZoneOf("a")), 0.0f);
  EXPECT_EQ(c.controller->ZoneStateOf(ZoneOf("b")), ZoneState::kFullDisruption);
  EXPECT_EQ(c.controller->EvictionRateOf(ZoneOf("b")), 0.1f);
  // Zone b's new bucket starts empty (the old one had no token): its first taint 10 s later.
  c.AdvanceTo(At(c, 1014.9));
  EXPECT_EQ(c.CountTainted(kTaintNodeUnreachable, kEffectNoExecute), 0);
  c.AdvanceTo(At(c, 1015));
  EXPECT_EQ(c.CountTainted(kTaintNodeUnreachable, kEffectNoExecute), 1);
  c.AdvanceTo(At(c, 1025));
  EXPECT_EQ(c.CountTainted(kTaintNodeUnreachable, kEffectNoExecute), 2);
  EXPECT_TRUE(c.HasTaint("m0", kTaintNodeUnreachable, kEffectNoExecute));
  EXPECT_TRUE(c.HasTaint("m1", kTaintNodeUnreachable, kEffectNoExecute));
}

TEST(ZoneRateTest, RecoveryRemovesTheTaints) {
  Cluster c({}, /*start=*/false);
  CreateZone(c, "n", "a", 4);
  c.Start();
  c.Silence("n0");
  c.AdvanceTo(At(c, 60));
  EXPECT_TRUE(c.HasTaint("n0", kTaintNodeUnreachable, kEffectNoSchedule));
  EXPECT_TRUE(c.HasTaint("n0", kTaintNodeUnreachable, kEffectNoExecute));
  c.AdvanceTo(At(c, 100));
  c.Revive("n0");
  c.PostConditions("n0", {{"Ready", "True"}});
  c.Settle();  // the NoSchedule pass answers the node change at once
  EXPECT_FALSE(c.HasTaint("n0", kTaintNodeUnreachable, kEffectNoSchedule));
  EXPECT_TRUE(c.HasTaint("n0", kTaintNodeUnreachable, kEffectNoExecute));
  c.AdvanceTo(At(c, 105));  // the next health pass
  EXPECT_TRUE(c.Taints("n0").empty());
  EXPECT_EQ(c.Condition("n0", "Ready")->status, "True");
  EXPECT_TRUE(c.controller->QueuedForTainting(ZoneOf("a")).empty());
  // Silent again later: tainted again (it left the queue when it recovered).
  c.Silence("n0");
  c.AdvanceTo(At(c, 300));
  EXPECT_TRUE(c.HasTaint("n0", kTaintNodeUnreachable, kEffectNoExecute));
}

TEST(ZoneRateTest, ExcludedNodesDoNotCountTowardsTheirZone) {
  // Three silent nodes of four would be a PartialDisruption of a small zone (stopped); labelled
  // node.kubernetes.io/exclude-disruption, they are left out and the zone stays Normal.
  Cluster c({}, /*start=*/false);
  c.CreateNode({.name = "ok", .zone = "a"});
  for (int i = 0; i < 3; ++i) {
    c.CreateNode(
        {.name = N("x", i), .zone = "a", .labels = {{std::string(kLabelExcludeDisruption), ""}}});
  }
  c.Start();
  for (int i = 0; i < 3; ++i) c.Silence(N("x", i));
  c.AdvanceTo(At(c, 80));
  EXPECT_EQ(c.controller->ZoneStateOf(ZoneOf("a")), ZoneState::kNormal);
  EXPECT_EQ(c.CountTainted(kTaintNodeUnreachable, kEffectNoExecute), 3);
}

// --- Writes that fail or race ------------------------------------------------------------------

TEST(FaultTest, AConcurrentForeignTaintIsKept) {
  // Upstream #128304: a taint another client adds between the controller's read and its write
  // must survive. The write carries the resourceVersion it was computed from, so it conflicts,
  // and the controller applies its change again to a fresh read 100 ms later.
  Cluster c({}, /*start=*/false);
  CreateZone(c, "n", "a", 4);
  c.Start();
  c.Silence("n0");
  auto racers = [&] {
    int n = 0;
    for (const Taint& t : c.Taints("n0")) n += t.key.starts_with("racer");
    return n;
  };
  c.AdvanceTo(At(c, 54));
  c.client->InjectTaintWriteFaults({Fault::kForeignTaint});  // the unreachable:NoSchedule write
  c.AdvanceTo(At(c, 55));
  EXPECT_EQ(racers(), 1);
  EXPECT_FALSE(c.HasTaint("n0", kTaintNodeUnreachable, kEffectNoSchedule));
  c.AdvanceTo(At(c, 55.1));
  EXPECT_EQ(racers(), 1);
  EXPECT_TRUE(c.HasTaint("n0", kTaintNodeUnreachable, kEffectNoSchedule));
  // The same for the NoExecute taint...
  c.client->InjectTaintWriteFaults({Fault::kForeignTaint});
  c.AdvanceTo(At(c, 60));
  EXPECT_EQ(racers(), 2);
  EXPECT_FALSE(c.HasTaint("n0", kTaintNodeUnreachable, kEffectNoExecute));
  c.AdvanceTo(At(c, 60.1));
  EXPECT_TRUE(c.HasTaint("n0", kTaintNodeUnreachable, kEffectNoExecute));
  EXPECT_EQ(racers(), 2);
  // ... and for their removal on recovery.
  c.AdvanceTo(At(c, 100));
  c.client->InjectTaintWriteFaults({Fault::kForeignTaint, Fault::kForeignTaint});
  c.Revive("n0");
  c.PostConditions("n0", {{"Ready", "True"}});
  c.AdvanceTo(At(c, 106));
  EXPECT_EQ(racers(), 4);
  EXPECT_EQ(c.Taints("n0").size(), 4u) << "only the racers' taints are left";
  EXPECT_EQ(c.client->PendingFaults(), 0u);
}

TEST(FaultTest, ConflictsAreRetriedAndErrorsWaitForTheNextToken) {
  Cluster c({}, /*start=*/false);
  CreateZone(c, "n", "a", 4);
  c.Start();
  c.Silence("n0");
  c.AdvanceTo(At(c, 54));
  // Four conflicts on the NoSchedule write: the fifth try (after 4 × 100 ms) lands.
  c.client->InjectTaintWriteFaults(
      {Fault::kConflict, Fault::kConflict, Fault::kConflict, Fault::kConflict});
  c.AdvanceTo(At(c, 55.3));
  EXPECT_FALSE(c.HasTaint("n0", kTaintNodeUnreachable, kEffectNoSchedule));
  c.AdvanceTo(At(c, 55.4));
  EXPECT_TRUE(c.HasTaint("n0", kTaintNodeUnreachable, kEffectNoSchedule));
  // An error on the NoExecute write: the node stays queued and is tried with the next token.
  c.client->InjectTaintWriteFaults({Fault::kError});
  c.AdvanceTo(At(c, 60));
  EXPECT_FALSE(c.HasTaint("n0", kTaintNodeUnreachable, kEffectNoExecute));
  EXPECT_EQ(c.controller->QueuedForTainting(ZoneOf("a")), std::vector<std::string>{"n0"});
  c.AdvanceTo(At(c, 69.9));
  EXPECT_FALSE(c.HasTaint("n0", kTaintNodeUnreachable, kEffectNoExecute));
  c.AdvanceTo(At(c, 70));
  EXPECT_TRUE(c.HasTaint("n0", kTaintNodeUnreachable, kEffectNoExecute));
}

TEST(FaultTest, FiveConflictsGiveUpAndTheNoScheduleTaintIsRetriedLater) {
  Cluster c;
  c.CreateNode({.name = "n"});
  c.Settle();
  c.client->InjectTaintWriteFaults(
      {Fault::kConflict, Fault::kConflict, Fault::kConflict, Fault::kConflict, Fault::kConflict});
  c.Cordon("n");
  c.Settle();  // the first try, now; four more 100 ms apart, then a backoff of 5 ms
  c.Advance(milliseconds(404));
  EXPECT_FALSE(c.HasTaint("n", kTaintNodeUnschedulable, kEffectNoSchedule));
  c.Advance(milliseconds(1));
  EXPECT_TRUE(c.HasTaint("n", kTaintNodeUnschedulable, kEffectNoSchedule));
  EXPECT_EQ(c.client->PendingFaults(), 0u);
}

TEST(FaultTest, AFailedStatusWriteIsRetriedOnAFreshRead) {
  Cluster c({}, /*start=*/false);
  CreateZone(c, "n", "a", 4);
  c.Start();
  c.Silence("n0");
  c.AdvanceTo(At(c, 54));
  c.client->InjectStatusWriteFaults({Fault::kConflict, Fault::kError});
  c.AdvanceTo(At(c, 55));
  EXPECT_EQ(c.Condition("n0", "Ready")->status, "True");
  c.AdvanceTo(At(c, 55.04));  // two retries, 20 ms apart
  EXPECT_EQ(c.Condition("n0", "Ready")->status, "Unknown");
  EXPECT_EQ(c.CountEvents("NodeNotReady", "Node n0 status is now: NodeNotReady"), 1);
}

TEST(FaultTest, AStatusThatCannotBeWrittenLeavesTheNodeOutOfThePass) {
  Cluster c({}, /*start=*/false);
  CreateZone(c, "n", "a", 4);
  c.Start();
  c.Silence("n0");
  c.AdvanceTo(At(c, 54));
  c.client->InjectStatusWriteFaults(std::vector<Fault>(6, Fault::kError));
  c.AdvanceTo(At(c, 60));
  EXPECT_EQ(c.Condition("n0", "Ready")->status, "True");
  EXPECT_FALSE(c.HasTaint("n0", kTaintNodeUnreachable, kEffectNoSchedule));
  // The pass gave up at T0 + 55.1 s (six tries, 20 ms apart); the next one starts 5 s later.
  c.AdvanceTo(At(c, 60.1));
  EXPECT_EQ(c.Condition("n0", "Ready")->status, "Unknown");
  EXPECT_EQ(c.client->PendingFaults(), 0u);
}

TEST(FaultTest, PodsThatCouldNotBeMarkedAreRetriedNextPass) {
  Cluster c({}, /*start=*/false);
  CreateZone(c, "n", "a", 4);
  c.CreatePod("p", "n0", "True");
  c.Start();
  c.Silence("n0");
  c.AdvanceTo(At(c, 54));
  c.client->InjectPodStatusFaults({Fault::kConflict});
  c.AdvanceTo(At(c, 55));
  EXPECT_EQ(c.PodCondition("p", "Ready")->status, "True");
  c.AdvanceTo(At(c, 60));
  EXPECT_EQ(c.PodCondition("p", "Ready")->status, "False");
}

}  // namespace
}  // namespace kt::controllers::nodelifecycle
