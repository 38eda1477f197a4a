// Conformance rows of spec/semantics.md §11.5: `kubectl taint` end to end (K*, KD*), and its
// helpers (VF*, DT*, DK*, CE*, RT*, PT*, PTD*). Upstream: kubernetes/kubectl
// pkg/cmd/taint/taint.go, utils.go, taint_test.go, utils_test.go (release-1.35).
#include "core/taint_spec.h"

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

// "key=value:Effect", "key:Effect", "key" (test input only; never the code under test).
Taint T(std::string_view s) {
  Taint t;
  size_t colon = s.find(':');
  std::string_view kv = s.substr(0, colon);
  if (colon != std::string_view::npos) t.effect = s.substr(colon + 1);
  size_t eq = kv.find('=');
  t.key = kv.substr(0, eq);
  if (eq != std::string_view::npos) t.value = kv.substr(eq + 1);
  return t;
}

std::vector<Taint> Ts(std::initializer_list<std::string_view> specs) {
  std::vector<Taint> out;
  for (std::string_view s : specs) out.push_back(T(s));
  return out;
}

template <class Row>
std::string RowName(const ::testing::TestParamInfo<Row>& info) {
  return info.param.id;
}

const std::string kNameRegex =
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used "
    "for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const std::string kUsageSuffix = "\nSee 'kubectl taint -h' for help and examples";

// ---- A kubectl taint run against one node, built from the core pieces ----------------------

// What reaches the server, as the spec's "request" column describes it.
enum class Patch {
  kNone,   // no request
  kEmpty,  // PATCH {} (nothing changed)
  kNull,   // PATCH {"spec":{"taints":null}}
  kList,   // PATCH {"spec":{"taints":[...]}}
};

struct RunResult {
  std::string error;  // the error message ("" on success)
  std::string stderr_text;
  std::vector<Taint> taints;  // the node's taints after the run
  std::string stdout_text;    // "node/<name> <operation>\n"
  Patch patch = Patch::kNone;
};

// Resolves the resource type as the server's discovery would for the kinds kubetaint serves.
std::string KindFor(std::string_view type) {
  std::string t(type);
  for (char& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (t == "node" || t == "nodes" || t == "no") return "Node";
  if (t == "pod" || t == "pods" || t == "po") return "Pod";
  return "";
}

// `kubectl taint <args>` against a cluster with one node, "node-name", carrying `existing`.
RunResult RunKubectlTaint(const std::vector<Taint>& existing, std::vector<std::string> args) {
  RunResult out;
  out.taints = existing;
  bool overwrite = false, all = false;
  std::string selector;
  std::vector<std::string> positional;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--overwrite") {
      overwrite = true;
    } else if (args[i] == "--all") {
      all = true;
    } else if (args[i] == "-l") {
      selector = args[++i];
    } else {
      positional.push_back(args[i]);
    }
  }
  auto fail = [&](const std::string& message, bool usage) {
    out.error = message;
    out.stderr_text = "error: " + message + (usage ? kUsageSuffix : "") + "\n";
    return out;
  };

  Result<TaintArgs> classified = ClassifyTaintArgs(positional);
  if (!classified) return fail(classified.error().message(), false);
  Result<TaintChanges> changes = ParseTaints(classified->specs);
  if (!changes) return fail(changes.error().message(), true);
  Status valid = ValidateTaintCommand(KindFor(classified->resources[0]), classified->resources,
                                      *changes, all, selector);
  if (!valid.ok()) return fail(valid.message(), false);

  // Only "node-name" exists; --all and -l select it too.
  TaintUpdate update = UpdateNodeTaints("node-name", existing, *changes, overwrite);
  if (!update.ok()) {
    out.error = update.ToStatus().message();
    out.stderr_text = KubectlErrorOutput(update.errors);
    return out;
  }
  out.taints = update.taints;
  if (update.taints == existing) {
    out.patch = Patch::kEmpty;
  } else {
    out.patch = update.taints.empty() ? Patch::kNull : Patch::kList;
  }
  out.stdout_text = "node/node-name " + std::string(update.operation) + "\n";
  return out;
}

