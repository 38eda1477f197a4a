// Conformance rows of spec/semantics.md §11.1–§11.4: toleration matching, numeric comparison,
// Taint.ToString / MatchTaint, FindMatchingUntoleratedTaint and GetMatchingTolerations.
// One parameterized test per row, named by its row id.
#include "core/taint.h"

#include <gtest/gtest.h>

#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace kt {
namespace {

Taint MakeTaint(std::string key, std::string value, std::string effect) {
  Taint t;
  t.key = std::move(key);
  t.value = std::move(value);
  t.effect = std::move(effect);
  return t;
}

Toleration Tol(std::string key, std::string op, std::string value, std::string effect,
               std::optional<int64_t> seconds = std::nullopt) {
  Toleration t;
  t.key = std::move(key);
  t.op = std::move(op);
  t.value = std::move(value);
  t.effect = std::move(effect);
  t.toleration_seconds = seconds;
  return t;
}

template <class Row>
std::string RowName(const ::testing::TestParamInfo<Row>& info) {
  return info.param.id;
}

// ---- §11.1 ToleratesTaint (kubernetes/api core/v1/toleration_test.go) ----------------------

enum class Gate { kOff, kOn, kAny };

struct ToleratesRow {
  std::string id;
  Toleration toleration;
  Taint taint;
  Gate gate;
  bool tolerated;
};
void PrintTo(const ToleratesRow& r, std::ostream* os) { *os << r.id; }

const std::vector<ToleratesRow> kToleratesRows = {
    {"TT1", Tol("foo", "Exists", "", "NoSchedule"), MakeTaint("foo", "", "NoSchedule"), Gate::kAny,
     true},
    {"TT2", Tol("foo", "Exists", "", "NoSchedule"), MakeTaint("foo", "bar", "NoSchedule"),
     Gate::kAny, true},
    {"TT3", Tol("", "Exists", "", "NoSchedule"), MakeTaint("foo", "bar", "NoSchedule"), Gate::kAny,
     true},
    {"TT4", Tol("foo", "Equal", "bar", "NoSchedule"), MakeTaint("foo", "bar", "NoSchedule"),
     Gate::kAny, true},
    {"TT5", Tol("foo", "Equal", "value1", "NoSchedule"), MakeTaint("foo", "value2", "NoSchedule"),
     Gate::kAny, false},
    {"TT6", Tol("foo", "Equal", "bar", "NoSchedule"), MakeTaint("foo", "bar", "NoExecute"),
     Gate::kAny, false},
    {"TT7", Tol("node.kubernetes.io/sla", "Gt", "950", "NoSchedule"),
     MakeTaint("node.kubernetes.io/sla", "800", "NoSchedule"), Gate::kOn, false},
    {"TT8", Tol("node.kubernetes.io/sla", "Gt", "750", "NoSchedule"),
     MakeTaint("node.kubernetes.io/sla", "950", "NoSchedule"), Gate::kOn, true},
    {"TT9", Tol("node.kubernetes.io/sla", "Lt", "800", "NoSchedule"),
     MakeTaint("node.kubernetes.io/sla", "950", "NoSchedule"), Gate::kOn, false},
    {"TT10", Tol("node.kubernetes.io/sla", "Lt", "950", "NoSchedule"),
     MakeTaint("node.kubernetes.io/sla", "800", "NoSchedule"), Gate::kOn, true},
    {"TT11", Tol("node.kubernetes.io/sla", "Gt", "950", "NoSchedule"),
     MakeTaint("node.kubernetes.io/sla", "950", "NoSchedule"), Gate::kOn, false},
    {"TT12", Tol("node.kubernetes.io/sla", "Gt", "950", "NoSchedule"),
     MakeTaint("node.kubernetes.io/sla", "high", "NoSchedule"), Gate::kOn, false},
    {"TT13", Tol("test-key", "Gt", "-100", "NoSchedule"),
     MakeTaint("test-key", "-200", "NoSchedule"), Gate::kOn, false},
    {"TT14", Tol("test-key", "Gt", "9223372036854775806", "NoSchedule"),
     MakeTaint("test-key", "100", "NoSchedule"), Gate::kOn, false},
    {"TD1", Tol("node.kubernetes.io/sla", "Gt", "750", "NoSchedule"),
     MakeTaint("node.kubernetes.io/sla", "950", "NoSchedule"), Gate::kOff, false},
    {"TD2", Tol("foo", "", "bar", ""), MakeTaint("foo", "bar", "NoExecute"), Gate::kAny, true},
    {"TD3", Tol("", "Exists", "", ""), MakeTaint("anything", "x", "PreferNoSchedule"), Gate::kAny,
     true},
    {"TD4", Tol("foo", "exists", "", ""), MakeTaint("foo", "", "NoSchedule"), Gate::kAny, false},
    {"TD5", Tol("", "Equal", "", ""), MakeTaint("x", "", "NoSchedule"), Gate::kAny, true},
    {"TD6", Tol("foo", "Exists", "", "NoSchedule"), MakeTaint("foo", "", ""), Gate::kAny, false},
    {"TD7", Tol("foo", "Gt", "950", ""), MakeTaint("foo", "9223372036854775808", "NoSchedule"),
     Gate::kOn, false},
    {"TD8", Tol("foo", "Lt", "5", ""), MakeTaint("foo", "-0", "NoSchedule"), Gate::kOn, false},
    {"TD9", Tol("foo", "Equal", "Bar", ""), MakeTaint("foo", "bar", "NoSchedule"), Gate::kAny,
     false},
};

class ToleratesTaintTest : public ::testing::TestWithParam<ToleratesRow> {};

TEST_P(ToleratesTaintTest, Row) {
  const ToleratesRow& r = GetParam();
  if (r.gate != Gate::kOff) {
    EXPECT_EQ(ToleratesTaint(r.toleration, r.taint, /*enable_comparison_operators=*/true),
              r.tolerated);
  }
  if (r.gate != Gate::kOn) {
    EXPECT_EQ(ToleratesTaint(r.toleration, r.taint, /*enable_comparison_operators=*/false),
              r.tolerated);
  }
}

INSTANTIATE_TEST_SUITE_P(Spec11_1, ToleratesTaintTest, ::testing::ValuesIn(kToleratesRows),
                         RowName<ToleratesRow>);

// ---- §11.2 compareNumericValues (kubernetes/api core/v1/toleration_test.go) ----------------

struct NumericRow {
  std::string id;
  std::string toleration_value;
  std::string taint_value;
  std::string op;
  bool result;
};
void PrintTo(const NumericRow& r, std::ostream* os) { *os << r.id; }

const std::vector<NumericRow> kNumericRows = {
    {"CN1", "100", "200", "Gt", true},
    {"CN2", "200", "100", "Gt", false},
    {"CN3", "100", "100", "Gt", false},
    {"CN4", "-100", "-50", "Gt", true},
    {"CN5", "-50", "-100", "Gt", false},
    {"CN6", "0", "1", "Gt", true},
    {"CN7", "9223372036854775806", "9223372036854775807", "Gt", true},
    {"CN8", "200", "100", "Lt", true},
    {"CN9", "100", "200", "Lt", false},
    {"CN10", "100", "100", "Lt", false},
    {"CN11", "-50", "-100", "Lt", true},
    {"CN12", "-100", "-50", "Lt", false},
    {"CN13", "0", "-1", "Lt", true},
    {"CN14", "abc", "100", "Gt", false},
    {"CN15", "", "100", "Gt", false},
    {"CN16", "0100", "200", "Gt", false},
    {"CN17", "+100", "200", "Gt", false},
    {"CN18", "100.5", "200", "Gt", false},
    {"CN19", "-", "100", "Gt", false},
    {"CN20", "100", "xyz", "Gt", false},
    {"CN21", "100", "", "Gt", false},
    {"CN22", "100", "0200", "Gt", false},
    {"CN23", "100", "+200", "Lt", false},
    {"CN24", "100", " 200 ", "Lt", false},
    {"CN25", "100", "100", "Equal", false},
    {"CN26", "100", "100", "Exists", false},
    {"CN27", "0", "0", "Gt", false},
    {"CN28", "0", "0", "Lt", false},
    {"CN29", "0", "9223372036854775807", "Gt", true},
    {"CN30", "0", "-9223372036854775808", "Lt", true},
};

class CompareNumericValuesTest : public ::testing::TestWithParam<NumericRow> {};

TEST_P(CompareNumericValuesTest, Row) {
  const NumericRow& r = GetParam();
  EXPECT_EQ(CompareNumericValues(r.toleration_value, r.taint_value, r.op), r.result);
  // Through the public matcher too, for the numeric operators (gate on, key and effect match).
  if (r.op == "Lt" || r.op == "Gt") {
    EXPECT_EQ(ToleratesTaint(Tol("k", r.op, r.toleration_value, "NoSchedule"),
                             MakeTaint("k", r.taint_value, "NoSchedule"), true),
              r.result);
  }
}

INSTANTIATE_TEST_SUITE_P(Spec11_2, CompareNumericValuesTest, ::testing::ValuesIn(kNumericRows),
                         RowName<NumericRow>);

// ---- §11.3 Taint.ToString and MatchTaint (kubernetes/api core/v1/taint_test.go) ------------

struct ToStringRow {
  std::string id;
  Taint taint;
  std::string want;
};
void PrintTo(const ToStringRow& r, std::ostream* os) { *os << r.id; }

const std::vector<ToStringRow> kToStringRows = {
    {"TS1", MakeTaint("foo", "bar", "NoSchedule"), "foo=bar:NoSchedule"},
    {"TS2", MakeTaint("foo", "", "NoSchedule"), "foo:NoSchedule"},
    {"TS3", MakeTaint("foo", "", ""), "foo"},
    {"TS4", MakeTaint("foo", "bar", ""), "foo=bar:"},
};

class TaintToStringTest : public ::testing::TestWithParam<ToStringRow> {};

TEST_P(TaintToStringTest, Row) { EXPECT_EQ(TaintToString(GetParam().taint), GetParam().want); }

INSTANTIATE_TEST_SUITE_P(Spec11_3, TaintToStringTest, ::testing::ValuesIn(kToStringRows),
                         RowName<ToStringRow>);

struct MatchTaintRow {
  std::string id;
  Taint a;
  Taint b;
  bool match;
};
void PrintTo(const MatchTaintRow& r, std::ostream* os) { *os << r.id; }

const std::vector<MatchTaintRow> kMatchTaintRows = {
    {"MT1", MakeTaint("foo", "bar", "NoSchedule"), MakeTaint("foo", "bar", "NoSchedule"), true},
    {"MT2", MakeTaint("foo", "bar", "NoSchedule"),
     MakeTaint("foo", "different-value", "NoSchedule"), true},
    {"MT3", MakeTaint("foo", "bar", "NoSchedule"), MakeTaint("different-key", "bar", "NoSchedule"),
     false},
    {"MT4", MakeTaint("foo", "bar", "NoSchedule"), MakeTaint("foo", "bar", "PreferNoSchedule"),
     false},
};

class MatchTaintTest : public ::testing::TestWithParam<MatchTaintRow> {};

TEST_P(MatchTaintTest, Row) {
  const MatchTaintRow& r = GetParam();
  EXPECT_EQ(MatchTaint(r.a, r.b), r.match);
  EXPECT_EQ(MatchTaint(r.b, r.a), r.match);
}

INSTANTIATE_TEST_SUITE_P(Spec11_3, MatchTaintTest, ::testing::ValuesIn(kMatchTaintRows),
                         RowName<MatchTaintRow>);

// ---- §11.4 FindMatchingUntoleratedTaint (component-helpers scheduling/corev1/helpers_test.go)

struct UntoleratedRow {
  std::string id;
  std::vector<Toleration> tolerations;
  std::vector<Taint> taints;
  TaintFilter filter;  // "all" and "nil" both keep every taint
  Gate gate;
  std::optional<Taint> untolerated;
};
void PrintTo(const UntoleratedRow& r, std::ostream* os) { *os << r.id; }

const std::vector<UntoleratedRow> kUntoleratedRows = {
    {"FU1", {}, {}, TaintFilter::kAll, Gate::kAny, std::nullopt},
    {"FU2",
     {Tol("foo", "Exists", "", "NoSchedule")},
     {},
     TaintFilter::kAll,
     Gate::kAny,
     std::nullopt},
    {"FU3",
     {Tol("foo", "Exists", "", "NoSchedule")},
     {MakeTaint("foo", "", "NoSchedule")},
     TaintFilter::kAll,
     Gate::kAny,
     std::nullopt},
    {"FU4",
     {Tol("foo", "Exists", "", "NoSchedule")},
     {MakeTaint("bar", "", "NoSchedule")},
     TaintFilter::kNone,
     Gate::kAny,
     std::nullopt},
    {"FU5",
     {Tol("foo", "Exists", "", "NoSchedule")},
     {MakeTaint("bar", "", "NoSchedule")},
     TaintFilter::kAll,
     Gate::kAny,
     MakeTaint("bar", "", "NoSchedule")},
    {"FU6",
     {Tol("foo", "Exists", "", "NoExecute")},
     {MakeTaint("foo", "", "NoExecute"), MakeTaint("bar", "", "NoSchedule")},
     TaintFilter::kNoExecute,
     Gate::kAny,
     std::nullopt},
    {"FU7",
     {Tol("node.kubernetes.io/sla", "Gt", "950", "NoSchedule")},
     {MakeTaint("node.kubernetes.io/sla", "800", "NoSchedule")},
     TaintFilter::kAll,
     Gate::kOn,
     MakeTaint("node.kubernetes.io/sla", "800", "NoSchedule")},
    {"FU8",
     {Tol("node.kubernetes.io/sla", "Gt", "750", "NoSchedule")},
     {MakeTaint("node.kubernetes.io/sla", "950", "NoSchedule")},
     TaintFilter::kAll,
     Gate::kOn,
     std::nullopt},
    {"FU9",
     {Tol("node.kubernetes.io/sla", "Lt", "800", "NoSchedule")},
     {MakeTaint("node.kubernetes.io/sla", "950", "NoSchedule")},
     TaintFilter::kAll,
     Gate::kOn,
     MakeTaint("node.kubernetes.io/sla", "950", "NoSchedule")},
    {"FU10",
     {Tol("node.kubernetes.io/sla", "Gt", "950", "NoSchedule")},
     {MakeTaint("node.kubernetes.io/sla", "high", "NoSchedule")},
     TaintFilter::kAll,
     Gate::kOn,
     MakeTaint("node.kubernetes.io/sla", "high", "NoSchedule")},
    {"FU11",
     {},
     {MakeTaint("a", "", "NoSchedule"), MakeTaint("b", "", "NoExecute")},
     TaintFilter::kAll,
     Gate::kAny,
     MakeTaint("a", "", "NoSchedule")},
};

class FindMatchingUntoleratedTaintTest : public ::testing::TestWithParam<UntoleratedRow> {};

TEST_P(FindMatchingUntoleratedTaintTest, Row) {
  const UntoleratedRow& r = GetParam();
  for (bool gate : {false, true}) {
    if ((r.gate == Gate::kOn && !gate) || (r.gate == Gate::kOff && gate)) continue;
    const Taint* got = FindMatchingUntoleratedTaint(r.taints, r.tolerations, r.filter, gate);
    if (!r.untolerated) {
      EXPECT_EQ(got, nullptr) << "gate=" << gate << " got " << TaintToString(*got);
    } else {
      ASSERT_NE(got, nullptr) << "gate=" << gate;
      EXPECT_EQ(*got, *r.untolerated);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Spec11_4, FindMatchingUntoleratedTaintTest,
                         ::testing::ValuesIn(kUntoleratedRows), RowName<UntoleratedRow>);

// ---- §11.4 GetMatchingTolerations and the eviction delay it implies (derived) --------------

// A, B, C of the GM table.
const Toleration kA = Tol("node.kubernetes.io/not-ready", "Exists", "", "NoExecute", 300);
const Toleration kB = Tol("", "Exists", "", "");
const Toleration kC = Tol("x", "Exists", "", "NoExecute", 60);

struct MatchingRow {
  std::string id;
  std::vector<Taint> taints;
  std::vector<Toleration> tolerations;
  // nullopt: not all tolerated (evict now); otherwise indices into `tolerations` of the used list.
  std::optional<std::vector<size_t>> used;
  // MinTolerationSeconds of the used list when all are tolerated: -1 never, else seconds.
  std::optional<int64_t> delay;
};
void PrintTo(const MatchingRow& r, std::ostream* os) { *os << r.id; }

const Taint kNotReadyNoExecute = MakeTaint("node.kubernetes.io/not-ready", "", "NoExecute");

const std::vector<MatchingRow> kMatchingRows = {
    {"GM1", {}, {}, std::vector<size_t>{}, std::nullopt},
    {"GM2", {kNotReadyNoExecute}, {}, std::nullopt, std::nullopt},
    {"GM3", {kNotReadyNoExecute}, {kA, kB}, std::vector<size_t>{0}, 300},
    {"GM4", {kNotReadyNoExecute}, {kB, kA}, std::vector<size_t>{0}, -1},
    {"GM5",
     {kNotReadyNoExecute, MakeTaint("x", "", "NoExecute")},
     {kA, kC},
     std::vector<size_t>{0, 1},
     60},
    {"GM6",
     {kNotReadyNoExecute, MakeTaint("y", "", "NoExecute")},
     {kA, kC},
     std::nullopt,
     std::nullopt},
    {"GM7",
     {MakeTaint("x", "", "NoExecute"), MakeTaint("x", "", "NoSchedule")},
     {kC},
     std::nullopt,
     std::nullopt},
};

class GetMatchingTolerationsTest : public ::testing::TestWithParam<MatchingRow> {};

TEST_P(GetMatchingTolerationsTest, Row) {
  const MatchingRow& r = GetParam();
  std::optional<std::vector<const Toleration*>> got =
      GetMatchingTolerations(r.taints, r.tolerations, false);
  ASSERT_EQ(got.has_value(), r.used.has_value());
  if (!got) return;
  ASSERT_EQ(got->size(), r.used->size());
  for (size_t i = 0; i < got->size(); ++i) {
    EXPECT_EQ((*got)[i], &r.tolerations[(*r.used)[i]]) << "taint " << i;
  }
  if (r.delay) {
    EXPECT_EQ(MinTolerationSeconds(*got), *r.delay);
  }
}

INSTANTIATE_TEST_SUITE_P(Spec11_4, GetMatchingTolerationsTest, ::testing::ValuesIn(kMatchingRows),
                         RowName<MatchingRow>);

// GM7, second half: the eviction controller first keeps only the NoExecute taints, and then C
// tolerates them all, with a 60 s delay.
TEST(GetMatchingTolerationsTest, GM7NoExecuteFilteredFirst) {
  std::vector<Taint> node_taints = {MakeTaint("x", "", "NoExecute"),
                                    MakeTaint("x", "", "NoSchedule")};
  std::vector<Taint> no_execute;
  for (const Taint& t : node_taints) {
    if (TaintFilterKeeps(TaintFilter::kNoExecute, t)) no_execute.push_back(t);
  }
  std::vector<Toleration> tolerations = {kC};
  std::optional<std::vector<const Toleration*>> got =
      GetMatchingTolerations(no_execute, tolerations, false);
  ASSERT_TRUE(got.has_value());
  ASSERT_EQ(got->size(), 1u);
  EXPECT_EQ((*got)[0], &tolerations[0]);
  EXPECT_EQ(MinTolerationSeconds(*got), 60);
}

// §6 / pitfall 6: any non-positive tolerationSeconds means "evict now", scanning in order.
TEST(MinTolerationSecondsTest, NonPositiveShortCircuitsToZero) {
  Toleration forever = Tol("", "Exists", "", "");
  Toleration zero = Tol("k", "Exists", "", "NoExecute", 0);
  Toleration negative = Tol("k", "Exists", "", "NoExecute", -5);
  Toleration ten = Tol("k", "Exists", "", "NoExecute", 10);
  std::vector<const Toleration*> a = {&ten, &zero};
  std::vector<const Toleration*> b = {&negative, &forever};
  std::vector<const Toleration*> c = {&forever, &forever};
  std::vector<const Toleration*> none;
  EXPECT_EQ(MinTolerationSeconds(a), 0);
  EXPECT_EQ(MinTolerationSeconds(b), 0);
  EXPECT_EQ(MinTolerationSeconds(c), -1);
  EXPECT_EQ(MinTolerationSeconds(none), 0);
}

TEST(ParseCanonicalInt64Test, Bounds) {
  EXPECT_EQ(ParseCanonicalInt64("0"), 0);
  EXPECT_EQ(ParseCanonicalInt64("-9223372036854775808"), INT64_MIN);
  EXPECT_EQ(ParseCanonicalInt64("9223372036854775807"), INT64_MAX);
  EXPECT_EQ(ParseCanonicalInt64("9223372036854775808"), std::nullopt);
  EXPECT_EQ(ParseCanonicalInt64("-9223372036854775809"), std::nullopt);
  EXPECT_EQ(ParseCanonicalInt64("-0"), std::nullopt);
  EXPECT_EQ(ParseCanonicalInt64("007"), std::nullopt);
  EXPECT_EQ(ParseCanonicalInt64(""), std::nullopt);
}

}  // namespace
}  // namespace kt
