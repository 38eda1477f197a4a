// Conformance rows of spec/semantics.md §11.6 (node taints N*, tolerations T*, pod updates U*),
// plus the field-error wire format of §4.1 and the name helpers of §4.2.
// Upstream: k/k pkg/apis/core/validation/validation.go (v1.35), apimachinery
// pkg/util/validation/field/errors.go and pkg/api/validate/content/*.go (release-1.35).
#include "core/validation.h"

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

std::vector<std::string> Strings(const FieldErrorList& errs) {
  std::vector<std::string> out;
  for (const FieldError& e : errs) out.push_back(e.ToString());
  return out;
}

template <class Row>
std::string RowName(const ::testing::TestParamInfo<Row>& info) {
  return info.param.id;
}

// Upstream message fragments (≥1.35 wording), spelled out once.
const std::string kNameRegex =
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used "
    "for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const std::string kLabelKeyRegex =
    "a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start "
    "and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex "
    "used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS "
    "subdomain prefix and '/' (e.g. 'example.com/MyName')";
const std::string kLabelValueRegex =
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const std::string kPrefixRegex =
    "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
    "characters, '-' or '.', and must start and end with an alphanumeric character (e.g. "
    "'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const std::string kEffects =
    "supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"";
const std::string kKeyEmpty =
    "operator must be Exists when `key` is empty, which means \"match all values and all keys\"";
const std::string kSecondsNeedNoExecute =
    "effect must be 'NoExecute' when `tolerationSeconds` is set";
const std::string kExistsValue = "value must be empty when `operator` is 'Exists'";
const std::string kForbiddenUpdate =
    "spec.tolerations: Forbidden: existing toleration can not be modified except its "
    "tolerationSeconds";

const std::string k64a(64, 'a');

// A DNS subdomain of `n` characters: 63-character labels joined by dots.
std::string Subdomain(size_t n) {
  std::string out;
  while (out.size() < n) {
    if (!out.empty()) out += '.';
    out += std::string(std::min<size_t>(63, n - out.size()), 'a');
  }
  return out;
}

// ---- §11.6 node taints ---------------------------------------------------------------------

struct NodeTaintRow {
  std::string id;
  std::vector<Taint> taints;
  std::vector<std::string> errors;  // exact "<field>: <body>", in order
};
void PrintTo(const NodeTaintRow& r, std::ostream* os) { *os << r.id; }

Taint WithTimeAdded(Taint t, std::string time) {
  t.time_added = std::move(time);
  return t;
}