struct KubectlRow {
  std::string id;
  std::vector<Taint> existing;
  std::vector<std::string> args;
  Patch patch;
  std::vector<Taint> result;  // on success
  std::string output;         // stdout on success, else the error message
};
void PrintTo(const KubectlRow& r, std::ostream* os) { *os << r.id; }

const std::vector<KubectlRow> kKubectlRows = {
    {"K1",
     {},
     {"node", "node-name", "foo=bar:NoSchedule"},
     Patch::kList,
     Ts({"foo=bar:NoSchedule"}),
     "node/node-name tainted\n"},
    {"K2",
     {},
     {"node", "node-name", "foo=bar:PreferNoSchedule"},
     Patch::kList,
     Ts({"foo=bar:PreferNoSchedule"}),
     "node/node-name tainted\n"},
    {"K3",
     Ts({"foo=bar:NoSchedule"}),
     {"node", "node-name", "foo=barz:NoSchedule", "--overwrite"},
     Patch::kList,
     Ts({"foo=barz:NoSchedule"}),
     "node/node-name modified\n"},
    {"K4",
     {},
     {"node", "node-name", "dedicated=namespaceA:NoSchedule", "foo=bar:PreferNoSchedule"},
     Patch::kList,
     Ts({"dedicated=namespaceA:NoSchedule", "foo=bar:PreferNoSchedule"}),
     "node/node-name tainted\n"},
    {"K5",
     Ts({"dedicated=namespaceA:NoSchedule", "dedicated=namespaceA:PreferNoSchedule"}),
     {"node", "node-name", "dedicated:NoSchedule-"},
     Patch::kList,
     Ts({"dedicated=namespaceA:PreferNoSchedule"}),
     "node/node-name untainted\n"},
    {"K6",
     Ts({"dedicated=namespaceA:NoSchedule", "dedicated=namespaceA:PreferNoSchedule"}),
     {"node", "node-name", "dedicated-"},
     Patch::kNull,
     {},
     "node/node-name untainted\n"},
    {"K7",
     Ts({"dedicated=namespaceA:NoSchedule", "foo=bar:PreferNoSchedule"}),
     {"node", "node-name", "dedicated:NoSchedule-", "foo=barz:PreferNoSchedule", "--overwrite"},
     Patch::kList,
     Ts({"foo=barz:PreferNoSchedule"}),
     "node/node-name modified\n"},
    {"K8",
     {},
     {"node", "node-name", "nospecialchars^@=banana:NoSchedule"},
     Patch::kNone,
     {},
     "invalid taint spec: nospecialchars^@=banana:NoSchedule, " + kNameRegex},
    {"K9",
     {},
     {"node", "node-name", "foo=bar:NoExcute"},
     Patch::kNone,
     {},
     "invalid taint effect: NoExcute, unsupported taint effect"},
    {"K10",
     {},
     {"node", "node-name", "foo=bar:NoExcute", "foo=barz:NoExcute"},
     Patch::kNone,
     {},
     "invalid taint effect: NoExcute, unsupported taint effect"},
    {"K11",
     {},
     {"node", "node-name", "foo=:NoExcute", "foo=:NoExcute-"},
     Patch::kNone,
     {},
     "invalid taint effect: NoExcute, unsupported taint effect"},
    {"K12",
     Ts({"foo=bar:NoSchedule"}),
     {"node", "node-name", "foo=bar:NoSchedule"},
     Patch::kNone,
     {},
     "node node-name already has foo taint(s) with same effect(s) and --overwrite is false"},
    {"KD1",
     {},
     {"node", "node-name", "foo=bar:NoExecute", "foo=barz:NoExecute"},
     Patch::kNone,
     {},
     "duplicated taints with the same key and effect: {foo barz NoExecute <nil>}"},
    {"KD2",
     {},
     {"node", "node-name", "foo=:NoExecute", "foo:NoExecute-"},
     Patch::kNone,
     {},
     "can not both modify and remove the following taint(s) in the same command: foo=NoExecute"},
    {"KD3",
     {},
     {"node", "node-name", "foo=bar:NoExecute", "foo-"},
     Patch::kNone,
     {},
     "can not both modify and remove the following taint(s) in the same command: foo="},
    {"KD4",
     Ts({"a:NoSchedule"}),
     {"node", "node-name", "b:NoSchedule"},
     Patch::kList,
     Ts({"b:NoSchedule", "a:NoSchedule"}),
     "node/node-name tainted\n"},
    {"KD5",
     Ts({"a:NoSchedule"}),
     {"node", "node-name", "a:NoSchedule", "--overwrite"},
     Patch::kEmpty,
     Ts({"a:NoSchedule"}),
     "node/node-name modified\n"},
    {"KD6",
     Ts({"a:NoSchedule"}),
     {"node", "node-name", "b:NoSchedule-"},
     Patch::kNone,
     {},
     "taint \"b:NoSchedule\" not found"},
    {"KD7",
     Ts({"a:NoSchedule"}),
     {"node", "node-name", "dedicated-"},
     Patch::kNone,
     {},
     "taint \"dedicated\" not found"},
    {"KD8",
     {},
     {"node", "node-name", "x-", "y-"},
     Patch::kNone,
     {},
     "[taint \"x\" not found, taint \"y\" not found]"},
    {"KD9",
     {},
     {"pod", "p", "foo=bar:NoSchedule"},
     Patch::kNone,
     {},
     "invalid resource type pod, only node types are supported"},
    {"KD10",
     {},
     {"node", "foo=bar:NoSchedule"},
     Patch::kNone,
     {},
     "at least one resource name must be specified since 'all' parameter is not set"},
    {"KD11", {}, {"node", "node-name"}, Patch::kNone, {}, "at least one taint update is required"},
    {"KD12",
     {},
     {"node", "a", "foo=bar:NoSchedule", "b"},
     Patch::kNone,
     {},
     "all resources must be specified before taint changes: b"},
    {"KD13",
     {},
     {"node", "--all", "-l", "x=y", "foo=bar:NoSchedule"},
     Patch::kNone,
     {},
     "setting 'all' parameter with a non empty selector is prohibited"},
};

