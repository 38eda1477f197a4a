// --feature-gates parsing, with the messages of component-base featuregate (Set / SetFromMap).
// Rows are ours (FG*); the spec has no table for them.
#include "core/feature_gates.h"

#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

namespace kt {
namespace {

struct GatesRow {
  std::string id;
  std::string spec;
  bool initial;       // the gate before parsing
  std::string error;  // "" = accepted
  bool enabled;       // the gate after parsing (unchanged on error)
};
void PrintTo(const GatesRow& r, std::ostream* os) { *os << r.id; }

const std::vector<GatesRow> kGatesRows = {
    {"FG1", "", false, "", false},
    {"FG2", "TaintTolerationComparisonOperators=true", false, "", true},
    {"FG3", "TaintTolerationComparisonOperators=false", true, "", false},
    {"FG4", " TaintTolerationComparisonOperators = T ", false, "", true},
    {"FG5", "TaintTolerationComparisonOperators=1,", false, "", true},
    {"FG6", "Foo=true", false, "unrecognized feature gate: Foo", false},
    {"FG7", "TaintTolerationComparisonOperators", false,
     "missing bool value for TaintTolerationComparisonOperators", false},
    {"FG8", "TaintTolerationComparisonOperators=yes", false,
     "invalid value of TaintTolerationComparisonOperators=yes, err: strconv.ParseBool: parsing "
     "\"yes\": invalid syntax",
     false},
    // Every item is parsed before names are checked, so the bad bool wins over the unknown name.
    {"FG9", "Foo=true,TaintTolerationComparisonOperators=maybe", false,
     "invalid value of TaintTolerationComparisonOperators=maybe, err: strconv.ParseBool: parsing "
     "\"maybe\": invalid syntax",
     false},
    // All or nothing: a later error leaves the earlier item unapplied.
    {"FG10", "TaintTolerationComparisonOperators=true,Foo=false", false,
     "unrecognized feature gate: Foo", false},
    {"FG11", "AllAlpha=true", false, "", true},
    {"FG12", "AllAlpha=true,TaintTolerationComparisonOperators=false", false, "", false},
    {"FG13", "TaintTolerationComparisonOperators=false,AllAlpha=true", false, "", false},
    {"FG14", "AllBeta=false", true, "", true},
    {"FG15", " ", false, "missing bool value for ", false},
};

class ParseFeatureGatesTest : public ::testing::TestWithParam<GatesRow> {};

TEST_P(ParseFeatureGatesTest, Row) {
  const GatesRow& r = GetParam();
  FeatureGates gates;
  gates.taint_toleration_comparison_operators = r.initial;
  Status s = ParseFeatureGates(r.spec, gates);
  EXPECT_EQ(s.message(), r.error);
  if (!r.error.empty()) {
    EXPECT_EQ(s.code(), StatusCode::kBadRequest);
  }
  EXPECT_EQ(gates.taint_toleration_comparison_operators, r.enabled);
}

INSTANTIATE_TEST_SUITE_P(FeatureGates, ParseFeatureGatesTest, ::testing::ValuesIn(kGatesRows),
                         [](const ::testing::TestParamInfo<GatesRow>& info) {
                           return info.param.id;
                         });

TEST(FeatureGatesTest, DefaultIsOff) {
  // KEP-5471: alpha in 1.35, default off.
  EXPECT_FALSE(FeatureGates{}.taint_toleration_comparison_operators);
}

}  // namespace
}  // namespace kt