const std::vector<NodeTaintRow> kNodeTaintRows = {
    {"N1", {MakeTaint("GPU", "true", "NoSchedule")}, {}},
    {"N2",
     {MakeTaint("", "special-user-1", "NoSchedule")},
     {"metadata.taints[0].key: Invalid value: \"\": name part must be non-empty",
      "metadata.taints[0].key: Invalid value: \"\": " + kNameRegex}},
    {"N3",
     {MakeTaint("NoUppercaseOrSpecialCharsLike=Equals", "special-user-1", "NoSchedule")},
     {"metadata.taints[0].key: Invalid value: \"NoUppercaseOrSpecialCharsLike=Equals\": " +
      kNameRegex}},
    {"N4",
     {MakeTaint("dedicated", "some\\bad\\value", "NoSchedule")},
     {"metadata.taints[0].value: Invalid value: \"some\\\\bad\\\\value\": " + kLabelValueRegex}},
    {"N5",
     {MakeTaint("dedicated", "special-user-3", "")},
     {"metadata.taints[0].effect: Required value"}},
    {"N6",
     {MakeTaint("dedicated", "special-user-3", "NoScheduleNoAdmit")},
     {"metadata.taints[0].effect: Unsupported value: \"NoScheduleNoAdmit\": " + kEffects}},
    {"N7",
     {MakeTaint("dedicated", "special-user-1", "NoSchedule"),
      MakeTaint("dedicated", "special-user-2", "NoSchedule")},
     {"metadata.taints[1]: Duplicate value: "
      "{\"Key\":\"dedicated\",\"Value\":\"special-user-2\",\"Effect\":\"NoSchedule\","
      "\"TimeAdded\":null}: taints must be unique by key and effect pair"}},
    {"N8",
     {MakeTaint("dedicated", "a", "NoSchedule"), MakeTaint("dedicated", "a", "NoExecute")},
     {}},
    {"N9",
     {MakeTaint("a", "", "NoSchedule"), MakeTaint("a", "", "NoSchedule"),
      MakeTaint("a", "", "NoSchedule")},
     {"metadata.taints[1]: Duplicate value: "
      "{\"Key\":\"a\",\"Value\":\"\",\"Effect\":\"NoSchedule\",\"TimeAdded\":null}: taints must "
      "be unique by key and effect pair",
      "metadata.taints[2]: Duplicate value: "
      "{\"Key\":\"a\",\"Value\":\"\",\"Effect\":\"NoSchedule\",\"TimeAdded\":null}: taints must "
      "be unique by key and effect pair"}},
    {"N10",
     {MakeTaint("k", k64a, "NoSchedule")},
     {"metadata.taints[0].value: Invalid value: \"" + k64a + "\": must be no more than 63 bytes"}},
    {"N11",
     {MakeTaint("example.com/", "x", "NoSchedule")},
     {"metadata.taints[0].key: Invalid value: \"example.com/\": name part must be non-empty",
      "metadata.taints[0].key: Invalid value: \"example.com/\": " + kNameRegex}},
    {"N12",
     {MakeTaint("/foo", "", "NoSchedule")},
     {"metadata.taints[0].key: Invalid value: \"/foo\": prefix part must be non-empty"}},
    {"N13",
     {MakeTaint("a/b/c", "", "NoSchedule")},
     {"metadata.taints[0].key: Invalid value: \"a/b/c\": " + kLabelKeyRegex}},
    {"N14",
     {MakeTaint("", "", "")},
     {"metadata.taints[0].key: Invalid value: \"\": name part must be non-empty",
      "metadata.taints[0].key: Invalid value: \"\": " + kNameRegex,
      "metadata.taints[0].effect: Required value"}},
    {"N15", {WithTimeAdded(MakeTaint("k", "v", "NoExecute"), "1999-01-01T00:00:00Z")}, {}},
    {"N16",
     {MakeTaint("Example.com/foo", "", "NoSchedule")},
     {"metadata.taints[0].key: Invalid value: \"Example.com/foo\": " + kPrefixRegex}},
    {"N17",
     {MakeTaint(k64a, "", "NoSchedule")},
     {"metadata.taints[0].key: Invalid value: \"" + k64a +
      "\": name part must be no more than 63 bytes"}},
    {"N18",
     {MakeTaint(Subdomain(254) + "/a", "", "NoSchedule")},
     {"metadata.taints[0].key: Invalid value: \"" + Subdomain(254) +
      "/a\": prefix part must be no more than 253 bytes"}},
};

class ValidateNodeTaintsTest : public ::testing::TestWithParam<NodeTaintRow> {};

TEST_P(ValidateNodeTaintsTest, Row) {
  const NodeTaintRow& r = GetParam();
  FieldErrorList errs = ValidateNodeTaints(r.taints, "metadata.taints");
  EXPECT_EQ(Strings(errs), r.errors);
}

INSTANTIATE_TEST_SUITE_P(Spec11_6, ValidateNodeTaintsTest, ::testing::ValuesIn(kNodeTaintRows),
                         RowName<NodeTaintRow>);

// N18, first half: a prefix of exactly 253 characters is fine.
TEST(ValidateNodeTaintsTest, N18PrefixOf253IsValid) {
  ASSERT_EQ(Subdomain(253).size(), 253u);
  std::vector<Taint> taints = {MakeTaint(Subdomain(253) + "/a", "", "NoSchedule")};
  EXPECT_TRUE(ValidateNodeTaints(taints, "metadata.taints").empty());
}