class KubectlTaintTest : public ::testing::TestWithParam<KubectlRow> {};

TEST_P(KubectlTaintTest, Row) {
  const KubectlRow& r = GetParam();
  RunResult got = RunKubectlTaint(r.existing, r.args);
  EXPECT_EQ(got.patch, r.patch);
  if (r.patch == Patch::kNone) {
    EXPECT_EQ(got.error, r.output);
    EXPECT_EQ(got.taints, r.existing) << "the node must not change";
    EXPECT_EQ(got.stdout_text, "");
  } else {
    EXPECT_EQ(got.error, "");
    EXPECT_EQ(got.taints, r.result);
    EXPECT_EQ(got.stdout_text, r.output);
  }
}

INSTANTIATE_TEST_SUITE_P(Spec11_5, KubectlTaintTest, ::testing::ValuesIn(kKubectlRows),
                         RowName<KubectlRow>);

// What the user sees on stderr: parse errors are usage errors; a single error gets "error: ";
// KD8's two removal errors print one per line with no prefix (kubectl cmdutil.CheckErr /
// MultipleErrors).
TEST(KubectlTaintTest, StderrText) {
  EXPECT_EQ(RunKubectlTaint({}, {"node", "node-name", "foo=bar:NoExcute"}).stderr_text,
            "error: invalid taint effect: NoExcute, unsupported taint effect\nSee 'kubectl taint "
            "-h' for help and examples\n");
  EXPECT_EQ(RunKubectlTaint(Ts({"foo=bar:NoSchedule"}), {"node", "node-name", "foo=bar:NoSchedule"})
                .stderr_text,
            "error: node node-name already has foo taint(s) with same effect(s) and --overwrite "
            "is false\n");
  EXPECT_EQ(
      RunKubectlTaint(Ts({"a:NoSchedule"}), {"node", "node-name", "b:NoSchedule-"}).stderr_text,
      "error: taint \"b:NoSchedule\" not found\n");
  EXPECT_EQ(RunKubectlTaint({}, {"node", "node-name", "x-", "y-"}).stderr_text,
            "taint \"x\" not found\ntaint \"y\" not found\n");
  EXPECT_EQ(RunKubectlTaint({}, {"node", "foo=bar:NoSchedule"}).stderr_text,
            "error: at least one resource name must be specified since 'all' parameter is not "
            "set\n");
}

