// The node lifecycle controller's pieces on their own: zone states and rates (semantics.md §11.9
// ZS1-ZS7 and the rates of RQ1-RQ4), zone keys, the condition taints (NL rows that need no
// clock), taint changes, and the rate-limited queue (upstream rate_limited_queue_test.go).
#include <gtest/gtest.h>

#include "controllers/nodelifecycle/rate_limited_queue.h"
#include "controllers/nodelifecycle/taints.h"
#include "controllers/nodelifecycle/zones.h"

namespace kt::controllers::nodelifecycle {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

struct ZoneStateRow {
  const char* id;
  int ready;
  int not_ready;
  ZoneState want;
};

class ComputeZoneStateTest : public ::testing::TestWithParam<ZoneStateRow> {};

TEST_P(ComputeZoneStateTest, AsUpstream) {
  const ZoneStateRow& row = GetParam();
  EXPECT_EQ(ZoneStateName(ComputeZoneState(row.ready, row.not_ready, 0.55f)),
            ZoneStateName(row.want))
      << row.id;
}

INSTANTIATE_TEST_SUITE_P(Section11_9, ComputeZoneStateTest,
                         ::testing::Values(
                             // ZS1: an empty zone is Normal.
                             ZoneStateRow{"ZS1", 0, 0, ZoneState::kNormal},
                             // ZS2: no Ready node at all.
                             ZoneStateRow{"ZS2", 0, 1, ZoneState::kFullDisruption},
                             // ZS3: two not Ready are never a disruption (more than 2 are needed).
                             ZoneStateRow{"ZS3", 1, 2, ZoneState::kNormal},
                             // ZS4: 3/5 = 0.6 >= 0.55.
                             ZoneStateRow{"ZS4", 2, 3, ZoneState::kPartialDisruption},
                             // ZS5: 3/6 = 0.5 < 0.55.
                             ZoneStateRow{"ZS5", 3, 3, ZoneState::kNormal},
                             // ZS6: 11/20 is 0.55 exactly in float32: the threshold counts.
                             ZoneStateRow{"ZS6", 9, 11, ZoneState::kPartialDisruption},
                             // ZS7: 3/103.
                             ZoneStateRow{"ZS7", 100, 3, ZoneState::kNormal}),
                         [](const ::testing::TestParamInfo<ZoneStateRow>& info) {
                           return std::string(info.param.id);
                         });

struct RateRow {
  const char* id;
  ZoneState state;
  int zone_size;
  std::optional<float> want;
};

class ZoneEvictionRateTest : public ::testing::TestWithParam<RateRow> {};

TEST_P(ZoneEvictionRateTest, AsSetLimiterInZone) {
  const RateRow& row = GetParam();
  EXPECT_EQ(ZoneEvictionRate(row.state, row.zone_size, EvictionRates{}), row.want) << row.id;
}

INSTANTIATE_TEST_SUITE_P(
    Section11_9, ZoneEvictionRateTest,
    ::testing::Values(
        // RQ1: a healthy zone evicts at --node-eviction-rate, whatever its size.
        RateRow{"RQ1_small", ZoneState::kNormal, 3, 0.1f},
        RateRow{"RQ1_large", ZoneState::kNormal, 5000, 0.1f},
        // RQ2: a partially disrupted zone of 50 nodes (not more than the threshold) stops.
        RateRow{"RQ2", ZoneState::kPartialDisruption, 50, 0.0f},
        // RQ3: one of 51 goes on at --secondary-node-eviction-rate.
        RateRow{"RQ3", ZoneState::kPartialDisruption, 51, 0.01f},
        // RQ4: a fully disrupted zone among healthy ones keeps the healthy rate.
        RateRow{"RQ4", ZoneState::kFullDisruption, 7, 0.1f},
        // A zone's first state leaves its rate as it is.
        RateRow{"Initial", ZoneState::kInitial, 7, std::nullopt}),
    [](const ::testing::TestParamInfo<RateRow>& info) { return std::string(info.param.id); });

api::ObjectMeta Labels(std::initializer_list<std::pair<const char*, const char*>> labels) {
  api::ObjectMeta m;
  for (const auto& [k, v] : labels) m.labels.Set(k, v);
  return m;
}

TEST(ZoneKeyTest, RegionAndZoneJoinedByANul) {
  using namespace std::string_literals;
  EXPECT_EQ(ZoneKey(Labels({})), "");
  EXPECT_EQ(ZoneKey(Labels({{"topology.kubernetes.io/zone", "a"}})), ":\0:a"s);
  EXPECT_EQ(ZoneKey(Labels(
                {{"topology.kubernetes.io/region", "r"}, {"topology.kubernetes.io/zone", "a"}})),
            "r:\0:a"s);
  // The deprecated beta labels win where both are set (GetZoneKey).
  EXPECT_EQ(ZoneKey(Labels({{"failure-domain.beta.kubernetes.io/zone", "old"},
                            {"topology.kubernetes.io/zone", "new"}})),
            ":\0:old"s);
  EXPECT_EQ(ZoneKey(Labels({{"topology.kubernetes.io/zone", ""}})), "");
}

// --- Condition taints ------------------------------------------------------------------------

api::Condition Cond(std::string type, std::string status) {
  api::Condition c;
  c.type = std::move(type);
  c.status = std::move(status);
  return c;
}

Taint NoSchedule(std::string_view key) {
  return Taint{std::string(key), "", std::string(kEffectNoSchedule), std::nullopt};
}

std::vector<std::string> Keys(const std::vector<Taint>& taints) {
  std::vector<std::string> out;
  for (const Taint& t : taints) out.push_back(t.key + ":" + t.effect);
  return out;
}

struct NoScheduleRow {
  const char* id;
  std::vector<api::Condition> conditions;
  bool unschedulable;
  std::vector<std::string> want;  // key:effect, in order
};

class NoScheduleTaintsTest : public ::testing::TestWithParam<NoScheduleRow> {};

TEST_P(NoScheduleTaintsTest, FromConditionsAndCordon) {
  const NoScheduleRow& row = GetParam();
  api::Node n;
  n.status.conditions = row.conditions;
  n.spec.unschedulable = row.unschedulable;
  EXPECT_EQ(Keys(NoScheduleTaints(n)), row.want) << row.id;
}

INSTANTIATE_TEST_SUITE_P(
    Section11_9, NoScheduleTaintsTest,
    ::testing::Values(
        NoScheduleRow{"NL1", {Cond("Ready", "True"), Cond("MemoryPressure", "False")}, false, {}},
        NoScheduleRow{
            "NL2", {Cond("Ready", "False")}, false, {"node.kubernetes.io/not-ready:NoSchedule"}},
        NoScheduleRow{"NL3",
                      {Cond("Ready", "Unknown")},
                      false,
                      {"node.kubernetes.io/unreachable:NoSchedule"}},
        NoScheduleRow{
            "NL4",
            {Cond("Ready", "True"), Cond("MemoryPressure", "True"), Cond("DiskPressure", "True")},
            false,
            {"node.kubernetes.io/memory-pressure:NoSchedule",
             "node.kubernetes.io/disk-pressure:NoSchedule"}},
        NoScheduleRow{
            "NL5", {Cond("Ready", "True")}, true, {"node.kubernetes.io/unschedulable:NoSchedule"}},
        NoScheduleRow{"NL9",
                      {Cond("Ready", "True"), Cond("NetworkUnavailable", "True"),
                       Cond("PIDPressure", "True")},
                      false,
                      {"node.kubernetes.io/network-unavailable:NoSchedule",
                       "node.kubernetes.io/pid-pressure:NoSchedule"}},
        // A pressure condition that is Unknown calls for nothing; the unschedulable taint
        // comes last.
        NoScheduleRow{"UnknownPressure",
                      {Cond("DiskPressure", "Unknown"), Cond("Ready", "False")},
                      true,
                      {"node.kubernetes.io/not-ready:NoSchedule",
                       "node.kubernetes.io/unschedulable:NoSchedule"}}),
    [](const ::testing::TestParamInfo<NoScheduleRow>& info) { return std::string(info.param.id); });

TEST(NoScheduleTaintChangeTest, TouchesOnlyTheSevenKeysWithNoSchedule) {
  api::Node n;
  n.status.conditions = {Cond("Ready", "True"), Cond("MemoryPressure", "True")};
  n.spec.taints = {
      Taint{"foo", "bar", "NoSchedule", std::nullopt},                             // NL8: foreign
      NoSchedule(kTaintNodeDiskPressure),                                          // stale: removed
      Taint{std::string(kTaintNodeNotReady), "", "NoExecute", std::nullopt},       // other effect
      Taint{std::string(kTaintNodeOutOfService), "", "NoSchedule", std::nullopt},  // not managed
  };
  const TaintChange c = NoScheduleTaintChange(n);
  EXPECT_EQ(Keys(c.add), std::vector<std::string>{"node.kubernetes.io/memory-pressure:NoSchedule"});
  EXPECT_EQ(Keys(c.remove),
            std::vector<std::string>{"node.kubernetes.io/disk-pressure:NoSchedule"});
  n.spec.taints = {NoSchedule(kTaintNodeMemoryPressure)};
  EXPECT_TRUE(NoScheduleTaintChange(n).empty());
}

TEST(ApplyTaintChangeTest, AddsReplacesAndRemovesByKeyAndEffect) {
  const Taint foreign{"foo", "bar", "NoSchedule", std::nullopt};
  const Taint unreachable{std::string(kTaintNodeUnreachable), "", "NoExecute",
                          "2026-01-01T00:00:00Z"};
  Taint not_ready = NotReadyNoExecute();
  not_ready.time_added = "2026-01-01T00:01:00Z";
  // A swap: the new taint is appended, the old one goes, the foreign one stays where it was.
  auto next = ApplyTaintChange({foreign, unreachable}, {{not_ready}, {UnreachableNoExecute()}});
  ASSERT_TRUE(next);
  EXPECT_EQ(*next, (std::vector<Taint>{foreign, not_ready}));
  // Already there with the same value: no change, and its timeAdded stays.
  EXPECT_FALSE(ApplyTaintChange({foreign, not_ready}, {{NotReadyNoExecute()}, {}}));
  // Another value: replaced in place.
  Taint valued = NotReadyNoExecute();
  valued.value = "x";
  next = ApplyTaintChange({valued, foreign}, {{not_ready}, {}});
  ASSERT_TRUE(next);
  EXPECT_EQ(*next, (std::vector<Taint>{not_ready, foreign}));
  // Nothing to remove: no change.
  EXPECT_FALSE(ApplyTaintChange({foreign}, {{}, {UnreachableNoExecute(), NotReadyNoExecute()}}));
  // Every taint of the key and effect goes.
  next = ApplyTaintChange({unreachable, foreign, unreachable}, {{}, {UnreachableNoExecute()}});
  ASSERT_TRUE(next);
  EXPECT_EQ(*next, std::vector<Taint>{foreign});
}

TEST(NoExecuteChangeTest, TheTaintsMirrorReady) {
  std::optional<TaintChange> c = NoExecuteChange("False", "2026-01-01T00:00:00Z");
  ASSERT_TRUE(c);
  EXPECT_EQ(Keys(c->add), std::vector<std::string>{"node.kubernetes.io/not-ready:NoExecute"});
  EXPECT_EQ(c->add[0].time_added, "2026-01-01T00:00:00Z");
  EXPECT_EQ(Keys(c->remove), std::vector<std::string>{"node.kubernetes.io/unreachable:NoExecute"});
  c = NoExecuteChange("Unknown", "t");
  ASSERT_TRUE(c);
  EXPECT_EQ(Keys(c->add), std::vector<std::string>{"node.kubernetes.io/unreachable:NoExecute"});
  EXPECT_EQ(Keys(c->remove), std::vector<std::string>{"node.kubernetes.io/not-ready:NoExecute"});
  EXPECT_FALSE(NoExecuteChange("True", "t"));
  EXPECT_FALSE(NoExecuteChange("", "t"));
}

// --- RateLimitedTimedQueue (upstream rate_limited_queue_test.go) -------------------------------

// Upstream's tests use an always-allowing limiter; here a bucket of 1000 qps, with the clock
// moved one token on before each step.
std::vector<std::string> TryAll(client::SimulatedClock& clock, RateLimitedTimedQueue& q,
                                const std::function<bool(const RateLimitedTimedQueue::Value&)>& fn,
                                client::Duration retry = {}) {
  std::vector<std::string> order;
  for (int i = 0; i < 100; ++i) {
    clock.Advance(milliseconds(1));
    std::optional<RateLimitedTimedQueue::Value> v = q.Next();
    if (!v) break;
    order.push_back(v->node);
    q.Done(*v, fn(*v), retry);
  }
  return order;
}

TEST(RateLimitedTimedQueueTest, AddKeepsOrderAndDeduplicates) {
  client::SimulatedClock clock;
  RateLimitedTimedQueue q(&clock, 1000);
  EXPECT_TRUE(q.Add("first", "11111"));
  EXPECT_TRUE(q.Add("second", "22222"));
  EXPECT_TRUE(q.Add("third", "33333"));
  EXPECT_FALSE(q.Add("second", "22222"));
  EXPECT_EQ(q.QueuedNodes(), (std::vector<std::string>{"first", "second", "third"}));
}

TEST(RateLimitedTimedQueueTest, RemoveFromAnyPlace) {
  for (const char* removed : {"first", "second", "third"}) {
    client::SimulatedClock clock;
    RateLimitedTimedQueue q(&clock, 1000);
    q.Add("first", "1");
    q.Add("second", "2");
    q.Add("third", "3");
    EXPECT_TRUE(q.Remove(removed));
    EXPECT_FALSE(q.Known(removed));
    EXPECT_EQ(q.size(), 2u);
    EXPECT_FALSE(q.Remove(removed));
  }
}

TEST(RateLimitedTimedQueueTest, ProcessedItemsStayKnownUntilRemoved) {
  // TestTry and TestAddAfterTry.
  client::SimulatedClock clock;
  RateLimitedTimedQueue q(&clock, 1000);
  q.Add("first", "1");
  q.Add("second", "2");
  q.Add("third", "3");
  q.Remove("second");
  EXPECT_EQ(TryAll(clock, q, [](const auto&) { return true; }),
            (std::vector<std::string>{"first", "third"}));
  EXPECT_TRUE(q.empty());
  EXPECT_FALSE(q.Add("first", "1"));  // processed once: not again until removed
  EXPECT_TRUE(TryAll(clock, q, [](const auto&) { return true; }).empty());
  q.Remove("first");
  EXPECT_TRUE(q.Add("first", "1"));
}

TEST(RateLimitedTimedQueueTest, AFailedItemIsDueAgainAfterItsWait) {
  // TestTryOrdering: "second" fails once and comes back after the others.
  client::SimulatedClock clock;
  RateLimitedTimedQueue q(&clock, 1000);
  q.Add("first", "1");
  q.Add("second", "2");
  q.Add("third", "3");
  bool failed = false;
  const auto order = TryAll(
      clock, q,
      [&](const RateLimitedTimedQueue::Value& v) {
        if (v.node != "second" || failed) return true;
        failed = true;
        return false;
      },
      milliseconds(1));
  EXPECT_EQ(order, (std::vector<std::string>{"first", "second", "third", "second"}));
}

TEST(RateLimitedTimedQueueTest, RemovedWhileProcessingIsNotRetried) {
  // TestTryRemovingWhileTry.
  client::SimulatedClock clock;
  RateLimitedTimedQueue q(&clock, 1000);
  q.Add("first", "1");
  q.Add("second", "2");
  q.Add("third", "3");
  const auto order = TryAll(clock, q, [&](const RateLimitedTimedQueue::Value& v) {
    if (v.node != "second") return true;
    q.Remove("second");
    return false;
  });
  EXPECT_EQ(order, (std::vector<std::string>{"first", "second", "third"}));
}

TEST(RateLimitedTimedQueueTest, OneTokenAtATimeAndATokenTakenEvenWhenNothingIsDue) {
  client::SimulatedClock clock;
  const client::Time t0 = clock.Now();
  RateLimitedTimedQueue q(&clock, 0.1f);
  EXPECT_EQ(q.NextTokenAt(), client::Time::max());  // empty
  q.Add("a", "1");
  q.Add("b", "2");
  EXPECT_EQ(q.NextTokenAt(), t0);
  auto v = q.Next();
  ASSERT_TRUE(v);
  EXPECT_EQ(v->node, "a");
  q.Done(*v, false, milliseconds(50));  // "a" is due again 50 ms (and 1 ns) from now
  EXPECT_FALSE(q.Next());               // no token
  // 0.1f in float32 is a little more than 0.1: a token takes 9.99999985 s.
  const client::Time next = q.NextTokenAt();
  EXPECT_GT(next, t0 + seconds(10) - milliseconds(1));
  EXPECT_LE(next, t0 + seconds(10));
  clock.AdvanceTo(next);
  v = q.Next();
  ASSERT_TRUE(v);
  EXPECT_EQ(v->node, "b");  // due before the retried "a"
}

TEST(RateLimitedTimedQueueTest, SwapLimiter) {
  client::SimulatedClock clock;
  RateLimitedTimedQueue q(&clock, 0.1f);
  q.Add("a", "1");
  q.SwapLimiter(0);
  EXPECT_EQ(q.qps(), 0.0f);
  EXPECT_EQ(q.NextTokenAt(), client::Time::max());
  EXPECT_FALSE(q.Next());
  // From a limiter with no token left, the new bucket starts empty (upstream drains it).
  q.SwapLimiter(5.5f);
  EXPECT_EQ(q.qps(), 5.5f);
  EXPECT_FALSE(q.Next());
  clock.Advance(milliseconds(182));
  EXPECT_TRUE(q.Next());
  // From one that had its token, the new bucket starts full.
  RateLimitedTimedQueue full(&clock, 0.1f);
  full.Add("a", "1");
  full.SwapLimiter(0.01f);
  EXPECT_TRUE(full.Next());
  // The same rate: the bucket stays (and keeps its state).
  RateLimitedTimedQueue same(&clock, 0.1f);
  same.Add("a", "1");
  ASSERT_TRUE(same.Next());
  same.SwapLimiter(0.1f);
  EXPECT_FALSE(same.Next());
}

}  // namespace
}  // namespace kt::controllers::nodelifecycle