// The API response for N7 and N14 (§4.1): `Node "<name>" is invalid: ...`, 422, reasons.
TEST(ValidateNodeTaintsTest, InvalidNodeStatus) {
  std::vector<Taint> n14 = {MakeTaint("", "", "")};
  FieldErrorList errs = ValidateNodeTaints(n14, "metadata.taints");
  Status s = InvalidObjectStatus("Node", "node1", errs);
  EXPECT_EQ(s.code(), StatusCode::kInvalid);
  EXPECT_EQ(HttpCode(s.code()), 422);
  EXPECT_EQ(s.message(),
            "Node \"node1\" is invalid: [metadata.taints[0].key: Invalid value: \"\": name part "
            "must be non-empty, metadata.taints[0].key: Invalid value: \"\": " +
                kNameRegex + ", metadata.taints[0].effect: Required value]");
  ASSERT_EQ(errs.size(), 3u);
  EXPECT_EQ(errs[0].Reason(), "FieldValueInvalid");
  EXPECT_EQ(errs[0].field, "metadata.taints[0].key");
  EXPECT_EQ(errs[0].ErrorBody(), "Invalid value: \"\": name part must be non-empty");
  EXPECT_EQ(errs[2].Reason(), "FieldValueRequired");
  EXPECT_EQ(errs[2].field, "metadata.taints[0].effect");

  std::vector<Taint> n7 = {MakeTaint("dedicated", "special-user-1", "NoSchedule"),
                           MakeTaint("dedicated", "special-user-2", "NoSchedule")};
  FieldErrorList dup = ValidateNodeTaints(n7, "metadata.taints");
  ASSERT_EQ(dup.size(), 1u);
  EXPECT_EQ(dup[0].Reason(), "FieldValueDuplicate");
  EXPECT_EQ(InvalidObjectMessage("Node", "node1", dup),
            "Node \"node1\" is invalid: metadata.taints[1]: Duplicate value: "
            "{\"Key\":\"dedicated\",\"Value\":\"special-user-2\",\"Effect\":\"NoSchedule\","
            "\"TimeAdded\":null}: taints must be unique by key and effect pair");
}

// Upstream keeps one uniqueness set; long lists must behave exactly like short ones.
TEST(ValidateNodeTaintsTest, DuplicatesInLongList) {
  std::vector<Taint> taints;
  for (int i = 0; i < 40; ++i) {
    std::string key = "k";
    key += std::to_string(i % 20);
    taints.push_back(MakeTaint(key, "", "NoSchedule"));
  }
  FieldErrorList errs = ValidateNodeTaints(taints, "spec.taints");
  ASSERT_EQ(errs.size(), 20u);
  EXPECT_EQ(errs.front().field, "spec.taints[20]");
  EXPECT_EQ(errs.back().field, "spec.taints[39]");
}

// ---- §11.6 tolerations ---------------------------------------------------------------------

enum class Gates { kOff, kOn };

struct TolerationRow {
  std::string id;
  Toleration toleration;
  Gates gates;
  std::vector<Toleration> old;  // the old pod's tolerations (update); empty on create
  std::vector<std::string> errors;
};
void PrintTo(const TolerationRow& r, std::ostream* os) { *os << r.id; }

const std::string kSla = "node.kubernetes.io/sla";