TEST(KubectlTaintTest, AggregateOfIdenticalMessages) {
  // Go's aggregate prints a repeated message once; the CLI still prints every error.
  std::vector<std::string> twice = {"taint \"x\" not found", "taint \"x\" not found"};
  EXPECT_EQ(GoAggregateError(twice), "taint \"x\" not found");
  EXPECT_EQ(KubectlErrorOutput(twice), "taint \"x\" not found\ntaint \"x\" not found\n");
  EXPECT_EQ(GoAggregateError({}), "");
  EXPECT_EQ(KubectlErrorOutput({}), "");
}

TEST(KubectlTaintTest, ClassifyArgs) {
  std::vector<std::string> args = {"nodes", "a", "b", "k=v:NoSchedule", "k2-", "k3:NoExecute"};
  Result<TaintArgs> got = ClassifyTaintArgs(args);
  ASSERT_TRUE(got.has_value()) << got.error().message();
  EXPECT_EQ(got->resources, (std::vector<std::string>{"nodes", "a", "b"}));
  EXPECT_EQ(got->specs, (std::vector<std::string>{"k=v:NoSchedule", "k2-", "k3:NoExecute"}));
  // A node named like a removal is taken as a taint change (upstream quirk).
  EXPECT_TRUE(IsTaintArg("node-"));
  EXPECT_FALSE(IsTaintArg("node1"));
  EXPECT_FALSE(IsTaintArg(""));
  std::vector<std::string> none;
  EXPECT_EQ(ClassifyTaintArgs(none).error().message(),
            "one or more resources must be specified as <resource> <name>");
  std::vector<std::string> only_taints = {"k=v:NoSchedule"};
  EXPECT_EQ(ClassifyTaintArgs(only_taints).error().message(),
            "one or more resources must be specified as <resource> <name>");
  EXPECT_EQ(ClassifyTaintArgs(only_taints).error().code(), StatusCode::kBadRequest);
}

TEST(KubectlTaintTest, ResourceTypeIsLowerCased) {
  TaintChanges changes;
  std::vector<std::string> resources = {"Pods", "p"};
  EXPECT_EQ(ValidateTaintCommand("Pod", resources, changes, false, "").message(),
            "invalid resource type pods, only node types are supported");
  std::vector<std::string> nodes = {"NODES", "n"};
  EXPECT_TRUE(ValidateTaintCommand(KindFor("NODES"), nodes, changes, false, "").ok());
}

// ---- TestValidateFlags ---------------------------------------------------------------------

struct FlagsRow {
  std::string id;
  std::string selector;
  bool all;
  std::vector<std::string> resources;
  std::string error;  // "" = no error
};
void PrintTo(const FlagsRow& r, std::ostream* os) { *os << r.id; }

const std::vector<FlagsRow> kFlagsRows = {
    {"VF1", "myLabel=X", false, {}, ""},
    {"VF2", "", true, {}, ""},
    {"VF3",
     "myLabel=X",
     true,
     {},
     "setting 'all' parameter with a non empty selector is prohibited"},
    {"VF4",
     "",
     false,
     {"node"},
     "at least one resource name must be specified since 'all' parameter is not set"},
    {"VF5", "", false, {"node", "node-name"}, ""},
};

class ValidateTaintFlagsTest : public ::testing::TestWithParam<FlagsRow> {};

TEST_P(ValidateTaintFlagsTest, Row) {
  const FlagsRow& r = GetParam();
  Status s = ValidateTaintFlags(r.all, r.selector, r.resources);
  EXPECT_EQ(s.message(), r.error);
  EXPECT_EQ(s.ok(), r.error.empty());
}

INSTANTIATE_TEST_SUITE_P(Spec11_5, ValidateTaintFlagsTest, ::testing::ValuesIn(kFlagsRows),
                         RowName<FlagsRow>);

// ---- deleteTaint / deleteTaintsByKey -------------------------------------------------------

struct DeleteRow {
  std::string id;
  std::vector<Taint> list;
  std::optional<Taint> taint;  // DT rows: by key and effect
  std::string key;             // DK rows: by key
  std::vector<Taint> result;
  bool removed;
};
void PrintTo(const DeleteRow& r, std::ostream* os) { *os << r.id; }

