// The toleration set algebra of PodTolerationRestriction: semantics.md §11.10 rows IS1-IS9 and
// MG1-MG5, and upstream pkg/util/tolerations/tolerations_test.go (TestIsSuperset's matrix,
// TestVerifyAgainstWhitelist, TestMergeTolerations and the properties TestFuzzed checks).
#include "admission/tolerations.h"

#include <algorithm>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace kt::admission {
namespace {

Toleration Tol(std::string key, std::string op, std::string value = "", std::string effect = "",
               std::optional<int64_t> seconds = std::nullopt) {
  return Toleration{.key = std::move(key),
                    .op = std::move(op),
                    .value = std::move(value),
                    .effect = std::move(effect),
                    .toleration_seconds = seconds};
}

std::string Show(const Toleration& t) {
  std::string out = "(" + t.key + ", " + t.op + ", " + t.value + ", " + t.effect + ", ";
  out += t.toleration_seconds ? std::to_string(*t.toleration_seconds) : "nil";
  return out + ")";
}

std::string Show(const std::vector<Toleration>& list) {
  std::string out = "[";
  for (const Toleration& t : list) out += (out.size() > 1 ? ", " : "") + Show(t);
  return out + "]";
}

TEST(TolerationsTest, IsSupersetSemanticsTable) {
  struct Row {
    const char* id;
    Toleration ss, t;
    bool want;
  };
  const Row rows[] = {
      {"IS1 empty key Exists covers everything", Tol("", "Exists"),
       Tol("a", "Equal", "x", "NoSchedule"), true},
      {"IS2 other key", Tol("a", "Exists"), Tol("b", "Exists"), false},
      {"IS3 other effect", Tol("a", "Exists", "", "NoSchedule"),
       Tol("a", "Exists", "", "NoExecute"), false},
      {"IS4 t tolerates forever", Tol("a", "Exists", "", "NoExecute", 300),
       Tol("a", "Exists", "", "NoExecute"), false},
      {"IS5 t tolerates for less", Tol("a", "Exists", "", "NoExecute", 300),
       Tol("a", "Exists", "", "NoExecute", 60), true},
      {"IS6 t's operator must be literally Equal", Tol("a", "Equal", "x"), Tol("a", "", "x"),
       false},
      {"IS7 deep-equal", Tol("a", "", "x"), Tol("a", "", "x"), true},
      {"IS8 Equal does not cover Exists", Tol("a", "Equal", "x"), Tol("a", "Exists"), false},
      {"IS9 Exists, any effect, covers any value and seconds", Tol("a", "Exists"),
       Tol("a", "Equal", "y", "NoExecute", 5), true},
      {"Lt covers only itself", Tol("a", "Lt", "5"), Tol("a", "Lt", "4"), false},
  };
  for (const Row& r : rows) EXPECT_EQ(IsSuperset(r.ss, r.t), r.want) << r.id;
}

TEST(TolerationsTest, MergeTolerationsSemanticsTable) {
  const Toleration x = Tol("x", "Equal", "v", "NoSchedule");
  struct Row {
    const char* id;
    std::vector<Toleration> first, second, want;
  };
  const Row rows[] = {
      {"MG1 a broader second replaces",
       {Tol("a", "Exists")},
       {Tol("", "Exists")},
       {Tol("", "Exists")}},
      {"MG2 identical once", {x}, {x}, {x}},
      {"MG3 the longer NoExecute wins",
       {Tol("a", "Exists", "", "NoExecute", 60)},
       {Tol("a", "Exists", "", "NoExecute", 300)},
       {Tol("a", "Exists", "", "NoExecute", 300)}},
      {"MG4 forever beats 300 s",
       {Tol("a", "Exists", "", "NoExecute")},
       {Tol("a", "Exists", "", "NoExecute", 300)},
       {Tol("a", "Exists", "", "NoExecute")}},
      {"MG5 an empty operator is broader than Equal",
       {Tol("a", "Equal", "x")},
       {Tol("a", "", "x")},
       {Tol("a", "", "x")}},
  };
  for (const Row& r : rows) {
    EXPECT_EQ(Show(MergeTolerations(r.first, r.second)), Show(r.want)) << r.id;
  }
}

// Upstream's named tolerations.
const std::map<std::string, Toleration>& Named() {
  static const auto* named = new std::map<std::string, Toleration>{
      {"all", Tol("", "Exists")},
      {"all-nosched", Tol("", "Exists", "", "NoSchedule")},
      {"all-noexec", Tol("", "Exists", "", "NoExecute")},
      {"foo", Tol("foo", "Exists")},
      {"foo-bar", Tol("foo", "Equal", "bar")},
      {"foo-nosched", Tol("foo", "Exists", "", "NoSchedule")},
      {"foo-bar-nosched", Tol("foo", "Equal", "bar", "NoSchedule")},
      {"foo-baz-nosched", Tol("foo", "Equal", "baz", "NoSchedule")},
      {"faz-nosched", Tol("faz", "Exists", "", "NoSchedule")},
      {"faz-baz-nosched", Tol("faz", "Equal", "baz", "NoSchedule")},
      {"foo-prefnosched", Tol("foo", "Exists", "", "PreferNoSchedule")},
      {"foo-noexec", Tol("foo", "Exists", "", "NoExecute")},
      {"foo-bar-noexec", Tol("foo", "Equal", "bar", "NoExecute")},
      {"foo-noexec-10", Tol("foo", "Exists", "", "NoExecute", 10)},
      {"foo-noexec-0", Tol("foo", "Exists", "", "NoExecute", 0)},
      {"foo-bar-noexec-10", Tol("foo", "Equal", "bar", "NoExecute", 10)},
  };
  return *named;
}

std::vector<Toleration> Get(const std::vector<std::string>& names) {
  std::vector<Toleration> out;
  for (const std::string& n : names) out.push_back(Named().at(n));
  return out;
}

TEST(TolerationsTest, UpstreamIsSupersetMatrix) {
  // Each toleration is a superset of itself and of these, and of no other.
  const std::map<std::string, std::vector<std::string>> subsets = {
      {"all",
       {"all-nosched", "all-noexec", "foo", "foo-bar", "foo-nosched", "foo-bar-nosched",
        "foo-baz-nosched", "faz-nosched", "faz-baz-nosched", "foo-prefnosched", "foo-noexec",
        "foo-bar-noexec", "foo-noexec-10", "foo-noexec-0", "foo-bar-noexec-10"}},
      {"all-nosched",
       {"foo-nosched", "foo-bar-nosched", "foo-baz-nosched", "faz-nosched", "faz-baz-nosched"}},
      {"all-noexec",
       {"foo-noexec", "foo-bar-noexec", "foo-noexec-10", "foo-noexec-0", "foo-bar-noexec-10"}},
      {"foo",
       {"foo-bar", "foo-nosched", "foo-bar-nosched", "foo-baz-nosched", "foo-prefnosched",
        "foo-noexec", "foo-bar-noexec", "foo-noexec-10", "foo-noexec-0", "foo-bar-noexec-10"}},
      {"foo-bar", {"foo-bar-nosched", "foo-bar-noexec", "foo-bar-noexec-10"}},
      {"foo-nosched", {"foo-bar-nosched", "foo-baz-nosched"}},
      {"foo-bar-nosched", {}},
      {"faz-nosched", {"faz-baz-nosched"}},
      {"faz-baz-nosched", {}},
      {"foo-prefnosched", {}},
      {"foo-noexec", {"foo-bar-noexec", "foo-noexec-10", "foo-noexec-0", "foo-bar-noexec-10"}},
      {"foo-bar-noexec", {"foo-bar-noexec-10"}},
      {"foo-noexec-10", {"foo-noexec-0", "foo-bar-noexec-10"}},
      {"foo-noexec-0", {}},
      {"foo-bar-noexec-10", {}},
  };
  for (const auto& [super, subs] : subsets) {
    for (const auto& [name, t] : Named()) {
      const bool want = name == super || std::find(subs.begin(), subs.end(), name) != subs.end();
      EXPECT_EQ(IsSuperset(Named().at(super), t), want) << super << " ⊇ " << name;
    }
  }
}

TEST(TolerationsTest, UpstreamVerifyAgainstWhitelist) {
  struct Row {
    const char* name;
    std::vector<std::string> input, whitelist;
    bool want;
  };
  const Row rows[] = {
      {"equal input and whitelist",
       {"foo-bar-nosched", "foo-baz-nosched"},
       {"foo-bar-nosched", "foo-baz-nosched"},
       true},
      {"duplicate input allowed",
       {"foo-bar-nosched", "foo-bar-nosched"},
       {"foo-bar-nosched", "foo-baz-nosched"},
       true},
      {"allow all", {"foo-bar-nosched", "foo-bar-nosched"}, {"all"}, true},
      {"duplicate input forbidden",
       {"foo-bar-nosched", "foo-bar-nosched"},
       {"foo-baz-nosched"},
       false},
      {"value mismatch", {"foo-bar-nosched", "foo-baz-nosched"}, {"foo-baz-nosched"}, false},
      {"input does not exist in whitelist", {"foo-bar-nosched"}, {"foo-baz-nosched"}, false},
      {"disjoint sets", {"foo-bar"}, {"foo-nosched"}, false},
      {"empty whitelist", {"foo-bar"}, {}, true},
      {"empty input", {}, {"foo-bar"}, true},
  };
  for (const Row& r : rows) {
    EXPECT_EQ(VerifyAgainstWhitelist(Get(r.input), Get(r.whitelist)), r.want) << r.name;
  }
}

TEST(TolerationsTest, UpstreamMergeTolerations) {
  struct Row {
    const char* name;
    std::vector<std::string> a, b, want;
  };
  const Row rows[] = {
      {"disjoint",
       {"foo-bar-nosched", "faz-baz-nosched", "foo-noexec-10"},
       {"foo-prefnosched", "foo-baz-nosched"},
       {"foo-bar-nosched", "faz-baz-nosched", "foo-noexec-10", "foo-prefnosched",
        "foo-baz-nosched"}},
      {"duplicate",
       {"foo-bar-nosched", "faz-baz-nosched", "foo-noexec-10"},
       {"foo-bar-nosched", "faz-baz-nosched", "foo-noexec-10"},
       {"foo-bar-nosched", "faz-baz-nosched", "foo-noexec-10"}},
      {"merge redundant",
       {"foo-bar-nosched", "foo-baz-nosched"},
       {"foo-nosched", "faz-baz-nosched"},
       {"foo-nosched", "faz-baz-nosched"}},
      {"merge all", {"foo-bar-nosched", "foo-baz-nosched", "foo-noexec-10"}, {"all"}, {"all"}},
      {"merge into all", {"all"}, {"foo-bar-nosched", "foo-baz-nosched", "foo-noexec-10"}, {"all"}},
  };
  for (const Row& r : rows) {
    EXPECT_EQ(Show(MergeTolerations(Get(r.a), Get(r.b))), Show(Get(r.want))) << r.name;
  }
}

// Upstream TestFuzzed: whatever the lists, the merge still covers every input toleration, and
// the whitelist verdict agrees with "each toleration has a superset in the whitelist".
TEST(TolerationsTest, PropertiesHoldOnRandomLists) {
  std::mt19937 rng(1234);
  auto chance = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };
  auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  const char* effects[] = {"", "NoExecute", "NoSchedule", "PreferNoSchedule"};
  auto one = [&] {
    Toleration t = Tol("", "", "", effects[pick(4)]);
    if (chance(0.01)) return Tol("", "Exists");
    t.key = std::string(pick(6) + 1, 'a');  // a small space, so that lists collide
    if (chance(0.3)) {
      t.op = "Exists";
    } else {
      t.op = "Equal";
      t.value = std::string(pick(6) + 1, 'b');
    }
    if (t.effect == "NoExecute" && chance(0.5)) t.toleration_seconds = pick(10);
    return t;
  };
  auto list = [&] {
    std::vector<Toleration> out(pick(10));
    for (Toleration& t : out) t = one();
    return out;
  };
  auto contained = [](const Toleration& t, const std::vector<Toleration>& set) {
    return std::any_of(set.begin(), set.end(),
                       [&](const Toleration& s) { return IsSuperset(s, t); });
  };
  for (int i = 0; i < 1000; ++i) {
    std::vector<Toleration> input = list();
    std::vector<Toleration> whitelist = list();
    whitelist.push_back(one());
    const bool all_contained = std::all_of(
        input.begin(), input.end(), [&](const Toleration& t) { return contained(t, whitelist); });
    ASSERT_EQ(VerifyAgainstWhitelist(input, whitelist), all_contained)
        << Show(input) << " / " << Show(whitelist);
    std::vector<Toleration> a = list();
    std::vector<Toleration> b = list();
    std::vector<Toleration> merged = MergeTolerations(a, b);
    for (const std::vector<Toleration>* side : {&a, &b}) {
      for (const Toleration& t : *side) {
        ASSERT_TRUE(contained(t, merged)) << Show(a) << " + " << Show(b) << " = " << Show(merged);
      }
    }
  }
}

}  // namespace
}  // namespace kt::admission