const std::vector<TolerationRow> kTolerationRows = {
    {"T1", Tol("foo", "Exists", "", "NoSchedule"), Gates::kOff, {}, {}},
    {"T2", Tol("", "Exists", "", ""), Gates::kOff, {}, {}},
    {"T3", Tol("foo", "Equal", "bar", "NoSchedule"), Gates::kOff, {}, {}},
    {"T4", Tol("foo", "", "bar", ""), Gates::kOff, {}, {}},
    {"T5", Tol("foo", "Exists", "", "NoExecute", 0), Gates::kOff, {}, {}},
    {"T6", Tol("foo", "Exists", "", "NoExecute", -5), Gates::kOff, {}, {}},
    {"T7",
     Tol("nospecialchars^=@", "Equal", "bar", "NoSchedule"),
     Gates::kOff,
     {},
     {"spec.tolerations[0].key: Invalid value: \"nospecialchars^=@\": " + kNameRegex}},
    {"T8",
     Tol("foo", "In", "bar", "NoSchedule"),
     Gates::kOff,
     {},
     {"spec.tolerations[0].operator: Unsupported value: \"In\": supported values: \"Equal\", "
      "\"Exists\""}},
    {"T9",
     Tol("foo", "Exists", "bar", "NoSchedule"),
     Gates::kOff,
     {},
     {"spec.tolerations[0].operator: Invalid value: \"bar\": " + kExistsValue}},
    {"T10",
     Tol("", "Equal", "bar", "NoSchedule"),
     Gates::kOff,
     {},
     {"spec.tolerations[0].operator: Invalid value: \"Equal\": " + kKeyEmpty}},
    {"T11",
     Tol("node.kubernetes.io/not-ready", "Exists", "", "NoSchedule", 20),
     Gates::kOff,
     {},
     {"spec.tolerations[0].effect: Invalid value: \"NoSchedule\": " + kSecondsNeedNoExecute}},
    {"T12",
     Tol("foo", "Exists", "", "", 20),
     Gates::kOff,
     {},
     {"spec.tolerations[0].effect: Invalid value: \"\": " + kSecondsNeedNoExecute}},
    {"T13",
     Tol("foo", "Equal", "-bad-", "NoSchedule"),
     Gates::kOff,
     {},
     {"spec.tolerations[0].operator: Invalid value: \"-bad-\": " + kLabelValueRegex}},
    {"T14",
     Tol("foo", "Equal", k64a, "NoSchedule"),
     Gates::kOff,
     {},
     {"spec.tolerations[0].operator: Invalid value: \"" + k64a +
      "\": must be no more than 63 bytes"}},
    {"T15",
     Tol("foo", "Exists", "", "NoScheduleNoAdmit"),
     Gates::kOff,
     {},
     {"spec.tolerations[0].effect: Unsupported value: \"NoScheduleNoAdmit\": " + kEffects}},
    {"T16",
     Tol("", "", "", ""),
     Gates::kOff,
     {},
     {"spec.tolerations[0].operator: Invalid value: \"\": " + kKeyEmpty}},
    {"T17",
     Tol("foo", "exists", "", ""),
     Gates::kOff,
     {},
     {"spec.tolerations[0].operator: Unsupported value: \"exists\": supported values: \"Equal\", "
      "\"Exists\""}},
    {"T18",
     Tol("", "Exists", "bar", "NoSchedule", 20),
     Gates::kOff,
     {},
     {"spec.tolerations[0].effect: Invalid value: \"NoSchedule\": " + kSecondsNeedNoExecute,
      "spec.tolerations[0].operator: Invalid value: \"bar\": " + kExistsValue}},
    {"T19",
     Tol("Bad/Key", "Equal", "x", "NoSchedule"),
     Gates::kOff,
     {},
     {"spec.tolerations[0].key: Invalid value: \"Bad/Key\": " + kPrefixRegex}},
    {"T20",
     Tol(kSla, "Gt", "950", "NoSchedule"),
     Gates::kOff,
     {},
     {"spec.tolerations[0].operator: Unsupported value: \"Gt\": supported values: \"Equal\", "
      "\"Exists\", \"Lt\", \"Gt\""}},
    {"T21", Tol(kSla, "Gt", "950", "NoSchedule"), Gates::kOn, {}, {}},
    {"T22",
     Tol(kSla, "Gt", "0950", "NoSchedule"),
     Gates::kOn,
     {},
     {"spec.tolerations[0].value: Invalid value: \"0950\": must be a valid decimal integer in "
      "canonical form"}},
    {"T23", Tol(kSla, "Lt", "950", ""), Gates::kOff, {Tol(kSla, "Lt", "950", "")}, {}},
    {"T24",
     Tol(kSla, "Gt", "high", "NoSchedule"),
     Gates::kOn,
     {},
     {"spec.tolerations[0].value: Invalid value: \"high\": must be a valid decimal integer in "
      "canonical form",
      "spec.tolerations[0].value: Invalid value: \"high\": strconv.ParseInt: parsing \"high\": "
      "invalid syntax"}},
    {"T25",
     Tol(kSla, "Lt", "9223372036854775808", "NoSchedule"),
     Gates::kOn,
     {},
     {"spec.tolerations[0].value: Invalid value: \"9223372036854775808\": strconv.ParseInt: "
      "parsing \"9223372036854775808\": value out of range"}},
};

class ValidateTolerationsTest : public ::testing::TestWithParam<TolerationRow> {};