const std::vector<DeleteRow> kDeleteRows = {
    {"DT1", Ts({"foo:NoSchedule"}), T("foo_1:NoSchedule"), "", Ts({"foo:NoSchedule"}), false},
    {"DT2", Ts({"foo:NoSchedule"}), T("foo:NoExecute"), "", Ts({"foo:NoSchedule"}), false},
    {"DT3", Ts({"foo:NoSchedule"}), T("foo:NoSchedule"), "", {}, true},
    {"DT4", {}, T("foo:NoSchedule"), "", {}, false},
    {"DK1", Ts({"foo=bar:NoSchedule"}), std::nullopt, "foo_1", Ts({"foo=bar:NoSchedule"}), false},
    {"DK2", Ts({"foo=bar:NoSchedule"}), std::nullopt, "foo", {}, true},
    {"DK3", {}, std::nullopt, "foo", {}, false},
};

class DeleteTaintTest : public ::testing::TestWithParam<DeleteRow> {};

TEST_P(DeleteTaintTest, Row) {
  const DeleteRow& r = GetParam();
  std::vector<Taint> list = r.list;
  bool removed = r.taint ? DeleteTaint(list, *r.taint) : DeleteTaintsByKey(list, r.key);
  EXPECT_EQ(removed, r.removed);
  EXPECT_EQ(list, r.result);
}

INSTANTIATE_TEST_SUITE_P(Spec11_5, DeleteTaintTest, ::testing::ValuesIn(kDeleteRows),
                         RowName<DeleteRow>);

// ---- checkIfTaintsAlreadyExists ------------------------------------------------------------

struct ExistRow {
  std::string id;
  std::vector<Taint> to_add;
  std::string result;
};
void PrintTo(const ExistRow& r, std::ostream* os) { *os << r.id; }

const std::vector<ExistRow> kExistRows = {
    {"CE1", {}, ""},
    {"CE2", Ts({"foo_1:NoExecute"}), ""},
    {"CE3", Ts({"foo_2:NoSchedule"}), "foo_2"},
    {"CE4", Ts({"foo_2:NoSchedule", "foo_3:NoSchedule"}), "foo_2,foo_3"},
};

class CheckIfTaintsAlreadyExistTest : public ::testing::TestWithParam<ExistRow> {};

TEST_P(CheckIfTaintsAlreadyExistTest, Row) {
  const std::vector<Taint> old =
      Ts({"foo_1=bar:NoSchedule", "foo_2=bar:NoSchedule", "foo_3=bar:NoSchedule"});
  EXPECT_EQ(CheckIfTaintsAlreadyExist(old, GetParam().to_add), GetParam().result);
}

INSTANTIATE_TEST_SUITE_P(Spec11_5, CheckIfTaintsAlreadyExistTest, ::testing::ValuesIn(kExistRows),
                         RowName<ExistRow>);

// ---- reorganizeTaints ----------------------------------------------------------------------

struct ReorganizeRow {
  std::string id;
  bool overwrite;
  std::vector<Taint> add;
  std::vector<Taint> remove;
  std::vector<Taint> result;
  std::string_view operation;
  std::string error;
};
void PrintTo(const ReorganizeRow& r, std::ostream* os) { *os << r.id; }

const std::vector<ReorganizeRow> kReorganizeRows = {
    {"RT1", true, {}, {}, Ts({"foo=bar:NoSchedule"}), kTaintOpModified, ""},
    {"RT2", false, {}, {}, Ts({"foo=bar:NoSchedule"}), kTaintOpUntainted, ""},
    {"RT3",
     false,
     Ts({"foo_1:NoExecute"}),
     {},
     Ts({"foo_1:NoExecute", "foo=bar:NoSchedule"}),
     kTaintOpTainted,
     ""},
    {"RT4", false, {}, Ts({"foo:NoSchedule"}), {}, kTaintOpUntainted, ""},
    {"RT5", false, {}, Ts({"foo"}), {}, kTaintOpUntainted, ""},
    {"RT6",
     false,
     {},
     Ts({"foo_1:NoSchedule"}),
     Ts({"foo=bar:NoSchedule"}),
     kTaintOpUntainted,
     "taint \"foo_1:NoSchedule\" not found"},
    {"RT7", false, Ts({"foo_1:NoSchedule"}), Ts({"foo:NoSchedule"}), Ts({"foo_1:NoSchedule"}),
     kTaintOpModified, ""},
};