TEST_P(ValidateTolerationsTest, Row) {
  const TolerationRow& r = GetParam();
  FeatureGates gates;
  gates.taint_toleration_comparison_operators = r.gates == Gates::kOn;
  std::vector<Toleration> list = {r.toleration};
  bool allow = AllowComparisonOperators(gates, r.old);
  EXPECT_EQ(Strings(ValidateTolerations(list, "spec.tolerations", allow)), r.errors);
  // The same list as a pod update that keeps the old tolerations: same outcome.
  if (!r.old.empty()) {
    EXPECT_EQ(Strings(ValidatePodTolerationsUpdate(r.old, list, gates)), r.errors);
  }
}

INSTANTIATE_TEST_SUITE_P(Spec11_6, ValidateTolerationsTest, ::testing::ValuesIn(kTolerationRows),
                         RowName<TolerationRow>);

// Templates use their own prefix; the empty-key check reports on the operator path.
TEST(ValidateTolerationsTest, TemplatePathAndIndex) {
  std::vector<Toleration> list = {Tol("a", "Exists", "", ""), Tol("", "Equal", "", "")};
  FieldErrorList errs = ValidateTolerations(list, "spec.template.spec.tolerations", false);
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_EQ(errs[0].field, "spec.template.spec.tolerations[1].operator");
  EXPECT_EQ(errs[0].Reason(), "FieldValueInvalid");
}

// T20's ratcheting counterpart: gate off and an old toleration that used Lt/Gt admits Lt/Gt
// anywhere in the new list; an old list without them does not.
TEST(AllowComparisonOperatorsTest, Ratcheting) {
  FeatureGates off;
  FeatureGates on;
  on.taint_toleration_comparison_operators = true;
  std::vector<Toleration> none;
  std::vector<Toleration> plain = {Tol("a", "Exists", "", "")};
  std::vector<Toleration> gt = {Tol("a", "Exists", "", ""), Tol(kSla, "Gt", "1", "")};
  EXPECT_FALSE(AllowComparisonOperators(off, none));
  EXPECT_FALSE(AllowComparisonOperators(off, plain));
  EXPECT_TRUE(AllowComparisonOperators(off, gt));
  EXPECT_TRUE(AllowComparisonOperators(on, none));
}

// ---- §11.6 pod update (validateOnlyAddedTolerations) ---------------------------------------

const Toleration kA = Tol("foo", "Exists", "", "NoExecute", 300);
const Toleration kB = Tol("bar", "Equal", "x", "NoSchedule");

Toleration WithSeconds(Toleration t, std::optional<int64_t> s) {
  t.toleration_seconds = s;
  return t;
}

struct UpdateRow {
  std::string id;
  std::vector<Toleration> old_list;
  std::vector<Toleration> new_list;
  std::vector<std::string> errors;
};
void PrintTo(const UpdateRow& r, std::ostream* os) { *os << r.id; }

const std::vector<UpdateRow> kUpdateRows = {
    {"U1", {kA}, {WithSeconds(kA, 100)}, {}},
    {"U2", {kA}, {WithSeconds(kA, 3600)}, {}},
    {"U3", {kA}, {WithSeconds(kA, std::nullopt)}, {}},
    {"U4", {kA}, {kA, kB}, {}},
    {"U5", {kA, kB}, {kA}, {kForbiddenUpdate}},
    {"U6", {kA}, {Tol("foo", "Exists", "", "NoSchedule")}, {kForbiddenUpdate}},
    {"U7", {Tol("foo", "", "x", "")}, {Tol("foo", "Equal", "x", "")}, {kForbiddenUpdate}},
    {"U8", {kA, kB}, {kB, kA}, {}},
    {"U9", {kA, kA}, {kA}, {}},
    {"U10",
     {},
     {Tol("", "Equal", "bar", "NoSchedule")},
     {"spec.tolerations[0].operator: Invalid value: \"Equal\": " + kKeyEmpty}},
};

class ValidatePodTolerationsUpdateTest : public ::testing::TestWithParam<UpdateRow> {};