class ReorganizeTaintsTest : public ::testing::TestWithParam<ReorganizeRow> {};

TEST_P(ReorganizeTaintsTest, Row) {
  const ReorganizeRow& r = GetParam();
  const std::vector<Taint> node = Ts({"foo=bar:NoSchedule"});
  TaintUpdate got = ReorganizeTaints(node, r.overwrite, r.add, r.remove);
  EXPECT_EQ(got.taints, r.result);
  EXPECT_EQ(got.operation, r.operation);
  EXPECT_EQ(got.ToStatus().message(), r.error);
  EXPECT_EQ(got.ok(), r.error.empty());
}

INSTANTIATE_TEST_SUITE_P(Spec11_5, ReorganizeTaintsTest, ::testing::ValuesIn(kReorganizeRows),
                         RowName<ReorganizeRow>);

// `deleted` is the result of the last removal only (upstream quirk): with an addition, a success
// then a miss reports "tainted", a miss then a success "modified"; the miss is an error either way.
TEST(ReorganizeTaintsTest, LastRemovalDecidesDeleted) {
  const std::vector<Taint> node = Ts({"a:NoSchedule", "b:NoSchedule"});
  TaintUpdate u = ReorganizeTaints(node, false, Ts({"c:NoSchedule"}), Ts({"a", "zzz"}));
  EXPECT_EQ(u.operation, kTaintOpTainted);  // added, but the last removal dropped nothing
  EXPECT_EQ(u.errors, std::vector<std::string>{"taint \"zzz\" not found"});
  TaintUpdate v = ReorganizeTaints(node, false, Ts({"c:NoSchedule"}), Ts({"zzz", "a"}));
  EXPECT_EQ(v.operation, kTaintOpModified);
  EXPECT_EQ(v.errors, std::vector<std::string>{"taint \"zzz\" not found"});
  EXPECT_EQ(v.taints, Ts({"c:NoSchedule", "b:NoSchedule"}));
}

// ---- parseTaints ---------------------------------------------------------------------------

struct ParseRow {
  std::string id;
  std::vector<std::string> specs;
  std::vector<Taint> add;
  std::vector<Taint> remove;
  std::string error;
};
void PrintTo(const ParseRow& r, std::ostream* os) { *os << r.id; }

const std::vector<std::string> kPT8Specs = {"foo=abc:NoSchedule", "bar=abc:NoSchedule",
                                            "baz:NoSchedule", "qux:NoSchedule",
                                            "foobar=:NoSchedule"};
const std::vector<Taint> kPT8Adds = Ts({"foo=abc:NoSchedule", "bar=abc:NoSchedule",
                                        "baz:NoSchedule", "qux:NoSchedule", "foobar:NoSchedule"});

std::vector<std::string> PT10Specs() {
  std::vector<std::string> out = kPT8Specs;
  for (const char* s : {"foo:NoSchedule-", "bar:NoSchedule-", "baz=:NoSchedule-"}) out.push_back(s);
  return out;
}

const std::vector<ParseRow> kParseRows = {
    {"PT1", {""}, {}, {}, "invalid taint spec: , name part must be non-empty; " + kNameRegex},
    {"PT2", {"foo=abc"}, {}, {}, "invalid taint spec: foo=abc, " + kNameRegex},
    {"PT3", {"foo=abc=xyz:NoSchedule"}, {}, {}, "invalid taint spec: foo=abc=xyz:NoSchedule"},
    {"PT4", {"foo=abc:xyz:NoSchedule"}, {}, {}, "invalid taint spec: foo=abc:xyz:NoSchedule"},
    {"PT5", {"foo"}, {}, {}, "invalid taint spec: foo"},
    {"PT6",
     {"foo=abc:invalid_effect"},
     {},
     {},
     "invalid taint effect: invalid_effect, unsupported taint effect"},
    {"PT7",
     {"foo:invalid_effect-"},
     {},
     {},
     "invalid taint effect: invalid_effect, unsupported taint effect"},
    {"PT8", kPT8Specs, kPT8Adds, {}, ""},
    {"PT9",
     {"foo:NoSchedule-", "bar:NoSchedule-", "qux=:NoSchedule-", "dedicated-"},
     {},
     Ts({"foo:NoSchedule", "bar:NoSchedule", "qux:NoSchedule", "dedicated"}),
     ""},
    {"PT10", PT10Specs(), kPT8Adds, Ts({"foo:NoSchedule", "bar:NoSchedule", "baz:NoSchedule"}), ""},
    {"PTD1", {"k=v:NoSchedule-"}, {}, Ts({"k:NoSchedule"}), ""},
    {"PTD2",
     {"k=-bad-:NoSchedule"},
     {},
     {},
     "invalid taint spec: k=-bad-:NoSchedule, a valid label must be an empty string or consist "
     "of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
     "character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
     "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"},
    {"PTD3",
     {"k:NoSchedule--"},
     {},
     {},
     "invalid taint effect: NoSchedule-, unsupported taint effect"},
    {"PTD4",
     {"a/b/c:NoSchedule"},
     {},
     {},
     "invalid taint spec: a/b/c:NoSchedule, a valid label key must consist of alphanumeric "
     "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
     "'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
     "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' "
     "(e.g. 'example.com/MyName')"},
};

class ParseTaintsTest : public ::testing::TestWithParam<ParseRow> {};

TEST_P(ParseTaintsTest, Row) {
  const ParseRow& r = GetParam();
  Result<TaintChanges> got = ParseTaints(r.specs);
  if (!r.error.empty()) {
    ASSERT_FALSE(got.has_value());
    EXPECT_EQ(got.error().message(), r.error);
    EXPECT_EQ(got.error().code(), StatusCode::kBadRequest);
    return;
  }
  ASSERT_TRUE(got.has_value()) << got.error().message();
  EXPECT_EQ(got->add, r.add);
  EXPECT_EQ(got->remove, r.remove);
}

INSTANTIATE_TEST_SUITE_P(Spec11_5, ParseTaintsTest, ::testing::ValuesIn(kParseRows),
                         RowName<ParseRow>);

// PT10: parsing accepts an add and a remove of the same taint; Validate rejects it later.
TEST(ParseTaintsTest, PT10ConflictsFoundByValidate) {
  Result<TaintChanges> got = ParseTaints(PT10Specs());
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(ValidateTaintConflicts(*got).message(),
            "can not both modify and remove the following taint(s) in the same command: "
            "foo=NoSchedule, bar=NoSchedule, baz=NoSchedule");
}

TEST(ParseTaintsTest, GoStructFormatting) {
  EXPECT_EQ(GoTaintStruct(MakeTaint("foo", "barz", "NoExecute")), "{foo barz NoExecute <nil>}");
  EXPECT_EQ(GoTaintStruct(MakeTaint("foo", "", "NoExecute")), "{foo  NoExecute <nil>}");
  std::vector<std::string> specs = {"foo=:NoSchedule", "foo:NoSchedule"};
  EXPECT_EQ(ParseTaints(specs).error().message(),
            "duplicated taints with the same key and effect: {foo  NoSchedule <nil>}");
  // Same key, different effects: two taints.
  std::vector<std::string> ok = {"foo:NoSchedule", "foo:NoExecute"};
  EXPECT_TRUE(ParseTaints(ok).has_value());
}

TEST(ParseTaintTest, Forms) {
  EXPECT_EQ(*ParseTaint("example.com/k=v:NoExecute"), MakeTaint("example.com/k", "v", "NoExecute"));
  EXPECT_EQ(*ParseTaint("k=:PreferNoSchedule"), MakeTaint("k", "", "PreferNoSchedule"));
  EXPECT_EQ(*ParseTaint("k"), MakeTaint("k", "", ""));
  // The value is checked before the key.
  EXPECT_EQ(ParseTaint("b^d=-v-:NoSchedule").error().message().substr(0, 41),
            "invalid taint spec: b^d=-v-:NoSchedule, a");
  // A bad effect is reported before a malformed key=value part.
  EXPECT_EQ(ParseTaint("a=b=c:Nope").error().message(),
            "invalid taint effect: Nope, unsupported taint effect");
}

}  // namespace
}  // namespace kt