TEST_P(ValidatePodTolerationsUpdateTest, Row) {
  const UpdateRow& r = GetParam();
  FieldErrorList errs = ValidatePodTolerationsUpdate(r.old_list, r.new_list, FeatureGates{});
  EXPECT_EQ(Strings(errs), r.errors);
  for (const FieldError& e : errs) {
    if (e.type == FieldError::Type::kForbidden) {
      EXPECT_EQ(e.field, "spec.tolerations");
      EXPECT_EQ(e.Reason(), "FieldValueForbidden");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Spec11_6, ValidatePodTolerationsUpdateTest,
                         ::testing::ValuesIn(kUpdateRows), RowName<UpdateRow>);

// validateOnlyAddedTolerations returns at the first missing old toleration, before validating
// the new list (k/k pkg/apis/core/validation/validation.go), so an invalid new list that also
// drops an old toleration reports only the Forbidden error.
TEST(ValidatePodTolerationsUpdateTest, ForbiddenStopsValidation) {
  std::vector<Toleration> old_list = {kA};
  std::vector<Toleration> new_list = {Tol("", "Equal", "bar", "NoSchedule")};
  EXPECT_EQ(Strings(ValidatePodTolerationsUpdate(old_list, new_list, FeatureGates{})),
            std::vector<std::string>{kForbiddenUpdate});
}

// ---- §4.1 field-error wire format ----------------------------------------------------------

TEST(FieldErrorTest, Rendering) {
  EXPECT_EQ(FieldError::Invalid("a.b", GoQuote("x"), "bad").ToString(),
            "a.b: Invalid value: \"x\": bad");
  EXPECT_EQ(FieldError::Required("a.b").ToString(), "a.b: Required value");
  EXPECT_EQ(FieldError::Required("a.b", "why").ToString(), "a.b: Required value: why");
  EXPECT_EQ(FieldError::Forbidden("spec", "no").ToString(), "spec: Forbidden: no");
  std::string_view valid[] = {"A", "B"};
  FieldError ns = FieldError::NotSupported("f", JsonString("C"), valid);
  EXPECT_EQ(ns.ToString(), "f: Unsupported value: \"C\": supported values: \"A\", \"B\"");
  EXPECT_EQ(ns.Reason(), "FieldValueNotSupported");
  FieldError dup = FieldError::Duplicate("f[1]", "{}");
  EXPECT_EQ(dup.ToString(), "f[1]: Duplicate value: {}");
  EXPECT_EQ(dup.Reason(), "FieldValueDuplicate");
}

TEST(FieldErrorTest, AggregateDeduplicatesAndBrackets) {
  FieldErrorList none;
  EXPECT_EQ(AggregateMessage(none), "");
  EXPECT_EQ(InvalidObjectMessage("Pod", "p", none), "Pod \"p\" is invalid");
  FieldErrorList one = {FieldError::Required("x")};
  EXPECT_EQ(AggregateMessage(one), "x: Required value");
  FieldErrorList same = {FieldError::Required("x"), FieldError::Required("x")};
  EXPECT_EQ(AggregateMessage(same), "x: Required value");
  FieldErrorList two = {FieldError::Required("x"), FieldError::Required("y"),
                        FieldError::Required("x")};
  EXPECT_EQ(AggregateMessage(two), "[x: Required value, y: Required value]");
  EXPECT_EQ(InvalidObjectMessage("Pod", "a\"b", one),
            "Pod \"a\\\"b\" is invalid: x: Required value");
}

// Go %q (strconv.Quote) versus Go json.Marshal: the two renderers of §4.1.
TEST(ValueRenderingTest, GoQuote) {
  EXPECT_EQ(GoQuote(""), "\"\"");
  EXPECT_EQ(GoQuote("some\\bad\\value"), "\"some\\\\bad\\\\value\"");
  EXPECT_EQ(GoQuote("a\"b"), "\"a\\\"b\"");
  EXPECT_EQ(GoQuote("<a>&"), "\"<a>&\"");
  EXPECT_EQ(GoQuote("\a\b\f\n\r\t\v"), "\"\\a\\b\\f\\n\\r\\t\\v\"");
  EXPECT_EQ(GoQuote(std::string("\x00\x1f\x7f", 3)), "\"\\x00\\x1f\\x7f\"");
  EXPECT_EQ(GoQuote("caf\xc3\xa9"), "\"caf\xc3\xa9\"");  // printable: kept
  EXPECT_EQ(GoQuote("\xc2\xa0"), "\"\\u00a0\"");         // NBSP is not printable
  EXPECT_EQ(GoQuote("\xe2\x80\xa8"), "\"\\u2028\"");
  EXPECT_EQ(GoQuote("\xef\xbb\xbf"), "\"\\ufeff\"");
  EXPECT_EQ(GoQuote("\xf3\xa0\x80\x81"), "\"\\U000e0001\"");
  EXPECT_EQ(GoQuote("\xff"), "\"\\xff\"");                         // invalid UTF-8
  EXPECT_EQ(GoQuote("\xed\xa0\x80"), "\"\\xed\\xa0\\x80\"");       // encoded surrogate
  EXPECT_EQ(GoQuote("\xf0\x9f\x98\x80"), "\"\xf0\x9f\x98\x80\"");  // emoji kept
}

TEST(ValueRenderingTest, JsonString) {
  EXPECT_EQ(JsonString(""), "\"\"");
  EXPECT_EQ(JsonString("Equal"), "\"Equal\"");
  EXPECT_EQ(JsonString("<a>&"), "\"\\u003ca\\u003e\\u0026\"");
  EXPECT_EQ(JsonString("a\"b\\"), "\"a\\\"b\\\\\"");
  EXPECT_EQ(JsonString("\b\f\n\r\t"), "\"\\b\\f\\n\\r\\t\"");
  EXPECT_EQ(JsonString(std::string("\x00\x01\x1f\x7f", 4)), "\"\\u0000\\u0001\\u001f\x7f\"");
  EXPECT_EQ(JsonString("caf\xc3\xa9\xc2\xa0"), "\"caf\xc3\xa9\xc2\xa0\"");
  EXPECT_EQ(JsonString("\xe2\x80\xa8\xe2\x80\xa9"), "\"\\u2028\\u2029\"");
  EXPECT_EQ(JsonString("a\xffz"), "\"a\\ufffdz\"");
}

// Named string types render as JSON, plain strings with %q: an operator with '<' shows the
// difference in a real error.
TEST(ValueRenderingTest, OperatorVersusValue) {
  std::vector<Toleration> list = {Tol("k", "<x>", "", ""), Tol("k", "Equal", "a<b", "")};
  FieldErrorList errs = ValidateTolerations(list, "spec.tolerations", false);
  ASSERT_EQ(errs.size(), 2u);
  EXPECT_EQ(errs[0].ToString(),
            "spec.tolerations[0].operator: Unsupported value: \"\\u003cx\\u003e\": supported "
            "values: \"Equal\", \"Exists\"");
  EXPECT_EQ(errs[1].ToString(),
            "spec.tolerations[1].operator: Invalid value: \"a<b\": " + kLabelValueRegex);
}

TEST(ValueRenderingTest, InternalTaintJson) {
  EXPECT_EQ(InternalTaintJson(MakeTaint("k", "v", "NoSchedule")),
            "{\"Key\":\"k\",\"Value\":\"v\",\"Effect\":\"NoSchedule\",\"TimeAdded\":null}");
  EXPECT_EQ(
      InternalTaintJson(WithTimeAdded(MakeTaint("k", "", "NoExecute"), "2024-01-02T03:04:05Z")),
      "{\"Key\":\"k\",\"Value\":\"\",\"Effect\":\"NoExecute\","
      "\"TimeAdded\":\"2024-01-02T03:04:05Z\"}");
}

// ---- §4.2 name helpers ---------------------------------------------------------------------

TEST(NameHelpersTest, QualifiedName) {
  EXPECT_TRUE(IsQualifiedName("GPU").empty());
  EXPECT_TRUE(IsQualifiedName("example.com/My_Name-1.x").empty());
  EXPECT_TRUE(IsQualifiedName("a").empty());
  EXPECT_EQ(IsQualifiedName("-a"), std::vector<std::string>{kNameRegex});
  EXPECT_EQ(IsQualifiedName("a-"), std::vector<std::string>{kNameRegex});
  EXPECT_EQ(IsQualifiedName("a/b/c"), std::vector<std::string>{kLabelKeyRegex});
  EXPECT_EQ(IsQualifiedName("/"),
            (std::vector<std::string>{"prefix part must be non-empty",
                                      "name part must be non-empty", kNameRegex}));
  // A prefix that is both too long and malformed reports both, prefixed.
  std::string long_bad = std::string(254, 'A');
  EXPECT_EQ(IsQualifiedName(long_bad + "/x"),
            (std::vector<std::string>{"prefix part must be no more than 253 bytes", kPrefixRegex}));
}

TEST(NameHelpersTest, LabelValue) {
  EXPECT_TRUE(IsValidLabelValue("").empty());
  EXPECT_TRUE(IsValidLabelValue("123_-.BaR").empty());
  EXPECT_EQ(IsValidLabelValue("-bad-"), std::vector<std::string>{kLabelValueRegex});
  EXPECT_EQ(IsValidLabelValue(std::string(64, '-')),
            (std::vector<std::string>{"must be no more than 63 bytes", kLabelValueRegex}));
}

TEST(NameHelpersTest, DNS1123) {
  EXPECT_TRUE(IsDNS1123Subdomain("example.com").empty());
  EXPECT_TRUE(IsDNS1123Subdomain("a-b.c1").empty());
  EXPECT_EQ(IsDNS1123Subdomain("a..b").size(), 1u);
  EXPECT_EQ(IsDNS1123Subdomain("").size(), 1u);
  EXPECT_EQ(IsDNS1123Subdomain(".a").size(), 1u);
  EXPECT_TRUE(IsDNS1123Label("node-1").empty());
  EXPECT_EQ(IsDNS1123Label("Node"),
            std::vector<std::string>{
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters "
                "or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  "
                "or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"});
  EXPECT_EQ(IsDNS1123Label("a.b").size(), 1u);
  EXPECT_EQ(IsDNS1123Label(std::string(64, 'a')),
            std::vector<std::string>{"must be no more than 63 bytes"});
}

TEST(NameHelpersTest, DecimalInteger) {
  const std::vector<std::string> bad = {"must be a valid decimal integer in canonical form"};
  EXPECT_TRUE(IsDecimalInteger("0").empty());
  EXPECT_TRUE(IsDecimalInteger("-7").empty());
  EXPECT_TRUE(IsDecimalInteger("99999999999999999999").empty());  // no range check here
  EXPECT_EQ(IsDecimalInteger(""), std::vector<std::string>{"must be non-empty"});
  for (const char* s : {"-", "-0", "0100", "+5", " 1", "1.5", "0x1f", "1a"}) {
    EXPECT_EQ(IsDecimalInteger(s), bad) << s;
  }
}

// Lt/Gt values go through IsDecimalInteger and then Go's strconv.ParseInt (§4.4).
TEST(ValidateTolerationsTest, ComparisonValues) {
  auto errs_for = [](std::string value) {
    std::vector<Toleration> list = {Tol(kSla, "Lt", std::move(value), "")};
    return Strings(ValidateTolerations(list, "t", true));
  };
  EXPECT_EQ(errs_for("-9223372036854775808"), std::vector<std::string>{});
  EXPECT_EQ(
      errs_for(""),
      (std::vector<std::string>{
          "t[0].value: Invalid value: \"\": must be non-empty",
          "t[0].value: Invalid value: \"\": strconv.ParseInt: parsing \"\": invalid syntax"}));
  EXPECT_EQ(errs_for("+5"),  // ParseInt accepts a '+'
            std::vector<std::string>{
                "t[0].value: Invalid value: \"+5\": must be a valid decimal integer in canonical "
                "form"});
  EXPECT_EQ(errs_for("-9223372036854775809"),
            std::vector<std::string>{"t[0].value: Invalid value: \"-9223372036854775809\": "
                                     "strconv.ParseInt: parsing \"-9223372036854775809\": value "
                                     "out of range"});
  // ParseUint stops at the first overflow, before it sees the bad character.
  EXPECT_EQ(errs_for("99999999999999999999x").back(),
            "t[0].value: Invalid value: \"99999999999999999999x\": strconv.ParseInt: parsing "
            "\"99999999999999999999x\": value out of range");
}

}  // namespace
}  // namespace kt
